#include "analysis/launchcheck.h"

#include "base/error.h"
#include "space/configspace.h"
#include "spec/launchgeometry.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>

namespace tilescope {

namespace {

// Thresholds, wide enough for kernels that give a row a block (a softmax: 128 threads an
// element) or a thread a tile of a GEMM (ProblemSize counting M x N x K: 1/32768): a launch this
// many times more or fewer threads than elements is far off; a GlobalSize this many times the
// grid launched (or a 16th of it) disagrees.
constexpr double kFarMore = 256.0;
constexpr double kFarFewer = 1.0 / double(1 << 20);
constexpr double kDisagree = 16.0;

// 4294967296 as "4,294,967,296".
std::string formatCount(double n) {
    std::string digits = std::to_string(static_cast<long long>(std::llround(n)));
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(static_cast<std::size_t>(i), ",");
    return digits;
}

std::string silenceHint(const std::string& name) {
    return "silence it with \"Tilescope\": {\"Silence\": [\"" + name + "\"]} in the problem";
}

std::string dims(const std::array<std::int64_t, 3>& d) {
    return std::to_string(d[0]) + " x " + std::to_string(d[1]) + " x " + std::to_string(d[2]);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

std::string times(double ratio) {
    return ratio >= 1 ? formatCount(std::round(ratio)) + " times more"
                      : formatCount(std::round(1 / ratio)) + " times fewer";
}

} // namespace

std::vector<LaunchWarning> checkLaunch(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space,
                                       std::size_t sampleSize) {
    std::vector<LaunchWarning> out;
    try {
        const GeometryPlanner planner(problem, shapeIndex);
        expr::ValueList storage;
        problem.shapeSlots(shapeIndex, storage); // ProblemSize of the shape
        double elements = 1;
        std::array<std::int64_t, 3> problemSize{1, 1, 1};
        const auto items = storage.items();
        for (std::size_t i = 0; i < items.size() && i < 3; ++i) {
            problemSize[i] = items[i].i;
            elements *= static_cast<double>(items[i].i);
        }
        // GlobalSize is compared with the grid launched when it is not what is launched.
        const bool globalUnread =
            planner.gridRule() == GridRule::ProblemSizeOverGridDiv && !problem.globalSize.x.empty();

        std::vector<double> coverage, globalRatio;
        std::size_t planned = 0, overLimits = 0;
        std::string coverageExample, globalExample, limitExample;
        for (const std::uint64_t index : space.sample(std::min<std::uint64_t>(sampleSize, space.size()), 0)) {
            const Config config = space.at(index);
            const LaunchGeometry g = planner.plan(config);
            if (!g.ok())
                continue;
            ++planned;
            const double blocks =
                static_cast<double>(g.grid[0]) * static_cast<double>(g.grid[1]) * static_cast<double>(g.grid[2]);
            const double threads = blocks * static_cast<double>(g.threadsPerBlock());
            if (!problem.problemSize.empty()) {
                coverage.push_back(threads / elements);
                if (coverageExample.empty())
                    coverageExample = "for " + space.describe(config) + ": a grid of " + dims(g.grid) + " blocks of " +
                                      dims(g.block) + " threads, " + formatCount(threads) + " threads for " +
                                      dims(problemSize) + " = " + formatCount(elements) + " elements";
            }
            const bool beyond = g.threadsPerBlock() > 1024 || g.block[0] > 1024 || g.block[1] > 1024 ||
                                g.block[2] > 64 || g.grid[1] > 65535 || g.grid[2] > 65535;
            if (beyond) {
                ++overLimits;
                if (limitExample.empty())
                    limitExample = "for " + space.describe(config) + ": a grid of " + dims(g.grid) + " blocks of " +
                                   dims(g.block) + " threads";
            }
            const std::optional<std::array<std::int64_t, 3>> global =
                globalUnread ? planner.globalSizeGrid(config, g.block) : std::nullopt;
            if (global) {
                const std::array<std::int64_t, 3>& gs = *global;
                const double globalBlocks =
                    static_cast<double>(gs[0]) * static_cast<double>(gs[1]) * static_cast<double>(gs[2]);
                globalRatio.push_back(globalBlocks / blocks);
                if (globalExample.empty())
                    globalExample = "for " + space.describe(config) + ": GlobalSize gives " + dims(gs) +
                                    " blocks, ProblemSize over the block size " + dims(g.grid);
            }
        }

        const auto silenced = [&](const std::string& name) {
            return std::find(problem.silencedWarnings.begin(), problem.silencedWarnings.end(), name) !=
                   problem.silencedWarnings.end();
        };
        const std::string sampled = " (the median of " + std::to_string(planned) + " sampled valid configs; ";
        if (!coverage.empty() && !silenced("launch-coverage")) {
            const double r = median(coverage);
            if (r >= kFarMore || r <= kFarFewer)
                out.push_back({"launch-coverage", "/KernelSpecification/ProblemSize",
                               "the launch covers " + times(r) + " threads than ProblemSize has elements" + sampled +
                                   coverageExample +
                                   "). A kernel whose threads each handle one element launches "
                                   "about as many threads as elements; check GlobalSize, LocalSize and GridDiv, or " +
                                   silenceHint("launch-coverage") + " if its threads are meant to be that many"});
        }
        if (!globalRatio.empty() && !silenced("global-size")) {
            const double r = median(globalRatio);
            if (r >= kDisagree || r <= 1 / kDisagree)
                out.push_back({"global-size", "/KernelSpecification/GlobalSize",
                               "GlobalSize gives " + times(r) + " blocks than the grid launched" + sampled +
                                   globalExample +
                                   "). Tilescope launches ProblemSize over GridDiv or the block size, "
                                   "as Kernel Tuner does, and does not read GlobalSize; make GlobalSize agree or "
                                   "remove it, or " +
                                   silenceHint("global-size")});
        }
        if (planned > 0 && overLimits * 2 > planned && !silenced("launch-limits"))
            out.push_back({"launch-limits", "/KernelSpecification",
                           std::to_string(overLimits) + " of " + std::to_string(planned) +
                               " sampled valid configs exceed a CUDA device's limits (1024 threads a block, a "
                               "block of at most 1024 x 1024 x 64, a grid of at most 65535 in Y and Z; " +
                               limitExample +
                               "): they will fail to launch. Add a condition that keeps them out, "
                               "check the launch fields, or " +
                               silenceHint("launch-limits")});
        if (!silenced("varying-size")) {
            const int parameters = static_cast<int>(problem.parameters.size());
            for (std::size_t a = 0; a < problem.arguments.size(); ++a) {
                const KernelArgument& arg = problem.arguments[a];
                if (arg.sizeIsNumber || arg.size.empty())
                    continue;
                const expr::Expression size = expr::Expression::compile(arg.size, problem.scope());
                for (const int slot : size.usedSlots()) {
                    if (slot >= parameters)
                        continue;
                    const auto& p = problem.parameters[static_cast<std::size_t>(slot)];
                    if (p.values.size() < 2)
                        continue;
                    out.push_back({"varying-size", "/KernelSpecification/Arguments/" + std::to_string(a) + "/Size",
                                   "the size of argument '" + arg.name + "' (\"" + arg.size + "\") uses " + p.name +
                                       ", a tuning parameter with " + std::to_string(p.values.size()) +
                                       " values: its buffer would change size from config to config; size it for "
                                       "every config with max(" +
                                       p.name + "), or " + silenceHint("varying-size")});
                    break;
                }
            }
        }
    } catch (const std::exception&) {
        // The launch cannot be planned at all: the problem's launch blockers say why.
    }
    return out;
}

} // namespace tilescope
