#include "measure/metricnames.h"

#include "model/measurement.h"

#include <algorithm>
#include <utility>

namespace tilescope {

namespace {

const std::vector<std::pair<std::string, std::string>>& labels() {
    static const std::vector<std::pair<std::string, std::string>> table = {
        {"gpu__time_duration.sum", "duration ns"},
        {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy %"},
        {"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "local load sectors"},
        {"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", "local store sectors"},
        {"dram__bytes_read.sum", "DRAM bytes read"},
        {"dram__bytes_write.sum", "DRAM bytes written"},
        {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor pipe %"},
        // "bank-conflicts" (a second CUPTI pass on GH100 with the default set)
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "shared load bank conflicts"},
        {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "shared store bank conflicts"},
    };
    return table;
}

constexpr std::size_t kDefaultCount = 7; // the first rows of labels(): one pass on GH100

} // namespace

const std::vector<std::string>& defaultMetricNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < kDefaultCount; ++i)
            out.push_back(labels()[i].first);
        return out;
    }();
    return names;
}

std::vector<std::string> expandMetricNames(const std::vector<std::string>& names) {
    std::vector<std::string> out;
    auto add = [&](const std::string& name) {
        if (std::find(out.begin(), out.end(), name) == out.end())
            out.push_back(name);
    };
    if (names.size() == 1 && names.front() == "none")
        return out;
    if (names.size() == 1 && names.front() == kEveryConfigMetricsWord)
        return defaultMetricNames();
    for (const std::string& name : names) {
        if (name == kEveryConfigMetricsWord)
            continue;
        if (name == "default") {
            for (const std::string& d : defaultMetricNames())
                add(d);
        } else if (name == "bank-conflicts") {
            for (std::size_t i = kDefaultCount; i < labels().size(); ++i)
                add(labels()[i].first);
        } else if (!name.empty() && name != "none") {
            add(name);
        }
    }
    return out;
}

bool wantsEveryConfigProfiled(const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), kEveryConfigMetricsWord) != names.end();
}

bool isEnergyRequest(const std::string& name) {
    return name == kEnergyMetric || name == kPowerMetric || name == "energy-check";
}

std::vector<std::string> cuptiMetricNames(const std::vector<std::string>& names) {
    std::vector<std::string> out = expandMetricNames(names);
    out.erase(std::remove_if(out.begin(), out.end(),
                             [](const std::string& n) { return isEnergyRequest(n) || n == kGpuStateWord; }),
              out.end());
    return out;
}

bool wantsGpuState(const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), kGpuStateWord) != names.end();
}

void appendGpuStateMetrics(const DeviceState& state, std::vector<Metric>& metrics) {
    if (state.smClockMHz > 0)
        metrics.push_back({kSmClockMetric, static_cast<double>(state.smClockMHz)});
    if (state.memoryClockMHz > 0)
        metrics.push_back({kMemoryClockMetric, static_cast<double>(state.memoryClockMHz)});
    if (state.temperatureC > 0)
        metrics.push_back({kTemperatureMetric, static_cast<double>(state.temperatureC)});
}

bool wantsEnergy(const std::vector<std::string>& names) {
    return std::any_of(names.begin(), names.end(), isEnergyRequest);
}

bool wantsEnergyCheck(const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), "energy-check") != names.end();
}

std::string metricLabel(const std::string& name) {
    static const std::pair<const char*, const char*> energy[] = {
        {kEnergyMetric, "energy J / launch"},
        {kPowerMetric, "power W"},
        {kEnergyLowMetric, "energy low J"},
        {kEnergyHighMetric, "energy high J"},
        {kPowerLowMetric, "power low W"},
        {kPowerHighMetric, "power high W"},
        {kEnergySampledMetric, "energy sampled J"},
        {kPowerSampledMetric, "power sampled W"},
        {kEnergyCounterMetric, "energy counter period ms"},
        {kSmClockMetric, "SM clock MHz"},
        {kMemoryClockMetric, "memory clock MHz"},
        {kTemperatureMetric, "temperature C"},
    };
    for (const auto& [n, label] : energy)
        if (name == n)
            return label;
    for (const auto& [n, label] : labels()) {
        if (n == name)
            return label;
    }
    return name;
}

} // namespace tilescope
