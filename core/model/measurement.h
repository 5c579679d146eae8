#pragma once

// What one evaluation of a config gives, whichever backend produced it (the GPU worker, a replay
// of a recording): the status, the timing statistics, hardware metrics, and what it cost.

#include "model/staticinfo.h"

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

/// The outcome of evaluating one config. Ok results rank by their time; Analysed ones (nothing
/// timed) by what compiling told, after them; every status is a result that is stored, so a run
/// never loses a config.
enum class ResultStatus : std::uint8_t {
    Ok,           ///< compiled, ran, verified; timing is valid
    CompileError, ///< NVRTC rejected it; the log is kept
    LaunchError,  ///< the launch failed (too many resources, bad geometry)
    WrongResult,  ///< ran but the output did not match the reference
    Crashed,      ///< the worker died running it (illegal address, trap)
    Timeout,      ///< the watchdog stopped it
    Pruned,       ///< never run: over the device's limits (shared memory, threads) or a prune rule
    Skipped,      ///< never run: e.g. absent from a replayed recording
    /// ran and returned, but faster than physics allows: its median is below the time its outputs
    /// take to write (or the problem's roofline), or its launch could not have run (more registers
    /// than a block holds); a kernel that returns early or writes nothing looks like this
    Implausible,
    /// compiled for an arch and analysed, never run (the analysis backend): its registers, spills,
    /// shared memory and theoretical occupancy are known, its time is not; it ranks by those
    /// (StaticRank) after every timed result
    Analysed,
};

/// "ok", "compile_error", "launch_error", "wrong_result", "crashed", "timeout", "pruned", "skipped",
/// "implausible", "analysed".
std::string_view statusName(ResultStatus status);
/// The inverse of statusName; nullopt for an unknown name.
std::optional<ResultStatus> parseStatus(std::string_view name);
/// Statuses that a replayed or resumed session may treat as final for a config.
inline bool isMeasured(ResultStatus s) {
    return s != ResultStatus::Skipped;
}
/// Every status, in enum order (for tables and counts).
inline constexpr ResultStatus kAllStatuses[] = {
    ResultStatus::Ok,          ResultStatus::CompileError, ResultStatus::LaunchError, ResultStatus::WrongResult,
    ResultStatus::Crashed,     ResultStatus::Timeout,      ResultStatus::Pruned,      ResultStatus::Skipped,
    ResultStatus::Implausible, ResultStatus::Analysed,
};
inline constexpr std::size_t kStatusCount = std::size(kAllStatuses);

/// `text` fit to be a result's message or log, the one rule every message passes (compile logs,
/// the worker's words, recordings of other tools): no NUL bytes (dropped), line ends as "\n"
/// ("\r\n" and a lone "\r" too), no other control bytes (each a space; tab stays), and no white
/// space at either end. Bytes from 0x80 up (UTF-8) are kept as they are.
std::string cleanMessage(std::string_view text);

/// Kernel time statistics over the timed samples, in milliseconds.
struct TimingStats {
    double medianMs = 0;
    double minMs = 0;
    double maxMs = 0;
    double stdevMs = 0;
    int samples = 0;
    /// The median's 95 % confidence interval (order statistics of the samples); both 0 when not
    /// known (recordings of other tools, older sessions, a single sample).
    double ciLowMs = 0;
    double ciHighMs = 0;

    bool hasInterval() const { return ciHighMs > 0 && ciLowMs <= medianMs && medianMs <= ciHighMs; }
    bool operator==(const TimingStats&) const = default;
};

/// The metric names of energy per launch (J) and mean power (W); Kernel Tuner's caches call them
/// nvml_energy and nvml_power (exchange reads and writes both).
inline constexpr const char* kEnergyMetric = "energy";
inline constexpr const char* kPowerMetric = "power";
/// Their 95 % intervals (from NVML's energy counter over sub-windows of the measurement).
inline constexpr const char* kEnergyLowMetric = "energy.ci_low";
inline constexpr const char* kEnergyHighMetric = "energy.ci_high";
inline constexpr const char* kPowerLowMetric = "power.ci_low";
inline constexpr const char* kPowerHighMetric = "power.ci_high";
/// The cross-check (`--metrics energy-check`): NVML's power readings sampled through a second
/// loop of the same launch (W), and that power times the loop's time per launch (J).
inline constexpr const char* kPowerSampledMetric = "power.sampled";
inline constexpr const char* kEnergySampledMetric = "energy.sampled";
/// The energy counter's update period seen during the measurement (ms): the median time between its steps.
inline constexpr const char* kEnergyCounterMetric = "energy.counter_ms";

/// What the check of a config's outputs found (measure/cuda/outputcheck.h), recorded where
/// not zero: elements the reference config writes that it never wrote; NaN or Inf values where
/// the reference's are finite; values further from the reference's than the tolerance; elements it
/// wrote that the reference config left unwritten.
inline constexpr const char* kVerifyUnwritten = "verify.unwritten";
inline constexpr const char* kVerifyNonFinite = "verify.nonfinite";
inline constexpr const char* kVerifyMismatched = "verify.mismatched";
inline constexpr const char* kVerifyExtra = "verify.extra";

/// A named hardware counter or derived value (CUPTI metric names, e.g. "dram__bytes_read.sum").
struct Metric {
    std::string name;
    double value = 0;

    bool operator==(const Metric&) const = default;
};

/// The GPU's state while a config was measured, as the driver's management library (NVML)
/// reports it right after the timed samples; absent where it cannot be read.
struct DeviceState {
    int smClockMHz = 0;
    int memoryClockMHz = 0;
    int temperatureC = 0;
    int performanceState = -1; ///< P-state, 0 the fastest (-1: unknown)
    double powerWatts = 0;     ///< 0: unknown
    /// Why the clocks are held below their maximum (NVML's clocks event reasons, a bit mask;
    /// 0: none or unknown). Idle (1) and the application's clock setting (2) are normal.
    std::uint64_t clockReasons = 0;

    bool operator==(const DeviceState&) const = default;
};

/// How often one machine instruction of a kernel ran: its offset in the kernel function (as
/// nvdisasm numbers the function's instructions) and its executions by warps (CUPTI's SASS metric
/// smsp__sass_inst_executed).
struct InstructionCount {
    std::uint32_t offset = 0;
    std::uint64_t executed = 0;

    bool operator==(const InstructionCount&) const = default;
};

/// What a backend reports for one config.
/// Where a config's benchmark time went on the worker, in seconds; not stored per result (the
/// session adds them up for its summary and provenance). The rest of benchmarkSeconds is loading
/// the module and checking the launch.
struct BenchmarkParts {
    double check = 0;         ///< the checked launch: canaried outputs, their downloads and the comparison
    double timing = 0;        ///< the timed samples, with their L2 flushes and restores, and the warm-up before them
    double warmup = 0;        ///< of timing: the warm-up launches before the samples
    double counters = 0;      ///< CUPTI's passes and the executed-instruction counts
    double energy = 0;        ///< NVML's pass
    int comparedOnDevice = 0; ///< outputs whose comparison with the reference the GPU settled
    int downloaded = 0;       ///< outputs copied to the host to be checked there
    int raced = 0;            ///< configs whose sampling stopped early: clearly slower than the best (the race)
    int profiled = 0;         ///< configs whose counters were collected (MeasureControl::profileUnderMs)
    int unrestored = 0;       ///< ReadWrite buffers the first launch left unchanged, not restored before the others
    int batched = 0;          ///< configs timed in batches of launches (the warm context, kernels under 10 us)
    int batchLaunches = 0;    ///< the most launches a batch held (a sum of configs keeps the largest)
    int samples = 0;          ///< timed samples (a sum of configs adds them up)

    bool operator==(const BenchmarkParts&) const = default;
};

struct Measurement {
    ResultStatus status = ResultStatus::Skipped;
    TimingStats time;                        ///< valid when status == Ok (and WrongResult, Implausible when timed)
    std::vector<Metric> metrics;             ///< empty when metrics are off or unavailable
    double compileSeconds = 0;               ///< compile wall time (a replay reports the recorded one)
    double benchmarkSeconds = 0;             ///< wall time spent measuring this config (recorded, for a replay)
    std::optional<double> verificationError; ///< the largest error against the reference, when verified
    std::string message;                     ///< why it failed, or a note ("absent from the recording")
    int device = -1;                         ///< which device measured it (-1: none)
    /// What the backend knows of the compiled kernel: the worker's function attributes, or a
    /// recording's static info. The session prefers its own compile's report when it has one.
    std::optional<StaticInfo> staticInfo;
    std::optional<DeviceState> deviceState; ///< the GPU's clocks and temperature while it was measured
    /// Every timed sample in order, when the caller asked for them (MeasureControl::keepSamples,
    /// the final round); not stored.
    std::vector<double> samplesMs;
    /// Per machine instruction of the kernel that ran, its executions in one launch, when the caller
    /// asked for them (CudaBackendOptions::executedCounts); by offset; not stored.
    std::vector<InstructionCount> executed;
    BenchmarkParts parts; ///< where benchmarkSeconds went (the worker's; not stored)

    bool operator==(const Measurement&) const = default;
};

} // namespace tilescope
