// Benchmark of the check of which output elements a config wrote (measure/cuda/outputcheck.h):
// the host's share of it, per config: verifying, what it adds to the comparison with the
// reference it runs inside; with --no-verify, its own pass over the output; on float outputs of the sizes the shipped
// problems write. With the benchmark time a config takes (`show DB --json`, benchmark_s) this gives the check's cost
// per config for the performance reports (resources/docs/performance.md). The device's share, filling the outputs with
// the canary, is one memset of the output before the checked launch.
//
//   bench_outputcheck [TYPE:VALUES ...]   (default: float:4194304 float:16777216 float:67108864;
//                                          TYPE float or bfloat16)

#include "measure/cuda/argumentdata.h"
#include "measure/cuda/outputcheck.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace tilescope;

namespace {

template <typename Fn>
double medianMs(int runs, const Fn& fn) {
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        fn();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
    return ms[ms.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::pair<std::string, std::int64_t>> outputs;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const std::size_t colon = arg.find(':');
        outputs.emplace_back(colon == std::string::npos ? "float" : arg.substr(0, colon),
                             std::atoll(arg.c_str() + (colon == std::string::npos ? 0 : colon + 1)));
    }
    if (outputs.empty())
        outputs = {
            {"float", std::int64_t{1} << 22}, {"float", std::int64_t{1} << 24}, {"float", std::int64_t{1} << 26}};
    std::printf("hardware threads %u\n", std::thread::hardware_concurrency());
    std::printf("%10s %12s %10s %12s %14s %10s %10s %14s\n", "type", "values", "MiB", "compare ms", "+ check ms",
                "added", "scan ms", "ReadWrite ms");
    for (const auto& [type, n] : outputs) {
        ArgumentSpec out;
        out.name = "out";
        out.typeName = type;
        out.element = type == "bfloat16" ? ElementType::BFloat16 : ElementType::Float;
        out.count = n;
        out.access = Access::WriteOnly;
        out.verify = true;
        const std::size_t size = elementSize(out.element);
        std::vector<unsigned char> refBytes(static_cast<std::size_t>(n) * size), runBytes;
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (std::int64_t i = 0; i < n; ++i) {
            const float v = u(rng);
            if (size == 4) {
                std::memcpy(refBytes.data() + i * 4, &v, 4);
            } else {
                const std::uint16_t b = bfloat16FromFloat(v);
                std::memcpy(refBytes.data() + i * 2, &b, 2);
            }
        }
        runBytes = refBytes;
        for (std::size_t i = 0; i < runBytes.size(); i += 97 * size)
            runBytes[i] ^= 1; // the last bit of a value: within the tolerance
        const ElementMask refWritten = writtenOver(out, refBytes, kCanary);
        const ElementMask refFinite = finiteValues(out, refBytes);

        // Verifying, the check runs inside the comparison: its cost is the difference.
        std::int64_t sink = 0;
        const double compare = medianMs(7, [&] {
            sink += compareValues(out, runBytes, refBytes, Validation::Normalized, defaultTolerance(out.element)).ok;
        });
        const WriteCheck check{true, kCanary, {}};
        const double checked = medianMs(7, [&] {
            const Verdict v =
                compareValues(out, runBytes, refBytes, Validation::Normalized, defaultTolerance(out.element), &check);
            sink += v.ok + v.unwritten.count + v.extra + v.nonFinite.count;
        });
        // Not verifying (--no-verify): one pass over the output alone.
        const double scan = medianMs(7, [&] {
            const OutputScan found = scanOutput(out, runBytes, kCanary, {}, refWritten, refFinite);
            sink += found.unwritten.count + found.extra + found.nonFinite.count;
        });
        // A ReadWrite output: changed from its initial contents instead of the canary.
        ArgumentSpec rw = out;
        rw.access = Access::ReadWrite;
        const std::vector<unsigned char> initial(refBytes.size(), 0);
        const double readWrite = medianMs(
            7, [&] { sink += scanOutput(rw, runBytes, kCanary, initial, refWritten, refFinite).unwritten.count; });
        std::printf("%10s %12lld %10.0f %12.2f %14.2f %10.2f %10.2f %14.2f\n", type.c_str(), static_cast<long long>(n),
                    static_cast<double>(refBytes.size()) / (1 << 20), compare, checked, checked - compare, scan,
                    readWrite);
        if (sink < 0)
            std::printf("unreachable\n");
    }
    return 0;
}
