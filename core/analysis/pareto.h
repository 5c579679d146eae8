#pragma once

// The Pareto front of two objectives: the points no other point beats on both (as good on both
// and better on one). For a time and energy trade-off, or any two quantities of a session.

#include <array>
#include <cstddef>
#include <vector>

namespace tilescope {

/// The indices of the non-dominated points, by increasing first objective (the better first).
/// `higherIsBetter[k]` gives each objective's direction; points with a NaN coordinate take no
/// part. Equal points are all on the front. O(n log n).
std::vector<std::size_t> paretoFront(const std::vector<std::array<double, 2>>& points,
                                     std::array<bool, 2> higherIsBetter = {false, false});

} // namespace tilescope
