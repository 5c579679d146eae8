#include "analysis/inertcheck.h"

#include "analysis/staticanalysis.h"
#include "compile/kernelsource.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace tilescope {

namespace {

bool sameLaunch(const LaunchGeometry& a, const LaunchGeometry& b) {
    return a.ok() == b.ok() && a.grid == b.grid && a.block == b.block && a.sharedDynamic == b.sharedDynamic;
}

// `base` with parameter p at another value that keeps the config valid: the next value after its
// own (or, from the end, the last one), nullopt when there is none.
std::optional<Config> neighbourIn(const ConfigSpace& space, const Config& base, int p, bool fromEnd) {
    const std::size_t n = space.parameterValues(p).size();
    for (std::size_t k = 1; k < n; ++k) {
        const std::size_t offset = fromEnd ? n - k : k;
        Config candidate = base;
        candidate[static_cast<std::size_t>(p)] =
            static_cast<std::uint16_t>((base[static_cast<std::size_t>(p)] + offset) % n);
        if (space.isValid(candidate))
            return candidate;
    }
    return std::nullopt;
}

} // namespace

std::vector<std::pair<std::string, std::string>> redefinedMacros(std::string_view log) {
    // NVRTC: "kernel.cu(3): warning #47-D: incompatible redefinition of macro "tile" (declared at line 1)".
    static constexpr std::string_view kMarker = "redefinition of macro \"";
    std::vector<std::pair<std::string, std::string>> found;
    for (std::size_t at = log.find(kMarker); at != std::string_view::npos; at = log.find(kMarker, at + 1)) {
        const std::size_t nameStart = at + kMarker.size();
        const std::size_t nameEnd = log.find('"', nameStart);
        if (nameEnd == std::string_view::npos)
            break;
        const std::size_t lineStart = log.rfind('\n', at);
        const std::size_t lineEnd = log.find('\n', at);
        const std::size_t from = lineStart == std::string_view::npos ? 0 : lineStart + 1;
        found.emplace_back(
            std::string(log.substr(nameStart, nameEnd - nameStart)),
            std::string(log.substr(from, (lineEnd == std::string_view::npos ? log.size() : lineEnd) - from)));
    }
    return found;
}

std::vector<InertParameter> findInertParameters(const StaticAnalyzer& analyzer, const ConfigSpace& space,
                                                CompileService& service, const std::string& arch,
                                                std::span<const std::uint64_t> bases, const std::atomic<bool>* cancel,
                                                bool compareNeighbours) {
    const RequestBuilder& requests = analyzer.requests();
    const int parameters = space.parameterCount();
    const auto words = wordsOf(requests.source());

    // The kernel's own #defines of parameters are checkLaunch's to report (no compile needed);
    // what else NVRTC says was redefined is a cause found here.
    std::vector<std::string> names;
    for (int p = 0; p < parameters; ++p)
        names.push_back(space.parameterName(p));
    std::set<std::string> known;
    for (const Redefinition& r : findRedefinitions(requests.source(), names, kernelTunerDefines()))
        known.insert(r.name);
    std::map<std::string, std::string> cause;
    auto noteWarnings = [&](const CompileResult& result) {
        for (auto& [name, line] : redefinedMacros(result.log)) {
            if (std::find(names.begin(), names.end(), name) != names.end())
                cause.emplace(name, "NVRTC: " + line);
        }
    };

    // One base per round: the first that compiles; the second round only confirms.
    std::vector<char> inert(static_cast<std::size_t>(parameters), 0);
    std::vector<char> tried(static_cast<std::size_t>(parameters), 0);
    std::vector<std::pair<std::string, std::string>> pair(static_cast<std::size_t>(parameters));
    if (!compareNeighbours) {
        std::vector<CompileRequest> batch;
        for (const std::uint64_t index : bases)
            batch.push_back(requests.request(space.at(index), arch));
        for (const CompileResult& result : service.compileAll(batch, {}, cancel))
            noteWarnings(result);
    }
    std::size_t next = 0;
    for (int round = 0; round < (compareNeighbours ? 2 : 0); ++round) {
        std::optional<Config> base;
        CompileResult baseResult;
        for (; next < bases.size() && !base; ++next) {
            if (cancel && cancel->load())
                return {};
            const Config config = space.at(bases[next]);
            // On the pool, whose threads the session's own compiles share.
            baseResult = service.compileAll({requests.request(config, arch)}, {}, cancel).front();
            noteWarnings(baseResult);
            if (baseResult.ok())
                base = config;
        }
        if (!base)
            break;
        const LaunchGeometry baseLaunch = analyzer.geometry(*base);
        std::vector<int> which;
        std::vector<Config> neighbours;
        for (int p = 0; p < parameters; ++p) {
            if (round == 1 && !inert[static_cast<std::size_t>(p)])
                continue;
            const std::optional<Config> other = neighbourIn(space, *base, p, round == 1);
            if (!other)
                continue;
            const bool named = words.count(space.parameterName(p)) > 0;
            // A parameter the kernel never names and that shapes the launch is a launch parameter.
            if (!named && !sameLaunch(baseLaunch, analyzer.geometry(*other)))
                continue;
            which.push_back(p);
            neighbours.push_back(*other);
        }
        std::vector<CompileRequest> batch;
        for (const Config& c : neighbours)
            batch.push_back(requests.request(c, arch));
        const std::vector<CompileResult> results = service.compileAll(batch, {}, cancel);
        for (std::size_t i = 0; i < results.size(); ++i) {
            const auto p = static_cast<std::size_t>(which[i]);
            noteWarnings(results[i]);
            const bool same = results[i].ok() && results[i].cubin == baseResult.cubin;
            if (round == 0) {
                tried[p] = 1;
                inert[p] = same ? 1 : 0;
                if (same)
                    pair[p] = {space.describe(*base), space.describe(neighbours[i])};
            } else if (!same && results[i].ok()) {
                inert[p] = 0; // another pair tells them apart: the value reaches the code there
            }
        }
    }

    std::vector<InertParameter> found;
    for (int p = 0; p < parameters; ++p) {
        const auto i = static_cast<std::size_t>(p);
        const std::string& name = space.parameterName(p);
        const auto c = cause.find(name);
        if ((!inert[i] && c == cause.end()) || known.count(name) > 0)
            continue;
        InertParameter f;
        f.name = name;
        f.namedInKernel = words.count(name) > 0;
        f.sameBinary = inert[i] != 0;
        f.configA = pair[i].first;
        f.configB = pair[i].second;
        if (c != cause.end())
            f.cause = c->second;
        found.push_back(std::move(f));
    }
    return found;
}

std::optional<LaunchWarning> inertWarning(const TuningProblem& problem, const std::vector<InertParameter>& found) {
    if (found.empty() || std::find(problem.silencedWarnings.begin(), problem.silencedWarnings.end(),
                                   "inert-parameter") != problem.silencedWarnings.end())
        return std::nullopt;
    std::string message;
    for (const InertParameter& f : found) {
        std::string part;
        if (f.sameBinary && f.namedInKernel)
            part = f.name + " does not change the compiled kernel, though the kernel names it: " + f.configA + " and " +
                   f.configB + " compile to the same binary";
        else if (f.sameBinary)
            part = f.name + " changes neither the compiled kernel nor the launch (" + f.configA + " and " + f.configB +
                   " compile to the same binary and launch alike): each of its values measures the same thing";
        else
            part = "the kernel redefines " + f.name + ", so some of its values do not reach the code";
        if (!f.cause.empty())
            part += " (" + f.cause + ")";
        message += (message.empty() ? "" : "; ") + part;
    }
    const bool redefined =
        std::any_of(found.begin(), found.end(), [](const InertParameter& f) { return !f.cause.empty(); });
    message += redefined ? ". Kernel Tuner's examples keep a kernel's own defaults under #ifndef kernel_tuner; guard "
                           "or remove the define, or "
                         : ". Use the parameter in the kernel or drop it, or ";
    message += "silence it with \"Tilescope\": {\"Silence\": [\"inert-parameter\"]} in the problem";
    return LaunchWarning{"inert-parameter",
                         "/ConfigurationSpace/TuningParameters/" +
                             std::to_string(std::max(0, problem.parameterIndex(found.front().name))),
                         message};
}

} // namespace tilescope
