// Tuning on the GPU, end to end (strategy -> NVRTC pool -> tilescope-worker -> store), on a
// shipped problem: wall time per config with a cold and a warm compile cache, and whether the
// winner repeats over several sessions of the same configs.
//
//   bench_tune_cuda [problem.json] [shape] [configs] [sessions] [metrics]
//     problem   default kernels/sgemm/sgemm.json
//     shape     default 1 (2048^3 for sgemm)
//     configs   how many configs per session (a seeded random sample, the same each session);
//               0 = the whole space (default)
//     sessions  default 3; the first with an empty compile cache
//     metrics   none (default) or default: CUPTI's default set in a separate pass
//
// Goals: at most 150 ms per config with a cold cache; the same winner (or one within
// 1 %) in every session; relative stdev of the repeated medians of the top configs at most 1 %.
// Against triton.autotune, in the same run: tests/bench/tune_overhead_vs_triton.py.

#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "measure/cuda/cudabackend.h"
#include "measure/metricnames.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/tuningsession.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace tilescope;

namespace {

struct SessionRun {
    double wallSeconds = 0;
    double compileSeconds = 0; // summed over configs (pool time, not wall)
    double benchmarkSeconds = 0;
    std::uint64_t done = 0;
    StatusCounts counts;
    std::optional<ResultRecord> best;
    std::map<std::string, double> medians; // config text -> median ms, Ok results
};

} // namespace

int main(int argc, char** argv) {
    const std::filesystem::path problemPath =
        argc > 1 ? std::filesystem::path(argv[1])
                 : std::filesystem::path(TILESCOPE_SOURCE_DIR) / "kernels/sgemm/sgemm.json";
    const std::size_t shape = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
    const std::uint64_t configs = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 0;
    const int sessions = argc > 4 ? std::atoi(argv[4]) : 3;
    const std::string metrics = argc > 5 ? argv[5] : "none";

    try {
        const TuningProblem problem = TuningProblem::load(problemPath);
        const ConfigSpace space = ConfigSpace::build(problem, shape);
        char tmpl[] = "/tmp/tilescope-bench-XXXXXX";
        const char* dir = ::mkdtemp(tmpl);
        if (!dir) {
            std::perror("mkdtemp");
            return 1;
        }
        const std::filesystem::path work = dir;
        CompileCacheOptions cacheOptions;
        cacheOptions.directory = (work / "cache").string();
        auto cache = std::make_shared<CompileCache>(cacheOptions);
        CompileService compiler({0, cache});
        ResultStore store = ResultStore::open(work / "bench.db", StoreMode::ReadWrite);

        std::printf("bench_tune_cuda: %s, shape %zu (%s), %llu of %llu configs per session, %d sessions, metrics "
                    "%s, %u compile threads\n",
                    problemPath.filename().c_str(), shape, problem.shapes.at(shape).label().c_str(),
                    static_cast<unsigned long long>(configs ? configs : space.size()),
                    static_cast<unsigned long long>(space.size()), sessions, metrics.c_str(), compiler.threadCount());

        std::vector<SessionRun> runs;
        std::string device;
        for (int s = 0; s < sessions; ++s) {
            CudaBackendOptions options;
            options.metrics = metrics == "none" ? std::vector<std::string>{} : expandMetricNames({metrics});
            options.note = [](const std::string& text) { std::fprintf(stderr, "note: %s\n", text.c_str()); };
            CudaBackend backend(options);
            SessionOptions session;
            session.shapeIndex = shape;
            session.backendLabel = "cuda:0 bench " + std::to_string(s);
            if (configs > 0) {
                session.strategy = "random";
                session.seed = 1;
                session.budget.configs = configs;
            }
            SessionEvents events;
            std::uint64_t lastShown = 0;
            events.progress = [&](const SessionProgress& p) {
                if (p.done >= lastShown + 200) {
                    lastShown = p.done;
                    std::fprintf(stderr, "  session %d: %llu/%llu, %.1f configs/s\n", s + 1,
                                 static_cast<unsigned long long>(p.done), static_cast<unsigned long long>(p.total),
                                 p.rate);
                }
            };
            TuningSession tuning(problem, backend, store, session, events, &compiler);
            const auto start = std::chrono::steady_clock::now();
            const SessionSummary summary = tuning.run();
            SessionRun run;
            run.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            run.done = summary.progress.thisRun;
            run.counts = summary.progress.counts;
            run.best = summary.progress.best;
            for (const ResultRecord& r : store.results(summary.session.id)) {
                run.compileSeconds += r.measurement.compileSeconds;
                run.benchmarkSeconds += r.measurement.benchmarkSeconds;
                if (r.ok())
                    run.medians[configJson(r.config)] = r.timeMs();
            }
            device = summary.session.deviceName;
            runs.push_back(std::move(run));
            const SessionRun& r = runs.back();
            std::printf("  session %d (%s cache): %llu configs in %.1f s = %.1f ms per config (compile %.1f s "
                        "summed over threads, GPU measurement %.1f s); ok %llu; best %.4g ms%s%s\n",
                        s + 1, s == 0 ? "cold" : "warm", static_cast<unsigned long long>(r.done), r.wallSeconds,
                        1e3 * r.wallSeconds / double(std::max<std::uint64_t>(1, r.done)), r.compileSeconds,
                        r.benchmarkSeconds, static_cast<unsigned long long>(r.counts.of(ResultStatus::Ok)),
                        r.best ? r.best->timeMs() : 0.0,
                        r.best && r.best->objective ? (" (" + std::to_string(*r.best->objective) + " " +
                                                       (problem.objective ? problem.objective->name : "") + ")")
                                                          .c_str()
                                                    : "",
                        r.best ? ("  " + configJson(r.best->config)).c_str() : "");
        }

        // Repeatability: the first session's top configs, measured again in each later session.
        bool sameWinner = true;
        double worstWinnerGap = 0;
        const std::string winner = runs.front().best ? configJson(runs.front().best->config) : std::string();
        for (std::size_t s = 1; s < runs.size(); ++s) {
            if (!runs[s].best)
                continue;
            const std::string other = configJson(runs[s].best->config);
            if (other != winner) {
                sameWinner = false;
                // Within 1 %: the other winner's time against the first winner's in that session.
                const auto it = runs[s].medians.find(winner);
                if (it != runs[s].medians.end())
                    worstWinnerGap = std::max(worstWinnerGap, it->second / runs[s].best->timeMs() - 1.0);
            }
        }
        std::vector<std::pair<double, std::string>> top;
        for (const auto& [config, median] : runs.front().medians)
            top.emplace_back(median, config);
        std::sort(top.begin(), top.end());
        top.resize(std::min<std::size_t>(top.size(), 10));
        std::vector<double> relStdevs;
        for (const auto& [median, config] : top) {
            std::vector<double> values;
            for (const SessionRun& r : runs) {
                const auto it = r.medians.find(config);
                if (it != r.medians.end())
                    values.push_back(it->second);
            }
            if (values.size() < 2)
                continue;
            double mean = 0;
            for (double v : values)
                mean += v;
            mean /= double(values.size());
            double var = 0;
            for (double v : values)
                var += (v - mean) * (v - mean);
            relStdevs.push_back(std::sqrt(var / double(values.size() - 1)) / mean);
        }
        std::sort(relStdevs.begin(), relStdevs.end());
        const double medianRel = relStdevs.empty() ? 0 : relStdevs[relStdevs.size() / 2];
        const double worstRel = relStdevs.empty() ? 0 : relStdevs.back();

        const double cold = 1e3 * runs.front().wallSeconds / double(std::max<std::uint64_t>(1, runs.front().done));
        double warm = 0;
        for (std::size_t s = 1; s < runs.size(); ++s)
            warm += 1e3 * runs[s].wallSeconds / double(std::max<std::uint64_t>(1, runs[s].done));
        warm /= double(std::max<std::size_t>(1, runs.size() - 1));
        std::printf("\ndevice %s\n", device.c_str());
        std::printf("wall per config: cold cache %.1f ms, warm cache %.1f ms\n", cold, warm);
        std::printf("winner: %s in all %d sessions%s\n", sameWinner ? "the same" : "NOT the same", sessions,
                    sameWinner ? ""
                               : (" (the first session's winner within " + std::to_string(100 * worstWinnerGap) +
                                  " % of each other session's)")
                                     .c_str());
        std::printf("repeated medians of the top %zu configs: relative stdev median %.2f %%, worst %.2f %%\n",
                    relStdevs.size(), 100 * medianRel, 100 * worstRel);
        const bool ok = cold <= 150 && (sameWinner || worstWinnerGap <= 0.01) && medianRel <= 0.01;
        std::printf("%s\n", ok ? "goals met" : "goals NOT met (150 ms per config cold, the same winner, 1 % stdev)");
        std::error_code ec;
        std::filesystem::remove_all(work, ec);
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_tune_cuda: %s\n", e.what());
        return 2;
    }
}
