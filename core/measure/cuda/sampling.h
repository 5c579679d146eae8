#pragma once

// The timing rule as arithmetic, without CUDA: when the warm-up ends, when sampling stops, and the
// statistics of the samples. The worker feeds it the times of its launches (timing.cpp); the
// tests feed it numbers.

#include "measure/cuda/workerprotocol.h"
#include "model/measurement.h"

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

    /// The rule with its fields made sane: at least one sample, max >= min, both capped, times
    /// finite and not negative.
    explicit Sampler(const TimingRule& rule);

    /// After `launches` warm-up launches of `kernelSeconds` kernel time in all, `wallSeconds`
    /// after the first began: true when the warm-up is done (always after one launch or more
    /// once the kernel time reaches the rule's warm-up).
    bool warmedUp(int launches, double kernelSeconds, double wallSeconds) const;

    /// Records one sample; true when the rule says to stop: the maximum count, the time cap
    /// (with 3 samples or more), or the minimum count with a relative deviation at or below
    /// the target.
    bool add(double ms);

    int count() const { return static_cast<int>(m_samples.size()); }
    /// Median, min, max and (sample) standard deviation; all zero without samples.
    TimingStats stats() const;

private:
    int m_minSamples;
    int m_maxSamples;
    double m_warmupSeconds;
    double m_maxSeconds;
    double m_target;
    std::vector<double> m_samples;
    double m_totalSeconds = 0;
    double m_mean = 0;
    double m_m2 = 0; // Welford's running sum of squared deviations
};

} // namespace tilescope::worker
