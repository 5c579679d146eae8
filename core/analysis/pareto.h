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

/// The hypervolume of two objectives, both lower is better: the area dominated by `points` and
/// bounded by `reference` (points not below the reference on both take no part). The measure
/// of a front's quality: larger is better; a front that dominates another has at least its area.
double hypervolume(const std::vector<std::array<double, 2>>& points, std::array<double, 2> reference);

} // namespace tilescope
