#include "tuner/finalround.h"

#include "analysis/confidence.h"
#include "model/configvalues.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tilescope {

std::vector<RoundPool> measureInterleaved(Backend& backend, std::span<const MeasureItem> items,
                                          const MeasureControl& control, std::size_t rounds, DeviceStateRange& states) {
    std::vector<RoundPool> pools(items.size());
    for (std::size_t round = 0; round < rounds && !(control.cancel && control.cancel->load()) && !items.empty();
         ++round) {
        std::vector<MeasureItem> order;
        std::vector<std::size_t> orderOf; // position -> item
        for (std::size_t k = 0; k < items.size(); ++k) {
            const std::size_t item = (k + round) % items.size();
            order.push_back(items[item]);
            orderOf.push_back(item);
        }
        backend.measure(order, control, [&](std::size_t position, Measurement m) {
            RoundPool& pool = pools.at(orderOf.at(position));
            if (m.status == ResultStatus::Skipped || pool.failed)
                return;
            pool.seconds += m.benchmarkSeconds;
            if (m.status != ResultStatus::Ok) {
                pool.failed = std::move(m);
                return;
            }
            ++pool.rounds;
            if (m.deviceState)
                states.add(*m.deviceState);
            if (m.samplesMs.empty())
                pool.samples.push_back(m.time.medianMs); // a backend that keeps no samples: the round's median
            else
                pool.samples.insert(pool.samples.end(), m.samplesMs.begin(), m.samplesMs.end());
            pool.last = std::move(m);
        });
    }
    return pools;
}

TimingStats pooledTiming(std::span<const double> samples, std::uint64_t seed) {
    TimingStats t;
    if (samples.empty())
        return t;
    const MedianInterval ci = bootstrapMedian(samples, 0.95, 2000, seed);
    t.medianMs = ci.median;
    t.ciLowMs = ci.low;
    t.ciHighMs = ci.high;
    t.minMs = *std::min_element(samples.begin(), samples.end());
    t.maxMs = *std::max_element(samples.begin(), samples.end());
    double mean = 0;
    for (double v : samples)
        mean += v;
    mean /= static_cast<double>(samples.size());
    double m2 = 0;
    for (double v : samples)
        m2 += (v - mean) * (v - mean);
    t.stdevMs = samples.size() > 1 ? std::sqrt(m2 / static_cast<double>(samples.size() - 1)) : 0;
    t.samples = static_cast<int>(samples.size());
    return t;
}

std::optional<Remeasurement> remeasurementOf(const ResultRecord& first, const RoundPool& pool, std::uint64_t seed) {
    Remeasurement x;
    x.result = first;
    x.firstMs = first.timeMs();
    x.rounds = pool.rounds;
    if (pool.failed) {
        const Measurement& m = *pool.failed;
        x.failure = std::string(statusName(m.status)) + (m.message.empty() ? "" : ": " + m.message);
        return x;
    }
    if (pool.samples.empty())
        return std::nullopt;
    x.result.measurement.time = pooledTiming(pool.samples, seed);
    if (pool.last && pool.last->deviceState)
        x.result.measurement.deviceState = pool.last->deviceState;
    x.result.measurement.benchmarkSeconds += pool.seconds;
    return x;
}

std::string concludeFinalRound(std::vector<Remeasurement>& remeasured, const std::string& firstWinnerKey) {
    std::stable_sort(remeasured.begin(), remeasured.end(), [](const Remeasurement& a, const Remeasurement& b) {
        return a.failure.empty() && (!b.failure.empty() || ranksBefore(a.result, b.result));
    });
    if (remeasured.empty())
        return {};
    const Remeasurement& winner = remeasured.front();
    if (!winner.failure.empty())
        return "the best " + std::to_string(remeasured.size()) + " configs measured again all failed (" +
               winner.failure + ")";
    char buf[200];
    const TimingStats& wt = winner.result.measurement.time;
    if (configKey(winner.result.config) == firstWinnerKey) {
        std::snprintf(buf, sizeof buf,
                      "the winner held when the best %zu were measured again, interleaved in %zu rounds: %.4g ms "
                      "(95 %%: %.4g-%.4g; the search measured %.4g ms)",
                      remeasured.size(), winner.rounds, wt.medianMs, wt.ciLowMs, wt.ciHighMs, winner.firstMs);
    } else {
        std::snprintf(buf, sizeof buf,
                      "measured again, interleaved in %zu rounds, another of the best %zu won: %.4g ms (95 %%: "
                      "%.4g-%.4g; the search measured %.4g ms); the first winner's result was a lucky sample",
                      winner.rounds, remeasured.size(), wt.medianMs, wt.ciLowMs, wt.ciHighMs, winner.firstMs);
    }
    std::string confirmation = buf;
    // Which of them the pooled samples cannot tell apart from the winner (95 % intervals of the
    // median that overlap the winner's).
    std::vector<MedianInterval> intervals;
    for (const Remeasurement& x : remeasured) {
        const auto interval = medianIntervalOf(x.result.measurement.time);
        if (!x.failure.empty() || !interval)
            break;
        intervals.push_back(*interval);
    }
    const std::vector<std::size_t> tied = indistinguishableFromBest(intervals);
    for (std::size_t i : tied)
        remeasured[i].indistinguishable = true;
    if (intervals.size() >= 2)
        confirmation += tied.size() == 1 ? "; its 95 % interval is apart from the others'"
                                         : "; " + std::to_string(tied.size() - 1) +
                                               " of the others cannot be told apart from it (their "
                                               "95 % intervals overlap): any of them is as good";
    return confirmation;
}

} // namespace tilescope
