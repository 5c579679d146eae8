#pragma once

// The data of a scatter plot: one point per Ok result that has both quantities, coloured by a
// third, at most a few thousand of them (a plot shows no more than it has pixels): beyond that
// the best results are kept and the rest thinned evenly. Plain data, no widgets.

#include "model/records.h"
#include "models/quantity.h"

#include <QString>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::views {

struct ScatterSpec {
    Quantity x{QuantityKind::Registers, {}, false};
    Quantity y{QuantityKind::LatencyUs, {}, false};
    std::optional<Quantity> colour; ///< nullopt: one colour
    bool logX = false;              ///< points with x <= 0 are left out on a log axis
    bool logY = false;
    bool front = false; ///< draw the Pareto front of the two quantities (each in its better direction)

    bool operator==(const ScatterSpec&) const = default;
};

struct ScatterPoint {
    double x = 0;
    double y = 0;
    double colour = std::numeric_limits<double>::quiet_NaN(); ///< NaN: no colour value
    std::size_t result = 0;                                   ///< index into the results
};

struct ScatterData {
    ScatterSpec spec;
    std::string objectiveName;
    std::vector<ScatterPoint> points; ///< the points to draw, best results first
    std::size_t candidates = 0;       ///< Ok results with both quantities (before thinning)
    std::size_t resultCount = 0;
    std::size_t failedCount = 0; ///< failed results (see isFailure; not drawn)
    double colourMin = std::numeric_limits<double>::quiet_NaN();
    double colourMax = std::numeric_limits<double>::quiet_NaN();
    /// With spec.front: the points no other drawn point beats on both quantities, along x (indices into points).
    std::vector<std::size_t> front;

    bool thinned() const { return points.size() < candidates; }
};

/// The points of `results` for `spec`, at most `maxPoints`: when there are more, the best
/// quarter by rank (see ranksBefore) and an even sample of the rest.
ScatterData scatterPoints(const std::vector<ResultRecord>& results, const ScatterSpec& spec,
                          const std::string& objectiveName, std::size_t maxPoints);

} // namespace tilescope::views
