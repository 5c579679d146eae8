// The plots: heatmap aggregation (best and median reductions, untested, failed-only and spilling
// cells, the fixed-value filter, numeric order of axis values, speed on 100,000 results), the
// heatmap widget (its colour map holds the grid, hovering maps pixels to cells, a click emits
// the cell's config, large inputs are aggregated off the GUI thread and stale results dropped)
// and the scatter widget (points, thinning that keeps the best, hover, click, selection). Saves
// PNGs of both plots over a synthetic SGEMM data set (into $TILESCOPE_SCREENSHOT_DIR when set).
// Runs on the offscreen platform.

#include "exchange/bestconfigs.h"
#include "exchange/recording.h"
#include "export/resultsexport.h"
#include "models/heatmapmodel.h"
#include "models/quantity.h"
#include "models/scattermodel.h"
#include "plots/heatmapwidget.h"
#include "plots/scatterwidget.h"

#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <set>

using namespace tilescope;
using namespace tilescope::views;

namespace {

constexpr int kTimeoutMs = 30'000;

ResultRecord makeResult(std::int64_t a, std::int64_t b, std::int64_t c, ResultStatus status, double timeMs = 0,
                        std::int64_t spillStores = 0, int registers = 64) {
    static std::int64_t nextId = 1;
    ResultRecord r;
    r.id = nextId++;
    r.config["A"] = a;
    r.config["B"] = b;
    r.config["C"] = c;
    r.measurement.status = status;
    if (status == ResultStatus::Ok) {
        r.measurement.time.medianMs = timeMs;
        r.measurement.time.minMs = timeMs;
        r.measurement.time.maxMs = timeMs;
        r.measurement.time.samples = 10;
        r.objective = 1.0 / timeMs; // a throughput: the faster, the higher
    } else {
        r.measurement.message = std::string(statusName(status)) + " (made by the test)";
    }
    StaticInfo info;
    info.registers = registers;
    info.spillStores = spillStores;
    info.spillLoads = spillStores;
    info.stackFrame = spillStores;
    r.measurement.staticInfo = info;
    return r;
}

// A small set over A x B (x, y) and C (reduced). Inserted out of order, so that the axes must
// be sorted: 128 first, 8 last. Cells (A, B):
//   (8, 1)    C = 0, 1, 2: 1, 2, 4 ms                 min 1000 µs, median 2000 µs (C = 1)
//   (8, 2)    C = 0, 1: 3, 5 ms                        min 3000 µs, median 4000 µs (C = 0 stands for it)
//   (16, 1)   compile error (C = 0), crashed (C = 1)   NaN, failed only
//   (16, 2)   one pruned result                        NaN, untested
//   (128, 1)  C = 0: 0.5 ms spilling, C = 1: 0.8 ms, C = 2: 0.9 ms
//             min 500 µs (spills), median 800 µs (C = 1, no spills)
//   (128, 2)  C = 0: 2 ms; C = 1 wrong result          2000 µs; 1 ok 1 failed
std::vector<ResultRecord> smallSet() {
    std::vector<ResultRecord> rs;
    rs.push_back(makeResult(128, 1, 0, ResultStatus::Ok, 0.5, 64, 255));
    rs.push_back(makeResult(128, 1, 1, ResultStatus::Ok, 0.8));
    rs.push_back(makeResult(128, 1, 2, ResultStatus::Ok, 0.9));
    rs.push_back(makeResult(128, 2, 0, ResultStatus::Ok, 2.0));
    rs.push_back(makeResult(128, 2, 1, ResultStatus::WrongResult));
    rs.push_back(makeResult(16, 1, 0, ResultStatus::CompileError));
    rs.push_back(makeResult(16, 1, 1, ResultStatus::Crashed));
    rs.push_back(makeResult(16, 2, 0, ResultStatus::Pruned));
    rs.push_back(makeResult(8, 2, 0, ResultStatus::Ok, 3.0));
    rs.push_back(makeResult(8, 2, 1, ResultStatus::Ok, 5.0));
    rs.push_back(makeResult(8, 1, 0, ResultStatus::Ok, 1.0));
    rs.push_back(makeResult(8, 1, 1, ResultStatus::Ok, 2.0));
    rs.push_back(makeResult(8, 1, 2, ResultStatus::Ok, 4.0));
    return rs;
}

const std::vector<std::string> kNames = {"A", "B", "C"};

HeatmapSpec specOf(Quantity quantity, Reduction reduction, std::map<std::string, std::string> fixed = {}) {
    HeatmapSpec spec;
    spec.xParameter = "A";
    spec.yParameter = "B";
    spec.quantity = quantity;
    spec.reduction = reduction;
    spec.fixedValues = std::move(fixed);
    return spec;
}

const Quantity kLatency{QuantityKind::LatencyUs, {}, false};
const Quantity kObjective{QuantityKind::Objective, {}, false};

// NaN-aware comparison of a cell value.
bool same(double actual, double expected) {
    if (std::isnan(expected))
        return std::isnan(actual);
    return std::abs(actual - expected) <= 1e-9 * std::max(1.0, std::abs(expected));
}

// SGEMM (kernels/sgemm/sgemm.json at M = N = K = 4096) with synthetic results: every valid config
// of the problem's conditions, with times and register counts from a made-up but plausible model
// (bigger thread tiles reuse more, until the registers run out and 16 x 16 tiles spill; 1024
// threads of many registers cannot launch). Not measurements: plot material only.
std::vector<ResultRecord> syntheticSgemm() {
    const std::vector<std::int64_t> blockSizes = {32, 64, 128, 256};
    const std::vector<std::int64_t> blockKs = {8, 16, 32};
    const std::vector<std::int64_t> threadTiles = {1, 2, 4, 8, 16};
    const std::vector<std::int64_t> vecs = {1, 2, 4};
    const std::vector<std::int64_t> stageCounts = {1, 2};
    const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
    std::vector<ResultRecord> out;
    std::int64_t id = 1;
    for (std::int64_t bm : blockSizes)
        for (std::int64_t bn : blockSizes)
            for (std::int64_t bk : blockKs)
                for (std::int64_t tm : threadTiles)
                    for (std::int64_t tn : threadTiles)
                        for (std::int64_t vec : vecs)
                            for (std::int64_t stages : stageCounts) {
                                if (bm % tm != 0 || bn % tn != 0)
                                    continue;
                                const std::int64_t threads = (bm / tm) * (bn / tn);
                                if (threads < 32 || threads > 1024)
                                    continue;
                                if (4 * ((bm + 4) + bn) * bk * stages > 48 * 1024)
                                    continue;
                                if ((bm * bk) % (threads * vec) != 0 || (bn * bk) % (threads * vec) != 0)
                                    continue;
                                if (bk % vec != 0 || tn % vec != 0)
                                    continue;
                                ResultRecord r;
                                r.id = id++;
                                r.sessionId = 1;
                                r.config["BLOCK_M"] = bm;
                                r.config["BLOCK_N"] = bn;
                                r.config["BLOCK_K"] = bk;
                                r.config["THREAD_M"] = tm;
                                r.config["THREAD_N"] = tn;
                                r.config["VEC"] = vec;
                                r.config["STAGES"] = stages;
                                const int wanted = static_cast<int>(40 + tm * tn + 2 * (tm + tn) + 4 * vec + bk / 2);
                                StaticInfo info;
                                info.registers = std::min(wanted, 255);
                                info.spillStores = wanted > 255 ? 4 * (wanted - 255) : 0;
                                info.spillLoads = info.spillStores;
                                info.stackFrame = info.spillStores;
                                info.sharedStatic = 4 * ((bm + 4) + bn) * bk * stages;
                                r.measurement.staticInfo = info;
                                r.blockSize = threads;
                                const std::int64_t hash =
                                    (bm * 7 + bn * 13 + bk * 17 + tm * 19 + tn * 23 + vec * 29 + stages * 31) % 101;
                                if (threads * info.registers > 65536) {
                                    r.measurement.status = ResultStatus::LaunchError;
                                    r.measurement.message = "too many resources requested for launch";
                                    out.push_back(r);
                                    continue;
                                }
                                if (tm == 1 && tn == 16) {
                                    r.measurement.status = ResultStatus::CompileError;
                                    r.measurement.message = "synthetic compile error";
                                    out.push_back(r);
                                    continue;
                                }
                                if (hash == 0) {
                                    r.measurement.status = ResultStatus::WrongResult;
                                    r.measurement.message = "max error 0.5 > 1e-3";
                                    out.push_back(r);
                                    continue;
                                }
                                const int blocksByRegs = static_cast<int>(65536 / (threads * info.registers));
                                const int blocksByThreads = static_cast<int>(2048 / threads);
                                const int blocksBySmem =
                                    static_cast<int>(228 * 1024 / std::max<std::int64_t>(1, info.sharedStatic));
                                const int resident =
                                    std::max(0, std::min({blocksByRegs, blocksByThreads, blocksBySmem, 32}));
                                const double occupancy = 100.0 * resident * threads / 2048.0;
                                r.occupancy = occupancy;
                                const double reuse = std::log2(double(bm * bn) / double(bm + bn)) / 7.0;
                                const double ilp = std::min(1.0, std::sqrt(double(tm * tn)) / 8.0);
                                double efficiency = 0.25 + 0.45 * reuse * ilp + 0.15 * std::min(1.0, occupancy / 50.0);
                                efficiency *= 1.0 + 0.04 * double(stages - 1) + 0.03 * std::log2(double(vec));
                                efficiency *= bk == 16 ? 1.0 : 0.93;
                                if (info.spillStores > 0)
                                    efficiency *= 0.35;
                                efficiency *= 1.0 + 0.02 * (double(hash % 11) - 5.0) / 5.0;
                                const double tflops = 60.0 * std::clamp(efficiency, 0.02, 0.95);
                                r.measurement.status = ResultStatus::Ok;
                                r.measurement.time.medianMs = flops / (tflops * 1e12) * 1e3;
                                r.measurement.time.minMs = r.measurement.time.medianMs * 0.99;
                                r.measurement.time.maxMs = r.measurement.time.medianMs * 1.02;
                                r.measurement.time.stdevMs = r.measurement.time.medianMs * 0.005;
                                r.measurement.time.samples = 25;
                                r.objective = tflops;
                                r.measurement.metrics.push_back({kAchievedOccupancyMetric, occupancy * 0.85});
                                r.measurement.metrics.push_back(
                                    {kLocalLoadSectorsMetric,
                                     info.spillLoads > 0 ? 2.0e7 * double(info.spillLoads) / 64.0 : 0.0});
                                r.measurement.metrics.push_back(
                                    {kLocalStoreSectorsMetric,
                                     info.spillStores > 0 ? 1.0e7 * double(info.spillStores) / 64.0 : 0.0});
                                out.push_back(r);
                            }
    return out;
}

const std::vector<std::string> kSgemmNames = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "THREAD_M", "THREAD_N", "VEC", "STAGES"};

// n results over 7 parameters of 4..8 values each, deterministic, about 5 % failed.
std::vector<ResultRecord> largeSet(std::size_t n) {
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
        for (std::size_t p = 0; p < kSgemmNames.size(); ++p)
            r.config[kSgemmNames[p]] = values[next() % (4 + p % 5)];
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

std::string readText(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return f.readAll().toStdString();
}

QString screenshotDir(const QTemporaryDir& fallback) {
    const QByteArray dir = qgetenv("TILESCOPE_SCREENSHOT_DIR");
    return dir.isEmpty() ? fallback.path() : QString::fromLocal8Bit(dir);
}

QPoint cellCentre(const HeatmapWidget& widget, int x, int y) {
    return QPoint(static_cast<int>(std::lround(widget.plot()->xAxis->coordToPixel(x))),
                  static_cast<int>(std::lround(widget.plot()->yAxis->coordToPixel(y))));
}

} // namespace

class TestHeatmap : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void sortsValuesNumerically();
    void sessionAxesVary();
    void aggregate_data();
    void aggregate();
    void markers();
    void cellsTiedWithTheBest();
    void fixedValueFilter();
    void otherQuantities();
    void cellAtMapsCoordinates();
    void tooltipDescribesCell();
    void aggregatesManyResults();
    void analysedResultsColourTheMap();

    void widgetColourMapEqualsGrid();
    void widgetHoverMapsPixelsToCells();
    void widgetClickEmitsConfig();
    void widgetControlsFollowSpec();
    void widgetAggregatesLargeInputsOffThread();

    void scatterPointsAndThinning();
    void scatterWidgetHoverClickSelect();
    void scatterDrawsTheTimeEnergyFront();

    void saveScreenshots();
};

void TestHeatmap::initTestCase() {
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
}

// ------------------------------------------------------------------------------ aggregation

// A new session's heatmap: its first two parameters, unless one of them takes one value in
// the results while two others vary (a recording of one family of a space).
void TestHeatmap::sessionAxesVary() {
    const std::vector<std::string> names = {"A", "B", "C"};
    std::vector<ResultRecord> rs;
    for (std::int64_t b : {1, 2})
        for (std::int64_t c : {0, 1, 2})
            rs.push_back(makeResult(8, b, c, ResultStatus::Ok, 1.0 + static_cast<double>(b * c)));
    const HeatmapSpec pinned = sessionHeatmapSpec({}, names, "TFLOP/s", rs);
    QCOMPARE(pinned.yParameter, std::string("B"));
    QCOMPARE(pinned.xParameter, std::string("C"));
    const HeatmapSpec plain = sessionHeatmapSpec({}, names, "TFLOP/s", smallSet());
    QCOMPARE(plain.yParameter, std::string("A"));
    QCOMPARE(plain.xParameter, std::string("B"));
    // One result (a session that has just begun): the first two.
    const HeatmapSpec early = sessionHeatmapSpec({}, names, "", {rs.front()});
    QCOMPARE(early.yParameter, std::string("A"));
    QCOMPARE(early.xParameter, std::string("B"));
}

void TestHeatmap::sortsValuesNumerically() {
    const HeatmapGrid grid = views::aggregate(smallSet(), kNames, specOf(kLatency, Reduction::Best));
    QCOMPARE(grid.xValues, (QStringList{"8", "16", "128"}));
    QCOMPARE(grid.yValues, (QStringList{"1", "2"}));

    QStringList mixed{"128", "abc", "8", "0.5", "16", "1e3"};
    sortValueTexts(mixed);
    QCOMPARE(mixed, (QStringList{"0.5", "8", "16", "128", "1e3", "abc"}));

    // 64 and 64.0 are one value; a string value sorts after the numbers.
    std::vector<ResultRecord> rs = {makeResult(64, 1, 0, ResultStatus::Ok, 1.0),
                                    makeResult(8, 1, 0, ResultStatus::Ok, 1.0)};
    rs.push_back(rs[0]);
    rs.back().config["A"] = 64.0;
    rs.push_back(rs[0]);
    rs.back().config["A"] = "wide";
    const HeatmapGrid merged = views::aggregate(rs, kNames, specOf(kLatency, Reduction::Best));
    QCOMPARE(merged.xValues, (QStringList{"8", "64", "wide"}));
    QCOMPARE(merged.cell(1, 0).okCount, 2u);
}

void TestHeatmap::aggregate_data() {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    QTest::addColumn<int>("reduction");
    QTest::addColumn<int>("quantity");
    QTest::addColumn<QList<double>>("expected"); // cells column by column: (8,1) (8,2) (16,1) (16,2) (128,1) (128,2)
    QTest::addColumn<QList<int>>("representativeC");
    QTest::newRow("min latency") << int(Reduction::Best) << int(QuantityKind::LatencyUs)
                                 << QList<double>{1000, 3000, nan, nan, 500, 2000} << QList<int>{0, 0, 0, -1, 0, 0};
    QTest::newRow("median latency") << int(Reduction::Median) << int(QuantityKind::LatencyUs)
                                    << QList<double>{2000, 4000, nan, nan, 800, 2000} << QList<int>{1, 0, 0, -1, 1, 0};
    QTest::newRow("max objective") << int(Reduction::Best) << int(QuantityKind::Objective)
                                   << QList<double>{1.0, 1.0 / 3.0, nan, nan, 2.0, 0.5}
                                   << QList<int>{0, 0, 0, -1, 0, 0};
    // Even count: the mean of the middles; of the two, the better (higher throughput) stands for the cell.
    QTest::newRow("median objective") << int(Reduction::Median) << int(QuantityKind::Objective)
                                      << QList<double>{0.5, (1.0 / 3.0 + 0.2) / 2.0, nan, nan, 1.25, 0.5}
                                      << QList<int>{1, 0, 0, -1, 1, 0};
}

void TestHeatmap::aggregate() {
    QFETCH(int, reduction);
    QFETCH(int, quantity);
    QFETCH(QList<double>, expected);
    QFETCH(QList<int>, representativeC);
    const std::vector<ResultRecord> results = smallSet();
    const HeatmapSpec spec =
        specOf({static_cast<QuantityKind>(quantity), {}, false}, static_cast<Reduction>(reduction));
    const HeatmapGrid grid = views::aggregate(results, kNames, spec, "TFLOP/s");
    QCOMPARE(grid.columns(), 3);
    QCOMPARE(grid.rows(), 2);
    QCOMPARE(grid.cells.size(), std::size_t(6));
    for (int x = 0; x < 3; ++x) {
        for (int y = 0; y < 2; ++y) {
            const int i = x * 2 + y;
            const HeatmapCell& cell = grid.cell(x, y);
            QVERIFY2(
                same(cell.value, expected[i]),
                qPrintable(
                    QStringLiteral("cell (%1, %2): %3, expected %4").arg(x).arg(y).arg(cell.value).arg(expected[i])));
            if (representativeC[i] < 0) {
                QVERIFY(!cell.record);
            } else {
                QVERIFY(cell.record);
                QVERIFY(cell.representative);
                QCOMPARE(results[*cell.representative].config, cell.record->config);
                QCOMPARE(cell.record->config.at("C").asInt(), representativeC[i]);
            }
        }
    }
    // The best cell: (128, 1) for every quantity and reduction here.
    QCOMPARE(grid.best, (CellIndex{2, 0}));
    QCOMPARE(grid.okCount, std::size_t(9));
    QCOMPARE(grid.failedCount, std::size_t(3));
    QCOMPARE(grid.matchedCount, std::size_t(13));
}

void TestHeatmap::markers() {
    const HeatmapGrid best = views::aggregate(smallSet(), kNames, specOf(kLatency, Reduction::Best));
    QCOMPARE(best.cell(0, 0).marker, CellMarker::Fine);
    QCOMPARE(best.cell(0, 1).marker, CellMarker::Fine);
    QCOMPARE(best.cell(1, 0).marker, CellMarker::FailedOnly);
    QCOMPARE(best.cell(1, 0).failedCount, 2u);
    QCOMPARE(best.cell(1, 0).statusCounts[std::size_t(ResultStatus::CompileError)], 1u);
    QCOMPARE(best.cell(1, 0).statusCounts[std::size_t(ResultStatus::Crashed)], 1u);
    QVERIFY(best.cell(1, 0).record); // the first failure, to inspect on click
    QCOMPARE(best.cell(1, 0).record->status(), ResultStatus::CompileError);
    QCOMPARE(best.cell(1, 1).marker, CellMarker::Untested); // pruned only
    QCOMPARE(best.cell(1, 1).statusCounts[std::size_t(ResultStatus::Pruned)], 1u);
    QCOMPARE(best.cell(2, 0).marker, CellMarker::Spilling); // the fastest config spills
    QCOMPARE(best.cell(2, 1).marker, CellMarker::Fine);
    QCOMPARE(best.cell(2, 1).okCount, 1u);
    QCOMPARE(best.cell(2, 1).failedCount, 1u);

    // The median config of (128, 1) does not spill.
    const HeatmapGrid median = views::aggregate(smallSet(), kNames, specOf(kLatency, Reduction::Median));
    QCOMPARE(median.cell(2, 0).marker, CellMarker::Fine);
    QVERIFY(isFailure(ResultStatus::Timeout));
    QVERIFY(isFailure(ResultStatus::WrongResult));
    QVERIFY(!isFailure(ResultStatus::Pruned));
    QVERIFY(!isFailure(ResultStatus::Ok));
}

void TestHeatmap::cellsTiedWithTheBest() {
    // Three configs re-measured in a final round, with intervals: (8, 0) is the best, (16, 0)
    // overlaps it, (32, 0) does not; (8, 1) has no interval (measured once, in the search).
    auto withInterval = [](ResultRecord r, double low, double high) {
        r.measurement.time.ciLowMs = low;
        r.measurement.time.ciHighMs = high;
        return r;
    };
    const std::vector<ResultRecord> results{
        withInterval(makeResult(8, 0, 0, ResultStatus::Ok, 1.00), 0.99, 1.01),
        withInterval(makeResult(16, 0, 0, ResultStatus::Ok, 1.005), 1.00, 1.02),
        withInterval(makeResult(32, 0, 0, ResultStatus::Ok, 1.10), 1.08, 1.12),
        makeResult(8, 1, 0, ResultStatus::Ok, 1.004),
    };
    const HeatmapGrid grid = views::aggregate(results, kNames, specOf(kLatency, Reduction::Best));
    QCOMPARE(grid.best, (CellIndex{0, 0}));
    QVERIFY(!grid.cell(0, 0).tiedWithBest); // the best itself is framed, not marked
    QVERIFY(grid.cell(1, 0).tiedWithBest);
    QVERIFY(!grid.cell(2, 0).tiedWithBest);
    QVERIFY(!grid.cell(0, 1).tiedWithBest); // no interval: nothing to say
    QCOMPARE(grid.tiedCount, std::size_t(1));
    QVERIFY(tooltip(grid, {1, 0}).contains(QStringLiteral("cannot be told from the best")));
    QVERIFY(!tooltip(grid, {2, 0}).contains(QStringLiteral("cannot be told")));

    // The widget draws one mark and names it in the legend.
    HeatmapWidget widget;
    widget.resize(700, 500);
    widget.setResults(std::make_shared<const std::vector<ResultRecord>>(results), kNames, "");
    widget.setSpec(specOf(kLatency, Reduction::Best));
    QTRY_VERIFY_WITH_TIMEOUT(widget.grid() && widget.grid()->tiedCount == 1, kTimeoutMs);
    bool named = false;
    for (int i = 0; i < widget.plot()->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(widget.plot()->legend->item(i)))
            named = named || item->plottable()->name().contains(QStringLiteral("as good as the best"));
    QVERIFY(named);
}

void TestHeatmap::fixedValueFilter() {
    const HeatmapGrid grid = views::aggregate(smallSet(), kNames, specOf(kLatency, Reduction::Best, {{"C", "1"}}));
    QCOMPARE(grid.matchedCount, std::size_t(5));
    // Axis values are those seen in the slice: (16, 2) had only C = 0.
    QCOMPARE(grid.xValues, (QStringList{"8", "16", "128"}));
    QVERIFY(same(grid.cell(0, 0).value, 2000));
    QVERIFY(same(grid.cell(0, 1).value, 5000));
    QCOMPARE(grid.cell(1, 0).marker, CellMarker::FailedOnly); // crashed
    QCOMPARE(grid.cell(1, 1).marker, CellMarker::Untested);
    QVERIFY(same(grid.cell(2, 0).value, 800));
    QCOMPARE(grid.cell(2, 0).marker, CellMarker::Fine);
    QCOMPARE(grid.cell(2, 1).marker, CellMarker::FailedOnly); // wrong result
    QVERIFY(std::isnan(grid.cell(2, 1).value));
    QCOMPARE(grid.best, (CellIndex{2, 0}));
    QVERIFY(heatmapTitle(grid).contains(QStringLiteral("C = 1")));

    // A value nobody has: an empty grid. A fixed value of an axis' parameter is ignored.
    const HeatmapGrid none = views::aggregate(smallSet(), kNames, specOf(kLatency, Reduction::Best, {{"C", "7"}}));
    QVERIFY(none.empty());
    QVERIFY(!none.best.valid());
    const HeatmapGrid axisFixed = views::aggregate(smallSet(), kNames, specOf(kLatency, Reduction::Best, {{"A", "8"}}));
    QCOMPARE(axisFixed.columns(), 3);
}

void TestHeatmap::otherQuantities() {
    std::vector<ResultRecord> rs = smallSet();
    for (ResultRecord& r : rs) {
        if (!r.ok())
            continue;
        r.occupancy = 25.0 * double(r.config.at("C").asInt() + 1);
        r.measurement.metrics.push_back({kAchievedOccupancyMetric, 20.0 * double(r.config.at("C").asInt() + 1)});
        r.measurement.metrics.push_back({kLocalLoadSectorsMetric, 100});
        r.measurement.metrics.push_back({kLocalStoreSectorsMetric, double(r.measurement.staticInfo->spillStores)});
    }
    const auto cell = [&](Quantity q, int x, int y) {
        return views::aggregate(rs, kNames, specOf(q, Reduction::Best)).cell(x, y).value;
    };
    QVERIFY(same(cell({QuantityKind::Registers, {}, false}, 2, 0), 64));            // fewest registers
    QVERIFY(same(cell({QuantityKind::SpillStores, {}, false}, 2, 0), 0));           // least spilling
    QVERIFY(same(cell({QuantityKind::TheoreticalOccupancy, {}, false}, 0, 0), 75)); // the most occupancy
    QVERIFY(same(cell({QuantityKind::AchievedOccupancy, {}, false}, 0, 0), 60));
    QVERIFY(same(cell({QuantityKind::LocalSectors, {}, false}, 2, 0), 100));
    QVERIFY(same(cell({QuantityKind::Metric, kLocalLoadSectorsMetric, false}, 0, 0), 100));
    // A metric nobody collected: Ok cells without a value stay NaN but are not untested.
    const HeatmapGrid missing =
        views::aggregate(rs, kNames, specOf({QuantityKind::Metric, "dram__bytes_read.sum", false}, Reduction::Best));
    QVERIFY(std::isnan(missing.cell(0, 0).value));
    QCOMPARE(missing.cell(0, 0).marker, CellMarker::Fine);
    QVERIFY(!missing.best.valid());

    QCOMPARE(quantityLabel(kLatency, "TFLOP/s"), QStringLiteral("latency (µs)"));
    QCOMPARE(quantityLabel(kObjective, "GB/s"), QStringLiteral("GB/s"));
    QCOMPARE(quantityLabel({QuantityKind::Metric, kAchievedOccupancyMetric, true}, {}),
             QStringLiteral("achieved occupancy %"));
    QVERIFY(!higherIsBetter(kLatency));
    QVERIFY(higherIsBetter(kObjective));

    const ResultSummary summary = summarize(rs, kNames);
    QCOMPARE(summary.parameterValues[0], (QStringList{"8", "16", "128"}));
    QVERIFY(summary.hasStaticInfo && summary.hasOccupancy && summary.hasObjective);
    const std::vector<Quantity> offered = availableQuantities(summary, "TFLOP/s");
    QCOMPARE(offered.size(), std::size_t(7)); // latency, objective, registers, spills, 2 occupancies, local sectors
    QCOMPARE(offered[1].kind, QuantityKind::Objective);
}

void TestHeatmap::cellAtMapsCoordinates() {
    const HeatmapGrid grid = views::aggregate(smallSet(), kNames, specOf(kLatency, Reduction::Best));
    QCOMPARE(cellAt(grid, 0, 0), (CellIndex{0, 0}));
    QCOMPARE(cellAt(grid, 1.2, 0.4), (CellIndex{1, 0}));
    QCOMPARE(cellAt(grid, 1.6, 0.6), (CellIndex{2, 1}));
    QCOMPARE(cellAt(grid, -0.49, 1.49), (CellIndex{0, 1}));
    QVERIFY(!cellAt(grid, -0.51, 0).valid());
    QVERIFY(!cellAt(grid, 2.5, 0).valid());
    QVERIFY(!cellAt(grid, 0, 1.5).valid());
    QVERIFY(!cellAt(grid, std::nan(""), 0).valid());
}

void TestHeatmap::tooltipDescribesCell() {
    const HeatmapGrid grid = views::aggregate(smallSet(), kNames, specOf(kLatency, Reduction::Best), "TFLOP/s");
    const QString best = tooltip(grid, {2, 0});
    QVERIFY2(best.contains(QStringLiteral("A = 128, B = 1")), qPrintable(best));
    QVERIFY2(best.contains(QStringLiteral("min latency (µs): 500 µs over 3 ok configs")), qPrintable(best));
    QVERIFY2(best.contains(QStringLiteral("A=128 B=1 C=0")), qPrintable(best));
    QVERIFY2(best.contains(QStringLiteral("2 TFLOP/s")), qPrintable(best));
    QVERIFY2(best.contains(QStringLiteral("255 registers · spills 64 B stored, 64 B loaded")), qPrintable(best));
    QVERIFY2(best.contains(QStringLiteral("Results: 3 ok")), qPrintable(best));

    const QString failed = tooltip(grid, {1, 0});
    QVERIFY2(failed.contains(QStringLiteral("only failed results")), qPrintable(failed));
    QVERIFY2(failed.contains(QStringLiteral("status: compile_error")), qPrintable(failed));
    QVERIFY2(failed.contains(QStringLiteral("0 ok, 1 compile_error, 1 crashed")), qPrintable(failed));
    QVERIFY2(tooltip(grid, {1, 1}).contains(QStringLiteral("untested: 1 pruned")), qPrintable(tooltip(grid, {1, 1})));
    QVERIFY(tooltip(grid, {3, 0}).isEmpty());
    QCOMPARE(heatmapTitle(grid), QStringLiteral("min latency (µs) over the other parameters"));
}

void TestHeatmap::aggregatesManyResults() {
    // 100,000 results, against a plain reduction written here cell by cell: the best latency,
    // and the median one with STAGES fixed. How long it takes: tests/bench/views/bench_results.
    const std::vector<ResultRecord> results = largeSet(100'000);
    HeatmapSpec spec;
    spec.xParameter = "BLOCK_M";
    spec.yParameter = "BLOCK_N";
    const HeatmapGrid best = views::aggregate(results, kSgemmNames, spec);
    spec.reduction = Reduction::Median;
    spec.fixedValues = {{"STAGES", "8"}};
    const HeatmapGrid median = views::aggregate(results, kSgemmNames, spec);
    const ResultSummary summary = summarize(results, kSgemmNames);

    QCOMPARE(best.xValues, (QStringList{"8", "16", "32", "64"}));
    QCOMPARE(best.yValues, (QStringList{"8", "16", "32", "64", "128"}));
    QCOMPARE(median.xValues, best.xValues);
    QCOMPARE(median.yValues, best.yValues);
    QCOMPARE(summary.parameterValues[6].size(), 5);
    struct Expected {
        std::vector<double> all; // latencies (µs) of the Ok results
        std::vector<double> stages8;
        std::uint32_t ok = 0;
        std::uint32_t failed = 0;
        std::uint32_t ok8 = 0;
    };
    std::map<std::pair<QString, QString>, Expected> expected;
    std::size_t matched8 = 0;
    std::size_t failedAll = 0;
    for (const ResultRecord& r : results) {
        Expected& e = expected[{QString::number(r.config.at("BLOCK_M").asInt()),
                                QString::number(r.config.at("BLOCK_N").asInt())}];
        const bool ok = r.status() == ResultStatus::Ok;
        const bool stages8 = r.config.at("STAGES").asInt() == 8;
        (ok ? e.ok : e.failed) += 1;
        failedAll += ok ? 0 : 1;
        matched8 += stages8 ? 1 : 0;
        if (ok)
            e.all.push_back(r.measurement.time.medianMs * 1000.0);
        if (ok && stages8) {
            e.stages8.push_back(r.measurement.time.medianMs * 1000.0);
            ++e.ok8;
        }
    }
    QCOMPARE(best.matchedCount, std::size_t(100'000));
    QCOMPARE(best.okCount, std::size_t(100'000) - failedAll);
    QCOMPARE(best.failedCount, failedAll);
    QCOMPARE(median.matchedCount, matched8);
    QVERIFY(matched8 > 10'000 && matched8 < 30'000); // one of five values: the fixed value filters
    QCOMPARE(expected.size(), std::size_t(4 * 5));
    for (int x = 0; x < best.columns(); ++x) {
        for (int y = 0; y < best.rows(); ++y) {
            Expected& e = expected.at({best.xValues[x], best.yValues[y]});
            const QByteArray where =
                QStringLiteral("BLOCK_M %1, BLOCK_N %2").arg(best.xValues[x], best.yValues[y]).toUtf8();
            QVERIFY2(!e.all.empty() && !e.stages8.empty(), where.constData());
            QCOMPARE(best.cell(x, y).okCount, e.ok);
            QCOMPARE(best.cell(x, y).failedCount, e.failed);
            QVERIFY2(same(best.cell(x, y).value, *std::min_element(e.all.begin(), e.all.end())), where.constData());
            std::sort(e.stages8.begin(), e.stages8.end());
            const std::size_t n = e.stages8.size();
            const double middle = (e.stages8[(n - 1) / 2] + e.stages8[n / 2]) / 2;
            QCOMPARE(median.cell(x, y).okCount, e.ok8);
            QVERIFY2(same(median.cell(x, y).value, middle), where.constData());
        }
    }
}

// ------------------------------------------------------------------------------ heatmap widget

// A session on the analysis backend: every config compiled and analysed, none timed. Its heatmap
// is coloured by the theoretical occupancy (registers where none has one), a cell's value the
// best of its configs, and the cell of the highest occupancy the best; latency leaves it blank.
void TestHeatmap::analysedResultsColourTheMap() {
    const auto analysed = [](std::int64_t a, std::int64_t b, std::int64_t c, double occupancy, int registers,
                             std::int64_t spills) {
        ResultRecord r = makeResult(a, b, c, ResultStatus::Analysed, 0, spills, registers);
        if (occupancy > 0)
            r.occupancy = occupancy;
        return r;
    };
    std::vector<ResultRecord> rs;
    rs.push_back(analysed(8, 1, 0, 50, 64, 0));
    rs.push_back(analysed(8, 1, 1, 25, 128, 0));
    rs.push_back(analysed(8, 2, 0, 100, 32, 0));
    rs.push_back(analysed(16, 1, 0, 75, 40, 16)); // spills
    rs.push_back(makeResult(16, 2, 0, ResultStatus::CompileError));
    rs.push_back(makeResult(16, 2, 1, ResultStatus::Pruned));

    // The spec a new session's heatmap takes, and the one a view takes as a run's results arrive.
    const HeatmapSpec spec = sessionHeatmapSpec({}, kNames, "", rs);
    QCOMPARE(spec.quantity.kind, QuantityKind::TheoreticalOccupancy);
    QCOMPARE(untimedHeatmapSpec(specOf(kLatency, Reduction::Best), rs).quantity.kind,
             QuantityKind::TheoreticalOccupancy);
    QCOMPARE(untimedHeatmapSpec(specOf(kObjective, Reduction::Best), rs).quantity.kind,
             QuantityKind::TheoreticalOccupancy);
    const Quantity registers{QuantityKind::Registers, {}, false};
    QCOMPARE(untimedHeatmapSpec(specOf(registers, Reduction::Best), rs).quantity.kind, QuantityKind::Registers);
    std::vector<ResultRecord> withOk = rs;
    withOk.push_back(makeResult(8, 2, 1, ResultStatus::Ok, 1.0));
    QCOMPARE(untimedHeatmapSpec(specOf(kLatency, Reduction::Best), withOk).quantity.kind, QuantityKind::LatencyUs);
    std::vector<ResultRecord> noOccupancy = rs;
    for (ResultRecord& r : noOccupancy)
        r.occupancy.reset();
    QCOMPARE(untimedHeatmapSpec(specOf(kLatency, Reduction::Best), noOccupancy).quantity.kind, QuantityKind::Registers);
    QCOMPARE(untimedHeatmapSpec(specOf(kLatency, Reduction::Best), {}).quantity.kind, QuantityKind::LatencyUs);

    const Quantity occupancy{QuantityKind::TheoreticalOccupancy, {}, false};
    const HeatmapGrid grid = views::aggregate(rs, kNames, specOf(occupancy, Reduction::Best));
    QCOMPARE(grid.okCount, std::size_t(0));
    QCOMPARE(grid.analysedCount, std::size_t(4));
    QCOMPARE(grid.failedCount, std::size_t(1));
    QVERIFY(same(grid.cell(0, 0).value, 50)); // (8, 1): the higher of 50 and 25
    QVERIFY(same(grid.cell(0, 1).value, 100));
    QVERIFY(same(grid.cell(1, 0).value, 75));
    QVERIFY(std::isnan(grid.cell(1, 1).value));
    QCOMPARE(grid.cell(0, 0).marker, CellMarker::Fine);
    QCOMPARE(grid.cell(1, 0).marker, CellMarker::Spilling);
    QCOMPARE(grid.cell(1, 1).marker, CellMarker::FailedOnly);
    QCOMPARE(grid.cell(0, 0).analysedCount, 2u);
    QCOMPARE(grid.best, (CellIndex{0, 1}));
    const QString tip = tooltip(grid, {0, 0});
    QVERIFY2(tip.contains(QStringLiteral("over 2 analysed configs")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("Results: 2 analysed")), qPrintable(tip));

    // Registers and spills: fewer is better.
    const HeatmapGrid regs = views::aggregate(rs, kNames, specOf(registers, Reduction::Best));
    QVERIFY(same(regs.cell(0, 0).value, 64));
    QCOMPARE(regs.best, (CellIndex{0, 1}));
    const HeatmapGrid spills =
        views::aggregate(rs, kNames, specOf({QuantityKind::SpillStores, {}, false}, Reduction::Median));
    QVERIFY(same(spills.cell(1, 0).value, 16));
    // No time: latency leaves every cell blank, and the tooltip says why.
    const HeatmapGrid latency = views::aggregate(rs, kNames, specOf(kLatency, Reduction::Best));
    QVERIFY(!latency.best.valid());
    QCOMPARE(latency.cell(0, 0).marker, CellMarker::Fine);
    QVERIFY2(tooltip(latency, {0, 0}).contains(QStringLiteral("analysed, never run")),
             qPrintable(tooltip(latency, {0, 0})));

    // The widget offers what the results have and colours the cells.
    HeatmapWidget widget;
    widget.setResults(std::make_shared<const std::vector<ResultRecord>>(rs), kNames, "");
    widget.setSpec(spec);
    QCOMPARE(widget.quantityCombo()->currentText(), quantityLabel(occupancy, ""));
    QStringList offered;
    for (int i = 0; i < widget.quantityCombo()->count(); ++i)
        offered << widget.quantityCombo()->itemText(i);
    QVERIFY2(offered.contains(quantityLabel(registers, "")), qPrintable(offered.join(", ")));
    QVERIFY2(offered.contains(quantityLabel({QuantityKind::SpillStores, {}, false}, "")),
             qPrintable(offered.join(", ")));
    QVERIFY(widget.grid());
    QCOMPARE(widget.spec().yParameter, std::string("A")); // a session's first parameter down the side
    QVERIFY(same(widget.grid()->cell(widget.grid()->best).value, 100));
    QVERIFY(same(widget.colorMap()->data()->cell(1, 0), 100)); // B = 2 along, A = 8 down
    // As wide as the heatmap's panel at 1366x768, the colour's name reads whole; squeezed, it
    // gives way rather than widen the panel.
    widget.resize(580, 420);
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    const QComboBox* colour = widget.quantityCombo();
    QTRY_VERIFY2(colour->width() >= colour->fontMetrics().horizontalAdvance(colour->currentText()) +
                                        colour->fontMetrics().averageCharWidth() * 2,
                 qPrintable(QStringLiteral("'%1' in %2 px").arg(colour->currentText()).arg(colour->width())));
    widget.resize(260, 420);
    QTRY_VERIFY(colour->width() <= 260);
}

void TestHeatmap::widgetColourMapEqualsGrid() {
    HeatmapWidget widget;
    QSignalSpy changed(&widget, &HeatmapWidget::gridChanged);
    auto results = std::make_shared<const std::vector<ResultRecord>>(smallSet());
    widget.setResults(results, kNames, "TFLOP/s");
    QCOMPARE(changed.count(), 1); // small inputs: at once, on this thread
    widget.setSpec(specOf(kLatency, Reduction::Median));
    QCOMPARE(changed.count(), 2);
    QVERIFY(widget.grid());
    const HeatmapGrid expected = views::aggregate(*results, kNames, specOf(kLatency, Reduction::Median), "TFLOP/s");

    QCPColorMapData* data = widget.colorMap()->data();
    QCOMPARE(data->keySize(), 3);
    QCOMPARE(data->valueSize(), 2);
    for (int x = 0; x < 3; ++x) {
        for (int y = 0; y < 2; ++y) {
            QVERIFY(same(data->cell(x, y), expected.cell(x, y).value));
            QVERIFY(same(data->cell(x, y), widget.grid()->cell(x, y).value));
        }
    }
    // Latency: less is better, so the gradient runs the other way and the best cell is as bright
    // as the best throughput cell would be.
    QCPColorGradient gradient = widget.colorScale()->gradient();
    const QCPRange range = widget.colorScale()->dataRange();
    QCOMPARE(range.lower, 800.0);
    QCOMPARE(range.upper, 4000.0);
    QCOMPARE(QColor(gradient.color(range.lower, range)), QColor(253, 231, 37));
    QCOMPARE(gradient.nanHandling(), QCPColorGradient::nhTransparent);
    QVERIFY(widget.colorScale()->axis()->label().startsWith(QStringLiteral("latency (µs)")));
    QCOMPARE(widget.plot()->xAxis->label(), QStringLiteral("A"));
    QCOMPARE(widget.plot()->yAxis->label(), QStringLiteral("B"));
    auto ticker = widget.plot()->xAxis->ticker().dynamicCast<QCPAxisTickerText>();
    QVERIFY(ticker);
    QCOMPARE(ticker->ticks().value(0), QStringLiteral("8"));
    QCOMPARE(ticker->ticks().value(2), QStringLiteral("128"));

    // Throughput: the plain gradient, max is bright.
    widget.setSpec(specOf(kObjective, Reduction::Best));
    gradient = widget.colorScale()->gradient();
    QCOMPARE(QColor(gradient.color(widget.colorScale()->dataRange().upper, widget.colorScale()->dataRange())),
             QColor(253, 231, 37));
    QCOMPARE(widget.colorScale()->axis()->label().left(7), QStringLiteral("TFLOP/s"));

    // Log scale: the colour axis turns logarithmic without a new aggregation.
    HeatmapSpec logSpec = widget.spec();
    logSpec.logScale = true;
    const int before = changed.count();
    widget.setSpec(logSpec);
    QCOMPARE(changed.count(), before);
    QCOMPARE(widget.colorScale()->dataScaleType(), QCPAxis::stLogarithmic);
    QVERIFY(widget.logScaleBox()->isChecked());
}

void TestHeatmap::widgetHoverMapsPixelsToCells() {
    HeatmapWidget widget;
    widget.resize(700, 500);
    widget.setResults(std::make_shared<const std::vector<ResultRecord>>(smallSet()), kNames, "TFLOP/s");
    widget.setSpec(specOf(kLatency, Reduction::Best));
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    widget.plot()->replot(); // lays the axes out now rather than at the queued replot
    for (int x = 0; x < 3; ++x) {
        for (int y = 0; y < 2; ++y) {
            const QPoint centre = cellCentre(widget, x, y);
            QCOMPARE(widget.cellAtPixel(centre), (CellIndex{x, y}));
            // Near the cell's edges too.
            const double halfWidth =
                std::abs(widget.plot()->xAxis->coordToPixel(0.45) - widget.plot()->xAxis->coordToPixel(0));
            QCOMPARE(widget.cellAtPixel(QPointF(centre.x() + halfWidth, centre.y())), (CellIndex{x, y}));
            QCOMPARE(widget.cellAtPixel(QPointF(centre.x() - halfWidth, centre.y())), (CellIndex{x, y}));
        }
    }
    QVERIFY(!widget.cellAtPixel(QPointF(1, 1)).valid()); // the margin
    const double right = widget.plot()->xAxis->coordToPixel(2.6);
    QVERIFY(!widget.cellAtPixel(QPointF(right, cellCentre(widget, 0, 0).y())).valid());

    // The mouse: moving over a cell shows its tooltip.
    QTest::mouseMove(widget.plot(), cellCentre(widget, 2, 0));
    QTRY_COMPARE(widget.hoverText(), tooltip(*widget.grid(), {2, 0}));
    QTest::mouseMove(widget.plot(), cellCentre(widget, 1, 0));
    QTRY_COMPARE(widget.hoverText(), tooltip(*widget.grid(), {1, 0}));
}

void TestHeatmap::widgetClickEmitsConfig() {
    HeatmapWidget widget;
    widget.resize(700, 500);
    widget.setResults(std::make_shared<const std::vector<ResultRecord>>(smallSet()), kNames, "TFLOP/s");
    widget.setSpec(specOf(kLatency, Reduction::Best));
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    widget.plot()->replot();
    QSignalSpy selected(&widget, &HeatmapWidget::configSelected);

    QTest::mouseClick(widget.plot(), Qt::LeftButton, {}, cellCentre(widget, 0, 1));
    QCOMPARE(selected.count(), 1);
    const QString json = selected.takeFirst().at(0).toString();
    QCOMPARE(json, QStringLiteral(R"({"A":8,"B":2,"C":0})"));
    QVERIFY(widget.selectConfig(json)); // the click also outlined it

    // An untested cell has no config: nothing is emitted.
    QTest::mouseClick(widget.plot(), Qt::LeftButton, {}, cellCentre(widget, 1, 1));
    QCOMPARE(selected.count(), 0);
    // A failed-only cell gives its first failure, to inspect its log.
    QTest::mouseClick(widget.plot(), Qt::LeftButton, {}, cellCentre(widget, 1, 0));
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.takeFirst().at(0).toString(), QStringLiteral(R"({"A":16,"B":1,"C":0})"));

    // Selection from elsewhere: a config of another slice is not outlined.
    HeatmapSpec sliced = specOf(kLatency, Reduction::Best, {{"C", "1"}});
    widget.setSpec(sliced);
    QVERIFY(!widget.selectConfig(QStringLiteral(R"({"A":8,"B":2,"C":0})")));
    QVERIFY(widget.selectConfig(QStringLiteral(R"({"A":8,"B":2,"C":1})")));
    QVERIFY(!widget.selectConfig(QStringLiteral("not json")));
}

void TestHeatmap::widgetControlsFollowSpec() {
    HeatmapWidget widget;
    widget.setResults(std::make_shared<const std::vector<ResultRecord>>(smallSet()), kNames, "TFLOP/s");
    // Defaults: the first two parameters, latency, best.
    QCOMPARE(widget.spec().xParameter, std::string("A"));
    QCOMPARE(widget.spec().yParameter, std::string("B"));
    QCOMPARE(widget.xCombo()->currentText(), QStringLiteral("A"));
    QCOMPARE(widget.quantityCombo()->currentText(), QStringLiteral("latency (µs)"));
    QCOMPARE(widget.quantityCombo()->itemText(1), QStringLiteral("TFLOP/s"));
    // The combos' models are rebuilt as results change: checked while that happens.
    auto quantities = std::make_unique<QAbstractItemModelTester>(
        widget.quantityCombo()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);

    QComboBox* c = widget.fixedValueCombo("C");
    QVERIFY(c);
    auto values =
        std::make_unique<QAbstractItemModelTester>(c->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(c->count(), 4);
    QCOMPARE(c->itemText(0), QStringLiteral("all"));
    QCOMPARE(c->itemText(3), QStringLiteral("2"));
    QVERIFY(!widget.fixedValueCombo("A")->isVisibleTo(&widget)); // an axis: no slice
    QVERIFY(c->isVisibleTo(&widget));

    // The user fixes C = 1.
    c->setCurrentIndex(2);
    emit c->activated(2);
    QCOMPARE(widget.spec().fixedValues.at("C"), std::string("1"));
    QCOMPARE(widget.grid()->matchedCount, std::size_t(5));

    // Picking the other axis' parameter swaps the axes.
    widget.xCombo()->setCurrentText(QStringLiteral("B"));
    emit widget.xCombo()->activated(widget.xCombo()->currentIndex());
    QCOMPARE(widget.spec().xParameter, std::string("B"));
    QCOMPARE(widget.spec().yParameter, std::string("A"));
    QCOMPARE(widget.grid()->xValues, (QStringList{"1", "2"}));

    // Quantity and reduction.
    widget.quantityCombo()->setCurrentIndex(1);
    emit widget.quantityCombo()->activated(1);
    QCOMPARE(widget.spec().quantity.kind, QuantityKind::Objective);
    widget.reductionCombo()->setCurrentIndex(1);
    emit widget.reductionCombo()->activated(1);
    QCOMPARE(widget.spec().reduction, Reduction::Median);

    // setSpec moves the controls.
    widget.setSpec(specOf(kLatency, Reduction::Best, {{"C", "2"}}));
    QCOMPARE(widget.xCombo()->currentText(), QStringLiteral("A"));
    QCOMPARE(widget.reductionCombo()->currentIndex(), 0);
    QCOMPARE(c->currentText(), QStringLiteral("2"));

    // A metric no result has: offered anyway, every cell blank.
    widget.setSpec(specOf({QuantityKind::Metric, "dram__bytes_read.sum", false}, Reduction::Best));
    QCOMPARE(widget.quantityCombo()->currentText(), QStringLiteral("DRAM bytes read"));
    QVERIFY(std::isnan(widget.grid()->cell(0, 0).value));
    QVERIFY(!widget.grid()->best.valid());

    // New results with other parameters: the spec falls back to what exists.
    values.reset(); // its combo goes with the old parameters
    std::vector<ResultRecord> other = largeSet(50);
    widget.setResults(std::make_shared<const std::vector<ResultRecord>>(other), kSgemmNames, "");
    QCOMPARE(widget.spec().xParameter, std::string("BLOCK_M"));
    QCOMPARE(widget.spec().yParameter, std::string("BLOCK_N"));
    QVERIFY(widget.spec().fixedValues.empty());
    QVERIFY(widget.fixedValueCombo("C") == nullptr);
    QVERIFY(widget.fixedValueCombo("STAGES"));
}

void TestHeatmap::widgetAggregatesLargeInputsOffThread() {
    HeatmapWidget widget;
    QSignalSpy changed(&widget, &HeatmapWidget::gridChanged);
    auto first = std::make_shared<const std::vector<ResultRecord>>(largeSet(60'000));
    auto second = std::make_shared<const std::vector<ResultRecord>>(largeSet(100'000));
    widget.setResults(first, kSgemmNames, "GB/s");
    QVERIFY(widget.isBusy());
    QCOMPARE(changed.count(), 0); // not aggregated on the GUI thread
    // Two newer requests before the first is delivered: only the newest is applied.
    widget.setResults(second, kSgemmNames, "GB/s");
    HeatmapSpec spec = widget.spec();
    spec.xParameter = "VEC";
    spec.yParameter = "STAGES";
    widget.setSpec(spec);
    QTRY_VERIFY_WITH_TIMEOUT(!widget.isBusy(), kTimeoutMs);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(widget.grid()->resultCount, std::size_t(100'000));
    QCOMPARE(widget.grid()->spec.xParameter, std::string("VEC"));
    QCOMPARE(widget.grid()->spec.yParameter, std::string("STAGES"));
    QCOMPARE(widget.colorMap()->data()->keySize(), widget.grid()->columns());
    QCOMPARE(widget.fixedValueCombo("BLOCK_M")->count(), 5); // the summary came along: "all" + 4 values

    // Destroying the widget while it aggregates waits for the helper and delivers nothing.
    auto doomed = std::make_unique<HeatmapWidget>();
    doomed->setResults(second, kSgemmNames, "GB/s");
    QVERIFY(doomed->isBusy());
    doomed.reset();
    QTest::qWait(50);
}

// ------------------------------------------------------------------------------ scatter

void TestHeatmap::scatterPointsAndThinning() {
    const std::vector<ResultRecord> small = smallSet();
    ScatterSpec spec;
    spec.x = {QuantityKind::Registers, {}, false};
    spec.y = kObjective;
    spec.colour = Quantity{QuantityKind::SpillStores, {}, false};
    const ScatterData data = scatterPoints(small, spec, "TFLOP/s", 4000);
    QCOMPARE(data.points.size(), std::size_t(9)); // the Ok results
    QCOMPARE(data.failedCount, std::size_t(3));   // the pruned one is no failure
    QVERIFY(!data.thinned());
    QCOMPARE(small[data.points.front().result].config.at("A").asInt(), 128); // best first
    QCOMPARE(data.points.front().x, 255.0);
    QCOMPARE(data.points.front().colour, 64.0);
    QCOMPARE(data.colourMin, 0.0);
    QCOMPARE(data.colourMax, 64.0);

    const std::vector<ResultRecord> large = largeSet(100'000);
    spec.colour.reset();
    const ScatterData thinned = scatterPoints(large, spec, "TFLOP/s", 4000); // timed in bench_results
    QCOMPARE(thinned.points.size(), std::size_t(4000));
    QVERIFY(thinned.thinned());
    // The best result overall is among the points, first.
    const auto best = bestOf(large);
    QVERIFY(best);
    QCOMPARE(large[thinned.points.front().result].id, best->id);
}

void TestHeatmap::scatterWidgetHoverClickSelect() {
    ScatterWidget widget;
    widget.resize(700, 500);
    auto results = std::make_shared<const std::vector<ResultRecord>>(smallSet());
    widget.setResults(results, kNames, "TFLOP/s");
    // Defaults: registers against the objective, coloured by spill stores.
    QCOMPARE(widget.spec().x.kind, QuantityKind::Registers);
    QCOMPARE(widget.spec().y.kind, QuantityKind::Objective);
    QVERIFY(widget.spec().colour && widget.spec().colour->kind == QuantityKind::SpillStores);
    QAbstractItemModelTester model(widget.colourCombo()->model(),
                                   QAbstractItemModelTester::FailureReportingMode::QtTest);

    ScatterSpec spec;
    spec.x = kLatency;
    spec.y = kObjective;
    spec.colour = Quantity{QuantityKind::Registers, {}, false};
    widget.setSpec(spec);
    QCOMPARE(widget.xCombo()->currentText(), QStringLiteral("latency (µs)"));
    QCOMPARE(widget.data()->points.size(), std::size_t(9));
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    widget.plot()->replot();

    // The best point: hover and click.
    const QPointF best = widget.pixelOf(0);
    QCOMPARE(widget.pointAtPixel(best), 0);
    QCOMPARE(widget.pointAtPixel(best + QPointF(3, 3)), 0);
    QCOMPARE(widget.pointAtPixel(QPointF(1, 1)), -1);
    QTest::mouseMove(widget.plot(), best.toPoint());
    QTRY_VERIFY(widget.hoverText().contains(QStringLiteral("A=128 B=1 C=0")));
    QSignalSpy selected(&widget, &ScatterWidget::configSelected);
    QTest::mouseClick(widget.plot(), Qt::LeftButton, {}, best.toPoint());
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.takeFirst().at(0).toString(), QStringLiteral(R"({"A":128,"B":1,"C":0})"));
    QCOMPARE(widget.selectedConfig(), QStringLiteral(R"({"A":128,"B":1,"C":0})"));

    // Selection from elsewhere.
    QVERIFY(widget.selectConfig(QStringLiteral(R"({"A":8,"B":2,"C":1})")));
    QVERIFY(!widget.selectConfig(QStringLiteral(R"({"A":16,"B":1,"C":0})"))); // failed: no point
    QVERIFY(!widget.selectConfig(QString()));
}

// A recording with energy (kernels/softmax on the H200, --metrics energy): the scatter opens on
// time against energy with the Pareto front drawn, the front being the points no other beats on
// both (checked by brute force), listed along the time axis.
void TestHeatmap::scatterDrawsTheTimeEnergyFront() {
    const SessionData session =
        readSession(TILESCOPE_SOURCE_DIR "/tests/bench/data/lab/softmax-energy-h200-8192.t4.json.gz");
    auto results = std::make_shared<const std::vector<ResultRecord>>(session.results);
    std::vector<std::string> names;
    for (const auto& [name, value] : session.results.front().config)
        names.push_back(name);
    ScatterWidget widget;
    widget.resize(1000, 620);
    widget.setResults(results, names, session.info.objectiveName);
    widget.show();
    QVERIFY(QTest::qWaitForWindowExposed(&widget));
    QTRY_VERIFY(widget.data() && !widget.data()->points.empty());
    QCOMPARE(widget.spec().x.kind, QuantityKind::LatencyUs);
    QCOMPARE(widget.spec().y.metric, std::string(kEnergyMetric));
    QVERIFY(widget.spec().front);
    const ScatterData& data = *widget.data();
    std::set<std::size_t> front(data.front.begin(), data.front.end());
    QVERIFY(!front.empty());
    for (std::size_t i = 0; i < data.points.size(); ++i) {
        bool beaten = false;
        for (const ScatterPoint& q : data.points)
            beaten = beaten || (q.x <= data.points[i].x && q.y <= data.points[i].y &&
                                (q.x < data.points[i].x || q.y < data.points[i].y));
        QCOMPARE(front.count(i) == 1, !beaten);
    }
    for (std::size_t k = 1; k < data.front.size(); ++k)
        QVERIFY(data.points[data.front[k - 1]].x <= data.points[data.front[k]].x);
    QVERIFY(widget.statusText().contains(QStringLiteral("on the front")));
    QTemporaryDir temporary;
    const QString path = screenshotDir(temporary) + QStringLiteral("/scatter_time_energy_front.png");
    QVERIFY(widget.savePng(path, 1000, 620));
    qInfo("scatter PNG: %s", qPrintable(path));
    // A trade-off on the front (the most frugal, not the fastest) exported as the one entry of the
    // JSON cache and of the C++ header.
    const ScatterPoint& frugal = data.points[data.front.back()];
    const ResultRecord& chosen = (*results)[frugal.result];
    const QString chosenJson = QString::fromStdString(configJson(chosen.config));
    const QString json = temporary.filePath(QStringLiteral("chosen.json"));
    QCOMPARE(ResultsExport::writeSelectedConfig(session.info, *results, chosenJson, json), QString());
    const std::vector<BestConfig> written = parseBestConfigsJson(readText(json), "chosen.json");
    QCOMPARE(written.size(), std::size_t(1));
    QVERIFY(written[0].config == chosen.config);
    QCOMPARE(*written[0].energyJ, frugal.y);
    QVERIFY(written[0].timeMs > data.points[data.front.front()].x / 1000.0); // slower than the fastest
    const QString header = temporary.filePath(QStringLiteral("chosen.h"));
    QCOMPARE(ResultsExport::writeSelectedConfig(session.info, *results, chosenJson, header), QString());
    QVERIFY(readText(header).find("J a launch") != std::string::npos);
    QVERIFY(
        !ResultsExport::writeSelectedConfig(session.info, *results, QStringLiteral(R"({"TPR":3})"), json).isEmpty());

    // Unticked, no front.
    ScatterSpec spec = widget.spec();
    spec.front = false;
    widget.setSpec(spec);
    QTRY_VERIFY(widget.data() && widget.data()->front.empty());
}

// ------------------------------------------------------------------------------ pictures

void TestHeatmap::saveScreenshots() {
    const std::vector<ResultRecord> sgemm = syntheticSgemm();
    qInfo("synthetic SGEMM results: %zu", sgemm.size());
    QVERIFY(sgemm.size() > 500);
    auto results = std::make_shared<const std::vector<ResultRecord>>(sgemm);
    QTemporaryDir temporary;
    QVERIFY(temporary.isValid());
    const QString dir = screenshotDir(temporary);

    HeatmapWidget heatmap;
    heatmap.resize(900, 680);
    heatmap.setResults(results, kSgemmNames, "TFLOP/s");
    HeatmapSpec spec;
    spec.xParameter = "THREAD_N";
    spec.yParameter = "THREAD_M";
    spec.quantity = kObjective;
    heatmap.setSpec(spec);
    heatmap.show();
    QVERIFY(QTest::qWaitForWindowExposed(&heatmap));
    const HeatmapGrid& grid = *heatmap.grid();
    QCOMPARE(grid.xValues, (QStringList{"1", "2", "4", "8", "16"}));
    QCOMPARE(grid.cell(4, 4).marker, CellMarker::Spilling);   // 16 x 16 thread tiles spill
    QCOMPARE(grid.cell(4, 0).marker, CellMarker::FailedOnly); // THREAD_M = 1, THREAD_N = 16: compile errors

    const QString tiles = dir + QStringLiteral("/heatmap_thread_tiles.png");
    QVERIFY(heatmap.savePng(tiles, 900, 600));
    qInfo("heatmap PNG: %s", qPrintable(tiles));

    spec.xParameter = "BLOCK_N";
    spec.yParameter = "BLOCK_M";
    spec.quantity = kLatency;
    spec.reduction = Reduction::Median;
    spec.fixedValues = {{"STAGES", "2"}};
    spec.logScale = true;
    heatmap.setSpec(spec);
    const QString blocks = dir + QStringLiteral("/heatmap_blocks_latency.png");
    QVERIFY(heatmap.savePng(blocks, 900, 600));
    QVERIFY(heatmap.savePdf(dir + QStringLiteral("/heatmap_blocks_latency.pdf"), 900, 600));
    qInfo("heatmap PNG: %s", qPrintable(blocks));
    QCoreApplication::processEvents(); // the queued replot
    const QString window = dir + QStringLiteral("/heatmap_widget.png");
    QVERIFY(heatmap.grab().save(window));
    qInfo("heatmap widget grab: %s", qPrintable(window));

    // One column (a single value of the x parameter): the cell still spans its tick.
    std::vector<ResultRecord> column;
    for (const ResultRecord& r : smallSet()) {
        if (r.config.at("A") == 8)
            column.push_back(r);
    }
    HeatmapWidget single;
    single.resize(500, 400);
    single.setResults(std::make_shared<const std::vector<ResultRecord>>(column), kNames, "TFLOP/s");
    QCOMPARE(single.grid()->columns(), 1);
    const QString singlePath = dir + QStringLiteral("/heatmap_single_column.png");
    QVERIFY(single.savePng(singlePath, 500, 400));
    qInfo("heatmap PNG: %s", qPrintable(singlePath));

    ScatterWidget scatter;
    scatter.resize(900, 600);
    scatter.setResults(results, kSgemmNames, "TFLOP/s");
    scatter.show();
    QVERIFY(QTest::qWaitForWindowExposed(&scatter));
    scatter.selectConfig(QString::fromStdString(configJson(bestOf(sgemm)->config)));
    const QString points = dir + QStringLiteral("/scatter_registers_tflops.png");
    QVERIFY(scatter.savePng(points, 900, 600));
    qInfo("scatter PNG: %s", qPrintable(points));
    QVERIFY(QFileInfo(points).size() > 10'000);
}

QTEST_MAIN(TestHeatmap)
#include "tst_heatmap.moc"
