#include "analysis/confidence.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace tilescope {

double MedianInterval::relativeHalfWidth() const {
    return median > 0 ? (high - low) / 2 / median : 0.0;
}

std::optional<MedianInterval> medianIntervalOf(const TimingStats& time) {
    if (!time.hasInterval())
        return std::nullopt;
    return MedianInterval{time.medianMs, time.ciLowMs, time.ciHighMs, 0.95, static_cast<std::size_t>(time.samples)};
}

double medianOf(std::vector<double> values) {
    if (values.empty())
        return 0;
    const std::size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
    const double upper = values[mid];
    if (values.size() % 2 == 1)
        return upper;
    const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lower + upper) / 2;
}

MedianInterval bootstrapMedian(std::span<const double> samples, double level, std::size_t resamples,
                               std::uint64_t seed) {
    MedianInterval out;
    out.level = level;
    std::vector<double> xs;
    xs.reserve(samples.size());
    for (const double x : samples)
        if (std::isfinite(x))
            xs.push_back(x);
    out.samples = xs.size();
    if (xs.empty())
        return out;
    out.median = medianOf(xs);
    out.low = out.high = out.median;
    if (xs.size() == 1 || resamples == 0)
        return out;
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::size_t> pick(0, xs.size() - 1);
    std::vector<double> medians(resamples);
    std::vector<double> draw(xs.size());
    for (double& m : medians) {
        for (double& d : draw)
            d = xs[pick(rng)];
        m = medianOf(draw);
    }
    std::sort(medians.begin(), medians.end());
    const double tail = std::clamp((1 - level) / 2, 0.0, 0.5);
    auto quantile = [&](double q) {
        const double at = q * static_cast<double>(medians.size() - 1);
        const auto below = static_cast<std::size_t>(std::floor(at));
        const std::size_t above = std::min(below + 1, medians.size() - 1);
        return medians[below] + (at - static_cast<double>(below)) * (medians[above] - medians[below]);
    };
    out.low = std::min(out.median, quantile(tail));
    out.high = std::max(out.median, quantile(1 - tail));
    return out;
}

std::vector<std::size_t> indistinguishableFromBest(std::span<const MedianInterval> intervals) {
    std::vector<std::size_t> out;
    if (intervals.empty())
        return out;
    std::size_t best = 0;
    for (std::size_t i = 1; i < intervals.size(); ++i)
        if (intervals[i].median < intervals[best].median)
            best = i;
    out.push_back(best);
    for (std::size_t i = 0; i < intervals.size(); ++i)
        if (i != best && intervals[i].overlaps(intervals[best]))
            out.push_back(i);
    return out;
}

} // namespace tilescope
