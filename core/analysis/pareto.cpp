#include "analysis/pareto.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tilescope {

std::vector<std::size_t> paretoFront(const std::vector<std::array<double, 2>>& points,
                                     std::array<bool, 2> higherIsBetter) {
    // Both objectives as costs (lower is better), then a sweep in order of the first: a point
    // is on the front when its second cost is below every second cost seen before it (or equal
    // to the best so far with an equal first cost: a tie).
    std::vector<std::array<double, 2>> cost(points.size());
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (std::isnan(points[i][0]) || std::isnan(points[i][1]))
            continue;
        for (int k = 0; k < 2; ++k)
            cost[i][static_cast<std::size_t>(k)] = higherIsBetter[static_cast<std::size_t>(k)]
                                                       ? -points[i][static_cast<std::size_t>(k)]
                                                       : points[i][static_cast<std::size_t>(k)];
        order.push_back(i);
    }
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return cost[a] != cost[b] ? cost[a] < cost[b] : a < b; });
    std::vector<std::size_t> front;
    double bestSecond = std::numeric_limits<double>::infinity();
    std::array<double, 2> lastOnFront{std::numeric_limits<double>::quiet_NaN(), 0};
    for (std::size_t i : order) {
        if (cost[i][1] < bestSecond || cost[i] == lastOnFront) {
            front.push_back(i);
            bestSecond = std::min(bestSecond, cost[i][1]);
            lastOnFront = cost[i];
        }
    }
    return front;
}

double hypervolume(const std::vector<std::array<double, 2>>& points, std::array<double, 2> reference) {
    std::vector<std::array<double, 2>> inside;
    for (const auto& p : points)
        if (p[0] < reference[0] && p[1] < reference[1])
            inside.push_back(p);
    // Along the front by the first objective, each point adds the slab between it and the next
    // better second objective.
    std::vector<std::size_t> front = paretoFront(inside);
    double area = 0;
    double ceiling = reference[1];
    for (std::size_t i : front) {
        if (inside[i][1] >= ceiling)
            continue;
        // The slab from this point's first objective to the next front point's (or the reference).
        area += (reference[0] - inside[i][0]) * (ceiling - inside[i][1]);
        ceiling = inside[i][1];
    }
    return area;
}

} // namespace tilescope
