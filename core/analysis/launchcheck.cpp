#include "analysis/launchcheck.h"

#include "analysis/boundsreach.h"
#include "base/error.h"
#include "base/textformat.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/launchgeometry.h"
#include "spec/launchplan.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace tilescope {

namespace {

// Thresholds, wide enough for kernels that give a row a block (a softmax: 128 threads an
// element) or a thread a tile of a GEMM (ProblemSize counting M x N x K: 1/32768): a launch this
// many times more or fewer threads than elements is far off; a GlobalSize this many times the
// grid launched (or a 16th of it) disagrees.
constexpr double kFarMore = 256.0;
constexpr double kFarFewer = 1.0 / double(1 << 20);
constexpr double kDisagree = 16.0;

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

// A pointer declared as float4 or half2 counts T1 elements of its type; float or half, values.
bool vectorPointee(const std::string& type) {
    return !type.empty() && std::isdigit(static_cast<unsigned char>(type.back()));
}

// What the buffer-edge check found for the sampled configs: a buffer smaller than what the kernel's
// bounds checks let it index (the one warning that reads the kernel's source, analysis/boundsreach.h),
// and the buffers whose indexes it could not decide.
struct BufferEdges {
    std::optional<LaunchWarning> warning;
    std::vector<LaunchWarning> undecided;
};

BufferEdges bufferEdges(const TuningProblem& problem, std::size_t shapeIndex, const LaunchPlanner& plan,
                        const GeometryPlanner& geometry, const ConfigSpace& space, const std::vector<Config>& configs) {
    BufferEdges out;
    const RequestBuilder builder(problem, shapeIndex); // reads the kernel file
    const KernelReach reach(builder.source(), problem.kernelName, headerSearch(problem));
    const std::vector<ArgumentSpec>& args = plan.arguments();
    if (reach.argumentNames().size() != args.size() || reach.indexes().empty())
        return out;
    std::map<std::string, std::string> scalars;
    for (std::size_t a = 0; a < args.size(); ++a) {
        const double v = args[a].scalarValue;
        if (args[a].memory == MemoryKind::Scalar && std::trunc(v) == v && std::fabs(v) < 9.0e15)
            scalars[reach.argumentNames()[a]] = std::to_string(static_cast<long long>(v));
    }
    struct Over {
        std::size_t configs = 0;
        std::int64_t reach = 0, elements = 0;
        const BoundedIndex* index = nullptr;
        std::string config;
    };
    std::map<std::size_t, Over> over; // by argument
    struct Unknown {
        std::string why; // the first config's reason
        bool decided = false;
    };
    std::map<const BoundedIndex*, Unknown> unknown; // indexes not decided for some config
    for (const Config& config : configs) {
        std::map<std::string, std::string> values = scalars;
        for (auto& [name, value] : builder.defines(config))
            values[name] = value;
        // The launch bounds threadIdx and blockIdx.
        const LaunchGeometry g = geometry.plan(config);
        for (std::size_t d = 0; d < 3 && g.ok(); ++d) {
            values[std::string("blockDim.") + "xyz"[d]] = std::to_string(g.block[d]);
            values[std::string("gridDim.") + "xyz"[d]] = std::to_string(g.grid[d]);
        }
        std::set<std::size_t> counted;
        for (const BoundedIndex& index : reach.indexes()) {
            if (index.argument >= args.size() || !args[index.argument].isVector())
                continue;
            const ArgumentSpec& a = args[index.argument];
            const std::int64_t elements = vectorPointee(reach.pointee(index.argument)) ? a.count : a.values();
            const IndexReach r = reach.reach(index, values);
            if (!r.compiled)
                continue;
            if (!r.largest) {
                unknown.try_emplace(&index, Unknown{r.unknown, false});
                continue;
            }
            unknown[&index].decided = true;
            if (*r.largest < elements)
                continue;
            Over& o = over[index.argument];
            if (counted.insert(index.argument).second)
                ++o.configs;
            if (*r.largest + 1 > o.reach) {
                o.reach = *r.largest + 1;
                o.elements = elements;
                o.index = &index;
                o.config = space.describe(config);
            }
        }
    }
    const std::string file = std::filesystem::path(problem.kernelFile).filename().string();
    const auto where = [&](const BoundedIndex& index) {
        return file + ":" + std::to_string(index.line) + ", " + index.access +
               (index.through.empty() ? std::string() : " (" + index.through + ")");
    };
    const auto sizeAt = [&](std::size_t argument) {
        return "/KernelSpecification/Arguments/" + std::to_string(args[argument].index) + "/Size";
    };

    // A buffer with an index decided for no sampled config: its silence says nothing.
    std::map<std::size_t, std::vector<const BoundedIndex*>> undecided;
    std::map<std::size_t, std::size_t> indexesOf;
    for (const auto& [index, u] : unknown) {
        ++indexesOf[index->argument];
        if (!u.decided)
            undecided[index->argument].push_back(index);
    }
    for (auto& [argument, indexes] : undecided) {
        std::sort(indexes.begin(), indexes.end(),
                  [](const BoundedIndex* a, const BoundedIndex* b) { return a->at < b->at; });
        const BoundedIndex& first = *indexes.front();
        const std::size_t all = indexesOf[argument];
        const std::size_t n = indexes.size();
        const std::string counted = all == 1   ? std::string("its one index")
                                    : n == all ? "all " + std::to_string(all) + " of its indexes"
                                               : std::to_string(n) + " of its " + std::to_string(all) + " indexes";
        out.undecided.push_back({"buffer-edge", sizeAt(argument),
                                 "could not decide how far the kernel indexes " + args[argument].label() + " (" +
                                     counted + ", for none of " + std::to_string(configs.size()) +
                                     " sampled valid configs): " + (n == 1 ? "at " : "the first at ") + where(first) +
                                     ", " + unknown[&first].why + "; its Size is not checked against " +
                                     (n == 1 ? "it" : "them")});
    }

    if (over.empty())
        return out;
    const auto& [argument, o] = *over.begin();
    const ArgumentSpec& a = args[argument];
    const std::string& size = problem.arguments[a.index].size;
    std::string others;
    for (auto it = std::next(over.begin()); it != over.end(); ++it)
        others += "; " + args[it->first].label() + " too, at " + file + ":" + std::to_string(it->second.index->line);
    out.warning = LaunchWarning{
        "buffer-edge", sizeAt(argument),
        a.label() + " holds " + formatCount(static_cast<double>(o.elements)) +
            (o.elements == 1 ? " element" : " elements") + " (Size \"" + size +
            "\"), but the kernel's bounds checks let it reach " + formatCount(static_cast<double>(o.reach)) +
            " elements: at " + where(*o.index) +
            (o.index->checks.empty() ? std::string() : " under " + o.index->checks) +
            ", with each name at the largest value its checks, loops, declaration and the launch allow, for " +
            std::to_string(o.configs) + " of " + std::to_string(configs.size()) + " sampled valid configs (for " +
            o.config + "): the threads at the launch's edge reach past its end" + others +
            ". Size it for the largest index (max() of a tuning parameter stands for its largest value), check the "
            "kernel's bounds, or " +
            silenceHint("buffer-edge")};
    return out;
}

// Tuning parameters that the kernel's own source redefines (or undefines) for every config, so
// that every value of them compiles to the same code: a kernel written for Kernel Tuner that
// keeps its defaults without the #ifndef kernel_tuner guard, or a left-over #define.
std::optional<LaunchWarning> redefinedParameters(const TuningProblem& problem) {
    const RequestBuilder builder(problem); // reads the kernel file
    std::vector<std::string> names;
    for (const TuningParameter& p : problem.parameters) {
        if (p.values.size() > 1)
            names.push_back(p.name);
    }
    const std::vector<Redefinition> found = findRedefinitions(builder.source(), names, kernelTunerDefines());
    if (found.empty())
        return std::nullopt;
    const std::string file = std::filesystem::path(problem.kernelFile).filename().string();
    std::vector<std::string> parameters;
    std::string lines;
    for (const Redefinition& r : found) {
        if (std::find(parameters.begin(), parameters.end(), r.name) == parameters.end())
            parameters.push_back(r.name);
        lines += (lines.empty() ? "" : "; ") + file + ":" + std::to_string(r.line) + " " + r.text;
    }
    std::string list;
    for (std::size_t i = 0; i < parameters.size(); ++i)
        list += (i == 0 ? "" : i + 1 == parameters.size() ? " and " : ", ") + parameters[i];
    const bool one = parameters.size() == 1;
    return LaunchWarning{
        "inert-parameter",
        "/ConfigurationSpace/TuningParameters/" + std::to_string(problem.parameterIndex(parameters.front())),
        list + (one ? " does" : " do") + " not change the compiled kernel: the kernel redefines " +
            (one ? "it" : "them") + " for every config (" + lines +
            "), which replaces the value each config defines, so every value of " + (one ? "it" : "them") +
            " compiles to the same code. Kernel Tuner's examples keep such defaults under #ifndef kernel_tuner; "
            "guard or remove the line, or " +
            silenceHint("inert-parameter")};
}

} // namespace

std::vector<LaunchWarning> checkLaunch(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space,
                                       std::size_t sampleSize) {
    std::vector<LaunchWarning> out;
    try {
        const GeometryPlanner planner(problem, shapeIndex);
        // The arguments as the worker builds them; a problem the worker cannot build (a custom
        // type) is judged without them.
        std::unique_ptr<LaunchPlanner> arguments;
        try {
            arguments = std::make_unique<LaunchPlanner>(problem, shapeIndex);
        } catch (const std::exception&) {
        }
        // What the launch should cover: ProblemSize's elements; without ProblemSize, at most the
        // values of the largest buffer (a reduction reads far more than it writes) and at least
        // those of the largest output.
        expr::ValueList storage;
        problem.shapeSlots(shapeIndex, storage); // ProblemSize of the shape
        double elements = 1;
        std::array<std::int64_t, 3> problemSize{1, 1, 1};
        const auto items = storage.items();
        for (std::size_t i = 0; i < items.size() && i < 3; ++i) {
            problemSize[i] = items[i].i;
            elements *= static_cast<double>(items[i].i);
        }
        struct Measure {
            double values = 0;
            std::string what;  // "ProblemSize has elements", "its largest output, argument 'y', has values"
            std::string shown; // "1000 x 300 x 1 = 300,000 elements"
        };
        std::optional<Measure> most, least;
        std::string coverageAt = "/KernelSpecification/ProblemSize";
        const bool byProblemSize = !problem.problemSize.empty();
        if (byProblemSize) {
            most = least = Measure{elements, "ProblemSize has elements",
                                   dims(problemSize) + " = " + formatCount(elements) + " elements"};
        } else if (arguments) {
            const ArgumentSpec *buffer = nullptr, *output = nullptr;
            for (const ArgumentSpec& a : arguments->arguments()) {
                if (a.isVector() && (!buffer || a.values() > buffer->values()))
                    buffer = &a;
                if (a.isOutput() && (!output || a.values() > output->values()))
                    output = &a;
            }
            const auto measureOf = [](const ArgumentSpec* a, const char* role) {
                const double values = static_cast<double>(a->values());
                return Measure{values, std::string("its largest ") + role + ", " + a->label() + ", has values",
                               formatCount(values) + " values in " + a->label()};
            };
            if (buffer)
                most = measureOf(buffer, "buffer");
            if (output)
                least = measureOf(output, "output");
            coverageAt = "/KernelSpecification/GlobalSize";
        }
        // GlobalSize is compared with the grid launched when it is not what is launched.
        const bool globalUnread =
            planner.gridRule() == GridRule::ProblemSizeOverGridDiv && !problem.globalSize.x.empty();

        std::vector<double> moreThanMost, fewerThanLeast, globalRatio;
        std::vector<Config> planned;
        std::size_t overLimits = 0;
        std::string moreExample, fewerExample, globalExample, limitExample;
        for (const std::uint64_t index : space.sample(std::min<std::uint64_t>(sampleSize, space.size()), 0)) {
            const Config config = space.at(index);
            const LaunchGeometry g = planner.plan(config);
            if (!g.ok())
                continue;
            planned.push_back(config);
            const double blocks =
                static_cast<double>(g.grid[0]) * static_cast<double>(g.grid[1]) * static_cast<double>(g.grid[2]);
            const double threads = blocks * static_cast<double>(g.threadsPerBlock());
            const auto example = [&](const Measure& m) {
                return "for " + space.describe(config) + ": a grid of " + dims(g.grid) + " blocks of " + dims(g.block) +
                       " threads, " + formatCount(threads) + " threads for " + m.shown;
            };
            if (most) {
                moreThanMost.push_back(threads / most->values);
                if (moreExample.empty())
                    moreExample = example(*most);
            }
            if (least) {
                fewerThanLeast.push_back(threads / least->values);
                if (fewerExample.empty())
                    fewerExample = example(*least);
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
        const std::string sampled = " (the median of " + std::to_string(planned.size()) + " sampled valid configs; ";
        const auto coverageWarning = [&](double r, const Measure& m, const std::string& example) {
            out.push_back({"launch-coverage", coverageAt,
                           "the launch covers " + times(r) + " threads than " + m.what + sampled + example +
                               "). A kernel whose threads each handle one element launches about as many threads "
                               "as elements" +
                               (byProblemSize ? std::string() : " (give ProblemSize to measure by it instead)") +
                               "; check GlobalSize, LocalSize and GridDiv, or " + silenceHint("launch-coverage") +
                               " if its threads are meant to be that many"});
        };
        if (!silenced("launch-coverage")) {
            if (!moreThanMost.empty() && median(moreThanMost) >= kFarMore)
                coverageWarning(median(moreThanMost), *most, moreExample);
            else if (!fewerThanLeast.empty() && median(fewerThanLeast) <= kFarFewer)
                coverageWarning(median(fewerThanLeast), *least, fewerExample);
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
        if (!planned.empty() && overLimits * 2 > planned.size() && !silenced("launch-limits"))
            out.push_back({"launch-limits", "/KernelSpecification",
                           std::to_string(overLimits) + " of " + std::to_string(planned.size()) +
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
        // The buffer-edge check reads CUDA C++: a Triton kernel's Python is not for it.
        if (arguments && !planned.empty() && !silenced("buffer-edge") && problem.isCuda()) {
            try {
                if (std::optional<LaunchWarning> w =
                        bufferEdges(problem, shapeIndex, *arguments, planner, space, planned).warning)
                    out.push_back(std::move(*w));
            } catch (const std::exception&) {
                // The kernel file cannot be read: compiling it will say so.
            }
        }
    } catch (const std::exception&) {
        // The launch cannot be planned at all: the problem's launch blockers say why.
    }
    const bool inertSilenced = std::find(problem.silencedWarnings.begin(), problem.silencedWarnings.end(),
                                         "inert-parameter") != problem.silencedWarnings.end();
    if (!inertSilenced && problem.isCuda()) {
        try {
            if (std::optional<LaunchWarning> w = redefinedParameters(problem))
                out.push_back(std::move(*w));
        } catch (const std::exception&) {
            // The kernel file cannot be read: compiling it will say so.
        }
    }
    return out;
}

std::vector<LaunchWarning> bufferEdgeNotes(const TuningProblem& problem, std::size_t shapeIndex,
                                           const ConfigSpace& space, std::size_t sampleSize) {
    if (std::find(problem.silencedWarnings.begin(), problem.silencedWarnings.end(), "buffer-edge") !=
        problem.silencedWarnings.end())
        return {};
    try {
        const GeometryPlanner planner(problem, shapeIndex);
        const LaunchPlanner arguments(problem, shapeIndex);
        std::vector<Config> planned;
        for (const std::uint64_t index : space.sample(std::min<std::uint64_t>(sampleSize, space.size()), 0)) {
            Config config = space.at(index);
            if (planner.plan(config).ok())
                planned.push_back(std::move(config));
        }
        if (!planned.empty() && problem.isCuda())
            return bufferEdges(problem, shapeIndex, arguments, planner, space, planned).undecided;
    } catch (const std::exception&) {
        // A launch that cannot be planned, or a kernel that cannot be read: said elsewhere.
    }
    return {};
}

} // namespace tilescope
