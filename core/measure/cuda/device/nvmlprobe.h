#pragma once

// The GPU's clocks, temperature and power state through NVML (the driver's management library),
// loaded at run time like the driver: dlopen("libnvidia-ml.so.1"), so the worker starts where it
// is missing and simply reports no state.

#include "model/measurement.h"

#include <memory>
#include <optional>
#include <string>

namespace tilescope::cuda {

class NvmlProbe {
public:
    /// Finds the device by its UUID ("GPU-8c1f..."); note() says why not when it cannot.
    explicit NvmlProbe(const std::string& uuid);
    ~NvmlProbe();
    NvmlProbe(const NvmlProbe&) = delete;
    NvmlProbe& operator=(const NvmlProbe&) = delete;

    bool available() const;
    /// Why the state cannot be read ("" when it can).
    const std::string& note() const;
    /// The state now (a few tens of microseconds); nullopt when unavailable.
    std::optional<DeviceState> sample() const;
    /// The board's energy since the driver loaded, in mJ (nvmlDeviceGetTotalEnergyConsumption;
    /// Volta and later). nullopt when NVML cannot say.
    std::optional<unsigned long long> energyMillijoules() const;
    /// The board's power now, in mW (nvmlDeviceGetPowerUsage). nullopt when NVML cannot say.
    std::optional<unsigned> powerMilliwatts() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace tilescope::cuda
