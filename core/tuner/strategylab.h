#pragma once

// The strategy lab: replays search strategies on a recording of a whole space and measures how
// efficiently each finds the best config, in evaluations and in recorded tuning time.
//
// The table. Every config of the space gets its recorded outcome: status, score (what a strategy
// observes: the median time in ms, or minus the objective when the problem has one), performance
// p (higher is better: the objective when the problem has one, else 1 / median ms; 0 for a
// config that did not run correctly), recorded seconds (compile + benchmark time) and the static
// features (registers, spills, occupancy). A config the recording lacks is a failed observation
// (status Skipped, p = 0, 0 s), as a replayed tuning session sees it. The optimum p_opt is the
// best p over the space.
//
// A run. A strategy made with seed (seed0 + r) proposes `batch` configs at a time and observes
// their recorded outcomes until it is done or `limit` configs are evaluated (limit: --budget N,
// or ceil(F * N) for --fraction F; N = the space's size). Its curve is the best p after each
// evaluation, b(k), k = 1..limit, and the cumulative recorded seconds c(k). A run that stops
// early (a strategy with nothing left, a trace of fewer configs) keeps its last best: the curve
// stays flat and the time stops growing. Before any config ran correctly b = 0.
//
// Per strategy, over its runs (mean, sample standard deviation, min, max):
// - fraction of the optimum b(k) / p_opt at k = ceil(q * N) for q = 1, 2, 5, 10, 20 % (only
//   those k within the limit);
// - evaluations to within x of the optimum (x = 1 %, 5 %): the first k with
//   b(k) >= (1 - x) * p_opt, and its recorded time c(k); the mean over the runs that got there,
//   and how many never did within the limit;
// - the methodology score of Willemsen, van Nieuwpoort and van Werkhoven, "A methodology for
//   comparing optimization algorithms for auto-tuning" (FGCS 2024; the Python package
//   autotuning_methodology): the strategy's mean best-so-far curve standardised against random
//   search, (P_s(x) - P_r(x)) / (p_opt - P_r(x)), averaged over sample points x of a window.
//   It is 0 for random search and 1 for a strategy that starts at the optimum; points where
//   random search is sure to have the optimum (p_opt = P_r) are left out. Exactly:
//   * P_r(k), the baseline, is the expected best of k configs drawn uniformly without
//     replacement from all N configs of the space (failed ones, p = 0, included). With the p
//     sorted ascending, p_(1) <= ... <= p_(N), P(the best of k is the i-th) = C(i-1, k-1) /
//     C(N, k), so P_r(k) = sum_i p_(i) C(i-1, k-1) / C(N, k), computed with the recurrence
//     w_N = k / N, w_(i-1) = w_i (i - k) / (i - 1) (no factorials; terms under 1e-18 relative
//     are dropped).
//   * The window follows the package: its bounds are where random search is expected to reach
//     the cutoff percentiles, start 1 % and end 96 % (the paper's evaluation uses 96 %), of the
//     way from the median performance to the optimum: for percentile c, the target is
//     p_c = p_opt - (1 - c) (p_opt - p_median) (p_median over the configs that ran correctly),
//     M = the number of configs with p >= p_c, and k_c = ceil((N + 1) / (M + 1)), the expected
//     number of draws without replacement until one of them. (The package counts
//     ceil(i / (N_valid + 1 - i)) draws among valid configs with i = N_valid - M, the draws
//     before the hit; we count the hit and the failed configs too.) The window's end is clamped
//     to the limit. With ScoreWindow::Budget the window is instead k = 1 .. limit.
//   * Time axis (the score the package aggregates, and `score` here): x = recorded seconds,
//     1000 points evenly spaced from T_start = k_start * tau to T_end = k_end * tau, both
//     included, where tau = the mean recorded seconds per config over the space (so that k
//     random draws are expected to take k * tau exactly; the package offers this "mean" and
//     defaults to a median per evaluation). P_s(t) = the mean over runs of the best p among the
//     evaluations with c(k) <= t (0 before the first); P_r(t) = P_r(floor(t / tau)), P_r(0) = 0:
//     the evaluations random search completes by t. (The package rounds t / tau and takes at
//     least 1, which puts random search half an evaluation ahead of itself.) Undefined (NaN)
//     when the recording has no times.
//   * Evaluations axis (`scoreEvals`): x = k for every k from k_start to k_end, P_s(k) = the
//     mean of b(k) over the runs.
//   The standardisation is linear in P_s, so the mean of per-run scores is the score of the
//   mean curve; per-run scores give the spread.
//
// External traces (runs made by other tools) are scored the same way: each distinct strategy of
// a trace file is one row, its runs are the file's runs.

#include "model/records.h"
#include "search/strategy.h"
#include "space/configspace.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

class TuningProblem;

/// One config's recorded outcome.
struct LabEntry {
    bool recorded = false; ///< the recording has it
    ResultStatus status = ResultStatus::Skipped;
    double score = 0;          ///< what a strategy observes (lower is better); meaningful when ok()
    double performance = 0;    ///< higher is better; 0 unless ok()
    double seconds = 0;        ///< recorded compile + benchmark time
    double compileSeconds = 0; ///< the compile part: what a strategy asking for static features spends
    double timeMs = 0;         ///< recorded median time (ok configs)
    std::optional<StaticFeatures> features;
    std::optional<double> energy; ///< recorded energy of a launch (J), when the recording has it
    bool ok() const { return performance > 0; }
};

/// What the recording says about the space.
struct LabSpaceSummary {
    std::string recording;     ///< the file (or the name given)
    std::string session;       ///< for people: "T4, NVIDIA H200" ...
    std::string objectiveName; ///< "" = time (performance = 1 / ms)
    std::uint64_t spaceSize = 0;
    std::uint64_t recorded = 0;  ///< configs of the space the recording has
    std::uint64_t missing = 0;   ///< configs of the space it lacks (failed observations)
    std::uint64_t unmatched = 0; ///< recorded results that are no config of the space
    std::uint64_t ok = 0;        ///< configs that ran correctly
    std::uint64_t optimumIndex = 0;
    ConfigValues optimumConfig;
    double optimum = 0;          ///< p_opt
    double optimumMs = 0;        ///< its median time
    double median = 0;           ///< median p over the ok configs
    double totalSeconds = 0;     ///< recorded seconds summed over the space
    double secondsPerConfig = 0; ///< tau: their mean over the space
    double compileSeconds = 0;   ///< the compile part of totalSeconds
    /// Every config that ran correctly has its energy: the lab also scores the time-energy front.
    bool hasEnergy = false;
    double frontHypervolume = 0;            ///< of the whole space's front, against the reference below
    double referenceMs = 0, referenceJ = 0; ///< the median time and energy over the ok configs
};

/// Summary statistics over runs.
struct LabStat {
    double mean = std::numeric_limits<double>::quiet_NaN();
    double stdev = std::numeric_limits<double>::quiet_NaN(); ///< sample standard deviation (0 for one value)
    double min = std::numeric_limits<double>::quiet_NaN();
    double max = std::numeric_limits<double>::quiet_NaN();
    std::size_t count = 0;
    static LabStat of(const std::vector<double>& values);
};

/// One run: a strategy with one seed, or one run of a trace.
struct LabRun {
    std::uint64_t seed = 0;
    std::string label;                ///< for people: "seed 3", or a trace's run
    std::vector<std::uint64_t> order; ///< the configs evaluated, in order
    std::vector<double> best;         ///< b(k): best performance after k evaluations, k = 1..limit (flat after the end)
    std::vector<double> seconds;      ///< c(k): cumulative recorded seconds, likewise
    std::size_t evaluations = 0;      ///< configs actually evaluated (<= limit)
    std::string note;                 ///< why it stopped early, etc.
};

/// Fraction of the optimum after a share of the space's evaluations.
struct LabMilestone {
    double percent = 0; ///< of the space
    std::uint64_t evaluations = 0;
    LabStat fraction; ///< b(k) / p_opt over the runs
};

/// Evaluations and time to get within a tolerance of the optimum.
struct LabTarget {
    double tolerance = 0;  ///< 0.01 = within 1 %
    LabStat evaluations;   ///< over the runs that got there
    LabStat seconds;       ///< their recorded time at that point
    std::size_t never = 0; ///< runs that did not get there within the limit
};

/// One row of the report.
struct LabStrategyResult {
    std::string name;   ///< "random", "kerneltuner:genetic_algorithm"
    std::string source; ///< "" for our strategies, else the trace file
    std::vector<LabRun> runs;
    std::vector<LabMilestone> milestones;
    LabTarget within1;
    LabTarget within5;
    LabStat score;         ///< methodology score on the time axis (per-run spread)
    LabStat scoreEvals;    ///< on the evaluations axis
    LabStat finalFraction; ///< b(limit) / p_opt
    /// With energy (LabSpaceSummary::hasEnergy): after q % of the space's evaluations, the
    /// hypervolume of the time-energy front of the configs evaluated, as a fraction of the whole
    /// space's (both against the medians), over the runs.
    std::vector<LabMilestone> frontMilestones;
    std::vector<std::string> notes;
};

enum class ScoreWindow {
    Methodology, ///< between the random-search cutoffs (see the file comment)
    Budget,      ///< the whole budget: 1 .. limit evaluations
};

struct LabOptions {
    /// Names makeStrategy() knows; empty: every known one except exhaustive.
    std::vector<std::string> strategies;
    std::size_t repeats = 30;
    std::uint64_t seed = 0;              ///< run r uses seed + r
    std::optional<std::uint64_t> budget; ///< configs per run
    std::optional<double> fraction;      ///< of the space per run, in (0, 1]; default 0.2 when neither is set
    std::size_t batch = 1;               ///< configs per propose()
    ScoreWindow window = ScoreWindow::Methodology;
    double cutoffStart = 0.01;
    double cutoffEnd = 0.96;
    std::size_t timePoints = 1000;
    /// Called after each run: runs done, runs in all, the row's name.
    std::function<void(std::size_t, std::size_t, const std::string&)> progress;
    const std::atomic<bool>* cancel = nullptr; ///< once set, run() throws Cancelled
};

/// Runs of another tool, from a traces file.
struct LabTraceRun {
    std::string strategy;
    std::uint64_t seed = 0;
    std::vector<std::uint64_t> configs; ///< space indices, in the order evaluated
};
struct LabTraces {
    std::string file;
    std::string tool;   ///< "Kernel Tuner 1.0"
    std::string prefix; ///< "kerneltuner"
    std::vector<LabTraceRun> runs;
    std::vector<std::string> notes; ///< repeated configs skipped, ...
};

/// Parses a traces file: {"tool": "...", "runs": [{"strategy": "...", "seed": 0, "configs":
/// [{name: value, ...}, ...]}]}. Throws InputError naming the file, the run and the config for
/// a config that is not in the space, and for malformed JSON.
LabTraces parseLabTraces(const std::string& text, const std::string& fileName, const ConfigSpace& space);
/// Reads and parses a traces file.
LabTraces readLabTraces(const std::filesystem::path& path, const ConfigSpace& space);

/// The methodology window (see the file comment).
struct LabWindow {
    ScoreWindow kind = ScoreWindow::Methodology;
    double cutoffStart = 0, cutoffEnd = 0;
    std::uint64_t startEvaluations = 1, endEvaluations = 1;
    double startSeconds = 0, endSeconds = 0;
    std::size_t timePoints = 1000; ///< sample points on the time axis
    bool clamped = false;          ///< the end was cut to the budget
};

struct LabReport {
    LabSpaceSummary space;
    std::uint64_t limit = 0; ///< evaluations per run
    std::string budget;      ///< for people: "20 % of the space (553 configs)"
    std::size_t repeats = 0;
    std::uint64_t seed = 0;
    std::size_t batch = 1;
    LabWindow window;
    std::vector<double> randomExpected; ///< P_r(k) / p_opt for k = 1..limit
    std::vector<LabStrategyResult> strategies;
    std::vector<std::string> notes;
    double wallSeconds = 0;
};

/// E[best of k draws without replacement] for k = 1..maxK (capped at the count of values).
std::vector<double> expectedRandomBest(std::vector<double> performances, std::uint64_t maxK);

class StrategyLab {
public:
    /// Builds the table from a recording (a file, or sessions held in memory named `name`). Throws
    /// InputError when the recording does not match the problem at this shape.
    StrategyLab(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space,
                const std::filesystem::path& recording);
    StrategyLab(const TuningProblem& problem, std::size_t shapeIndex, const ConfigSpace& space,
                std::vector<SessionData> recording, std::string name);
    ~StrategyLab();
    StrategyLab(const StrategyLab&) = delete;
    StrategyLab& operator=(const StrategyLab&) = delete;

    const ConfigSpace& space() const;
    const std::vector<LabEntry>& table() const;
    const LabSpaceSummary& summary() const;

    /// Evaluations per run for a budget (default: 20 % of the space). Throws InputError for a
    /// fraction outside (0, 1] or a budget of 0.
    std::uint64_t limitFor(const LabOptions& options) const;
    /// One run of a strategy (a name makeStrategy() knows; throws InputError for another).
    LabRun runStrategy(const std::string& name, std::uint64_t seed, std::uint64_t limit, std::size_t batch = 1) const;
    /// A run that evaluates these configs in this order (a trace), cut at the limit.
    /// `costs`, when given, is each evaluation's recorded seconds (default: the config's compile +
    /// benchmark time).
    LabRun replayOrder(const std::vector<std::uint64_t>& order, std::uint64_t limit,
                       const std::vector<double>* costs = nullptr) const;
    /// The statistics of runs (see the file comment).
    LabStrategyResult evaluate(std::string name, std::vector<LabRun> runs, std::uint64_t limit,
                               const LabWindow& window) const;
    /// The window for a limit.
    LabWindow window(const LabOptions& options, std::uint64_t limit) const;
    /// Every strategy of the options over its seeds, and every trace set, in one report.
    LabReport run(const LabOptions& options, const std::vector<LabTraces>& traces = {}) const;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

/// The report as JSON (2-space indent).
std::string labReportJson(const LabReport& report);
/// Writes DIR/evaluations.csv and DIR/seconds.csv: strategy, x, mean, min, max of the best-so-far
/// fraction of the optimum over the runs (and "random-expected", the analytic baseline). Creates
/// DIR; throws InputError when it cannot write.
void writeLabCurves(const LabReport& report, const std::filesystem::path& directory);

} // namespace tilescope
