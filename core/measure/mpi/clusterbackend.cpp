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
            control.keepSamples = job.keepSamples;
            control.samplesPerConfig = job.samplesPerConfig;
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
        m_threadMultiple = provided >= MPI_THREAD_MULTIPLE;
    } else {
        int provided = 0;
        MPI_Query_thread(&provided);
        m_threadMultiple = provided >= MPI_THREAD_MULTIPLE;
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
    if (!finalized)
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

struct ClusterBackend::Impl {
    MpiJob& job;
    SlotFactory makeSlots;
    ClusterOptions options;
    Mailbox mailbox;
    std::atomic<bool> localCancel{false};
    std::vector<std::unique_ptr<SlotRunner>> local;
    Outbox outbox;

    struct Rank {
        bool alive = true;
        Clock::time_point lastHeard = Clock::now();
        std::string host;
        std::optional<std::vector<SlotOpen>> opened; // the reply to the latest open
    };
    std::map<int, Rank> ranks; // every rank but 0

    /// A slot of the job that can measure: local (rank 0) or another rank's.
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
    std::set<std::string> said;
    bool quitSent = false;
    bool madeSlots = false;

    // The heartbeat thread: one flag per rank, set once rank 0 gives the rank up.
    std::unique_ptr<std::atomic<bool>[]> gaveUp;
    std::atomic<bool> stopBeats{false};
    std::thread beats;

    void beat() {
        static const int nothing = 0;
        while (!stopBeats) {
            for (int r = 1; r < job.size(); ++r) {
                if (gaveUp[std::size_t(r)])
                    continue;
                MPI_Request request;
                if (MPI_Isend(&nothing, 1, MPI_INT, r, kBeatTag, MPI_COMM_WORLD, &request) == MPI_SUCCESS)
                    MPI_Request_free(&request); // a small message: MPI finishes it on its own
            }
            for (int i = 0; i < 20 && !stopBeats; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }

    void note(const std::string& text) {
        if (options.note && said.insert(text).second)
            options.note(text);
    }

    std::string rankName(int rank) const {
        const auto it = ranks.find(rank);
        const std::string host = rank == 0 ? job.host() : (it != ranks.end() ? it->second.host : std::string());
        return "rank " + std::to_string(rank) + (host.empty() ? "" : " (" + host + ")");
    }

    /// Handles every message that has arrived. `onResult` gets (rank, id, measurement).
    void pump(const std::function<void(int, std::uint64_t, Measurement)>& onResult) {
        outbox.reap();
        int source = 0;
        worker::Frame frame;
        while (receive(source, frame)) {
            auto it = ranks.find(source);
            if (it == ranks.end() || !it->second.alive)
                continue; // a rank given up for lost: its configs went elsewhere
            Rank& r = it->second;
            r.lastHeard = Clock::now();
            const std::string type = worker::frameType(frame);
            if (type == "result") {
                worker::Result result;
                try {
                    result = worker::decodeResult(frame);
                } catch (const std::exception& e) {
                    note(rankName(source) + " sent a result that cannot be read: " + e.what());
                    continue;
                }
                if (onResult)
                    onResult(source, result.id, std::move(result.measurement));
            } else if (type == "opened") {
                std::vector<SlotOpen> opened;
                const json j = headerOf(frame);
                r.host = j.value("host", r.host);
                for (const json& s : j.value("slots", json::array())) {
                    SlotOpen o;
                    if (s.contains("info"))
                        o.info = cluster::backendInfoOf(s.at("info").dump());
                    o.error = s.value("error", std::string());
                    opened.push_back(std::move(o));
                }
                r.opened = std::move(opened);
            }
            // "alive": lastHeard is all it says
        }
    }

    /// Marks `rank` lost when it has been silent too long. True when it is (now) lost.
    bool checkSilence(int rank) {
        Rank& r = ranks.at(rank);
        if (!r.alive)
            return true;
        if (secondsSince(r.lastHeard) < options.silenceSeconds)
            return false;
        r.alive = false;
        if (gaveUp)
            gaveUp[std::size_t(rank)] = true;
        outbox.abandon(rank);
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.0f", options.silenceSeconds);
        note(rankName(rank) + " stopped answering (silent for " + buf +
             " s): the configs it held go to the other slots, and it gets no more");
        return true;
    }

    void send(int rank, const json& header) {
        if (ranks.at(rank).alive)
            outbox.send(rank, frameOf(header));
    }
};

ClusterBackend::ClusterBackend(MpiJob& job, SlotFactory makeSlots, ClusterOptions options)
    : m_impl(std::make_unique<Impl>(job, std::move(makeSlots), std::move(options))) {
    Impl& d = *m_impl;
    for (int r = 1; r < job.size(); ++r)
        d.ranks[r] = Impl::Rank{};
    const bool beating = job.threadMultiple() && job.size() > 1;
    for (auto& [rank, r] : d.ranks)
        d.send(rank, json{{"type", "hello"}, {"beats", beating}});
    if (beating) {
        d.gaveUp = std::make_unique<std::atomic<bool>[]>(std::size_t(job.size()));
        for (int r = 0; r < job.size(); ++r)
            d.gaveUp[std::size_t(r)] = false;
        d.beats = std::thread([&d] { d.beat(); });
    }
}

ClusterBackend::~ClusterBackend() {
    quit();
}

BackendInfo ClusterBackend::open(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space) {
    Impl& d = *m_impl;
    d.slots.clear();
    for (auto& [rank, r] : d.ranks) {
        r.opened.reset();
        r.lastHeard = Clock::now();
        d.send(rank, json{{"type", "open"},
                          {"problem", problem.toJson()},
                          {"problem_name", problem.fileName},
                          {"base_dir", problem.baseDir.string()},
                          {"shape", shapeIndex}});
    }
    if (!d.madeSlots) {
        d.madeSlots = true;
        for (auto& b : d.makeSlots(problem))
            d.local.push_back(std::make_unique<SlotRunner>(std::move(b), d.mailbox, d.localCancel));
    }
    const std::vector<SlotOpen> local = openSlots(d.local, problem, shapeIndex, space, [&] { d.pump({}); });
    for (;;) {
        d.pump({});
        bool waiting = false;
        for (auto& [rank, r] : d.ranks)
            if (r.alive && !r.opened && !d.checkSilence(rank))
                waiting = true;
        if (!waiting)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }

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
        if (r.alive && r.opened)
            take(rank, *r.opened);
        else if (!r.alive)
            why += (why.empty() ? "" : "; ") + d.rankName(rank) + ": lost";
    }
    if (infos.empty())
        throw InputError(problem.fileName, {},
                         "no rank of the MPI job can measure: " +
                             (why.empty() ? "rank 0 only coordinates and the job has no other rank" : why));
    if (!why.empty())
        d.note("left out of the MPI job: " + why);

    BackendInfo info = infos.front();
    json devices = json::array();
    std::set<int> ranksInUse;
    std::size_t batch = 0;
    for (std::size_t i = 0; i < infos.size(); ++i) {
        const BackendInfo& s = infos[i];
        ranksInUse.insert(slotRanks[i]);
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
    provenance["mpi"] = json{{"ranks", d.job.size()}, {"ranks_measuring", ranksInUse.size()}, {"slots", infos.size()}};
    info.provenanceJson = provenance.dump();
    info.description = "MPI job of " + std::to_string(d.job.size()) + (d.job.size() == 1 ? " rank" : " ranks") + ", " +
                       std::to_string(infos.size()) + (infos.size() == 1 ? " slot" : " slots") + " on " +
                       std::to_string(ranksInUse.size()) + (ranksInUse.size() == 1 ? " rank" : " ranks") + "; " +
                       infos.front().description;
    return info;
}

void ClusterBackend::measure(std::span<const MeasureItem> items, const MeasureControl& control,
                             const MeasureSink& sink) {
    Impl& d = *m_impl;
    d.localCancel = false;
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
        --d.slots[f.slot].inFlight;
        m.device = int(f.slot); // the slot that measured it: the provenance's "devices" entry
        ++delivered;
        sink(f.item, std::move(m));
    };
    auto skip = [&](std::size_t item, const char* why) {
        Measurement m;
        m.status = ResultStatus::Skipped;
        m.message = why;
        ++delivered;
        sink(item, std::move(m));
    };

    while (delivered < items.size()) {
        const bool cancelled = control.cancel && control.cancel->load();
        const bool late = control.deadline && Clock::now() >= *control.deadline;
        if (cancelled || late) {
            while (!pending.empty()) {
                skip(pending.front(), cancelled ? "cancelled" : "the run's time cap was reached");
                pending.pop_front();
            }
            if (cancelled && !cancelSent) {
                d.localCancel = true;
                for (auto& [rank, r] : d.ranks)
                    d.send(rank, json{{"type", "cancel"}});
                cancelSent = true;
            }
        }

        // Each idle slot takes the next config; then the slots of other ranks their next but one.
        for (int level = 0; level < 2; ++level)
            for (std::size_t s = 0; s < d.slots.size() && !pending.empty(); ++s) {
                Impl::Slot& slot = d.slots[s];
                if (slot.inFlight != level || level >= slot.depth() || (slot.rank != 0 && !d.ranks.at(slot.rank).alive))
                    continue;
                SlotJob job;
                job.id = d.nextId++;
                job.item = items[pending.front()];
                job.perConfigSeconds = control.perConfigSeconds;
                job.deadline = control.deadline;
                job.slowerThanMs = control.slowerThanMs;
                job.keepSamples = control.keepSamples;
                job.samplesPerConfig = control.samplesPerConfig;
                inFlight[job.id] = InFlight{pending.front(), s};
                pending.pop_front();
                ++slot.inFlight;
                if (slot.rank == 0) {
                    d.local[std::size_t(slot.index)]->start(std::move(job));
                } else {
                    job.slot = slot.index;
                    d.outbox.send(slot.rank, cluster::encodeJob(job));
                }
            }

        // Results: the other ranks', then this rank's slots'.
        d.pump([&](int, std::uint64_t id, Measurement m) { deliver(id, std::move(m)); });
        for (Finished& f : d.mailbox.takeAll())
            deliver(f.id, std::move(f.measurement));

        // A rank silent too long loses its configs to the others.
        for (auto it = inFlight.begin(); it != inFlight.end();) {
            const Impl::Slot& slot = d.slots[it->second.slot];
            if (slot.rank != 0 && d.checkSilence(slot.rank)) {
                pending.push_front(it->second.item);
                it = inFlight.erase(it);
            } else {
                ++it;
            }
        }
        const bool anyAlive = std::any_of(d.slots.begin(), d.slots.end(),
                                          [&](const Impl::Slot& s) { return s.rank == 0 || d.ranks.at(s.rank).alive; });
        if (!anyAlive && !pending.empty())
            throw std::runtime_error("every rank that measured is lost (" + std::to_string(pending.size()) +
                                     " configs of this batch not measured); what is stored stays: run the job "
                                     "again with --resume");
        if (delivered < items.size())
            d.mailbox.wait(1);
    }
}

void ClusterBackend::close() {
    Impl& d = *m_impl;
    for (auto& slot : d.local)
        slot->backend().close();
    for (auto& [rank, r] : d.ranks)
        d.send(rank, json{{"type", "close"}});
    d.outbox.reap();
}

void ClusterBackend::quit() {
    Impl& d = *m_impl;
    if (d.quitSent)
        return;
    d.quitSent = true;
    d.stopBeats = true;
    if (d.beats.joinable())
        d.beats.join();
    for (auto& [rank, r] : d.ranks)
        d.send(rank, json{{"type", "quit"}});
    d.outbox.drain(5);
    d.local.clear(); // joins the slot threads, closes their backends
}

// ---- The other ranks ----

int serveClusterRank(MpiJob& job, const SlotFactory& makeSlots, ClusterOptions options) {
    Mailbox mailbox;
    std::atomic<bool> cancel{false};
    std::vector<std::unique_ptr<SlotRunner>> slots;
    Outbox outbox;
    std::optional<TuningProblem> problem;
    std::optional<ConfigSpace> space;
    auto lastSent = Clock::now();
    auto lastHeard = Clock::now();
    // Without heartbeats of its own, rank 0 is silent while it compiles or stores; far longer
    // than that, it is gone.
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
                if (j.value("beats", false))
                    rank0Gone = options.silenceSeconds;
            } else if (type == "open") {
                json reply{{"type", "opened"}, {"host", job.host()}, {"slots", json::array()}};
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
                    for (const SlotOpen& o : openSlots(slots, *problem, shape, *space, [&] {
                             alive();
                             outbox.reap();
                         })) {
                        json s = json::object();
                        if (o.info)
                            s["info"] = json::parse(cluster::backendInfoJson(*o.info));
                        else
                            s["error"] = o.error;
                        reply["slots"].push_back(std::move(s));
                    }
                } catch (const std::exception& e) {
                    reply["slots"] = json::array({json{{"error", e.what()}}});
                }
                send(reply);
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
        alive();
        outbox.reap();
        if (running && secondsSince(lastHeard) > rank0Gone && inFlight.empty()) {
            if (options.note)
                options.note("rank 0 has been silent for " + std::to_string(int(rank0Gone)) +
                             " s: it is gone; leaving the job (what it committed stays: --resume continues)");
            status = 1;
            break;
        }
        if (running)
            mailbox.wait(1);
    }
    slots.clear();
    outbox.drain(status == 0 ? 5 : 0);
    return status;
}

} // namespace tilescope
