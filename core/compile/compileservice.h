#pragma once

// The compile service tuning and analysis use: a pool of CPU threads running NVRTC, in front
// of an optional on-disk cache. Results depend only on the requests: a batch returns them in
// request order whatever order the threads finish in.

#include "compile/compilecache.h"
#include "compile/compiler.h"
#include "compile/threadpool.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
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
    /// NVRTC compiles run so far (cache hits and shared in-flight compiles not counted) and their time.
    struct Stats {
        std::uint64_t compiles = 0;
        double seconds = 0;
    };
    Stats stats() const {
        return {m_compiles.load(), static_cast<double>(m_compileNanoseconds.load()) * 1e-9};
    }
    CompileCache* cache() const { return m_cache.get(); }

    /// On the calling thread: the cached result, or NVRTC's (then stored). Never throws for
    /// anything the request can cause. Each distinct binary (compileCacheKey: the prepared source,
    /// the defines that reach it, the options, the arch) is compiled once: a request whose key is
    /// being compiled by another thread waits for that compile and gets its result, marked cached.
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
    CompileResult compileOnce(const CompileRequest& request, const std::string& key) const;

    std::shared_ptr<CompileCache> m_cache;
    mutable std::mutex m_flightMutex;
    mutable std::map<std::string, std::shared_future<CompileResult>> m_inFlight; // by key
    mutable std::atomic<std::uint64_t> m_compiles{0};
    mutable std::atomic<std::uint64_t> m_compileNanoseconds{0};
    std::unique_ptr<ThreadPool> m_pool; // last: its threads join before the cache goes
};

} // namespace tilescope
