#pragma once

// Measuring on the GPUs of several machines as one MPI job (Open MPI):
//
//     mpirun --enable-recovery -n N tilescope-cli tune PROBLEM --mpi ...
//
// Every rank starts the same command. Rank 0 runs the session: the strategy and the results
// database, of which it is the only writer. Each measuring rank, rank 0 included unless it only
// coordinates, drives its node's GPUs through their workers (one slot per GPU, one config at a
// time, on a thread of its own) and compiles on its node's cores: rank 0 hands each compile the
// session asks for to the rank with the most idle compile threads, which runs NVRTC through its
// compile cache (a shared --cache-dir makes a binary one rank compiled a hit for every other) and
// sends the whole result back. Rank 0 thus keeps what the session needs from a compile (static
// info, the log, the cubin its byte comparisons read) without compiling: it prunes configs over
// the device's limits, analyses occupancy and checks parameters as a session alone does. Configs
// go out one by one to whichever slot is idle, their cubins with them, so a fast GPU takes more
// and no slot waits for a batch's slowest config.
//
// A rank that dies (its node, its process) loses only the configs and compiles it had in hand:
// rank 0 notices its silence (ranks say they are alive every second) and hands them to the other
// ranks. The job survives a dead rank only when mpirun was told to (--enable-recovery); without
// it mpirun ends every rank, and what rank 0 committed stays for --resume.
//
// On rank 0 one thread of the backend's own makes every MPI call after MPI_Init (so MPI must allow
// threads: MPI_THREAD_SERIALIZED at least, which Open MPI gives): it sends, receives, hands out
// compiles and says rank 0 is alive every second, so the ranks notice its death within seconds
// whatever its session thread is doing. The other ranks call MPI from their main thread only.

#include "compile/compileservice.h"
#include "measure/backend.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

/// This process's place in the MPI job: MPI_Init on construction, MPI_Finalize on destruction
/// (unless leaveWithoutFinalize()).
/// Started outside mpirun it is a job of one rank.
class MpiJob {
public:
    MpiJob(int* argc, char*** argv);
    ~MpiJob();
    MpiJob(const MpiJob&) = delete;
    MpiJob& operator=(const MpiJob&) = delete;

    int rank() const { return m_rank; }
    int size() const { return m_size; }
    /// Among the ranks of this node: ranks that share a node share its GPUs out (localGpus).
    int localRank() const { return m_localRank; }
    int localSize() const { return m_localSize; }
    const std::string& host() const { return m_host; }
    /// Whether rank 0 runs on this node too.
    bool sharesNodeWithRank0() const { return m_withRank0; }
    /// Whether MPI may be called from a thread other than the main one, one at a time
    /// (MPI_THREAD_SERIALIZED or more): rank 0's backend needs that for its thread.
    bool threadsAllowed() const { return m_threadsAllowed; }
    /// Whether mpirun keeps the job going when a rank dies (--enable-recovery).
    bool survivesLostRanks() const;
    /// End without MPI_Finalize: it waits for every rank of the job, and one that is gone (killed,
    /// its node lost) can hold it forever. For a job that lost a rank.
    void leaveWithoutFinalize() { m_finalize = false; }

private:
    int m_rank = 0;
    int m_size = 1;
    int m_localRank = 0;
    int m_localSize = 1;
    bool m_withRank0 = true;
    bool m_threadsAllowed = false;
    bool m_finalize = true;
    std::string m_host;
};

/// The share of `devices` (a node's GPUs) of the rank at `localRank` among `localSize` ranks on
/// that node: every localSize-th device, from the localRank-th. All of them for a rank alone.
std::vector<int> localGpus(const std::vector<int>& devices, int localRank, int localSize);

/// Makes the backends that measure on this node for `problem`: one per slot (a GPU, or a
/// replay), each used by one thread at a time. Called once, at the first open.
using SlotFactory = std::function<std::vector<std::unique_ptr<Backend>>(const TuningProblem& problem)>;

/// The compile service of a rank that measures: NVRTC on its node's cores, through the compile
/// cache. Null, or nullopt: the rank compiles nothing (a replay needs no binaries).
using CompilerFactory = std::function<std::optional<CompileServiceOptions>()>;

struct ClusterOptions {
    /// A rank silent this long while it holds configs or compiles is lost; they go to other ranks.
    double silenceSeconds = 30;
    /// Each measuring rank's compile service (rank 0's own too), made once.
    CompilerFactory compiler;
    /// Notes for people (a rank lost, a rank without GPUs), each said once.
    std::function<void(const std::string&)> note;
};

/// Rank 0's backend: measures on its own slots and on every other rank's. Opening tells each
/// rank the problem (its text: the ranks need no copy of the file) and shape; every rank opens
/// its slots; a rank whose slots cannot open is left out with a note. Make it first thing on
/// rank 0: until it is destroyed (or quit() called), the other ranks wait for it.
class ClusterBackend : public Backend {
public:
    ClusterBackend(MpiJob& job, SlotFactory makeSlots, ClusterOptions options = {});
    /// Tells the ranks to exit (quit()).
    ~ClusterBackend() override;
    ClusterBackend(const ClusterBackend&) = delete;
    ClusterBackend& operator=(const ClusterBackend&) = delete;

    /// Throws InputError when no slot of any rank can measure (every reason given).
    BackendInfo open(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space) override;
    /// Throws std::runtime_error when every slot is lost with configs left to measure: what was
    /// stored stays, and --resume continues once the ranks are back.
    void measure(std::span<const MeasureItem> items, const MeasureControl& control, const MeasureSink& sink) override;
    void close() override;
    /// Tells every rank still alive to exit. Called by the destructor; safe to call twice.
    void quit();

    /// The compile service of sessions on this backend (null without ClusterOptions::compiler):
    /// it hands each compile to a measuring rank (rank 0 among them, when it measures) and returns
    /// the rank's whole result; it compiles on rank 0 only when no rank that compiles is left.
    /// Its Stats::places count the compiles of each rank ("rank 1"). Lives as long as the backend.
    CompileService* compiles();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// A rank other than 0: waits for rank 0's requests, opens the slots `makeSlots` builds,
/// compiles what it is asked to (ClusterOptions::compiler) and measures the configs it is
/// handed, sending each result back, until rank 0 says quit (0), or rank 0 is gone (1): silent for
/// ClusterOptions::silenceSeconds. Returns the process's exit status.
int serveClusterRank(MpiJob& job, const SlotFactory& makeSlots, ClusterOptions options = {});

} // namespace tilescope
