#pragma once

// What every use case checks of its request before any work, with one message each.

#include <cstddef>

namespace tilescope {

class TuningProblem;

/// Throws InputError ("--shape") when `problem` has no shape `shape` (a problem without shapes has one).
void checkShape(const TuningProblem& problem, std::size_t shape);

} // namespace tilescope
