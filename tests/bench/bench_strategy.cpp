// Proposal cost of the search strategies on a synthetic space of about 10^5 valid configs
// (tests/bench/data/space10.json), and for Bayesian optimisation the time per proposal once the
// model holds 500 observations: the median and the worst of the next proposals, each followed by
// its result, against a goal of 10 ms (on the median: a proposal that refits the model's
// hyperparameters, once per fifth more observations, costs more and is counted apart).
//
//   build/release/tests/bench/bench_strategy [problem.json] [observations] [proposals]

#include "search/strategy.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tilescope;
using Clock = std::chrono::steady_clock;

namespace {

double millis(Clock::time_point since) {
    return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// A synthetic kernel time: a smooth function of the parameters' value indices, noise, and one
// config in ten failing.
Observation evaluate(const ConfigSpace& space, std::uint64_t index) {
    Observation o;
    o.index = index;
    const Config c = space.at(index);
    double t = 1;
    for (std::size_t p = 0; p < c.size(); ++p) {
        const double centre = static_cast<double>(space.parameterValues(static_cast<int>(p)).size()) / 2;
        t += 0.05 * (static_cast<double>(p) + 1) * (c[p] - centre) * (c[p] - centre);
    }
    o.score = t * (1 + 0.02 * (static_cast<double>(mix(index) % 1000) / 1000 - 0.5));
    if (mix(index + 1) % 10 == 0)
        o.status = ResultStatus::LaunchError;
    return o;
}

struct Figures {
    double medianMs = 0;
    double worstMs = 0;
    double firstMs = 0; // the first proposal after the observations
    int slow = 0;       // proposals of 10 ms or more (for bayes: those that refit the model)
    double best = 0;    // the best score over the whole run
};

// Feeds `observations` results (the strategy's own proposals, in batches of 10) untimed, then times
// `proposals` single proposals, each followed by its result.
Figures measure(const std::string& name, const ConfigSpace& space, std::size_t observations, std::size_t proposals) {
    StrategyContext context;
    context.space = &space;
    context.seed = 1;
    context.configLimit = observations + proposals;
    if (name == "bayes-prior") {
        // Static features answered at once, as from a recording (a real session compiles each
        // config the prior ranks, once).
        context.staticFeatures = [&space](std::uint64_t index) {
            const Config c = space.at(index);
            StaticFeatures f;
            f.info.registers = 32 + 8 * (c[0] + c[1]);
            f.info.spillStores = c[0] + c[1] >= 7 ? 64 : 0;
            f.occupancy = 100.0 / (1 + c[2]);
            f.launchable = c[0] + c[1] < 8;
            return std::optional<StaticFeatures>(f);
        };
    }
    auto s = makeStrategy(name, context);
    Figures f;
    f.best = 1e300;
    std::size_t seen = 0;
    while (seen < observations) {
        const auto ids = s->propose(std::min<std::size_t>(10, observations - seen));
        std::vector<Observation> results;
        for (std::uint64_t i : ids) {
            results.push_back(evaluate(space, i));
            if (results.back().status == ResultStatus::Ok)
                f.best = std::min(f.best, results.back().score);
        }
        s->observe(results);
        seen += ids.size();
    }
    std::vector<double> times;
    for (std::size_t k = 0; k < proposals; ++k) {
        const auto start = Clock::now();
        const auto ids = s->propose(1);
        times.push_back(millis(start));
        std::vector<Observation> results;
        for (std::uint64_t i : ids) {
            results.push_back(evaluate(space, i));
            if (results.back().status == ResultStatus::Ok)
                f.best = std::min(f.best, results.back().score);
        }
        s->observe(results);
    }
    f.firstMs = times.empty() ? 0 : times.front();
    f.medianMs = median(times);
    f.worstMs = times.empty() ? 0 : *std::max_element(times.begin(), times.end());
    f.slow = static_cast<int>(std::count_if(times.begin(), times.end(), [](double t) { return t >= 10; }));
    return f;
}

} // namespace

int main(int argc, char** argv) {
    const std::string path = argc > 1 ? argv[1] : TILESCOPE_SOURCE_DIR "/tests/bench/data/space10.json";
    const std::size_t observations = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 500;
    const std::size_t proposals = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 100;
    const TuningProblem problem = TuningProblem::load(path);
    const auto built = Clock::now();
    const ConfigSpace space = ConfigSpace::build(problem);
    std::printf("space: %llu valid configs (%s), built in %.0f ms\n", static_cast<unsigned long long>(space.size()),
                path.c_str(), millis(built));
    std::printf("%zu observations, then %zu proposals of one config, each followed by its result\n\n", observations,
                proposals);
    std::printf("%-12s %12s %12s %12s %10s %12s\n", "strategy", "median ms", "worst ms", "first ms", ">= 10 ms",
                "best found");
    bool goalMet = true;
    for (const std::string name : {"random", "annealing", "genetic", "bayes", "bayes-prior"}) {
        const Figures f = measure(name, space, observations, proposals);
        std::printf("%-12s %12.3f %12.3f %12.3f %10d %12.4f\n", name.c_str(), f.medianMs, f.worstMs, f.firstMs, f.slow,
                    f.best);
        if (name == "bayes")
            goalMet = f.medianMs < 10;
    }
    std::printf("\nbayes, median time per proposal with %zu observations: goal (10 ms) %s\n", observations,
                goalMet ? "met" : "missed");
    return goalMet ? 0 : 1;
}
