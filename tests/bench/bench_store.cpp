// Results ingested per second by the results database:
//   bulk        appendMany() in one transaction, as import does (goal >= 50,000/s)
//   one by one  append() per result and a flush per batch of 16, as a tuning session does
//               (committed within 100 ms; goal >= 1,000/s)
//   each commit append() + flush() per result: the worst case, every result its own transaction
// plus reading a session back (what show/export/the GUI do) and a whole replayed session of the
// SGEMM space (strategy + replay + store), results per second end to end.
//
//   build/release/tests/bench/bench_store [results] [repeats]

#include "measure/replay/replaybackend.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/tuningsession.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <time.h>

using namespace tilescope;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
}

// CPU time of this process: on a loaded machine, the rate it would have on an idle one.
double cpuSeconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Realistic rows: a 7-parameter config, full timing, static info, two metrics.
std::vector<ResultRecord> makeResults(std::size_t n) {
    std::vector<ResultRecord> out(n);
    for (std::size_t i = 0; i < n; ++i) {
        ResultRecord& r = out[i];
        r.spaceIndex = i;
        r.config = ConfigValues{};
        r.config["BLOCK_M"] = 32 << (i % 4);
        r.config["BLOCK_N"] = 32 << ((i / 4) % 4);
        r.config["BLOCK_K"] = 8 << ((i / 16) % 3);
        r.config["THREAD_M"] = 1 << ((i / 48) % 5);
        r.config["THREAD_N"] = 1 << ((i / 240) % 5);
        r.config["VEC"] = 1 << ((i / 1200) % 3);
        r.config["STAGES"] = static_cast<int>(i / 3600); // makes every config distinct
        Measurement& m = r.measurement;
        m.status = i % 10 ? ResultStatus::Ok : ResultStatus::CompileError;
        const double t = 1.0 + double(i % 1000) * 1e-3;
        m.time = {t, t * 0.99, t * 1.03, t * 0.004, 25};
        m.compileSeconds = 0.4;
        m.benchmarkSeconds = 0.06;
        m.metrics = {{"dram__bytes_read.sum", 1.6e8}, {"sm__warps_active.avg.pct_of_peak_sustained_active", 48.0}};
        StaticInfo info;
        info.registers = 96;
        info.sharedStatic = 16384;
        m.staticInfo = info;
        r.blockSize = 256;
        r.occupancy = 50.0;
        r.objective = 100.0 / t;
    }
    return out;
}

SessionInfo session() {
    SessionInfo s;
    s.kernel = "sgemm";
    s.backend = "bench";
    s.parameters = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "THREAD_M", "THREAD_N", "VEC", "STAGES"};
    return s;
}

} // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tilescope-bench-store";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::vector<ResultRecord> results = makeResults(n);
    const std::size_t oneByOne = std::min<std::size_t>(n, 20000);
    const std::size_t eachCommit = std::min<std::size_t>(n, 5000);

    std::vector<double> bulk, single, committed, reads, bulkCpu, singleCpu;
    for (int r = 0; r < repeats; ++r) {
        const auto db = dir / ("bench" + std::to_string(r) + ".db");
        ResultStore store = ResultStore::open(db);

        std::int64_t id = store.createSession(session());
        auto start = Clock::now();
        double cpu = cpuSeconds();
        store.appendMany(id, results);
        bulk.push_back(double(n) / seconds(start));
        bulkCpu.push_back(double(n) / (cpuSeconds() - cpu));

        id = store.createSession(session());
        start = Clock::now();
        cpu = cpuSeconds();
        for (std::size_t i = 0; i < oneByOne; ++i) {
            store.append(id, results[i]);
            if (i % 16 == 15)
                store.flush(); // the session flushes after every batch
        }
        store.flush();
        single.push_back(double(oneByOne) / seconds(start));
        singleCpu.push_back(double(oneByOne) / (cpuSeconds() - cpu));

        id = store.createSession(session());
        start = Clock::now();
        for (std::size_t i = 0; i < eachCommit; ++i) {
            store.append(id, results[i]);
            store.flush();
        }
        committed.push_back(double(eachCommit) / seconds(start));

        start = Clock::now();
        const auto back = store.results(1, true);
        reads.push_back(double(back.size()) / seconds(start));
        if (back.size() != n) {
            std::fprintf(stderr, "read back %zu of %zu results\n", back.size(), n);
            return 1;
        }
    }

    // A replayed session: the SGEMM space, every config, from a recording made of the bulk rows'
    // timing model (exhaustive; strategy, replay lookup, store and events all included).
    double sessionRate = 0;
    std::size_t sessionResults = 0;
    {
        const TuningProblem problem = TuningProblem::load(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
        const ConfigSpace space = ConfigSpace::build(problem);
        SessionData recording;
        recording.info.kernel = "sgemm";
        recording.info.parameters = session().parameters;
        recording.info.problemSize = {4096, 4096};
        for (std::uint64_t i = 0; i < space.size(); ++i) {
            ResultRecord r = results[i % results.size()];
            r.config = ConfigValues{};
            const Config c = space.at(i);
            for (int p = 0; p < space.parameterCount(); ++p)
                r.config[space.parameterName(p)] = space.value(c, p).i;
            recording.results.push_back(r);
        }
        std::vector<double> rates;
        for (int r = 0; r < repeats; ++r) {
            ReplayBackend backend({recording}, "bench recording");
            ResultStore store = ResultStore::open(dir / ("session" + std::to_string(r) + ".db"));
            TuningSession tuning(problem, backend, store, {});
            const auto start = Clock::now();
            const SessionSummary summary = tuning.run();
            rates.push_back(double(summary.progress.thisRun) / seconds(start));
            sessionResults = summary.progress.thisRun;
        }
        sessionRate = median(rates);
    }
    std::filesystem::remove_all(dir);

    std::printf("results database ingest (median of %d runs, %zu-result rows with 7 parameters, static info and 2 "
                "metrics)\n",
                repeats, n);
    std::printf("  bulk (appendMany, one transaction, %zu results)         %10.0f results/s   goal >= 50,000/s  "
                "(%.0f/s of CPU time)\n",
                n, median(bulk), median(bulkCpu));
    std::printf("  one by one (append, flush per batch of 16, %zu results)  %10.0f results/s   goal >= 1,000/s  "
                "(%.0f/s of CPU time)\n",
                oneByOne, median(single), median(singleCpu));
    std::printf("  every result its own commit (%zu results)                %10.0f results/s\n", eachCommit,
                median(committed));
    std::printf("  reading a session back, ranked (%zu results)            %10.0f results/s\n", n, median(reads));
    std::printf("  a replayed session, SGEMM space exhaustive (%zu results)  %10.0f results/s end to end\n",
                sessionResults, sessionRate);
    const bool met = median(bulk) >= 50000 && median(single) >= 1000;
    std::printf("%s\n", met ? "goals met" : "goals missed (bulk >= 50,000/s, one by one >= 1,000/s)");
    return met ? 0 : 1;
}
