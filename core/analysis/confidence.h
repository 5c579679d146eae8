#pragma once

// How sure a winner is: a bootstrap confidence interval of a config's median time from its
// samples, and the configs that cannot be told apart from the best (their intervals overlap the
// best's). The statistics of issue 20's final round; no measuring here.

#include "model/measurement.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tilescope {

/// A median with its confidence interval, in the samples' unit.
struct MedianInterval {
    double median = 0;
    double low = 0;  ///< lower end of the interval
    double high = 0; ///< upper end
    double level = 0.95;
    std::size_t samples = 0;

    /// (high - low) / 2 / median: how wide the interval is against the median (0 without samples).
    double relativeHalfWidth() const;
    bool overlaps(const MedianInterval& other) const { return low <= other.high && other.low <= high; }
};

/// A result's median with its stored 95 % interval; nullopt when it has none (TimingStats::hasInterval).
std::optional<MedianInterval> medianIntervalOf(const TimingStats& time);

/// The sample median (the mean of the middle two for an even count).
double medianOf(std::vector<double> values);

/// The percentile bootstrap of the median: `resamples` resamples with replacement (from a
/// generator seeded with `seed`, so the same samples give the same interval), the (1 - level) / 2
/// and (1 + level) / 2 quantiles of their medians. One sample: an interval of zero width. No
/// samples: all zero. Non-finite samples are left out.
MedianInterval bootstrapMedian(std::span<const double> samples, double level = 0.95, std::size_t resamples = 2000,
                               std::uint64_t seed = 1);

/// The configs whose interval overlaps the best's (the lowest median; ties to the earlier), best
/// first, then in their given order: the set a re-measurement could not tell apart from the best.
std::vector<std::size_t> indistinguishableFromBest(std::span<const MedianInterval> intervals);

} // namespace tilescope
