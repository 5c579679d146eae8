#pragma once

// The compile service tuning and analysis use: a pool of CPU threads running NVRTC, in front
// of an optional on-disk cache. Results depend only on the requests: a batch returns them in
// request order whatever order the threads finish in.

#include "compile/compilecache.h"
#include "compile/compiler.h"
#include "compile/threadpool.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <vector>

namespace tilescope {

struct CompileServiceOptions {
    unsigned threads = 0;                ///< 0 = one per hardware thread
    std::shared_ptr<CompileCache> cache; ///< null = no cache
};

/// Called on the thread that runs compileAll, as results come in: (done, total).
using CompileProgress = std::function<void(std::size_t done, std::size_t total)>;

class CompileService {
public:
    explicit CompileService(CompileServiceOptions options = {});
    /// Finishes the compiles already submitted.
    ~CompileService();

    unsigned threadCount() const { return m_pool->size(); }
    CompileCache* cache() const { return m_cache.get(); }

    /// On the calling thread: the cached result, or NVRTC's (then stored). Never throws for
    /// anything the request can cause.
    CompileResult compile(const CompileRequest& request) const;
    /// Queues `request` on the pool. Once `cancel` is set, a request not yet started comes back
    /// Cancelled (shared, so that the flag outlives a caller that gives up on its futures).
    std::future<CompileResult> submit(CompileRequest request, std::shared_ptr<const std::atomic<bool>> cancel = {});
    /// Compiles every request on the pool and returns the results in request order. Once
    /// `cancel` is set, requests not yet started come back Cancelled.
    std::vector<CompileResult> compileAll(const std::vector<CompileRequest>& requests,
                                          const CompileProgress& progress = {},
                                          const std::atomic<bool>* cancel = nullptr);

private:
    std::shared_ptr<CompileCache> m_cache;
    std::unique_ptr<ThreadPool> m_pool; // last: its threads join before the cache goes
};

} // namespace tilescope
