#include "jobs/tunempi.h"

#include "compile/threadpool.h"
#include "measure/mpi/clusterbackend.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tilescope {

namespace {

/// "rank 2: " before a note of a rank other than 0 of a job of several.
std::string rankPrefix(const MpiJob& job) {
    return job.size() > 1 && job.rank() != 0 ? "rank " + std::to_string(job.rank()) + ": " : "";
}

class MpiCluster : public TuneCluster {
public:
    MpiCluster(const TuneRequest& request, const BackendSpec& spec, const TuneEvents& events)
        : m_request(request)
        , m_spec(spec)
        , m_events(events)
        , m_job(std::make_unique<MpiJob>(nullptr, nullptr)) {
        m_options.silenceSeconds = request.mpiSilence;
        if (events.note)
            m_options.note = [note = events.note, from = m_job->rank() == 0 ? std::string() : rankPrefix(*m_job)](
                                 const std::string& text) { note(from, text); };
        m_options.compiler = [this] { return compiler(); };
        m_slots = [this](const TuningProblem& problem) { return slots(problem); };
        if (!leads())
            return;
        m_backend = std::make_unique<ClusterBackend>(*m_job, m_slots, m_options);
        if (m_job->size() > 1 && !m_job->survivesLostRanks() && events.note)
            events.note({}, "without mpirun --enable-recovery, a rank that dies ends the whole job (what is stored "
                            "stays; --resume continues)");
    }
    ~MpiCluster() override {
        m_backend.reset(); // tells the ranks to go, before the job is finalized
    }

    bool leads() const override { return m_job->rank() == 0; }
    int serve() override { return serveClusterRank(*m_job, m_slots, m_options); }
    Backend& backend() override { return *m_backend; }
    CompileService* compiles() override { return m_backend->compiles(); }

private:
    /// Ranks of this node beside a coordinating rank 0, which measures and compiles nothing.
    int besideCoordinator() const { return m_request.mpiCoordinator && m_job->sharesNodeWithRank0() ? 1 : 0; }

    /// The slots of this rank: one per GPU of its share of the node's, or the replays.
    std::vector<std::unique_ptr<Backend>> slots(const TuningProblem& problem) const {
        std::vector<std::unique_ptr<Backend>> slots;
        // A coordinating rank 0 measures nothing; the other ranks of its node share its GPUs.
        if (m_request.mpiCoordinator && m_job->rank() == 0)
            return slots;
        if (m_spec.kind == BackendSpec::Kind::Replay) {
            for (std::size_t i = 0; i < m_request.replaySlots; ++i)
                slots.push_back(makeBackend(m_spec, tuneBackendOptions(m_request, m_spec, problem, m_events)));
            return slots;
        }
        if (m_spec.kind == BackendSpec::Kind::Analysis) {
            slots.push_back(makeBackend(m_spec)); // measures nothing: the rank is there to compile
            return slots;
        }
        const std::string who = m_job->size() > 1 ? "rank " + std::to_string(m_job->rank()) + ": " : "";
        for (int device : localGpus(m_spec.devices, m_job->localRank() - besideCoordinator(),
                                    m_job->localSize() - besideCoordinator())) {
            BackendSpec one = m_spec;
            one.devices = {device};
            slots.push_back(makeBackend(one, tuneBackendOptions(m_request, m_spec, problem, m_events, who)));
        }
        return slots;
    }

    /// The compile service of this rank: TuneRequest::jobs threads, else this node's hardware
    /// threads shared out among the ranks of the node that compile (a coordinating rank 0 does
    /// not), or the CPUs the rank is bound to when the launcher bound it to fewer (then it says so).
    std::optional<CompileServiceOptions> compiler() const {
        const bool coordinates = m_request.mpiCoordinator && m_job->rank() == 0;
        const int sharers = std::max(1, m_job->localSize() - (coordinates ? 0 : besideCoordinator()));
        const unsigned share = std::max(1u, ThreadPool::machineThreads() / unsigned(sharers));
        const unsigned usable = ThreadPool::usableThreads();
        const unsigned threads = m_request.jobs ? m_request.jobs : std::min(share, usable);
        if (!m_request.jobs && usable < share && m_events.note)
            m_events.note({}, "rank " + std::to_string(m_job->rank()) + " is bound to " + std::to_string(usable) +
                                  " of its node's " + std::to_string(ThreadPool::machineThreads()) +
                                  " CPUs, so it compiles on " + std::to_string(threads) + " thread" +
                                  (threads == 1 ? "" : "s") +
                                  " (mpirun binds each rank to a core unless given --bind-to none, or --map-by "
                                  "...:PE=N for N a rank)");
        return compileServiceOptions(m_spec, threads, !m_request.noCache, m_request.cacheDir);
    }

    const TuneRequest& m_request;
    const BackendSpec& m_spec;
    const TuneEvents& m_events;
    std::unique_ptr<MpiJob> m_job;
    ClusterOptions m_options;
    SlotFactory m_slots;
    std::unique_ptr<ClusterBackend> m_backend;
};

} // namespace

std::unique_ptr<TuneCluster> joinMpiJob(const TuneRequest& request, const BackendSpec& spec, const TuneEvents& events) {
    return std::make_unique<MpiCluster>(request, spec, events);
}

} // namespace tilescope
