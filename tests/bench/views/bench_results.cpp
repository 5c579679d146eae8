// How the results views cope with 100,000 results, step by step: the results table (model +
// proxy sorted by time + view) taking a snapshot of 96,000 results, then 4,000 more (a replay's
// tick: reset and sort), then 10 more (a GPU run's: inserted), a comparison filter and a first
// text filter; the snapshot copy and its release (both on a helper thread in the workbench); a
// heatmap's aggregation (best, and median with a fixed value), the plot controls' summary and a
// scatter plot's thinning to 4,000 points (on a helper thread too). tst_session and tst_heatmap
// check what these steps give; this measures how long they take.
//
// Goals (medians over the runs): each table step of a snapshot within 100 ms (the snapshot
// interval: a live run never queues snapshots); a filter within 1 s (it applies after a pause in
// typing, and a second keeps the user's flow); aggregation, summary and thinning within 100 ms
// each. The copy and release are reported, without a goal. Exit status: 0 every goal met, 1 a
// goal missed, 2 it could not run.
//
//   bench_results [--runs N]
//
// Run it with QT_QPA_PLATFORM=offscreen or a display.

#include "models/heatmapmodel.h"
#include "models/quantity.h"
#include "models/resultsmodel.h"
#include "models/resultsproxy.h"
#include "models/scattermodel.h"
#include "session/resultsview.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTableView>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace tilescope;
using namespace tilescope::views;

namespace {

constexpr std::size_t kCount = 100'000;
constexpr std::size_t kStep = 4'000;
constexpr double kSnapshotGoalMs = 100;
constexpr double kFilterGoalMs = 1000;
constexpr double kHelperGoalMs = 100;

const std::vector<std::string> kNames = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "THREAD_M", "THREAD_N", "VEC", "STAGES"};

// A result shaped like the demo's (every field filled, seven CUPTI metrics), over a table of
// configs that repeats every 257 results.
ResultRecord tableRecord(std::int64_t id) {
    ResultRecord r;
    r.id = id;
    r.sessionId = 1;
    for (std::size_t p = 0; p < kNames.size(); ++p)
        r.config[kNames[p]] = (id * static_cast<std::int64_t>(p + 3)) % 257;
    r.measurement.status = ResultStatus::Ok;
    r.measurement.time = {0.4 + double(id % 1000) * 1e-3, 0.39, 0.41, 0.001, 10};
    for (const char* metric :
         {"gpu__time_duration.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
          "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
          "dram__bytes_read.sum", "dram__bytes_write.sum",
          "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"})
        r.measurement.metrics.push_back({metric, double(id)});
    r.measurement.compileSeconds = 0.5;
    r.measurement.benchmarkSeconds = 0.05;
    r.measurement.verificationError = 0.0;
    r.measurement.staticInfo = StaticInfo{128, 1, 0, 0, 0, 25600, 0};
    r.objective = 40.0;
    r.blockSize = 256;
    r.sharedDynamic = 0;
    r.occupancy = 25.0;
    r.recordedAt = "2026-11-30T03:15:25.513Z";
    return r;
}

// `n` results over the seven parameters, 4..8 values each, about 5 % failed (a plot's input).
std::vector<ResultRecord> plotRecords(std::size_t n) {
    std::vector<ResultRecord> out;
    out.reserve(n);
    std::uint64_t state = 12345;
    auto next = [&]() {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return state >> 33;
    };
    const std::int64_t values[] = {8, 16, 32, 64, 128, 256, 512, 1024};
    for (std::size_t i = 0; i < n; ++i) {
        ResultRecord r;
        r.id = static_cast<std::int64_t>(i + 1);
        for (std::size_t p = 0; p < kNames.size(); ++p)
            r.config[kNames[p]] = values[next() % (4 + p % 5)];
        const bool failed = next() % 20 == 0;
        r.measurement.status = failed ? ResultStatus::LaunchError : ResultStatus::Ok;
        if (!failed) {
            r.measurement.time.medianMs = 0.1 + double(next() % 10000) / 1000.0;
            r.objective = 1.0 / r.measurement.time.medianMs;
        }
        StaticInfo info;
        info.registers = static_cast<int>(32 + next() % 224);
        info.spillStores = info.registers > 250 ? 16 : 0;
        r.measurement.staticInfo = info;
        out.push_back(std::move(r));
    }
    return out;
}

struct Step {
    const char* what;
    double goalMs; // 0: reported only
    std::vector<double> ms;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0 : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

double timeMs(const std::function<void()>& work) {
    QElapsedTimer t;
    t.start();
    work();
    return double(t.nsecsElapsed()) / 1e6;
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("How long the results table, the heatmap and the scatter plot take with 100,000 results."));
    parser.addHelpOption();
    parser.addOption(
        {QStringLiteral("runs"), QStringLiteral("Repetitions (default 5)."), QStringLiteral("N"), QStringLiteral("5")});
    parser.process(app);
    bool ok = false;
    const int runs = parser.value(QStringLiteral("runs")).toInt(&ok);
    if (!ok || runs < 1) {
        std::fprintf(stderr, "bench_results: --runs needs a number of 1 or more\n");
        return 2;
    }

    std::vector<ResultRecord> all;
    all.reserve(kCount);
    for (std::size_t i = 0; i < kCount; ++i)
        all.push_back(tableRecord(static_cast<std::int64_t>(i + 1)));
    std::vector<ResultRecord> plus = all;
    for (std::size_t i = 0; i < 10; ++i)
        plus.push_back(tableRecord(static_cast<std::int64_t>(kCount + 1 + i)));
    const std::vector<ResultRecord> plotted = plotRecords(kCount);

    std::vector<Step> steps = {
        {"snapshot copy (helper thread)", 0, {}},
        {"snapshot release (helper thread)", 0, {}},
        {"table: 96,000 results shown", kSnapshotGoalMs, {}},
        {"table: 4,000 more (reset, sort)", kSnapshotGoalMs, {}},
        {"table: 10 more (insert)", kSnapshotGoalMs, {}},
        {"table: comparison filter", kFilterGoalMs, {}},
        {"table: first text filter", kFilterGoalMs, {}},
        {"heatmap: best", kHelperGoalMs, {}},
        {"heatmap: median, a value fixed", kHelperGoalMs, {}},
        {"plot controls: summary", kHelperGoalMs, {}},
        {"scatter: 4,000 of 100,000 points", kHelperGoalMs, {}},
    };
    for (int run = 0; run < runs; ++run) {
        std::shared_ptr<const std::vector<ResultRecord>> copy;
        steps[0].ms.push_back(timeMs([&] { copy = std::make_shared<const std::vector<ResultRecord>>(all); }));

        ResultsView view;
        view.resize(1000, 500);
        view.show();
        auto first = std::make_shared<const std::vector<ResultRecord>>(all.begin(), all.end() - std::ptrdiff_t(kStep));
        view.setResults(std::make_shared<const std::vector<ResultRecord>>(all.begin(), all.begin() + 10), kNames,
                        "TFLOP/s");
        view.table()->sortByColumn(view.model()->columnOf(ResultsModel::ColumnKind::Time), Qt::AscendingOrder);
        steps[2].ms.push_back(timeMs([&] {
            view.setResults(first, kNames, "TFLOP/s");
            view.table()->viewport()->repaint();
        }));
        steps[3].ms.push_back(timeMs([&] {
            view.setResults(copy, kNames, "TFLOP/s");
            view.table()->viewport()->repaint();
        }));
        auto plusSnapshot = std::make_shared<const std::vector<ResultRecord>>(plus);
        steps[4].ms.push_back(timeMs([&] {
            view.setResults(plusSnapshot, kNames, "TFLOP/s");
            view.table()->viewport()->repaint();
        }));
        steps[1].ms.push_back(timeMs([&] { first.reset(); }));
        steps[5].ms.push_back(timeMs([&] { view.setFilterText(QStringLiteral("regs > 100 and time < 900")); }));
        steps[6].ms.push_back(timeMs([&] { view.setFilterText(QStringLiteral("2026-11-30")); }));
        if (view.visibleRowCount() != 0) {
            std::fprintf(stderr, "bench_results: the text filter shows %d rows, none expected\n",
                         view.visibleRowCount());
            return 2;
        }

        HeatmapSpec spec;
        spec.xParameter = "BLOCK_M";
        spec.yParameter = "BLOCK_N";
        HeatmapGrid grid;
        steps[7].ms.push_back(timeMs([&] { grid = views::aggregate(plotted, kNames, spec); }));
        if (grid.matchedCount != kCount)
            return 2;
        spec.reduction = Reduction::Median;
        spec.fixedValues = {{"STAGES", "8"}};
        steps[8].ms.push_back(timeMs([&] { grid = views::aggregate(plotted, kNames, spec); }));
        ResultSummary summary;
        steps[9].ms.push_back(timeMs([&] { summary = summarize(plotted, kNames); }));
        ScatterSpec scatter;
        scatter.x = {QuantityKind::Registers, {}, false};
        scatter.y = {QuantityKind::Objective, {}, false};
        ScatterData points;
        steps[10].ms.push_back(timeMs([&] { points = scatterPoints(plotted, scatter, "TFLOP/s", 4000); }));
        if (points.points.size() != 4000)
            return 2;
    }

    std::printf("100,000 results, median of %d run(s):\n", runs);
    std::printf("  %-36s %10s %10s\n", "step", "ms", "goal");
    bool met = true;
    for (const Step& s : steps) {
        const double m = median(s.ms);
        const bool missed = s.goalMs > 0 && m > s.goalMs;
        met = met && !missed;
        if (s.goalMs > 0)
            std::printf("  %-36s %10.1f %7.0f ms%s\n", s.what, m, s.goalMs, missed ? "  MISSED" : "");
        else
            std::printf("  %-36s %10.1f %10s\n", s.what, m, "-");
    }
    std::printf("%s\n", met ? "goal met: every step within its goal" : "goal missed: see MISSED above");
    return met ? 0 : 1;
}
