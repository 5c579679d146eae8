#pragma once

// For the GPU suites (tests/gpu): why a suite cannot run here, in one place.

#include "measure/cuda/device/cudadriver.h"

#include <QString>

#include <string>

/// "" when the NVIDIA driver loads and has a device; otherwise why not (for QSKIP).
inline QString whyNoCudaDevice() {
    std::string error;
    const tilescope::cuda::Driver* cu = tilescope::cuda::Driver::load(&error);
    if (!cu)
        return QString::fromStdString(error);
    int count = 0;
    if (cu->cuInit(0) != CUDA_SUCCESS || cu->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
        return QStringLiteral("no CUDA device");
    return {};
}
