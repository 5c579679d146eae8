// tilescope-cli analyze: offline static analysis of a problem's configs for one or more archs:
// registers, spills, stack, shared memory, theoretical occupancy and its limiter per config, a
// summary per arch, and a suggested register-pressure rule. The analysis is the use case of
// core/jobs/analyze.h; here the options become its request and its outcome is printed.

#include "cli.h"

#include "jobs/analyze.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

namespace tilescope::cli {

namespace {

constexpr std::size_t kFullLogs = 5;   // failed compiles whose log the text output shows
constexpr std::size_t kLogLines = 15;  // lines of each such log
constexpr std::size_t kLinesShown = 8; // lines per config in the text output (--json has them all)

struct AnalyzeOptions {
    AnalyzeRequest request;
    bool json = false;
};

/// "1.23M", "512", for counts of executed instructions.
std::string executedText(std::uint64_t n) {
    return formatCount(static_cast<double>(n));
}

std::string clip(const std::string& text, std::size_t maxChars) {
    return text.size() > maxChars ? text.substr(0, maxChars - 3) + "..." : text;
}

std::string linesText(const AnalyzeOutcome& out) {
    const std::vector<ConfigAnalysis>& results = out.results;
    const std::vector<LineReport>& reports = out.lines;
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
        text += "  index " + std::to_string(r.index) + " on " + r.arch + "  " + out.space->describe(r.config) + "\n";
        if (!report.error.empty()) {
            text += "    " + report.error + "\n";
            continue;
        }
        const LineCounts& c = report.counts;
        const std::vector<SourceLine>& local = report.local;
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
            std::string where = std::filesystem::path(l.file).filename().string() + ":" + std::to_string(l.line);
            char counts[96];
            std::snprintf(counts, sizeof counts, "spill %3d st %3d ld  local %2d st %2d ld  %4d instr", l.spillStores,
                          l.spillLoads, l.localStores, l.localLoads, l.instructions);
            text += "    " + where + std::string(where.size() < 16 ? 16 - where.size() : 1, ' ') + counts + "  | " +
                    clip(report.localText[k], 70) + "\n";
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

std::string percentOf(double part, double whole) {
    return whole > 0 ? formatDouble("%.1f %%", 100.0 * part / whole) : "-";
}

std::string firstLine(const std::string& text, std::size_t maxChars) {
    return clip(text.substr(0, text.find('\n')), maxChars);
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
        std::vector<std::pair<std::size_t, Limiter>> counts;
        for (std::size_t l = 0; l < s.limiters.size(); ++l)
            if (s.limiters[l] > 0)
                counts.emplace_back(s.limiters[l], static_cast<Limiter>(l));
        std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        std::vector<std::string> limiters;
        for (const auto& [n, l] : counts)
            limiters.push_back(std::string(limiterName(l)) + " " + std::to_string(n));
        if (s.unlaunchable > 0)
            limiters.push_back("cannot launch " + std::to_string(s.unlaunchable));
        const bool any = s.compiled > s.unlaunchable;
        table.addRow({s.arch, std::to_string(s.configs), std::to_string(s.compiled), std::to_string(s.failed),
                      std::to_string(s.spilling), std::to_string(s.lightSpills), std::to_string(s.heavySpills),
                      std::to_string(s.localOnly),
                      any ? formatDouble("%.1f", s.minOccupancy) + " / " + formatDouble("%.1f", s.medianOccupancy) +
                                " / " + formatDouble("%.1f", s.maxOccupancy)
                          : "-",
                      joined(limiters)});
    }
    std::string text = table.render();
    const std::vector<SpillDifference> differences = spillDifferences(results, archs);
    for (const SpillDifference& d : differences) {
        text += "  spill on " + d.spillsOn + " but not on " + d.cleanOn + ": " + std::to_string(d.indices.size()) +
                (d.indices.size() == 1 ? " config" : " configs") + " (index " + indexList(d.indices, 12) + ")\n";
    }
    if (archs.size() > 1 && differences.empty())
        text += "  the same configs spill on every arch\n";
    return text;
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

std::string ruleText(const AnalyzeOutcome& out) {
    std::string text;
    const double size = static_cast<double>(out.space->size());
    auto describe = [&](const SuggestedRule& rule, std::optional<std::uint64_t> pruned, const std::string& label) {
        text += "  " + label + rule.condition + "\n";
        text += "    " + describeCounts(rule.counts) + "\n";
        if (pruned)
            text += "    over the whole space: prunes " + formatCount(static_cast<double>(*pruned)) + " of " +
                    formatCount(size) + " valid configs (" + percentOf(static_cast<double>(*pruned), size) + ")\n";
    };
    for (std::size_t a = 0; a < out.archs.size(); ++a) {
        const SpillRule& rule = out.rules[a];
        text += "\nSuggested register-pressure rule for " + out.archs[a] + "\n";
        if (!rule.found) {
            text += "  none: " + rule.reason + "\n";
            continue;
        }
        describe(rule.best, rule.prunedInSpace, "");
        // Few-byte spills come and go with ptxas' heuristics and blur any bound; the heavy ones
        // are what costs, so say how many of those the rule takes.
        if (rule.heavy.positives > 0 && rule.heavy.positives < rule.best.counts.positives)
            text += "    of the " + std::to_string(rule.heavy.positives) +
                    " heavy spills (>= " + std::to_string(kHeavySpillBytes) + " bytes per thread) it prunes " +
                    std::to_string(rule.heavy.prunedPositives) + "\n";
        if (rule.catchAll)
            describe(*rule.catchAll, rule.catchAllPrunedInSpace, "to prune every spilling config: ");
        nlohmann::ordered_json condition;
        condition["Parameters"] = rule.parameters;
        condition["Expression"] = rule.best.condition;
        text += "  as a T1 condition (ConfigurationSpace.Conditions): " + condition.dump() + "\n";
        if (!out.partOf.empty())
            text += "  (learnt from " + out.partOf + "; --all learns from every config)\n";
    }
    return text;
}

std::string failuresText(const std::vector<ConfigAnalysis>& results) {
    const std::vector<CompileFailureGroup> groups = compileFailureGroups(results);
    if (groups.empty())
        return {};
    std::size_t failed = 0;
    for (const CompileFailureGroup& g : groups)
        failed += g.members.size();
    std::string text =
        "\nCompile errors (" + std::to_string(failed) + " of " + std::to_string(results.size()) + " compiles)\n";
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const CompileFailureGroup& group = groups[g];
        text += "  " + firstLine(group.message, 110) + "\n";
        text += "    " + std::to_string(group.members.size()) + (group.members.size() == 1 ? " compile" : " compiles") +
                ": index " + indexList(group.indices, 16) + " on " + joined(group.archs) + "\n";
        if (g >= kFullLogs)
            continue;
        const ConfigAnalysis& first = *group.members.front();
        text += "    log of index " + std::to_string(first.index) + " on " + first.arch + ":\n";
        std::istringstream log(first.log);
        std::size_t lines = 0;
        for (std::string line; std::getline(log, line); ++lines) {
            if (lines == kLogLines) {
                text += "      ... (--json has every log in full)\n";
                break;
            }
            text += "      " + line + "\n";
        }
    }
    return text;
}

/// The events as the CLI shows them: notes, warnings and progress on stderr.
AnalyzeEvents stderrEvents(const AnalyzeRequest& request, std::unique_ptr<Progress>& progress) {
    AnalyzeEvents events;
    events.spaceBuilt = [&request](const TuningProblem& problem, const ConfigSpace& space) {
        printLaunchWarnings(problem, request.shape, space, request.problemPath);
    };
    events.started = [](const AnalyzeStart& s) {
        std::fprintf(stderr, "Analysing %s on %s: %s, %u threads, %s\n", s.selection.c_str(), joined(s.archs).c_str(),
                     s.compiler.c_str(), s.threads, s.cacheDir.empty() ? "no cache" : ("cache " + s.cacheDir).c_str());
    };
    events.stageStarted = [&progress](const std::string& verb, std::uint64_t total) {
        progress = std::make_unique<Progress>(verb, total);
    };
    events.stageProgress = [&progress](std::uint64_t done) { progress->update(done); };
    events.stageFinished = [&progress](const std::string& summary) { progress->finish(summary); };
    events.note = stderrNotes("");
    events.warning = [&request](const LaunchWarning& w) {
        std::fprintf(stderr, "warning: %s: %s: %s\n", request.problemPath.c_str(), w.location.c_str(),
                     w.message.c_str());
    };
    return events;
}

int runAnalyze(const AnalyzeOptions& opt) {
    std::unique_ptr<Progress> progress;
    const AnalyzeOutcome out = runAnalysis(opt.request, stderrEvents(opt.request, progress));
    const std::string summary = "\nSummary\n" + summaryText(out.results, out.archs) + ruleText(out);
    // Bad input when no config compiled and all failed with one error, after the report.
    const auto failedAlike = [&]() -> int {
        if (out.commonFailure.empty())
            return kOk;
        std::fprintf(stderr, "error: %s: every config analysed failed to compile with the same error: %s\n",
                     out.problemPath.c_str(), out.commonFailure.c_str());
        return kBadInput;
    };
    if (opt.json) {
        std::cout << analysisJson(out) << "\n";
        // stdout stays one JSON document; the summary is for people.
        std::fprintf(stderr, "%s", summary.c_str());
        return failedAlike();
    }
    const TuningProblem& problem = *out.problem;
    std::string header = "Problem  " + out.problemPath + "  (kernel " + problem.kernelName;
    if (!problem.shapes.empty() && !problem.shapes[opt.request.shape].dims.empty())
        header += ", shape " + problem.shapes[opt.request.shape].label();
    header += ")\n";
    std::printf("%s\n%s%s%s", header.c_str(), configTable(out.results, *out.space).c_str(),
                failuresText(out.results).c_str(), summary.c_str());
    if (opt.request.lines)
        std::printf("%s", linesText(out).c_str());
    return failedAlike();
}

} // namespace

void registerAnalyze(CLI::App& app) {
    auto opt = std::make_shared<AnalyzeOptions>();
    CLI::App* cmd = app.add_subcommand(
        "analyze", "Compile a problem's configs offline (NVRTC, or Triton for a Triton kernel; no GPU) for one or more "
                   "archs and report registers, spills, stack, shared memory, theoretical occupancy and its limiter "
                   "per config, a summary per arch and a suggested register-pressure rule");
    addProblemArgument(cmd, opt->request.problemPath);
    std::string archHelp = "A real GPU arch to compile for; repeat or separate with commas (default sm_90). "
                           "Analysable:";
    for (const std::string& arch : StaticAnalyzer::analysableArchs())
        archHelp += " " + arch;
    cmd->add_option("--arch", opt->request.archs, archHelp)->delimiter(',');
    CLI::Option* all = cmd->add_flag("--all", opt->request.all, "Analyse every valid config");
    CLI::Option* sample =
        cmd->add_option("--sample", opt->request.sample,
                        "Analyse N valid configs drawn at random without replacement (default: " +
                            std::to_string(kDefaultAnalysisSample) + ", or all when the space is that small)")
            ->check(wholeNumber(1, kAny));
    CLI::Option* index = cmd->add_option("--index", opt->request.indices,
                                         "Analyse these configs: I[,J...], their indices in the space (as space and "
                                         "this report print them)")
                             ->delimiter(',')
                             ->check(wholeNumber(0, kAny));
    all->excludes(sample)->excludes(index);
    sample->excludes(index);
    cmd->add_option("--seed", opt->request.seed, "Seed of the sample (the same seed gives the same configs)")
        ->capture_default_str()
        ->check(wholeNumber(0, kAny));
    cmd->add_option("--jobs,-j", opt->request.jobs, "Compile threads (default: one per hardware thread)")
        ->check(wholeNumber(1, kMaxJobs));
    addShapeOption(cmd, opt->request.shape);
    cmd->add_flag("--json", opt->json,
                  "Print a JSON list of records, one per (config, arch): config, arch, status, registers, "
                  "spill_stores, spill_loads, stack_frame, shared_bytes, occupancy (percent), limiter, ... "
                  "(the summary and rule then go to stderr)");
    writesFile(cmd->add_option("--csv", opt->request.csvPath, "Also write the records to FILE as CSV"), "--csv");
    CLI::Option* cacheDir = cmd->add_option("--cache-dir", opt->request.cacheDir,
                                            "Folder of the compile cache (default: $TILESCOPE_CACHE_DIR/compile, else "
                                            "$XDG_CACHE_HOME/tilescope/compile, else ~/.cache/tilescope/compile)");
    CLI::Option* noCache =
        cmd->add_flag("--no-cache", opt->request.noCache, "Compile everything; read and write no cache");
    cacheDir->excludes(noCache);
    cmd->add_flag("--lines", opt->request.lines,
                  "Also say where each config's local memory is, by source line: the lines with spill stores and "
                  "loads (registers spilled and refilled) or a local array's loads and stores, most first, with their "
                  "text (every compile carries line information, which does not change the code; the binaries are "
                  "read with the CUDA toolkit's nvdisasm: on PATH, beside nvcc, in $CUDA_HOME/bin, or "
                  "$TILESCOPE_NVDISASM; with --json, each record's \"lines\"");
    cmd->add_flag("--executed", opt->request.executed,
                  "With --lines: also run each config analysed for this machine's GPU once there, with CUPTI's SASS "
                  "metrics, and give beside the static counts how many local stores and loads (spills and local "
                  "arrays) and instructions each line executed (warp instructions, one launch; needs the GPU and "
                  "its driver; the arch defaults to the GPU's)")
        ->needs("--lines");
    cmd->add_flag("--spilling", opt->request.spilling,
                  "With --lines: only the configs with spills or local memory (a stack frame), the others neither "
                  "read with nvdisasm nor listed")
        ->needs("--lines");
    setAction(cmd, [opt] { return runAnalyze(*opt); });
}

} // namespace tilescope::cli
