// Config-space enumeration: a 10-parameter GEMM-like space, 10^7 raw configs, about 1 % valid
// (tests/bench/data/space10.json), next to the naive method: every raw config tested against
// every condition (the same compiled expressions). Correctness first: both counts must agree.
//
//   build/release/tests/bench/bench_space [problem.json] [repeats]

#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace tilescope;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Every raw config in mixed-radix order, all conditions evaluated (with short-circuit across
// conditions, as a hand-written filter would).
std::uint64_t bruteForce(const TuningProblem& problem) {
    const expr::Scope scope = problem.scope();
    expr::ValueList storage;
    std::vector<expr::Value> slots = problem.shapeSlots(0, storage);
    std::vector<expr::Expression> conditions;
    for (const auto& c : problem.conditions)
        conditions.push_back(expr::Expression::compile(c.expression, scope));
    const std::size_t P = problem.parameters.size();
    std::vector<std::size_t> idx(P, 0);
    for (std::size_t p = 0; p < P; ++p)
        slots[p] = problem.parameters[p].values[0];
    std::uint64_t valid = 0;
    while (true) {
        bool ok = true;
        for (const auto& c : conditions) {
            expr::Value out;
            expr::EvalStatus st;
            if (!c.tryEvaluate(slots.data(), out, st) || !expr::truthy(out)) {
                ok = false;
                break;
            }
        }
        valid += ok;
        std::size_t p = 0;
        for (; p < P; ++p) {
            if (++idx[p] < problem.parameters[p].values.size()) {
                slots[p] = problem.parameters[p].values[idx[p]];
                break;
            }
            idx[p] = 0;
            slots[p] = problem.parameters[p].values[0];
        }
        if (p == P)
            return valid;
    }
}

} // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : TILESCOPE_SOURCE_DIR "/tests/bench/data/space10.json";
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 7;
    const TuningProblem problem = TuningProblem::load(path);

    std::vector<double> times;
    std::uint64_t valid = 0;
    double raw = 0;
    for (int r = 0; r < repeats; ++r) {
        const auto start = Clock::now();
        const ConfigSpace space = ConfigSpace::build(problem);
        times.push_back(seconds(start));
        valid = space.size();
        raw = space.rawSize();
    }
    const auto bfStart = Clock::now();
    const std::uint64_t bfValid = bruteForce(problem);
    const double bfTime = seconds(bfStart);
    if (bfValid != valid) {
        std::fprintf(stderr, "MISMATCH: enumeration found %llu valid configs, brute force %llu\n",
                     static_cast<unsigned long long>(valid), static_cast<unsigned long long>(bfValid));
        return 1;
    }
    const double t = median(times);
    std::printf("problem           %s\n", path.c_str());
    std::printf("parameters        %zu, conditions %zu\n", problem.parameters.size(), problem.conditions.size());
    std::printf("raw configs       %.0f\n", raw);
    std::printf("valid configs     %llu (%.2f %%)\n", static_cast<unsigned long long>(valid), 100.0 * valid / raw);
    std::printf("enumeration       %.1f ms (median of %d; min %.1f, max %.1f)\n", t * 1e3, repeats,
                *std::min_element(times.begin(), times.end()) * 1e3,
                *std::max_element(times.begin(), times.end()) * 1e3);
    std::printf("brute force       %.1f ms (every raw config against the same compiled conditions, once)\n",
                bfTime * 1e3);
    std::printf("speed-up          %.0fx\n", bfTime / t);
    return 0;
}
