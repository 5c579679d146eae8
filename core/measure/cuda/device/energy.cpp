// Energy per launch (`--metrics energy`): after the timed samples, the kernel runs back to back
// (20 ms of work queued) while a thread reads NVML's energy counter and notes the time of each of
// its steps (every 100 ms on the H200). The mean power is the energy between the window's first
// and last steps over the time between them, known to a poll whatever the counter's period; the
// energy of a launch is that power times the loop's time per launch, its interval from five
// sub-windows. With "energy-check", a second loop samples NVML's power readings instead: an
// independent estimate.
// Nothing is restored between these launches (the outputs are not read), and the L2 stays warm
// with what the kernel leaves, as in any loop of the same launch.

#include "measure/cuda/device/runtimeimpl.h"
#include "measure/cuda/energywindow.h"
#include "measure/metricnames.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

namespace tilescope::cuda {

namespace {

constexpr double kWarmupSeconds = 0.2;   // before the window: clocks and power settle
constexpr double kWindowSeconds = 1.0;   // at least; and at least kMinSteps steps of the counter
constexpr int kMinSteps = 10;
constexpr double kStepWaitSeconds = 2.0; // a counter that does not step within this is broken
constexpr double kQueuedMs = 20.0;       // kernel time kept queued ahead of the host
constexpr int kPollMicroseconds = 200;   // between reads of the energy counter
constexpr double kLaunchScale = 1000.0;  // checkpoints count launches in thousandths
constexpr double kSampledSkipSeconds = 1.0;  // NVML's power reading averages over about a second
constexpr double kSampledSeconds = 2.0;      // then sampled this long
constexpr int kSamplePeriodMs = 10;

double since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

/// Keeps the kernel queued back to back: a ring of events, `depth` launches ahead of the host.
class WorkerRuntime::Impl::BackToBack {
public:
    BackToBack(Impl& rt, double kernelMs)
        : m_rt(rt) {
        const double ms = kernelMs > 0 ? kernelMs : 0.01;
        m_depth = static_cast<std::size_t>(std::clamp(std::ceil(kQueuedMs / ms), 2.0, 4096.0));
        m_events.resize(m_depth, nullptr);
        for (CUevent& e : m_events)
            rt.check(rt.cu->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    }
    ~BackToBack() {
        if (m_rt.lost)
            return;
        m_rt.cu->cuStreamSynchronize(m_rt.stream);
        for (CUevent e : m_events)
            if (e)
                m_rt.cu->cuEventDestroy(e);
    }
    BackToBack(const BackToBack&) = delete;
    BackToBack& operator=(const BackToBack&) = delete;

    /// Fills the queue, waits for its oldest launch, and counts every launch known done.
    void step(const worker::Result& r) {
        while (m_issued - m_done < m_depth) {
            m_rt.launchChecked(r, "a launch of the energy loop failed");
            m_rt.check(m_rt.cu->cuEventRecord(m_events[m_issued % m_depth], m_rt.stream), "cuEventRecord");
            ++m_issued;
        }
        m_rt.check(m_rt.cu->cuEventSynchronize(m_events[m_done % m_depth]), "the kernel failed in the energy loop");
        ++m_done;
        while (m_done < m_issued && m_rt.cu->cuEventQuery(m_events[m_done % m_depth]) == CUDA_SUCCESS)
            ++m_done;
    }
    std::uint64_t done() const { return m_done; }

private:
    Impl& m_rt;
    std::size_t m_depth = 2;
    std::vector<CUevent> m_events;
    std::uint64_t m_issued = 0;
    std::uint64_t m_done = 0;
};

void WorkerRuntime::Impl::measureEnergy(const worker::Measure& m, worker::Result& r) {
    if (!wantsEnergy(m.metrics) || r.measurement.status != ResultStatus::Ok)
        return;
    auto& metrics = r.measurement.metrics;
    if (!nvml || !nvml->energyMillijoules()) {
        r.metricsNote = "energy not measured: NVML cannot read this device's energy counter" +
                        (nvml && !nvml->note().empty() ? " (" + nvml->note() + ")" : std::string());
        return;
    }
    const double kernelMs = r.measurement.time.medianMs;
    {
        // A thread reads the counter and notes each step; this one keeps the GPU busy (a call to
        // NVML can take milliseconds: made here, it would let the queue run dry).
        BackToBack loop(*this, kernelMs);
        std::atomic<bool> stop{false};
        std::mutex guard;
        std::vector<std::pair<double, unsigned long long>> steps; // seconds since start, mJ
        const Clock::time_point start = Clock::now();
        std::thread poller([&] {
            std::optional<unsigned long long> last;
            while (!stop.load()) {
                const std::optional<unsigned long long> now = nvml->energyMillijoules();
                const double t = since(start);
                if (now && (!last || *now != *last)) {
                    if (last) {
                        std::lock_guard lock(guard);
                        steps.emplace_back(t, *now);
                    }
                    last = now;
                }
                std::this_thread::sleep_for(std::chrono::microseconds(kPollMicroseconds));
            }
        });
        auto stepCount = [&](double after) {
            std::lock_guard lock(guard);
            return std::count_if(steps.begin(), steps.end(), [after](const auto& s) { return s.first >= after; });
        };
        std::uint64_t fromLaunch = 0, toLaunch = 0;
        double from = 0, to = 0;
        try {
            while (since(start) < kWarmupSeconds)
                loop.step(r);
            fromLaunch = loop.done();
            from = since(start);
            while (true) {
                loop.step(r);
                const double t = since(start);
                if (t - from >= kWindowSeconds && stepCount(from) > kMinSteps)
                    break;
                if (t - from > kWindowSeconds + kStepWaitSeconds)
                    break; // the counter stopped: said below
            }
            toLaunch = loop.done();
            to = since(start);
        } catch (...) {
            stop = true;
            poller.join();
            throw;
        }
        stop = true;
        poller.join();
        // The GPU was busy throughout: launches completed at an even pace, so the launches done by
        // each step of the counter follow from its time.
        const double secondsPerLaunch = toLaunch > fromLaunch ? (to - from) / static_cast<double>(toLaunch - fromLaunch) : 0;
        std::vector<worker::EnergyCheckpoint> checkpoints;
        std::vector<double> stepTimes;
        for (const auto& [t, mJ] : steps) {
            if (t < from || t > to)
                continue;
            stepTimes.push_back(t);
            checkpoints.push_back({t, static_cast<double>(mJ),
                                   static_cast<std::uint64_t>(std::llround((t - from) / secondsPerLaunch * kLaunchScale))});
        }
        if (secondsPerLaunch <= 0 || checkpoints.size() <= static_cast<std::size_t>(kMinSteps)) {
            r.metricsNote = "energy not measured: NVML's energy counter stepped " + std::to_string(checkpoints.size()) +
                            " times in the window";
            return;
        }
        std::optional<worker::EnergyEstimate> e = worker::estimateEnergy(checkpoints);
        if (!e) {
            r.metricsNote = "energy not measured: no launch completed in the window";
            return;
        }
        // Launches were counted in 1/kLaunchScale units, for the arithmetic's integers.
        for (double* j : {&e->joulesPerLaunch, &e->joulesLow, &e->joulesHigh})
            *j *= kLaunchScale;
        metrics.push_back({kEnergyMetric, e->joulesPerLaunch});
        metrics.push_back({kEnergyLowMetric, e->joulesLow});
        metrics.push_back({kEnergyHighMetric, e->joulesHigh});
        metrics.push_back({kPowerMetric, e->watts});
        metrics.push_back({kPowerLowMetric, e->wattsLow});
        metrics.push_back({kPowerHighMetric, e->wattsHigh});
        metrics.push_back({kEnergyCounterMetric, worker::counterPeriod(stepTimes) * 1000.0});
    }
    if (!wantsEnergyCheck(m.metrics))
        return;
    // The cross-check: NVML's power readings every 10 ms through another loop, times its time per launch.
    BackToBack loop(*this, kernelMs);
    std::atomic<bool> sampling{false};
    std::atomic<bool> stop{false};
    std::vector<unsigned> readings;
    std::thread sampler([&] {
        while (!stop.load()) {
            if (sampling.load())
                if (const std::optional<unsigned> mW = nvml->powerMilliwatts())
                    readings.push_back(*mW);
            std::this_thread::sleep_for(std::chrono::milliseconds(kSamplePeriodMs));
        }
    });
    const Clock::time_point start = Clock::now();
    std::uint64_t fromLaunch = 0;
    double fromSeconds = 0;
    try {
        while (since(start) < kSampledSkipSeconds)
            loop.step(r);
        fromLaunch = loop.done();
        fromSeconds = since(start);
        sampling = true;
        while (since(start) < kSampledSkipSeconds + kSampledSeconds)
            loop.step(r);
    } catch (...) {
        stop = true;
        sampler.join();
        throw;
    }
    const std::uint64_t launches = loop.done() - fromLaunch;
    const double seconds = since(start) - fromSeconds;
    stop = true;
    sampler.join();
    if (readings.empty() || launches == 0)
        return;
    double mean = 0;
    for (unsigned mW : readings)
        mean += mW / 1000.0;
    mean /= static_cast<double>(readings.size());
    metrics.push_back({kPowerSampledMetric, mean});
    metrics.push_back({kEnergySampledMetric, mean * seconds / static_cast<double>(launches)});
}

} // namespace tilescope::cuda
