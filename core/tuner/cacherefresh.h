#pragma once

// A committed cache of tuned configs kept fresh: the machine it is checked for (this machine's
// GPU, asked through a worker; a replay's recorded device; an analysis arch), and `tune
// --only-stale`'s plan: the problem's shapes whose entry is stale or missing there, tuned again,
// and the cache rewritten with their new winners, every other entry as it was.

#include "exchange/cachecheck.h"
#include "tuner/backendspec.h"

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace tilescope {

class TuningProblem;

/// This machine's GPU (device 0) as a cache is checked against: asked through a worker that opens
/// `problem` at its first shape (the engine never opens a CUDA context itself); the worker's notes
/// go to `note`. Throws InputError without a usable GPU.
CacheTarget thisMachine(const TuningProblem& problem, const std::function<void(const std::string&)>& note = {});

/// Tuned configs to check: a JSON cache (export --format json), or a C++ header or Triton export by
/// their metadata line. Throws InputError.
std::vector<BestConfig> readBestConfigs(const std::string& path);

/// The machine sessions on `spec` tune for: this machine's GPU (thisMachine) for cuda, the
/// recording's device for a replay, the arch alone for analysis.
CacheTarget cacheTargetOf(const BackendSpec& spec, const TuningProblem& problem,
                          const std::function<void(const std::string&)>& note = {});

/// What refreshing a cache for one problem on one machine takes.
struct CacheRefresh {
    CacheTarget target;
    std::vector<BestConfig> cached;     ///< the cache as read
    std::set<std::size_t> staleEntries; ///< entries of the problem's kernel on the target: replaced
    std::vector<std::size_t> shapes;    ///< the problem's shapes to tune again, in order; empty: nothing is stale
};

/// Reads the JSON cache at `path` and finds what is stale or missing in it for `problem` on
/// `target` (entries of other machines stay theirs). Throws InputError (location `field`) for a
/// file that is not a JSON cache: a C++ header or Triton export is checked, not rewritten.
CacheRefresh planCacheRefresh(const std::string& path, const TuningProblem& problem, const CacheTarget& target,
                              const std::string& field = "--only-stale");

/// The cache rewritten: its entries that were not stale as they were, then the winners of `tuned`.
std::vector<BestConfig> refreshedCache(const CacheRefresh& plan, const std::vector<SessionData>& tuned);

} // namespace tilescope
