#pragma once

// A shape set tuned into one database: one session per shape, each search started from the
// winners of the shapes tuned before it (the nearest first); then, when asked, every shape
// measures the best configs of every other shape (cross-evaluation), so that the shape x config
// matrix a dispatch table is chosen from is filled where it counts. The CLI (`tune --shapes`) and
// the workbench's Run panel run it the same way; each brings its own way to run one session
// (backend, store, compile service, events, cancellation).

#include "tuner/tuningsession.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

class ResultStore;
class TuningProblem;

/// The shapes a text names: "all", or indexes such as "0,2,5" (each once, in the order given), of a
/// problem with `shapeCount` shapes (0 counts as one). Throws InputError (location `field`) for
/// anything else or a shape the problem does not have.
std::vector<std::size_t> parseShapeList(std::string_view text, std::size_t shapeCount,
                                        const std::string& field = "--shapes");

/// Which shapes a set tunes, and how each starts from the others.
struct ShapeSetOptions {
    std::vector<std::size_t> shapes; ///< in the order they are tuned
    std::size_t seedTop = 3;         ///< winners of each shape tuned before that start a shape's search
    std::size_t crossEval = 0;       ///< top configs of each shape measured on every other shape (0: none)
    std::string database;            ///< the database as the user named it, for the report
};

/// Runs one session with these options to its end and returns its summary (throws what
/// TuningSession::run throws).
using SessionRunner = std::function<SessionSummary(const SessionOptions&)>;

/// How a shape set ended.
struct ShapeSetResult {
    bool cancelled = false;             ///< a session was cancelled: the set stopped there
    std::vector<std::int64_t> sessions; ///< the sessions this run stored, in the order they ran
    std::optional<SessionSummary> last; ///< the summary of the last session run
};

/// Tunes `options.shapes` of `problem` into `store`, each session from `base` at its shape, run by
/// `runOne`. `note` hears, one line each, which shape is tuned and from what, each
/// cross-evaluation, and at the end what the set says: per shape what tuning gained against the
/// noise, and the dispatch table within 3 % of each shape's best. One shape (or none: `base`'s own)
/// is one session, without notes.
ShapeSetResult runShapeSet(const TuningProblem& problem, ResultStore& store, const ShapeSetOptions& options,
                           const SessionOptions& base, const SessionRunner& runOne,
                           const std::function<void(const std::string&)>& note = {});

} // namespace tilescope
