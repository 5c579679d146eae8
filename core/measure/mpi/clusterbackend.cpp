#include "measure/mpi/clusterbackend.h"

#include "base/error.h"
#include "measure/clusterprotocol.h"
#include "measure/cuda/workerprotocol.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <future>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

namespace tilescope {

namespace {

using json = nlohmann::json;
using cluster::SlotJob;
using Clock = std::chrono::steady_clock;

constexpr int kTag = 7;
/// How often a rank says it is alive.
constexpr auto kHeartbeat = std::chrono::seconds(1);
/// Rank 0's own heartbeats, sent by a thread of their own (MPI_THREAD_MULTIPLE).
constexpr int kBeatTag = 8;

double secondsSince(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

worker::Frame frameOf(const json& header, std::vector<char> blob = {}) {
    return worker::Frame{header.dump(), std::move(blob)};
}

json headerOf(const worker::Frame& frame) {
    json j = json::parse(frame.header, nullptr, false);
    return j.is_object() ? j : json::object();
}

/// Sends without blocking (a rank that died never receives: a blocking send of a large message
/// would wait for ever) and keeps each buffer until MPI is done with it.
class Outbox {
public:
    void send(int rank, const worker::Frame& frame) {
        m_pending.push_back(Pending{rank, MPI_REQUEST_NULL, cluster::pack(frame)});
        Pending& p = m_pending.back();
        MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, rank, kTag, MPI_COMM_WORLD, &p.request);
        reap();
    }
    /// Forgets what is finished.
    void reap() {
        for (auto it = m_pending.begin(); it != m_pending.end();) {
            int done = 0;
            MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
            it = done ? m_pending.erase(it) : std::next(it);
        }
    }
    /// Gives up on sends to `rank` (it is lost): MPI finishes or drops them on its own.
    void abandon(int rank) {
        for (auto it = m_pending.begin(); it != m_pending.end();) {
            if (it->rank == rank) {
                MPI_Request_free(&it->request);
                m_abandoned.splice(m_abandoned.end(), m_pending, it++);
            } else {
                ++it;
            }
        }
    }
    /// Waits up to `seconds` for every send to finish.
    void drain(double seconds) {
        const auto start = Clock::now();
        while (!m_pending.empty() && secondsSince(start) < seconds) {
            reap();
            if (!m_pending.empty())
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }

private:
    struct Pending {
        int rank;
        MPI_Request request;
        std::vector<char> bytes;
    };
    std::list<Pending> m_pending;
    std::list<Pending> m_abandoned; // buffers MPI may still read
};

/// The next message from any rank, when one has arrived.
bool receive(int& source, worker::Frame& frame) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &flag, &status);
    if (!flag)
        return false;
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::vector<char> bytes(std::size_t(std::max(0, count)));
    MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    source = status.MPI_SOURCE;
    frame = cluster::unpack(bytes);
    return true;
}

// ---- Slots: one backend each, measuring one config at a time on a thread of its own ----

struct Finished {
    std::uint64_t id = 0;
    Measurement measurement;
};

/// Where slots leave their results, for the thread that talks MPI.
class Mailbox {
public:
    void put(Finished f) {
        {
            std::lock_guard lock(m_mutex);
            m_items.push_back(std::move(f));
        }
        m_ready.notify_all();
    }
    std::deque<Finished> takeAll() {
        std::lock_guard lock(m_mutex);
        return std::exchange(m_items, {});
    }
    /// Waits until something is there, or `ms` passed.
    void wait(int ms) {
        std::unique_lock lock(m_mutex);
        m_ready.wait_for(lock, std::chrono::milliseconds(ms), [&] { return !m_items.empty(); });
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<Finished> m_items;
};

class SlotRunner {
public:
    SlotRunner(std::unique_ptr<Backend> backend, Mailbox& mailbox, const std::atomic<bool>& cancel)
        : m_backend(std::move(backend))
        , m_mailbox(mailbox)
        , m_cancel(cancel)
        , m_thread([this] { loop(); }) {}
    ~SlotRunner() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        m_thread.join();
        m_backend->close();
    }
    SlotRunner(const SlotRunner&) = delete;
    SlotRunner& operator=(const SlotRunner&) = delete;

    /// Used by the MPI thread only while the slot is idle.
    Backend& backend() { return *m_backend; }

    /// Queues a config; the slot measures its configs one at a time, in order.
    void start(SlotJob job) {
        {
            std::lock_guard lock(m_mutex);
            m_jobs.push_back(std::move(job));
        }
        m_wake.notify_all();
    }

private:
    void loop() {
        for (;;) {
            SlotJob job;
            {
                std::unique_lock lock(m_mutex);
                m_wake.wait(lock, [&] { return m_stop || !m_jobs.empty(); });
                if (m_stop)
                    return;
                job = std::move(m_jobs.front());
                m_jobs.pop_front();
            }
            MeasureControl control;
            control.perConfigSeconds = job.perConfigSeconds;
            control.deadline = job.deadline;
            control.cancel = &m_cancel;
            control.slowerThanMs = job.slowerThanMs;
            control.profileUnderMs = job.profileUnderMs;
            control.keepSamples = job.keepSamples;
            control.samplesPerConfig = job.samplesPerConfig;
            control.countersOnly = job.countersOnly;
            std::optional<Measurement> result;
            try {
                m_backend->measure(std::span<const MeasureItem>(&job.item, 1), control,
                                   [&](std::size_t, Measurement m) { result = std::move(m); });
            } catch (const std::exception& e) {
                result = Measurement{};
                result->status = ResultStatus::Crashed;
                result->message = std::string("the backend failed: ") + e.what();
            }
            if (!result) {
                result = Measurement{};
                result->status = ResultStatus::Skipped;
                result->message = "the backend returned no result";
            }
            m_mailbox.put(Finished{job.id, std::move(*result)});
        }
    }

    std::unique_ptr<Backend> m_backend;
    Mailbox& m_mailbox;
    const std::atomic<bool>& m_cancel;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<SlotJob> m_jobs; // the first is next; a rank gets its next config while one runs
    bool m_stop = false;
    std::thread m_thread; // last: starts once the rest is built
};

/// One slot's open: its info, or why it cannot measure.
struct SlotOpen {
    std::optional<BackendInfo> info;
    std::string error;
};

/// Opens every slot at once (each starts its worker), and waits, calling `idle` every few ms.
std::vector<SlotOpen> openSlots(std::vector<std::unique_ptr<SlotRunner>>& slots, const TuningProblem& problem,
                                std::size_t shape, const ConfigSpace& space, const std::function<void()>& idle) {
    std::vector<std::future<SlotOpen>> pending;
    for (auto& slot : slots)
        pending.push_back(std::async(std::launch::async, [&problem, shape, &space, b = &slot->backend()] {
            SlotOpen o;
            try {
                o.info = b->open(problem, shape, space);
            } catch (const std::exception& e) {
                o.error = e.what();
            }
            return o;
        }));
    std::vector<SlotOpen> opened;
    for (auto& f : pending) {
        while (f.wait_for(std::chrono::milliseconds(5)) != std::future_status::ready)
            idle();
        opened.push_back(f.get());
    }
    return opened;
}

} // namespace

// ---- MpiJob ----

MpiJob::MpiJob(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        int provided = 0;
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
        m_threadsAllowed = provided >= MPI_THREAD_SERIALIZED;
    } else {
        int provided = 0;
        MPI_Query_thread(&provided);
        m_threadsAllowed = provided >= MPI_THREAD_SERIALIZED;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_size);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m_rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &m_localRank);
    MPI_Comm_size(local, &m_localSize);
    int lowest = m_rank;
    MPI_Allreduce(&m_rank, &lowest, 1, MPI_INT, MPI_MIN, local);
    m_withRank0 = lowest == 0;
    MPI_Comm_free(&local);
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    MPI_Get_processor_name(name, &length);
    m_host.assign(name, std::size_t(std::max(0, length)));
}

MpiJob::~MpiJob() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && m_finalize)
        MPI_Finalize();
}

bool MpiJob::survivesLostRanks() const {
    const char* recovery = std::getenv("OMPI_MCA_orte_enable_recovery");
    return recovery && (std::string(recovery) == "1" || std::string(recovery) == "true");
}

std::vector<int> localGpus(const std::vector<int>& devices, int localRank, int localSize) {
    if (localSize <= 1)
        return devices;
    std::vector<int> mine;
    for (std::size_t i = std::size_t(std::max(0, localRank)); i < devices.size(); i += std::size_t(localSize))
        mine.push_back(devices[i]);
    return mine;
}

// ---- Rank 0 ----

namespace {

CompileResult compileNotRun(std::string why) {
    CompileResult result;
    result.status = CompileStatus::Cancelled;
    result.message = std::move(why);
    result.nvrtcVersion = nvrtcVersionString();
    result.transient = true;
    return result;
}

} // namespace

struct ClusterBackend::Impl {
    MpiJob& job;
    SlotFactory makeSlots;
    ClusterOptions options;
    // Results of every slot: rank 0's slots put theirs, the MPI thread those of the other ranks.
    Mailbox mailbox;
    std::atomic<bool> localCancel{false};
    std::vector<std::unique_ptr<SlotRunner>> local;

    /// A slot of the job that can measure: local (rank 0) or another rank's. The session thread's.
    struct Slot {
        int rank = 0;
        int index = 0;    ///< within its rank
        int inFlight = 0; ///< configs handed to it and not yet back
        /// How many it may hold: another rank's slot gets its next config while one runs, so
        /// that it never waits for the round trip to rank 0.
        int depth() const { return rank == 0 ? 1 : 2; }
    };
    std::vector<Slot> slots; // after open; its order is the provenance's "devices"
    std::uint64_t nextId = 1;
    bool quitSent = false;
    bool madeSlots = false;

    // ---- Shared with the MPI thread: under `mutex` ----
    std::mutex mutex;
    std::condition_variable changed; // the MPI thread went round: a rank may have opened, or be lost
    std::condition_variable wake;    // something to send, or a compile to hand out
    struct Rank {
        bool alive = true;
        Clock::time_point lastHeard = Clock::now();
        std::string host;
        bool opening = false;
        std::optional<std::vector<SlotOpen>> opened; // the reply to the latest open
        unsigned compileThreads = 0;                 // as the reply says
        int protocol = 0;                            // as the reply says (0: before version 2)
        int holding = 0;                             // configs handed to it and not yet back
    };
    std::map<int, Rank> ranks; // every rank but 0
    std::deque<std::pair<int, worker::Frame>> outgoing;
    std::set<std::string> said;
    bool stopping = false;

    // Compiles: waiting, or in the hands of a compiler.
    struct CompileTask {
        CompileRequest request;
        std::string key;
        std::shared_ptr<const std::atomic<bool>> cancel;
        std::vector<std::promise<CompileResult>> waiters; // the first asked; the rest asked for its key meanwhile
        int rank = -1;                                    // compiling it; -1: waiting
    };
    std::map<std::uint64_t, CompileTask> compileTasks;
    std::deque<std::uint64_t> compileQueue;
    std::map<std::string, std::uint64_t> compileByKey; // tasks by key, while waiting or compiling
    std::uint64_t nextCompile = 1;
    /// A rank that compiles: its threads, the compiles in its hands, whether it measures now.
    /// Rank 0 is always one (its own pool), in use when it measures or when no other rank is left.
    struct Compiler {
        unsigned threads = 1;
        unsigned busy = 0;
        bool active = false;
    };
    std::map<int, Compiler> compilers;

    class Spread;
    std::unique_ptr<Spread> compiles; // after the state its pool's jobs use
    std::thread thread;               // last: starts once the rest is built

    Impl(MpiJob& j, SlotFactory slotFactory, ClusterOptions o)
        : job(j)
        , makeSlots(std::move(slotFactory))
        , options(std::move(o)) {}
    ~Impl();

    // Under `mutex`, from here on.

    void note(const std::string& text) {
        if (options.note && said.insert(text).second)
            options.note(text);
    }

    std::string rankName(int rank) const {
        const auto it = ranks.find(rank);
        const std::string host = rank == 0 ? job.host() : (it != ranks.end() ? it->second.host : std::string());
        return "rank " + std::to_string(rank) + (host.empty() ? "" : " (" + host + ")");
    }

    void send(int rank, worker::Frame frame) {
        outgoing.emplace_back(rank, std::move(frame));
        wake.notify_all();
    }
    void send(int rank, const json& header) { send(rank, frameOf(header)); }

    bool rankAlive(int rank) const { return rank == 0 || ranks.at(rank).alive; }

    /// The compilers that take compiles now: the active ones alive, else rank 0 alone.
    std::vector<int> compilersInUse() const {
        std::vector<int> use;
        for (const auto& [rank, c] : compilers)
            if (c.active && rankAlive(rank))
                use.push_back(rank);
        if (use.empty() && compilers.count(0))
            use.push_back(0);
        return use;
    }

    void communicate();
    void handle(int source, const worker::Frame& frame);
    void lose(int rank, Outbox& outbox);
    void handOutCompiles(Outbox& outbox);
    void finishCompile(std::uint64_t id, int rank, CompileResult result, bool fresh);
};

/// Rank 0's compile service: each compile goes to the compiler in use with the most idle threads
/// (the MPI thread hands them out, so that a rank holds at most its threads and two more), the
/// whole result comes back. Requests for a key already waiting or compiling wait for that one.
class ClusterBackend::Impl::Spread final : public CompileService {
public:
    Spread(Impl& cluster, CompileServiceOptions own)
        : CompileService(std::move(own), "rank 0")
        , m_cluster(cluster) {}
    ~Spread() override = default;

    unsigned threadCount() const override {
        std::lock_guard lock(m_cluster.mutex);
        unsigned threads = 0;
        for (int rank : m_cluster.compilersInUse())
            threads += m_cluster.compilers.at(rank).threads;
        return std::max(1u, threads);
    }
    CompileResult compile(const CompileRequest& request) const override { return enqueue(request, {}).get(); }
    std::future<CompileResult> submit(CompileRequest request,
                                      std::shared_ptr<const std::atomic<bool>> cancel) override {
        return enqueue(request, std::move(cancel));
    }
    std::vector<CompileResult> compileAll(const std::vector<CompileRequest>& requests, const CompileProgress& progress,
                                          const std::atomic<bool>* cancel) override {
        // Every future is waited for before returning: the flag outlives each use of it.
        const std::shared_ptr<const std::atomic<bool>> flag =
            cancel ? std::shared_ptr<const std::atomic<bool>>(cancel, [](const std::atomic<bool>*) {}) : nullptr;
        std::vector<std::future<CompileResult>> futures;
        for (const CompileRequest& request : requests)
            futures.push_back(enqueue(request, flag));
        std::vector<CompileResult> results;
        if (progress)
            progress(0, requests.size());
        for (auto& f : futures) {
            results.push_back(f.get());
            if (progress)
                progress(results.size(), requests.size());
        }
        return results;
    }

    unsigned ownThreads() const { return CompileService::threadCount(); }
    /// Compiles task `id` on rank 0's pool. Called by the MPI thread, under the cluster's mutex.
    void runHere(std::uint64_t id, CompileRequest request) {
        post([this, id, request = std::move(request)] {
            CompileResult result = compileHere(request);
            std::lock_guard lock(m_cluster.mutex);
            m_cluster.finishCompile(id, 0, std::move(result), false);
        });
    }
    /// An NVRTC compile another rank ran for this service.
    void counted(const std::string& key, double seconds, int rank) const {
        noteCompiled(key, seconds, "rank " + std::to_string(rank));
    }
    void listed(int rank) const { addPlace("rank " + std::to_string(rank)); }

private:
    std::future<CompileResult> enqueue(const CompileRequest& request,
                                       std::shared_ptr<const std::atomic<bool>> cancel) const {
        std::string key;
        try {
            key = compileCacheKey(request);
        } catch (const std::exception&) {
            // Unreadable includes: the compiling rank says what is wrong; no sharing meanwhile.
        }
        std::promise<CompileResult> promise;
        std::future<CompileResult> future = promise.get_future();
        {
            std::lock_guard lock(m_cluster.mutex);
            if (m_cluster.stopping || (cancel && cancel->load())) {
                promise.set_value(compileNotRun(m_cluster.stopping ? "the MPI job is ending" : "cancelled"));
                return future;
            }
            if (const auto k = m_cluster.compileByKey.find(key); !key.empty() && k != m_cluster.compileByKey.end()) {
                m_cluster.compileTasks.at(k->second).waiters.push_back(std::move(promise));
                return future;
            }
            const std::uint64_t id = m_cluster.nextCompile++;
            CompileTask& task = m_cluster.compileTasks[id];
            task.request = request;
            task.key = key;
            task.cancel = std::move(cancel);
            task.waiters.push_back(std::move(promise));
            m_cluster.compileQueue.push_back(id);
            if (!key.empty())
                m_cluster.compileByKey[key] = id;
        }
        m_cluster.wake.notify_all();
        return future;
    }

    Impl& m_cluster;
};

ClusterBackend::Impl::~Impl() = default;

// The MPI thread: every MPI call of rank 0 after MPI_Init, until quit().
void ClusterBackend::Impl::communicate() {
    Outbox outbox;
    auto lastBeat = Clock::now() - kHeartbeat;
    std::unique_lock lock(mutex);
    for (;;) {
        while (!outgoing.empty()) {
            auto [rank, frame] = std::move(outgoing.front());
            outgoing.pop_front();
            if (ranks.at(rank).alive)
                outbox.send(rank, frame);
        }
        if (stopping)
            break;
        outbox.reap();
        int source = 0;
        worker::Frame frame;
        while (!ranks.empty() && receive(source, frame)) // a job of one rank makes no MPI call here
            handle(source, frame);
        if (Clock::now() - lastBeat >= kHeartbeat) {
            static const int nothing = 0;
            for (const auto& [rank, r] : ranks) {
                MPI_Request request;
                if (r.alive && MPI_Isend(&nothing, 1, MPI_INT, rank, kBeatTag, MPI_COMM_WORLD, &request) == MPI_SUCCESS)
                    MPI_Request_free(&request); // a small message: MPI finishes it on its own
            }
            lastBeat = Clock::now();
        }
        // A rank silent too long while it owes an answer is lost.
        for (auto& [rank, r] : ranks) {
            const auto c = compilers.find(rank);
            const bool owes = r.opening || r.holding > 0 || (c != compilers.end() && c->second.busy > 0);
            if (r.alive && owes && secondsSince(r.lastHeard) >= options.silenceSeconds)
                lose(rank, outbox);
        }
        handOutCompiles(outbox);
        changed.notify_all();
        wake.wait_for(lock, std::chrono::milliseconds(1));
    }
    lock.unlock();
    outbox.drain(5);
}

void ClusterBackend::Impl::handle(int source, const worker::Frame& frame) {
    const auto it = ranks.find(source);
    if (it == ranks.end() || !it->second.alive)
        return; // a rank given up for lost: its configs and compiles went elsewhere
    Rank& r = it->second;
    r.lastHeard = Clock::now();
    const std::string type = worker::frameType(frame);
    if (type == "result") {
        worker::Result result;
        try {
            result = worker::decodeResult(frame);
        } catch (const std::exception& e) {
            note(rankName(source) + " sent a result that cannot be read: " + e.what());
            return;
        }
        mailbox.put(Finished{result.id, std::move(result.measurement)});
    } else if (type == "compiled") {
        cluster::Compiled compiled;
        try {
            compiled = cluster::decodeCompiled(frame);
        } catch (const std::exception& e) {
            compiled.id = headerOf(frame).value("id", std::uint64_t{0});
            compiled.result = compileNotRun(rankName(source) + " sent a compile that cannot be read: " + e.what());
            compiled.result.status = CompileStatus::CompileError;
        }
        finishCompile(compiled.id, source, std::move(compiled.result), compiled.fresh);
    } else if (type == "opened") {
        std::vector<SlotOpen> opened;
        const json j = headerOf(frame);
        r.host = j.value("host", r.host);
        r.protocol = j.value("protocol", 0);
        r.compileThreads = j.value("compile_threads", 0u);
        for (const json& s : j.value("slots", json::array())) {
            SlotOpen o;
            if (s.contains("info"))
                o.info = cluster::backendInfoOf(s.at("info").dump());
            o.error = s.value("error", std::string());
            opened.push_back(std::move(o));
        }
        r.opened = std::move(opened);
        r.opening = false;
    }
    // "alive": lastHeard is all it says
}

void ClusterBackend::Impl::lose(int rank, Outbox& outbox) {
    Rank& r = ranks.at(rank);
    r.alive = false;
    r.opening = false;
    outbox.abandon(rank);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.0f", options.silenceSeconds);
    note(rankName(rank) + " stopped answering (silent for " + buf +
         " s): the configs and compiles it held go to the other ranks, and it gets no more");
    // Its compiles wait again, first, in the order they were asked for.
    std::vector<std::uint64_t> back;
    for (auto& [id, task] : compileTasks)
        if (task.rank == rank) {
            task.rank = -1;
            back.push_back(id);
        }
    for (auto id = back.rbegin(); id != back.rend(); ++id)
        compileQueue.push_front(*id);
    if (const auto c = compilers.find(rank); c != compilers.end())
        c->second.busy = 0;
}

void ClusterBackend::Impl::handOutCompiles(Outbox& outbox) {
    while (!compileQueue.empty()) {
        const std::uint64_t id = compileQueue.front();
        const auto it = compileTasks.find(id);
        if (it == compileTasks.end() || it->second.rank >= 0) {
            compileQueue.pop_front();
            continue;
        }
        CompileTask& task = it->second;
        if (task.cancel && task.cancel->load()) {
            compileQueue.pop_front();
            finishCompile(id, -1, compileNotRun("cancelled"), false);
            continue;
        }
        // The compiler with the most idle threads for its size; a rank holds its threads' worth
        // and two more, so that its pool never waits for the next compile to arrive.
        int chosen = -1;
        double chosenLoad = 0;
        for (int rank : compilersInUse()) {
            const Compiler& c = compilers.at(rank);
            if (c.busy >= c.threads + (rank == 0 ? 0 : 2))
                continue;
            const double load = (c.busy + 1.0) / std::max(1u, c.threads);
            if (chosen < 0 || load < chosenLoad) {
                chosen = rank;
                chosenLoad = load;
            }
        }
        if (chosen < 0)
            return; // every compiler is full
        compileQueue.pop_front();
        task.rank = chosen;
        ++compilers.at(chosen).busy;
        if (chosen == 0)
            compiles->runHere(id, task.request);
        else
            outbox.send(chosen, cluster::encodeCompile(id, task.request));
    }
}

void ClusterBackend::Impl::finishCompile(std::uint64_t id, int rank, CompileResult result, bool fresh) {
    const auto it = compileTasks.find(id);
    if (it == compileTasks.end() || it->second.rank != rank)
        return; // handed to another rank after this one went silent
    CompileTask task = std::move(it->second);
    compileTasks.erase(it);
    if (const auto k = compileByKey.find(task.key); k != compileByKey.end() && k->second == id)
        compileByKey.erase(k);
    if (const auto c = compilers.find(rank); c != compilers.end() && c->second.busy > 0)
        --c->second.busy;
    if (result.key.empty())
        result.key = task.key;
    if (rank > 0 && fresh)
        compiles->counted(result.key, result.seconds, rank); // rank 0's own compiles count themselves
    for (std::size_t i = 0; i < task.waiters.size(); ++i) {
        CompileResult copy = result;
        if (i > 0 && !copy.transient)
            copy.cached = true; // shared, as CompileService shares a compile in flight
        task.waiters[i].set_value(std::move(copy));
    }
    wake.notify_all();
}

ClusterBackend::ClusterBackend(MpiJob& job, SlotFactory makeSlots, ClusterOptions options)
    : m_impl(std::make_unique<Impl>(job, std::move(makeSlots), std::move(options))) {
    Impl& d = *m_impl;
    for (int r = 1; r < job.size(); ++r)
        d.ranks[r] = Impl::Rank{};
    if (!job.threadsAllowed() && job.size() > 1) {
        // Tell the ranks to go (from this thread, the only one MPI allows) before saying why.
        Outbox outbox;
        for (int r = 1; r < job.size(); ++r)
            outbox.send(r, frameOf(json{{"type", "quit"}}));
        outbox.drain(5);
        d.quitSent = true;
        throw InputError("", "--mpi",
                         "this MPI library lets only the main thread call it: rank 0 needs a thread of its own to talk "
                         "to the ranks (MPI_THREAD_SERIALIZED, which Open MPI gives)");
    }
    if (d.options.compiler)
        if (std::optional<CompileServiceOptions> own = d.options.compiler()) {
            d.compiles = std::make_unique<Impl::Spread>(d, std::move(*own));
            d.compilers[0] = Impl::Compiler{d.compiles->ownThreads(), 0, false};
        }
    for (auto& [rank, r] : d.ranks)
        d.send(rank, json{{"type", "hello"}, {"protocol", cluster::kProtocolVersion}, {"beats", true}});
    d.thread = std::thread([&d] { d.communicate(); });
}

ClusterBackend::~ClusterBackend() {
    quit();
}

CompileService* ClusterBackend::compiles() {
    return m_impl->compiles.get();
}

BackendInfo ClusterBackend::open(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space) {
    Impl& d = *m_impl;
    d.slots.clear();
    {
        std::lock_guard lock(d.mutex);
        for (auto& [rank, r] : d.ranks) {
            if (!r.alive)
                continue;
            r.opened.reset();
            r.opening = true;
            r.lastHeard = Clock::now();
            d.send(rank, json{{"type", "open"},
                              {"problem", problem.toJson()},
                              {"problem_name", problem.fileName},
                              {"base_dir", problem.baseDir.string()},
                              {"shape", shapeIndex}});
        }
    }
    if (!d.madeSlots) {
        d.madeSlots = true;
        for (auto& b : d.makeSlots(problem))
            d.local.push_back(std::make_unique<SlotRunner>(std::move(b), d.mailbox, d.localCancel));
    }
    const std::vector<SlotOpen> local = openSlots(d.local, problem, shapeIndex, space, [] {});
    std::unique_lock lock(d.mutex);
    d.changed.wait(lock, [&] {
        return std::none_of(d.ranks.begin(), d.ranks.end(), [](const auto& r) { return r.second.opening; });
    });

    // Every slot that opened, rank by rank; the first one's info leads.
    std::vector<BackendInfo> infos;
    std::vector<int> slotRanks;
    std::string why;
    auto take = [&](int rank, const std::vector<SlotOpen>& opened) {
        for (std::size_t i = 0; i < opened.size(); ++i) {
            if (opened[i].info) {
                d.slots.push_back(Impl::Slot{rank, int(i), 0});
                infos.push_back(*opened[i].info);
                slotRanks.push_back(rank);
            } else {
                why += (why.empty() ? "" : "; ") + d.rankName(rank) + ": " + opened[i].error;
            }
        }
        if (opened.empty() && rank != 0) // rank 0 without slots coordinates (--mpi-coordinator)
            why += (why.empty() ? "" : "; ") + d.rankName(rank) + ": no GPU to measure on";
    };
    take(0, local);
    for (auto& [rank, r] : d.ranks) {
        if (r.alive && r.opened && r.protocol != cluster::kProtocolVersion) {
            why += (why.empty() ? "" : "; ") + d.rankName(rank) +
                   ": it speaks another version of the ranks' protocol (" + std::to_string(r.protocol) + ", not " +
                   std::to_string(cluster::kProtocolVersion) + "): run one build of Tilescope on every node";
        } else if (r.alive && r.opened) {
            take(rank, *r.opened);
        } else if (!r.alive) {
            why += (why.empty() ? "" : "; ") + d.rankName(rank) + ": lost";
        }
    }
    if (infos.empty())
        throw InputError(problem.fileName, {},
                         "no rank of the MPI job can measure: " +
                             (why.empty() ? "rank 0 only coordinates and the job has no other rank" : why));
    if (!why.empty())
        d.note("left out of the MPI job: " + why);

    // The ranks that measure compile; rank 0 too when it measures.
    const std::set<int> measuring(slotRanks.begin(), slotRanks.end());
    if (d.compiles) {
        for (auto& [rank, c] : d.compilers)
            c.active = false;
        for (int rank : measuring) {
            const unsigned threads = rank == 0 ? d.compiles->ownThreads() : d.ranks.at(rank).compileThreads;
            if (threads == 0)
                continue;
            Impl::Compiler& c = d.compilers[rank];
            c.threads = threads;
            c.active = true;
            d.compiles->listed(rank);
        }
    }

    BackendInfo info = infos.front();
    json devices = json::array();
    std::size_t batch = 0;
    for (std::size_t i = 0; i < infos.size(); ++i) {
        const BackendInfo& s = infos[i];
        for (const std::string& arch : s.archs.empty() ? std::vector<std::string>{s.arch} : s.archs)
            if (!arch.empty() && arch != info.arch &&
                std::find(info.archs.begin(), info.archs.end(), arch) == info.archs.end()) {
                if (info.archs.empty())
                    info.archs.push_back(info.arch);
                info.archs.push_back(arch);
            }
        if (s.deviceName != info.deviceName)
            d.note(d.rankName(slotRanks[i]) + " measures on " + s.deviceName + ", " + d.rankName(slotRanks[0]) +
                   " on " + info.deviceName + ": each result records the device that measured it");
        info.needsCubins = info.needsCubins || s.needsCubins;
        info.simulated = info.simulated && s.simulated;
        batch += std::max<std::size_t>(1, s.preferredBatch);
        json p = json::parse(s.provenanceJson, nullptr, false);
        json device = p.is_object() && p.contains("devices") && p["devices"].is_array() && !p["devices"].empty()
                          ? p["devices"][0]
                          : json{{"name", s.deviceName}, {"arch", s.arch}};
        device["rank"] = slotRanks[i];
        device["host"] = slotRanks[i] == 0 ? d.job.host() : d.ranks.at(slotRanks[i]).host;
        devices.push_back(std::move(device));
    }
    info.preferredBatch = std::max(batch, 4 * infos.size());
    json provenance = json::parse(info.provenanceJson, nullptr, false);
    if (!provenance.is_object())
        provenance = json::object();
    provenance["devices"] = std::move(devices);
    provenance["mpi"] = json{{"ranks", d.job.size()}, {"ranks_measuring", measuring.size()}, {"slots", infos.size()}};
    info.provenanceJson = provenance.dump();
    info.description = "MPI job of " + std::to_string(d.job.size()) + (d.job.size() == 1 ? " rank" : " ranks") + ", " +
                       std::to_string(infos.size()) + (infos.size() == 1 ? " slot" : " slots") + " on " +
                       std::to_string(measuring.size()) + (measuring.size() == 1 ? " rank" : " ranks") + "; " +
                       infos.front().description;
    return info;
}

void ClusterBackend::measure(std::span<const MeasureItem> items, const MeasureControl& control,
                             const MeasureSink& sink) {
    Impl& d = *m_impl;
    d.localCancel = false;
    MeasureItems all(items, control);
    std::deque<std::size_t> pending;
    for (std::size_t i = 0; i < items.size(); ++i)
        pending.push_back(i);
    struct InFlight {
        std::size_t item;
        std::size_t slot;
    };
    std::map<std::uint64_t, InFlight> inFlight;
    std::size_t delivered = 0;
    bool cancelSent = false;

    auto deliver = [&](std::uint64_t id, Measurement m) {
        const auto it = inFlight.find(id);
        if (it == inFlight.end())
            return; // handed out again after its rank went silent
        const InFlight f = it->second;
        inFlight.erase(it);
        Impl::Slot& slot = d.slots[f.slot];
        --slot.inFlight;
        if (slot.rank != 0) {
            std::lock_guard lock(d.mutex);
            --d.ranks.at(slot.rank).holding;
        }
        m.device = int(f.slot); // the slot that measured it: the provenance's "devices" entry
        ++delivered;
        sink(f.item, std::move(m));
        all.forget(f.item);
    };
    auto skip = [&](std::size_t item, const char* why) {
        Measurement m;
        m.status = ResultStatus::Skipped;
        m.message = why;
        ++delivered;
        sink(item, std::move(m));
        all.forget(item);
    };

    for (;;) {
        const bool cancelled = control.cancel && control.cancel->load();
        const bool late = control.deadline && Clock::now() >= *control.deadline;
        if (cancelled || late) {
            while (!pending.empty()) {
                skip(pending.front(), cancelled ? "cancelled" : "the run's time cap was reached");
                pending.pop_front();
            }
            if (cancelled && !cancelSent) {
                d.localCancel = true;
                std::lock_guard lock(d.mutex);
                for (auto& [rank, r] : d.ranks)
                    d.send(rank, json{{"type", "cancel"}});
                cancelSent = true;
            }
        }

        if (!cancelled && !late && pending.empty()) {
            // Once the configs at hand are handed out, the slots' free places take what the feed
            // has ready.
            std::size_t free = 0;
            {
                std::lock_guard lock(d.mutex);
                for (const Impl::Slot& slot : d.slots)
                    if (d.rankAlive(slot.rank) && slot.inFlight < slot.depth())
                        free += std::size_t(slot.depth() - slot.inFlight);
            }
            for (const std::size_t item : all.more(free))
                pending.push_back(item);
        }
        if (delivered >= all.size())
            break;

        {
            std::lock_guard lock(d.mutex);
            // Each idle slot takes the next config; then the slots of other ranks their next but one.
            for (int level = 0; level < 2; ++level)
                for (std::size_t s = 0; s < d.slots.size() && !pending.empty(); ++s) {
                    Impl::Slot& slot = d.slots[s];
                    if (slot.inFlight != level || level >= slot.depth() || !d.rankAlive(slot.rank))
                        continue;
                    SlotJob job;
                    job.id = d.nextId++;
                    job.item = all[pending.front()];
                    job.perConfigSeconds = control.perConfigSeconds;
                    job.deadline = control.deadline;
                    job.slowerThanMs = control.slowerThanMs;
                    job.profileUnderMs = control.profileUnderMs;
                    job.keepSamples = control.keepSamples;
                    job.samplesPerConfig = control.samplesPerConfig;
                    job.countersOnly = control.countersOnly;
                    inFlight[job.id] = InFlight{pending.front(), s};
                    pending.pop_front();
                    ++slot.inFlight;
                    if (slot.rank == 0) {
                        d.local[std::size_t(slot.index)]->start(std::move(job));
                    } else {
                        job.slot = slot.index;
                        ++d.ranks.at(slot.rank).holding;
                        d.send(slot.rank, cluster::encodeJob(job));
                    }
                }

            // A rank lost loses its configs to the others.
            for (auto it = inFlight.begin(); it != inFlight.end();) {
                Impl::Slot& slot = d.slots[it->second.slot];
                if (!d.rankAlive(slot.rank)) {
                    pending.push_front(it->second.item);
                    --slot.inFlight;
                    it = inFlight.erase(it);
                } else {
                    ++it;
                }
            }
            const bool anyAlive =
                std::any_of(d.slots.begin(), d.slots.end(), [&](const Impl::Slot& s) { return d.rankAlive(s.rank); });
            if (!anyAlive && !pending.empty())
                throw std::runtime_error("every rank that measured is lost (" + std::to_string(pending.size()) +
                                         " configs of this batch not measured); what is stored stays: run the job "
                                         "again with --resume");
        }

        // Results, this rank's slots' and (through the MPI thread) the others'.
        for (Finished& f : d.mailbox.takeAll())
            deliver(f.id, std::move(f.measurement));
        if (delivered < all.size())
            d.mailbox.wait(1);
    }
}

void ClusterBackend::close() {
    Impl& d = *m_impl;
    for (auto& slot : d.local)
        slot->backend().close();
    std::lock_guard lock(d.mutex);
    for (auto& [rank, r] : d.ranks)
        d.send(rank, json{{"type", "close"}});
}

void ClusterBackend::quit() {
    Impl& d = *m_impl;
    if (d.quitSent)
        return;
    d.quitSent = true;
    {
        std::lock_guard lock(d.mutex);
        // MPI_Finalize waits for every rank of the job, a lost one too, and can hang on it: a job
        // that lost a rank ends without it, here and on the ranks left. A rank that died owing
        // nothing was not given up for lost, but has been silent as long.
        const bool lostOne = std::any_of(d.ranks.begin(), d.ranks.end(), [&d](const auto& r) {
            return !r.second.alive || secondsSince(r.second.lastHeard) >= d.options.silenceSeconds;
        });
        for (auto& [rank, r] : d.ranks)
            d.send(rank, json{{"type", "quit"}, {"finalize", !lostOne}});
        if (lostOne)
            d.job.leaveWithoutFinalize();
        d.stopping = true;
        // Compiles nobody will answer now.
        for (auto& [id, task] : d.compileTasks)
            for (auto& waiter : task.waiters)
                waiter.set_value(compileNotRun("the MPI job is ending"));
        d.compileTasks.clear();
        d.compileQueue.clear();
        d.compileByKey.clear();
    }
    d.wake.notify_all();
    if (d.thread.joinable())
        d.thread.join();
    d.local.clear(); // joins the slot threads, closes their backends
}

// ---- The other ranks ----

int serveClusterRank(MpiJob& job, const SlotFactory& makeSlots, ClusterOptions options) {
    Mailbox mailbox;
    std::atomic<bool> cancel{false};
    std::vector<std::unique_ptr<SlotRunner>> slots;
    std::unique_ptr<CompileService> compiler; // made at the first open where a slot opened
    std::vector<std::pair<std::uint64_t, std::future<CompileResult>>> compiling;
    Outbox outbox;
    std::optional<TuningProblem> problem;
    std::optional<ConfigSpace> space;
    auto lastSent = Clock::now();
    auto lastHeard = Clock::now();
    // Until rank 0 says hello (and that it says it is alive every second), it may be busy long.
    double rank0Gone = std::max(600.0, 20 * options.silenceSeconds);
    std::set<std::uint64_t> inFlight; // configs handed to this rank, not yet answered

    auto send = [&](const json& header) {
        outbox.send(0, frameOf(header));
        lastSent = Clock::now();
    };
    auto alive = [&] {
        if (Clock::now() - lastSent >= kHeartbeat)
            send(json{{"type", "alive"}});
    };
    auto flushResults = [&] {
        for (Finished& f : mailbox.takeAll()) {
            inFlight.erase(f.id);
            worker::Result r;
            r.id = f.id;
            r.measurement = std::move(f.measurement);
            outbox.send(0, worker::encode(r));
            lastSent = Clock::now();
        }
    };
    // Compiles done go back whole (rank 0 analyses them, and the cubin comes back with the config).
    auto flushCompiles = [&] {
        for (auto it = compiling.begin(); it != compiling.end();) {
            if (it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
                ++it;
                continue;
            }
            const CompileResult r = it->second.get();
            const bool fresh = !r.cached && !r.transient && r.status != CompileStatus::Cancelled;
            outbox.send(0, cluster::encodeCompiled(it->first, r, fresh));
            lastSent = Clock::now();
            it = compiling.erase(it);
        }
    };

    bool running = true;
    int status = 0;
    while (running) {
        int source = 0;
        worker::Frame frame;
        while (running && receive(source, frame)) {
            if (source != 0)
                continue;
            lastHeard = Clock::now();
            const json j = headerOf(frame);
            const std::string type = j.value("type", std::string());
            if (type == "hello") {
                if (const int protocol = j.value("protocol", 0); protocol != cluster::kProtocolVersion) {
                    if (options.note)
                        options.note("rank 0 speaks version " + std::to_string(protocol) +
                                     " of the ranks' protocol, this rank " + std::to_string(cluster::kProtocolVersion) +
                                     ": run one build of Tilescope on every node; leaving the job");
                    status = 1;
                    running = false;
                    break;
                }
                if (j.value("beats", false))
                    rank0Gone = options.silenceSeconds;
            } else if (type == "open") {
                json reply{{"type", "opened"},
                           {"host", job.host()},
                           {"protocol", cluster::kProtocolVersion},
                           {"slots", json::array()}};
                try {
                    problem.reset();
                    space.reset();
                    problem =
                        TuningProblem::parse(j.at("problem").get<std::string>(), j.value("problem_name", std::string()),
                                             j.value("base_dir", std::string()));
                    const std::size_t shape = j.at("shape").get<std::size_t>();
                    space = ConfigSpace::build(*problem, shape);
                    if (slots.empty())
                        for (auto& b : makeSlots(*problem))
                            slots.push_back(std::make_unique<SlotRunner>(std::move(b), mailbox, cancel));
                    bool measures = false;
                    for (const SlotOpen& o : openSlots(slots, *problem, shape, *space, [&] {
                             alive();
                             outbox.reap();
                         })) {
                        json s = json::object();
                        if (o.info)
                            s["info"] = json::parse(cluster::backendInfoJson(*o.info));
                        else
                            s["error"] = o.error;
                        measures = measures || o.info.has_value();
                        reply["slots"].push_back(std::move(s));
                    }
                    if (measures && !compiler && options.compiler)
                        if (std::optional<CompileServiceOptions> own = options.compiler())
                            compiler = std::make_unique<CompileService>(std::move(*own));
                } catch (const std::exception& e) {
                    reply["slots"] = json::array({json{{"error", e.what()}}});
                }
                reply["compile_threads"] = compiler ? compiler->threadCount() : 0u;
                send(reply);
            } else if (type == "compile") {
                std::uint64_t id = j.value("id", std::uint64_t{0});
                try {
                    cluster::CompileJob compile = cluster::decodeCompile(frame);
                    if (!compiler)
                        throw std::runtime_error("this rank compiles nothing");
                    compiling.emplace_back(compile.id, compiler->submit(std::move(compile.request)));
                } catch (const std::exception& e) {
                    CompileResult r = compileNotRun(std::string("rank could not compile: ") + e.what());
                    r.status = CompileStatus::CompileError;
                    outbox.send(0, cluster::encodeCompiled(id, r, false));
                }
            } else if (type == "measure") {
                try {
                    SlotJob slotJob = cluster::decodeJob(frame);
                    const int slot = slotJob.slot;
                    if (slot < 0 || std::size_t(slot) >= slots.size())
                        throw std::runtime_error("no slot " + std::to_string(slot));
                    cancel = false;
                    inFlight.insert(slotJob.id);
                    slots[std::size_t(slot)]->start(std::move(slotJob));
                } catch (const std::exception& e) {
                    worker::Result r;
                    r.id = j.value("id", std::uint64_t{0});
                    r.measurement.status = ResultStatus::Crashed;
                    r.measurement.message = std::string("rank could not take the config: ") + e.what();
                    outbox.send(0, worker::encode(r));
                }
            } else if (type == "cancel") {
                cancel = true;
            } else if (type == "close") {
                for (auto& s : slots)
                    s->backend().close(); // rank 0 closes once every config it handed out came back
            } else if (type == "quit") {
                if (!j.value("finalize", true))
                    job.leaveWithoutFinalize(); // the job lost a rank, which MPI_Finalize would wait for
                running = false;
            }
        }
        for (int beat = 1; beat;) {
            MPI_Iprobe(0, kBeatTag, MPI_COMM_WORLD, &beat, MPI_STATUS_IGNORE);
            if (beat) {
                int nothing = 0;
                MPI_Recv(&nothing, 1, MPI_INT, 0, kBeatTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                lastHeard = Clock::now();
            }
        }
        flushResults();
        flushCompiles();
        alive();
        outbox.reap();
        if (running && secondsSince(lastHeard) > rank0Gone && inFlight.empty()) {
            if (options.note)
                options.note("rank 0 has been silent for " + std::to_string(int(rank0Gone)) +
                             " s: it is gone; leaving the job (what it committed stays: --resume continues)");
            job.leaveWithoutFinalize(); // MPI_Finalize would wait for rank 0 too
            status = 1;
            break;
        }
        if (running)
            mailbox.wait(1);
    }
    slots.clear();
    compiling.clear(); // the service finishes what it started
    compiler.reset();
    outbox.drain(status == 0 ? 5 : 0);
    return status;
}

} // namespace tilescope
