#include "analysis/staticanalysis.h"

#include "base/error.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <climits>
#include <map>

namespace tilescope {

namespace {

std::string describeExprError(const expr::ExprError& error) {
    return std::string(expr::errorKindName(error.kind())) + ": " + error.message() + " in '" + error.expression() +
           "' at column " + std::to_string(error.column());
}

} // namespace

SpillClass classifySpill(const StaticInfo& info, std::int64_t heavyBytes) {
    const std::int64_t bytes = info.spillStores + info.spillLoads;
    if (bytes <= 0)
        return SpillClass::None;
    return bytes >= heavyBytes ? SpillClass::Heavy : SpillClass::Light;
}

std::string_view spillClassName(SpillClass spill) {
    switch (spill) {
    case SpillClass::None:
        return "none";
    case SpillClass::Light:
        return "light";
    case SpillClass::Heavy:
        return "heavy";
    }
    return "?";
}

namespace {
// Compiling needs what counting does not: the problem says first whether it has it.
const TuningProblem& launchable(const TuningProblem& problem) {
    problem.requireLaunchable();
    return problem;
}
} // namespace

struct StaticAnalyzer::Expressions {
    // LocalSize x, y, z (invalid = absent, i.e. 1) and SharedMemory (invalid = 0), with the
    // JSON pointer of each for messages.
    std::array<expr::Expression, 3> local;
    expr::Expression shared;
    expr::ValueList storage; // ProblemSize of the shape
    std::vector<expr::Value> shapeSlots;
};

StaticAnalyzer::StaticAnalyzer(const TuningProblem& problem, std::size_t shapeIndex)
    : m_problem(problem)
    , m_shapeIndex(shapeIndex)
    , m_requests(launchable(problem))
    , m_expressions(std::make_unique<Expressions>()) {
    const std::size_t shapes = std::max<std::size_t>(problem.shapes.size(), 1);
    if (shapeIndex >= shapes)
        throw InputError(problem.fileName, "/Tilescope/Shapes",
                         "shape " + std::to_string(shapeIndex) + " does not exist (the problem has " +
                             std::to_string(shapes) + (shapes == 1 ? " shape)" : " shapes)"));
    const expr::Scope scope = problem.scope();
    const ThreeD block = problem.blockExpressions();
    const std::array<std::pair<const std::string*, const char*>, 3> parts = {{
        {&block.x, "/KernelSpecification/LocalSize/X"},
        {&block.y, "/KernelSpecification/LocalSize/Y"},
        {&block.z, "/KernelSpecification/LocalSize/Z"},
    }};
    auto compile = [&](const std::string& text, const char* pointer) {
        try {
            return expr::Expression::compile(text, scope);
        } catch (const expr::ExprError& error) {
            throw InputError(problem.fileName, pointer, describeExprError(error));
        }
    };
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (!parts[i].first->empty())
            m_expressions->local[i] = compile(*parts[i].first, parts[i].second);
    }
    if (!problem.sharedMemory.empty())
        m_expressions->shared = compile(problem.sharedMemory, "/KernelSpecification/SharedMemory");
    m_expressions->shapeSlots = problem.shapeSlots(shapeIndex, m_expressions->storage);
}

StaticAnalyzer::~StaticAnalyzer() = default;

std::vector<std::string> StaticAnalyzer::analysableArchs() {
    std::vector<std::string> archs;
    for (const std::string& arch : supportedArchs()) {
        if (findArch(arch))
            archs.push_back(arch);
    }
    return archs;
}

void StaticAnalyzer::checkArch(const std::string& arch) {
    const std::vector<std::string> nvrtc = supportedArchs();
    std::string number = arch;
    if (findArch(arch)) {
        number = findArch(arch)->arch;
        if (std::find(nvrtc.begin(), nvrtc.end(), number) != nvrtc.end())
            return;
    }
    std::string known;
    for (const std::string& a : analysableArchs())
        known += (known.empty() ? "" : ", ") + a;
    std::string why = std::find(nvrtc.begin(), nvrtc.end(), number) != nvrtc.end()
                          ? "NVRTC compiles for it, but its occupancy limits are not in Tilescope's table"
                          : "not an arch NVRTC " + nvrtcVersionString() + " compiles for";
    throw InputError("", "--arch", "'" + arch + "': " + why + " (analysable: " + known + ")");
}

LaunchGeometry StaticAnalyzer::geometry(const Config& config) const {
    LaunchGeometry g;
    std::vector<expr::Value> slots = m_expressions->shapeSlots;
    for (std::size_t p = 0; p < m_problem.parameters.size() && p < config.size(); ++p)
        slots[p] = m_problem.parameters[p].values.at(config[p]);
    static constexpr const char* kNames[] = {"LocalSize.X", "LocalSize.Y", "LocalSize.Z"};
    g.blockSize = 1;
    for (std::size_t i = 0; i < 3; ++i) {
        const expr::Expression& e = m_expressions->local[i];
        if (!e.valid())
            continue;
        try {
            const std::int64_t n = e.evaluateInt(slots.data());
            if (n <= 0) {
                g.error = std::string(kNames[i]) + " is " + std::to_string(n);
                return g;
            }
            if (g.blockSize > INT_MAX / n) {
                g.error = "the block size overflows";
                return g;
            }
            g.blockSize *= n;
        } catch (const expr::ExprError& error) {
            g.error = std::string(kNames[i]) + ": " + describeExprError(error);
            return g;
        }
    }
    if (m_expressions->shared.valid()) {
        try {
            g.sharedDynamic = m_expressions->shared.evaluateInt(slots.data());
            if (g.sharedDynamic < 0)
                g.error = "SharedMemory is " + std::to_string(g.sharedDynamic) + " bytes";
        } catch (const expr::ExprError& error) {
            g.error = "SharedMemory: " + describeExprError(error);
        }
    }
    return g;
}

ConfigAnalysis StaticAnalyzer::analyze(std::uint64_t index, const Config& config, const std::string& arch,
                                       const CompileResult& result) const {
    ConfigAnalysis a;
    a.index = index;
    a.config = config;
    a.arch = arch;
    a.status = result.status;
    a.message = result.message;
    a.info = result.info;
    a.compileSeconds = result.seconds;
    a.cached = result.cached;
    a.geometry = geometry(config);
    if (!result.ok()) {
        a.log = result.log;
        return a;
    }
    a.spill = classifySpill(result.info);
    if (!a.geometry.error.empty()) {
        a.message = a.geometry.error;
        return a;
    }
    if (const ArchLimits* limits = findArch(arch)) {
        KernelResources kernel;
        kernel.registers = result.info.registers;
        kernel.sharedStatic = result.info.sharedStatic;
        kernel.sharedDynamic = a.geometry.sharedDynamic;
        kernel.barriers = result.info.barriers;
        kernel.blockSize = a.geometry.blockSize;
        a.occupancy = theoreticalOccupancy(*limits, kernel);
    }
    return a;
}

std::vector<ConfigAnalysis> StaticAnalyzer::run(const ConfigSpace& space, std::span<const std::uint64_t> indices,
                                                const std::vector<std::string>& archs, CompileService& service,
                                                const AnalysisProgress& progress,
                                                const std::atomic<bool>* cancel) const {
    std::vector<Config> configs;
    configs.reserve(indices.size());
    std::vector<CompileRequest> requests;
    requests.reserve(indices.size() * archs.size());
    for (const std::uint64_t index : indices) {
        configs.push_back(space.at(index));
        for (const std::string& arch : archs)
            requests.push_back(m_requests.request(configs.back(), arch));
    }
    const std::vector<CompileResult> results = service.compileAll(requests, progress, cancel);

    std::vector<ConfigAnalysis> analyses;
    analyses.reserve(results.size());
    for (std::size_t c = 0; c < configs.size(); ++c) {
        for (std::size_t a = 0; a < archs.size(); ++a)
            analyses.push_back(analyze(indices[c], configs[c], archs[a], results[c * archs.size() + a]));
    }
    return analyses;
}

std::vector<ArchSummary> summarizeByArch(const std::vector<ConfigAnalysis>& results,
                                         const std::vector<std::string>& archs) {
    std::vector<ArchSummary> summaries;
    for (const std::string& arch : archs) {
        ArchSummary s;
        s.arch = arch;
        std::vector<double> occupancies;
        for (const ConfigAnalysis& r : results) {
            if (r.arch != arch)
                continue;
            ++s.configs;
            if (!r.compiled()) {
                ++s.failed;
                continue;
            }
            ++s.compiled;
            if (r.spills()) {
                ++s.spilling;
                (r.spill == SpillClass::Heavy ? s.heavySpills : s.lightSpills) += 1;
            } else if (r.info.stackFrame > 0) {
                ++s.localOnly;
            }
            if (r.occupancy.launchable) {
                occupancies.push_back(r.occupancy.percent());
                ++s.limiters[static_cast<std::size_t>(r.occupancy.limiter)];
            } else if (r.geometry.error.empty()) {
                ++s.unlaunchable;
            }
        }
        if (!occupancies.empty()) {
            std::sort(occupancies.begin(), occupancies.end());
            s.minOccupancy = occupancies.front();
            s.maxOccupancy = occupancies.back();
            const std::size_t n = occupancies.size();
            s.medianOccupancy = n % 2 ? occupancies[n / 2] : (occupancies[n / 2 - 1] + occupancies[n / 2]) / 2;
        }
        summaries.push_back(std::move(s));
    }
    return summaries;
}

std::vector<SpillDifference> spillDifferences(const std::vector<ConfigAnalysis>& results,
                                              const std::vector<std::string>& archs) {
    // index -> per arch: 0 unknown/failed, 1 clean, 2 spills
    std::map<std::uint64_t, std::vector<int>> state;
    for (const ConfigAnalysis& r : results) {
        const auto it = std::find(archs.begin(), archs.end(), r.arch);
        if (it == archs.end() || !r.compiled())
            continue;
        std::vector<int>& row = state[r.index];
        row.resize(archs.size(), 0);
        row[static_cast<std::size_t>(it - archs.begin())] = r.spills() ? 2 : 1;
    }
    std::vector<SpillDifference> differences;
    for (std::size_t a = 0; a < archs.size(); ++a) {
        for (std::size_t b = 0; b < archs.size(); ++b) {
            if (a == b)
                continue;
            SpillDifference d;
            d.spillsOn = archs[a];
            d.cleanOn = archs[b];
            for (const auto& [index, row] : state) {
                if (row[a] == 2 && row[b] == 1)
                    d.indices.push_back(index);
            }
            if (!d.indices.empty())
                differences.push_back(std::move(d));
        }
    }
    return differences;
}

RuleSuggestion suggestSpillRule(const TuningProblem& problem, std::size_t shapeIndex,
                                const std::vector<ConfigAnalysis>& results, const std::string& arch,
                                const RuleSearchOptions& options, SpillClass minimum) {
    std::vector<RuleSample> samples;
    for (const ConfigAnalysis& r : results) {
        if (r.arch == arch && r.compiled())
            samples.push_back({r.config, r.spills() && r.spill >= minimum});
    }
    return suggestRule(problem, shapeIndex, samples, options);
}

} // namespace tilescope
