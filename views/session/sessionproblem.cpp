#include "session/sessionproblem.h"

#include "spec/tuningproblem.h"

#include <algorithm>

namespace tilescope::views {

ProblemAtShape detailsContext(std::shared_ptr<const TuningProblem> problem, int openShape, const SessionInfo& session) {
    if (problem && !session.kernel.empty() && session.kernel != problem->kernelName)
        problem = nullptr;
    ProblemAtShape out;
    out.shape = static_cast<std::size_t>(std::max(0, openShape));
    if (session.shapeIndex && problem && *session.shapeIndex >= 0 &&
        static_cast<std::size_t>(*session.shapeIndex) < problem->shapes.size())
        out.shape = static_cast<std::size_t>(*session.shapeIndex);
    out.problem = std::move(problem);
    return out;
}

std::optional<int> shapeOfSession(const TuningProblem& problem, const SessionInfo& session) {
    if (session.kernel != problem.kernelName || session.shape.empty())
        return std::nullopt;
    for (std::size_t s = 0; s < problem.shapes.size(); ++s)
        if (problem.shapes[s].dims == session.shape)
            return static_cast<int>(s);
    return std::nullopt;
}

} // namespace tilescope::views
