// Benchmark of the compile service on kernels/sgemm: configs compiled per second by one thread
// and by the pool (one thread per hardware thread), then the same configs again, served from
// the on-disk cache. Prints the figures for the manual's performance reports
// (resources/docs/performance.md); exits 1 when the cache misses its bar (at least 99 % hits and
// 50x faster than the pool).
//
//   bench_compile [CONFIGS=32] [ARCH=sm_90] [THREADS=hardware threads]

#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

using namespace tilescope;
namespace fs = std::filesystem;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const std::size_t colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(colon + 2);
        }
    }
    return "unknown CPU";
}

struct Run {
    std::vector<CompileResult> results;
    double seconds = 0;
};

Run timed(CompileService& service, const std::vector<CompileRequest>& requests) {
    Run run;
    const auto start = std::chrono::steady_clock::now();
    run.results = service.compileAll(requests);
    run.seconds = secondsSince(start);
    return run;
}

} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ||
                     std::strtoull(argv[1], nullptr, 10) == 0)) {
        std::printf("usage: bench_compile [CONFIGS=32] [ARCH=sm_90] [THREADS=hardware threads]\n"
                    "Compiles a seeded sample of sgemm configs with one thread, with the pool, then again\n"
                    "from the on-disk cache, and checks the cache's hit rate and speed-up.\n");
        return argc > 1 && std::string(argv[1]).rfind("-", 0) == 0 ? 0 : 2;
    }
    const std::uint64_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 32;
    const std::string arch = argc > 2 ? argv[2] : "sm_90";
    const unsigned threads = argc > 3 ? static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10)) : 0;

    const TuningProblem problem = TuningProblem::load(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const RequestBuilder builder(problem);
    std::vector<CompileRequest> requests;
    for (std::uint64_t index : space.sample(count, 1))
        requests.push_back(builder.request(space.at(index), arch));

    const fs::path cacheDir = fs::temp_directory_path() / ("tilescope-bench-compile-" + std::to_string(::getpid()));
    fs::remove_all(cacheDir);
    auto cache = std::make_shared<CompileCache>(CompileCacheOptions{cacheDir, std::uint64_t(1) << 30});

    CompileService one({1, nullptr});
    CompileService pool({threads, cache});
    std::printf("bench_compile: %zu sgemm configs (sample seed 1) for %s, NVRTC %s, %u hardware threads (%s)\n",
                requests.size(), arch.c_str(), nvrtcVersionString().c_str(), ThreadPool::machineThreads(),
                cpuModel().c_str());

    const Run serial = timed(one, requests);
    double compileSum = 0, slowest = 0;
    for (const CompileResult& r : serial.results) {
        compileSum += r.seconds;
        slowest = std::max(slowest, r.seconds);
    }
    std::printf("  1 thread:              %zu compiles in %7.2f s  %7.2f compiles/s  (NVRTC %.2f s per config, "
                "slowest %.2f s)\n",
                requests.size(), serial.seconds, static_cast<double>(requests.size()) / serial.seconds,
                compileSum / static_cast<double>(requests.size()), slowest);

    const Run parallel = timed(pool, requests); // fills the empty cache
    std::printf("  pool of %2u threads:    %zu compiles in %7.2f s  %7.2f compiles/s  %.2fx one thread\n",
                pool.threadCount(), requests.size(), parallel.seconds,
                static_cast<double>(requests.size()) / parallel.seconds, serial.seconds / parallel.seconds);

    const CompileCacheStats before = cache->stats();
    const Run cached = timed(pool, requests);
    const CompileCacheStats after = cache->stats();
    const double hits = static_cast<double>(after.hits - before.hits);
    const double hitRate = 100.0 * hits / static_cast<double>(requests.size());
    const double speedup = parallel.seconds / cached.seconds;
    std::printf("  cached, %2u threads:    %zu results in %7.4f s  %7.0f results/s  %.1f %% hits, %.0fx the pool\n",
                pool.threadCount(), requests.size(), cached.seconds,
                static_cast<double>(requests.size()) / cached.seconds, hitRate, speedup);
    std::printf("  cache: %llu entries, %.1f MB on disk\n", static_cast<unsigned long long>(cache->entryCount()),
                static_cast<double>(cache->diskUsage()) / 1e6);

    int mismatches = 0;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const CompileResult& a = serial.results[i];
        const CompileResult& b = cached.results[i];
        if (a.status != b.status || !(a.info == b.info) || a.cubin != b.cubin)
            ++mismatches;
    }
    if (mismatches > 0)
        std::printf("  %d results differ between the first compile and the cache\n", mismatches);
    fs::remove_all(cacheDir);

    const bool ok = mismatches == 0 && hitRate >= 99.0 && speedup >= 50.0;
    if (!ok)
        std::printf("FAILED: the cache must serve >= 99 %% hits >= 50x faster than compiling, the same results\n");
    return ok ? 0 : 1;
}
