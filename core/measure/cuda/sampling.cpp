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
    , m_target(finiteOr(rule.targetRelStdev, 0.0))
    , m_slowerThan(std::max(0.0, finiteOr(rule.slowerThanMs, 0.0))) {}

bool Sampler::warmedUp(int launches, double kernelSeconds, double wallSeconds) const {
    if (launches < 1)
        return false;
    return launches >= kMaxWarmupLaunches || kernelSeconds >= m_warmupSeconds ||
           wallSeconds >= m_warmupSeconds + kWarmupWallSlack;
}

double Sampler::warmupFor(double warmupSeconds, double idleSeconds) {
    warmupSeconds = std::max(0.0, finiteOr(warmupSeconds, 0.0));
    if (!(idleSeconds >= 0) || idleSeconds >= kWarmGapSeconds)
        return warmupSeconds;
    return std::min(warmupSeconds, kShortWarmupSeconds);
}

int Sampler::warmupBatch(int launches, double kernelSeconds) const {
    launches = std::max(launches, 1);
    const double each = std::max(finiteOr(kernelSeconds, 0.0) / launches, 1e-7);
    const double wanted = std::ceil((m_warmupSeconds - finiteOr(kernelSeconds, 0.0)) / each);
    const int most = std::max(1, std::min(4 * launches, kMaxWarmupLaunches - launches));
    return static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(most)));
}

std::pair<double, double> Sampler::medianInterval() const {
    if (m_sorted.empty() || m_sorted.size() != m_samples.size())
        return {0.0, 0.0};
    const double n = static_cast<double>(m_sorted.size());
    const double reach = 0.98 * std::sqrt(n); // 1.96 standard deviations of Binomial(n, 1/2)
    const auto rank = [&](double r) { return m_sorted[static_cast<std::size_t>(std::clamp(r, 0.0, n - 1))]; };
    return {rank(std::floor((n - 1) / 2 - reach)), rank(std::ceil((n - 1) / 2 + reach))};
}

int Sampler::launchesPerSample(double launchSeconds, bool batchable) {
    launchSeconds = finiteOr(launchSeconds, 0.0);
    if (!batchable || launchSeconds >= kBatchBelowSeconds)
        return 1;
    const double wanted = std::ceil(kBatchSeconds / std::max(launchSeconds, 1e-7) - 1e-9);
    return static_cast<int>(std::clamp(wanted, 1.0, static_cast<double>(kMaxBatch)));
}

bool Sampler::add(double ms, int launches) {
    m_samples.push_back(ms);
    // The interval rules hold the samples in order: up to kIntervalSamples (a sorted insert each).
    if (m_sorted.size() + 1 == m_samples.size() && m_samples.size() <= kIntervalSamples)
        m_sorted.insert(std::upper_bound(m_sorted.begin(), m_sorted.end(), ms), ms);
    const bool ordered = m_sorted.size() == m_samples.size();
    m_totalSeconds += ms * std::max(launches, 1) / 1000.0;
    const double n = static_cast<double>(m_samples.size());
    const double delta = ms - m_mean;
    m_mean += delta / n;
    m_m2 += delta * (ms - m_mean);
    const int samples = count();
    if (samples >= m_maxSamples)
        return true;
    if (samples >= 3 && m_totalSeconds >= m_maxSeconds)
        return true;
    if (ordered && m_slowerThan > 0 && samples >= 5 && medianInterval().first > m_slowerThan)
        return m_raced = true;
    if (samples >= m_minSamples) {
        const double stdev = samples > 1 ? std::sqrt(m_m2 / (n - 1)) : 0.0;
        if (m_mean > 0 && stdev / m_mean <= m_target)
            return true;
        if (ordered) {
            const auto [low, high] = medianInterval();
            const double median = m_sorted[m_sorted.size() / 2];
            if (median > 0 && (high - low) / 2 / median <= m_target)
                return true;
        }
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
    if (n > 1 && m_sorted.size() == n) {
        const auto [low, high] = medianInterval();
        t.ciLowMs = std::min(low, t.medianMs);
        t.ciHighMs = std::max(high, t.medianMs);
    }
    return t;
}

} // namespace tilescope::worker
