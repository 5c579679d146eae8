// The session views: the results model (under QAbstractItemModelTester, with its proxy), the
// filter box and CSV copy, the session controller running real replay sessions (signals,
// coalescing, the best result, cancel stored as cancelled, resume, a recording opened for
// browsing, errors), the analysis backend through the controller (a compile error with its
// NVRTC log in the run log), the config details panel (registers, occupancy, the spill
// diagnosis and the learnt rule), the run panel without a driver and running a shape set (a
// session per shape into one database, browsed as a recording at the end), and what a live run
// costs the GUI thread: the worst event-loop stall while a full-speed replay feeds the table and
// a heatmap, and the cost of a 100,000-result snapshot. Runs on the offscreen platform.

#include "models/resultsmodel.h"
#include "models/resultsproxy.h"
#include "session/configdetails.h"
#include "session/resultsview.h"
#include "session/runpanel.h"
#include "session/sessioncontroller.h"

#include "plots/heatmapwidget.h"

#include "base/error.h"
#include "exchange/recording.h"
#include "measure/analysis/analysisbackend.h"
#include "measure/metricnames.h"
#include "search/strategy.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/backendspec.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

using namespace tilescope;
using namespace tilescope::views;

namespace {

const QString kSgemm = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
const QString kDemo = QStringLiteral(TILESCOPE_SOURCE_DIR "/resources/demo/sgemm-h200-2048.t4.json.gz");
const QString kTinyKernel = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/tuning/tiny.cu");
const QString kGemv = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv/gemv_bf16.json");
const QString kGemvShapes = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv-bf16-h200-shapes.db");
constexpr int kTimeoutMs = 120'000;
constexpr std::size_t kDemoResults = 2761;
const std::vector<std::string> kNames = {"A", "B"};

std::string readText(const QString& path) {
    std::ifstream in(path.toStdString());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::shared_ptr<const TuningProblem> loadSgemm() {
    return std::make_shared<const TuningProblem>(TuningProblem::load(kSgemm.toStdString()));
}

ResultRecord makeRecord(std::int64_t id, std::int64_t a, std::int64_t b, ResultStatus status, double timeMs = 0,
                        int registers = 64, std::int64_t spill = 0) {
    ResultRecord r;
    r.id = id;
    r.sessionId = 1;
    r.config["A"] = a;
    r.config["B"] = b;
    r.measurement.status = status;
    if (status == ResultStatus::Ok) {
        r.measurement.time.medianMs = timeMs;
        r.measurement.time.minMs = timeMs;
        r.measurement.time.maxMs = timeMs;
        r.measurement.time.samples = 10;
        r.objective = 1.0 / timeMs;
        r.measurement.metrics = {{"sm__warps_active.avg.pct_of_peak_sustained_active", 40.0 + double(a % 7)},
                                 {"dram__bytes_read.sum", 1000.0 * double(b)}};
    } else {
        r.measurement.message = std::string(statusName(status)) + ", made by the test";
    }
    StaticInfo info;
    info.registers = registers;
    info.spillStores = spill;
    info.spillLoads = spill;
    info.stackFrame = spill;
    r.measurement.staticInfo = info;
    r.occupancy = 50.0;
    return r;
}

// 12 results over A in {8, 16, 32, 64} x B in {1, 2, 3}: A = 64 spills with 255 registers,
// B = 3 with A = 16 failed to compile, one crashed.
std::vector<ResultRecord> smallSet(std::int64_t firstId = 1) {
    std::vector<ResultRecord> rs;
    std::int64_t id = firstId;
    for (std::int64_t a : {8, 16, 32, 64})
        for (std::int64_t b : {1, 2, 3}) {
            if (a == 16 && b == 3)
                rs.push_back(makeRecord(id++, a, b, ResultStatus::CompileError));
            else if (a == 32 && b == 3)
                rs.push_back(makeRecord(id++, a, b, ResultStatus::Crashed));
            else
                rs.push_back(makeRecord(id++, a, b, ResultStatus::Ok, 0.1 * double(a) / double(b),
                                        a == 64 ? 255 : int(32 + a + b), a == 64 ? 512 : 0));
        }
    return rs;
}

ResultsSnapshot snapshotOf(std::vector<ResultRecord> rs) {
    return std::make_shared<const std::vector<ResultRecord>>(std::move(rs));
}

// A demo-like record: 7 parameters, 7 metrics, static info, the strings a real one carries.
ResultRecord demoLikeRecord(std::int64_t id) {
    ResultRecord r;
    r.id = id;
    r.sessionId = 1;
    const char* names[] = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "THREAD_M", "THREAD_N", "VEC", "STAGES"};
    for (int p = 0; p < 7; ++p)
        r.config[names[p]] = (id * (p + 3)) % 257;
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

SessionController::Request replayRequest(const QString& db, std::chrono::milliseconds delay = {}) {
    SessionController::Request r;
    r.problem = loadSgemm();
    r.backend = QStringLiteral("replay:") + kDemo;
    r.options.shapeIndex = 1;
    r.databasePath = db;
    r.replayDelay = delay;
    return r;
}

// The configs of `results` whose static info says they spill.
std::vector<const ResultRecord*> spilling(const std::vector<ResultRecord>& results) {
    std::vector<const ResultRecord*> out;
    for (const ResultRecord& r : results)
        if (r.measurement.staticInfo && r.measurement.staticInfo->spills())
            out.push_back(&r);
    return out;
}

} // namespace

class TestSession : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void backendSpecs_data();
    void backendSpecs();

    void modelColumnsAndCells();
    void modelUpdatesUnderTester();
    void modelFindsConfigs();
    void filter_data();
    void filter();
    void viewFilterBoxAndCsv();
    void viewSelection();

    void controllerRunsReplay();
    void controllerCancelsAndResumes();
    void controllerSaysWhenNothingResumes();
    void controllerOpensRecording();
    void controllerReportsErrors();
    void controllerSaysWhyConfigsDoNotRank();
    void analysisSession();
    void runPanelOffersRemoteGpus();

    void detailsPanel();
    void runPanelWithoutDriver();
    void runPanelListsGpus();
    void runPanelRunsReplay();
    void runPanelTakesTheDefaultStrategy();
    void runPanelRunsShapeSet();

    void liveReplayFeedsEveryView();
    void largeSnapshots();

private:
    QTemporaryDir m_dir;
};

void TestSession::initTestCase() {
    QVERIFY(m_dir.isValid());
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    // Compiles (the analysis session) go to a cache of the test's own.
    qputenv("TILESCOPE_CACHE_DIR", m_dir.filePath(QStringLiteral("cache")).toUtf8());
    QStandardPaths::setTestModeEnabled(true);
}

// ------------------------------------------------------------------------------ backend specs

void TestSession::backendSpecs_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("label"); // "" = an InputError
    QTest::newRow("cuda") << "cuda"
                          << "cuda:0";
    QTest::newRow("cuda devices") << "cuda:0, 2"
                                  << "cuda:0,2";
    QTest::newRow("analysis") << "analysis:sm_90"
                              << "analysis:sm_90";
    QTest::newRow("replay") << "replay:/tmp/x.json"
                            << "replay:/tmp/x.json";
    QTest::newRow("bad device") << "cuda:0,x"
                                << "";
    QTest::newRow("twice") << "cuda:1,1"
                           << "";
    QTest::newRow("empty replay") << "replay:"
                                  << "";
    QTest::newRow("empty arch") << "analysis:"
                                << "";
    QTest::newRow("unknown") << "opencl"
                             << "";
}

void TestSession::backendSpecs() {
    QFETCH(QString, text);
    QFETCH(QString, label);
    try {
        const BackendSpec spec = parseBackendSpec(text.toStdString());
        QCOMPARE(QString::fromStdString(spec.label()), label);
    } catch (const InputError& e) {
        QVERIFY2(label.isEmpty(), e.what());
        QVERIFY(!e.message().empty());
    }
}

// ------------------------------------------------------------------------------ model

void TestSession::modelColumnsAndCells() {
    ResultsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setResults(snapshotOf(smallSet()), kNames, "GB/s");
    QCOMPARE(model.rowCount(), 12);
    // A, B, status, time, objective, regs, spill st, spill ld, occupancy, achieved, DRAM read, message
    QCOMPARE(model.columnCount(), 12);
    QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("A"));
    QCOMPARE(model.headerData(model.columnOf(ResultsModel::ColumnKind::Objective), Qt::Horizontal).toString(),
             QStringLiteral("GB/s"));
    const int metric = model.columnOf(ResultsModel::ColumnKind::Metric, "dram__bytes_read.sum");
    QVERIFY(metric >= 0);
    QCOMPARE(model.headerData(metric, Qt::Horizontal).toString(), QStringLiteral("DRAM bytes read"));

    // Row 0: A = 8, B = 1, 0.8 ms
    const int time = model.columnOf(ResultsModel::ColumnKind::Time);
    QCOMPARE(model.data(model.index(0, time)).toString(), QStringLiteral("800"));
    QCOMPARE(model.data(model.index(0, time), ResultsModel::SortRole).toDouble(), 800.0);
    QCOMPARE(model.data(model.index(0, model.columnOf(ResultsModel::ColumnKind::Registers))).toString(),
             QStringLiteral("41"));
    QCOMPARE(model.data(model.index(0, model.columnOf(ResultsModel::ColumnKind::AchievedOccupancy))).toString(),
             QStringLiteral("41"));
    // Row 5: the compile error: no time, a status and a message
    QCOMPARE(model.data(model.index(5, model.columnOf(ResultsModel::ColumnKind::Status))).toString(),
             QStringLiteral("compile_error"));
    QVERIFY(model.data(model.index(5, time)).toString().isEmpty());
    QVERIFY(std::isnan(model.data(model.index(5, time), ResultsModel::SortRole).toDouble()));
    QVERIFY(model.data(model.index(5, model.columnOf(ResultsModel::ColumnKind::Message)))
                .toString()
                .contains(QStringLiteral("made by the test")));
    QCOMPARE(model.csvAt(0, time), QStringLiteral("800"));
    QCOMPARE(model.configJsonAt(0), QStringLiteral(R"({"A":8,"B":1})"));
    QCOMPARE(model.findColumn(QStringLiteral("REGISTERS")), model.columnOf(ResultsModel::ColumnKind::Registers));
    QCOMPARE(model.findColumn(QStringLiteral("gb/s")), model.columnOf(ResultsModel::ColumnKind::Objective));
    QCOMPARE(model.findColumn(QStringLiteral("nope")), -1);
}

void TestSession::modelUpdatesUnderTester() {
    ResultsModel model;
    ResultsProxyModel proxy;
    proxy.setResultsModel(&model);
    proxy.sort(model.columnCount() > 0 ? 0 : -1);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);

    std::vector<ResultRecord> all = smallSet();
    model.setResults(snapshotOf({all.begin(), all.begin() + 5}), kNames, "GB/s");
    QCOMPARE(resets.count(), 1);
    const int time = model.columnOf(ResultsModel::ColumnKind::Time);
    proxy.sort(time, Qt::AscendingOrder);
    proxy.setFilterExpression(QStringLiteral("status == ok"));

    // A live run: the next snapshot extends this one: rows are inserted, not reset.
    model.setResults(snapshotOf(all), kNames, "GB/s");
    QCOMPARE(resets.count(), 1);
    QCOMPARE(inserts.count(), 1);
    QCOMPARE(model.rowCount(), 12);
    QCOMPARE(proxy.rowCount(), 10);
    // Sorted by time across the inserted rows.
    double previous = -1;
    for (int r = 0; r < proxy.rowCount(); ++r) {
        const double t = proxy.data(proxy.index(r, time), ResultsModel::SortRole).toDouble();
        QVERIFY(t >= previous);
        previous = t;
    }

    // Another session's results with the same ids (not an extension: the ids' sessions differ).
    std::vector<ResultRecord> other = smallSet();
    for (ResultRecord& r : other)
        r.sessionId = 2;
    model.setResults(snapshotOf(other), kNames, "GB/s");
    QCOMPARE(resets.count(), 2);
    // Results without ids (a file) are never taken as an extension.
    std::vector<ResultRecord> noIds = smallSet();
    for (ResultRecord& r : noIds)
        r.id = 0;
    model.setResults(snapshotOf({noIds.begin(), noIds.begin() + 3}), kNames, "GB/s");
    model.setResults(snapshotOf(noIds), kNames, "GB/s");
    QCOMPARE(resets.count(), 4);

    // A large batch resets (one sort instead of thousands of scattered inserts).
    std::vector<ResultRecord> big;
    for (int i = 0; i < 2000; ++i)
        big.push_back(makeRecord(i + 1, i, i % 3 + 1, ResultStatus::Ok, 0.01 * (i % 97 + 1)));
    model.setResults(snapshotOf({big.begin(), big.begin() + 10}), kNames, "GB/s");
    const int resetsBefore = resets.count();
    model.setResults(snapshotOf(big), kNames, "GB/s");
    QCOMPARE(resets.count(), resetsBefore + 1);
    QCOMPARE(model.rowCount(), 2000);

    // New metric columns reset too.
    std::vector<ResultRecord> more = big;
    ResultRecord extra = makeRecord(5000, 1, 1, ResultStatus::Ok, 1.0);
    extra.measurement.metrics.push_back({"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", 12});
    more.push_back(extra);
    const int columns = model.columnCount();
    model.setResults(snapshotOf(more), kNames, "GB/s");
    QCOMPARE(model.columnCount(), columns + 1);

    model.clear();
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(proxy.rowCount(), 0);
}

void TestSession::modelFindsConfigs() {
    ResultsModel model;
    std::vector<ResultRecord> all = smallSet();
    model.setResults(snapshotOf({all.begin(), all.begin() + 6}), kNames, "");
    QCOMPARE(model.rowOfConfig(QStringLiteral(R"({"A":16,"B":2})")), 4);
    QCOMPARE(model.rowOfConfig(QStringLiteral(R"({"A":64,"B":3})")), -1);
    model.setResults(snapshotOf(all), kNames, ""); // inserted rows are indexed too
    QCOMPARE(model.rowOfConfig(QStringLiteral(R"({"A":64,"B":3})")), 11);
    QCOMPARE(model.recordAt(11)->config.at("A").asInt(), 64);
    QVERIFY(model.recordAt(12) == nullptr);
    // No objective of its own (a Kernel Tuner cache's "time"): the objective column shows the time.
    for (ResultRecord& r : all)
        r.objective.reset();
    model.setResults(snapshotOf(all), kNames, "");
    const int objective = model.columnOf(ResultsModel::ColumnKind::Objective);
    const int time = model.columnOf(ResultsModel::ColumnKind::Time);
    QCOMPARE(model.headerData(objective, Qt::Horizontal).toString(), QStringLiteral("objective: time (µs)"));
    int shown = 0;
    for (int row = 0; row < model.rowCount(); ++row) {
        const QString value = model.data(model.index(row, objective)).toString();
        QCOMPARE(value, model.recordAt(row)->ok() ? model.data(model.index(row, time)).toString() : QString());
        shown += !value.isEmpty();
    }
    QVERIFY(shown > 0);
}

void TestSession::filter_data() {
    QTest::addColumn<QString>("expression");
    QTest::addColumn<int>("rows");
    QTest::addColumn<bool>("error");
    QTest::newRow("none") << "" << 12 << false;
    QTest::newRow("regs > 128") << "regs > 128" << 3 << false;
    QTest::newRow("registers >= 255") << "registers >= 255" << 3 << false;
    QTest::newRow("status == ok") << "status == ok" << 10 << false;
    QTest::newRow("status != ok") << "status != ok" << 2 << false;
    QTest::newRow("Status=Crashed") << "Status=Crashed" << 1 << false;
    QTest::newRow("parameter") << "A == 16" << 3 << false;
    QTest::newRow("and") << "A <= 16 and B >= 2" << 4 << false;
    QTest::newRow("time") << "time < 1000" << 4 << false;
    QTest::newRow("spill") << "spill_st > 0" << 3 << false;
    QTest::newRow("metric key") << "dram_bytes_read >= 2000" << 6 << false;
    QTest::newRow("text") << "compile" << 1 << false;
    QTest::newRow("text any column") << "made by" << 2 << false;
    QTest::newRow("text and comparison") << "crashed and A == 32" << 1 << false;
    QTest::newRow("unknown column") << "regz > 128" << 0 << true;
    QTest::newRow("empty value is text") << "regs >" << 0 << false;
}

void TestSession::filter() {
    QFETCH(QString, expression);
    QFETCH(int, rows);
    QFETCH(bool, error);
    ResultsModel model;
    ResultsProxyModel proxy;
    proxy.setResultsModel(&model);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setResults(snapshotOf(smallSet()), kNames, "GB/s");
    proxy.setFilterExpression(expression);
    QCOMPARE(proxy.rowCount(), rows);
    QCOMPARE(!proxy.filterError().isEmpty(), error);
}

void TestSession::viewFilterBoxAndCsv() {
    ResultsView view;
    view.resize(900, 400);
    view.show();
    view.setResults(snapshotOf(smallSet()), kNames, "GB/s");
    QCOMPARE(view.visibleRowCount(), 12);

    // Typing filters after a pause.
    QTest::keyClicks(view.filterEdit(), QStringLiteral("regs > 128"));
    QTRY_COMPARE(view.visibleRowCount(), 3);
    view.setFilterText(QString());
    QCOMPARE(view.visibleRowCount(), 12);

    // CSV of everything shown: a header line and one line per row.
    view.setFilterText(QStringLiteral("status != ok"));
    QString csv = view.allCsv();
    QStringList lines = csv.split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    QVERIFY(lines[0].startsWith(QStringLiteral("A,B,status,time (µs),GB/s,regs")));
    QVERIFY(lines[1].startsWith(QStringLiteral("16,3,compile_error,,,")));
    QVERIFY(lines[1].endsWith(QStringLiteral("\"compile_error, made by the test\""))); // quoted: it has a comma

    // The selection only, by Ctrl+C and by the button.
    view.setFilterText(QString());
    const int time = view.model()->columnOf(ResultsModel::ColumnKind::Time);
    view.table()->sortByColumn(time, Qt::DescendingOrder);
    view.table()->selectRow(0);
    QApplication::clipboard()->clear();
    view.table()->setFocus();
    QTest::keyClick(view.table(), Qt::Key_C, Qt::ControlModifier);
    lines = QApplication::clipboard()->text().split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[1].startsWith(QStringLiteral("64,1,ok,6400,")), qPrintable(lines[1])); // the slowest
    QApplication::clipboard()->clear();
    view.table()->selectAll();
    QTest::mouseClick(view.copyButton(), Qt::LeftButton);
    QCOMPARE(QApplication::clipboard()->text().split(QStringLiteral("\r\n"), Qt::SkipEmptyParts).size(), 13);
}

void TestSession::viewSelection() {
    ResultsView view;
    view.resize(900, 400);
    view.show();
    QAbstractItemModelTester tester(view.proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    std::vector<ResultRecord> all = smallSet();
    view.setResults(snapshotOf({all.begin(), all.begin() + 8}), kNames, "GB/s");
    QSignalSpy selected(&view, &ResultsView::configSelected);

    // From elsewhere: selected without a signal.
    view.selectConfig(QStringLiteral(R"({"A":16,"B":2})"));
    QCOMPARE(view.currentConfig(), QStringLiteral(R"({"A":16,"B":2})"));
    QCOMPARE(selected.count(), 0);
    // By the user: a signal.
    view.table()->selectRow(0);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.last().at(0).toString(), view.currentConfig());

    // The selection survives a reset (a large batch) and an insert.
    view.selectConfig(QStringLiteral(R"({"A":16,"B":2})"));
    std::vector<ResultRecord> big = all;
    for (int i = 0; i < 1000; ++i)
        big.push_back(makeRecord(100 + i, 1000 + i, 1, ResultStatus::Ok, 1.0));
    view.setResults(snapshotOf(big), kNames, "GB/s");
    QCOMPARE(view.currentConfig(), QStringLiteral(R"({"A":16,"B":2})"));
    QCOMPARE(view.visibleRowCount(), 1012);
    // A config not shown clears the selection.
    view.setFilterText(QStringLiteral("A > 100"));
    view.selectConfig(QStringLiteral(R"({"A":16,"B":2})"));
    QVERIFY(view.currentConfig().isEmpty());
}

// ------------------------------------------------------------------------------ controller

void TestSession::controllerRunsReplay() {
    SessionController controller;
    QSignalSpy started(&controller, &SessionController::started);
    QSignalSpy snapshots(&controller, &SessionController::snapshot);
    QSignalSpy progressed(&controller, &SessionController::progressed);
    QSignalSpy bests(&controller, &SessionController::newBest);
    QSignalSpy finished(&controller, &SessionController::finished);
    QSignalSpy failed(&controller, &SessionController::failed);
    QSignalSpy running(&controller, &SessionController::runningChanged);
    const QString db = m_dir.filePath(QStringLiteral("replay.db"));

    QElapsedTimer clock;
    clock.start();
    controller.start(replayRequest(db));
    QVERIFY(controller.isRunning());
    QVERIFY(finished.wait(kTimeoutMs));
    const qint64 elapsedMs = clock.elapsed();
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
    QVERIFY(!controller.isRunning());
    QCOMPARE(running.count(), 2);

    QCOMPARE(started.count(), 1);
    QVERIFY(started.first().at(0).toString().contains(QStringLiteral("replay of")));
    QVERIFY(!snapshots.isEmpty());
    QVERIFY(!progressed.isEmpty());
    QVERIFY(!bests.isEmpty());
    // Coalesced: at most one snapshot per 100 ms, and the last before finished.
    QVERIFY2(snapshots.count() <= elapsedMs / 100 + 2,
             qPrintable(QStringLiteral("%1 snapshots in %2 ms").arg(snapshots.count()).arg(elapsedMs)));
    const auto last = snapshots.last().at(0).value<ResultsSnapshot>();
    QCOMPARE(last->size(), kDemoResults);
    QCOMPARE(controller.results()->size(), kDemoResults);

    const auto summary = finished.first().at(0).value<SessionSummary>();
    QCOMPARE(summary.session.state, SessionState::Finished);
    QCOMPARE(summary.progress.done, std::uint64_t(kDemoResults));
    QVERIFY(summary.progress.best);
    const ResultRecord& best = *summary.progress.best;
    QCOMPARE(QString::fromStdString(describeConfig(best.config)),
             QStringLiteral("BLOCK_M=256 BLOCK_N=64 BLOCK_K=8 THREAD_M=16 THREAD_N=8 VEC=2 STAGES=1"));
    QCOMPARE(QString::number(best.timeMs(), 'f', 4), QStringLiteral("0.3956"));
    QCOMPARE(bests.last().at(0).value<ResultRecord>().id, best.id);
    // The recording's best is the same config.
    const std::vector<SessionData> recorded = readRecording(kDemo.toStdString());
    const auto recordedBest = bestOf(recorded.front().results);
    QVERIFY(recordedBest);
    QCOMPARE(recordedBest->config, best.config);
    QCOMPARE(progressed.last().at(0).value<SessionProgress>().done, std::uint64_t(kDemoResults));

    QCOMPARE(controller.parameterNames().size(), std::size_t(7));
    QCOMPARE(controller.objectiveName(), std::string("TFLOP/s"));
    QCOMPARE(controller.arch(), std::string("sm_90"));
    QCOMPARE(controller.session().state, SessionState::Finished);

    // Stored, on the worker thread's own connection.
    const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
    QCOMPARE(store.resultCount(summary.session.id), std::uint64_t(kDemoResults));
    QCOMPARE(store.session(summary.session.id)->state, SessionState::Finished);
}

// "Resume the matching session" with none in the database: the run starts a new session, and its
// log says so and why.
void TestSession::controllerSaysWhenNothingResumes() {
    SessionController controller;
    QSignalSpy finished(&controller, &SessionController::finished);
    QSignalSpy log(&controller, &SessionController::logEntry);
    SessionController::Request request = replayRequest(m_dir.filePath(QStringLiteral("nothing-to-resume.db")));
    request.options.resume = true;
    controller.start(request);
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY(!finished.first().at(0).value<SessionSummary>().resumed);
    QString note;
    for (const QList<QVariant>& entry : log) {
        const auto e = entry.at(0).value<RunLogEntry>();
        if (e.kind == RunLogEntry::Kind::Note && e.text.startsWith(QStringLiteral("Resume: ")))
            note = e.text;
    }
    QVERIFY2(note.contains(QStringLiteral("holds no session of this tuning to continue")) &&
                 note.endsWith(QStringLiteral("this run starts session 1")),
             qPrintable(note));
}

void TestSession::controllerCancelsAndResumes() {
    SessionController controller;
    QSignalSpy finished(&controller, &SessionController::finished);
    QSignalSpy progressed(&controller, &SessionController::progressed);
    const QString db = m_dir.filePath(QStringLiteral("cancel.db"));

    controller.start(replayRequest(db, std::chrono::milliseconds(2)));
    QTRY_VERIFY_WITH_TIMEOUT(!progressed.isEmpty() && progressed.last().at(0).value<SessionProgress>().done >= 50,
                             kTimeoutMs);
    controller.cancel();
    QVERIFY(finished.wait(kTimeoutMs));
    const auto summary = finished.first().at(0).value<SessionSummary>();
    QCOMPARE(summary.session.state, SessionState::Cancelled);
    const std::uint64_t done = summary.progress.done;
    QVERIFY2(done >= 50 && done < kDemoResults, qPrintable(QString::number(done)));
    QCOMPARE(controller.results()->size(), std::size_t(done));
    {
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        QCOMPARE(store.session(summary.session.id)->state, SessionState::Cancelled);
        QCOMPARE(store.resultCount(summary.session.id), done);
    }

    // Resumed: the snapshot holds the earlier results too, once each.
    SessionController::Request resume = replayRequest(db);
    resume.options.resume = true;
    controller.start(resume);
    QVERIFY(finished.wait(kTimeoutMs));
    const auto resumed = finished.last().at(0).value<SessionSummary>();
    QVERIFY(resumed.resumed);
    QCOMPARE(resumed.session.id, summary.session.id);
    QCOMPARE(resumed.priorResults, done);
    QCOMPARE(resumed.session.state, SessionState::Finished);
    QCOMPARE(controller.results()->size(), kDemoResults);
    std::set<std::string> keys;
    for (const ResultRecord& r : *controller.results())
        keys.insert(configKey(r.config));
    QCOMPARE(keys.size(), kDemoResults);

    // The destructor cancels and joins a run in flight.
    {
        SessionController doomed;
        QSignalSpy doomedProgress(&doomed, &SessionController::progressed);
        doomed.start(replayRequest(m_dir.filePath(QStringLiteral("doomed.db")), std::chrono::milliseconds(2)));
        QTRY_VERIFY_WITH_TIMEOUT(!doomedProgress.isEmpty(), kTimeoutMs);
    }
    const ResultStore store =
        ResultStore::open(m_dir.filePath(QStringLiteral("doomed.db")).toStdString(), StoreMode::ReadOnly);
    QCOMPARE(store.sessions().size(), std::size_t(1));
    QCOMPARE(store.sessions().front().state, SessionState::Cancelled);
}

void TestSession::controllerOpensRecording() {
    SessionController controller;
    QSignalSpy snapshots(&controller, &SessionController::snapshot);
    QSignalSpy loaded(&controller, &SessionController::loaded);
    QSignalSpy failed(&controller, &SessionController::failed);
    controller.openRecording(kDemo);
    QVERIFY(controller.isLoading());
    QVERIFY(loaded.wait(kTimeoutMs));
    QVERIFY(!controller.isLoading());
    QCOMPARE(snapshots.count(), 1);
    QCOMPARE(snapshots.first().at(0).value<ResultsSnapshot>()->size(), kDemoResults);
    QCOMPARE(controller.results()->size(), kDemoResults);
    const QString description = loaded.first().at(0).toString();
    QVERIFY2(description.contains(QStringLiteral("T4")) && description.contains(QStringLiteral("2,761 results")),
             qPrintable(description));
    QCOMPARE(controller.parameterNames().front(), std::string("BLOCK_M"));
    QCOMPARE(controller.objectiveName(), std::string("TFLOP/s"));
    QCOMPARE(controller.arch(), std::string("sm_90"));

    // A database: its newest session with results.
    SessionController runner;
    QSignalSpy runFinished(&runner, &SessionController::finished);
    SessionController::Request r = replayRequest(m_dir.filePath(QStringLiteral("open.db")));
    r.options.budget.configs = 100;
    runner.start(r);
    QVERIFY(runFinished.wait(kTimeoutMs));
    controller.openRecording(m_dir.filePath(QStringLiteral("open.db")));
    QVERIFY(loaded.wait(kTimeoutMs));
    QCOMPARE(controller.results()->size(), std::size_t(100));

    // Not a recording.
    controller.openRecording(kSgemm);
    QVERIFY(failed.wait(kTimeoutMs));
    QCOMPARE(controller.results()->size(), std::size_t(100)); // the results shown stay
}

void TestSession::controllerReportsErrors() {
    SessionController controller;
    QSignalSpy failed(&controller, &SessionController::failed);
    QSignalSpy log(&controller, &SessionController::logEntry);
    QSignalSpy finished(&controller, &SessionController::finished);

    // The recording is of shape 1.
    SessionController::Request wrongShape = replayRequest(m_dir.filePath(QStringLiteral("errors.db")));
    wrongShape.options.shapeIndex = 0;
    controller.start(wrongShape);
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY2(failed.last().at(0).toString().contains(QStringLiteral("does not match")),
             qPrintable(failed.last().at(0).toString()));
    QVERIFY(!controller.isRunning());
    QVERIFY(!log.isEmpty());
    QCOMPARE(log.last().at(0).value<RunLogEntry>().kind, RunLogEntry::Kind::Error);

    // No GPU here: the CUDA backend cannot start a worker.
    SessionController::Request cuda = replayRequest(m_dir.filePath(QStringLiteral("errors.db")));
    cuda.backend = QStringLiteral("cuda:0");
    controller.start(cuda);
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY2(failed.last().at(0).toString().contains(QStringLiteral("GPU")),
             qPrintable(failed.last().at(0).toString()));

    // A bad backend, an unknown arch, a database that cannot be created.
    SessionController::Request bad = replayRequest(m_dir.filePath(QStringLiteral("errors.db")));
    bad.backend = QStringLiteral("opencl");
    controller.start(bad);
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY(failed.last().at(0).toString().contains(QStringLiteral("unknown backend")));
    bad.backend = QStringLiteral("analysis:sm_42");
    controller.start(bad);
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY2(failed.last().at(0).toString().contains(QStringLiteral("sm_42")),
             qPrintable(failed.last().at(0).toString()));
    SessionController::Request noDb = replayRequest(QStringLiteral("/proc/no/such/folder/results.db"));
    controller.start(noDb);
    QVERIFY(failed.wait(kTimeoutMs));
    QCOMPARE(finished.count(), 0);

    // A second start while running is ignored with a note.
    controller.start(replayRequest(m_dir.filePath(QStringLiteral("errors2.db")), std::chrono::milliseconds(1)));
    const int before = log.count();
    controller.start(replayRequest(m_dir.filePath(QStringLiteral("errors3.db"))));
    QVERIFY(log.count() > before);
    // Cancelled while the recording is read, the run ends before its session starts: failed, nothing
    // stored in its database (errors2.db); the ignored start wrote nothing either (errors3.db).
    controller.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!controller.isRunning(), kTimeoutMs);
    QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("errors3.db"))));
    const QString cancelledDb = m_dir.filePath(QStringLiteral("errors2.db"));
    if (finished.isEmpty()) {
        // The usual case: the cancel follows the start at once, long before the recording is read.
        QVERIFY2(failed.last().at(0).toString().contains(QStringLiteral("cancelled before the session started")),
                 qPrintable(failed.last().at(0).toString()));
        QVERIFY2(!QFileInfo::exists(cancelledDb), "a run cancelled before its session started created its database");
    } else {
        // The worker thread got past the read first: then the session is stored, as cancelled.
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.last().at(0).value<SessionSummary>().session.state, SessionState::Cancelled);
        const ResultStore store = ResultStore::open(cancelledDb.toStdString(), StoreMode::ReadOnly);
        QCOMPARE(store.sessions().size(), std::size_t(1));
        QCOMPARE(store.sessions().front().state, SessionState::Cancelled);
    }
}

void TestSession::runPanelOffersRemoteGpus() {
    // "GPUs of another machine (ssh)": the panel asks for user@host/devices and starts the run on
    // ssh://; here a launcher that fails at once (TILESCOPE_SSH=false) shows that the workers
    // are started through it, and the run fails with what it said.
    SessionController controller;
    RunPanel panel(&controller);
    panel.setProblem(std::make_shared<const TuningProblem>(TuningProblem::load(kSgemm.toStdString())), kSgemm);
    panel.setDatabasePath(m_dir.filePath(QStringLiteral("remote.db")));
    const int ssh = panel.backendCombo()->findData(QStringLiteral("ssh"));
    QVERIFY(ssh >= 0);
    panel.backendCombo()->setCurrentIndex(ssh);
    QVERIFY(panel.remoteEdit()->isEnabled());
    QString why;
    QVERIFY(!panel.request(&why));
    QVERIFY2(why.contains(QStringLiteral("user@host")), qPrintable(why));
    panel.remoteEdit()->setText(QStringLiteral(" tuner@gpu-box/0 "));
    QCOMPARE(panel.backendSpec(), QStringLiteral("ssh://tuner@gpu-box/0"));
    const auto request = panel.request(&why);
    QVERIFY2(request, qPrintable(why));
    QVERIFY(!request->metrics.empty()); // counters are read on the far side too

    QSignalSpy failed(&controller, &SessionController::failed);
    qputenv("TILESCOPE_SSH", "false");
    controller.start(*request);
    const bool gotFailure = failed.wait(kTimeoutMs);
    qunsetenv("TILESCOPE_SSH");
    QVERIFY(gotFailure);
    QVERIFY2(failed.last().at(0).toString().contains(QStringLiteral("before its hello")),
             qPrintable(failed.last().at(0).toString()));
}

void TestSession::controllerSaysWhyConfigsDoNotRank() {
    // A recording of the tiny problem on an H200 in which two configs claim less time than their
    // 4 MiB output takes to write: the run log names each and sums them up at the end.
    nlohmann::ordered_json cache =
        nlohmann::ordered_json::parse(readText(QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny_ktcache.json")));
    int faked = 0;
    for (auto it = cache["cache"].begin(); it != cache["cache"].end() && faked < 2; ++it)
        if (it.value()["time"].is_number()) {
            it.value()["time"] = 0.0002;
            it.value()["times"] = {0.0002, 0.0002, 0.0002};
            ++faked;
        }
    const QString recording = m_dir.filePath(QStringLiteral("fast.json"));
    std::ofstream(recording.toStdString()) << cache.dump();
    SessionController controller;
    QSignalSpy finished(&controller, &SessionController::finished);
    QSignalSpy log(&controller, &SessionController::logEntry);
    SessionController::Request r;
    r.problem =
        std::make_shared<const TuningProblem>(TuningProblem::load(TILESCOPE_SOURCE_DIR "/tests/data/tuning/tiny.json"));
    r.backend = QStringLiteral("replay:") + recording;
    r.databasePath = m_dir.filePath(QStringLiteral("fast.db"));
    controller.start(r);
    QVERIFY(finished.wait(kTimeoutMs));
    const auto summary = finished.first().at(0).value<SessionSummary>();
    QCOMPARE(summary.progress.counts.of(ResultStatus::Implausible), std::uint64_t(2));
    QStringList failures;
    QString note;
    for (const QList<QVariant>& entry : log) {
        const auto e = entry.at(0).value<RunLogEntry>();
        if (e.kind == RunLogEntry::Kind::ConfigFailure && e.text.startsWith(QStringLiteral("implausible: ")))
            failures << e.text;
        if (e.kind == RunLogEntry::Kind::Note && e.text.startsWith(QStringLiteral("Implausible: ")))
            note = e.text;
    }
    QCOMPARE(failures.size(), 2);
    QVERIFY2(failures.first().contains(QStringLiteral("0.0002 ms is below 0.0004369 ms")),
             qPrintable(failures.first()));
    QVERIFY2(note.startsWith(QStringLiteral("Implausible: 2 configs ran faster than physics allows")),
             qPrintable(note));
    // The results table shows the status, its tooltip why.
    ResultsModel model;
    model.setResults(controller.results(), controller.parameterNames(), controller.objectiveName());
    int shown = 0;
    for (int row = 0; row < model.rowCount(); ++row)
        for (int column = 0; column < model.columnCount(); ++column)
            if (model.data(model.index(row, column)).toString() == QStringLiteral("implausible")) {
                ++shown;
                QVERIFY(model.data(model.index(row, column), Qt::ToolTipRole)
                            .toString()
                            .contains(QStringLiteral("a kernel that returns early or writes nothing")));
            }
    QCOMPARE(shown, 2);
}

void TestSession::analysisSession() {
    // Two configs of a small kernel, one of which does not compile: compiled for sm_90, nothing measured.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile source(kTinyKernel);
    QVERIFY(source.open(QIODevice::ReadOnly));
    QFile kernel(dir.filePath(QStringLiteral("tiny.cu")));
    QVERIFY(kernel.open(QIODevice::WriteOnly));
    kernel.write("#if BLOCK > 512\n#error \"BLOCK too large for this test\"\n#endif\n" + source.readAll());
    kernel.close();
    const std::string problemText = R"({
        "General": {"FormatVersion": 1},
        "ConfigurationSpace": {
            "TuningParameters": [
                {"Name": "BLOCK", "Type": "int", "Values": "[128, 1024]"},
                {"Name": "ITEMS", "Type": "int", "Values": "[1]"},
                {"Name": "NUM_STAGES", "Type": "int", "Values": "[1]"}
            ],
            "Conditions": []
        },
        "KernelSpecification": {
            "Language": "CUDA", "KernelName": "scale", "KernelFile": "tiny.cu",
            "GlobalSizeType": "CUDA", "GlobalSize": {"X": "N // BLOCK"}, "LocalSize": {"X": "BLOCK"},
            "ProblemSize": ["N"],
            "Arguments": [
                {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "N"},
                {"Name": "a", "Type": "float", "MemoryType": "Scalar", "FillValue": 2.0},
                {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "N"},
                {"Name": "y", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N"}
            ]
        },
        "Tilescope": {"Shapes": [{"N": 4096}]}
    })";
    const auto problem = std::make_shared<const TuningProblem>(TuningProblem::parse(
        problemText, dir.filePath(QStringLiteral("tiny.json")).toStdString(), dir.path().toStdString()));

    SessionController controller;
    RunPanel panel(&controller);
    panel.setProblem(problem, dir.filePath(QStringLiteral("tiny.json")));
    panel.setDatabasePath(dir.filePath(QStringLiteral("analysis.db")));
    QVERIFY(panel.setAnalysisArch(QStringLiteral("sm_90")));
    QCOMPARE(panel.backendSpec(), QStringLiteral("analysis:sm_90"));
    QSignalSpy finished(&controller, &SessionController::finished);
    QSignalSpy failed(&controller, &SessionController::failed);
    QSignalSpy log(&controller, &SessionController::logEntry);
    panel.show();
    QVERIFY(panel.startButton()->isEnabled());
    QTest::mouseClick(panel.startButton(), Qt::LeftButton);
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY(failed.isEmpty());

    const auto summary = finished.first().at(0).value<SessionSummary>();
    QCOMPARE(QString::fromStdString(summary.session.backend), QStringLiteral("analysis:sm_90"));
    QCOMPARE(summary.session.arch, std::string("sm_90"));
    QCOMPARE(summary.progress.counts.of(ResultStatus::Analysed), std::uint64_t(1));
    QCOMPARE(summary.progress.counts.of(ResultStatus::CompileError), std::uint64_t(1));
    QCOMPARE(summary.progress.counts.of(ResultStatus::Pruned), std::uint64_t(0));
    // Nothing was timed: the best is the config analysed, by what compiling told, and the panel says so.
    QVERIFY(summary.progress.best);
    QCOMPARE(summary.progress.best->config.at("BLOCK").asInt(), 128);
    QTRY_VERIFY2(panel.progressLabel()->text().contains(QStringLiteral("(not timed)")),
                 qPrintable(panel.progressLabel()->text()));
    const ResultsSnapshot results = controller.results();
    QCOMPARE(results->size(), std::size_t(2));
    for (const ResultRecord& r : *results) {
        if (r.status() == ResultStatus::Analysed) {
            QCOMPARE(r.config.at("BLOCK").asInt(), 128);
            QCOMPARE(r.measurement.message, AnalysisBackend::notMeasuredMessage("sm_90"));
            QVERIFY(r.measurement.staticInfo && r.measurement.staticInfo->registers > 0);
            QVERIFY(r.occupancy && *r.occupancy > 0);
            QCOMPARE(r.measurement.time.samples, 0);
        } else {
            QCOMPARE(r.status(), ResultStatus::CompileError);
            QVERIFY(QString::fromStdString(r.log).contains(QStringLiteral("BLOCK too large for this test")));
        }
    }

    // The compile error is in the run log; double-clicking it shows NVRTC's log.
    int row = -1;
    for (int i = 0; i < panel.logList()->count(); ++i)
        if (panel.logList()->item(i)->text().startsWith(QStringLiteral("compile error:")))
            row = i;
    QVERIFY(row >= 0);
    QListWidgetItem* item = panel.logList()->item(row);
    panel.logList()->scrollToItem(item);
    const QPoint centre = panel.logList()->visualItemRect(item).center();
    QTest::mouseClick(panel.logList()->viewport(), Qt::LeftButton, {}, centre);
    QTest::mouseDClick(panel.logList()->viewport(), Qt::LeftButton, {}, centre);
    QDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = panel.findChild<QDialog*>()) != nullptr);
    auto* text = dialog->findChild<QPlainTextEdit*>(QStringLiteral("logText"));
    QVERIFY(text);
    QVERIFY(text->toPlainText().contains(QStringLiteral("BLOCK too large for this test")));
    dialog->close();
    // A note has no details.
    QCOMPARE(panel.showLogDetails(0), nullptr);
}

// ------------------------------------------------------------------------------ details

void TestSession::detailsPanel() {
    SessionController controller;
    QSignalSpy loaded(&controller, &SessionController::loaded);
    controller.openRecording(kDemo);
    QVERIFY(loaded.wait(kTimeoutMs));
    const ResultsSnapshot results = controller.results();

    ConfigDetailsPanel panel;
    panel.resize(600, 800);
    panel.show();
    QVERIFY(panel.plainText().contains(QStringLiteral("Select a config")));
    panel.setObjectiveName(controller.objectiveName());
    panel.setContext(results, controller.parameterNames(), loadSgemm(), controller.arch(), 1);

    // The best config: timing, what ptxas said, the occupancy and its limiter, the metrics.
    const auto best = bestOf(*results);
    QVERIFY(best);
    panel.showConfig(QString::fromStdString(configJson(best->config)));
    QVERIFY(panel.shownRecord());
    QString text = panel.plainText();
    QVERIFY2(text.contains(QStringLiteral("registers / thread")) &&
                 text.contains(QString::number(best->measurement.staticInfo->registers)),
             qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("median time")));
    QVERIFY(text.contains(QStringLiteral("TFLOP/s")));
    QVERIFY(text.contains(QStringLiteral("limited by")));
    QVERIFY(text.contains(QStringLiteral("achieved occupancy %")));
    QVERIFY(panel.spillDiagnosisText().contains(QStringLiteral("No register spilling")));

    // A heavily spilling config: the diagnosis in words, then the rule learnt from all results.
    const ResultRecord* heavy = nullptr;
    for (const ResultRecord* r : spilling(*results))
        if (!heavy || r->measurement.staticInfo->spillStores > heavy->measurement.staticInfo->spillStores)
            heavy = r;
    QVERIFY(heavy);
    QSignalSpy ruleReady(&panel, &ConfigDetailsPanel::ruleReady);
    QElapsedTimer clock;
    clock.start();
    panel.showConfig(QString::fromStdString(configJson(heavy->config)));
    QString diagnosis = panel.spillDiagnosisText();
    QVERIFY2(diagnosis.contains(QStringLiteral("Spills registers")) &&
                 diagnosis.contains(QStringLiteral("heavy spill")),
             qPrintable(diagnosis));
    QVERIFY2(diagnosis.contains(QStringLiteral("Theoretical occupancy on sm_90")) &&
                 diagnosis.contains(QStringLiteral("limited by")),
             qPrintable(diagnosis));
    QVERIFY(diagnosis.contains(QStringLiteral("local-load")));
    QVERIFY(ruleReady.wait(kTimeoutMs));
    qInfo("rule learnt from %zu results in %lld ms", results->size(), static_cast<long long>(clock.elapsed()));
    QVERIFY(panel.rule() && panel.rule()->found);
    QCOMPARE(panel.rule()->learntFrom, kDemoResults);
    QVERIFY(panel.rule()->prunedInSpace);
    diagnosis = panel.spillDiagnosisText();
    QVERIFY2(diagnosis.contains(QStringLiteral("Register-pressure rule")) &&
                 diagnosis.contains(QString::fromStdString(panel.rule()->best.condition)) &&
                 diagnosis.contains(QStringLiteral("over the whole space it prunes")),
             qPrintable(diagnosis));
    QVERIFY(diagnosis.contains(QStringLiteral("this config")));

    // A spilling config that was not profiled (it did not rank when measured): the diagnosis says
    // why its traffic is unknown and how to have it.
    auto unprofiled = std::make_shared<std::vector<ResultRecord>>(*results);
    for (ResultRecord& r : *unprofiled)
        if (r.id == heavy->id)
            r.measurement.metrics.clear();
    panel.setContext(unprofiled, controller.parameterNames(), loadSgemm(), controller.arch(), 1);
    panel.showConfig(QString::fromStdString(configJson(heavy->config)));
    diagnosis = panel.spillDiagnosisText();
    QVERIFY2(diagnosis.contains(QStringLiteral("No CUPTI counters for this config")) &&
                 diagnosis.contains(QStringLiteral("all-configs")) && !diagnosis.contains(QStringLiteral("local-load")),
             qPrintable(diagnosis));

    // Without the problem: no rule, occupancy from the record alone.
    panel.setContext(results, controller.parameterNames(), nullptr, "", 1);
    panel.showConfig(QString::fromStdString(configJson(heavy->config)));
    QVERIFY(!panel.rule());
    QVERIFY(panel.spillDiagnosisText().contains(QStringLiteral("Spills registers")));
    panel.showConfig(QStringLiteral(R"({"BLOCK_M":1})"));
    QVERIFY(panel.plainText().contains(QStringLiteral("No result")));
    panel.showConfig({});
    QVERIFY(panel.spillDiagnosisText().isEmpty());
}

// ------------------------------------------------------------------------------ run panel

void TestSession::runPanelWithoutDriver() {
    if (!probeLocalGpus().empty())
        QSKIP("this machine has an NVIDIA driver");
    SessionController controller;
    RunPanel panel(&controller);
    panel.show();
    QVERIFY(!panel.cudaAvailable());
    QVERIFY(panel.driverLabel()->text().contains(QStringLiteral("No NVIDIA driver found: replay a recording or "
                                                                "analyse offline")));
    // The CUDA entry is there but cannot be chosen; replay is preselected.
    const int cuda = panel.backendCombo()->findData(QStringLiteral("cuda"));
    QVERIFY(cuda >= 0);
    auto* model = qobject_cast<QStandardItemModel*>(panel.backendCombo()->model());
    QVERIFY(model && !model->item(cuda)->isEnabled());
    QCOMPARE(panel.backendCombo()->currentData().toString(), QStringLiteral("replay"));
    QVERIFY(!panel.metricsBox()->isEnabled());
    // Nothing to start without a problem and a recording.
    QVERIFY(!panel.startButton()->isEnabled());
    panel.setProblem(loadSgemm(), kSgemm);
    QVERIFY(!panel.startButton()->isEnabled());
    QString why;
    QVERIFY(!panel.request(&why));
    QVERIFY(why.contains(QStringLiteral("recording")));
    panel.setReplayRecording(kDemo);
    QVERIFY(panel.startButton()->isEnabled());
    QCOMPARE(panel.shapeCombo()->count(), 2);
}

void TestSession::runPanelListsGpus() {
    QTemporaryDir root;
    QVERIFY(root.isValid());
    for (const char* bus : {"0000:c1:00.0", "0000:19:00.0"}) {
        QVERIFY(QDir(root.path()).mkpath(QString::fromLatin1(bus)));
        QFile info(root.filePath(QString::fromLatin1(bus) + QStringLiteral("/information")));
        QVERIFY(info.open(QIODevice::WriteOnly));
        info.write("Model: \t\t NVIDIA H200\nIRQ:   42\nBus Location: ...\n");
    }
    const std::vector<LocalGpu> gpus = probeLocalGpus(root.path());
    QCOMPARE(gpus.size(), std::size_t(2));
    QCOMPARE(gpus[0].busId, QStringLiteral("0000:19:00.0"));
    QCOMPARE(gpus[0].name, QStringLiteral("NVIDIA H200"));
    QCOMPARE(gpus[1].ordinal, 1);

    SessionController controller;
    RunPanel panel(&controller);
    panel.setLocalGpus(gpus);
    QVERIFY(panel.cudaAvailable());
    QCOMPARE(panel.backendCombo()->currentData().toString(), QStringLiteral("cuda:0"));
    QVERIFY(panel.backendCombo()->currentText().contains(QStringLiteral("CUDA device 0")));
    QVERIFY(panel.backendCombo()->findData(QStringLiteral("cuda:0,1")) >= 0);
    QVERIFY(panel.metricsBox()->isEnabled());
    panel.setProblem(loadSgemm(), kSgemm);
    panel.metricsBox()->setChecked(true);
    const auto request = panel.request();
    QVERIFY(request);
    QCOMPARE(request->backend, QStringLiteral("cuda:0"));
    QCOMPARE(request->metrics.size(), std::size_t(7)); // the default set
    QVERIFY(panel.metricsBox()->toolTip().contains(QStringLiteral("best five")));
    // A problem that asks for every config's counters keeps asking through the panel.
    auto everyConfig = std::make_shared<TuningProblem>(*loadSgemm());
    everyConfig->metrics = {"default", "all-configs"};
    panel.setProblem(everyConfig, kSgemm);
    panel.metricsBox()->setChecked(true);
    const auto every = panel.request();
    QVERIFY(every);
    QCOMPARE(every->metrics.size(), std::size_t(8));
    QVERIFY(wantsEveryConfigProfiled(every->metrics));
    QVERIFY(panel.metricsBox()->toolTip().contains(QStringLiteral("for every config")));
}

void TestSession::runPanelRunsReplay() {
    SessionController controller;
    RunPanel panel(&controller);
    panel.show();
    panel.setProblem(loadSgemm(), kSgemm);
    panel.setDatabasePath(m_dir.filePath(QStringLiteral("panel.db")));
    panel.setReplayRecording(kDemo);
    panel.shapeCombo()->setCurrentIndex(1);
    panel.budgetKindCombo()->setCurrentIndex(panel.budgetKindCombo()->findData(1)); // configs
    panel.budgetValueSpin()->setValue(500);
    QSignalSpy finished(&controller, &SessionController::finished);
    QTest::mouseClick(panel.startButton(), Qt::LeftButton);
    QVERIFY(!panel.startButton()->isEnabled());
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY(panel.startButton()->isEnabled());
    QVERIFY(!panel.cancelButton()->isEnabled());
    QCOMPARE(panel.progressBar()->maximum(), 500);
    QCOMPARE(panel.progressBar()->value(), 500);
    QVERIFY2(panel.progressLabel()->text().contains(QStringLiteral("best")), qPrintable(panel.progressLabel()->text()));
    QVERIFY(panel.logList()->count() >= 2); // started, finished
    QVERIFY(panel.logList()->item(panel.logList()->count() - 1)->text().contains(QStringLiteral("finished")));
}

// The Run panel starts on the strategy the CLI would take (defaultStrategy): sgemm has no Search
// and no Budget, so exhaustive; a problem with a ConfigurationCount budget, auto; one naming
// Kernel Tuner's strategy, that one.
void TestSession::runPanelTakesTheDefaultStrategy() {
    SessionController controller;
    RunPanel panel(&controller);
    auto strategyFor = [&](const std::string& patch) {
        nlohmann::ordered_json doc = nlohmann::ordered_json::parse(readText(kSgemm));
        doc.merge_patch(nlohmann::ordered_json::parse(patch));
        auto problem = std::make_shared<const TuningProblem>(
            TuningProblem::parse(doc.dump(), "p.json", std::filesystem::path(kSgemm.toStdString()).parent_path()));
        panel.setProblem(problem, kSgemm);
        return panel.strategyCombo()->currentData().toString().toStdString();
    };
    QCOMPARE(strategyFor("{}"), std::string("exhaustive"));
    QCOMPARE(strategyFor(R"({"Budget": [{"Type": "ConfigurationCount", "BudgetValue": 50}]})"), autoStrategyName());
    QCOMPARE(strategyFor(R"({"Search": {"Name": "simulated_annealing"}})"), std::string("annealing"));
}

// The Run panel tunes a shape set as `tune --shapes` does (core/tuner/shapesetrun.h), on the
// controller's worker thread: the gemv recorded at four shapes, replayed at shapes 0 and 1 (both
// M = 1, so the second search starts from the first one's winners), into one database; at the end
// the controller holds the set's sessions for the Shapes panel, as if the database were opened.
void TestSession::runPanelRunsShapeSet() {
    SessionController controller;
    RunPanel panel(&controller);
    panel.show();
    panel.setProblem(std::make_shared<const TuningProblem>(TuningProblem::load(kGemv.toStdString())), kGemv);
    const QString db = m_dir.filePath(QStringLiteral("shapeset.db"));
    panel.setDatabasePath(db);
    panel.setReplayRecording(kGemvShapes);
    panel.strategyCombo()->setCurrentIndex(panel.strategyCombo()->findData(QStringLiteral("random")));
    panel.budgetKindCombo()->setCurrentIndex(panel.budgetKindCombo()->findData(1)); // configs
    panel.budgetValueSpin()->setValue(12);
    QVERIFY(!panel.shapeListEdit()->isEnabled());
    QVERIFY(!panel.crossEvalSpin()->isEnabled());

    // A list that names a shape the problem lacks does not start.
    panel.shapeSetCombo()->setCurrentIndex(2); // these shapes
    QVERIFY(panel.shapeListEdit()->isEnabled());
    QVERIFY(panel.crossEvalSpin()->isEnabled());
    panel.shapeListEdit()->setText(QStringLiteral("0,9"));
    QString why;
    QVERIFY(!panel.request(&why));
    QVERIFY2(why.contains(QStringLiteral("shape 9 does not exist (the problem has 4 shapes: 0 to 3)")),
             qPrintable(why));
    panel.shapeSetCombo()->setCurrentIndex(1); // all shapes
    QCOMPARE(panel.request()->shapeSet.shapes, (std::vector<std::size_t>{0, 1, 2, 3}));
    panel.shapeSetCombo()->setCurrentIndex(2);
    panel.shapeListEdit()->setText(QStringLiteral("0, 1"));
    const auto request = panel.request();
    QVERIFY(request);
    QCOMPARE(request->shapeSet.shapes, (std::vector<std::size_t>{0, 1}));

    QSignalSpy started(&controller, &SessionController::started);
    QSignalSpy finished(&controller, &SessionController::finished);
    QSignalSpy failed(&controller, &SessionController::failed);
    QSignalSpy sets(&controller, &SessionController::recordingSessions);
    QTest::mouseClick(panel.startButton(), Qt::LeftButton);
    QVERIFY(!panel.shapeSetCombo()->isEnabled());
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
    QCOMPARE(finished.count(), 1);
    QCOMPARE(started.count(), 2); // one session per shape, each replacing the results on screen
    QVERIFY(panel.startButton()->isEnabled());
    QVERIFY(panel.shapeSetCombo()->isEnabled());

    // One database, a session per shape; the second search opened with the first one's best.
    const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
    const std::vector<SessionInfo> sessions = store.sessions();
    QCOMPARE(sessions.size(), std::size_t(2));
    QCOMPARE(sessions[0].shapeIndex.value_or(-1), std::int64_t(0));
    QCOMPARE(sessions[1].shapeIndex.value_or(-1), std::int64_t(1));
    const std::vector<ResultRecord> first = ranked(store.results(sessions[0].id));
    const std::vector<ResultRecord> second = store.results(sessions[1].id);
    QCOMPARE(first.size(), std::size_t(12));
    QCOMPARE(second.size(), std::size_t(12));
    QCOMPARE(configKey(second.front().config), configKey(first.front().config));
    QCOMPARE(finished.first().at(0).value<SessionSummary>().session.id, sessions[1].id);
    QCOMPARE(controller.results()->size(), std::size_t(12)); // the last session's

    // The run log says what the set did and what it says.
    QStringList log;
    for (int i = 0; i < panel.logList()->count(); ++i)
        log << panel.logList()->item(i)->text();
    QVERIFY2(log.filter(QStringLiteral("Shape 2 of 2: the search starts from 3 winners")).size() == 1,
             qPrintable(log.join('\n')));
    QVERIFY2(log.filter(QStringLiteral("Shape set: 2 shapes in")).size() == 1, qPrintable(log.join('\n')));
    // In the order it happened, however fast: the note on shape 2, then its session.
    const qsizetype note = log.indexOf(QRegularExpression(QStringLiteral("Shape 2 of 2: .*")));
    const qsizetype start =
        log.indexOf(QRegularExpression(QStringLiteral("Session %1: gemv, shape 1 .*").arg(sessions[1].id)));
    QVERIFY2(note >= 0 && start > note, qPrintable(log.join('\n')));

    // The set, browsable shape by shape as an opened database is.
    QCOMPARE(sets.count(), 2); // none when the run started, the set when it ended
    const auto set = sets.last().at(0).value<std::shared_ptr<const std::vector<SessionData>>>();
    QVERIFY(set);
    QCOMPARE(set->size(), std::size_t(2));
    QCOMPARE(set->front().info.id, sessions[0].id);
    QCOMPARE(set->front().info.parameters.size(), std::size_t(5));
    QSignalSpy loaded(&controller, &SessionController::loaded);
    QVERIFY(controller.showSession(sessions[0].id));
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(controller.session().id, sessions[0].id);
    QCOMPARE(controller.results()->size(), std::size_t(12));
}

// ------------------------------------------------------------------------------ many results
// How long these take (and the GUI thread's stalls during a live replay) is measured by the
// benchmarks: tests/bench/views/bench_results and bench_gui.

void TestSession::liveReplayFeedsEveryView() {
    // A full-speed replay whose snapshots go to the results table (sorted by time), a heatmap and
    // the details panel, as the workbench wires them: each ends with every result.
    SessionController controller;
    ResultsView view;
    HeatmapWidget heatmap;
    ConfigDetailsPanel details;
    view.resize(1000, 500);
    heatmap.resize(700, 500);
    view.show();
    heatmap.show();
    details.show();
    const auto problem = loadSgemm();
    int snapshots = 0;
    connect(&controller, &SessionController::snapshot, this, [&](ResultsSnapshot results) {
        ++snapshots;
        view.setResults(results, controller.parameterNames(), controller.objectiveName());
        if (snapshots == 1) // the columns are known once results come: sorted by time from then on
            view.table()->sortByColumn(view.model()->columnOf(ResultsModel::ColumnKind::Time), Qt::AscendingOrder);
        heatmap.setResults(results, controller.parameterNames(), controller.objectiveName());
        details.setContext(results, controller.parameterNames(), problem, controller.arch(), 1);
    });
    connect(&view, &ResultsView::configSelected, &details, &ConfigDetailsPanel::showConfig);
    QSignalSpy finished(&controller, &SessionController::finished);
    QSignalSpy failed(&controller, &SessionController::failed);
    controller.start(replayRequest(m_dir.filePath(QStringLiteral("live.db"))));
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
    QVERIFY(snapshots >= 1);
    QCOMPARE(controller.results()->size(), kDemoResults);
    QCOMPARE(view.model()->rowCount(), int(kDemoResults));
    QCOMPARE(view.visibleRowCount(), int(kDemoResults));
    // The fastest first.
    const ResultRecord* first = view.model()->recordAt(view.proxy()->mapToSource(view.proxy()->index(0, 0)).row());
    QVERIFY(first);
    double fastest = std::numeric_limits<double>::infinity();
    for (const ResultRecord& r : *controller.results())
        if (r.ok())
            fastest = std::min(fastest, r.measurement.time.medianMs);
    QCOMPARE(first->measurement.time.medianMs, fastest);
    // The heatmap aggregates off the GUI thread: its last grid holds every result.
    QTRY_VERIFY_WITH_TIMEOUT(heatmap.grid() && heatmap.grid()->resultCount == kDemoResults, kTimeoutMs);
    // A row picked in the table is the one the details panel shows.
    view.table()->selectRow(0);
    QCOMPARE(details.shownConfig(), view.currentConfig());
    QVERIFY(!details.shownConfig().isEmpty());
}

void TestSession::largeSnapshots() {
    // 100,000 results through the table (model + sorted proxy + view): 4,000 results more than the
    // last snapshot (a replay's tick), 10 more (a GPU run's), a comparison filter and a text one.
    // After each, the rows shown are the ones the data gives, in time order.
    constexpr std::size_t kCount = 100'000;
    constexpr std::size_t kStep = 4'000;
    std::vector<ResultRecord> all;
    all.reserve(kCount);
    for (std::size_t i = 0; i < kCount; ++i)
        all.push_back(demoLikeRecord(static_cast<std::int64_t>(i + 1)));
    auto copy = std::make_shared<const std::vector<ResultRecord>>(all);
    QCOMPARE(copy->size(), kCount);

    const std::vector<std::string> names = {"BLOCK_M", "BLOCK_N", "BLOCK_K", "THREAD_M", "THREAD_N", "VEC", "STAGES"};
    ResultsView view;
    view.resize(1000, 500);
    view.show();
    // The rows shown: sorted by time, `count` of them, each a result of `results`.
    auto checkShown = [&](const std::vector<ResultRecord>& results, int count) {
        QCOMPARE(view.visibleRowCount(), count);
        QCOMPARE(view.proxy()->rowCount(), count);
        double previous = -1;
        std::set<std::int64_t> ids;
        for (int row = 0; row < count; ++row) {
            const QModelIndex source = view.proxy()->mapToSource(view.proxy()->index(row, 0));
            const ResultRecord* r = view.model()->recordAt(source.row());
            QVERIFY(r);
            QVERIFY2(r->measurement.time.medianMs >= previous,
                     qPrintable(QStringLiteral("row %1 out of order").arg(row)));
            previous = r->measurement.time.medianMs;
            ids.insert(r->id);
        }
        QCOMPARE(ids.size(), std::size_t(count));
        QVERIFY(*ids.rbegin() <= results.back().id);
    };

    auto first = std::make_shared<const std::vector<ResultRecord>>(all.begin(), all.end() - std::ptrdiff_t(kStep));
    view.setResults(first, names, "TFLOP/s");
    view.table()->sortByColumn(view.model()->columnOf(ResultsModel::ColumnKind::Time), Qt::AscendingOrder);
    view.table()->viewport()->repaint();
    checkShown(*first, int(kCount - kStep));
    view.setResults(copy, names, "TFLOP/s");
    view.table()->viewport()->repaint();
    checkShown(*copy, int(kCount));
    // A live run of a few results per tick inserts.
    std::vector<ResultRecord> plus = all;
    for (int i = 0; i < 10; ++i)
        plus.push_back(demoLikeRecord(static_cast<std::int64_t>(kCount + 1 + i)));
    auto plusSnapshot = std::make_shared<const std::vector<ResultRecord>>(std::move(plus));
    view.setResults(plusSnapshot, names, "TFLOP/s");
    view.table()->viewport()->repaint();
    checkShown(*plusSnapshot, int(kCount + 10));
    first.reset();
    copy.reset();

    // The comparison filter keeps what the same comparison over the records keeps.
    view.setFilterText(QStringLiteral("regs > 100 and time < 900"));
    const auto kept = std::count_if(plusSnapshot->begin(), plusSnapshot->end(), [](const ResultRecord& r) {
        return r.measurement.staticInfo->registers > 100 && r.measurement.time.medianMs * 1000 < 900;
    });
    QVERIFY(kept > 0 && kept < std::ptrdiff_t(plusSnapshot->size()));
    QCOMPARE(view.visibleRowCount(), int(kept));
    view.setFilterText(QStringLiteral("2026-11-30"));
    QCOMPARE(view.visibleRowCount(), 0);
    view.setFilterText(QString());
    QCOMPARE(view.visibleRowCount(), int(plusSnapshot->size()));
}

QTEST_MAIN(TestSession)
#include "tst_session.moc"
