#include "compile/compileservice.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>

namespace tilescope {

namespace {

CompileResult internalFailure(const char* what) {
    CompileResult result;
    result.status = CompileStatus::CompileError;
    result.message = std::string("internal error while compiling: ") + what;
    result.log = result.message;
    result.nvrtcVersion = nvrtcVersionString();
    result.transient = true;
    return result;
}

} // namespace

CompileService::CompileService(CompileServiceOptions options)
    : CompileService(std::move(options), std::string()) {}

CompileService::CompileService(CompileServiceOptions options, std::string place)
    : m_cache(std::move(options.cache))
    , m_place(std::move(place))
    , m_pool(std::make_unique<ThreadPool>(options.threads)) {}

CompileService::~CompileService() {
    m_pool.reset();
}

CompileService::Stats CompileService::stats() const {
    std::lock_guard lock(m_statsMutex);
    return Stats{m_compiledKeys.size(), m_compileSeconds, m_places};
}

std::vector<std::string> CompileService::compiledKeys(std::uint64_t from) const {
    std::lock_guard lock(m_statsMutex);
    if (from >= m_compiledKeys.size())
        return {};
    return std::vector<std::string>(m_compiledKeys.begin() + static_cast<std::ptrdiff_t>(from), m_compiledKeys.end());
}

void CompileService::noteCompiled(const std::string& key, double seconds, const std::string& place) const {
    std::lock_guard lock(m_statsMutex);
    m_compiledKeys.push_back(key);
    m_compileSeconds += std::max(0.0, seconds);
    const std::string& where = place.empty() ? m_place : place;
    if (!where.empty())
        ++m_places[where];
}

void CompileService::addPlace(const std::string& place) const {
    std::lock_guard lock(m_statsMutex);
    m_places.emplace(place, 0);
}

CompileResult CompileService::compile(const CompileRequest& request) const {
    return compileHere(request);
}

CompileResult CompileService::compileHere(const CompileRequest& request) const {
    // A pool thread must not die of an exception (std::bad_alloc from a huge log, a filesystem
    // error): it becomes a transient failure of this request.
    try {
        const std::string key = compileCacheKey(request);
        // The same binary being compiled now, for another config: wait for it rather than compile
        // it again (configs that differ only in launch-only parameters arrive together).
        std::promise<CompileResult> mine;
        std::shared_future<CompileResult> theirs;
        {
            std::lock_guard lock(m_flightMutex);
            if (const auto it = m_inFlight.find(key); it != m_inFlight.end())
                theirs = it->second;
            else
                m_inFlight.emplace(key, mine.get_future().share());
        }
        if (theirs.valid()) {
            CompileResult shared = theirs.get();
            shared.key = key;
            if (!shared.transient)
                shared.cached = true;
            return shared;
        }
        CompileResult result;
        try {
            result = compileOnce(request, key);
        } catch (const std::exception& error) {
            result = internalFailure(error.what());
        } catch (...) {
            result = internalFailure("unknown exception");
        }
        result.key = key;
        mine.set_value(result);
        std::lock_guard lock(m_flightMutex);
        m_inFlight.erase(key);
        return result;
    } catch (const std::exception& error) {
        return internalFailure(error.what());
    } catch (...) {
        return internalFailure("unknown exception");
    }
}

CompileResult CompileService::compileOnce(const CompileRequest& request, const std::string& key) const {
    if (m_cache)
        if (std::optional<CompileResult> hit = m_cache->load(key))
            return std::move(*hit);
    CompileResult result = compileKernel(request);
    noteCompiled(key, result.seconds);
    if (m_cache)
        m_cache->store(key, result);
    return result;
}

namespace {
CompileResult cancelledResult() {
    CompileResult result;
    result.status = CompileStatus::Cancelled;
    result.message = "cancelled";
    result.nvrtcVersion = nvrtcVersionString();
    result.transient = true;
    return result;
}
} // namespace

std::future<CompileResult> CompileService::submit(CompileRequest request,
                                                  std::shared_ptr<const std::atomic<bool>> cancel) {
    auto task = std::make_shared<std::packaged_task<CompileResult()>>(
        [this, request = std::move(request), cancel = std::move(cancel)] {
            if (cancel && cancel->load(std::memory_order_relaxed))
                return cancelledResult();
            return compileHere(request);
        });
    std::future<CompileResult> future = task->get_future();
    m_pool->post([task] { (*task)(); });
    return future;
}

std::vector<CompileResult> CompileService::compileAll(const std::vector<CompileRequest>& requests,
                                                      const CompileProgress& progress,
                                                      const std::atomic<bool>* cancel) {
    struct Batch {
        std::mutex mutex;
        std::condition_variable changed;
        std::size_t done = 0;
    };
    auto batch = std::make_shared<Batch>();
    std::vector<CompileResult> results(requests.size());

    for (std::size_t i = 0; i < requests.size(); ++i) {
        m_pool->post([this, batch, cancel, &requests, &results, i] {
            CompileResult result =
                cancel && cancel->load(std::memory_order_relaxed) ? cancelledResult() : compileHere(requests[i]);
            // Each job writes its own slot; the mutex orders the write before the caller's read.
            std::lock_guard lock(batch->mutex);
            results[i] = std::move(result);
            ++batch->done;
            batch->changed.notify_all();
        });
    }

    std::size_t reported = static_cast<std::size_t>(-1);
    std::unique_lock lock(batch->mutex);
    for (;;) {
        const std::size_t done = batch->done;
        if (progress && done != reported) {
            reported = done;
            lock.unlock();
            progress(done, requests.size());
            lock.lock();
            continue; // more may have finished while reporting
        }
        if (done == requests.size())
            break;
        batch->changed.wait(lock, [&] { return batch->done != done; });
    }
    return results;
}

} // namespace tilescope
