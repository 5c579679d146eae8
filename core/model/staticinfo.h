#pragma once

// What compiling a kernel tells about it, as every layer carries it: the compiler produces it,
// the worker reports the loaded function's attributes in it, the store keeps it.

#include <cstdint>

namespace tilescope {

/// What ptxas reports about one entry function (its -v log is the only place spill bytes exist).
struct StaticInfo {
    int registers = -1;             ///< registers per thread; -1 when the report has no "Used N registers" line
    int barriers = 0;               ///< named barriers used
    std::int64_t stackFrame = 0;    ///< bytes of local-memory stack per thread (spills and local arrays)
    std::int64_t spillStores = 0;   ///< bytes per thread
    std::int64_t spillLoads = 0;    ///< bytes per thread
    std::int64_t sharedStatic = 0;  ///< bytes of static __shared__ memory per block
    std::int64_t constantBytes = 0; ///< bytes of cmem[0] (parameters, driver constants); ptxas omits it for sm_90

    bool spills() const { return spillStores > 0 || spillLoads > 0; }
    bool operator==(const StaticInfo&) const = default;
};

} // namespace tilescope
