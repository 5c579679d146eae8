#pragma once

// The CUDA driver API, loaded at run time: dlopen("libcuda.so.1") and cuGetProcAddress, never
// -lcuda, so that every Tilescope program starts on a machine without an NVIDIA driver. Only the
// worker process (and GPU tests) use this; it lives in the tilescope-cuda library.

#include <cuda.h>

#include <string>

namespace tilescope::cuda {

// The driver functions Tilescope calls. Names are cuda.h's (its macros map some to _v2
// variants; cuGetProcAddress resolves the base name at the header's CUDA_VERSION to the same).
#define TILESCOPE_CUDA_DRIVER_FUNCTIONS(X)                                                                             \
    X(cuInit)                                                                                                          \
    X(cuDriverGetVersion)                                                                                              \
    X(cuGetErrorName)                                                                                                  \
    X(cuGetErrorString)                                                                                                \
    X(cuDeviceGetCount)                                                                                                \
    X(cuDeviceGet)                                                                                                     \
    X(cuDeviceGetName)                                                                                                 \
    X(cuDeviceGetUuid)                                                                                                 \
    X(cuDeviceGetAttribute)                                                                                            \
    X(cuDeviceTotalMem)                                                                                                \
    X(cuDevicePrimaryCtxRetain)                                                                                        \
    X(cuDevicePrimaryCtxRelease)                                                                                       \
    X(cuDevicePrimaryCtxReset)                                                                                         \
    X(cuCtxSetCurrent)                                                                                                 \
    X(cuCtxGetCurrent)                                                                                                 \
    X(cuCtxSynchronize)                                                                                                \
    X(cuCtxSetLimit)                                                                                                   \
    X(cuModuleLoadData)                                                                                                \
    X(cuModuleUnload)                                                                                                  \
    X(cuModuleGetFunction)                                                                                             \
    X(cuModuleGetGlobal)                                                                                               \
    X(cuFuncGetAttribute)                                                                                              \
    X(cuFuncSetAttribute)                                                                                              \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                                     \
    X(cuLaunchKernel)                                                                                                  \
    X(cuLaunchKernelEx)                                                                                                \
    X(cuTensorMapEncodeTiled)                                                                                          \
    X(cuMemAlloc)                                                                                                      \
    X(cuMemFree)                                                                                                       \
    X(cuMemGetInfo)                                                                                                    \
    X(cuMemGetAllocationGranularity)                                                                                   \
    X(cuMemAddressReserve)                                                                                             \
    X(cuMemAddressFree)                                                                                                \
    X(cuMemCreate)                                                                                                     \
    X(cuMemRelease)                                                                                                    \
    X(cuMemMap)                                                                                                        \
    X(cuMemUnmap)                                                                                                      \
    X(cuMemSetAccess)                                                                                                  \
    X(cuMemcpyHtoD)                                                                                                    \
    X(cuMemcpyDtoH)                                                                                                    \
    X(cuMemHostRegister)                                                                                               \
    X(cuMemHostUnregister)                                                                                             \
    X(cuMemHostGetDevicePointer)                                                                                       \
    X(cuMemcpyDtoD)                                                                                                    \
    X(cuMemcpyDtoDAsync)                                                                                               \
    X(cuMemsetD8)                                                                                                      \
    X(cuMemsetD8Async)                                                                                                 \
    X(cuMemsetD32Async)                                                                                                \
    X(cuStreamCreate)                                                                                                  \
    X(cuStreamDestroy)                                                                                                 \
    X(cuStreamSynchronize)                                                                                             \
    X(cuStreamWaitValue32)                                                                                             \
    X(cuEventCreate)                                                                                                   \
    X(cuEventDestroy)                                                                                                  \
    X(cuEventRecord)                                                                                                   \
    X(cuEventSynchronize)                                                                                              \
    X(cuEventQuery)                                                                                                    \
    X(cuEventElapsedTime)

/// The loaded driver. Every pointer is set once load() succeeded.
struct Driver {
#define TILESCOPE_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
    TILESCOPE_CUDA_DRIVER_FUNCTIONS(TILESCOPE_CUDA_DECLARE)
#undef TILESCOPE_CUDA_DECLARE

    /// Loads libcuda.so.1 (once per process; later calls return the same answer) and resolves
    /// every function. On failure returns null and says why in `error`: no driver installed,
    /// a driver older than this build's CUDA version, a function missing.
    static const Driver* load(std::string* error);

    /// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
    std::string describe(CUresult rc) const;
};

/// True for errors after which the context is unusable (the "sticky" errors: illegal address,
/// trap, misaligned address, launch failure, ...). The process must exit to recover.
bool isStickyError(CUresult rc);

} // namespace tilescope::cuda
