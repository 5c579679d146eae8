#include "models/scattermodel.h"

#include "analysis/pareto.h"

#include "models/heatmapmodel.h"

#include <algorithm>
#include <cmath>

namespace tilescope::views {

ScatterData scatterPoints(const std::vector<ResultRecord>& results, const ScatterSpec& spec,
                          const std::string& objectiveName, std::size_t maxPoints) {
    ScatterData data;
    data.spec = spec;
    data.objectiveName = objectiveName;
    data.resultCount = results.size();
    std::vector<ScatterPoint> candidates;
    for (std::size_t r = 0; r < results.size(); ++r) {
        const ResultRecord& result = results[r];
        if (!result.ok()) {
            if (isFailure(result.status()))
                ++data.failedCount;
            continue;
        }
        const auto x = quantityValue(result, spec.x);
        const auto y = quantityValue(result, spec.y);
        if (!x || !y || !std::isfinite(*x) || !std::isfinite(*y))
            continue;
        if ((spec.logX && *x <= 0) || (spec.logY && *y <= 0))
            continue;
        ScatterPoint point{*x, *y, std::numeric_limits<double>::quiet_NaN(), r};
        if (spec.colour) {
            if (const auto c = quantityValue(result, *spec.colour); c && std::isfinite(*c))
                point.colour = *c;
        }
        candidates.push_back(point);
    }
    data.candidates = candidates.size();

    const auto better = [&](const ScatterPoint& a, const ScatterPoint& b) {
        return ranksBefore(results[a.result], results[b.result]);
    };
    if (candidates.size() > maxPoints) {
        // The best quarter always, so that thinning never hides a winner; the rest evenly.
        const std::size_t keep = maxPoints / 4;
        std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end(),
                         better);
        std::vector<ScatterPoint> rest(candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end());
        candidates.resize(keep);
        std::sort(rest.begin(), rest.end(),
                  [](const ScatterPoint& a, const ScatterPoint& b) { return a.result < b.result; });
        const std::size_t wanted = maxPoints - keep;
        for (std::size_t i = 0; i < wanted; ++i)
            candidates.push_back(rest[i * rest.size() / wanted]);
    }
    std::stable_sort(candidates.begin(), candidates.end(), better);
    data.points = std::move(candidates);
    if (spec.front) {
        std::vector<std::array<double, 2>> xy;
        for (const ScatterPoint& point : data.points)
            xy.push_back({point.x, point.y});
        data.front = paretoFront(xy, {higherIsBetter(spec.x), higherIsBetter(spec.y)});
        std::sort(data.front.begin(), data.front.end(),
                  [&](std::size_t a, std::size_t b) { return data.points[a].x < data.points[b].x; });
    }
    for (const ScatterPoint& point : data.points) {
        if (!std::isfinite(point.colour))
            continue;
        if (!(point.colour >= data.colourMin))
            data.colourMin = point.colour;
        if (!(point.colour <= data.colourMax))
            data.colourMax = point.colour;
    }
    return data;
}

} // namespace tilescope::views
