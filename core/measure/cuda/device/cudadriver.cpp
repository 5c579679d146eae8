#include "measure/cuda/device/cudadriver.h"

#include <dlfcn.h>

#include <mutex>

namespace tilescope::cuda {

namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

struct Loaded {
    Driver driver;
    std::string error; // "" = loaded
};

template <typename F>
bool resolve(GetProcAddress getProc, const char* name, F& function, std::string* missing) {
    void* pointer = nullptr;
    CUdriverProcAddressQueryResult status{};
    if (getProc(name, &pointer, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || !pointer) {
        if (missing->empty())
            *missing = name;
        return false;
    }
    function = reinterpret_cast<F>(pointer);
    return true;
}

Loaded loadOnce() {
    Loaded loaded;
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char* why = dlerror();
        loaded.error = std::string("no NVIDIA driver: ") + (why ? why : "libcuda.so.1 not found");
        return loaded;
    }
    auto getProc = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
    if (!getProc) {
        loaded.error = "the NVIDIA driver is too old: it has no cuGetProcAddress_v2 (CUDA 12.5 or newer is needed)";
        return loaded;
    }
    std::string missing;
    bool ok = true;
#define TILESCOPE_CUDA_RESOLVE(name) ok = resolve(getProc, #name, loaded.driver.name, &missing) && ok;
    TILESCOPE_CUDA_DRIVER_FUNCTIONS(TILESCOPE_CUDA_RESOLVE)
#undef TILESCOPE_CUDA_RESOLVE
    if (!ok) {
        int version = 0;
        if (auto getVersion = reinterpret_cast<CUresult (*)(int*)>(dlsym(library, "cuDriverGetVersion")))
            getVersion(&version);
        loaded.error = "the NVIDIA driver (CUDA " + std::to_string(version / 1000) + "." +
                       std::to_string(version % 1000 / 10) + ") lacks " + missing + " as of CUDA " +
                       std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10) +
                       ": a newer driver is needed";
    }
    return loaded;
}

} // namespace

const Driver* Driver::load(std::string* error) {
    static const Loaded loaded = loadOnce();
    if (!loaded.error.empty()) {
        if (error)
            *error = loaded.error;
        return nullptr;
    }
    return &loaded.driver;
}

std::string Driver::describe(CUresult rc) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName)
        cuGetErrorName(rc, &name);
    if (cuGetErrorString)
        cuGetErrorString(rc, &text);
    std::string out = name ? name : "CUresult " + std::to_string(static_cast<int>(rc));
    if (text)
        out += std::string(": ") + text;
    return out;
}

bool isStickyError(CUresult rc) {
    switch (rc) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_CONTEXT_ALREADY_IN_USE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_UNKNOWN:
        return true;
    default:
        return false;
    }
}

} // namespace tilescope::cuda
