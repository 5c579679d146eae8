#pragma once

// Whether a committed cache of tuned configs (Tilescope's JSON cache) still holds: per entry, the
// reasons it is stale on a given machine and for the problems as they are now (another GPU or
// arch, another driver major version, a changed kernel specification or source, a shape the
// problem no longer has), and the problem shapes no entry covers.

#include "exchange/bestconfigs.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

class TuningProblem;

/// The machine a cache is checked for; an empty field is not checked.
struct CacheTarget {
    std::string deviceName; ///< "NVIDIA H200"
    std::string arch;       ///< "sm_90"
    int driverVersion = 0;  ///< 13000
};

struct StaleEntry {
    static constexpr std::size_t kMissing = static_cast<std::size_t>(-1);
    std::size_t entry = kMissing; ///< index in the cache, or kMissing for a shape no entry covers
    std::string kernel;
    std::string shape;                                      ///< "M=1 N=4096"
    std::vector<std::pair<std::string, std::int64_t>> dims; ///< the shape's dims
    std::string device;                                     ///< the entry's ("" for a missing one)
    std::vector<std::string> reasons;
};

struct CacheCheck {
    std::vector<StaleEntry> stale; ///< stale entries in cache order, then the missing shapes
    std::size_t fresh = 0;         ///< entries with nothing against them
    /// What could not be checked: entries of kernels without a problem given, entries without
    /// hashes (written by an older Tilescope).
    std::vector<std::string> notes;
};

/// Whether two shapes have the same dims, whatever their order (a JSON cache written by another
/// program may list them in another).
bool sameShape(std::vector<std::pair<std::string, std::int64_t>> a,
               std::vector<std::pair<std::string, std::int64_t>> b);

/// Checks `cache` against `problems` (matched to entries by kernel name; at most one per kernel)
/// and `target`.
CacheCheck checkCache(const std::vector<BestConfig>& cache, const std::vector<const TuningProblem*>& problems,
                      const CacheTarget& target);

} // namespace tilescope
