// tilescope-cli lab: replays search strategies on a recording of a whole space and compares
// their efficiency. The engine is StrategyLab in core/tuner; this file reads the options, shows
// progress on stderr and the comparison on stdout.

#include "cli.h"

#include "base/error.h"
#include "base/filewrite.h"
#include "base/textformat.h"
#include "model/records.h"
#include "search/strategy.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "tuner/objective.h"
#include "tuner/strategylab.h"

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <memory>

namespace tilescope::cli {

namespace {

struct LabCliOptions {
    std::string problemPath;
    std::string replay;
    std::size_t shape = 0;
    std::string strategies;
    std::size_t repeats = 30;
    std::uint64_t budget = 0;
    double fraction = 0.2;
    std::uint64_t seed = 0;
    std::size_t batch = 1;
    std::vector<std::string> traces;
    std::string json;
    std::string curves;
    std::string scoreOver = "methodology";
    std::string objective;
    CLI::Option* budgetOption = nullptr;
    CLI::Option* fractionOption = nullptr;
};

std::atomic<bool> g_cancel{false};

void stopLabOnSignal(int) {
    g_cancel.store(true);
}

// "0.982" or "0.982 ±0.012" style cells are too wide for seven columns: the mean, and the spread in
// the JSON report.
std::string fractionCell(const LabStat& s) {
    return formatFinite("%.3f", s.mean);
}

std::string reachCell(const LabTarget& t, std::size_t runs) {
    if (t.never == runs)
        return "never";
    std::string text = formatFinite("%.1f", t.evaluations.mean);
    if (t.never > 0)
        text += " (" + std::to_string(t.never) + " never)";
    return text;
}

std::string timeCell(const LabTarget& t, std::size_t runs) {
    if (t.never == runs || !std::isfinite(t.seconds.mean))
        return "-";
    return formatDuration(t.seconds.mean);
}

std::string performanceText(const LabSpaceSummary& s) {
    if (s.objectiveName.empty())
        return formatFinite("%.4g ms", s.optimumMs);
    return formatFinite("%.4g ms", s.optimumMs) + "  " + formatFinite("%.4g", s.optimum) + " " + s.objectiveName;
}

// The lab's options from the command line, the strategies' names checked before anything is
// read, so that a typo costs nothing.
LabOptions labOptions(const LabCliOptions& opt) {
    LabOptions options;
    options.strategies = splitList(opt.strategies);
    options.repeats = opt.repeats;
    options.seed = opt.seed;
    options.batch = opt.batch;
    if (opt.budgetOption->count() > 0)
        options.budget = opt.budget;
    else
        options.fraction = opt.fraction;
    if (opt.scoreOver == "budget")
        options.window = ScoreWindow::Budget;
    else if (opt.scoreOver != "methodology")
        throw InputError("", "--score-over", "expected methodology or budget, got '" + opt.scoreOver + "'");
    const std::string known = joined(strategyNames());
    for (const auto& name : options.strategies)
        if (canonicalStrategyName(name).empty())
            throw InputError("", "--strategies", "unknown strategy '" + name + "' (known: " + known + ")");
    if (!opt.strategies.empty() && options.strategies.empty() && opt.traces.empty())
        throw InputError("", "--strategies", "no strategy given (known: " + known + ")");
    return options;
}

// What the lab replayed: the recording, the optimum, the budget and the window scored.
void printLabHeading(const LabCliOptions& opt, const TuningProblem& problem, const LabReport& report) {
    const LabSpaceSummary& s = report.space;
    std::printf("Strategy lab: %s, shape %zu%s\n", opt.problemPath.c_str(), opt.shape,
                problem.shapes.empty() || opt.shape >= problem.shapes.size()
                    ? ""
                    : (" (" + problem.shapes[opt.shape].label() + ")").c_str());
    std::printf("  recording   %s%s: %s of %s configs of the space recorded, %s ok%s%s\n", s.recording.c_str(),
                s.session.empty() ? "" : (" (" + s.session + ")").c_str(), formatCount(double(s.recorded)).c_str(),
                formatCount(double(s.spaceSize)).c_str(), formatCount(double(s.ok)).c_str(),
                s.missing ? (", " + formatCount(double(s.missing)) + " missing (count as failed)").c_str() : "",
                s.unmatched ? (", " + formatCount(double(s.unmatched)) + " recorded results not in the space").c_str()
                            : "");
    std::printf("  optimum     %s  %s\n", performanceText(s).c_str(), describeConfig(s.optimumConfig).c_str());
    const double n = double(std::max<std::uint64_t>(1, s.spaceSize));
    std::printf("  recorded    %s of compile + benchmark time over the space, %s per config on average "
                "(compile %.2f s, benchmark %.2f s)\n",
                formatDuration(s.totalSeconds).c_str(), formatDuration(s.secondsPerConfig).c_str(),
                s.compileSeconds / n, (s.totalSeconds - s.compileSeconds) / n);
    std::printf("  budget      %s per run; %zu run(s) per strategy (seeds %llu..%llu), batch %zu\n",
                report.budget.c_str(), report.repeats, static_cast<unsigned long long>(report.seed),
                static_cast<unsigned long long>(report.seed + report.repeats - 1), report.batch);
    const LabWindow& w = report.window;
    if (w.kind == ScoreWindow::Methodology)
        std::printf("  score over  %llu..%llu evaluations (%s..%s recorded): where random search expects to "
                    "be %g %%..%g %% of the way from the median to the optimum%s\n",
                    static_cast<unsigned long long>(w.startEvaluations),
                    static_cast<unsigned long long>(w.endEvaluations), formatDuration(w.startSeconds).c_str(),
                    formatDuration(w.endSeconds).c_str(), w.cutoffStart * 100, w.cutoffEnd * 100,
                    w.clamped ? " (cut at the budget)" : "");
    else
        std::printf("  score over  the whole budget: 1..%llu evaluations (%s recorded)\n",
                    static_cast<unsigned long long>(w.endEvaluations), formatDuration(w.endSeconds).c_str());
    std::printf("\n");
}

// The strategies side by side: the fraction of the optimum reached, the evaluations and the time to
// get within 1 % and 5 %, the scores.
std::string labTable(const LabReport& report) {
    std::vector<std::string> headers = {"strategy", "runs"};
    std::vector<bool> right = {false, true};
    for (const double q : {1.0, 2.0, 5.0, 10.0, 20.0}) {
        bool present = false;
        for (const auto& r : report.strategies)
            for (const auto& m : r.milestones)
                present = present || m.percent == q;
        if (present || report.strategies.empty()) {
            headers.push_back("@" + formatFinite("%g", q) + "%");
            right.push_back(true);
        }
    }
    for (const char* h : {"evals to 1%", "evals to 5%", "time to 1%", "score", "score(evals)"}) {
        headers.push_back(h);
        right.push_back(true);
    }
    TextTable table(headers, right);
    for (const auto& r : report.strategies) {
        std::vector<std::string> row = {r.name, std::to_string(r.runs.size())};
        for (std::size_t c = 2; c < headers.size() - 5; ++c) {
            std::string cell = "-";
            for (const auto& m : r.milestones)
                if ("@" + formatFinite("%g", m.percent) + "%" == headers[c])
                    cell = fractionCell(m.fraction);
            row.push_back(cell);
        }
        row.push_back(reachCell(r.within1, r.runs.size()));
        row.push_back(reachCell(r.within5, r.runs.size()));
        row.push_back(timeCell(r.within1, r.runs.size()));
        row.push_back(formatFinite("%.3f", r.score.mean));
        row.push_back(formatFinite("%.3f", r.scoreEvals.mean));
        table.addRow(row);
    }
    return table.render();
}

// With energy in the recording: the hypervolume of each strategy's time-energy front.
void printLabFront(const LabReport& report) {
    const LabSpaceSummary& s = report.space;
    std::vector<std::string> frontHeaders = {"strategy"};
    std::vector<bool> frontRight = {false};
    if (!report.strategies.empty())
        for (const auto& m : report.strategies.front().frontMilestones) {
            frontHeaders.push_back("@" + formatFinite("%g", m.percent) + "%");
            frontRight.push_back(true);
        }
    TextTable front(frontHeaders, frontRight);
    for (const auto& r : report.strategies) {
        std::vector<std::string> row = {r.name};
        for (const auto& m : r.frontMilestones)
            row.push_back(formatFinite("%.3f", m.fraction.mean) + " ± " + formatFinite("%.3f", m.fraction.stdev));
        front.addRow(row);
    }
    std::printf("\nThe time-energy front (the recording has each config's energy): the hypervolume of the "
                "front of the configs\nevaluated after q %% of the space, as a fraction of the whole "
                "space's; both against the median time\n(%s ms) and energy (%s J). Mean ± standard deviation "
                "over the runs.\n%s",
                formatFinite("%.4g", s.referenceMs).c_str(), formatFinite("%.4g", s.referenceJ).c_str(),
                front.render().c_str());
}

int runLab(const LabCliOptions& opt) {
    TuningProblem problem = TuningProblem::load(opt.problemPath);
    checkShape(problem, opt.shape);
    if (!opt.objective.empty())
        problem.objective = objectiveFor(opt.objective, problem.objective);
    LabOptions options = labOptions(opt);
    const ConfigSpace space = ConfigSpace::build(problem, opt.shape);
    const StrategyLab lab(problem, opt.shape, space, std::filesystem::path(opt.replay));
    std::vector<LabTraces> traces;
    for (const auto& file : opt.traces)
        traces.push_back(readLabTraces(file, space));

    std::unique_ptr<Progress> progress;
    options.progress = [&](std::size_t done, std::size_t total, const std::string& what) {
        if (!progress)
            progress = std::make_unique<Progress>("replayed runs", total);
        progress->update(done, what);
    };
    g_cancel.store(false);
    options.cancel = &g_cancel;
    const auto oldInt = std::signal(SIGINT, stopLabOnSignal);
    LabReport report;
    try {
        report = lab.run(options, traces);
    } catch (const Cancelled&) {
        std::signal(SIGINT, oldInt);
        std::fprintf(stderr, "cancelled\n");
        return 130;
    } catch (...) {
        std::signal(SIGINT, oldInt);
        throw;
    }
    std::signal(SIGINT, oldInt);
    if (progress)
        progress->finish();

    const bool toStdout = opt.json == "-";
    if (!toStdout) {
        printLabHeading(opt, problem, report);
        std::printf("%s", labTable(report).c_str());
        std::printf("\n  @q%%: mean fraction of the optimum reached after q %% of the space's evaluations. evals/time "
                    "to x%%: mean evaluations\n  (recorded seconds) to get within x %% of the optimum, over the runs "
                    "that did (never: runs that did not\n  within the budget). score: the methodology score (0 = "
                    "random search, 1 = the optimum at once) on the\n  recorded-time axis; score(evals): on the "
                    "evaluations axis. Spreads: --json.\n");
        if (report.space.hasEnergy)
            printLabFront(report);
    }
    std::fflush(stdout);
    for (const auto& r : report.strategies)
        for (const auto& n : r.notes)
            std::fprintf(stderr, "note: %s: %s\n", r.name.c_str(), n.c_str());
    for (const auto& n : report.notes)
        std::fprintf(stderr, "note: %s\n", n.c_str());

    if (!opt.json.empty()) {
        const std::string text = labReportJson(report) + "\n";
        if (toStdout) {
            std::fwrite(text.data(), 1, text.size(), stdout);
        } else {
            writeFileAtomically(opt.json, text, "--json");
            std::printf("  report      %s\n", opt.json.c_str());
        }
    }
    if (!opt.curves.empty()) {
        writeLabCurves(report, opt.curves);
        std::fprintf(toStdout ? stderr : stdout, "  curves      %s/evaluations.csv, %s/seconds.csv\n",
                     opt.curves.c_str(), opt.curves.c_str());
    }
    return kOk;
}

} // namespace

void registerLab(CLI::App& app) {
    auto opt = std::make_shared<LabCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "lab", "Compare search strategies by replaying them, many seeds each, on a recording of the whole space");
    addProblemArgument(cmd, opt->problemPath);
    readsFile(
        cmd->add_option("--replay", opt->replay,
                        "The recording of the whole space: a T4 results file (gzip or not), a Kernel Tuner cache or a "
                        "Tilescope database; configs it lacks count as failed"))
        ->required();
    addShapeOption(cmd, opt->shape);
    cmd->add_option("--objective", opt->objective,
                    "What makes a config better: time (the default: the problem's objective, or 1 / time), energy "
                    "(work per joule) or edp (work per joule-second); energy and edp need a recording with each "
                    "config's energy");
    cmd->add_option("--strategies", opt->strategies,
                    "Strategies to compare, separated by commas (known: " + joined(strategyNames()) +
                        "); default: every one but exhaustive");
    cmd->add_option("--repeats", opt->repeats, "Runs per strategy, with seeds S, S+1, ...")
        ->capture_default_str()
        ->check(wholeNumber(1, 100000));
    opt->budgetOption = cmd->add_option("--budget", opt->budget, "Configs per run")->check(wholeNumber(1, kAny));
    opt->fractionOption =
        cmd->add_option("--fraction", opt->fraction, "Configs per run as a fraction of the space, in (0, 1]")
            ->capture_default_str()
            ->check(fractionOfSpace());
    opt->budgetOption->excludes(opt->fractionOption);
    cmd->add_option("--seed", opt->seed, "Seed of the first run")->capture_default_str()->check(wholeNumber(0, kAny));
    cmd->add_option("--batch", opt->batch, "Configs a strategy proposes at a time")
        ->capture_default_str()
        ->check(wholeNumber(1, 1000000));
    readsFile(
        cmd->add_option("--traces", opt->traces,
                        "Runs made by another tool to score the same way (repeatable): JSON {\"tool\": ..., \"runs\": "
                        "[{\"strategy\": ..., \"seed\": ..., \"configs\": [{name: value, ...}, ...]}]}; each strategy "
                        "becomes a row named TOOL:STRATEGY"));
    cmd->add_option("--score-over", opt->scoreOver,
                    "Window of the methodology score: methodology (where random search is expected to reach 1 % "
                    "to 96 % of the way from the median to the optimum, as the paper's package does) or budget "
                    "(the whole budget)")
        ->capture_default_str();
    writesFile(cmd->add_option("--json", opt->json,
                               "Write the full report as JSON to FILE (- for stdout, instead of the table)"),
               "--json");
    cmd->add_option("--curves", opt->curves,
                    "Write convergence curves to DIR/evaluations.csv and DIR/seconds.csv: the best-so-far fraction "
                    "of the optimum (mean, min, max over the runs) against evaluations and recorded seconds");
    cmd->footer("Each run replays the recorded outcome of every config a strategy proposes, up to the budget (default "
                "20 % of the space). Performance is the problem's objective (e.g. TFLOP/s), else 1 / time.\n"
                "Exit status: 0 done, 2 bad input, 130 interrupted.");
    setAction(cmd, [opt] { return runLab(*opt); });
}

} // namespace tilescope::cli
