#pragma once

// CUPTI metric names the way users give them: "default" stands for Tilescope's default set,
// which fits in one pass on GH100 (resources/docs/guide/measuring.md); "bank-conflicts"
// for the shared-memory bank conflicts that tensor-core kernels are tuned against.

#include <string>
#include <vector>

namespace tilescope {

struct DeviceState;
struct Metric;

/// The default set: duration, achieved occupancy, local-memory (spill) load and store sectors,
/// DRAM bytes read and written, tensor-pipe activity (mma.sync and wgmma alike).
const std::vector<std::string>& defaultMetricNames();

/// Expands "default" (anywhere in the list) into the default set and "bank-conflicts" into the
/// shared-memory bank conflicts of loads and stores (with the default set, two passes on GH100),
/// and drops duplicates, keeping
/// the first occurrence's order; "none" alone gives an empty list. "all-configs" asks for the
/// counters of every config (wantsEveryConfigProfiled) and names no metric: alone, it stands for
/// the default set. Names are otherwise kept as given (CUPTI checks them).
std::vector<std::string> expandMetricNames(const std::vector<std::string>& names);

/// The word of a metric list that asks for every config's counters, not only for those of the
/// configs that rank near the best (the default: resources/docs/guide/measuring.md).
inline constexpr const char* kEveryConfigMetricsWord = "all-configs";
/// Whether `names` hold kEveryConfigMetricsWord.
bool wantsEveryConfigProfiled(const std::vector<std::string>& names);

/// What NVML measures rather than CUPTI: "energy" (joules per launch and mean power, each with
/// an interval, from the energy counter) and "energy-check" (that, and the sampled-power
/// cross-check); "power" is read as "energy". Not passed to CUPTI.
bool isEnergyRequest(const std::string& name);
/// The word of a metric list that asks for each config's GPU state as metrics: the SM and memory
/// clocks and the temperature NVML reads right after the config's samples (kGpuStateMetrics).
/// Not passed to CUPTI.
inline constexpr const char* kGpuStateWord = "gpu-state";
/// Whether `names` hold kGpuStateWord.
bool wantsGpuState(const std::vector<std::string>& names);
/// The metrics a config's GPU state becomes: SM clock (MHz), memory clock (MHz), temperature (C).
inline constexpr const char* kSmClockMetric = "gpu.sm_clock_mhz";
inline constexpr const char* kMemoryClockMetric = "gpu.memory_clock_mhz";
inline constexpr const char* kTemperatureMetric = "gpu.temperature_c";
/// `state` as those metrics, appended to `metrics` (the values NVML could not read left out).
void appendGpuStateMetrics(const DeviceState& state, std::vector<Metric>& metrics);

/// The names of `names` (as given) that CUPTI measures: expandMetricNames less the energy and
/// GPU-state requests.
std::vector<std::string> cuptiMetricNames(const std::vector<std::string>& names);
/// Whether `names` ask for energy, and for its cross-check.
bool wantsEnergy(const std::vector<std::string>& names);
bool wantsEnergyCheck(const std::vector<std::string>& names);

/// Short labels for tables: "sm__warps_active.avg.pct_of_peak_sustained_active" -> "achieved occupancy %".
/// Unknown names come back unchanged.
std::string metricLabel(const std::string& name);

} // namespace tilescope
