// tilescope-cli analyze: offline static analysis of a problem's configs for one or more archs:
// registers, spills, stack, shared memory, theoretical occupancy and its limiter per config, a
// summary per arch, and a suggested register-pressure rule. NVRTC only; no GPU needed, except for
// --executed (each config run once on this machine's GPU, its instructions counted by CUPTI).

#include "cli.h"

#include "model/configjson.h"

#include "analysis/inertcheck.h"
#include "analysis/sourcelines.h"
#include "analysis/staticanalysis.h"
#include "base/error.h"
#include "base/filewrite.h"
#include "base/textformat.h"
#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "compile/sass.h"
#include "exchange/configcodec.h"
#include "measure/cuda/cudabackend.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>

namespace tilescope::cli {

namespace {

constexpr std::uint64_t kDefaultSample = 64;
constexpr std::size_t kFullLogs = 5;                // failed compiles whose log the text output shows
constexpr std::size_t kLogLines = 15;               // lines of each such log
constexpr std::uint64_t kMaxSpaceWalk = 20'000'000; // configs a rule is counted over for the space total

struct AnalyzeOptions {
    std::string problemPath;
    std::vector<std::string> archs;
    bool all = false;
    std::uint64_t sample = 0;
    std::uint64_t seed = 0;
    unsigned jobs = 0;
    std::size_t shape = 0;
    bool json = false;
    std::string csvPath;
    std::string cacheDir;
    bool noCache = false;
    bool lines = false;
    bool executed = false;
    std::vector<std::uint64_t> index; ///< --index: these configs (space indices) rather than a sample
    bool spilling = false;            ///< --spilling: --lines for the configs with spills or local memory only
};

constexpr std::size_t kLinesShown = 8; // lines per config in the text output (--json has them all)
constexpr std::size_t kLinesHint = 16; // configs whose lines --lines reads before it says how to read fewer

/// Where each analysed config's local memory is, by source line (`--lines`): per record, the
/// counts of its entry function ("" error when the lines could not be read).
struct LineReport {
    bool read = false; ///< its lines were asked for (--spilling leaves out the configs without local memory)
    LineCounts counts;
    std::string error;
    SassFunction function;     ///< the entry function's machine code (for a run's counts)
    CompileResult compile;     ///< the binary those lines are of (what --executed runs)
    std::string executedError; ///< why --executed has no counts for this config ("" when it has, or was not asked)
};

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

    static std::string shortName(const std::string& file) { return std::filesystem::path(file).filename().string(); }

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

/// Whether a compiled record has local memory: spills, or a stack frame (a local array's).
bool usesLocalMemory(const ConfigAnalysis& r) {
    return r.compiled() && (r.info.spills() || r.info.stackFrame > 0);
}

/// Every compiled record's cubin again (from the cache: the compiles carry line information)
/// disassembled, its entry function's instructions counted by source line; with `spillingOnly`,
/// only the records with local memory (nvdisasm is most of --lines' time: it reads no other).
std::vector<LineReport> readLines(const StaticAnalyzer& analyzer, const std::vector<ConfigAnalysis>& results,
                                  CompileService& service, const std::filesystem::path& nvdisasm, bool spillingOnly) {
    std::vector<CompileRequest> requests;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (!results[i].compiled() || (spillingOnly && !usesLocalMemory(results[i])))
            continue;
        // The same request as the analysis (every compile has line information): from the cache.
        requests.push_back(analyzer.requests().request(results[i].config, results[i].arch));
        which.push_back(i);
    }
    std::vector<LineReport> reports(results.size());
    Progress progress("read lines of", requests.size());
    const std::vector<CompileResult> compiled = service.compileAll(requests);
    for (std::size_t k = 0; k < compiled.size(); ++k) {
        LineReport& report = reports[which[k]];
        report.read = true;
        progress.update(k);
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
        report.function = *f;
        report.compile = compiled[k];
        if (!report.counts.hasLineInfo)
            report.error = "the binary has no line information (compiled without " + std::string(kLineInfoOption) + ")";
    }
    progress.finish();
    return reports;
}

/// --executed: every config whose lines were read runs once more on the GPU of `backend` (open),
/// with CUPTI's SASS metrics, and its executions per instruction join its lines.
void countExecuted(CudaBackend& backend, const std::string& gpuArch, const std::vector<ConfigAnalysis>& results,
                   std::vector<LineReport>& reports) {
    std::vector<MeasureItem> items;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < results.size(); ++i) {
        if (results[i].arch != gpuArch || !reports[i].read || !reports[i].error.empty() || !results[i].compiled())
            continue;
        MeasureItem item;
        item.index = results[i].index;
        item.config = results[i].config;
        item.compiles.push_back({gpuArch, &reports[i].compile});
        items.push_back(std::move(item));
        which.push_back(i);
    }
    Progress progress("ran", items.size());
    std::size_t done = 0;
    backend.measure(items, MeasureControl{}, [&](std::size_t item, Measurement m) {
        progress.update(++done);
        LineReport& report = reports[which[item]];
        if (m.status != ResultStatus::Ok) {
            report.executedError = "not run: " + std::string(statusName(m.status)) +
                                   (m.message.empty() ? std::string() : " (" + m.message + ")");
            return;
        }
        if (m.executed.empty()) {
            report.executedError = "CUPTI counted no instruction (the note above says why)";
            return;
        }
        if (const std::size_t unmatched = addExecuted(report.counts, report.function, m.executed); unmatched > 0)
            report.executedError = std::to_string(unmatched) + " counted instructions are not in the disassembly";
    });
    progress.finish();
}

/// "1.23M", "512", for counts of executed instructions.
std::string executedText(std::uint64_t n) {
    return formatCount(static_cast<double>(n));
}

std::string clip(const std::string& text, std::size_t maxChars) {
    return text.size() > maxChars ? text.substr(0, maxChars - 3) + "..." : text;
}

std::string linesText(const std::vector<ConfigAnalysis>& results, const std::vector<LineReport>& reports,
                      const ConfigSpace& space, SourceText& source) {
    std::string text = "\nLocal memory by source line (spill stores/loads are registers spilled and refilled; "
                       "local stores/loads a local array's)\n";
    bool unmarked = false;
    std::size_t notRead = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const ConfigAnalysis& r = results[i];
        if (!r.compiled())
            continue;
        const LineReport& report = reports[i];
        if (!report.read) {
            ++notRead;
            continue;
        }
        text += "  index " + std::to_string(r.index) + " on " + r.arch + "  " + space.describe(r.config) + "\n";
        if (!report.error.empty()) {
            text += "    " + report.error + "\n";
            continue;
        }
        const LineCounts& c = report.counts;
        const std::vector<SourceLine> local = localLines(c);
        if (local.empty()) {
            text += "    no spills and no local memory (" + std::to_string(c.instructions) + " instructions)\n";
            continue;
        }
        unmarked = unmarked || (!c.spillsMarked && r.info.spills());
        text += "    " + std::to_string(c.spillStores) + " spill stores and " + std::to_string(c.spillLoads) +
                " spill loads, " + std::to_string(c.localStores) + " local stores and " + std::to_string(c.localLoads) +
                " local loads, on " + std::to_string(local.size()) + (local.size() == 1 ? " line" : " lines") +
                (c.spillStores + c.spillLoads > 0 ? "" : "; no spills") + "\n";
        if (c.hasExecuted)
            text += "    ran once: " + executedText(c.executedSpillStores + c.executedLocalStores) +
                    " local stores and " + executedText(c.executedSpillLoads + c.executedLocalLoads) +
                    " local loads executed by warps (" + executedText(c.executedSpills()) + " of them spills), of " +
                    executedText(c.executedInstructions) + " instructions\n";
        if (!report.executedError.empty())
            text += "    --executed: " + report.executedError + "\n";
        for (std::size_t k = 0; k < local.size() && k < kLinesShown; ++k) {
            const SourceLine& l = local[k];
            std::string where = SourceText::shortName(l.file) + ":" + std::to_string(l.line);
            char counts[96];
            std::snprintf(counts, sizeof counts, "spill %3d st %3d ld  local %2d st %2d ld  %4d instr", l.spillStores,
                          l.spillLoads, l.localStores, l.localLoads, l.instructions);
            text += "    " + where + std::string(where.size() < 16 ? 16 - where.size() : 1, ' ') + counts + "  | " +
                    clip(source.line(l.file, l.line), 70) + "\n";
            if (c.hasExecuted)
                text += std::string(20, ' ') + "ran: " + executedText(l.executedSpillStores + l.executedLocalStores) +
                        " st, " + executedText(l.executedSpillLoads + l.executedLocalLoads) + " ld of " +
                        executedText(l.executedInstructions) + " instructions\n";
        }
        if (local.size() > kLinesShown)
            text += "    ... " + std::to_string(local.size() - kLinesShown) + " more (--json has every line)\n";
    }
    if (notRead > 0)
        text += "  " + std::to_string(notRead) + (notRead == 1 ? " config" : " configs") +
                " without spills or local memory not read (--spilling)\n";
    if (std::any_of(reports.begin(), reports.end(), [](const LineReport& r) { return r.counts.hasExecuted; }))
        text += "  ran: local stores (st) and loads (ld) executed by warps in one launch of the config on the GPU, "
                "counted per instruction by CUPTI's SASS metrics\n";
    if (unmarked)
        text += "  This nvdisasm does not mark spill instructions: each line's local stores and loads are spills and "
                "local arrays together.\n";
    return text;
}

nlohmann::ordered_json linesJson(const LineReport& report, SourceText& source) {
    nlohmann::ordered_json j;
    if (!report.error.empty()) {
        j["error"] = report.error;
        return j;
    }
    const LineCounts& c = report.counts;
    j["spills_marked"] = c.spillsMarked;
    j["instructions"] = c.instructions;
    j["spill_stores"] = c.spillStores;
    j["spill_loads"] = c.spillLoads;
    j["local_stores"] = c.localStores;
    j["local_loads"] = c.localLoads;
    auto executed = [](const auto& x) {
        return nlohmann::ordered_json{{"instructions", x.executedInstructions},
                                      {"spill_stores", x.executedSpillStores},
                                      {"spill_loads", x.executedSpillLoads},
                                      {"local_stores", x.executedLocalStores},
                                      {"local_loads", x.executedLocalLoads}};
    };
    if (c.hasExecuted)
        j["executed"] = executed(c);
    if (!report.executedError.empty())
        j["executed_error"] = report.executedError;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const SourceLine& l : localLines(c)) {
        nlohmann::ordered_json e;
        e["file"] = SourceText::shortName(l.file);
        e["line"] = l.line;
        e["text"] = source.line(l.file, l.line);
        e["instructions"] = l.instructions;
        e["spill_stores"] = l.spillStores;
        e["spill_loads"] = l.spillLoads;
        e["local_stores"] = l.localStores;
        e["local_loads"] = l.localLoads;
        e["sass"] = l.localInstructions;
        if (c.hasExecuted)
            e["executed"] = executed(l);
        list.push_back(std::move(e));
    }
    j["local_lines"] = std::move(list);
    return j;
}

std::string statusName(CompileStatus status) {
    switch (status) {
    case CompileStatus::Ok:
        return "ok";
    case CompileStatus::CompileError:
        return "compile_error";
    case CompileStatus::NoKernel:
        return "no_kernel";
    case CompileStatus::Cancelled:
        return "cancelled";
    }
    return "unknown";
}

std::string percentOf(double part, double whole) {
    return whole > 0 ? formatDouble("%.1f %%", 100.0 * part / whole) : "-";
}

std::string csvField(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + "\"";
}

std::string firstLine(const std::string& text, std::size_t maxChars) {
    std::string line = text.substr(0, text.find('\n'));
    if (line.size() > maxChars)
        line = line.substr(0, maxChars - 3) + "...";
    return line;
}

std::string joinIndices(const std::vector<std::uint64_t>& indices, std::size_t shown) {
    std::string text;
    for (std::size_t i = 0; i < indices.size() && i < shown; ++i)
        text += (i ? ", " : "") + std::to_string(indices[i]);
    if (indices.size() > shown)
        text += ", ...";
    return text;
}

nlohmann::ordered_json recordJson(const ConfigAnalysis& r, const ConfigSpace& space) {
    nlohmann::ordered_json record;
    record["index"] = r.index;
    nlohmann::ordered_json config = nlohmann::ordered_json::object();
    for (int p = 0; p < space.parameterCount(); ++p)
        config[space.parameterName(p)] = toJson(recordedValue(space.value(r.config, p)));
    record["config"] = config;
    record["arch"] = r.arch;
    record["status"] = statusName(r.status);
    const bool ok = r.compiled();
    const bool occ = ok && r.geometry.error.empty();
    auto orNull = [](bool have, auto value) { return have ? nlohmann::ordered_json(value) : nlohmann::ordered_json(); };
    record["registers"] = orNull(ok, r.info.registers);
    record["spill_stores"] = orNull(ok, r.info.spillStores);
    record["spill_loads"] = orNull(ok, r.info.spillLoads);
    record["stack_frame"] = orNull(ok, r.info.stackFrame);
    record["shared_bytes"] = orNull(ok, r.sharedBytes());
    record["shared_static"] = orNull(ok, r.info.sharedStatic);
    record["shared_dynamic"] = orNull(r.geometry.error.empty(), r.geometry.sharedDynamic);
    record["barriers"] = orNull(ok, r.info.barriers);
    record["block_size"] = orNull(r.geometry.error.empty(), r.geometry.threadsPerBlock());
    record["occupancy"] = orNull(occ, r.occupancy.percent());
    record["active_blocks"] = orNull(occ, r.occupancy.activeBlocks);
    record["active_warps"] = orNull(occ, r.occupancy.activeWarps);
    record["limiter"] = orNull(occ, std::string(limiterName(r.occupancy.limiter)));
    record["spill_class"] = orNull(ok, std::string(spillClassName(r.spill)));
    if (occ && !r.occupancy.launchable)
        record["launch_error"] = r.occupancy.reason;
    record["compile_seconds"] = r.compileSeconds;
    record["cached"] = r.cached;
    if (!r.message.empty())
        record["message"] = r.message;
    if (!ok)
        record["log"] = r.log;
    return record;
}

void writeCsv(const std::string& path, const std::vector<ConfigAnalysis>& results, const ConfigSpace& space) {
    std::ostringstream out;
    out << "index";
    for (int p = 0; p < space.parameterCount(); ++p)
        out << ',' << csvField(space.parameterName(p));
    out << ",arch,status,registers,spill_stores,spill_loads,stack_frame,shared_bytes,shared_static,shared_dynamic,"
           "barriers,block_size,occupancy,active_blocks,limiter,spill_class,compile_seconds,cached,message\n";
    for (const ConfigAnalysis& r : results) {
        const bool ok = r.compiled();
        const bool occ = ok && r.geometry.error.empty();
        auto num = [](bool have, auto v) { return have ? std::to_string(v) : std::string(); };
        out << r.index;
        for (int p = 0; p < space.parameterCount(); ++p)
            out << ',' << csvField(plainValue(space.value(r.config, p)));
        out << ',' << r.arch << ',' << statusName(r.status) << ',' << num(ok, r.info.registers) << ','
            << num(ok, r.info.spillStores) << ',' << num(ok, r.info.spillLoads) << ',' << num(ok, r.info.stackFrame)
            << ',' << num(ok, r.sharedBytes()) << ',' << num(ok, r.info.sharedStatic) << ','
            << num(r.geometry.error.empty(), r.geometry.sharedDynamic) << ',' << num(ok, r.info.barriers) << ','
            << num(r.geometry.error.empty(), r.geometry.threadsPerBlock()) << ','
            << (occ ? formatDouble("%.1f", r.occupancy.percent()) : std::string()) << ','
            << num(occ, r.occupancy.activeBlocks) << ','
            << (occ ? std::string(limiterName(r.occupancy.limiter)) : std::string()) << ','
            << (ok ? std::string(spillClassName(r.spill)) : std::string()) << ',' << r.compileSeconds << ','
            << (r.cached ? 1 : 0) << ',' << csvField(r.message.empty() ? r.occupancy.reason : r.message) << '\n';
    }
    writeFileAtomically(path, out.str(), "--csv");
}

std::string configTable(const std::vector<ConfigAnalysis>& results, const ConfigSpace& space) {
    std::vector<std::string> headers{"index"};
    std::vector<bool> right{true};
    for (int p = 0; p < space.parameterCount(); ++p) {
        headers.push_back(space.parameterName(p));
        right.push_back(true);
    }
    for (const char* h :
         {"arch", "regs", "spill st", "spill ld", "stack", "smem", "threads", "occ %", "limiter", "spill"}) {
        headers.emplace_back(h);
        right.push_back(std::string_view(h) != "arch" && std::string_view(h) != "limiter" &&
                        std::string_view(h) != "spill");
    }
    TextTable table(headers, right);
    std::uint64_t previous = ~std::uint64_t(0);
    for (const ConfigAnalysis& r : results) {
        std::vector<std::string> row;
        // The config's values once, on its first arch's row.
        const bool first = r.index != previous;
        previous = r.index;
        row.push_back(first ? std::to_string(r.index) : "");
        for (int p = 0; p < space.parameterCount(); ++p)
            row.push_back(first ? plainValue(space.value(r.config, p)) : "");
        row.push_back(r.arch);
        if (!r.compiled()) {
            row.insert(row.end(), 8, "-");
            // NVRTC's messages say "error" themselves; others (a bad option) may not.
            const bool saysError = r.message.find("error") != std::string::npos;
            row.push_back((saysError ? "" : "error: ") + firstLine(r.message, 80));
        } else {
            row.push_back(std::to_string(r.info.registers));
            row.push_back(std::to_string(r.info.spillStores));
            row.push_back(std::to_string(r.info.spillLoads));
            row.push_back(std::to_string(r.info.stackFrame));
            row.push_back(std::to_string(r.sharedBytes()));
            row.push_back(r.geometry.error.empty() ? std::to_string(r.geometry.threadsPerBlock()) : "?");
            if (!r.geometry.error.empty()) {
                row.push_back("-");
                row.push_back("(" + firstLine(r.geometry.error, 60) + ")");
            } else if (!r.occupancy.launchable) {
                row.push_back("0");
                row.push_back(std::string(limiterName(r.occupancy.limiter)) + " (cannot launch)");
            } else {
                row.push_back(formatDouble("%.1f", r.occupancy.percent()));
                row.push_back(std::string(limiterName(r.occupancy.limiter)));
            }
            row.push_back(std::string(spillClassName(r.spill)));
        }
        table.addRow(std::move(row));
    }
    return table.render();
}

std::string summaryText(const std::vector<ConfigAnalysis>& results, const std::vector<std::string>& archs) {
    const std::vector<ArchSummary> summaries = summarizeByArch(results, archs);
    TextTable table({"arch", "configs", "compiled", "errors", "spilling", "light", "heavy", "local only",
                     "occ % min / median / max", "limiters"},
                    {false, true, true, true, true, true, true, true, false, false});
    for (const ArchSummary& s : summaries) {
        std::string limiters;
        std::vector<std::pair<std::size_t, Limiter>> counts;
        for (std::size_t l = 0; l < s.limiters.size(); ++l) {
            if (s.limiters[l] > 0)
                counts.emplace_back(s.limiters[l], static_cast<Limiter>(l));
        }
        std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        for (const auto& [n, l] : counts)
            limiters += (limiters.empty() ? "" : ", ") + std::string(limiterName(l)) + " " + std::to_string(n);
        if (s.unlaunchable > 0)
            limiters += (limiters.empty() ? "" : ", ") + std::string("cannot launch ") + std::to_string(s.unlaunchable);
        const bool any = s.compiled > s.unlaunchable;
        table.addRow({s.arch, std::to_string(s.configs), std::to_string(s.compiled), std::to_string(s.failed),
                      std::to_string(s.spilling), std::to_string(s.lightSpills), std::to_string(s.heavySpills),
                      std::to_string(s.localOnly),
                      any ? formatDouble("%.1f", s.minOccupancy) + " / " + formatDouble("%.1f", s.medianOccupancy) +
                                " / " + formatDouble("%.1f", s.maxOccupancy)
                          : "-",
                      limiters});
    }
    std::string text = table.render();
    const std::vector<SpillDifference> differences = spillDifferences(results, archs);
    for (const SpillDifference& d : differences) {
        text += "  spill on " + d.spillsOn + " but not on " + d.cleanOn + ": " + std::to_string(d.indices.size()) +
                (d.indices.size() == 1 ? " config" : " configs") + " (index " + joinIndices(d.indices, 12) + ")\n";
    }
    if (archs.size() > 1 && differences.empty())
        text += "  the same configs spill on every arch\n";
    return text;
}

// The parameters a condition names, in the problem's order (T1 Conditions list them).
std::vector<std::string> conditionParameters(const TuningProblem& problem, const std::string& condition) {
    std::vector<std::string> names;
    const expr::Expression e = expr::Expression::compile(condition, problem.scope());
    for (int slot : e.usedSlots()) {
        if (slot < static_cast<int>(problem.parameters.size()))
            names.push_back(problem.parameters[static_cast<std::size_t>(slot)].name);
    }
    return names;
}

std::string describeCounts(const RuleCounts& c) {
    std::string text = "prunes " + std::to_string(c.pruned) + " of " + std::to_string(c.total) + " configs: ";
    text += c.missed() == 0 ? "every spilling one (" + std::to_string(c.positives) + ")"
                            : std::to_string(c.prunedPositives) + " of the " + std::to_string(c.positives) +
                                  " spilling ones (" + std::to_string(c.missed()) + " spilling configs kept)";
    text += c.prunedNegatives == 0 ? ", and no config that does not spill"
                                   : ", and " + std::to_string(c.prunedNegatives) + " that do not spill (wrongly)";
    return text;
}

std::string ruleText(const TuningProblem& problem, const ConfigSpace& space, std::size_t shape,
                     const std::vector<ConfigAnalysis>& results, const std::vector<std::string>& archs,
                     const std::string& partOf) {
    std::string text;
    auto describe = [&](const SuggestedRule& rule, const std::string& label) {
        text += "  " + label + rule.condition + "\n";
        text += "    " + describeCounts(rule.counts) + "\n";
        if (space.size() <= kMaxSpaceWalk) {
            const std::uint64_t pruned = countPrunedInSpace(problem, space, shape, rule.condition);
            text += "    over the whole space: prunes " + formatCount(static_cast<double>(pruned)) + " of " +
                    formatCount(static_cast<double>(space.size())) + " valid configs (" +
                    percentOf(static_cast<double>(pruned), static_cast<double>(space.size())) + ")\n";
        }
    };
    for (const std::string& arch : archs) {
        const RuleSuggestion any = suggestSpillRule(problem, shape, results, arch);
        text += "\nSuggested register-pressure rule for " + arch + "\n";
        if (!any.found) {
            text += "  none: " + any.reason + "\n";
            continue;
        }
        describe(any.best, "");
        // Few-byte spills come and go with ptxas' heuristics and blur any bound; the heavy ones
        // are what costs, so say how many of those the rule takes.
        std::vector<RuleSample> heavy;
        for (const ConfigAnalysis& r : results) {
            if (r.arch == arch && r.compiled())
                heavy.push_back({r.config, r.spill == SpillClass::Heavy});
        }
        const RuleCounts heavyCounts = evaluateRule(problem, shape, any.best.condition, heavy);
        if (heavyCounts.positives > 0 && heavyCounts.positives < any.best.counts.positives)
            text += "    of the " + std::to_string(heavyCounts.positives) +
                    " heavy spills (>= " + std::to_string(kHeavySpillBytes) + " bytes per thread) it prunes " +
                    std::to_string(heavyCounts.prunedPositives) + "\n";
        if (any.catchAll)
            describe(*any.catchAll, "to prune every spilling config: ");
        nlohmann::ordered_json condition;
        condition["Parameters"] = conditionParameters(problem, any.best.condition);
        condition["Expression"] = any.best.condition;
        text += "  as a T1 condition (ConfigurationSpace.Conditions): " + condition.dump() + "\n";
        if (!partOf.empty())
            text += "  (learnt from " + partOf + "; --all learns from every config)\n";
    }
    return text;
}

std::string failuresText(const std::vector<ConfigAnalysis>& results) {
    // Grouped by message: a parameter value that breaks the kernel breaks it the same way in
    // every config that has it.
    std::vector<std::pair<std::string, std::vector<const ConfigAnalysis*>>> groups;
    std::size_t failed = 0;
    for (const ConfigAnalysis& r : results) {
        if (r.compiled())
            continue;
        ++failed;
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == r.message; });
        if (it == groups.end())
            groups.push_back({r.message, {&r}});
        else
            it->second.push_back(&r);
    }
    if (failed == 0)
        return {};
    std::string text =
        "\nCompile errors (" + std::to_string(failed) + " of " + std::to_string(results.size()) + " compiles)\n";
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const auto& [message, members] = groups[g];
        std::vector<std::uint64_t> indices;
        std::vector<std::string> archs;
        for (const ConfigAnalysis* r : members) {
            if (indices.empty() || indices.back() != r->index)
                indices.push_back(r->index);
            if (std::find(archs.begin(), archs.end(), r->arch) == archs.end())
                archs.push_back(r->arch);
        }
        std::string archList;
        for (const std::string& arch : archs)
            archList += (archList.empty() ? "" : ", ") + arch;
        text += "  " + firstLine(message, 110) + "\n";
        text += "    " + std::to_string(members.size()) + (members.size() == 1 ? " compile" : " compiles") +
                ": index " + joinIndices(indices, 16) + " on " + archList + "\n";
        if (g >= kFullLogs)
            continue;
        const ConfigAnalysis& first = *members.front();
        text += "    log of index " + std::to_string(first.index) + " on " + first.arch + ":\n";
        std::size_t lines = 0;
        std::size_t start = 0;
        while (start < first.log.size()) {
            const std::size_t end = first.log.find('\n', start);
            if (lines == kLogLines) {
                text += "      ... (--json has every log in full)\n";
                break;
            }
            text +=
                "      " + first.log.substr(start, end == std::string::npos ? std::string::npos : end - start) + "\n";
            ++lines;
            if (end == std::string::npos)
                break;
            start = end + 1;
        }
    }
    return text;
}

// The compile error every config failed with, when none compiled and all failed alike (a header
// not found; a kernel name that names no kernel, whose message names each config's own
// instantiation): the kernel or the problem is at fault, not a parameter. "" otherwise.
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

int runAnalyze(AnalyzeOptions opt) {
    const TuningProblem problem = TuningProblem::load(opt.problemPath);
    checkShape(problem, opt.shape);

    // Archs: as given, without repeats; every one must be analysable before any work starts.
    std::vector<std::string> archs;
    for (const std::string& arch : opt.archs) {
        if (std::find(archs.begin(), archs.end(), arch) == archs.end())
            archs.push_back(arch);
    }
    if (archs.empty())
        archs.push_back("sm_90");
    for (const std::string& arch : archs)
        StaticAnalyzer::checkArch(arch);

    // --lines needs the disassembler: found (or refused) before any work.
    std::filesystem::path nvdisasm;
    if (opt.lines) {
        std::string why;
        nvdisasm = findNvdisasm(&why, problem.isTriton());
        if (nvdisasm.empty())
            throw InputError("", "--lines", why);
    }
    const StaticAnalyzer analyzer(problem, opt.shape);
    const ConfigSpace space = ConfigSpace::build(problem, opt.shape);
    printLaunchWarnings(problem, opt.shape, space, opt.problemPath);
    if (space.size() == 0)
        throw InputError(
            opt.problemPath, "/ConfigurationSpace/Conditions",
            "no config satisfies the conditions" +
                (problem.shapes.empty() ? std::string() : " for shape " + problem.shapes[opt.shape].label()));

    // --executed: the configs run once more on this machine's GPU; its arch is the one analysed.
    std::unique_ptr<CudaBackend> gpu;
    std::string gpuArch;
    if (opt.executed) {
        CudaBackendOptions o;
        o.verify = false;
        o.guard = GuardPolicy::Off;
        o.executedCounts = true;
        o.timing.minSamples = o.timing.maxSamples = 1; // the timing is not what is asked for
        o.timing.warmupSeconds = 0;
        o.timing.maxSeconds = 0;
        o.note = [](const std::string& text) { std::fprintf(stderr, "note: %s\n", text.c_str()); };
        gpu = std::make_unique<CudaBackend>(o);
        const BackendInfo info = [&] {
            try {
                return gpu->open(problem, opt.shape, space);
            } catch (const InputError& e) {
                // The backend's advice without a GPU (replay, or analyse offline) is tune's: here the
                // analysis is offline already, and only --executed needs the GPU.
                const std::size_t advice = e.message().find(". Without a GPU,");
                if (advice == std::string::npos)
                    throw;
                throw InputError(e.file(), "--executed",
                                 e.message().substr(0, advice) +
                                     ". --executed runs each config on this machine's GPU; without one, leave it "
                                     "out: --lines alone counts the spill and local-memory instructions by source "
                                     "line offline");
            }
        }();
        gpuArch = info.arch;
        if (opt.archs.empty())
            archs = {gpuArch};
        else if (std::find(archs.begin(), archs.end(), gpuArch) == archs.end())
            throw InputError("", "--executed",
                             "the configs run on this machine's " + info.deviceName + ", an " + gpuArch +
                                 " GPU: add --arch " + gpuArch + " (the configs analysed for it are the ones run)");
        StaticAnalyzer::checkArch(gpuArch);
    }

    std::vector<std::uint64_t> indices;
    std::string partOf; // what the configs analysed are, when not the whole space ("a sample")
    std::string selection;
    if (!opt.index.empty()) {
        // Configs asked for by their index in the space (as `space` and this report print them).
        for (const std::uint64_t i : opt.index)
            if (i >= space.size())
                throw InputError("", "--index",
                                 "no config " + std::to_string(i) + ": the space has " +
                                     formatCount(static_cast<double>(space.size())) + " valid configs (index 0 to " +
                                     std::to_string(space.size() - 1) + ")");
        indices = opt.index;
        std::sort(indices.begin(), indices.end());
        indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
        if (indices.size() < space.size())
            partOf = "the configs given";
        selection = (indices.size() == 1 ? "config " : formatCount(static_cast<double>(indices.size())) + " configs ") +
                    joinIndices(indices, 12) + " of " + formatCount(static_cast<double>(space.size())) +
                    " valid configs";
    } else if (opt.all || (opt.sample == 0 && space.size() <= kDefaultSample)) {
        indices.resize(space.size());
        std::iota(indices.begin(), indices.end(), std::uint64_t(0));
        selection = "all " + formatCount(static_cast<double>(space.size())) + " valid configs";
    } else {
        const std::uint64_t n = opt.sample > 0 ? opt.sample : kDefaultSample;
        indices = space.sample(n, opt.seed);
        std::sort(indices.begin(), indices.end());
        if (indices.size() < space.size())
            partOf = "a sample";
        selection = formatCount(static_cast<double>(indices.size())) + " of " +
                    formatCount(static_cast<double>(space.size())) + " valid configs, sampled with seed " +
                    std::to_string(opt.seed);
        if (opt.sample == 0)
            selection += " (the default; --all for every config, --sample N for another number)";
    }

    std::shared_ptr<CompileCache> cache;
    if (!opt.noCache) {
        CompileCacheOptions cacheOptions;
        cacheOptions.directory = opt.cacheDir;
        cache = std::make_shared<CompileCache>(cacheOptions);
    }
    CompileService service({opt.jobs, cache});

    std::string archList;
    for (const std::string& arch : archs)
        archList += (archList.empty() ? "" : ", ") + arch;
    std::fprintf(stderr, "Analysing %s on %s: %s, %u threads, %s\n", selection.c_str(), archList.c_str(),
                 compilerLabel(problem).c_str(), service.threadCount(),
                 cache ? ("cache " + cache->directory().string()).c_str() : "no cache");

    const std::size_t total = indices.size() * archs.size();
    Progress progress("compiled", total);
    const std::vector<ConfigAnalysis> results =
        analyzer.run(space, indices, archs, service, [&](std::size_t done, std::size_t) { progress.update(done); });
    std::size_t errors = 0;
    std::size_t cached = 0;
    for (const ConfigAnalysis& r : results) {
        errors += r.compiled() ? 0 : 1;
        cached += r.cached ? 1 : 0;
    }
    progress.finish(std::to_string(errors) + (errors == 1 ? " error, " : " errors, ") + std::to_string(cached) +
                    " from the cache");

    // Parameters whose values never reach the code, from the compiled sample and its neighbours.
    if (std::optional<LaunchWarning> w =
            inertWarning(problem, findInertParameters(analyzer, space, service, archs.front(), indices)))
        std::fprintf(stderr, "warning: %s: %s: %s\n", opt.problemPath.c_str(), w->location.c_str(), w->message.c_str());

    if (!opt.csvPath.empty())
        writeCsv(opt.csvPath, results, space);
    std::vector<LineReport> lineReports;
    SourceText source(problem.kernelPath());
    if (opt.lines) {
        const std::size_t compiled = results.size() - errors;
        if (!opt.spilling && opt.index.empty() && compiled > kLinesHint)
            std::fprintf(stderr,
                         "note: --lines reads the binaries of all %zu compiled configs with nvdisasm; --spilling reads "
                         "only those with spills or local memory, --index I,J only those configs\n",
                         compiled);
        lineReports = readLines(analyzer, results, service, nvdisasm, opt.spilling);
    }
    if (gpu) {
        countExecuted(*gpu, gpuArch, results, lineReports);
        gpu->close();
    }

    const std::string summary =
        "\nSummary\n" + summaryText(results, archs) + ruleText(problem, space, opt.shape, results, archs, partOf);
    // Bad input when no config compiled and all failed with one error, after the report.
    const auto failedAlike = [&]() -> int {
        const std::string failure = commonFailure(results);
        if (failure.empty())
            return kOk;
        std::fprintf(stderr, "error: %s: every config analysed failed to compile with the same error: %s\n",
                     opt.problemPath.c_str(), failure.c_str());
        return kBadInput;
    };
    if (opt.json) {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < results.size(); ++i) {
            nlohmann::ordered_json record = recordJson(results[i], space);
            if (opt.lines && results[i].compiled() && lineReports[i].read)
                record["lines"] = linesJson(lineReports[i], source);
            list.push_back(std::move(record));
        }
        std::cout << list.dump(2) << "\n";
        // stdout stays one JSON document; the summary is for people.
        std::fprintf(stderr, "%s", summary.c_str());
        return failedAlike();
    }

    std::string header = "Problem  " + opt.problemPath + "  (kernel " + problem.kernelName;
    if (!problem.shapes.empty() && !problem.shapes[opt.shape].dims.empty())
        header += ", shape " + problem.shapes[opt.shape].label();
    header += ")\n";
    std::printf("%s\n%s%s%s", header.c_str(), configTable(results, space).c_str(), failuresText(results).c_str(),
                summary.c_str());
    if (opt.lines)
        std::printf("%s", linesText(results, lineReports, space, source).c_str());
    return failedAlike();
}

} // namespace

void registerAnalyze(CLI::App& app) {
    auto opt = std::make_shared<AnalyzeOptions>();
    CLI::App* cmd = app.add_subcommand(
        "analyze", "Compile a problem's configs offline (NVRTC, or Triton for a Triton kernel; no GPU) for one or more "
                   "archs and report registers, spills, stack, shared memory, theoretical occupancy and its limiter "
                   "per config, a summary per arch and a suggested register-pressure rule");
    addProblemArgument(cmd, opt->problemPath);
    std::string archHelp = "A real GPU arch to compile for; repeat or separate with commas (default sm_90). "
                           "Analysable:";
    for (const std::string& arch : StaticAnalyzer::analysableArchs())
        archHelp += " " + arch;
    cmd->add_option("--arch", opt->archs, archHelp)->delimiter(',');
    CLI::Option* all = cmd->add_flag("--all", opt->all, "Analyse every valid config");
    CLI::Option* sample = cmd->add_option("--sample", opt->sample,
                                          "Analyse N valid configs drawn at random without replacement (default: " +
                                              std::to_string(kDefaultSample) + ", or all when the space is that small)")
                              ->check(wholeNumber(1, kAny));
    CLI::Option* index = cmd->add_option("--index", opt->index,
                                         "Analyse these configs: I[,J...], their indices in the space (as space and "
                                         "this report print them)")
                             ->delimiter(',')
                             ->check(wholeNumber(0, kAny));
    all->excludes(sample)->excludes(index);
    sample->excludes(index);
    cmd->add_option("--seed", opt->seed, "Seed of the sample (the same seed gives the same configs)")
        ->capture_default_str()
        ->check(wholeNumber(0, kAny));
    cmd->add_option("--jobs,-j", opt->jobs, "Compile threads (default: one per hardware thread)")
        ->check(wholeNumber(1, kMaxJobs));
    addShapeOption(cmd, opt->shape);
    cmd->add_flag("--json", opt->json,
                  "Print a JSON list of records, one per (config, arch): config, arch, status, registers, "
                  "spill_stores, spill_loads, stack_frame, shared_bytes, occupancy (percent), limiter, ... "
                  "(the summary and rule then go to stderr)");
    writesFile(cmd->add_option("--csv", opt->csvPath, "Also write the records to FILE as CSV"), "--csv");
    CLI::Option* cacheDir = cmd->add_option("--cache-dir", opt->cacheDir,
                                            "Folder of the compile cache (default: $TILESCOPE_CACHE_DIR/compile, else "
                                            "$XDG_CACHE_HOME/tilescope/compile, else ~/.cache/tilescope/compile)");
    CLI::Option* noCache = cmd->add_flag("--no-cache", opt->noCache, "Compile everything; read and write no cache");
    cacheDir->excludes(noCache);
    cmd->add_flag("--lines", opt->lines,
                  "Also say where each config's local memory is, by source line: the lines with spill stores and "
                  "loads (registers spilled and refilled) or a local array's loads and stores, most first, with their "
                  "text (every compile carries line information, which does not change the code; the binaries are "
                  "read with the CUDA toolkit's nvdisasm: on PATH, beside nvcc, in $CUDA_HOME/bin, or "
                  "$TILESCOPE_NVDISASM; with --json, each record's \"lines\"");
    cmd->add_flag("--executed", opt->executed,
                  "With --lines: also run each config analysed for this machine's GPU once there, with CUPTI's SASS "
                  "metrics, and give beside the static counts how many local stores and loads (spills and local "
                  "arrays) and instructions each line executed (warp instructions, one launch; needs the GPU and "
                  "its driver; the arch defaults to the GPU's)")
        ->needs("--lines");
    cmd->add_flag("--spilling", opt->spilling,
                  "With --lines: only the configs with spills or local memory (a stack frame), the others neither "
                  "read with nvdisasm nor listed")
        ->needs("--lines");
    setAction(cmd, [opt] { return runAnalyze(*opt); });
}

} // namespace tilescope::cli
