#include "analysis/occupancy.h"

#include <cuda_occupancy.h>

#include <climits>

namespace tilescope {

KernelResources KernelResources::of(const StaticInfo& info, std::int64_t blockSize, std::int64_t sharedDynamic) {
    KernelResources k;
    k.registers = info.registers;
    k.sharedStatic = info.sharedStatic;
    k.sharedDynamic = sharedDynamic;
    k.barriers = info.barriers;
    k.blockSize = blockSize;
    return k;
}

namespace {

std::string kib(std::int64_t bytes) {
    const std::int64_t whole = bytes / 1024;
    if (bytes % 1024 == 0)
        return std::to_string(whole) + " KB";
    return std::to_string(bytes) + " bytes";
}

void setLimiterBits(Occupancy& occ) {
    auto bind = [&](int blocks, Limiter l) {
        if (blocks == occ.activeBlocks)
            occ.limiters |= 1u << unsigned(l);
    };
    bind(occ.blocksByRegisters, Limiter::Registers);
    bind(occ.blocksBySharedMemory, Limiter::SharedMemory);
    bind(occ.blocksByWarps, Limiter::Warps);
    bind(occ.blocksByBlocks, Limiter::Blocks);
    bind(occ.blocksByBarriers, Limiter::Barriers);
}

} // namespace

std::string_view limiterName(Limiter limiter) {
    switch (limiter) {
    case Limiter::None:
        return "none";
    case Limiter::Registers:
        return "registers";
    case Limiter::SharedMemory:
        return "shared_memory";
    case Limiter::Warps:
        return "warps";
    case Limiter::Blocks:
        return "blocks";
    case Limiter::Barriers:
        return "barriers";
    }
    return "?";
}

Occupancy theoreticalOccupancy(const ArchLimits& arch, const KernelResources& kernel) {
    Occupancy occ;
    occ.maxWarps = arch.maxWarpsPerSm;

    if (kernel.blockSize <= 0 || kernel.registers < 0 || kernel.sharedStatic < 0 || kernel.sharedDynamic < 0) {
        occ.reason = "block size " + std::to_string(kernel.blockSize) + " is not a positive number of threads";
        return occ;
    }
    // Values beyond int would overflow the calculator; no arch launches them anyway.
    if (kernel.blockSize > arch.maxThreadsPerBlock) {
        occ.reason = std::to_string(kernel.blockSize) + " threads per block; " + arch.arch + " allows " +
                     std::to_string(arch.maxThreadsPerBlock);
        occ.limiter = Limiter::Warps;
        occ.limiters = 1u << unsigned(Limiter::Warps);
        return occ;
    }
    const std::int64_t sharedTotal = kernel.sharedStatic + kernel.sharedDynamic;
    if (sharedTotal > arch.sharedPerBlockOptIn) {
        occ.reason =
            kib(sharedTotal) + " of shared memory per block; " + arch.arch + " allows " + kib(arch.sharedPerBlockOptIn);
        occ.limiter = Limiter::SharedMemory;
        occ.limiters = 1u << unsigned(Limiter::SharedMemory);
        return occ;
    }

    cudaOccDeviceProp props;
    props.computeMajor = arch.major;
    props.computeMinor = arch.minor;
    props.maxThreadsPerBlock = arch.maxThreadsPerBlock;
    props.maxThreadsPerMultiprocessor = arch.maxWarpsPerSm * arch.warpSize;
    props.regsPerBlock = arch.registersPerBlock;
    props.regsPerMultiprocessor = arch.registersPerSm;
    props.warpSize = arch.warpSize;
    props.sharedMemPerBlock = static_cast<size_t>(arch.sharedPerBlock);
    props.sharedMemPerMultiprocessor = static_cast<size_t>(arch.sharedPerSm);
    props.numSms = 1; // occupancy is per SM; the count only matters for waves
    props.sharedMemPerBlockOptin = static_cast<size_t>(arch.sharedPerBlockOptIn);
    props.reservedSharedMemPerBlock = static_cast<size_t>(arch.reservedSharedPerBlock);

    cudaOccFuncAttributes attributes;
    attributes.maxThreadsPerBlock = arch.maxThreadsPerBlock;
    attributes.numRegs = kernel.registers;
    attributes.sharedSizeBytes = static_cast<size_t>(kernel.sharedStatic);
    attributes.partitionedGCConfig = PARTITIONED_GC_OFF;
    // The worker raises CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to what a launch needs.
    attributes.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    attributes.maxDynamicSharedSizeBytes = static_cast<size_t>(kernel.sharedDynamic);
    attributes.numBlockBarriers = kernel.barriers;

    cudaOccDeviceState state;
    cudaOccResult result{};
    const cudaOccError status = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &props, &attributes, &state,
                                                                        static_cast<int>(kernel.blockSize),
                                                                        static_cast<size_t>(kernel.sharedDynamic));
    if (status != CUDA_OCC_SUCCESS) {
        occ.reason = std::string("the occupancy calculator rejected the input (") +
                     (status == CUDA_OCC_ERROR_UNKNOWN_DEVICE ? "unknown device" : "invalid input") + ")";
        return occ;
    }

    const int warpsPerBlock = static_cast<int>((kernel.blockSize + arch.warpSize - 1) / arch.warpSize);
    occ.activeBlocks = result.activeBlocksPerMultiprocessor;
    occ.activeWarps = occ.activeBlocks * warpsPerBlock;
    occ.blocksByRegisters = result.blockLimitRegs;
    occ.blocksBySharedMemory = result.blockLimitSharedMem;
    occ.blocksByWarps = result.blockLimitWarps;
    occ.blocksByBlocks = result.blockLimitBlocks;
    occ.blocksByBarriers = result.blockLimitBarriers;
    occ.registersPerBlock = result.allocatedRegistersPerBlock;
    occ.sharedPerBlock = static_cast<std::int64_t>(result.allocatedSharedMemPerBlock);
    setLimiterBits(occ);

    if (occ.activeBlocks == 0) {
        if (occ.limitedBy(Limiter::Registers)) {
            occ.limiter = Limiter::Registers;
            occ.reason = std::to_string(kernel.registers) + " registers x " + std::to_string(kernel.blockSize) +
                         " threads exceed the " + std::to_string(arch.registersPerBlock) + " registers of a block";
        } else if (occ.limitedBy(Limiter::SharedMemory)) {
            occ.limiter = Limiter::SharedMemory;
            occ.reason = kib(sharedTotal) + " of shared memory per block does not fit " + arch.arch;
        } else {
            occ.limiter = occ.limitedBy(Limiter::Warps) ? Limiter::Warps : Limiter::Barriers;
            occ.reason = "a block does not fit an SM of " + arch.arch;
        }
        return occ;
    }

    occ.launchable = true;
    if (occ.activeWarps >= occ.maxWarps && occ.limitedBy(Limiter::Warps)) {
        occ.limiter = Limiter::Warps;
    } else {
        for (Limiter l :
             {Limiter::Registers, Limiter::SharedMemory, Limiter::Blocks, Limiter::Warps, Limiter::Barriers}) {
            if (occ.limitedBy(l)) {
                occ.limiter = l;
                break;
            }
        }
    }
    return occ;
}

} // namespace tilescope
