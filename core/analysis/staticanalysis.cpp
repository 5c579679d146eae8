#include "analysis/staticanalysis.h"

#include "base/error.h"
#include "base/textformat.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <climits>
#include <map>

namespace tilescope {

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

StaticAnalyzer::StaticAnalyzer(const TuningProblem& problem, std::size_t shapeIndex)
    : m_problem(problem)
    , m_shapeIndex(shapeIndex)
    , m_requests(launchable(problem), shapeIndex)
    , m_geometry(problem, shapeIndex) {}

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
    const std::string known = joined(analysableArchs());
    std::string why = std::find(nvrtc.begin(), nvrtc.end(), number) != nvrtc.end()
                          ? "NVRTC compiles for it, but its occupancy limits are not in Tilescope's table"
                          : "not an arch NVRTC " + nvrtcVersionString() + " compiles for";
    throw InputError("", "--arch", "'" + arch + "': " + why + " (analysable: " + known + ")");
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
    if (result.ok() && result.launch && a.geometry.ok()) {
        // A binary whose compiler decides its launch (Triton's) runs with its threads and the
        // shared memory it asks for. It is compiled for exactly its threads (.reqntid): a
        // LocalSize that says otherwise cannot launch it.
        const std::int64_t threads = result.launch->threadsPerBlock;
        if (threads > 0 && !m_problem.localSize.x.empty() && a.geometry.threadsPerBlock() != threads)
            a.geometry.error = "LocalSize gives " + std::to_string(a.geometry.threadsPerBlock()) +
                               " threads a block, and the kernel was compiled for " + std::to_string(threads) +
                               " (num_warps x 32)";
        else if (threads > 0)
            a.geometry.block = {threads, 1, 1};
        a.geometry.sharedDynamic = result.launch->sharedBytes;
    }
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
        a.occupancy = theoreticalOccupancy(
            *limits, KernelResources::of(result.info, a.geometry.threadsPerBlock(), a.geometry.sharedDynamic));
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
