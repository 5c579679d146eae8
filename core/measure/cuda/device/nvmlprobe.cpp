// NVML through dlopen: the few functions the probe calls, declared here with NVML's C types (an
// opaque device handle, unsigned ints, an int result), so no NVML header is needed to build.

#include "measure/cuda/device/nvmlprobe.h"

#include <dlfcn.h>

namespace tilescope::cuda {

namespace {

using NvmlReturn = int; // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = void*;

constexpr int kClockSm = 1;  // NVML_CLOCK_SM
constexpr int kClockMem = 2; // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;

} // namespace

struct NvmlProbe::Impl {
    void* library = nullptr;
    NvmlDevice device = nullptr;
    std::string note;
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    NvmlReturn (*byUuid)(const char*, NvmlDevice*) = nullptr;
    NvmlReturn (*clockInfo)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*performanceState)(NvmlDevice, int*) = nullptr;
    NvmlReturn (*powerUsage)(NvmlDevice, unsigned*) = nullptr;
    NvmlReturn (*clockReasons)(NvmlDevice, unsigned long long*) = nullptr;
    NvmlReturn (*totalEnergy)(NvmlDevice, unsigned long long*) = nullptr;
    bool initialised = false;

    template <typename F>
    bool resolve(F& f, const char* name) {
        f = reinterpret_cast<F>(dlsym(library, name));
        return f != nullptr;
    }
};

NvmlProbe::NvmlProbe(const std::string& uuid)
    : m_impl(std::make_unique<Impl>()) {
    Impl& d = *m_impl;
    d.library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d.library) {
        d.note = "no NVML (libnvidia-ml.so.1 not found): clocks and temperature are not recorded";
        return;
    }
    if (!d.resolve(d.init, "nvmlInit_v2") || !d.resolve(d.shutdown, "nvmlShutdown") ||
        !d.resolve(d.byUuid, "nvmlDeviceGetHandleByUUID") || !d.resolve(d.clockInfo, "nvmlDeviceGetClockInfo") ||
        !d.resolve(d.temperature, "nvmlDeviceGetTemperature") ||
        !d.resolve(d.performanceState, "nvmlDeviceGetPerformanceState")) {
        d.note = "NVML lacks a function the probe needs: clocks and temperature are not recorded";
        return;
    }
    d.resolve(d.powerUsage, "nvmlDeviceGetPowerUsage"); // optional
    d.resolve(d.totalEnergy, "nvmlDeviceGetTotalEnergyConsumption"); // optional
    if (!d.resolve(d.clockReasons, "nvmlDeviceGetCurrentClocksEventReasons"))
        d.resolve(d.clockReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (d.init() != 0) {
        d.note = "NVML did not initialise: clocks and temperature are not recorded";
        return;
    }
    d.initialised = true;
    if (d.byUuid(uuid.c_str(), &d.device) != 0) {
        d.device = nullptr;
        d.note = "NVML does not know the device " + uuid + ": clocks and temperature are not recorded";
    }
}

NvmlProbe::~NvmlProbe() {
    if (m_impl->initialised)
        m_impl->shutdown();
    if (m_impl->library)
        dlclose(m_impl->library);
}

bool NvmlProbe::available() const {
    return m_impl->device != nullptr;
}

const std::string& NvmlProbe::note() const {
    return m_impl->note;
}

std::optional<DeviceState> NvmlProbe::sample() const {
    const Impl& d = *m_impl;
    if (!d.device)
        return std::nullopt;
    DeviceState s;
    unsigned value = 0;
    if (d.clockInfo(d.device, kClockSm, &value) != 0)
        return std::nullopt;
    s.smClockMHz = static_cast<int>(value);
    if (d.clockInfo(d.device, kClockMem, &value) == 0)
        s.memoryClockMHz = static_cast<int>(value);
    if (d.temperature(d.device, kTemperatureGpu, &value) == 0)
        s.temperatureC = static_cast<int>(value);
    int pstate = -1;
    if (d.performanceState(d.device, &pstate) == 0 && pstate >= 0 && pstate < 32)
        s.performanceState = pstate;
    if (d.powerUsage && d.powerUsage(d.device, &value) == 0)
        s.powerWatts = value / 1000.0;
    unsigned long long reasons = 0;
    if (d.clockReasons && d.clockReasons(d.device, &reasons) == 0)
        s.clockReasons = reasons;
    return s;
}

std::optional<unsigned long long> NvmlProbe::energyMillijoules() const {
    const Impl& d = *m_impl;
    unsigned long long mJ = 0;
    if (!d.device || !d.totalEnergy || d.totalEnergy(d.device, &mJ) != 0)
        return std::nullopt;
    return mJ;
}

std::optional<unsigned> NvmlProbe::powerMilliwatts() const {
    const Impl& d = *m_impl;
    unsigned mW = 0;
    if (!d.device || !d.powerUsage || d.powerUsage(d.device, &mW) != 0)
        return std::nullopt;
    return mW;
}

} // namespace tilescope::cuda
