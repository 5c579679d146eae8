// The models of the views without a widget (tilescope-models): each built on real data and run
// under QAbstractItemModelTester. The data: the shipped sgemm problem (kernels/sgemm) at
// 2048^3, its space built by the engine, and two sessions a TuningSession wrote to a results
// database from the demo recording (a real H200 session): the whole space replayed, and 100
// configs of a random search; read back from the database as the workbench reads them. The
// cross-GPU table compiles sampled configs for two archs with NVRTC (and tints what differs on
// synthetic analyses). This suite links the models library and Qt Test only, no Qt Widgets, and
// runs without a GUI application.

#include "demodatabase.h"
#include "models/conditionmodel.h"
#include "models/crossgpumodel.h"
#include "models/heatmapmodel.h"
#include "models/parametermodel.h"
#include "models/quantity.h"
#include "models/resultsmodel.h"
#include "models/resultsproxy.h"
#include "models/samplemodel.h"
#include "models/scattermodel.h"
#include "models/sessionlistmodel.h"
#include "models/spacetypes.h"

#include "common/format.h"

#include "model/configvalues.h"

#include "analysis/staticanalysis.h"
#include "compile/compileservice.h"
#include "exchange/configcodec.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QColor>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#ifdef QT_WIDGETS_LIB
#error "tst_models links Qt Widgets: the models library must not bring it in"
#endif

using namespace tilescope;
using namespace tilescope::views;

namespace {

const std::string kSgemm = TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json";
constexpr std::size_t kShape = 1; // M = N = K = 2048, where the demo was recorded
constexpr std::size_t kDemoResults = 2761;
constexpr auto kQtTest = QAbstractItemModelTester::FailureReportingMode::QtTest;

// What a model's column holds, top to bottom.
QStringList columnTexts(const QAbstractItemModel& model, int column, int role = Qt::DisplayRole) {
    QStringList texts;
    for (int row = 0; row < model.rowCount(); ++row)
        texts << model.index(row, column).data(role).toString();
    return texts;
}

// A synthetic analysis of one config on one arch.
ConfigAnalysis analysis(const std::string& arch, int registers, std::int64_t spill, int activeWarps) {
    ConfigAnalysis a;
    a.arch = arch;
    a.status = CompileStatus::Ok;
    a.info.registers = registers;
    a.info.spillStores = spill;
    a.info.spillLoads = spill;
    a.spill = spill > 0 ? SpillClass::Light : SpillClass::None;
    a.geometry.block = {256, 1, 1};
    a.occupancy.launchable = true;
    a.occupancy.maxWarps = 64;
    a.occupancy.activeWarps = activeWarps;
    a.occupancy.limiter = Limiter::Registers;
    return a;
}

} // namespace

class TestModels : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void resultsModelShowsTheStoredSession();
    void resultsModelInsertsTheRowsOfALiveRun();
    void resultsProxySortsAndFilters();
    void sessionListModelChecksSessions();
    void parameterModelCountsTheValuesKept();
    void conditionModelShowsWhatEachConditionRemoves();
    void sampleModelListsSampledConfigs();
    void crossGpuModelComparesTwoArchs();
    void crossGpuModelTintsWhatDiffers();
    void heatmapAggregatesTheSession();
    void scatterThinsToTheBest();

private:
    const SessionData& replayed() const { return m_sessions.front(); }
    ResultsSnapshot replayedSnapshot() const {
        return std::make_shared<const std::vector<ResultRecord>>(replayed().results);
    }

    QTemporaryDir m_dir;
    std::shared_ptr<const TuningProblem> m_problem;
    std::shared_ptr<const ConfigSpace> m_space;
    std::vector<std::string> m_names; // the problem's parameters, in order
    std::vector<SessionData> m_sessions;
    ResultRecord m_best; // the replayed session's best, as the store ranks it
};

void TestModels::initTestCase() {
    QVERIFY(m_dir.isValid());
    m_problem = std::make_shared<const TuningProblem>(TuningProblem::load(kSgemm));
    m_space = std::make_shared<const ConfigSpace>(ConfigSpace::build(*m_problem, kShape));
    for (const TuningParameter& p : m_problem->parameters)
        m_names.push_back(p.name);

    const std::filesystem::path db = m_dir.filePath(QStringLiteral("sgemm.db")).toStdString();
    test::writeDemoDatabase(db);
    const ResultStore store = ResultStore::open(db, StoreMode::ReadOnly);
    const std::vector<SessionInfo> sessions = store.sessions();
    QCOMPARE(sessions.size(), std::size_t(2));
    for (const SessionInfo& info : sessions)
        m_sessions.push_back(store.load(info.id));
    std::sort(m_sessions.begin(), m_sessions.end(),
              [](const SessionData& a, const SessionData& b) { return a.info.id < b.info.id; });
    QCOMPARE(replayed().info.strategy, std::string("exhaustive"));
    const std::optional<ResultRecord> best = store.best(replayed().info.id);
    QVERIFY(best);
    m_best = *best;
}

// ------------------------------------------------------------------------------ results

void TestModels::resultsModelShowsTheStoredSession() {
    ResultsModel model;
    QAbstractItemModelTester tester(&model, kQtTest);
    model.setResults(replayedSnapshot(), m_names, replayed().info.objectiveName);

    // Every valid config of the space is a row: those the recording holds with its outcome.
    QCOMPARE(std::uint64_t(model.rowCount()), m_space->size());
    const auto ok = std::count_if(replayed().results.begin(), replayed().results.end(),
                                  [](const ResultRecord& r) { return r.ok(); });
    QCOMPARE(std::size_t(ok), kDemoResults);
    QCOMPARE(model.objectiveName(), std::string("TFLOP/s"));
    // Parameters first, in the problem's order.
    for (std::size_t p = 0; p < m_names.size(); ++p)
        QCOMPARE(model.headerData(int(p), Qt::Horizontal).toString(), QString::fromStdString(m_names[p]));

    const int row = model.rowOfConfig(QString::fromStdString(configJson(m_best.config)));
    QVERIFY(row >= 0);
    QCOMPARE(model.recordAt(row)->id, m_best.id);
    const int objective = model.columnOf(ResultsModel::ColumnKind::Objective);
    const int time = model.columnOf(ResultsModel::ColumnKind::Time);
    QVERIFY(objective >= 0 && time >= 0);
    QCOMPARE(model.index(row, objective).data().toString(), QStringLiteral("43.43"));
    QCOMPARE(model.numberAt(row, time).value(), m_best.timeMs() * 1000.0);
    QCOMPARE(model.index(row, objective).data(ResultsModel::SortRole).toDouble(), m_best.objective.value());
    QCOMPARE(model.index(row, 0).data(ResultsModel::ConfigJsonRole).toString(),
             QString::fromStdString(configJson(m_best.config)));
    const int status = model.columnOf(ResultsModel::ColumnKind::Status);
    QCOMPARE(model.index(row, status).data().toString(), QStringLiteral("ok"));
}

void TestModels::resultsModelInsertsTheRowsOfALiveRun() {
    // A live run publishes growing snapshots: a few new rows are inserted, many reset the model.
    ResultsModel model;
    QAbstractItemModelTester tester(&model, kQtTest);
    const std::vector<ResultRecord>& all = replayed().results;
    const auto first = [&](std::size_t n) {
        return std::make_shared<const std::vector<ResultRecord>>(all.begin(), all.begin() + std::ptrdiff_t(n));
    };
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.setResults(first(100), m_names, replayed().info.objectiveName);
    QCOMPARE(model.rowCount(), 100);
    model.setResults(first(150), m_names, replayed().info.objectiveName);
    QCOMPARE(model.rowCount(), 150);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.first().at(1).toInt(), 100);
    QCOMPARE(inserted.first().at(2).toInt(), 149);
    const int resets = reset.count();
    model.setResults(replayedSnapshot(), m_names, replayed().info.objectiveName);
    QCOMPARE(std::size_t(model.rowCount()), all.size());
    QCOMPARE(reset.count(), resets + 1); // more than kInsertLimit new rows
    model.clear();
    QCOMPARE(model.rowCount(), 0);
}

void TestModels::resultsProxySortsAndFilters() {
    ResultsModel model;
    ResultsProxyModel proxy;
    QAbstractItemModelTester sourceTester(&model, kQtTest);
    QAbstractItemModelTester proxyTester(&proxy, kQtTest);
    proxy.setResultsModel(&model);
    model.setResults(replayedSnapshot(), m_names, replayed().info.objectiveName);
    QCOMPARE(proxy.rowCount(), model.rowCount());

    // Sorted by time: the fastest first, the rows without a time last.
    const int time = model.columnOf(ResultsModel::ColumnKind::Time);
    proxy.sort(time, Qt::AscendingOrder);
    QCOMPARE(proxy.mapToSource(proxy.index(0, 0)).data(ResultsModel::ConfigJsonRole).toString(),
             QString::fromStdString(configJson(m_best.config)));
    double previous = -1;
    int timed = 0;
    for (int row = 0; row < proxy.rowCount(); ++row) {
        const double t = proxy.index(row, time).data(ResultsModel::SortRole).toDouble();
        if (std::isnan(t)) {
            previous = std::numeric_limits<double>::infinity();
            continue;
        }
        QVERIFY2(t >= previous, qPrintable(QStringLiteral("row %1: %2 after %3").arg(row).arg(t).arg(previous)));
        previous = t;
        ++timed;
    }
    QCOMPARE(std::size_t(timed), kDemoResults);
    // Descending by the objective: the best first too (higher is better).
    const int objective = model.columnOf(ResultsModel::ColumnKind::Objective);
    proxy.sort(objective, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, objective).data().toString(), QStringLiteral("43.43"));

    // A comparison keeps the rows that hold it, as many as the stored results say.
    const auto manyRegisters =
        std::count_if(replayed().results.begin(), replayed().results.end(), [](const ResultRecord& r) {
            return r.measurement.staticInfo && r.measurement.staticInfo->registers > 128;
        });
    QVERIFY(manyRegisters > 0);
    proxy.setFilterExpression(QStringLiteral("regs > 128"));
    QCOMPARE(proxy.filterError(), QString());
    QCOMPARE(proxy.rowCount(), int(manyRegisters));
    const int regs = model.columnOf(ResultsModel::ColumnKind::Registers);
    for (int row = 0; row < proxy.rowCount(); ++row)
        QVERIFY(proxy.index(row, regs).data(ResultsModel::SortRole).toDouble() > 128);
    proxy.setFilterExpression(QStringLiteral("BLOCK_M == 64 and status == ok"));
    const auto block64 = std::count_if(replayed().results.begin(), replayed().results.end(), [](const ResultRecord& r) {
        return r.ok() && r.config.at("BLOCK_M") == ConfigValue(std::int64_t(64));
    });
    QCOMPARE(proxy.rowCount(), int(block64));
    // A column no result has is read as text, and said so.
    proxy.setFilterExpression(QStringLiteral("nosuchcolumn > 3"));
    QVERIFY(!proxy.filterError().isEmpty());
    proxy.setFilterExpression({});
    QCOMPARE(proxy.rowCount(), model.rowCount());
}

// ------------------------------------------------------------------------------ export

void TestModels::sessionListModelChecksSessions() {
    SessionListModel model;
    QAbstractItemModelTester tester(&model, kQtTest);
    model.setSessions(std::make_shared<const std::vector<SessionData>>(m_sessions));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), int(SessionListModel::ColumnCount));
    QCOMPARE(model.index(0, SessionListModel::KernelColumn).data().toString(), QStringLiteral("sgemm"));
    QCOMPARE(model.index(0, SessionListModel::ShapeColumn).data().toString(), QStringLiteral("M=2048 N=2048 K=2048"));
    QCOMPARE(model.index(0, SessionListModel::SessionColumn).data().toString(), QString::number(replayed().info.id));
    QVERIFY2(model.index(0, SessionListModel::ResultsColumn).data().toString().contains(QStringLiteral("2,761")),
             qPrintable(model.index(0, SessionListModel::ResultsColumn).data().toString()));
    QVERIFY2(model.index(1, SessionListModel::ResultsColumn).data().toString().startsWith(QStringLiteral("100")),
             qPrintable(model.index(1, SessionListModel::ResultsColumn).data().toString()));
    QVERIFY(model.index(0, SessionListModel::BestColumn).data().toString().contains(QStringLiteral("43.43 TFLOP/s")));
    QVERIFY(model.index(1, SessionListModel::SessionColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("random, seed 7")));

    QCOMPARE(model.checkedRows(), (std::vector<int>{0, 1}));
    QSignalSpy checked(&model, &SessionListModel::checkedChanged);
    model.setExclusive(true);
    QCOMPARE(model.checkedRows(), (std::vector<int>{0}));
    QVERIFY(model.setData(model.index(1, SessionListModel::SessionColumn), Qt::Checked, Qt::CheckStateRole));
    QCOMPARE(model.checkedRows(), (std::vector<int>{1}));
    QVERIFY(!model.setData(model.index(1, SessionListModel::SessionColumn), Qt::Unchecked, Qt::CheckStateRole));
    model.setExclusive(false);
    QCOMPARE(model.checkedRows(), (std::vector<int>{0, 1}));
    QVERIFY(checked.count() >= 3);
}

// ------------------------------------------------------------------------------ problem

void TestModels::parameterModelCountsTheValuesKept() {
    ParameterModel model;
    QAbstractItemModelTester tester(&model, kQtTest);
    model.setProblem(m_problem);
    QCOMPARE(model.rowCount(), 7);
    QCOMPARE(columnTexts(model, ParameterModel::NameColumn),
             QStringList({"BLOCK_M", "BLOCK_N", "BLOCK_K", "THREAD_M", "THREAD_N", "VEC", "STAGES"}));
    QCOMPARE(model.index(0, ParameterModel::ValuesColumn).data().toString(), QStringLiteral("32, 64, 128, 256"));
    QCOMPARE(model.index(3, ParameterModel::CountColumn).data().toString(), QStringLiteral("5"));
    QVERIFY(model.index(0, ParameterModel::KeptColumn).data(ParameterModel::ValueCountsRole).toList().isEmpty());

    // How many valid configs keep each value, counted over the space: each parameter's counts
    // add up to the valid size.
    std::vector<std::vector<double>> counts(m_names.size());
    for (int p = 0; p < m_space->parameterCount(); ++p)
        counts[std::size_t(p)].assign(m_space->parameterValues(p).size(), 0.0);
    for (std::uint64_t i = 0; i < m_space->size(); ++i) {
        const Config config = m_space->at(i);
        for (std::size_t p = 0; p < counts.size(); ++p)
            counts[p][config[p]] += 1;
    }
    model.setValueCounts(counts, false);
    for (int row = 0; row < model.rowCount(); ++row) {
        const QVariantList kept =
            model.index(row, ParameterModel::KeptColumn).data(ParameterModel::ValueCountsRole).toList();
        QCOMPARE(kept.size(), int(counts[std::size_t(row)].size()));
        double sum = 0;
        for (const QVariant& v : kept)
            sum += v.toDouble();
        QCOMPARE(sum, double(m_space->size()));
    }
    model.setProblem(nullptr);
    QCOMPARE(model.rowCount(), 0);
}

void TestModels::conditionModelShowsWhatEachConditionRemoves() {
    ConditionModel model;
    QAbstractItemModelTester tester(&model, kQtTest);
    model.setProblem(m_problem);
    QCOMPARE(model.rowCount(), int(m_problem->conditions.size()));
    QCOMPARE(model.rowCount(), 9);
    QCOMPARE(model.index(6, ConditionModel::ExpressionColumn).data().toString(), QStringLiteral("BLOCK_K % VEC == 0"));
    model.setImpactPending(true);
    QCOMPARE(model.index(0, ConditionModel::RemovesColumn).data().toString(), QStringLiteral("…"));

    // What each condition removes, as the space controller measures it: the space without it.
    auto impact = std::make_shared<ConditionImpactSet>();
    impact->space = m_space;
    impact->rawSize = m_space->rawSize();
    for (std::size_t c = 0; c < m_problem->conditions.size(); ++c) {
        TuningProblem without = *m_problem;
        without.conditions.erase(without.conditions.begin() + std::ptrdiff_t(c));
        ConditionImpact one;
        one.removed = ConfigSpace::build(without, kShape).size() - m_space->size();
        impact->conditions.push_back(one);
    }
    const SpaceStats stats = m_space->stats();
    model.setStats(&stats);
    model.setImpact(impact);
    for (int row = 0; row < model.rowCount(); ++row) {
        const std::uint64_t removed = *impact->conditions[std::size_t(row)].removed;
        QCOMPARE(model.index(row, ConditionModel::RemovesColumn).data().toString(), formatCount(removed));
        QCOMPARE(model.index(row, ConditionModel::RemovesColumn).data(ConditionModel::SortRole).toDouble(),
                 double(removed));
        QCOMPARE(model.index(row, ConditionModel::ErrorsColumn).data().toString(), QStringLiteral("0"));
    }
    // The shared-memory bound removes 519 valid configs of its own; the divisibility of the
    // shape, none at 2048.
    QCOMPARE(model.index(3, ConditionModel::RemovesColumn).data().toString(), QStringLiteral("519"));
    QCOMPARE(model.index(8, ConditionModel::RemovesColumn).data().toString(), QStringLiteral("0"));
}

void TestModels::sampleModelListsSampledConfigs() {
    SampleModel model;
    QAbstractItemModelTester tester(&model, kQtTest);
    auto samples = std::make_shared<SampleSet>();
    samples->space = m_space;
    samples->seed = 3;
    samples->indices = m_space->sample(20, samples->seed);
    for (std::uint64_t index : samples->indices)
        samples->configs.push_back(m_space->at(index));
    model.setSamples(samples);
    QCOMPARE(model.rowCount(), 20);
    QCOMPARE(model.columnCount(), 1 + 7);
    QCOMPARE(model.headerData(1, Qt::Horizontal).toString(), QStringLiteral("BLOCK_M"));
    std::set<std::uint64_t> distinct(samples->indices.begin(), samples->indices.end());
    QCOMPARE(distinct.size(), std::size_t(20)); // without replacement
    for (int row = 0; row < model.rowCount(); ++row) {
        const std::uint64_t index = samples->indices[std::size_t(row)];
        QCOMPARE(model.index(row, SampleModel::IndexColumn).data().toString(), formatCount(index));
        QCOMPARE(model.describe(row), QString::fromStdString(m_space->describe(samples->configs[std::size_t(row)])));
        QCOMPARE(model.index(row, 1).data().toString(),
                 formatValue(m_space->value(samples->configs[std::size_t(row)], 0)));
    }
    model.setSamples(nullptr);
    QCOMPARE(model.rowCount(), 0);
}

// ------------------------------------------------------------------------------ cross-GPU

void TestModels::crossGpuModelComparesTwoArchs() {
    // Six sampled configs compiled by NVRTC for two archs, as the cross-GPU view compiles them.
    const std::vector<std::string> archs = {"sm_80", "sm_90"};
    const std::vector<std::uint64_t> indices = m_space->sample(6, 11);
    const StaticAnalyzer analyzer(*m_problem, kShape);
    CompileService service({2, nullptr});
    const std::vector<ConfigAnalysis> results = analyzer.run(*m_space, indices, archs, service);
    QCOMPARE(results.size(), indices.size() * archs.size());
    const ConfigCodec codec(*m_space);
    std::vector<CrossGpuRow> rows;
    for (std::size_t c = 0; c < indices.size(); ++c) {
        CrossGpuRow row;
        row.index = indices[c];
        const Config config = m_space->at(row.index);
        for (int p = 0; p < m_space->parameterCount(); ++p)
            row.values << formatValue(m_space->value(config, p));
        row.configJson = configJson(codec.toValues(config));
        for (std::size_t a = 0; a < archs.size(); ++a)
            row.perArch.push_back(results[c * archs.size() + a]);
        describeDifferences(row, archs);
        rows.push_back(std::move(row));
    }

    CrossGpuModel model;
    CrossGpuProxy proxy;
    QAbstractItemModelTester tester(&model, kQtTest);
    QAbstractItemModelTester proxyTester(&proxy, kQtTest);
    proxy.setSourceModel(&model);
    proxy.setSortRole(CrossGpuModel::SortRole);
    model.reset(m_names, archs);
    model.appendRows({rows.begin(), rows.begin() + 2});
    model.appendRows({rows.begin() + 2, rows.end()});
    QCOMPARE(model.rowCount(), 6);
    QCOMPARE(model.columnCount(), 1 + 7 + CrossGpuModel::kQuantities * 2 + 1);
    using Q = CrossGpuModel::Quantity;
    for (int row = 0; row < model.rowCount(); ++row)
        for (int a = 0; a < 2; ++a) {
            const ConfigAnalysis& analysis = rows[std::size_t(row)].perArch[std::size_t(a)];
            QVERIFY2(analysis.compiled(), analysis.message.c_str());
            QCOMPARE(model.index(row, model.column(Q::Registers, a)).data().toString(),
                     QString::number(analysis.info.registers));
        }
    QVERIFY(
        model.headerData(model.column(Q::Registers, 1), Qt::Horizontal).toString().contains(QStringLiteral("sm_90")));
    QCOMPARE(model.rowOf(QString::fromStdString(rows[4].configJson)), 4);

    // Sorted by the registers on sm_90, fewest first.
    const int registers = model.column(Q::Registers, 1);
    proxy.sort(registers, Qt::AscendingOrder);
    for (int row = 1; row < proxy.rowCount(); ++row)
        QVERIFY(proxy.index(row - 1, registers).data(CrossGpuModel::SortRole).toDouble() <=
                proxy.index(row, registers).data(CrossGpuModel::SortRole).toDouble());
    // Only the rows that differ across the archs, as many as describeDifferences found.
    const auto differing = std::count_if(
        rows.begin(), rows.end(), [](const CrossGpuRow& row) { return row.spillDiffers || row.occupancyDiffers; });
    proxy.setOnlyDifferences(true);
    QCOMPARE(proxy.rowCount(), int(differing));
    for (int row = 0; row < proxy.rowCount(); ++row)
        QVERIFY(proxy.index(row, 0).data(CrossGpuModel::DiffersRole).toBool());
    proxy.setOnlyDifferences(false);
    QCOMPARE(proxy.rowCount(), 6);
}

void TestModels::crossGpuModelTintsWhatDiffers() {
    CrossGpuModel model;
    QAbstractItemModelTester tester(&model, kQtTest);
    const std::vector<std::string> archs = {"sm_80", "sm_90"};
    model.reset({"A", "B"}, archs);
    std::vector<CrossGpuRow> rows(3);
    // Row 0: alike on both. Row 1: spills on sm_90 only. Row 2: occupancy 25 % vs 50 %.
    rows[0].perArch = {analysis("sm_80", 64, 0, 32), analysis("sm_90", 64, 0, 32)};
    rows[1].perArch = {analysis("sm_80", 128, 0, 16), analysis("sm_90", 128, 8, 16)};
    rows[2].perArch = {analysis("sm_80", 96, 0, 16), analysis("sm_90", 96, 0, 32)};
    for (std::size_t i = 0; i < rows.size(); ++i) {
        rows[i].index = i;
        rows[i].values = {QString::number(i), QStringLiteral("1")};
        rows[i].configJson = "{\"A\":" + std::to_string(i) + ",\"B\":1}";
        describeDifferences(rows[i], archs);
    }
    QVERIFY(!rows[0].spillDiffers && !rows[0].occupancyDiffers && rows[0].differences.isEmpty());
    QVERIFY(rows[1].spillDiffers && !rows[1].occupancyDiffers);
    QCOMPARE(rows[1].differences, QStringLiteral("spills on sm_90 only"));
    QVERIFY(!rows[2].spillDiffers && rows[2].occupancyDiffers);
    QCOMPARE(rows[2].differences, QStringLiteral("occupancy 25.0–50.0 %"));
    model.appendRows(rows);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), 1 + 2 + 4 * 2 + 1);

    using Q = CrossGpuModel::Quantity;
    const auto cell = [&](int row, Q quantity, int arch) { return model.index(row, model.column(quantity, arch)); };
    QCOMPARE(cell(1, Q::Registers, 1).data().toString(), QStringLiteral("128"));
    QCOMPARE(cell(1, Q::SpillBytes, 1).data().toString(), QStringLiteral("16"));
    QCOMPARE(cell(2, Q::Occupancy, 1).data().toString(), QStringLiteral("50.0"));
    QCOMPARE(cell(2, Q::Limiter, 0).data().toString(), QStringLiteral("registers"));
    QVERIFY(
        model.headerData(model.column(Q::Occupancy, 1), Qt::Horizontal).toString().contains(QStringLiteral("sm_90")));
    // Tints: none on row 0; spill cells on row 1 (different on each side); occupancy cells on row 2.
    for (int c = 0; c < model.columnCount(); ++c)
        QVERIFY(!model.index(0, c).data(Qt::BackgroundRole).isValid());
    const QColor spilling = cell(1, Q::SpillBytes, 1).data(Qt::BackgroundRole).value<QBrush>().color();
    const QColor clean = cell(1, Q::SpillBytes, 0).data(Qt::BackgroundRole).value<QBrush>().color();
    QVERIFY(spilling.isValid() && clean.isValid() && spilling != clean);
    QVERIFY(!cell(1, Q::Occupancy, 0).data(Qt::BackgroundRole).isValid());
    QVERIFY(cell(2, Q::Occupancy, 0).data(Qt::BackgroundRole).isValid());
    QVERIFY(cell(2, Q::Occupancy, 1).data(Qt::BackgroundRole).isValid());
    QVERIFY(cell(1, Q::SpillBytes, 1).data(Qt::ToolTipRole).toString().contains(QStringLiteral("spill stores 8 B")));
    QCOMPARE(model.rowOf(QStringLiteral(R"({"B":1,"A":2})")), 2); // any key order
    QCOMPARE(model.rowOf(QStringLiteral(R"({"A":9,"B":1})")), -1);
    QVERIFY(model.index(1, 0).data(CrossGpuModel::DiffersRole).toBool());
    QVERIFY(!model.index(0, 0).data(CrossGpuModel::DiffersRole).toBool());
}

// ------------------------------------------------------------------------------ plots

void TestModels::heatmapAggregatesTheSession() {
    const std::vector<ResultRecord>& results = replayed().results;
    const HeatmapSpec spec = sessionHeatmapSpec({}, m_names, replayed().info.objectiveName, results);
    QCOMPARE(spec.yParameter, std::string("BLOCK_M")); // the first parameter down the side
    QCOMPARE(spec.xParameter, std::string("BLOCK_N"));
    QCOMPARE(spec.quantity.kind, QuantityKind::Objective);
    const HeatmapGrid grid = aggregate(results, m_names, spec, replayed().info.objectiveName);
    QCOMPARE(grid.columns(), 4);
    QCOMPARE(grid.rows(), 4);
    QCOMPARE(grid.xValues, QStringList({"32", "64", "128", "256"}));
    QCOMPARE(grid.okCount, kDemoResults);
    QVERIFY(grid.higherIsBetter);
    // The best cell holds the session's best result, and its value is the highest.
    QVERIFY(grid.best.valid());
    const HeatmapCell& best = grid.cell(grid.best);
    QVERIFY(best.record);
    QCOMPARE(best.record->id, m_best.id);
    QCOMPARE(best.value, m_best.objective.value());
    QCOMPARE(grid.maxValue, best.value);
    QCOMPARE(grid.xValues[grid.best.x], valueText(m_best.config.at("BLOCK_N")));
    QVERIFY(heatmapTitle(grid).contains(QStringLiteral("TFLOP/s")));
    QVERIFY(tooltip(grid, grid.best).contains(QStringLiteral("43.43")));
}

void TestModels::scatterThinsToTheBest() {
    const std::vector<ResultRecord>& results = replayed().results;
    const ResultSummary summary = summarize(results, m_names);
    QCOMPARE(summary.okCount, kDemoResults);
    QVERIFY(summary.hasStaticInfo && summary.hasObjective);
    const std::vector<Quantity> offered = availableQuantities(summary, replayed().info.objectiveName);
    QCOMPARE(offered.front().kind, QuantityKind::LatencyUs);
    QVERIFY(std::any_of(offered.begin(), offered.end(),
                        [](const Quantity& q) { return q.kind == QuantityKind::Registers; }));
    QCOMPARE(quantityValue(m_best, Quantity(QuantityKind::LatencyUs)).value(), m_best.timeMs() * 1000.0);

    ScatterSpec spec; // registers against latency
    const ScatterData data = scatterPoints(results, spec, replayed().info.objectiveName, 500);
    QCOMPARE(data.candidates, kDemoResults);
    QCOMPARE(data.points.size(), std::size_t(500));
    QVERIFY(data.thinned());
    // Best results first: the first point is the session's best.
    QCOMPARE(results[data.points.front().result].id, m_best.id);
    QCOMPARE(data.points.front().y, m_best.timeMs() * 1000.0);
    QCOMPARE(data.points.front().x, double(m_best.measurement.staticInfo->registers));
}

QTEST_GUILESS_MAIN(TestModels)
#include "tst_models.moc"
