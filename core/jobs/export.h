#pragma once

// The export use case: sessions of a results database (or of any recording, or those a front end
// holds already) in the formats code consumes (T4, a JSON cache of the best config per (kernel,
// shape, device), triton.Config lists, a C++ header with a lookup by shape, CSV, a Kernel Tuner
// cache), written whole or not at all. The CLI's `export` maps its options onto an ExportRequest
// and prints what was written; the workbench's export dialog maps its choices onto one, shows the
// text as a preview and writes it through writeExport().

#include "exchange/exportformat.h"
#include "model/records.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

struct ExportRequest {
    /// A results database, a T4 file or a Kernel Tuner cache whose sessions are exported: every
    /// session, or only `session`; T4 and a Kernel Tuner cache hold one session, so without
    /// `session` those formats take the newest with results. Not read when `sessions` is given.
    std::string database;
    std::optional<std::int64_t> session;
    /// The sessions to export, read and chosen already (the workbench's checked sessions); used
    /// instead of `database` when not empty.
    std::vector<SessionData> sessions;
    ExportOptions options;
    std::string source; ///< where the sessions came from, as messages name it ("": `database`)
    std::string output; ///< write the text there, whole or not at all ("" or "-": make the text only)
    std::string outputLocation = "-o"; ///< what named `output`, in messages
};

/// Reports as the export goes. Each may be left empty.
struct ExportEvents {
    /// A format that holds one session took session `id`, the newest with results, of `count`.
    std::function<void(std::int64_t id, std::size_t count)> sessionPicked;
};

/// A file an export wrote.
struct ExportWritten {
    std::string path;
    std::string formatName; ///< "t4", "json", ... (exportFormatName)
    std::size_t bytes = 0;
};

struct ExportOutcome {
    std::string text;                    ///< the export, whole
    std::vector<SessionInfo> sessions;   ///< the sessions that went into it
    std::optional<ExportWritten> written; ///< the file written, when `output` named one
};

/// Runs the export. Throws InputError (before anything is written) when `session` names no
/// session of the database, when there are no sessions, and as exportResults() does (nothing to
/// write in the format); when writing fails, as writeFileAtomically() does, leaving an earlier file
/// of that name as it was.
ExportOutcome runExport(const ExportRequest& request, const ExportEvents& events = {});

/// Writes an export's `text` (in `format`) to `path` whole or not at all and says what was
/// written. Throws InputError naming `path` and `location` as writeFileAtomically() does.
ExportWritten writeExport(const std::string& path, std::string_view text, ExportFormat format,
                          const std::string& location = {});

/// Writes one result of `results`, the one whose config is `configJson` (compact JSON, the
/// fastest correct result of that config), as the one entry of the JSON cache of best configs or,
/// for a path ending in .h or .hpp, of the C++ dispatch header: a trade-off chosen on the
/// time-energy front rather than the fastest. Nullopt (nothing written) when that config has no
/// correct result; throws InputError as writeFileAtomically() does.
std::optional<ExportWritten> exportChosenConfig(const SessionInfo& session, const std::vector<ResultRecord>& results,
                                 const std::string& configJson, const std::string& path);

} // namespace tilescope
