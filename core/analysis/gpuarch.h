#pragma once

// Per-architecture limits that theoretical occupancy needs, for GPUs one may not own. From the
// CUDA C++ Programming Guide's table of technical specifications per compute capability (CUDA
// 13.0); cuda_occupancy.h fixes the allocation granularities and blocks per SM itself (the table's maxBlocksPerSm
// matches it, which a test checks).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

struct ArchLimits {
    std::string arch; ///< "sm_90"
    int major = 0;    ///< compute capability
    int minor = 0;
    std::string examples; ///< "H100, H200"
    int warpSize = 32;
    int maxThreadsPerBlock = 1024;
    int maxWarpsPerSm = 0;
    int maxBlocksPerSm = 0;
    int registersPerSm = 64 * 1024;
    int registersPerBlock = 64 * 1024;
    int maxRegistersPerThread = 255;
    std::int64_t sharedPerSm = 0;            ///< bytes of shared memory an SM can give blocks (the largest carveout)
    std::int64_t sharedPerBlock = 48 * 1024; ///< without opting in
    std::int64_t sharedPerBlockOptIn = 0;    ///< the most a block may use after cuFuncSetAttribute
    std::int64_t reservedSharedPerBlock = 0; ///< what the driver keeps per block (1 KB from sm_80 on)
};

/// Every arch with a table entry, ascending: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100,
/// sm_103, sm_110, sm_120, sm_121. (NVRTC 13.0 also compiles for sm_88, whose limits NVIDIA does
/// not document; it has no entry.)
const std::vector<ArchLimits>& knownArchs();

/// The entry of `arch` ("sm_90"; arch-specific variants such as "sm_90a" and "sm_100f" share
/// their number's entry), or nullptr.
const ArchLimits* findArch(std::string_view arch);

} // namespace tilescope
