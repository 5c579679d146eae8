#pragma once

// What the window says about the results on screen: the line above the heatmap (what they are, at
// which shape, on which device, how many, the best), its tooltip and the status bar's summary;
// or, with no results, how to get some.

#include "session/sessiontypes.h"

#include <QString>

#include <vector>

class QKeySequence;

namespace tilescope::views {

/// Where the results on screen come from.
struct ResultsOrigin {
    bool demo = false;     ///< the embedded demo recording
    bool running = false;  ///< a run in progress
    QString recordingPath; ///< the recording opened ("" none: the results of a run)
};

struct ResultsHeadline {
    QString header;  ///< rich text, one line where the window is wide enough
    QString tooltip; ///< the header's
    QString status;  ///< plain text for the status bar
    /// Plain text for the banner above the heatmap: why the session failed, and its verdict on
    /// wrong results and on the second input set; "" when there is nothing to say.
    QString verdict;
};

/// The headline of `results` (not empty) of the session `info`.
ResultsHeadline describeResults(const SessionInfo& info, const std::vector<ResultRecord>& results,
                                const ResultsOrigin& origin);
/// The banner's text for a session and its results (ResultsHeadline::verdict).
QString sessionVerdict(const SessionInfo& info, const std::vector<ResultRecord>& results);
/// The heatmap's note while there are no results: reading a recording, or how to get results
/// (`runShortcut` starts a run).
QString noResultsNote(bool loading, const QKeySequence& runShortcut);

} // namespace tilescope::views
