#pragma once

// The final round (SessionOptions::confirmTop): after the search, the best configs are measured
// again, interleaved in rounds that each start one further along, so that a drift of clock or
// temperature spreads over all of them; each config's samples are pooled into its median with a
// bootstrap 95 % interval, and the configs that cannot be told apart from the winner are named.

#include "analysis/clocks.h"
#include "measure/backend.h"
#include "model/records.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tilescope {

/// One of the best configs measured again at the end of a session (SessionOptions::confirmTop).
struct Remeasurement {
    ResultRecord result;            ///< as stored now: the new timing and objective (when ok)
    double firstMs = 0;             ///< the median the search measured
    std::string failure;            ///< why measuring it again failed ("" it did not); the result is unchanged
    std::size_t rounds = 0;         ///< rounds that measured it
    bool indistinguishable = false; ///< its interval overlaps the winner's (the winner included)
};

/// What the rounds measured of one config.
struct RoundPool {
    std::vector<double> samples;       ///< every round's samples (a round's median when the backend keeps none)
    std::size_t rounds = 0;            ///< rounds that measured it
    double seconds = 0;                ///< benchmark time spent on it
    std::optional<Measurement> failed; ///< the first failure; no samples are pooled after it
    std::optional<Measurement> last;   ///< the last successful measurement
};

/// Measures each of `items` once per round for `rounds` rounds (fewer once control.cancel is
/// set), round k starting at item k and going round; device states go into `states`. One pool per
/// item, in their order.
std::vector<RoundPool> measureInterleaved(Backend& backend, std::span<const MeasureItem> items,
                                          const MeasureControl& control, std::size_t rounds, DeviceStateRange& states);

/// The timing of pooled samples: their median with a bootstrap 95 % interval (2000 resamples
/// seeded by `seed`), min, max, sample standard deviation and count.
TimingStats pooledTiming(std::span<const double> samples, std::uint64_t seed);

/// A config first measured as `first`, as the rounds found it: its pooled timing (seeded by
/// `seed`) with the benchmark time added, or why measuring it again failed. nullopt when the
/// rounds measured nothing of it (cancelled).
std::optional<Remeasurement> remeasurementOf(const ResultRecord& first, const RoundPool& pool, std::uint64_t seed);

/// Orders the configs measured again, the best first and those that failed last; marks those
/// whose interval overlaps the winner's, and says for people whether the winner held (the
/// search's winner had the key `firstWinnerKey`, configKey). "" when nothing was measured again.
std::string concludeFinalRound(std::vector<Remeasurement>& remeasured, const std::string& firstWinnerKey);

} // namespace tilescope
