#pragma once

// Theoretical occupancy of a kernel on an arch, computed offline by CUDA's header-only
// calculator (cuda_occupancy.h, the same arithmetic as cuOccupancyMaxActiveBlocksPerMultiprocessor)
// from the arch's limits and what ptxas reported, and what limits it.

#include "analysis/gpuarch.h"
#include "model/staticinfo.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tilescope {

/// What bounds the number of resident blocks per SM.
enum class Limiter : std::uint8_t {
    None,         ///< not computed (the kernel did not compile, or its block size is unknown)
    Registers,    ///< the register file
    SharedMemory, ///< shared memory per SM (or per block, when a block cannot launch)
    Warps,        ///< resident warps per SM (or threads per block, when a block cannot launch)
    Blocks,       ///< resident blocks per SM
    Barriers,     ///< named barriers per SM (sm_90 and later)
};

/// "none", "registers", "shared_memory", "warps", "blocks", "barriers": stable names for tables,
/// JSON and CSV. (Not toString: Qt Test finds toString by ADL for QCOMPARE.)
std::string_view limiterName(Limiter limiter);

/// What one block of a kernel launch needs.
struct KernelResources {
    int registers = 0;              ///< per thread
    std::int64_t sharedStatic = 0;  ///< bytes per block, from ptxas
    std::int64_t sharedDynamic = 0; ///< bytes per block, from the launch
    int barriers = 0;               ///< named barriers, from ptxas
    std::int64_t blockSize = 0;     ///< threads per block

    /// A kernel as ptxas reported it (`info`) launched with `blockSize` threads and
    /// `sharedDynamic` bytes of dynamic shared memory per block.
    static KernelResources of(const StaticInfo& info, std::int64_t blockSize, std::int64_t sharedDynamic);
};

struct Occupancy {
    bool launchable = false; ///< a block fits on an SM at all
    std::string reason;      ///< why not, for people: "2048 threads per block; sm_90 allows 1024"
    int activeBlocks = 0;    ///< resident blocks per SM
    int activeWarps = 0;     ///< resident warps per SM
    int maxWarps = 0;        ///< the arch's resident warps per SM
    /// Resident blocks each resource alone allows (INT_MAX: no bound).
    int blocksByRegisters = 0;
    int blocksBySharedMemory = 0;
    int blocksByWarps = 0;
    int blocksByBlocks = 0;
    int blocksByBarriers = 0;
    unsigned limiters = 0;           ///< bit (1 << Limiter) for every resource that binds
    Limiter limiter = Limiter::None; ///< the one to report (see theoreticalOccupancy)
    int registersPerBlock = 0;       ///< as allocated (rounded to the allocation granularity)
    std::int64_t sharedPerBlock = 0; ///< as allocated: static + dynamic + reserved, rounded

    double fraction() const { return maxWarps > 0 ? double(activeWarps) / maxWarps : 0.0; }
    double percent() const { return 100.0 * fraction(); }
    bool limitedBy(Limiter l) const { return (limiters & (1u << unsigned(l))) != 0; }
};

/// Theoretical occupancy of a kernel needing `kernel` per block on `arch`. A launch with more than
/// 48 KB of shared memory per block is taken to opt in (as the worker does) up to the arch's
/// opt-in limit. When several resources bind, `limiter` is "warps" at full occupancy (nothing to
/// gain) and else the first of registers, shared memory, blocks, warps, barriers that binds.
Occupancy theoreticalOccupancy(const ArchLimits& arch, const KernelResources& kernel);

} // namespace tilescope
