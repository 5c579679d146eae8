// The views: every model under QAbstractItemModelTester, the space controller (results off the
// GUI thread, stale ones dropped), the problem document (errors keep the current problem), the
// main window (opens, loads, shows errors inline, takes drops, can be grabbed), the embedded
// example and Save As. Runs on the offscreen platform.

#include "base/error.h"
#include "common/errorbanner.h"
#include "common/examples.h"
#include "common/format.h"
#include "mainwindow.h"
#include "models/conditionmodel.h"
#include "models/parametermodel.h"
#include "models/samplemodel.h"
#include "problem/cudahighlighter.h"
#include "problem/problemdocument.h"
#include "problem/problempanel.h"
#include "problem/sourceview.h"
#include "problem/spacecontroller.h"
#include "problem/spacepanel.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include "darkpalette.h"
#include "ktconvolution.h"

#include <QAbstractItemModelTester>
#include <QAbstractItemView>
#include <QComboBox>
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextLayout>
#include <QUndoStack>
#include <QtTest>

#include <memory>
#include <set>
#include <vector>

using namespace tilescope;
using namespace tilescope::views;

namespace {

const QString kSgemm = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
const QString kSgemmKernel = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.cu");
constexpr int kTimeoutMs = 30'000;

std::shared_ptr<const TuningProblem> loadSgemm() {
    return std::make_shared<const TuningProblem>(TuningProblem::load(kSgemm.toStdString()));
}

QString readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

bool writeFile(const QString& path, const QString& text) {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return false;
    return file.write(text.toUtf8()) == text.toUtf8().size();
}

// A copy of sgemm (problem and kernel) in `dir` with `from` replaced by `to` in the problem text.
QString writeSgemmVariant(const QTemporaryDir& dir, const QString& name, const QString& from, const QString& to) {
    QString text = readFile(kSgemm);
    if (!from.isEmpty())
        text.replace(from, to);
    const QString path = dir.filePath(name);
    if (!writeFile(path, text))
        return {};
    if (!QFileInfo::exists(dir.filePath(QStringLiteral("sgemm.cu"))))
        QFile::copy(kSgemmKernel, dir.filePath(QStringLiteral("sgemm.cu")));
    return path;
}

MainWindow::Options transient() {
    MainWindow::Options options;
    options.persistent = false;
    return options;
}

} // namespace

class TestViews : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void formatting_data();
    void formatting();

    void parameterModel();
    void conditionModel();
    void sampleModel();

    void controllerDeliversSpace();
    void controllerDropsStaleResults();
    void controllerResamples();
    void controllerReportsBuildErrors();
    void controllerCountsAConditionOverManyParameters();
    void controllerCancelsACountThatCannotEnd();

    void documentKeepsProblemOnError_data();
    void documentKeepsProblemOnError();
    void documentOpensWithoutItsKernel();
    void embeddedExample();
    void saveAs();

    void mainWindowOpensAndGrabs();
    void mainWindowShowsLoadErrors();
    void mainWindowWarnsOfAWrongLaunch();
    void mainWindowSwitchesShapes();
    void mainWindowTakesDrops();
    void mainWindowKeepsRecentFiles();

    void highlighter();
    void followsDarkPalette();

private:
    QTemporaryDir m_settingsDir;
};

void TestViews::initTestCase() {
    // Keep the user's settings out of it, and numbers formatted the same everywhere.
    QVERIFY(m_settingsDir.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("TilescopeTests"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_views"));
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
}

// ------------------------------------------------------------------------------ formatting

void TestViews::formatting_data() {
    QTest::addColumn<QString>("actual");
    QTest::addColumn<QString>("expected");
    QTest::newRow("count") << formatCount(std::uint64_t(2761)) << QStringLiteral("2,761");
    QTest::newRow("count zero") << formatCount(std::uint64_t(0)) << QStringLiteral("0");
    QTest::newRow("count double") << formatCount(7200.0) << QStringLiteral("7,200");
    QTest::newRow("count huge") << formatCount(2.5e18) << QStringLiteral("2.50 × 10^18");
    QTest::newRow("microseconds") << formatDuration(420e-6) << QStringLiteral("420 µs");
    QTest::newRow("milliseconds") << formatDuration(1.625e-3) << QStringLiteral("1.63 ms");
    QTest::newRow("seconds") << formatDuration(1.5) << QStringLiteral("1.50 s");
    QTest::newRow("minutes") << formatDuration(95) << QStringLiteral("1 min 35 s");
    QTest::newRow("share") << formatShare(2761, 7200) << QStringLiteral("38.3 %");
    QTest::newRow("tiny share") << formatShare(1, 1e6) << QStringLiteral("0.0001 %");
    QTest::newRow("no whole") << formatShare(1, 0) << QStringLiteral("—");
}

void TestViews::formatting() {
    QFETCH(QString, actual);
    QFETCH(QString, expected);
    QCOMPARE(actual, expected);
}

// ------------------------------------------------------------------------------ models

void TestViews::parameterModel() {
    ParameterModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);

    const auto problem = loadSgemm();
    model.setProblem(problem);
    QCOMPARE(model.rowCount(), static_cast<int>(problem->parameters.size()));
    QCOMPARE(model.rowCount(), 7);
    QCOMPARE(model.columnCount(), int(ParameterModel::ColumnCount));
    QCOMPARE(model.index(0, ParameterModel::NameColumn).data().toString(), QStringLiteral("BLOCK_M"));
    QCOMPARE(model.index(0, ParameterModel::TypeColumn).data().toString(), QStringLiteral("int"));
    QCOMPARE(model.index(0, ParameterModel::ValuesColumn).data().toString(), QStringLiteral("32, 64, 128, 256"));
    QCOMPARE(model.index(0, ParameterModel::CountColumn).data().toInt(), 4);
    QCOMPARE(model.index(6, ParameterModel::NameColumn).data().toString(), QStringLiteral("STAGES"));
    QVERIFY(
        model.index(0, ParameterModel::ValuesColumn).data(Qt::ToolTipRole).toString().contains("[32, 64, 128, 256]"));

    model.setProblem(nullptr);
    QCOMPARE(model.rowCount(), 0);
}

void TestViews::conditionModel() {
    ConditionModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const auto problem = loadSgemm();
    model.setProblem(problem);
    QCOMPARE(model.rowCount(), 9);
    QCOMPARE(model.index(0, ConditionModel::ExpressionColumn).data().toString(),
             QStringLiteral("BLOCK_M % THREAD_M == 0"));
    QCOMPARE(model.index(0, ConditionModel::NumberColumn).data().toInt(), 1);
    QVERIFY(model.index(0, ConditionModel::ExpressionColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains("BLOCK_M, THREAD_M"));

    QCOMPARE(model.index(2, ConditionModel::RemovesColumn).data().toString(), QStringLiteral("—"));
    model.setImpactPending(true);
    QCOMPARE(model.index(2, ConditionModel::RemovesColumn).data().toString(), QStringLiteral("…"));

    auto impact = std::make_shared<ConditionImpactSet>();
    impact->rawSize = 1000;
    impact->conditions.resize(9);
    impact->conditions[2].removed = 1234;
    impact->conditions[2].rejected = 250;
    impact->conditions[3].rejected = 0;
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setImpact(impact);
    QVERIFY(changed.count() >= 1);
    QCOMPARE(model.index(2, ConditionModel::RemovesColumn).data().toString(), QStringLiteral("1,234"));
    QCOMPARE(model.index(2, ConditionModel::RejectsColumn).data().toString(), QStringLiteral("25.0 %"));
    QCOMPARE(model.index(3, ConditionModel::RejectsColumn).data().toString(), QStringLiteral("0 %"));
    QCOMPARE(model.index(4, ConditionModel::RemovesColumn).data().toString(), QStringLiteral("—"));
    QCOMPARE(model.index(2, ConditionModel::RemovesColumn).data(ConditionModel::SortRole).toULongLong(), 1234ULL);

    SpaceStats stats;
    stats.failures.push_back({1, 17, "ZeroDivisionError: integer division or modulo by zero", {}});
    model.setStats(&stats);
    QCOMPARE(model.index(1, ConditionModel::ErrorsColumn).data().toString(), QStringLiteral("17"));
    QCOMPARE(model.index(0, ConditionModel::ErrorsColumn).data().toString(), QStringLiteral("0"));
    QVERIFY(
        model.index(1, ConditionModel::ErrorsColumn).data(Qt::ToolTipRole).toString().contains("ZeroDivisionError"));

    model.setProblem(nullptr);
    QCOMPARE(model.rowCount(), 0);
}

void TestViews::sampleModel() {
    SampleModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), 0);

    const auto problem = loadSgemm();
    auto samples = std::make_shared<SampleSet>();
    samples->space = std::make_shared<const ConfigSpace>(ConfigSpace::build(*problem, 0));
    samples->seed = 7;
    samples->indices = samples->space->sample(12, 7);
    for (auto i : samples->indices)
        samples->configs.push_back(samples->space->at(i));
    model.setSamples(samples);
    QCOMPARE(model.rowCount(), 12);
    QCOMPARE(model.columnCount(), 1 + 7);
    QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("Index"));
    QCOMPARE(model.headerData(1, Qt::Horizontal).toString(), QStringLiteral("BLOCK_M"));
    for (int row = 0; row < model.rowCount(); ++row) {
        const Config& config = samples->configs[static_cast<std::size_t>(row)];
        QCOMPARE(model.index(row, 0).data(SampleModel::SortRole).toULongLong(),
                 static_cast<qulonglong>(samples->indices[static_cast<std::size_t>(row)]));
        QCOMPARE(model.describe(row), QString::fromStdString(samples->space->describe(config)));
        for (int p = 0; p < 7; ++p)
            QCOMPARE(model.index(row, 1 + p).data().toString(),
                     QString::fromStdString(expr::repr(samples->space->value(config, p))));
    }
    model.setSamples(nullptr);
    QCOMPARE(model.rowCount(), 0);
}

// ------------------------------------------------------------------------------ controller

void TestViews::controllerDeliversSpace() {
    const auto problem = loadSgemm();
    const ConfigSpace expected = ConfigSpace::build(*problem, 0);

    SpaceController controller;
    QSignalSpy requested(&controller, &SpaceController::spaceRequested);
    QSignalSpy ready(&controller, &SpaceController::spaceReady);
    QSignalSpy sampled(&controller, &SpaceController::samplesReady);
    QSignalSpy impact(&controller, &SpaceController::impactReady);
    QSignalSpy settled(&controller, &SpaceController::settled);
    QSignalSpy busy(&controller, &SpaceController::busyChanged);

    controller.setProblem(problem, 0);
    QCOMPARE(requested.count(), 1);
    QVERIFY(controller.isBusy()); // the build runs on another thread: nothing is delivered yet
    QCOMPARE(ready.count(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(settled.count(), 1, kTimeoutMs);
    QVERIFY(!controller.isBusy());
    QCOMPARE(busy.count(), 2);

    QCOMPARE(ready.count(), 1);
    const auto result = controller.currentSpace();
    QVERIFY(result && result->ok());
    QCOMPARE(result->space->size(), expected.size());
    QCOMPARE(result->stats.validSize, expected.size());
    QCOMPARE(result->stats.rawSize, expected.rawSize());
    QCOMPARE(result->shapeIndex, std::size_t(0));

    QCOMPARE(sampled.count(), 1);
    const auto samples = controller.currentSamples();
    QVERIFY(samples);
    QCOMPARE(samples->indices.size(), std::size_t(20));
    QCOMPARE(samples->indices, expected.sample(20, controller.seed()));
    const std::set<std::uint64_t> distinct(samples->indices.begin(), samples->indices.end());
    QCOMPARE(distinct.size(), samples->indices.size());
    for (const Config& c : samples->configs)
        QVERIFY(expected.isValid(c));

    // What each condition removes, against spaces built here without it.
    QCOMPARE(impact.count(), 1);
    const auto measured = controller.currentImpact();
    QVERIFY(measured);
    QCOMPARE(measured->conditions.size(), problem->conditions.size());
    for (std::size_t c = 0; c < problem->conditions.size(); ++c) {
        TuningProblem without = *problem;
        without.conditions.erase(without.conditions.begin() + static_cast<std::ptrdiff_t>(c));
        QVERIFY(measured->conditions[c].removed.has_value());
        QCOMPARE(*measured->conditions[c].removed, ConfigSpace::build(without, 0).size() - expected.size());
        TuningProblem alone = *problem;
        alone.conditions = {problem->conditions[c]};
        QVERIFY(measured->conditions[c].rejected.has_value());
        QCOMPARE(*measured->conditions[c].rejected,
                 expected.rawSize() - static_cast<double>(ConfigSpace::build(alone, 0).size()));
    }
}

void TestViews::controllerDropsStaleResults() {
    const auto problem = loadSgemm();
    QVERIFY(problem->shapes.size() >= 2);
    SpaceController controller;
    QSignalSpy ready(&controller, &SpaceController::spaceReady);
    QSignalSpy settled(&controller, &SpaceController::settled);

    // Both requests are made before the event loop runs, so the first one's results arrive
    // stale whenever its thread finishes.
    controller.setProblem(problem, 0);
    controller.setProblem(problem, 1);
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1, kTimeoutMs);
    QTest::qWait(50); // anything late from the first request would show up now
    QCOMPARE(ready.count(), 1);
    const auto result = ready.at(0).at(0).value<std::shared_ptr<const SpaceResult>>();
    QVERIFY(result);
    QCOMPARE(result->shapeIndex, std::size_t(1));
    QCOMPARE(result->stats.validSize, ConfigSpace::build(*problem, 1).size());

    // Clearing drops everything.
    controller.setProblem(nullptr, 0);
    QVERIFY(!controller.isBusy());
    QVERIFY(!controller.currentSpace());
}

void TestViews::controllerResamples() {
    const auto problem = loadSgemm();
    SpaceController controller;
    QSignalSpy settled(&controller, &SpaceController::settled);
    QSignalSpy sampled(&controller, &SpaceController::samplesReady);
    controller.setProblem(problem, 0);
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1, kTimeoutMs);
    QCOMPARE(sampled.count(), 1);

    controller.setSampling(5, 42);
    QVERIFY(controller.isBusy());
    QTRY_COMPARE_WITH_TIMEOUT(sampled.count(), 2, kTimeoutMs);
    const auto samples = controller.currentSamples();
    QCOMPARE(samples->seed, std::uint64_t(42));
    QCOMPARE(samples->indices, controller.currentSpace()->space->sample(5, 42));
    QTRY_VERIFY(!controller.isBusy());
}

void TestViews::controllerReportsBuildErrors() {
    // A problem made in memory whose condition names an unknown parameter: the build fails with
    // the condition's JSON pointer, and no later stage runs.
    auto problem = std::make_shared<TuningProblem>();
    problem->fileName = "made.json";
    TuningParameter p;
    p.name = "X";
    p.type = "int";
    p.values = {expr::Value::ofInt(1), expr::Value::ofInt(2)};
    p.valuesText = "[1, 2]";
    problem->parameters.push_back(p);
    problem->conditions.push_back(Condition{{}, "Y > 1"});
    problem->shapes = {Shape{}};

    SpaceController controller;
    QSignalSpy settled(&controller, &SpaceController::settled);
    QSignalSpy sampled(&controller, &SpaceController::samplesReady);
    QSignalSpy impact(&controller, &SpaceController::impactReady);
    controller.setProblem(problem, 0);
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1, kTimeoutMs);
    const auto result = controller.currentSpace();
    QVERIFY(result);
    QVERIFY(!result->ok());
    QCOMPARE(result->errorLocation, QStringLiteral("/ConfigurationSpace/Conditions/0/Expression"));
    QVERIFY2(result->errorMessage.contains("Y"), qPrintable(result->errorMessage));
    QCOMPARE(sampled.count(), 0);
    QCOMPARE(impact.count(), 0);

    // The space panel shows it inline.
    SpaceController shown;
    SpacePanel panel(&shown);
    QSignalSpy shownSettled(&shown, &SpaceController::settled);
    shown.setProblem(problem, 0);
    QTRY_VERIFY_WITH_TIMEOUT(shownSettled.count() >= 1, kTimeoutMs);
    QVERIFY(!panel.errorBanner()->isHidden());
    QVERIFY(panel.errorBanner()->details().contains("/ConfigurationSpace/Conditions/0/Expression"));
}

namespace {

// Five parameters of range(1000) and one condition over all five (issue 52's hard count).
std::shared_ptr<TuningProblem> fiveParameterProblem(const std::string& condition) {
    auto problem = std::make_shared<TuningProblem>();
    problem->fileName = "hard.json";
    for (int i = 0; i < 5; ++i) {
        TuningParameter p;
        p.name = "P" + std::to_string(i);
        p.type = "int";
        for (int v = 0; v < 1000; ++v)
            p.values.push_back(expr::Value::ofInt(v));
        p.valuesText = "list(range(1000))";
        problem->parameters.push_back(p);
    }
    problem->conditions.push_back(Condition{{}, condition});
    problem->shapes = {Shape{}};
    return problem;
}

} // namespace

// The workbench counts what the CLI counts, as fast: the count, the samples and the condition's
// impact arrive (it hung on this space).
void TestViews::controllerCountsAConditionOverManyParameters() {
    SpaceController controller;
    QSignalSpy settled(&controller, &SpaceController::settled);
    QSignalSpy impact(&controller, &SpaceController::impactReady);
    controller.setProblem(fiveParameterProblem("P0+P1+P2+P3+P4 == 17"), 0);
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1 && impact.count() == 1, kTimeoutMs);
    const auto result = controller.currentSpace();
    QVERIFY(result && result->ok());
    QCOMPARE(result->stats.validSize, std::uint64_t(5985));
    QCOMPARE(controller.currentSamples()->indices.size(), std::size_t(20));
}

// A count that no bound can shorten runs into its work limit; before that, a new problem stops
// it at once, and the new one is counted.
void TestViews::controllerCancelsACountThatCannotEnd() {
    SpaceController controller;
    QSignalSpy ready(&controller, &SpaceController::spaceReady);
    QSignalSpy settled(&controller, &SpaceController::settled);
    controller.setProblem(fiveParameterProblem("(7*P0 + 13*P1 + 17*P2 + 3*P3 + P4) % 1000 == 17"), 0);
    QTest::qWait(200); // counting by now
    QElapsedTimer timer;
    timer.start();
    const auto problem = loadSgemm();
    controller.setProblem(problem, 0);
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1, kTimeoutMs);
    QVERIFY2(timer.elapsed() < 3000, qPrintable(QString::number(timer.elapsed()) + " ms"));
    QCOMPARE(ready.count(), 1); // the first count delivers nothing
    QCOMPARE(controller.currentSpace()->problem, problem);
    QVERIFY(controller.currentSpace()->ok());
}

// ------------------------------------------------------------------------------ document

void TestViews::documentKeepsProblemOnError_data() {
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("location");
    QTest::newRow("bad JSON") << QStringLiteral("\"Conditions\": [") << QStringLiteral("\"Conditions\": [[,")
                              << QStringLiteral("line");
    QTest::newRow("unknown name") << QStringLiteral("BLOCK_K % VEC == 0") << QStringLiteral("BLOCK_K % VECTOR == 0")
                                  << QStringLiteral("/ConfigurationSpace/Conditions/6/Expression");
    QTest::newRow("syntax error") << QStringLiteral("THREAD_N % VEC == 0") << QStringLiteral("THREAD_N %% VEC == 0")
                                  << QStringLiteral("/ConfigurationSpace/Conditions/7/Expression");
    QTest::newRow("empty values") << QStringLiteral("\"Values\": \"[1, 2]\"") << QStringLiteral("\"Values\": \"[]\"")
                                  << QStringLiteral("/ConfigurationSpace/TuningParameters/6");
    QTest::newRow("bad value list") << QStringLiteral("\"Values\": \"[1, 2]\"")
                                    << QStringLiteral("\"Values\": \"[i for i in range(1, 3]\"")
                                    << QStringLiteral("/ConfigurationSpace/TuningParameters/6/Values");
}

// A problem whose kernel file is not there opens (its space needs no kernel); the kernel panel
// says why it shows nothing, and the problem says it cannot be launched.
void TestViews::documentOpensWithoutItsKernel() {
    QTemporaryDir dir;
    const QString path =
        writeSgemmVariant(dir, QStringLiteral("nokernel.json"), QStringLiteral("\"KernelFile\": \"sgemm.cu\""),
                          QStringLiteral("\"KernelFile\": \"nowhere.cu\""));
    ProblemDocument document;
    QVERIFY(document.load(path));
    QVERIFY(document.problem());
    QCOMPARE(document.problem()->launchBlockers.size(), std::size_t(1));
    QCOMPARE(document.problem()->launchBlockers.front().location(), std::string("/KernelSpecification/KernelFile"));
    QVERIFY(document.kernelError().contains(QStringLiteral("nowhere.cu")));
}

void TestViews::documentKeepsProblemOnError() {
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, location);
    QTemporaryDir dir;
    const QString bad = writeSgemmVariant(dir, QStringLiteral("bad.json"), from, to);
    QVERIFY(!bad.isEmpty());
    QVERIFY(readFile(bad) != readFile(kSgemm));

    ProblemDocument document;
    QVERIFY(document.load(kSgemm));
    const auto before = document.problem();
    QSignalSpy failed(&document, &ProblemDocument::loadFailed);
    QSignalSpy changed(&document, &ProblemDocument::problemChanged);
    QVERIFY(!document.load(bad));
    QCOMPARE(failed.count(), 1);
    QCOMPARE(changed.count(), 0);
    QCOMPARE(document.problem(), before);
    QCOMPARE(document.path(), QFileInfo(kSgemm).absoluteFilePath());
    const auto error = failed.at(0).at(0).value<ProblemError>();
    QCOMPARE(error.file, bad);
    QVERIFY2(error.location.startsWith(location), qPrintable(error.text()));
    QVERIFY(!error.message.isEmpty());
    QVERIFY(error.text().contains(QStringLiteral("bad.json")));
}

void TestViews::embeddedExample() {
    QVERIFY(embeddedExamples().contains(QStringLiteral("sgemm")));
    QTemporaryDir dir;
    QString error;
    const QString path = extractExample(QStringLiteral("sgemm"), dir.path(), &error);
    QVERIFY2(!path.isEmpty(), qPrintable(error));
    QCOMPARE(readFile(path), readFile(kSgemm));
    QCOMPARE(readFile(dir.filePath(QStringLiteral("sgemm.cu"))), readFile(kSgemmKernel));
    QVERIFY(QFileInfo(path).isWritable());
    QVERIFY(extractExample(QStringLiteral("nosuch"), dir.path(), &error).isEmpty());
    QVERIFY(error.contains(QStringLiteral("nosuch")));

    ProblemDocument document;
    QVERIFY(document.load(path, ProblemDocument::Origin::Example));
    QVERIFY(document.displayName().contains(QStringLiteral("example")));
    QVERIFY(document.kernelSource().contains(QStringLiteral("BLOCK_M")));
    QVERIFY(document.kernelError().isEmpty());
}

void TestViews::saveAs() {
    QTemporaryDir exampleDir;
    const QString example = extractExample(QStringLiteral("sgemm"), exampleDir.path());
    QVERIFY(!example.isEmpty());
    ProblemDocument document;
    QVERIFY(document.load(example, ProblemDocument::Origin::Example));
    document.setShapeIndex(1);
    const auto original = document.problem();

    // The example's kernel goes beside the copy; the copy becomes the open file.
    QTemporaryDir target;
    const QString copy = target.filePath(QStringLiteral("mine.json"));
    ProblemError error;
    QVERIFY2(document.saveAs(copy, &error), qPrintable(error.text()));
    QCOMPARE(document.path(), QFileInfo(copy).absoluteFilePath());
    QCOMPARE(document.origin(), ProblemDocument::Origin::File);
    QCOMPARE(document.shapeIndex(), 1);
    QVERIFY(QFileInfo::exists(target.filePath(QStringLiteral("sgemm.cu"))));
    QVERIFY(*document.problem() == *original);

    // A file problem saved into a subfolder keeps pointing at its kernel.
    QVERIFY(QDir(target.path()).mkdir(QStringLiteral("sub")));
    const QString nested = target.filePath(QStringLiteral("sub/again.json"));
    QVERIFY2(document.saveAs(nested, &error), qPrintable(error.text()));
    QCOMPARE(document.problem()->kernelFile, std::string("../sgemm.cu"));
    QCOMPARE(document.kernelSource(), readFile(kSgemmKernel));

    // Unwritable targets are reported, and the problem stays.
    const auto before = document.problem();
    QVERIFY(!document.saveAs(target.filePath(QStringLiteral("no/such/folder/x.json")), &error));
    QVERIFY(!error.message.isEmpty());
    QCOMPARE(document.problem(), before);
}

// ------------------------------------------------------------------------------ main window

void TestViews::mainWindowOpensAndGrabs() {
    MainWindow window(transient());
    QVERIFY(!window.document()->hasProblem());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    QSignalSpy settled(&window, &MainWindow::settled);
    QVERIFY(window.openProblem(kSgemm));
    QVERIFY(window.windowTitle().contains(QStringLiteral("sgemm.json")));
    QCOMPARE(window.problemPanel()->parameterModel()->rowCount(), 7);
    QCOMPARE(window.problemPanel()->conditionModel()->rowCount(), 9);
    QCOMPARE(window.problemPanel()->shapeBox()->count(), 2);
    QVERIFY(window.sourceView()->toPlainText().contains(QStringLiteral("BLOCK_M")));
    QVERIFY(window.isBusy()); // the space is built on another thread; the window is drawn meanwhile
    if (const QByteArray dir = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !dir.isEmpty())
        window.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/tst_views_busy.png"));
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1 && !window.isBusy(), kTimeoutMs);

    const auto problem = loadSgemm();
    const std::uint64_t expected = ConfigSpace::build(*problem, 0).size();
    QCOMPARE(window.spacePanel()->statText(QStringLiteral("valid")), formatCount(expected));
    QCOMPARE(window.spacePanel()->sampleModel()->rowCount(), 20);
    QVERIFY(window.spacePanel()->statText(QStringLiteral("order")).contains(QStringLiteral("BLOCK_M")));
    QVERIFY(window.problemPanel()->conditionModel()->index(0, ConditionModel::RemovesColumn).data().toString() !=
            QStringLiteral("…"));

    // Every model the window shows, proxies included, passes the tester with live data: the
    // testers watch every change from here to the end (a new sample, another shape).
    std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
    for (auto* view : window.findChildren<QAbstractItemView*>())
        testers.push_back(std::make_unique<QAbstractItemModelTester>(
            view->model(), QAbstractItemModelTester::FailureReportingMode::QtTest));
    QVERIFY(testers.size() >= 3); // parameters, conditions, samples at least

    // Changing the seed in the panel draws another sample.
    QSignalSpy sampled(window.spaceController(), &SpaceController::samplesReady);
    window.spacePanel()->seedBox()->setValue(99);
    QTRY_COMPARE_WITH_TIMEOUT(sampled.count(), 1, kTimeoutMs);
    QCOMPARE(window.spaceController()->currentSamples()->seed, std::uint64_t(99));
    QCOMPARE(window.spacePanel()->sampleModel()->rowCount(), 20);

    const QPixmap shot = window.grab();
    QVERIFY(!shot.isNull());
    QCOMPARE(shot.size(), window.size());
    if (const QByteArray dir = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !dir.isEmpty())
        shot.save(QString::fromLocal8Bit(dir) + QStringLiteral("/tst_views_main.png"));

    // Another shape: the space is built again and every model refilled, under the testers.
    settled.clear();
    window.problemPanel()->shapeBox()->setCurrentIndex(1);
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1 && !window.isBusy(), kTimeoutMs);
    QCOMPARE(window.spacePanel()->statText(QStringLiteral("valid")),
             formatCount(ConfigSpace::build(*problem, 1).size()));
    QCOMPARE(window.spacePanel()->sampleModel()->rowCount(), 20);
}

void TestViews::mainWindowWarnsOfAWrongLaunch() {
    // Kernel Tuner's convolution with a GlobalSize 64 times its grid in each dimension: a warning
    // banner (not a dialog) once the space is counted, saying what it compared.
    QTemporaryDir dir;
    const QString path = writeConvolutionWithGlobalSize(dir.filePath(QStringLiteral("conv64.json")), 64);
    MainWindow window(transient());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openProblem(path));
    QTRY_VERIFY_WITH_TIMEOUT(!window.launchWarnings().isEmpty(), kTimeoutMs);
    QVERIFY(!window.errorBanner()->isHidden());
    QVERIFY(window.errorBanner()->title().contains(QStringLiteral("launch")));
    QVERIFY2(window.errorBanner()->details().contains(QStringLiteral("/KernelSpecification/GlobalSize")) &&
                 window.errorBanner()->details().contains(QStringLiteral("4,096 times more blocks")),
             qPrintable(window.errorBanner()->details()));
    // An edit that makes GlobalSize agree takes the banner away.
    auto fixed = std::make_shared<TuningProblem>(*window.document()->problem());
    fixed->globalSize.x = "(ProblemSize[0] + block_size_x - 1) // block_size_x";
    fixed->globalSize.y = "(ProblemSize[1] + block_size_y - 1) // block_size_y";
    window.document()->applyEdit(fixed, QStringLiteral("GlobalSize"));
    QTRY_VERIFY_WITH_TIMEOUT(window.launchWarnings().isEmpty(), kTimeoutMs);
    QVERIFY(window.errorBanner()->isHidden());
    window.document()->undoStack()->undo(); // unmodified again: opening another asks nothing
    QTRY_VERIFY_WITH_TIMEOUT(!window.launchWarnings().isEmpty(), kTimeoutMs);
    // A problem whose launch is right says nothing.
    QVERIFY(window.openProblem(kSgemm));
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(window.launchWarnings().isEmpty(), kTimeoutMs);
    QVERIFY(window.errorBanner()->isHidden());
}

void TestViews::mainWindowShowsLoadErrors() {
    QTemporaryDir dir;
    const QString bad = writeSgemmVariant(dir, QStringLiteral("broken.json"), QStringLiteral("BLOCK_K % VEC == 0"),
                                          QStringLiteral("BLOCK_K % VECTOR == 0"));
    MainWindow window(transient());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    // With nothing open yet.
    QVERIFY(!window.openProblem(bad));
    QVERIFY(!window.errorBanner()->isHidden());
    QVERIFY(window.errorBanner()->title().contains(QStringLiteral("broken.json")));
    QVERIFY(window.errorBanner()->details().contains(QStringLiteral("/ConfigurationSpace/Conditions/6/Expression")));
    QVERIFY(!window.document()->hasProblem());

    // With a problem open: it stays, and the banner says so.
    QSignalSpy settled(&window, &MainWindow::settled);
    QVERIFY(window.openProblem(kSgemm));
    QVERIFY(window.errorBanner()->isHidden());
    const auto before = window.document()->problem();
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1, kTimeoutMs);
    QVERIFY(!window.openProblem(bad));
    QVERIFY(!window.errorBanner()->isHidden());
    QVERIFY(window.errorBanner()->details().contains(QStringLiteral("stays open")));
    QCOMPARE(window.document()->problem(), before);
    QCOMPARE(window.problemPanel()->parameterModel()->rowCount(), 7);
    QVERIFY(window.windowTitle().contains(QStringLiteral("sgemm.json")));
    QVERIFY(!window.isBusy()); // nothing was rebuilt

    // A file that is not there at all.
    QVERIFY(!window.openProblem(dir.filePath(QStringLiteral("absent.json"))));
    QVERIFY(window.errorBanner()->title().contains(QStringLiteral("absent.json")));
    QCOMPARE(window.document()->problem(), before);

    if (const QByteArray shots = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !shots.isEmpty())
        window.grab().save(QString::fromLocal8Bit(shots) + QStringLiteral("/tst_views_error.png"));
}

void TestViews::mainWindowSwitchesShapes() {
    MainWindow window(transient());
    window.show();
    QSignalSpy settled(&window, &MainWindow::settled);
    QVERIFY(window.openProblem(kSgemm));
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1, kTimeoutMs);

    const auto problem = loadSgemm();
    settled.clear();
    window.problemPanel()->shapeBox()->setCurrentIndex(1);
    QCOMPARE(window.document()->shapeIndex(), 1);
    QVERIFY(window.isBusy());
    QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1 && !window.isBusy(), kTimeoutMs);
    QCOMPARE(window.spaceController()->currentSpace()->shapeIndex, std::size_t(1));
    QCOMPARE(window.spacePanel()->statText(QStringLiteral("valid")),
             formatCount(ConfigSpace::build(*problem, 1).size()));
}

void TestViews::mainWindowTakesDrops() {
    MainWindow window(transient());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    QMimeData notProblem;
    notProblem.setUrls({QUrl::fromLocalFile(kSgemmKernel)});
    QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &notProblem, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &refused);
    QVERIFY(!refused.isAccepted());

    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(kSgemm)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    QVERIFY(window.document()->hasProblem());
    QCOMPARE(window.document()->path(), QFileInfo(kSgemm).absoluteFilePath());
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
}

void TestViews::mainWindowKeepsRecentFiles() {
    QSettings().clear();
    {
        MainWindow window; // persistent: recent files and layout go to the (redirected) settings
        QVERIFY(window.openProblem(kSgemm));
        QCOMPARE(window.recentFiles(), QStringList{QFileInfo(kSgemm).absoluteFilePath()});
        window.show();
        window.close();
        QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
    }
    // The layout is kept for the size of the screen it was arranged on.
    const QSize screen = QGuiApplication::primaryScreen()->availableGeometry().size();
    QVERIFY(!QSettings()
                 .value(QStringLiteral("MainWindow/layout-%1x%2/state").arg(screen.width()).arg(screen.height()))
                 .toByteArray()
                 .isEmpty());
    MainWindow again;
    QCOMPARE(again.recentFiles(), QStringList{QFileInfo(kSgemm).absoluteFilePath()});

    // The embedded example is not a recent file.
    QTemporaryDir dir;
    QVERIFY(again.openProblem(extractExample(QStringLiteral("sgemm"), dir.path()), ProblemDocument::Origin::Example));
    QCOMPARE(again.recentFiles().size(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(!again.isBusy(), kTimeoutMs);
}

// ------------------------------------------------------------------------------ source view

void TestViews::highlighter() {
    SourceView view;
    view.setSource(QStringLiteral("#define VEC 4\n"
                                  "__global__ void k(float* out) { // a comment\n"
                                  "    /* block\n"
                                  "       comment */ int i = threadIdx.x;\n"
                                  "}\n"));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto formatAt = [&](int line, int column) {
        const QTextBlock block = view.document()->findBlockByNumber(line);
        for (const QTextLayout::FormatRange& range : block.layout()->formats())
            if (range.start <= column && column < range.start + range.length)
                return range.format;
        return QTextCharFormat();
    };
    const QTextCharFormat directive = formatAt(0, 1);
    const QTextCharFormat qualifier = formatAt(1, 2);
    const QTextCharFormat type = formatAt(1, 11);
    const QTextCharFormat comment = formatAt(1, 36);
    const QTextCharFormat blockStart = formatAt(2, 6);
    const QTextCharFormat blockEnd = formatAt(3, 8);
    const QTextCharFormat builtin = formatAt(3, 27);
    const QTextCharFormat plain = formatAt(4, 0);
    QVERIFY(directive.hasProperty(QTextFormat::ForegroundBrush));
    QVERIFY(qualifier.hasProperty(QTextFormat::ForegroundBrush));
    QVERIFY(type.hasProperty(QTextFormat::ForegroundBrush));
    QVERIFY(comment.fontItalic());
    QVERIFY(blockStart.fontItalic());
    QVERIFY(blockEnd.fontItalic()); // the block comment spans two lines
    QVERIFY(!builtin.fontItalic());
    QCOMPARE(builtin.foreground(), qualifier.foreground());
    QVERIFY(!plain.hasProperty(QTextFormat::ForegroundBrush));
    QVERIFY(view.isReadOnly());
    QVERIFY(view.gutterWidth() > 0);
}

void TestViews::followsDarkPalette() {
    const QPalette original = QApplication::palette();
    const QPalette dark = darkPalette();
    QApplication::setPalette(dark);
    {
        MainWindow window(transient());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy settled(&window, &MainWindow::settled);
        QVERIFY(window.openProblem(kSgemm));
        QTRY_VERIFY_WITH_TIMEOUT(settled.count() >= 1 && !window.isBusy(), kTimeoutMs);
        // The highlighter picked its colours for a dark background: keywords are light.
        const QTextDocument* document = window.sourceView()->document();
        bool sawKeyword = false;
        for (QTextBlock block = document->begin(); block.isValid() && !sawKeyword; block = block.next()) {
            const int at = static_cast<int>(block.text().indexOf(QStringLiteral("constexpr")));
            if (at < 0)
                continue;
            for (const QTextLayout::FormatRange& range : block.layout()->formats()) {
                if (range.start <= at && at < range.start + range.length) {
                    QVERIFY(range.format.foreground().color().lightness() > 128);
                    sawKeyword = true;
                }
            }
        }
        QVERIFY(sawKeyword);
        if (const QByteArray shots = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !shots.isEmpty())
            window.grab().save(QString::fromLocal8Bit(shots) + QStringLiteral("/tst_views_dark.png"));
    }
    QApplication::setPalette(original);
}

QTEST_MAIN(TestViews)
#include "tst_views.moc"
