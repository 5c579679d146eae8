#include "jobs/analyze.h"

#include "jobs/requestcheck.h"

#include "analysis/inertcheck.h"
#include "base/error.h"
#include "base/textformat.h"
#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "compile/sass.h"
#include "measure/cuda/cudabackend.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>

namespace tilescope {

namespace {

/// The source files' lines, read once: a line table names a file as the compile saw it (the
/// kernel file's name, after the compiler's working folder), found here beside the kernel.
class SourceText {
public:
    explicit SourceText(std::filesystem::path kernelPath)
        : m_kernel(std::move(kernelPath)) {}

    std::string line(const std::string& file, int line) {
        const std::vector<std::string>& rows = lines(file);
        if (line < 1 || static_cast<std::size_t>(line) > rows.size())
            return {};
        std::string text = rows[static_cast<std::size_t>(line - 1)];
        const std::size_t first = text.find_first_not_of(" \t");
        return first == std::string::npos ? std::string() : text.substr(first);
    }

private:
    const std::vector<std::string>& lines(const std::string& file) {
        auto it = m_files.find(file);
        if (it != m_files.end())
            return it->second;
        std::vector<std::string> rows;
        const std::filesystem::path name = std::filesystem::path(file).filename();
        for (const std::filesystem::path& candidate : {name == m_kernel.filename() ? m_kernel : std::filesystem::path(),
                                                       m_kernel.parent_path() / name, std::filesystem::path(file)}) {
            std::ifstream in(candidate);
            if (candidate.empty() || !in)
                continue;
            for (std::string row; std::getline(in, row);)
                rows.push_back(row);
            break;
        }
        return m_files.emplace(file, std::move(rows)).first->second;
    }

    std::filesystem::path m_kernel;
    std::map<std::string, std::vector<std::string>> m_files;
};

/// A line report with what reading it needed: the entry function's machine code (for a run's
/// counts) and the binary those lines are of (what `executed` runs).
struct LineWork {
    LineReport report;
    SassFunction function;
    CompileResult compile;
};

/// A stage's progress through the events.
class Stage {
public:
    Stage(const AnalyzeEvents& events, const std::string& verb, std::uint64_t total)
        : m_events(events) {
        if (m_events.stageStarted)
            m_events.stageStarted(verb, total);
    }
    void update(std::uint64_t done) const {
        if (m_events.stageProgress)
            m_events.stageProgress(done);
    }
    void finish(const std::string& summary = {}) const {
        if (m_events.stageFinished)
            m_events.stageFinished(summary);
    }

private:
    const AnalyzeEvents& m_events;
};

void note(const AnalyzeEvents& events, const std::string& text) {
    if (events.note)
        events.note(text);
}

/// Whether a compiled record has local memory: spills, or a stack frame (a local array's).
bool usesLocalMemory(const ConfigAnalysis& r) {
    return r.compiled() && (r.info.spills() || r.info.stackFrame > 0);
}

/// Every compiled record's cubin again (from the cache: the compiles carry line information)
/// disassembled, its entry function's instructions counted by source line; with `spillingOnly`,
/// only the records with local memory (nvdisasm is most of the lines' time: it reads no other).
std::vector<LineWork> readLines(const StaticAnalyzer& analyzer, const std::vector<ConfigAnalysis>& results,
                                CompileService& service, const std::filesystem::path& nvdisasm, bool spillingOnly,
                                const AnalyzeEvents& events) {
    std::vector<CompileRequest> requests;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (!results[i].compiled() || (spillingOnly && !usesLocalMemory(results[i])))
            continue;
        // The same request as the analysis (every compile has line information): from the cache.
        requests.push_back(analyzer.requests().request(results[i].config, results[i].arch));
        which.push_back(i);
    }
    std::vector<LineWork> work(results.size());
    const Stage stage(events, "read lines of", requests.size());
    const std::vector<CompileResult> compiled = service.compileAll(requests);
    for (std::size_t k = 0; k < compiled.size(); ++k) {
        LineWork& w = work[which[k]];
        LineReport& report = w.report;
        report.read = true;
        stage.update(k);
        if (!compiled[k].ok()) {
            report.error = "the compile with line information failed: " + compiled[k].message;
            continue;
        }
        const Disassembly d = disassemble(compiled[k].cubin, nvdisasm);
        if (!d.ok) {
            report.error = d.error;
            continue;
        }
        const SassFunction* f = findFunction(d, compiled[k].entryName);
        if (!f) {
            report.error = "nvdisasm's output has no function " + compiled[k].entryName;
            continue;
        }
        report.counts = countByLine(*f);
        w.function = *f;
        w.compile = compiled[k];
        if (!report.counts.hasLineInfo)
            report.error = "the binary has no line information (compiled without " + std::string(kLineInfoOption) + ")";
    }
    stage.finish();
    return work;
}

/// `executed`: every config whose lines were read runs once more on the GPU of `backend` (open),
/// with CUPTI's SASS metrics, and its executions per instruction join its lines.
void countExecuted(CudaBackend& backend, const std::string& gpuArch, const std::vector<ConfigAnalysis>& results,
                   std::vector<LineWork>& work, const AnalyzeEvents& events) {
    std::vector<MeasureItem> items;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (results[i].arch != gpuArch || !work[i].report.read || !work[i].report.error.empty() ||
            !results[i].compiled())
            continue;
        MeasureItem item;
        item.index = results[i].index;
        item.config = results[i].config;
        item.compiles.push_back({gpuArch, &work[i].compile});
        items.push_back(std::move(item));
        which.push_back(i);
    }
    const Stage stage(events, "ran", items.size());
    std::size_t done = 0;
    backend.measure(items, MeasureControl{}, [&](std::size_t item, Measurement m) {
        stage.update(++done);
        LineWork& w = work[which[item]];
        if (m.status != ResultStatus::Ok) {
            w.report.executedError = "not run: " + std::string(statusName(m.status)) +
                                     (m.message.empty() ? std::string() : " (" + m.message + ")");
            return;
        }
        if (m.executed.empty()) {
            w.report.executedError = "CUPTI counted no instruction (the note above says why)";
            return;
        }
        if (const std::size_t unmatched = addExecuted(w.report.counts, w.function, m.executed); unmatched > 0)
            w.report.executedError = std::to_string(unmatched) + " counted instructions are not in the disassembly";
    });
    stage.finish();
}

/// The GPU of `executed`, open on the problem; its arch is set in `gpuArch`.
std::unique_ptr<CudaBackend> openGpu(const TuningProblem& problem, std::size_t shape, const ConfigSpace& space,
                                     const AnalyzeEvents& events, std::string& gpuArch, std::string& deviceName) {
    CudaBackendOptions o;
    o.verify = false;
    o.guard = GuardPolicy::Off;
    o.executedCounts = true;
    o.timing.minSamples = o.timing.maxSamples = 1; // the timing is not what is asked for
    o.timing.warmupSeconds = 0;
    o.timing.maxSeconds = 0;
    o.note = events.note;
    auto gpu = std::make_unique<CudaBackend>(o);
    try {
        const BackendInfo info = gpu->open(problem, shape, space);
        gpuArch = info.arch;
        deviceName = info.deviceName;
    } catch (const InputError& e) {
        // The backend's advice without a GPU (replay, or analyse offline) is tune's: here the
        // analysis is offline already, and only `executed` needs the GPU.
        const std::size_t advice = e.message().find(". Without a GPU,");
        if (advice == std::string::npos)
            throw;
        throw InputError(e.file(), "--executed",
                         e.message().substr(0, advice) +
                             ". --executed runs each config on this machine's GPU; without one, leave it "
                             "out: --lines alone counts the spill and local-memory instructions by source "
                             "line offline");
    }
    return gpu;
}

/// The configs to analyse, with what they are: `selection` for people, `partOf` when not all.
std::vector<std::uint64_t> pickConfigs(const AnalyzeRequest& request, const ConfigSpace& space, std::string& selection,
                                       std::string& partOf) {
    std::vector<std::uint64_t> indices;
    const auto count = [](std::uint64_t n) { return formatCount(static_cast<double>(n)); };
    if (!request.indices.empty()) {
        // Configs asked for by their index in the space (as `space` and the report print them).
        for (const std::uint64_t i : request.indices)
            if (i >= space.size())
                throw InputError("", "--index",
                                 "no config " + std::to_string(i) + ": the space has " + count(space.size()) +
                                     " valid configs (index 0 to " + std::to_string(space.size() - 1) + ")");
        indices = request.indices;
        std::sort(indices.begin(), indices.end());
        indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
        if (indices.size() < space.size())
            partOf = "the configs given";
        selection = (indices.size() == 1 ? "config " : count(indices.size()) + " configs ") + indexList(indices, 12) +
                    " of " + count(space.size()) + " valid configs";
    } else if (request.all || (request.sample == 0 && space.size() <= kDefaultAnalysisSample)) {
        indices.resize(space.size());
        std::iota(indices.begin(), indices.end(), std::uint64_t(0));
        selection = "all " + count(space.size()) + " valid configs";
    } else {
        const std::uint64_t n = request.sample > 0 ? request.sample : kDefaultAnalysisSample;
        indices = space.sample(n, request.seed);
        std::sort(indices.begin(), indices.end());
        if (indices.size() < space.size())
            partOf = "a sample";
        selection = count(indices.size()) + " of " + count(space.size()) + " valid configs, sampled with seed " +
                    std::to_string(request.seed);
        if (request.sample == 0)
            selection += " (the default; --all for every config, --sample N for another number)";
    }
    return indices;
}

std::string commonFailure(const std::vector<ConfigAnalysis>& results) {
    if (results.empty() || results.front().status == CompileStatus::Ok)
        return {};
    const ConfigAnalysis& first = results.front();
    for (const ConfigAnalysis& r : results) {
        const bool alike =
            r.status == first.status && (r.message == first.message || r.status == CompileStatus::NoKernel);
        if (r.status == CompileStatus::Ok || !alike)
            return {};
    }
    return first.message;
}

/// The archs asked for, without repeats (sm_90 when none), each checked before any work.
std::vector<std::string> checkedArchs(const std::vector<std::string>& asked) {
    std::vector<std::string> archs;
    for (const std::string& arch : asked) {
        if (std::find(archs.begin(), archs.end(), arch) == archs.end())
            archs.push_back(arch);
    }
    if (archs.empty())
        archs.push_back("sm_90");
    for (const std::string& arch : archs)
        StaticAnalyzer::checkArch(arch);
    return archs;
}

/// The lines' reports, with the local lines and their source text.
std::vector<LineReport> finishLines(std::vector<LineWork>& work, const std::filesystem::path& kernelPath) {
    SourceText source(kernelPath);
    std::vector<LineReport> reports;
    reports.reserve(work.size());
    for (LineWork& w : work) {
        LineReport report = std::move(w.report);
        if (report.read && report.error.empty()) {
            report.local = localLines(report.counts);
            for (const SourceLine& l : report.local)
                report.localText.push_back(source.line(l.file, l.line));
        }
        reports.push_back(std::move(report));
    }
    return reports;
}

} // namespace

std::string indexList(const std::vector<std::uint64_t>& indices, std::size_t shown) {
    std::string text;
    for (std::size_t i = 0; i < indices.size() && i < shown; ++i)
        text += (i ? ", " : "") + std::to_string(indices[i]);
    if (indices.size() > shown)
        text += ", ...";
    return text;
}

std::vector<CompileFailureGroup> compileFailureGroups(const std::vector<ConfigAnalysis>& results) {
    std::vector<CompileFailureGroup> groups;
    for (const ConfigAnalysis& r : results) {
        if (r.compiled())
            continue;
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.message == r.message; });
        if (it == groups.end())
            it = groups.insert(groups.end(), CompileFailureGroup{r.message, {}, {}, {}});
        it->members.push_back(&r);
        if (it->indices.empty() || it->indices.back() != r.index)
            it->indices.push_back(r.index);
        if (std::find(it->archs.begin(), it->archs.end(), r.arch) == it->archs.end())
            it->archs.push_back(r.arch);
    }
    return groups;
}

AnalyzeOutcome runAnalysis(const AnalyzeRequest& request, const AnalyzeEvents& events) {
    AnalyzeOutcome out;
    out.problemPath = request.problemPath;
    out.problem = request.problem ? request.problem
                                  : std::make_shared<const TuningProblem>(TuningProblem::load(request.problemPath));
    const TuningProblem& problem = *out.problem;
    checkShape(problem, request.shape);
    out.archs = checkedArchs(request.archs);

    // The lines need the disassembler: found (or refused) before any work.
    std::filesystem::path nvdisasm;
    if (request.lines) {
        std::string why;
        nvdisasm = findNvdisasm(&why, problem.isTriton());
        if (nvdisasm.empty())
            throw InputError("", "--lines", why);
    }
    const StaticAnalyzer analyzer(problem, request.shape);
    out.space =
        request.space ? request.space : std::make_shared<const ConfigSpace>(ConfigSpace::build(problem, request.shape));
    const ConfigSpace& space = *out.space;
    if (events.spaceBuilt)
        events.spaceBuilt(problem, space);
    if (space.size() == 0)
        throw InputError(
            request.problemPath, "/ConfigurationSpace/Conditions",
            "no config satisfies the conditions" +
                (problem.shapes.empty() ? std::string() : " for shape " + problem.shapes[request.shape].label()));

    // `executed`: the configs run once more on this machine's GPU; its arch is the one analysed.
    std::unique_ptr<CudaBackend> gpu;
    std::string gpuArch;
    if (request.executed) {
        std::string deviceName;
        gpu = openGpu(problem, request.shape, space, events, gpuArch, deviceName);
        if (request.archs.empty())
            out.archs = {gpuArch};
        else if (std::find(out.archs.begin(), out.archs.end(), gpuArch) == out.archs.end())
            throw InputError("", "--executed",
                             "the configs run on this machine's " + deviceName + ", an " + gpuArch +
                                 " GPU: add --arch " + gpuArch + " (the configs analysed for it are the ones run)");
        StaticAnalyzer::checkArch(gpuArch);
    }

    AnalyzeStart start;
    const std::vector<std::uint64_t> indices = pickConfigs(request, space, start.selection, out.partOf);
    std::shared_ptr<CompileCache> cache;
    if (!request.noCache) {
        CompileCacheOptions cacheOptions;
        cacheOptions.directory = request.cacheDir;
        cache = std::make_shared<CompileCache>(cacheOptions);
    }
    CompileService service({request.jobs, cache});
    start.archs = out.archs;
    start.compiler = compilerLabel(problem);
    start.threads = service.threadCount();
    start.cacheDir = cache ? cache->directory().string() : std::string();
    if (events.started)
        events.started(start);

    {
        const Stage stage(events, "compiled", indices.size() * out.archs.size());
        out.results = analyzer.run(
            space, indices, out.archs, service, [&](std::size_t done, std::size_t) { stage.update(done); },
            request.cancel);
        for (const ConfigAnalysis& r : out.results) {
            out.failed += r.compiled() ? 0 : 1;
            out.cached += r.cached ? 1 : 0;
        }
        stage.finish(std::to_string(out.failed) + (out.failed == 1 ? " error, " : " errors, ") +
                     std::to_string(out.cached) + " from the cache");
    }
    if (request.cancel && request.cancel->load())
        throw Cancelled();

    // Parameters whose values never reach the code, from the compiled sample and its neighbours
    // (a compile of each neighbour: not for configs named one by one, where they would be most of
    // the work, minutes with nvcc and CUTLASS; the compiler's redefinition warnings still count,
    // read again from the cache).
    if (request.inertCheck && events.warning && (request.indices.empty() || !request.noCache))
        if (std::optional<LaunchWarning> w =
                inertWarning(problem, findInertParameters(analyzer, space, service, out.archs.front(), indices,
                                                          request.cancel, request.indices.empty())))
            events.warning(*w);

    if (!request.csvPath.empty())
        writeAnalysisCsv(request.csvPath, out.results, space);
    if (request.lines) {
        const std::size_t compiled = out.results.size() - out.failed;
        if (!request.spilling && request.indices.empty() && compiled > kLinesHint)
            note(events, "--lines reads the binaries of all " + std::to_string(compiled) +
                             " compiled configs with nvdisasm; --spilling reads only those with spills or local "
                             "memory, --index I,J only those configs");
        std::vector<LineWork> work = readLines(analyzer, out.results, service, nvdisasm, request.spilling, events);
        if (gpu) {
            countExecuted(*gpu, gpuArch, out.results, work, events);
            gpu->close();
        }
        out.lines = finishLines(work, problem.kernelPath());
    }

    SpillRuleOptions ruleOptions;
    ruleOptions.maxSpace = request.ruleSpaceLimit;
    ruleOptions.space = &space;
    ruleOptions.countCatchAll = true;
    ruleOptions.cancel = request.cancel;
    for (const std::string& arch : out.archs)
        out.rules.push_back(learnSpillRule(problem, request.shape, spillSamples(out.results, arch), ruleOptions));
    out.commonFailure = commonFailure(out.results);
    return out;
}

} // namespace tilescope
