#pragma once

// The timing rule as arithmetic, without CUDA: when the warm-up ends, when sampling stops, and the
// statistics of the samples. The worker feeds it the times of its launches (timing.cpp); the
// tests feed it numbers.

#include "measure/cuda/workerprotocol.h"
#include "model/measurement.h"

#include <cstddef>
#include <utility>
#include <vector>

namespace tilescope::worker {

class Sampler {
public:
    /// Warm-up launches stop here even when the warm-up time is not reached (tiny kernels).
    static constexpr int kMaxWarmupLaunches = 10000;
    /// Samples are capped here whatever the rule asks.
    static constexpr int kSampleCap = 100000;
    /// Launches of kernels much shorter than a launch end the warm-up after this much wall time
    /// past the rule's warm-up.
    static constexpr double kWarmupWallSlack = 1.0;
    /// Past this many samples the interval rules stop applying (the count and time rules stay).
    static constexpr std::size_t kIntervalSamples = 4096;
    /// Without an L2 write between samples (the warm context), kernels shorter than this are timed
    /// in batches of launches: one pair of events around several launches, as nvbench's hot
    /// measurements do, so that the events' resolution (about half a microsecond) weighs little.
    static constexpr double kBatchBelowSeconds = 10e-6;
    /// A batch spans about this much kernel time ...
    static constexpr double kBatchSeconds = 50e-6;
    /// ... in at most this many launches (all queued behind the stream's hold before any runs).
    static constexpr int kMaxBatch = 64;

    /// A worker that timed a sample less than this long ago keeps the GPU warm: its clocks are up
    /// and a config's checked launch has done the module's lazy work, so the next config's
    /// warm-up is short ...
    static constexpr double kWarmGapSeconds = 0.1;
    /// ... this much kernel time (at least one launch), unless the rule asks for less.
    static constexpr double kShortWarmupSeconds = 0.5e-3;

    /// The warm-up time for a config whose worker last timed a sample `idleSeconds` ago (infinity
    /// when it never did): the rule's `warmupSeconds`, or kShortWarmupSeconds where the GPU is
    /// still warm.
    static double warmupFor(double warmupSeconds, double idleSeconds);

    /// The rule with its fields made sane: at least one sample, max >= min, both capped, times
    /// finite and not negative.
    explicit Sampler(const TimingRule& rule);

    /// After `launches` warm-up launches of `kernelSeconds` kernel time in all, `wallSeconds`
    /// after the first began: true when the warm-up is done (always after one launch or more
    /// once the kernel time reaches the rule's warm-up).
    bool warmedUp(int launches, double kernelSeconds, double wallSeconds) const;

    /// After `launches` warm-up launches of `kernelSeconds` in all (at least one): how many to
    /// queue next between one pair of events, with one synchronisation: enough to reach the
    /// warm-up time at the pace so far, at least 1, at most 4 times the launches so far (a first
    /// launch slowed by lazy work cannot make the warm-up overshoot much) and never past
    /// kMaxWarmupLaunches in all.
    int warmupBatch(int launches, double kernelSeconds) const;

    /// How many launches one sample times, for a kernel of `launchSeconds` a launch: 1, or where
    /// `batchable` (nothing written over the L2 and nothing restored between launches) and the
    /// kernel is shorter than kBatchBelowSeconds, enough to span kBatchSeconds, at most kMaxBatch.
    static int launchesPerSample(double launchSeconds, bool batchable);

    /// Records one sample, the time of one launch (the mean of `launches` timed together); true
    /// when the rule says to stop: the maximum count, the time cap (the kernel time of every
    /// launch, with 3 samples or more), the minimum count with a relative deviation or a relative
    /// median interval at or below the target, or (with 5 samples or more) a median interval
    /// above the rule's slowerThanMs.
    bool add(double ms, int launches = 1);

    /// The median's 95 % confidence interval from order statistics (distribution-free: the
    /// ranks n/2 -+ 0.98 sqrt(n), clamped to the samples); {0, 0} without samples or past
    /// kIntervalSamples.
    std::pair<double, double> medianInterval() const;

    int count() const { return static_cast<int>(m_samples.size()); }
    /// Whether sampling stopped because the median's interval lay above slowerThanMs (the race)
    /// rather than by the count, time or precision rules.
    bool raced() const { return m_raced; }
    /// The samples in the order they were added.
    const std::vector<double>& samples() const { return m_samples; }
    /// Median, min, max and (sample) standard deviation; all zero without samples.
    TimingStats stats() const;

private:
    int m_minSamples;
    int m_maxSamples;
    double m_warmupSeconds;
    double m_maxSeconds;
    double m_target;
    double m_slowerThan;
    std::vector<double> m_samples;
    std::vector<double> m_sorted; // the samples in order, for the median's interval
    double m_totalSeconds = 0;
    double m_mean = 0;
    double m_m2 = 0; // Welford's running sum of squared deviations
    bool m_raced = false;
};

} // namespace tilescope::worker
