#include "measure/cuda/energywindow.h"

#include <algorithm>
#include <cmath>

namespace tilescope::worker {

namespace {

// Student's t, two-sided 95 %, for n - 1 degrees of freedom (n = 2..10).
double studentT(int n) {
    static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262};
    return n >= 2 && n <= 10 ? t[n - 2] : 1.96;
}

// Mean and half-width of the 95 % interval of `v`.
std::pair<double, double> meanInterval(const std::vector<double>& v) {
    double mean = 0;
    for (double x : v)
        mean += x;
    mean /= static_cast<double>(v.size());
    if (v.size() < 2)
        return {mean, 0};
    double ss = 0;
    for (double x : v)
        ss += (x - mean) * (x - mean);
    const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
    return {mean, studentT(static_cast<int>(v.size())) * sd / std::sqrt(static_cast<double>(v.size()))};
}

} // namespace

std::optional<EnergyEstimate> estimateEnergy(const std::vector<EnergyCheckpoint>& cps, int windows) {
    if (cps.size() < 2)
        return std::nullopt;
    const EnergyCheckpoint& first = cps.front();
    const EnergyCheckpoint& last = cps.back();
    const double seconds = last.seconds - first.seconds;
    if (last.launches <= first.launches || !(seconds > 0))
        return std::nullopt;
    EnergyEstimate e;
    e.seconds = seconds;
    e.launches = last.launches - first.launches;
    const double joules = (last.millijoules - first.millijoules) / 1000.0;
    e.joulesPerLaunch = joules / static_cast<double>(e.launches);
    e.watts = joules / seconds;

    // Sub-windows: the checkpoints nearest to equal fractions of the window, each with launches
    // and time in it.
    std::vector<double> perLaunch, power;
    const int k = std::max(1, std::min(windows, static_cast<int>(cps.size()) - 1));
    std::size_t from = 0;
    for (int w = 1; w <= k; ++w) {
        const double target = first.seconds + seconds * w / k;
        std::size_t to = from + 1;
        while (to + 1 < cps.size() && std::abs(cps[to + 1].seconds - target) <= std::abs(cps[to].seconds - target))
            ++to;
        if (w == k)
            to = cps.size() - 1;
        const double dt = cps[to].seconds - cps[from].seconds;
        const std::uint64_t dn = cps[to].launches - cps[from].launches;
        const double dj = (cps[to].millijoules - cps[from].millijoules) / 1000.0;
        if (dn > 0 && dt > 0) {
            perLaunch.push_back(dj / static_cast<double>(dn));
            power.push_back(dj / dt);
        }
        from = to;
        if (from + 1 >= cps.size())
            break;
    }
    e.windows = static_cast<int>(perLaunch.size());
    const double hj = perLaunch.empty() ? 0 : meanInterval(perLaunch).second;
    const double hw = power.empty() ? 0 : meanInterval(power).second;
    // The interval is centred on the whole window's figure (the sub-windows' mean is the same up
    // to their unequal lengths).
    e.joulesLow = std::max(0.0, e.joulesPerLaunch - hj);
    e.joulesHigh = e.joulesPerLaunch + hj;
    e.wattsLow = std::max(0.0, e.watts - hw);
    e.wattsHigh = e.watts + hw;
    return e;
}

double counterPeriod(const std::vector<double>& steps) {
    if (steps.size() < 2)
        return 0;
    std::vector<double> gaps;
    for (std::size_t i = 1; i < steps.size(); ++i)
        gaps.push_back(steps[i] - steps[i - 1]);
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
    return gaps[gaps.size() / 2];
}

} // namespace tilescope::worker
