// Expression evaluations per second on one core, next to the floor: the same condition
// written in C++ and compiled by the compiler (what no interpreter can beat).
//
//   build/release/tests/bench/bench_expr [seconds-per-sample]
//
// Each figure is the median of 7 samples; each sample evaluates the condition over a
// rotating set of 4096 configs (so branch prediction cannot learn one answer).

#include "expr/expr.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

using namespace tilescope::expr;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kParams = 6; // BLOCK_M BLOCK_N BLOCK_K THREAD_M THREAD_N VEC
constexpr std::size_t kConfigs = 4096;

struct Case {
    const char* name;
    const char* source;
    std::function<bool(const std::int64_t*)> native;
};

std::vector<std::array<Value, kParams>> makeConfigs() {
    std::mt19937_64 rng(42);
    const std::int64_t tiles[] = {16, 32, 64, 128, 256};
    const std::int64_t small[] = {1, 2, 4, 8, 16};
    std::vector<std::array<Value, kParams>> out(kConfigs);
    for (auto& c : out) {
        c[0] = Value::ofInt(tiles[rng() % 5]);
        c[1] = Value::ofInt(tiles[rng() % 5]);
        c[2] = Value::ofInt(small[rng() % 5] * 2);
        c[3] = Value::ofInt(small[rng() % 5]);
        c[4] = Value::ofInt(small[rng() % 5]);
        c[5] = Value::ofInt(small[rng() % 3]);
    }
    return out;
}

template <typename F>
double evalsPerSecond(F&& evaluateAll, double seconds, std::size_t& sink) {
    std::size_t evaluations = 0;
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration<double>(seconds);
    while (Clock::now() < deadline) {
        sink += evaluateAll();
        evaluations += kConfigs;
    }
    return static_cast<double>(evaluations) / std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    const double seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
    Scope scope;
    for (const char* name : {"BLOCK_M", "BLOCK_N", "BLOCK_K", "THREAD_M", "THREAD_N", "VEC"})
        scope.addVariable(name);

    const std::vector<Case> cases = {
        {"simple: BLOCK_M * BLOCK_N <= 8192", "BLOCK_M * BLOCK_N <= 8192",
         [](const std::int64_t* p) { return p[0] * p[1] <= 8192; }},
        {"divisibility: BLOCK_M % THREAD_M == 0", "BLOCK_M % THREAD_M == 0",
         [](const std::int64_t* p) { return p[0] % p[3] == 0; }},
        {"chained: 32 <= (BLOCK_M // THREAD_M) * (BLOCK_N // THREAD_N) <= 1024",
         "32 <= (BLOCK_M // THREAD_M) * (BLOCK_N // THREAD_N) <= 1024",
         [](const std::int64_t* p) {
             const std::int64_t t = (p[0] / p[3]) * (p[1] / p[4]);
             return 32 <= t && t <= 1024;
         }},
        {"compound: smem and load split",
         "4 * (BLOCK_M + BLOCK_N) * BLOCK_K <= 48 * 1024 and (BLOCK_M * BLOCK_K) % ((BLOCK_M // THREAD_M) * (BLOCK_N "
         "// THREAD_N) * VEC) == 0",
         [](const std::int64_t* p) {
             const std::int64_t threads = (p[0] / p[3]) * (p[1] / p[4]);
             return 4 * (p[0] + p[1]) * p[2] <= 48 * 1024 && threads * p[5] != 0 &&
                    (p[0] * p[2]) % (threads * p[5]) == 0;
         }},
    };

    const auto configs = makeConfigs();
    std::vector<std::array<std::int64_t, kParams>> nativeConfigs(kConfigs);
    for (std::size_t i = 0; i < kConfigs; ++i)
        for (int p = 0; p < kParams; ++p)
            nativeConfigs[i][static_cast<std::size_t>(p)] = configs[i][static_cast<std::size_t>(p)].i;

    std::size_t sink = 0;
    std::printf("%-72s %14s %14s %8s\n", "condition", "Tilescope/s", "native C++/s", "ratio");
    for (const auto& c : cases) {
        const Expression e = Expression::compile(c.source, scope);
        // correctness first: the interpreter agrees with the native condition everywhere
        for (std::size_t i = 0; i < kConfigs; ++i) {
            if (e.test(configs[i].data()) != c.native(nativeConfigs[i].data())) {
                std::fprintf(stderr, "MISMATCH on config %zu for %s\n", i, c.source);
                return 1;
            }
        }
        std::vector<double> ours, native;
        for (int rep = 0; rep < 7; ++rep) {
            ours.push_back(evalsPerSecond(
                [&] {
                    std::size_t n = 0;
                    Value out;
                    EvalStatus st;
                    for (const auto& cfg : configs) {
                        e.tryEvaluate(cfg.data(), out, st);
                        n += truthy(out);
                    }
                    return n;
                },
                seconds, sink));
            native.push_back(evalsPerSecond(
                [&] {
                    std::size_t n = 0;
                    for (const auto& cfg : nativeConfigs)
                        n += c.native(cfg.data());
                    return n;
                },
                seconds, sink));
        }
        const double o = median(ours), nat = median(native);
        std::printf("%-72s %14.3g %14.3g %8.2f\n", c.name, o, nat, nat / o);
    }
    std::printf("(checksum %zu)\n", sink % 10);
    return 0;
}
