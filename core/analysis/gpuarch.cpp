#include "analysis/gpuarch.h"

#include <algorithm>

namespace tilescope {

namespace {

constexpr std::int64_t kKiB = 1024;

ArchLimits make(std::string arch, int major, int minor, std::string examples, int warps, int blocks,
                std::int64_t sharedPerSmKiB, std::int64_t optInKiB, std::int64_t reservedKiB) {
    ArchLimits limits;
    limits.arch = std::move(arch);
    limits.major = major;
    limits.minor = minor;
    limits.examples = std::move(examples);
    limits.maxWarpsPerSm = warps;
    limits.maxBlocksPerSm = blocks;
    limits.sharedPerSm = sharedPerSmKiB * kKiB;
    limits.sharedPerBlockOptIn = optInKiB * kKiB;
    limits.reservedSharedPerBlock = reservedKiB * kKiB;
    return limits;
}

} // namespace

const std::vector<ArchLimits>& knownArchs() {
    // (arch, compute capability, examples, warps/SM, blocks/SM, KB shared/SM, KB opt-in/block, KB reserved/block)
    static const std::vector<ArchLimits> archs = {
        make("sm_75", 7, 5, "T4, RTX 20xx", 32, 16, 64, 64, 0),
        make("sm_80", 8, 0, "A100, A30", 64, 32, 164, 163, 1),
        make("sm_86", 8, 6, "RTX 30xx, A10, A40, RTX A6000", 48, 16, 100, 99, 1),
        make("sm_87", 8, 7, "Jetson AGX Orin", 48, 16, 164, 163, 1),
        make("sm_89", 8, 9, "RTX 40xx, L4, L40, RTX 6000 Ada", 48, 24, 100, 99, 1),
        make("sm_90", 9, 0, "H100, H200, GH200", 64, 32, 228, 227, 1),
        make("sm_100", 10, 0, "B200, GB200", 64, 32, 228, 227, 1),
        make("sm_103", 10, 3, "B300, GB300", 64, 32, 228, 227, 1),
        make("sm_110", 11, 0, "Jetson Thor", 48, 24, 228, 227, 1),
        make("sm_120", 12, 0, "RTX 50xx, RTX PRO 6000 Blackwell", 48, 24, 100, 99, 1),
        make("sm_121", 12, 1, "DGX Spark (GB10)", 48, 24, 100, 99, 1),
    };
    return archs;
}

const ArchLimits* findArch(std::string_view arch) {
    if (arch.substr(0, 3) != "sm_")
        return nullptr;
    std::size_t end = 3;
    while (end < arch.size() && arch[end] >= '0' && arch[end] <= '9')
        ++end;
    const std::string_view suffix = arch.substr(end);
    if (end == 3 || !(suffix.empty() || suffix == "a" || suffix == "f"))
        return nullptr;
    const std::string_view number = arch.substr(0, end);
    const std::vector<ArchLimits>& archs = knownArchs();
    const auto it = std::find_if(archs.begin(), archs.end(), [&](const ArchLimits& a) { return a.arch == number; });
    return it == archs.end() ? nullptr : &*it;
}

} // namespace tilescope
