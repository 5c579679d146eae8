#include "measure/cuda/device/cuptiprofiler.h"

#include "measure/cuda/device/cudadriver.h"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <utility>

// The call sequence follows a probe that ran on the H200 (CUDA 13.0, driver 580): Range
// Profiler + Profiler Host API, AutoRange + KernelReplay.
// With KernelReplay one Start / launch / Stop submits every pass (seen for 1 and 2 passes): CUPTI
// replays the kernel inside the launch. What was seen with the 13.0 host library (no GPU needed):
// - cuptiProfilerHostConfigAddMetrics adds to what the host object already holds (a config of the
//   union comes out), so every metric set gets its own host object;
// - an unknown name makes it return CUPTI_ERROR_INVALID_PARAMETER (not ..._INVALID_METRIC_NAME)
//   and leaves the host object unusable (CUPTI_ERROR_UNKNOWN from then on);
// - cuptiProfilerHostGetMetricProperties answers CUPTI_ERROR_INVALID_METRIC_NAME for an unknown
//   name and changes nothing, but accepts a counter without its rollup ("gpu__time_duration"),
//   which ConfigAddMetrics rejects.
// What was seen on the H200 about range profiler objects is where it matters, in setMetrics and
// ensureRangeProfiler.

namespace tilescope::cuda {

namespace {

// CUPTI dlopens libnvperf_host with RTLD_DEEPBIND, which AddressSanitizer refuses by ending the
// process (seen on the H200 with the debug preset's build): such a build runs without metrics.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderAddressSanitizer = true;
#else
constexpr bool kUnderAddressSanitizer = false;
#endif
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

constexpr const char* kRestrictedNote = "GPU performance counters are restricted to administrators on this machine "
                                        "(NVreg_RestrictProfilingToAdminUsers); tuning continues without metrics";

// A CUPTI parameter struct, zeroed, with its size set (the size tells CUPTI which fields exist).
template <typename Params>
Params makeParams(std::size_t structSize) {
    Params params{};
    params.structSize = structSize;
    return params;
}

std::string resultString(CUptiResult rc) {
    const char* text = nullptr;
    if (cuptiGetResultString(rc, &text) != CUPTI_SUCCESS || !text)
        return "CUptiResult " + std::to_string(static_cast<int>(rc));
    return text;
}

// True when the NVIDIA driver reads counters for administrators only and we are not one. Used to
// explain failures that CUPTI reports with a less specific code than INSUFFICIENT_PRIVILEGES.
bool countersRestrictedToAdmins() {
    if (geteuid() == 0)
        return false;
    std::ifstream params("/proc/driver/nvidia/params");
    std::string line;
    while (std::getline(params, line)) {
        if (line.rfind("RmProfilingAdminOnly:", 0) == 0)
            return line.find('1') != std::string::npos;
    }
    return false;
}

// "cuptiRangeProfilerStart: CUPTI_ERROR_...", or the note for users without counter access.
std::string describe(const char* function, CUptiResult rc) {
    if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        return kRestrictedNote;
    return std::string(function) + ": " + resultString(rc);
}

std::string describeLaunch(CUresult rc) {
    if (const Driver* driver = Driver::load(nullptr))
        return driver->describe(rc);
    return "CUresult " + std::to_string(static_cast<int>(rc));
}

// cuptiProfilerInitialize is process-wide while the profilers are per context: the first
// profiler initializes, the last one out deinitializes (so that another CUPTI user, or a later
// profiler, finds the interface as it was).
std::mutex g_interfaceMutex;
int g_interfaceUsers = 0;

CUptiResult acquireInterface() {
    std::lock_guard lock(g_interfaceMutex);
    if (g_interfaceUsers == 0) {
        auto params = makeParams<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
        if (const CUptiResult rc = cuptiProfilerInitialize(&params); rc != CUPTI_SUCCESS)
            return rc;
    }
    ++g_interfaceUsers;
    return CUPTI_SUCCESS;
}

void releaseInterface() {
    std::lock_guard lock(g_interfaceMutex);
    if (--g_interfaceUsers == 0) {
        auto params = makeParams<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
        cuptiProfilerDeInitialize(&params); // nothing to do about a failure while tearing down
    }
}

struct HostObjectDeleter {
    void operator()(CUpti_Profiler_Host_Object* object) const noexcept {
        auto params =
            makeParams<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
        params.pHostObject = object;
        cuptiProfilerHostDeinitialize(&params);
    }
};
using HostObject = std::unique_ptr<CUpti_Profiler_Host_Object, HostObjectDeleter>;

// A host object for the range profiler on `chip`. The chip name and the availability image must
// outlive it (CUPTI may keep the pointers).
CUptiResult createHostObject(const std::string& chip, const std::vector<std::uint8_t>& availability,
                             HostObject* object) {
    auto params = makeParams<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    params.pChipName = chip.c_str();
    params.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    const CUptiResult rc = cuptiProfilerHostInitialize(&params);
    if (rc == CUPTI_SUCCESS)
        object->reset(params.pHostObject);
    return rc;
}

CUptiResult addMetrics(CUpti_Profiler_Host_Object* object, std::vector<const char*>& names) {
    auto params = makeParams<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    params.pHostObject = object;
    params.ppMetricNames = names.data();
    params.numMetrics = names.size();
    return cuptiProfilerHostConfigAddMetrics(&params);
}

} // namespace

struct CuptiProfiler::Impl {
    CUcontext context = nullptr;
    int deviceIndex = -1;
    bool interfaceHeld = false;
    std::string chipName;
    std::vector<std::uint8_t> availability;
    // Never given metrics: answers name queries for setMetrics without disturbing a config.
    HostObject queryHost;
    CUpti_RangeProfiler_Object* rangeProfiler = nullptr;

    // The metric set of the following profile() calls; passes == 0 until one is chosen.
    HostObject host;
    std::vector<std::string> names;
    std::vector<const char*> namePointers; // into `names`, as CUPTI takes them
    std::vector<std::uint8_t> configImage;
    std::vector<std::uint8_t> counterData;
    int passes = 0;

    // CUPTI's SASS metrics (countInstructions): the metric's id once configured for the device.
    bool sassConfigured = false;
    std::uint64_t sassMetricId = 0;
    std::string sassError; // why SASS metrics cannot be counted here (said for every call)

    ~Impl();
    std::string configureSass();
    std::string enableRangeProfiler();
    void disableRangeProfiler();
    std::string ensureRangeProfiler();
    std::string counterDataImage(const std::vector<const char*>& metricNames, std::vector<std::uint8_t>* image);
    std::string initializeCounterData();
    std::string rejectedName(const std::vector<std::string>& metricNames, CUptiResult wholeListResult);
};

CuptiProfiler::Impl::~Impl() {
    disableRangeProfiler();
    if (sassConfigured) {
        auto params = makeParams<CUpti_SassMetricsUnsetConfig_Params>(CUpti_SassMetricsUnsetConfig_Params_STRUCT_SIZE);
        params.deviceIndex = static_cast<std::uint32_t>(deviceIndex);
        cuptiSassMetricsUnsetConfig(&params);
    }
    host.reset();
    queryHost.reset();
    if (interfaceHeld)
        releaseInterface();
}

std::string CuptiProfiler::Impl::enableRangeProfiler() {
    auto params = makeParams<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    params.ctx = context;
    if (const CUptiResult rc = cuptiRangeProfilerEnable(&params); rc != CUPTI_SUCCESS)
        return describe("cuptiRangeProfilerEnable", rc);
    rangeProfiler = params.pRangeProfilerObject;
    return {};
}

void CuptiProfiler::Impl::disableRangeProfiler() {
    if (!rangeProfiler)
        return;
    auto params = makeParams<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    params.pRangeProfilerObject = rangeProfiler;
    cuptiRangeProfilerDisable(&params); // the object is gone either way
    rangeProfiler = nullptr;
}

// A new range profiler object knows nothing of the metric set: seen on the H200,
// CounterDataImageInitialize on a new object crashed (a null pointer inside CUPTI) until
// GetCounterDataSize had been called on it with the metrics. So the counter data image of the
// current set is made again with the new object (the old object, which used the old image, is gone).
std::string CuptiProfiler::Impl::ensureRangeProfiler() {
    if (rangeProfiler)
        return {};
    if (std::string why = enableRangeProfiler(); !why.empty())
        return why;
    if (passes > 0) {
        if (std::string why = counterDataImage(namePointers, &counterData); !why.empty()) {
            disableRangeProfiler();
            return why;
        }
    }
    return {};
}

// Sizes and initializes a counter data image for `metricNames`, one range: AutoRange makes a
// range per kernel and profile() runs one kernel.
std::string CuptiProfiler::Impl::counterDataImage(const std::vector<const char*>& metricNames,
                                                  std::vector<std::uint8_t>* image) {
    auto size = makeParams<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = rangeProfiler;
    size.pMetricNames = const_cast<const char**>(metricNames.data()); // CUPTI only reads them
    size.numMetrics = metricNames.size();
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    if (const CUptiResult rc = cuptiRangeProfilerGetCounterDataSize(&size); rc != CUPTI_SUCCESS)
        return describe("cuptiRangeProfilerGetCounterDataSize", rc);
    if (size.counterDataSize == 0)
        return "cuptiRangeProfilerGetCounterDataSize: CUPTI asked for an empty counter data image";
    image->assign(size.counterDataSize, 0);

    auto init = makeParams<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = rangeProfiler;
    init.counterDataSize = image->size();
    init.pCounterData = image->data();
    if (const CUptiResult rc = cuptiRangeProfilerCounterDataImageInitialize(&init); rc != CUPTI_SUCCESS)
        return describe("cuptiRangeProfilerCounterDataImageInitialize", rc);
    return {};
}

// Empties the current set's counter data image, so that a profile() never adds to the values of
// the one before.
std::string CuptiProfiler::Impl::initializeCounterData() {
    std::fill(counterData.begin(), counterData.end(), std::uint8_t{0});
    auto init = makeParams<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = rangeProfiler;
    init.counterDataSize = counterData.size();
    init.pCounterData = counterData.data();
    if (const CUptiResult rc = cuptiRangeProfilerCounterDataImageInitialize(&init); rc != CUPTI_SUCCESS)
        return describe("cuptiRangeProfilerCounterDataImageInitialize", rc);
    return {};
}

// The whole list failed to configure: find the name CUPTI rejects by adding the names one at a
// time to a scratch host object (a failed add spoils the object, so the first failure is the one).
std::string CuptiProfiler::Impl::rejectedName(const std::vector<std::string>& metricNames,
                                              CUptiResult wholeListResult) {
    HostObject scratch;
    if (const CUptiResult rc = createHostObject(chipName, availability, &scratch); rc != CUPTI_SUCCESS)
        return describe("cuptiProfilerHostConfigAddMetrics", wholeListResult);
    for (const std::string& name : metricNames) {
        std::vector<const char*> one{name.c_str()};
        const CUptiResult rc = addMetrics(scratch.get(), one);
        if (rc == CUPTI_SUCCESS)
            continue;
        std::string message = "unknown metric '" + name + "'";
        if (rc != CUPTI_ERROR_INVALID_PARAMETER && rc != CUPTI_ERROR_INVALID_METRIC_NAME)
            message += " (cuptiProfilerHostConfigAddMetrics: " + resultString(rc) + ")";
        else if (name.find('.') == std::string::npos)
            message += " (a metric needs a rollup or suffix, e.g. '" + name + ".sum')";
        return message;
    }
    return describe("cuptiProfilerHostConfigAddMetrics", wholeListResult);
}

CuptiProfiler::CuptiProfiler()
    : m_impl(std::make_unique<Impl>()) {}

CuptiProfiler::~CuptiProfiler() = default;

std::unique_ptr<CuptiProfiler> CuptiProfiler::create(CUcontext context, int deviceIndex, std::string* note) {
    auto fail = [note](std::string why) -> std::unique_ptr<CuptiProfiler> {
        if (note)
            *note = std::move(why);
        return nullptr;
    };
    if (!context)
        return fail("no CUDA context to profile");
    if (deviceIndex < 0)
        return fail("no CUDA device to profile");
    if (kUnderAddressSanitizer)
        return fail("CUPTI cannot run in a build with AddressSanitizer (it loads libnvperf_host with RTLD_DEEPBIND); "
                    "tuning continues without metrics");

    // The constructor is private (create() is the only way to get a profiler), so no make_unique.
    std::unique_ptr<CuptiProfiler> profiler(new CuptiProfiler);
    Impl& d = *profiler->m_impl;
    d.context = context;
    d.deviceIndex = deviceIndex;

    if (const CUptiResult rc = acquireInterface(); rc != CUPTI_SUCCESS)
        return fail(describe("cuptiProfilerInitialize", rc));
    d.interfaceHeld = true;

    auto chip = makeParams<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(deviceIndex);
    if (const CUptiResult rc = cuptiDeviceGetChipName(&chip); rc != CUPTI_SUCCESS)
        return fail(describe("cuptiDeviceGetChipName", rc));
    if (!chip.pChipName || !*chip.pChipName)
        return fail("cuptiDeviceGetChipName: CUPTI named no chip for device " + std::to_string(deviceIndex));
    d.chipName = chip.pChipName;

    // Twice: the size, then the image. Without counter access this is where it fails, with
    // INSUFFICIENT_PRIVILEGES or, on some drivers, a vaguer code or an empty image.
    auto availability = makeParams<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    availability.ctx = context;
    CUptiResult rc = cuptiProfilerGetCounterAvailability(&availability);
    if (rc == CUPTI_SUCCESS && availability.counterAvailabilityImageSize == 0)
        return fail(countersRestrictedToAdmins()
                        ? kRestrictedNote
                        : "cuptiProfilerGetCounterAvailability: no counters are available on device " +
                              std::to_string(deviceIndex));
    if (rc == CUPTI_SUCCESS) {
        d.availability.assign(availability.counterAvailabilityImageSize, 0);
        availability.pCounterAvailabilityImage = d.availability.data();
        rc = cuptiProfilerGetCounterAvailability(&availability);
    }
    if (rc != CUPTI_SUCCESS)
        return fail(countersRestrictedToAdmins() ? kRestrictedNote
                                                 : describe("cuptiProfilerGetCounterAvailability", rc));

    rc = createHostObject(d.chipName, d.availability, &d.queryHost);
    if (rc == CUPTI_ERROR_INVALID_CHIP_NAME)
        return fail("this CUPTI cannot profile the chip " + d.chipName +
                    " (cuptiProfilerHostInitialize: " + resultString(rc) + ")");
    if (rc != CUPTI_SUCCESS)
        return fail(describe("cuptiProfilerHostInitialize", rc));

    if (std::string why = d.enableRangeProfiler(); !why.empty())
        return fail(std::move(why));
    return profiler;
}

const std::string& CuptiProfiler::chipName() const {
    return m_impl->chipName;
}

std::string CuptiProfiler::setMetrics(const std::vector<std::string>& names) {
    Impl& d = *m_impl;
    if (d.passes > 0 && names == d.names)
        return {};
    if (names.empty())
        return "no metrics to collect";
    std::set<std::string> seen;
    for (const std::string& name : names) {
        if (!seen.insert(name).second)
            return "metric '" + name + "' is listed twice";
    }
    // Unknown names first, by a query that leaves every host object as it was. Other failures of
    // the query are left to ConfigAddMetrics below, which has the last word.
    for (const std::string& name : names) {
        auto properties = makeParams<CUpti_Profiler_Host_GetMetricProperties_Params>(
            CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
        properties.pHostObject = d.queryHost.get();
        properties.pMetricName = name.c_str();
        if (cuptiProfilerHostGetMetricProperties(&properties) == CUPTI_ERROR_INVALID_METRIC_NAME)
            return "unknown metric '" + name + "'";
    }

    // Everything is built aside and taken over at the end: a set that fails leaves the previous
    // one in place.
    std::vector<std::string> newNames = names;
    std::vector<const char*> newPointers;
    newPointers.reserve(newNames.size());
    for (const std::string& name : newNames)
        newPointers.push_back(name.c_str());

    HostObject newHost;
    if (const CUptiResult rc = createHostObject(d.chipName, d.availability, &newHost); rc != CUPTI_SUCCESS)
        return describe("cuptiProfilerHostInitialize", rc);
    if (const CUptiResult rc = addMetrics(newHost.get(), newPointers); rc != CUPTI_SUCCESS)
        return d.rejectedName(newNames, rc);

    auto imageSize = makeParams<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    imageSize.pHostObject = newHost.get();
    if (const CUptiResult rc = cuptiProfilerHostGetConfigImageSize(&imageSize); rc != CUPTI_SUCCESS)
        return describe("cuptiProfilerHostGetConfigImageSize", rc);
    if (imageSize.configImageSize == 0)
        return "cuptiProfilerHostGetConfigImageSize: CUPTI made an empty config image";
    std::vector<std::uint8_t> newConfig(imageSize.configImageSize, 0);
    auto image =
        makeParams<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = newHost.get();
    image.configImageSize = newConfig.size();
    image.pConfigImage = newConfig.data();
    if (const CUptiResult rc = cuptiProfilerHostGetConfigImage(&image); rc != CUPTI_SUCCESS)
        return describe("cuptiProfilerHostGetConfigImage", rc);

    auto passes =
        makeParams<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.configImageSize = newConfig.size();
    passes.pConfigImage = newConfig.data();
    if (const CUptiResult rc = cuptiProfilerHostGetNumOfPasses(&passes); rc != CUPTI_SUCCESS)
        return describe("cuptiProfilerHostGetNumOfPasses", rc);
    if (passes.numOfPasses == 0)
        return "cuptiProfilerHostGetNumOfPasses: CUPTI scheduled no pass";

    // One range profiler object per set. Seen on the H200: once a 1-pass set had been profiled,
    // the launch under a 2-pass set's config on the same object crashed inside CUPTI; with a new
    // object per set (as the probe had, one per config) it works. The previous images are freed
    // (below) only after the object that used them is gone. If this fails half-way, the object is
    // dropped again: it may know the new metrics (GetCounterDataSize) while the previous set stays,
    // and profile() makes a fresh one for that set.
    d.disableRangeProfiler();
    if (std::string why = d.enableRangeProfiler(); !why.empty())
        return why;
    std::vector<std::uint8_t> newCounterData;
    if (std::string why = d.counterDataImage(newPointers, &newCounterData); !why.empty()) {
        d.disableRangeProfiler();
        return why;
    }

    d.host = std::move(newHost);
    d.names = std::move(newNames);
    // Moving the vector keeps its strings where they were, but rebuilding costs nothing.
    d.namePointers.clear();
    for (const std::string& name : d.names)
        d.namePointers.push_back(name.c_str());
    d.configImage = std::move(newConfig);
    d.counterData = std::move(newCounterData);
    d.passes = static_cast<int>(passes.numOfPasses);
    return {};
}

int CuptiProfiler::passes() const {
    return m_impl->passes;
}

std::optional<std::vector<Metric>> CuptiProfiler::profile(const std::function<CUresult()>& launch, std::string* error,
                                                          CUresult* launchError) {
    Impl& d = *m_impl;
    if (launchError)
        *launchError = CUDA_SUCCESS;
    auto fail = [error](std::string why) -> std::optional<std::vector<Metric>> {
        if (error)
            *error = std::move(why);
        return std::nullopt;
    };
    if (d.passes == 0)
        return fail("no metrics chosen (setMetrics)");
    if (!launch)
        return fail("nothing to profile");

    // After a failure the range profiler object is dropped (see stopAndReset); a new one is made here.
    if (std::string why = d.ensureRangeProfiler(); !why.empty())
        return fail(std::move(why));
    // A failure between Start and the decode leaves CUPTI mid-session; a fresh range profiler
    // object is the one state known to work, so the next profile() starts from that.
    auto stopAndReset = [&d] {
        auto stop = makeParams<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
        stop.pRangeProfilerObject = d.rangeProfiler;
        cuptiRangeProfilerStop(&stop); // may fail when Start did not happen; the reset follows anyway
        d.disableRangeProfiler();
    };

    if (std::string why = d.initializeCounterData(); !why.empty())
        return fail(std::move(why));

    auto config = makeParams<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    config.pRangeProfilerObject = d.rangeProfiler;
    config.configSize = d.configImage.size();
    config.pConfig = d.configImage.data();
    config.counterDataImageSize = d.counterData.size();
    config.pCounterDataImage = d.counterData.data();
    config.range = CUPTI_AutoRange;
    config.replayMode = CUPTI_KernelReplay;
    config.maxRangesPerPass = 1;
    config.numNestingLevels = 1; // AutoRange: one level
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    if (const CUptiResult rc = cuptiRangeProfilerSetConfig(&config); rc != CUPTI_SUCCESS) {
        d.disableRangeProfiler();
        return fail(describe("cuptiRangeProfilerSetConfig", rc));
    }

    // KernelReplay replays the kernel inside one launch for every pass, so one round is expected;
    // the loop is for a CUPTI that asks for the launch again, bounded so it cannot spin.
    const int maxRounds = d.passes + 1;
    bool allSubmitted = false;
    for (int round = 0; round < maxRounds && !allSubmitted; ++round) {
        auto start = makeParams<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
        start.pRangeProfilerObject = d.rangeProfiler;
        if (const CUptiResult rc = cuptiRangeProfilerStart(&start); rc != CUPTI_SUCCESS) {
            stopAndReset();
            return fail(describe("cuptiRangeProfilerStart", rc));
        }
        CUresult launched = CUDA_SUCCESS;
        try {
            launched = launch();
        } catch (...) {
            stopAndReset();
            throw;
        }
        if (launched != CUDA_SUCCESS) {
            stopAndReset();
            if (launchError)
                *launchError = launched;
            return fail("the launch failed under the profiler: " + describeLaunch(launched));
        }
        auto stop = makeParams<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
        stop.pRangeProfilerObject = d.rangeProfiler;
        if (const CUptiResult rc = cuptiRangeProfilerStop(&stop); rc != CUPTI_SUCCESS) {
            d.disableRangeProfiler();
            return fail(describe("cuptiRangeProfilerStop", rc));
        }
        allSubmitted = stop.isAllPassSubmitted != 0;
    }
    if (!allSubmitted) {
        d.disableRangeProfiler();
        return fail("CUPTI did not finish the " + std::to_string(d.passes) + " passes of the metrics in " +
                    std::to_string(maxRounds) + " launches");
    }

    // A kernel that faults shows up here rather than at the launch; say so in the driver's words
    // instead of as an opaque CUPTI failure (the worker exits on sticky errors).
    if (const Driver* driver = Driver::load(nullptr)) {
        if (const CUresult rc = driver->cuCtxSynchronize(); rc != CUDA_SUCCESS) {
            d.disableRangeProfiler();
            if (launchError)
                *launchError = rc;
            return fail("the kernel failed under the profiler: " + driver->describe(rc));
        }
    }

    auto decode = makeParams<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = d.rangeProfiler;
    if (const CUptiResult rc = cuptiRangeProfilerDecodeData(&decode); rc != CUPTI_SUCCESS) {
        d.disableRangeProfiler();
        return fail(describe("cuptiRangeProfilerDecodeData", rc));
    }
    if (decode.numOfRangeDropped > 0)
        return fail("CUPTI dropped " + std::to_string(decode.numOfRangeDropped) +
                    " ranges: the launch ran more than one kernel");

    auto info = makeParams<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = d.counterData.data();
    info.counterDataImageSize = d.counterData.size();
    if (const CUptiResult rc = cuptiRangeProfilerGetCounterDataInfo(&info); rc != CUPTI_SUCCESS)
        return fail(describe("cuptiRangeProfilerGetCounterDataInfo", rc));
    if (info.numTotalRanges == 0)
        return fail("CUPTI recorded no kernel: the launch ran none");

    // The range CUPTI made around the kernel (AutoRange names it by launch order). Asked for as
    // NVIDIA's sample does, as a check that the range is there before evaluating it.
    auto range = makeParams<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    range.pCounterDataImage = d.counterData.data();
    range.counterDataImageSize = d.counterData.size();
    range.rangeIndex = 0;
    range.rangeDelimiter = "/";
    if (const CUptiResult rc = cuptiRangeProfilerCounterDataGetRangeInfo(&range); rc != CUPTI_SUCCESS)
        return fail(describe("cuptiRangeProfilerCounterDataGetRangeInfo", rc));

    std::vector<double> values(d.names.size(), 0.0);
    auto evaluate = makeParams<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    evaluate.pHostObject = d.host.get();
    evaluate.pCounterDataImage = d.counterData.data();
    evaluate.counterDataImageSize = d.counterData.size();
    evaluate.rangeIndex = 0;
    evaluate.ppMetricNames = d.namePointers.data();
    evaluate.numMetrics = d.namePointers.size();
    evaluate.pMetricValues = values.data();
    if (const CUptiResult rc = cuptiProfilerHostEvaluateToGpuValues(&evaluate); rc != CUPTI_SUCCESS)
        return fail(describe("cuptiProfilerHostEvaluateToGpuValues", rc));

    std::vector<Metric> metrics;
    metrics.reserve(d.names.size());
    for (std::size_t i = 0; i < d.names.size(); ++i)
        metrics.push_back(Metric{d.names[i], values[i]});
    return metrics;
}

} // namespace tilescope::cuda

namespace tilescope::cuda {

// The metric of countInstructions: warp-level executions of each instruction.
constexpr const char* kExecutedMetric = "smsp__sass_inst_executed";

std::string CuptiProfiler::Impl::configureSass() {
    if (sassConfigured || !sassError.empty())
        return sassError;
    auto properties =
        makeParams<CUpti_SassMetrics_GetProperties_Params>(CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE);
    properties.pChipName = chipName.c_str();
    properties.pMetricName = kExecutedMetric;
    if (const CUptiResult rc = cuptiSassMetricsGetProperties(&properties); rc != CUPTI_SUCCESS)
        return sassError = describe("cuptiSassMetricsGetProperties", rc) + " (" + kExecutedMetric + " on " +
                           chipName + ")";
    sassMetricId = properties.metric.metricId;
    CUpti_SassMetrics_Config config{};
    config.metricId = sassMetricId;
    config.outputGranularity = CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU;
    auto set = makeParams<CUpti_SassMetricsSetConfig_Params>(CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE);
    set.numOfMetricConfig = 1;
    set.pConfigs = &config;
    set.deviceIndex = static_cast<std::uint32_t>(deviceIndex);
    if (const CUptiResult rc = cuptiSassMetricsSetConfig(&set); rc != CUPTI_SUCCESS)
        return sassError = describe("cuptiSassMetricsSetConfig", rc);
    sassConfigured = true;
    return {};
}

std::optional<std::vector<InstructionCount>> CuptiProfiler::countInstructions(const std::function<CUresult()>& launch,
                                                                              const std::string& functionName,
                                                                              std::string* error,
                                                                              CUresult* launchError) {
    Impl& d = *m_impl;
    if (launchError)
        *launchError = CUDA_SUCCESS;
    auto fail = [error](std::string why) -> std::optional<std::vector<InstructionCount>> {
        if (error)
            *error = std::move(why);
        return std::nullopt;
    };
    if (std::string why = d.configureSass(); !why.empty())
        return fail(why);
    // The range profiler and SASS patching do not share a context: the range profiler object goes
    // (profile() makes a new one, with the counter data image of its set, when it is next needed).
    d.disableRangeProfiler();

    auto enable = makeParams<CUpti_SassMetricsEnable_Params>(CUpti_SassMetricsEnable_Params_STRUCT_SIZE);
    enable.ctx = d.context;
    enable.enableLazyPatching = 1; // only what runs in the window is patched
    if (const CUptiResult rc = cuptiSassMetricsEnable(&enable); rc != CUPTI_SUCCESS)
        return fail(describe("cuptiSassMetricsEnable", rc));
    auto disable = [&d]() {
        auto params = makeParams<CUpti_SassMetricsDisable_Params>(CUpti_SassMetricsDisable_Params_STRUCT_SIZE);
        params.ctx = d.context;
        cuptiSassMetricsDisable(&params);
    };

    const CUresult launched = launch();
    const Driver* cu = Driver::load(nullptr);
    const CUresult finished = launched != CUDA_SUCCESS ? launched : (cu ? cu->cuCtxSynchronize() : CUDA_SUCCESS);
    if (finished != CUDA_SUCCESS) {
        if (launchError)
            *launchError = finished;
        disable();
        return fail("the launch under SASS metrics failed: " + describeLaunch(finished));
    }

    auto properties =
        makeParams<CUpti_SassMetricsGetDataProperties_Params>(CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE);
    properties.ctx = d.context;
    if (const CUptiResult rc = cuptiSassMetricsGetDataProperties(&properties); rc != CUPTI_SUCCESS) {
        disable();
        return fail(describe("cuptiSassMetricsGetDataProperties", rc));
    }
    const std::size_t records = properties.numOfPatchedInstructionRecords;
    const std::size_t instances = properties.numOfInstances;
    std::vector<InstructionCount> counts;
    if (records > 0 && instances > 0) {
        std::vector<CUpti_SassMetrics_Data> data(records);
        std::vector<CUpti_SassMetrics_InstanceValue> values(records * instances);
        for (std::size_t i = 0; i < records; ++i) {
            data[i].structSize = sizeof(CUpti_SassMetrics_Data);
            data[i].pInstanceValues = &values[i * instances];
        }
        auto flush = makeParams<CUpti_SassMetricsFlushData_Params>(CUpti_SassMetricsFlushData_Params_STRUCT_SIZE);
        flush.ctx = d.context;
        flush.numOfPatchedInstructionRecords = records;
        flush.numOfInstances = instances;
        flush.pMetricsData = data.data();
        if (const CUptiResult rc = cuptiSassMetricsFlushData(&flush); rc != CUPTI_SUCCESS) {
            disable();
            return fail(describe("cuptiSassMetricsFlushData", rc));
        }
        std::map<std::uint32_t, std::uint64_t> byOffset;
        for (const CUpti_SassMetrics_Data& record : data) {
            if (!record.functionName || functionName != record.functionName)
                continue;
            std::uint64_t executed = 0;
            for (std::size_t k = 0; k < instances; ++k)
                if (record.pInstanceValues[k].metricId == d.sassMetricId)
                    executed += record.pInstanceValues[k].value;
            byOffset[record.pcOffset] += executed;
        }
        for (const auto& [offset, executed] : byOffset)
            counts.push_back({offset, executed});
    }
    disable();
    if (counts.empty())
        return fail("CUPTI's SASS metrics counted no instruction of " + functionName);
    return counts;
}

} // namespace tilescope::cuda
