#include "measure/cuda/sampling.h"

#include <algorithm>
#include <cmath>

namespace tilescope::worker {

namespace {
double finiteOr(double value, double fallback) {
    return std::isfinite(value) ? value : fallback;
}
} // namespace

Sampler::Sampler(const TimingRule& rule)
    : m_minSamples(std::clamp(rule.minSamples, 1, kSampleCap))
    , m_maxSamples(std::clamp(rule.maxSamples, m_minSamples, kSampleCap))
    , m_warmupSeconds(std::max(0.0, finiteOr(rule.warmupSeconds, 0.0)))
    , m_maxSeconds(std::max(0.0, finiteOr(rule.maxSeconds, 0.0)))
    , m_target(finiteOr(rule.targetRelStdev, 0.0)) {}

bool Sampler::warmedUp(int launches, double kernelSeconds, double wallSeconds) const {
    if (launches < 1)
        return false;
    return launches >= kMaxWarmupLaunches || kernelSeconds >= m_warmupSeconds ||
           wallSeconds >= m_warmupSeconds + kWarmupWallSlack;
}

bool Sampler::add(double ms) {
    m_samples.push_back(ms);
    m_totalSeconds += ms / 1000.0;
    const double n = static_cast<double>(m_samples.size());
    const double delta = ms - m_mean;
    m_mean += delta / n;
    m_m2 += delta * (ms - m_mean);
    const int samples = count();
    if (samples >= m_maxSamples)
        return true;
    if (samples >= 3 && m_totalSeconds >= m_maxSeconds)
        return true;
    if (samples >= m_minSamples) {
        const double stdev = samples > 1 ? std::sqrt(m_m2 / (n - 1)) : 0.0;
        if (m_mean > 0 && stdev / m_mean <= m_target)
            return true;
    }
    return false;
}

TimingStats Sampler::stats() const {
    TimingStats t;
    t.samples = count();
    if (m_samples.empty())
        return t;
    std::vector<double> sorted = m_samples;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    t.medianMs = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    t.minMs = sorted.front();
    t.maxMs = sorted.back();
    t.stdevMs = n > 1 ? std::sqrt(m_m2 / static_cast<double>(n - 1)) : 0.0;
    return t;
}

} // namespace tilescope::worker
