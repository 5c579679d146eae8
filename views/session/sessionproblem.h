#pragma once

// How the session on screen relates to the open problem: whether its results are of the problem's
// kernel, and at which of its shapes. Details explains results with the problem's launch
// geometry only when they are of its kernel; the window looks at the shape a recording was made at.

#include "model/records.h"

#include <cstddef>
#include <memory>
#include <optional>

namespace tilescope {
class TuningProblem;
}

namespace tilescope::views {

/// A problem at one of its shapes.
struct ProblemAtShape {
    std::shared_ptr<const TuningProblem> problem; ///< null: none fits
    std::size_t shape = 0;
};

/// What Details explains the results of `session` with: the open `problem` unless they are of
/// another kernel, at the session's shape when the problem has it, else at `openShape`.
ProblemAtShape detailsContext(std::shared_ptr<const TuningProblem> problem, int openShape, const SessionInfo& session);
/// The shape of `problem` whose dimensions the results of `session` (of its kernel) were measured
/// at; nullopt when they are of another kernel or at none of its shapes.
std::optional<int> shapeOfSession(const TuningProblem& problem, const SessionInfo& session);

} // namespace tilescope::views
