#pragma once

// Warnings before any GPU time that a problem's launch cannot be right: the launch covers far
// more or far fewer threads than ProblemSize has elements (without ProblemSize: than the
// largest buffer and the largest output have values); GlobalSize, which Tilescope does not
// read when Kernel Tuner's rule applies, disagrees with the grid launched; most configs exceed
// the device's grid or block limits; an argument's size uses a tuning parameter, so buffers
// would change size per config; a buffer is smaller than what the kernel's own bounds checks
// let it index at the launch's edge (analysis/boundsreach.h, where the source can be followed).
// Each says what it compared and how to silence it (the problem's Tilescope.Silence list names
// the warnings its author accepts). `space`, `analyze`, `tune` and the workbench show them.

#include <cstddef>
#include <string>
#include <vector>

namespace tilescope {

class ConfigSpace;
class TuningProblem;

struct LaunchWarning {
    std::string name;     ///< "launch-coverage", "global-size", "launch-limits", "varying-size", "buffer-edge"
    std::string location; ///< the JSON pointer of the field at fault
    std::string message;  ///< what was compared, what it means, how to silence it
};

/// The warnings for `problem` at shape `shapeIndex`, judged on up to `sampleSize` valid configs
/// of `space` (a fixed sample: the same problem gives the same warnings), less those the problem
/// silences. Never throws: a problem whose launch cannot be planned at all gets none (its
/// launch blockers say why).
std::vector<LaunchWarning> checkLaunch(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space,
                                       std::size_t sampleSize = 64);

/// What the buffer-edge check of checkLaunch could not decide, judged on the same sample: one note
/// (named "buffer-edge", at the argument's Size) per buffer argument with an index that no sampled
/// config let it follow, naming the first such index (file:line) and why ("a call it does not
/// follow: clamp_index ( y0 + i - 1 , grid_rows - 1 )"), so that the warning's absence is not read
/// as "in bounds" for that buffer. Notes, not warnings: a kernel that gathers through another buffer (`x[idx[i]]`)
/// always has them. Never throws.
std::vector<LaunchWarning> bufferEdgeNotes(const TuningProblem& problem, std::size_t shapeIndex,
                                           const ConfigSpace& space, std::size_t sampleSize = 64);

} // namespace tilescope
