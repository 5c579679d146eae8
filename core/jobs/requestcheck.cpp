#include "jobs/requestcheck.h"

#include "base/error.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <string>

namespace tilescope {

void checkShape(const TuningProblem& problem, std::size_t shape) {
    const std::size_t shapes = std::max<std::size_t>(problem.shapes.size(), 1);
    if (shape >= shapes)
        throw InputError(problem.fileName, "--shape",
                         "shape " + std::to_string(shape) + " does not exist; the problem has " +
                             std::to_string(shapes) + " shape(s), numbered from 0");
}

} // namespace tilescope
