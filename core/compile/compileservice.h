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
#include <string>
#include <vector>

namespace tilescope {

struct CompileServiceOptions {
    unsigned threads = 0;                ///< 0 = one per hardware thread
    std::shared_ptr<CompileCache> cache; ///< null = no cache
};

/// Called on the thread that runs compileAll, as results come in: (done, total).
using CompileProgress = std::function<void(std::size_t done, std::size_t total)>;

/// The compile service. A subclass may hand compiles elsewhere (the ranks of an MPI job,
/// measure/mpi): it overrides the four virtual functions and reports each compile made elsewhere
/// through noteCompiled(), so that stats() and compiledKeys() count every NVRTC compile it caused.
class CompileService {
public:
    explicit CompileService(CompileServiceOptions options = {});
    /// Finishes the compiles already submitted.
    virtual ~CompileService();
    CompileService(const CompileService&) = delete;
    CompileService& operator=(const CompileService&) = delete;

    /// Threads compiling for this service: its pool's, or every pool it hands compiles to.
    virtual unsigned threadCount() const { return m_pool->size(); }
    /// NVRTC compiles run so far (cache hits and shared in-flight compiles not counted) and their time.
    struct Stats {
        std::uint64_t compiles = 0;
        double seconds = 0;
        /// The compiles by where they ran ("rank 1": 12), for a service that names the places its
        /// compiles run in (a subclass's); empty for one that compiles everything here.
        std::map<std::string, std::uint64_t> places;
    };
    Stats stats() const;
    /// The keys (compileCacheKey) of the NVRTC compiles from the `from`-th on, in the order they
    /// finished: stats().compiles - from of them. A key twice is one binary compiled twice (no
    /// cache, and asked for again after its compile finished).
    std::vector<std::string> compiledKeys(std::uint64_t from = 0) const;
    CompileCache* cache() const { return m_cache.get(); }

    /// On the calling thread: the cached result, or NVRTC's (then stored). Never throws for
    /// anything the request can cause. Each distinct binary (compileCacheKey: the prepared source,
    /// the defines that reach it, the options, the arch) is compiled once: a request whose key is
    /// being compiled by another thread waits for that compile and gets its result, marked cached.
    virtual CompileResult compile(const CompileRequest& request) const;
    /// Queues `request` on the pool. Once `cancel` is set, a request not yet started comes back
    /// Cancelled (shared, so that the flag outlives a caller that gives up on its futures).
    virtual std::future<CompileResult> submit(CompileRequest request,
                                              std::shared_ptr<const std::atomic<bool>> cancel = {});
    /// Compiles every request on the pool and returns the results in request order. Once
    /// `cancel` is set, requests not yet started come back Cancelled.
    virtual std::vector<CompileResult> compileAll(const std::vector<CompileRequest>& requests,
                                                  const CompileProgress& progress = {},
                                                  const std::atomic<bool>* cancel = nullptr);

protected:
    /// A service whose own compiles (on its pool) Stats::places counts under `place` ("rank 0").
    CompileService(CompileServiceOptions options, std::string place);
    /// compile() on this machine's pool thread or caller, whatever a subclass makes of compile().
    CompileResult compileHere(const CompileRequest& request) const;
    /// Runs `job` on this service's pool.
    void post(std::function<void()> job) { m_pool->post(std::move(job)); }
    /// Counts an NVRTC compile of `key` that took `seconds`, run at `place` ("": this service's own).
    void noteCompiled(const std::string& key, double seconds, const std::string& place = {}) const;
    /// Lists `place` in Stats::places (with no compiles yet, when it has none).
    void addPlace(const std::string& place) const;

private:
    CompileResult compileOnce(const CompileRequest& request, const std::string& key) const;

    std::shared_ptr<CompileCache> m_cache;
    std::string m_place;
    mutable std::mutex m_flightMutex;
    mutable std::map<std::string, std::shared_future<CompileResult>> m_inFlight; // by key
    mutable std::mutex m_statsMutex;
    mutable std::vector<std::string> m_compiledKeys; // one per NVRTC compile, in order
    mutable double m_compileSeconds = 0;
    mutable std::map<std::string, std::uint64_t> m_places;
    std::unique_ptr<ThreadPool> m_pool; // last: its threads join before the cache goes
};

} // namespace tilescope
