#include "tuner/sessionreport.h"

#include "analysis/clocks.h"
#include "base/textformat.h"
#include "measure/replay/replaybackend.h"

#include <cstdio>

namespace tilescope {

std::string statusSummary(const StatusCounts& counts) {
    std::string text;
    for (const ResultStatus s : kAllStatuses)
        if (counts.of(s) > 0)
            text += (text.empty() ? "" : ", ") + std::string(statusName(s)) + " " + formatCount(double(counts.of(s)));
    return text.empty() ? "none" : text;
}

std::string bestResultText(const ResultRecord& best, const std::string& objectiveName, StaticRank by) {
    if (best.ranksStatically()) {
        const std::string quantities = describeStatic(best, by);
        return (quantities.empty() ? std::string("nothing known") : quantities) + " (by " +
               std::string(staticRankName(by)) + "; not timed)";
    }
    std::string text = formatDouble("%.4g ms", best.timeMs());
    if (best.measurement.time.hasInterval())
        text += " (95 %: " + formatDouble("%.4g", best.measurement.time.ciLowMs) + "-" +
                formatDouble("%.4g", best.measurement.time.ciHighMs) + ")";
    if (best.objective)
        text += "  " + formatDouble("%.4g", *best.objective) + " " + objectiveName;
    return text;
}

std::string benchmarkPartsSentence(const SessionPipeline& pl) {
    const BenchmarkParts& b = pl.parts;
    if (pl.measuredConfigs == 0 || b == BenchmarkParts{})
        return {};
    const double n = double(pl.measuredConfigs);
    auto ms = [&](double seconds) { return formatDouble("%.3g ms", 1e3 * seconds / n); };
    std::string text =
        "a config " + ms(pl.benchmarkSeconds) + " of the GPU's time: checking its outputs " + ms(b.check);
    if (b.comparedOnDevice + b.downloaded > 0)
        text += " (" + formatCount(double(b.comparedOnDevice)) + " of " +
                formatCount(double(b.comparedOnDevice + b.downloaded)) + " outputs compared on the GPU)";
    text += ", timing " + ms(b.timing);
    if (b.warmup > 0 || b.samples > 0)
        text += " (warm-up " + ms(b.warmup) + ", " + formatDouble("%.3g", double(b.samples) / n) + " samples)";
    if (b.raced > 0)
        text += " (" + formatCount(double(b.raced)) + " of " + formatCount(n) + " configs raced: stopped early)";
    if (b.batched > 0)
        text += " (" + formatCount(double(b.batched)) + " of " + formatCount(n) +
                " configs timed in batches of up to " + formatCount(double(b.batchLaunches)) +
                " launches: shorter than 10 us, warm context)";
    if (b.counters > 0)
        text += ", counters " + ms(b.counters);
    if (b.profiled > 0 && std::uint64_t(b.profiled) < pl.measuredConfigs)
        text +=
            " (profiled " + formatCount(double(b.profiled)) + " of " + formatCount(n) + " configs: those that ranked)";
    if (b.energy > 0)
        text += ", energy " + ms(b.energy);
    const double rest = pl.benchmarkSeconds - b.check - b.timing - b.counters - b.energy;
    if (rest > 0)
        text += ", loading and the rest " + ms(rest);
    return text;
}

SessionReport sessionReport(const SessionSummary& summary, const SessionReportContext& context) {
    SessionReport report;
    const SessionInfo& s = summary.session;
    const SessionProgress& p = summary.progress;
    const bool replayed = context.spec.kind == BackendSpec::Kind::Replay;
    auto line = [&](const std::string& label, const std::string& text) {
        report.text += "  " + label + std::string(label.size() < 12 ? 12 - label.size() : 1, ' ') + text + "\n";
    };
    report.text += "Session " + std::to_string(s.id) + " " + std::string(sessionStateName(s.state)) + ": " +
                   summary.stopReason + "\n";
    line("problem",
         context.problemPath + "  (kernel " + s.kernel +
             (s.shape.empty() ? "" : ", shape " + std::to_string(context.shapeIndex) + ": " + s.shapeLabel()) + ")");
    const auto* replay = dynamic_cast<const ReplayBackend*>(context.backend);
    line("backend", replay ? "replay of " + context.spec.recording.string() + " (" +
                                 formatCount(double(replay->matchedResults())) + " recorded configs" +
                                 (s.deviceName.empty() ? "" : " on " + s.deviceName) + ")"
                           : s.backend);
    line("strategy", s.strategy + ", seed " + std::to_string(s.seed) +
                         ", budget: " + (s.budget.empty() ? "the whole space" : s.budget));
    line("results", formatCount(double(p.done)) + " of " + formatCount(double(p.total)) + " configs" +
                        (summary.resumed ? " (resumed; this run " + formatCount(double(p.thisRun)) + ")" : "") + ": " +
                        statusSummary(p.counts));
    const bool analysis = context.spec.kind == BackendSpec::Kind::Analysis;
    line("best",
         p.best ? bestResultText(*p.best, context.objectiveName, context.rankBy) + "  " + describeConfig(p.best->config)
         : analysis ? "none (no config compiled within the arch's limits)"
                    : "none (no config ran correctly)");
    if (!summary.implausible.empty())
        line("implausible", summary.implausible);
    if (!summary.verification.empty())
        line("verify", summary.verification);
    if (!summary.confirmation.empty())
        line("confirmed", summary.confirmation);
    if (!summary.secondInputs.empty())
        line("inputs", summary.secondInputs);
    if (const std::string state = measuredStateSentence(s.provenanceJson); !state.empty())
        line("gpu state", state);
    if (!summary.clocksMoved.empty())
        report.warnings.push_back("the GPU's clocks moved while this session measured (" + summary.clocksMoved +
                                  "): its times may not compare with each other; tune again on an idle GPU, or lock "
                                  "the clocks (nvidia-smi -lgc)");
    if (summary.pipeline && summary.pipeline->configs > 0) {
        const SessionPipeline& pl = *summary.pipeline;
        const double wall = std::max(1e-9, pl.wallSeconds);
        std::string text;
        if (summary.compileThreads > 0) {
            text = "compiled " + formatCount(double(pl.binaries)) + (pl.binaries == 1 ? " binary" : " binaries") +
                   " for " + formatCount(double(pl.configs)) + " configs (the rest from the cache)";
            if (pl.otherBinaries > 0)
                text += ", " + formatCount(double(pl.otherBinaries)) + " more for configs inspected, not evaluated";
            if (const std::uint64_t again = pl.compiles - std::min(pl.compiles, pl.binaries + pl.otherBinaries))
                text += " (" + formatCount(double(again)) + " compiled a second time)";
            if (!pl.compiledOn.empty()) {
                std::string where;
                for (const auto& [place, count] : pl.compiledOn)
                    where += (where.empty() ? "" : ", ") + place + ": " + formatCount(double(count));
                // The compiler by its name alone ("nvcc ran on rank 1: 12"), NVRTC where none is recorded.
                const std::string compiler = provenanceCompiler(s.provenanceJson);
                text += "; " + (compiler.empty() ? std::string("NVRTC") : compiler.substr(0, compiler.find(' '))) +
                        " ran on " + where;
            }
            text += summary.compileThreads == 1
                        ? std::string("; the compile thread busy ")
                        : "; the " + std::to_string(summary.compileThreads) + " compile threads busy ";
            text += formatDouble("%.0f", 100.0 * pl.compileSeconds / (wall * summary.compileThreads)) + " %";
        }
        // The analysis backend measures nothing (its MPI slots still name the rank that took each config).
        if (!pl.devices.empty() && context.spec.kind != BackendSpec::Kind::Analysis)
            text += std::string(text.empty() ? "" : ", ") + "the GPU" + (pl.devices.size() > 1 ? "s" : "") + " " +
                    formatDouble("%.0f", 100.0 * pl.benchmarkSeconds / (wall * double(pl.devices.size()))) +
                    " % measuring";
        if (!text.empty())
            line("pipeline", text);
        if (const std::string parts = benchmarkPartsSentence(pl); !parts.empty())
            line("measuring", parts);
    }
    line("time", formatDuration(p.elapsedSeconds) + " wall; recorded compile + benchmark time " +
                     formatDuration(p.recordedSeconds) +
                     (replayed ? " (what the recorded session spent on these configs)" : ""));
    line("database",
         context.database + "  (tilescope-cli show " + context.database + " --session " + std::to_string(s.id) + ")");
    if (p.best && p.best->ranksStatically()) {
        std::string others;
        for (const StaticRank r : kAllStaticRanks)
            if (r != context.rankBy)
                others += (others.empty() ? "" : " or ") + std::string(staticRankName(r));
        report.notes.push_back("nothing was timed: the analysed configs rank by " +
                               std::string(staticRankName(context.rankBy)) + " (--rank-by " + others +
                               " for another order; a GPU backend times them)");
    }
    if (p.counts.of(ResultStatus::Skipped) > 0)
        report.notes.push_back(formatCount(double(p.counts.of(ResultStatus::Skipped))) + " config(s) were skipped" +
                               (replayed ? ": absent from the recording" : " (tilescope-cli show lists why)"));
    return report;
}

} // namespace tilescope
