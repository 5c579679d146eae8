// The workbench window as a whole, on the offscreen platform: the embedded default (the sgemm
// example with the demo recording of a whole H200 session: the heatmap shows it, the table holds
// its 2,761 results), selection kept in step across the heatmap, the scatter plot, the table and
// Details, recordings opened by dropping them, a shape set tuned from the Run panel shown as an
// opened one, the export dialog writing every format (files that parse, import back, compile),
// the cross-GPU view compiling a sample of sgemm for two archs with NVRTC, and the models it
// shows under QAbstractItemModelTester (the models alone are tests/views/models/tst_models).

#include "common/errorbanner.h"
#include "common/examples.h"
#include "compare/compareview.h"
#include "crossgpu/crossgpuview.h"
#include "exchange/bestconfigs.h"
#include "exchange/exportformat.h"
#include "exchange/kerneltunercache.h"
#include "exchange/recording.h"
#include "export/exportdialog.h"
#include "mainwindow.h"
#include "measure/replay/replaybackend.h"
#include "models/conditionmodel.h"
#include "models/crossgpumodel.h"
#include "models/parametermodel.h"
#include "models/resultsmodel.h"
#include "models/sessionlistmodel.h"
#include "plots/heatmapwidget.h"
#include "plots/scatterwidget.h"
#include "problem/problemdocument.h"
#include "problem/problempanel.h"
#include "problem/spacecontroller.h"
#include "session/configdetails.h"
#include "session/resultsheadline.h"
#include "session/resultsview.h"
#include "session/runpanel.h"
#include "session/sessioncontroller.h"
#include "shapes/shapesview.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/tuningsession.h"

#include <qcustomplot.h>

#include "darkpalette.h"

#include <nlohmann/json.hpp>

#include <QAbstractItemModelTester>
#include <QAbstractItemView>
#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>

using namespace tilescope;
using namespace tilescope::views;

namespace {

const QString kSgemm = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
const QString kDemo = QStringLiteral(TILESCOPE_SOURCE_DIR "/resources/demo/sgemm-h200-2048.t4.json.gz");
const QString kKernelTunerCache = QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny_ktcache.json");
constexpr int kDemoResults = 2761;
constexpr int kTimeoutMs = 120'000;

MainWindow::Options transient() {
    MainWindow::Options options;
    options.persistent = false;
    return options;
}

QString readText(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

void saveShot(QWidget& widget, const QString& name) {
    if (const QByteArray dir = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !dir.isEmpty())
        widget.grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + name);
}

QPoint cellCentre(const HeatmapWidget& widget, CellIndex cell) {
    return QPoint(static_cast<int>(std::lround(widget.plot()->xAxis->coordToPixel(cell.x))),
                  static_cast<int>(std::lround(widget.plot()->yAxis->coordToPixel(cell.y))));
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void classifiesFiles_data();
    void classifiesFiles();

    void defaultStartShowsDemo();
    void selectionFollowsEveryView();
    void newProblemPutsTheResultsAway();
    void emptyTableNamesTheProblem();
    void resultsFolderNamedOnce();
    void plotsFollowThePalette();
    void runReplaysDemoAndPlotsExport();
    void opensDroppedRecordings();
    void opensProblemsWrittenForKernelTuner();
    void opensShapeSets();
    void opensADatabaseWhoseProblemIsGone();
    void runsShapeSetsFromTheRunPanel();
    void comparesTwoGpus();
    void headlineSaysWhatTheGpuDid();
    void bannerSaysTheVerdict();
    void shortcutsAndDocks();

    void exportDialogWritesEveryFormat_data();
    void exportDialogWritesEveryFormat();
    void exportDialogExplainsWhatCannotBeWritten();
    void exportDialogReadsDatabases();

    void crossGpuViewCompilesSample();

private:
    // The demo's sessions, read once.
    const std::vector<SessionData>& demoSessions();

    QTemporaryDir m_settingsDir;
    QTemporaryDir m_cacheDir;
    std::vector<SessionData> m_demo;
};

void TestMainWindow::initTestCase() {
    QVERIFY(m_settingsDir.isValid());
    QVERIFY(m_cacheDir.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("TilescopeTests"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    // Runs write their results database under the data folder: keep it out of the user's.
    QStandardPaths::setTestModeEnabled(true);
}

const std::vector<SessionData>& TestMainWindow::demoSessions() {
    if (m_demo.empty())
        m_demo = readRecording(kDemo.toStdString());
    return m_demo;
}

// ------------------------------------------------------------------------------ files

void TestMainWindow::classifiesFiles_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("recording");
    QTest::newRow("T1 problem") << kSgemm << false;
    QTest::newRow("gzip T4") << kDemo << true;
    QTest::newRow("Kernel Tuner cache") << kKernelTunerCache << true;
    QTest::newRow("plain T4") << QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny_t4.json") << true;
    QTest::newRow("tiny problem") << QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny.json") << false;
}

void TestMainWindow::classifiesFiles() {
    QFETCH(QString, path);
    QFETCH(bool, recording);
    QCOMPARE(MainWindow::classifyFile(path) == MainWindow::FileKind::Recording, recording);
}

// ------------------------------------------------------------------------------ the default start

void TestMainWindow::defaultStartShowsDemo() {
    QTemporaryDir folder;
    MainWindow window(transient());
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(!window.hasResultsShown());

    QSignalSpy shown(&window, &MainWindow::resultsShown);
    QVERIFY(window.openDemo(folder.path()));
    QCOMPARE(window.document()->shapeIndex(), kDemoShapeIndex);
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown(), kTimeoutMs);
    QVERIFY(shown.count() >= 1);
    QVERIFY(window.isDemo());
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);

    // The heatmap: BLOCK_N along the bottom, BLOCK_M down the side, TFLOP/s, best per cell.
    const auto grid = window.heatmap()->grid();
    QVERIFY(grid && !grid->empty());
    QCOMPARE(grid->spec.xParameter, std::string("BLOCK_N"));
    QCOMPARE(grid->spec.yParameter, std::string("BLOCK_M"));
    QCOMPARE(grid->spec.quantity.kind, QuantityKind::Objective);
    QCOMPARE(grid->spec.reduction, Reduction::Best);
    QCOMPARE(grid->columns(), 4);
    QCOMPARE(grid->rows(), 4);
    QCOMPARE(grid->okCount, std::size_t(kDemoResults));
    QVERIFY(grid->best.valid());
    QVERIFY(std::abs(grid->cell(grid->best).value - 43.43) < 0.01); // the recorded best, 43.43 TFLOP/s

    // The table and the scatter plot hold every result; the window says what it is.
    QCOMPARE(window.resultsView()->model()->rowCount(), kDemoResults);
    QCOMPARE(int(window.results()->size()), kDemoResults);
    QVERIFY(window.scatter()->data() && !window.scatter()->data()->points.empty());
    QVERIFY(window.windowTitle().contains(QStringLiteral("demo")));
    QVERIFY(window.windowTitle().contains(QStringLiteral("NVIDIA H200")));
    QVERIFY(window.sessionController()->session().deviceName == "NVIDIA H200");
    QCOMPARE(window.spaceController()->currentSpace()->shapeIndex, std::size_t(kDemoShapeIndex));
    QVERIFY(window.errorBanner()->isHidden());
    // The demo is not a recent file; the Run panel replays it.
    QVERIFY(window.recentFiles().isEmpty());

    // Every model the window shows passes the tester with live data.
    for (auto* view : window.findChildren<QAbstractItemView*>()) {
        QAbstractItemModelTester tester(view->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        Q_UNUSED(tester);
    }
    saveShot(window, QStringLiteral("tst_mainwindow_demo.png"));
}

void TestMainWindow::newProblemPutsTheResultsAway() {
    // The demo on screen, its best config picked; then File > New Problem from Kernel on a 1D
    // stencil of three parameters: the new problem has no results yet, so none of the demo's
    // stay (table, heatmap, scatter, Details, the picked config, the title's recording).
    QTemporaryDir folder;
    const QString kernel = folder.filePath(QStringLiteral("stencil1d.cu"));
    {
        QFile file(kernel);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("#ifndef block_size_x\n#define block_size_x 128\n#endif\n"
                   "#ifndef TILE\n#define TILE 1\n#endif\n"
                   "#ifndef RADIUS\n#define RADIUS 1\n#endif\n"
                   "extern \"C\" __global__ void stencil1d(float* out, const float* in, int n) {\n"
                   "    int i = (blockIdx.x * block_size_x + threadIdx.x) * TILE;\n"
                   "    for (int t = 0; t < TILE; ++t, ++i)\n"
                   "        if (i >= RADIUS && i < n - RADIUS) {\n"
                   "            float sum = 0.0f;\n"
                   "            for (int r = -RADIUS; r <= RADIUS; ++r) sum += in[i + r];\n"
                   "            out[i] = sum / (2 * RADIUS + 1);\n"
                   "        }\n"
                   "}\n");
    }
    MainWindow window(transient());
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openDemo(folder.path()));
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown(), kTimeoutMs);
    QTRY_VERIFY(!window.selectedConfig().isEmpty()); // the best, picked as the recording opened
    QVERIFY(window.detailsPanel()->shownRecord());

    // While a run goes, its results stay: the new problem waits until it is cancelled.
    SessionController::Request request;
    request.problem = window.document()->problem();
    request.backend = QStringLiteral("replay:") + kDemo;
    request.options.shapeIndex = kDemoShapeIndex;
    request.databasePath = folder.filePath(QStringLiteral("run.db"));
    request.replayDelay = std::chrono::milliseconds(20);
    window.sessionController()->start(request);
    QTRY_VERIFY_WITH_TIMEOUT(window.sessionController()->isRunning(), kTimeoutMs);
    QVERIFY(!window.newProblemFromKernel(kernel));
    QCOMPARE(window.errorBanner()->title(), QStringLiteral("A run is in progress"));
    QVERIFY(window.document()->displayName().startsWith(QStringLiteral("sgemm.json")));
    window.sessionController()->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!window.sessionController()->isRunning(), kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown(), kTimeoutMs);

    QVERIFY(window.newProblemFromKernel(kernel));
    QCOMPARE(window.errorBanner()->title(),
             QStringLiteral("A first problem for stencil1d.cu: 3 parameters found, each with one value"));
    QCOMPARE(window.document()->problem()->parameters.size(), std::size_t(3));
    QCOMPARE(window.results()->size(), std::size_t(0));
    QCOMPARE(window.resultsView()->model()->rowCount(), 0);
    QVERIFY(!window.hasResultsLoaded());
    QVERIFY(!window.scatter()->data() || window.scatter()->data()->points.empty());
    QVERIFY(window.selectedConfig().isEmpty());
    QVERIFY(!window.detailsPanel()->shownRecord());
    QVERIFY2(window.detailsPanel()->plainText().startsWith(QStringLiteral("Select a config")),
             qPrintable(window.detailsPanel()->plainText()));
    QVERIFY(!window.isDemo());
    QVERIFY2(!window.windowTitle().contains(QStringLiteral("demo")), qPrintable(window.windowTitle()));
    QVERIFY2(window.windowTitle().startsWith(QStringLiteral("stencil1d.json")), qPrintable(window.windowTitle()));
    QVERIFY(window.sessionController()->session().kernel.empty());
    auto* verdict = window.findChild<QLabel*>(QStringLiteral("verdictBanner"));
    QVERIFY(verdict && verdict->isHidden());
    // The empty table names the new problem's parameters and objective, not the demo's.
    const ResultsModel* model = window.resultsView()->model();
    const auto header = [model](ResultsModel::ColumnKind kind) {
        return model->headerData(model->columnOf(kind), Qt::Horizontal).toString();
    };
    QCOMPARE(model->headerData(0, Qt::Horizontal).toString(), QStringLiteral("block_size_x"));
    QCOMPARE(model->columnOf(ResultsModel::ColumnKind::Status), 3);
    QCOMPARE(header(ResultsModel::ColumnKind::Objective), QStringLiteral("objective: time (µs)"));
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
}

void TestMainWindow::emptyTableNamesTheProblem() {
    // Before its first run, a problem ranked by TFLOP/s says so in the results table's columns,
    // beside its parameters.
    MainWindow window(transient());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openProblem(kSgemm));
    const ResultsModel* model = window.resultsView()->model();
    QCOMPARE(model->headerData(model->columnOf(ResultsModel::ColumnKind::Objective), Qt::Horizontal).toString(),
             QStringLiteral("TFLOP/s"));
    QCOMPARE(model->headerData(0, Qt::Horizontal).toString(), QStringLiteral("BLOCK_M"));
    QCOMPARE(model->rowCount(), 0);
    // Each parameter's column as wide as its name needs (or the default width), not as the column
    // that stood in its place before (the wider status or objective of the table without parameters).
    QHeaderView* header = window.resultsView()->table()->horizontalHeader();
    const QFontMetrics metrics(header->font());
    const int status = model->columnOf(ResultsModel::ColumnKind::Status);
    for (int c = 0; c < status; ++c) {
        const QString name = model->headerData(c, Qt::Horizontal).toString();
        const int fitted =
            std::max(header->defaultSectionSize(), metrics.horizontalAdvance(name) + 3 * metrics.averageCharWidth());
        QVERIFY2(header->sectionSize(c) == fitted,
                 qPrintable(QStringLiteral("%1: %2 px").arg(name).arg(header->sectionSize(c))));
    }
    // A width the user gave a column stays with its name when the columns are made again.
    header->resizeSection(1, 333);
    window.resultsView()->setResults({}, {"BLOCK_N", "BLOCK_M"}, "TFLOP/s");
    QCOMPARE(model->headerData(0, Qt::Horizontal).toString(), QStringLiteral("BLOCK_N"));
    QCOMPARE(header->sectionSize(0), 333);
    QVERIFY(header->sectionSize(1) < 333);
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
}

void TestMainWindow::resultsFolderNamedOnce() {
    // The program's organisation and application are both "Tilescope": its runs write to
    // Tilescope/results.db in the data folder, not Tilescope/Tilescope/.
    const QString organisation = QCoreApplication::organizationName();
    const QString application = QCoreApplication::applicationName();
    QCoreApplication::setOrganizationName(QStringLiteral("Tilescope"));
    QCoreApplication::setApplicationName(QStringLiteral("Tilescope"));
    const QString path = [] {
        MainWindow window(transient());
        return window.runPanel()->databasePath();
    }();
    QCoreApplication::setOrganizationName(organisation);
    QCoreApplication::setApplicationName(application);
    const QString data = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
    QCOMPARE(path, data + QStringLiteral("/Tilescope/results.db"));
    QVERIFY2(!path.contains(QStringLiteral("Tilescope/Tilescope")), qPrintable(path));
}

void TestMainWindow::selectionFollowsEveryView() {
    QTemporaryDir folder;
    MainWindow window(transient());
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openDemo(folder.path()));
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown(), kTimeoutMs);
    HeatmapWidget* heatmap = window.heatmap();
    heatmap->plot()->replot();

    // A click on the heatmap's best cell selects its config everywhere.
    const auto grid = heatmap->grid();
    const std::string expected = configJson(grid->cell(grid->best).record->config);
    QSignalSpy heatmapSelected(heatmap, &HeatmapWidget::configSelected);
    QSignalSpy tableSelected(window.resultsView(), &ResultsView::configSelected);
    QTest::mouseClick(heatmap->plot(), Qt::LeftButton, {}, cellCentre(*heatmap, grid->best));
    QCOMPARE(heatmapSelected.count(), 1);
    const QString json = QString::fromStdString(expected);
    QCOMPARE(window.selectedConfig(), json);
    QCOMPARE(window.resultsView()->currentConfig(), json);
    const QModelIndex current = window.resultsView()->table()->currentIndex();
    QVERIFY(current.isValid());
    QCOMPARE(current.data(ResultsModel::ConfigJsonRole).toString(), json);
    QCOMPARE(window.scatter()->selectedConfig(), json);
    QCOMPARE(window.detailsPanel()->shownConfig(), json);
    QVERIFY(window.detailsPanel()->plainText().contains(QStringLiteral("BLOCK_M")));
    QCOMPARE(tableSelected.count(), 0); // following a selection is not a new one: no echo

    // A row picked in the table: the heatmap outlines it and Details shows it.
    ResultsView* table = window.resultsView();
    const QModelIndex other = table->table()->model()->index(5, 0);
    const QString otherJson = other.data(ResultsModel::ConfigJsonRole).toString();
    QVERIFY(!otherJson.isEmpty() && otherJson != json);
    table->table()->setCurrentIndex(other);
    QTRY_COMPARE(window.selectedConfig(), otherJson);
    QCOMPARE(window.detailsPanel()->shownConfig(), otherJson);
    QCOMPARE(window.scatter()->selectedConfig(), otherJson);
    QVERIFY(heatmap->selectConfig(otherJson)); // it is in the grid (best per cell or not, the outline finds its cell)

    // Selecting the same config again changes nothing; an unknown one clears the views.
    window.selectConfig(otherJson);
    QCOMPARE(window.detailsPanel()->shownConfig(), otherJson);
    window.selectConfig(QString());
    QVERIFY(window.resultsView()->currentConfig().isEmpty());
    QVERIFY(window.detailsPanel()->shownConfig().isEmpty());
}

void TestMainWindow::plotsFollowThePalette() {
    // A dark theme: the plots draw on its base colour with its text colour, like the tables.
    const QPalette original = QApplication::palette();
    const QPalette dark = darkPalette();
    {
        QTemporaryDir folder;
        MainWindow window(transient());
        window.resize(1600, 1000);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // The light default first, then the switch while the window is open.
        const auto corner = [](QCustomPlot* plot) { return plot->toPixmap(200, 150).toImage().pixelColor(1, 1); };
        QCOMPARE(corner(window.heatmap()->plot()), window.heatmap()->palette().color(QPalette::Base));
        QApplication::setPalette(dark);
        QVERIFY(window.openDemo(folder.path()));
        QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown() && !window.isBusy(), kTimeoutMs);
        for (QCustomPlot* plot : {window.heatmap()->plot(), window.scatter()->plot()}) {
            QCOMPARE(corner(plot), QColor(0x1e, 0x1e, 0x1e));
            QCOMPARE(plot->xAxis->tickLabelColor(), QColor(0xe0, 0xe0, 0xe0));
            QCOMPARE(plot->yAxis->labelColor(), QColor(0xe0, 0xe0, 0xe0));
        }
        saveShot(window, QStringLiteral("tst_mainwindow_dark.png"));
        window.findChild<QDockWidget*>(QStringLiteral("scatterDock"))->raise();
        QTest::qWait(50);
        saveShot(window, QStringLiteral("tst_mainwindow_dark_scatter.png"));
    }
    QApplication::setPalette(original);
}

void TestMainWindow::runReplaysDemoAndPlotsExport() {
    QTemporaryDir folder;
    MainWindow window(transient());
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openDemo(folder.path()));
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown() && !window.isLoadingResults(), kTimeoutMs);

    // File > Export Plot: PNG and PDF.
    const QString png = folder.filePath(QStringLiteral("heatmap.png"));
    const QString pdf = folder.filePath(QStringLiteral("scatter.pdf"));
    QVERIFY(window.exportPlot(window.heatmap(), png));
    QVERIFY(QImage(png).width() > 100);
    QVERIFY(window.exportPlot(window.scatter(), pdf));
    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    QVERIFY(pdfFile.read(5) == "%PDF-");

    // Ctrl+R replays the demo recording (the Run panel's default after the demo) into a
    // database; the run's snapshots feed the views.
    window.runPanel()->setDatabasePath(folder.filePath(QStringLiteral("runs.db")));
    QAction* run = nullptr;
    QAction* cancel = nullptr;
    for (QAction* action : window.findChildren<QAction*>()) {
        if (action->shortcuts().contains(QKeySequence(Qt::CTRL | Qt::Key_R)))
            run = action;
        if (action->shortcuts().contains(QKeySequence(Qt::Key_Escape)))
            cancel = action;
    }
    QVERIFY(run && cancel);
    QSignalSpy finished(window.sessionController(), &SessionController::finished);
    QSignalSpy failed(window.sessionController(), &SessionController::failed);
    run->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() >= 1, kTimeoutMs);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));
    QVERIFY(!window.isDemo());
    QVERIFY(window.sessionController()->session().id > 0);
    QTRY_COMPARE(window.resultsView()->model()->rowCount(), kDemoResults);
    QVERIFY(!window.windowTitle().contains(QStringLiteral("demo")));
    QVERIFY(!cancel->isEnabled());
    QVERIFY(run->isEnabled());
    QVERIFY(QFileInfo::exists(folder.filePath(QStringLiteral("runs.db"))));
    // The heatmap shows the run's results, the same best.
    QTRY_VERIFY(window.hasResultsShown());
    const auto grid = window.heatmap()->grid();
    QVERIFY(std::abs(grid->cell(grid->best).value - 43.43) < 0.01);
}

// A Kernel Tuner problem opens with its whole space; one whose kernel is missing says so in the
// banner (a warning: the space is all there) and counts all the same.
void TestMainWindow::opensProblemsWrittenForKernelTuner() {
    MainWindow window(transient());
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QString corpus = QStringLiteral(TILESCOPE_TEST_DATA "/t1corpus/");
    QVERIFY(window.openProblem(corpus + QStringLiteral("big_comprehensions.json")));
    QTRY_VERIFY_WITH_TIMEOUT(window.spaceController()->currentSpace() &&
                                 window.spaceController()->currentSpace()->space &&
                                 window.spaceController()->currentSpace()->space->size() == 342840,
                             kTimeoutMs);
    QVERIFY(window.errorBanner()->isHidden());

    QVERIFY(window.openProblem(corpus + QStringLiteral("missing_kernel.json")));
    QVERIFY(!window.errorBanner()->isHidden());
    QVERIFY(window.errorBanner()->title().contains(QStringLiteral("cannot be compiled")));
    QVERIFY(window.errorBanner()->details().contains(QStringLiteral("/KernelSpecification/KernelFile")));
    QTRY_VERIFY_WITH_TIMEOUT(window.spaceController()->currentSpace() &&
                                 window.spaceController()->currentSpace()->space &&
                                 window.spaceController()->currentSpace()->space->size() == 40,
                             kTimeoutMs);
}

void TestMainWindow::opensDroppedRecordings() {
    MainWindow window(transient());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openProblem(kSgemm));

    QMimeData notOpenable;
    notOpenable.setUrls({QUrl::fromLocalFile(QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.cu"))});
    QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &notOpenable, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &refused);
    QVERIFY(!refused.isAccepted());

    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(kDemo)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown(), kTimeoutMs);
    QCOMPARE(window.resultsView()->model()->rowCount(), kDemoResults);
    QVERIFY(!window.isDemo());
    // A recording of the open problem at its shape 1: the window looks at that shape.
    QTRY_COMPARE(window.document()->shapeIndex(), 1);
    QVERIFY(window.recentFiles().contains(QFileInfo(kDemo).absoluteFilePath()));
    QVERIFY(window.windowTitle().contains(QFileInfo(kDemo).fileName()));

    // A Kernel Tuner cache of another kernel replaces it; a bad file reports in the banner and keeps it.
    QVERIFY(window.openRecording(kKernelTunerCache));
    QTRY_COMPARE_WITH_TIMEOUT(window.sessionController()->session().kernel, std::string("scale"), kTimeoutMs);
    QTRY_VERIFY(window.resultsView()->model()->rowCount() > 0 &&
                window.resultsView()->model()->rowCount() != kDemoResults);
    QTemporaryDir dir;
    const QString broken = dir.filePath(QStringLiteral("broken.t4.json"));
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"schema_version": "1.0.0", "results": [ {"timestamp": )");
    file.close();
    const int before = window.resultsView()->model()->rowCount();
    QVERIFY(window.openRecording(broken));
    QTRY_VERIFY_WITH_TIMEOUT(!window.errorBanner()->isHidden(), kTimeoutMs);
    QVERIFY(window.errorBanner()->title().contains(QStringLiteral("broken.t4.json")));
    QCOMPARE(window.resultsView()->model()->rowCount(), before);
    QVERIFY(!window.openRecording(dir.filePath(QStringLiteral("absent.db"))));
    QVERIFY(window.errorBanner()->title().contains(QStringLiteral("absent.db")));
}

// A shape set tuned from the Run panel (gemv's shapes 0 and 1, replayed) ends as an opened set
// does: the Shapes panel comes forward, and the window shows the session of the shape it picks,
// with the problem at that shape.
void TestMainWindow::runsShapeSetsFromTheRunPanel() {
    QTemporaryDir dir;
    MainWindow window(transient());
    QVERIFY(window.openProblem(QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv/gemv_bf16.json")));
    RunPanel* panel = window.runPanel();
    panel->setDatabasePath(dir.filePath(QStringLiteral("set.db")));
    panel->setReplayRecording(QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv-bf16-h200-shapes.db"));
    panel->strategyCombo()->setCurrentIndex(panel->strategyCombo()->findData(QStringLiteral("random")));
    panel->budgetKindCombo()->setCurrentIndex(panel->budgetKindCombo()->findData(1)); // configs
    panel->budgetValueSpin()->setValue(12);
    panel->shapeSetCombo()->setCurrentIndex(2); // these shapes
    panel->shapeListEdit()->setText(QStringLiteral("0,1"));
    QSignalSpy finished(window.sessionController(), &SessionController::finished);
    QSignalSpy failed(window.sessionController(), &SessionController::failed);
    panel->startRun();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() >= 1, kTimeoutMs);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(0).toString()));

    auto* shapes = window.findChild<ShapesView*>(QStringLiteral("shapes"));
    QVERIFY(shapes);
    QTRY_VERIFY_WITH_TIMEOUT(shapes->hasShapeSet(), kTimeoutMs);
    QCOMPARE(shapes->matrix().shapes.size(), std::size_t(2));
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("shapesDock"));
    QVERIFY(dock && !dock->isHidden());
    const std::string label = shapes->matrix().shapeLabel(static_cast<std::size_t>(shapes->currentShape()));
    QTRY_COMPARE_WITH_TIMEOUT(window.sessionController()->session().shapeLabel(), label, kTimeoutMs);
    QTRY_COMPARE(window.resultsView()->model()->rowCount(), 12);
    const std::optional<std::int64_t> shown = window.sessionController()->session().shapeIndex;
    QVERIFY(shown);
    QTRY_COMPARE(window.document()->shapeIndex(), static_cast<int>(*shown));
    QVERIFY(!window.isDemo());
}

void TestMainWindow::comparesTwoGpus() {
    // The H200 session of Kernel Tuner's vector_add beside Kernel Tuner's own cache of it from an
    // RTX 4000 Ada: the Compare panel comes forward with the plot, the summary and the table.
    const QString dir = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/crossgpu/");
    MainWindow window(transient());
    QVERIFY(window.openRecording(dir + "vector_add-h200.db"));
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown(), kTimeoutMs);
    CompareView* compare = window.compareView();
    QSignalSpy compared(compare, &CompareView::compared);
    window.compareWith(dir + "rtx4000ada_vector_add_ktcache.json");
    QTRY_VERIFY_WITH_TIMEOUT(compare->comparison().has_value(), kTimeoutMs);
    QVERIFY(compared.count() >= 1);
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("compareDock"));
    QVERIFY(dock && !dock->isHidden());
    const DeviceComparison& c = *compare->comparison();
    QCOMPARE(c.configs.size(), std::size_t(15));
    QVERIFY(c.labelA.find("NVIDIA H200 (vector_add-h200.db)") == 0);
    QVERIFY(c.labelB.find("NVIDIA RTX 4000 Ada Generation") == 0);
    QCOMPARE(compare->table()->rowCount(), 15);
    QCOMPARE(compare->table()->item(0, 0)->text(), QStringLiteral("1")); // A's order first
    // 15 points, each side's winner marked once.
    int points = 0;
    int marks = 0;
    for (int i = 0; i < compare->plot()->graphCount(); ++i) {
        const int n = compare->plot()->graph(i)->dataCount();
        if (compare->plot()->graph(i)->name() == QStringLiteral("config"))
            points = n;
        else if (compare->plot()->graph(i)->name().endsWith(QStringLiteral("winner")))
            marks += n;
    }
    QCOMPARE(points, 15);
    QCOMPARE(marks, 2);
    QVERIFY(compare->summary()->toPlainText().contains(QStringLiteral("rank correlation")));
    QVERIFY(compare->summary()->toPlainText().contains(QStringLiteral("nvml_gr_clock")));
    // A row picks its config everywhere.
    QSignalSpy picked(compare, &CompareView::configSelected);
    compare->table()->selectRow(0);
    QCOMPARE(picked.count(), 1);
    QCOMPARE(picked.front().front().toString(), QStringLiteral("{\"block_size_x\":192}"));

    // Results of another kernel: the panel says why it cannot compare, nothing is left from before.
    window.compareWith(QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/tuning/tiny_ktcache.json"));
    QTRY_VERIFY_WITH_TIMEOUT(!compare->isLoading() && !compare->comparison(), kTimeoutMs);
    QVERIFY2(compare->error().contains(QStringLiteral("shares no tuning parameter")), qPrintable(compare->error()));
    QCOMPARE(compare->table()->rowCount(), 0);
}

void TestMainWindow::headlineSaysWhatTheGpuDid() {
    // The session's measured state and L2 context in the tooltip; a warning in the header when
    // the clocks moved.
    SessionInfo info;
    info.deviceName = "NVIDIA H200";
    info.provenanceJson =
        R"({"timing":{"context":"warm"},"measured_state":{"samples":3,"sm_clock_mhz":[1980,1980,1980],)"
        R"("memory_clock_mhz":[3201,3201,3201],"temperature_c":[40,52],"pstates":[0],"moved":false}})";
    ResultsOrigin origin;
    origin.recordingPath = QStringLiteral("/tmp/x.db");
    ResultsHeadline steady = describeResults(info, {}, origin);
    QVERIFY2(steady.tooltip.contains(QStringLiteral("GPU while measuring: SM 1980 MHz, memory 3201 MHz, 40-52 °C, P0")),
             qPrintable(steady.tooltip));
    QVERIFY2(steady.tooltip.contains(QStringLiteral("L2 context: warm")), qPrintable(steady.tooltip));
    QVERIFY(!steady.header.contains(QStringLiteral("clocks moved")));
    info.provenanceJson = R"({"measured_state":{"samples":3,"sm_clock_mhz":[1320,1900,1980],"temperature_c":[40,85],)"
                          R"("pstates":[0],"moved":true,"moved_note":"the SM clock ranged 1320-1980 MHz"}})";
    ResultsHeadline moved = describeResults(info, {}, origin);
    QVERIFY2(moved.header.contains(QStringLiteral("clocks moved")), qPrintable(moved.header));
    QVERIFY2(moved.tooltip.contains(QStringLiteral("the SM clock ranged 1320-1980 MHz")), qPrintable(moved.tooltip));
}

void TestMainWindow::bannerSaysTheVerdict() {
    // A database whose session found configs that leave elements unwritten, and one configs right
    // only on the first inputs: the banner above the heatmap says both; a session without wrong
    // results has none.
    QTemporaryDir dir;
    const std::string db = dir.filePath(QStringLiteral("verdict.db")).toStdString();
    {
        ResultStore store = ResultStore::open(db, StoreMode::ReadWrite);
        SessionInfo info;
        info.kernel = "skipper";
        info.backend = "cuda:0";
        info.deviceName = "NVIDIA H200";
        info.parameters = {"SKIP", "BLOCK"};
        info.provenanceJson =
            R"x({"verification": "3 configs computed wrong results: 3 leave elements unwritten that the reference )x"
            R"x(config writes (SKIP=1, BLOCK=128: argument 'out': 4,194,304 of 16,777,216 elements never written, )x"
            R"x(the first at 393,216)", "second_inputs": "the best 3 configs were verified again on a second input )x"
            R"x(set (seed 7) and agree with their reference config"})x";
        const std::int64_t id = store.createSession(info);
        for (int skip : {0, 1})
            for (int block : {128, 256, 512}) {
                ResultRecord r;
                r.config["SKIP"] = skip;
                r.config["BLOCK"] = block;
                r.measurement.status = skip ? ResultStatus::WrongResult : ResultStatus::Ok;
                r.measurement.time.medianMs = 1.0 + block / 1000.0 - skip * 0.5;
                r.measurement.time.samples = 10;
                store.append(id, r);
            }
        store.setSessionState(id, SessionState::Finished);
    }
    MainWindow window(transient());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openRecording(QString::fromStdString(db)));
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown(), kTimeoutMs);
    auto* banner = window.findChild<QLabel*>(QStringLiteral("verdictBanner"));
    QVERIFY(banner);
    QTRY_VERIFY(banner->isVisible());
    QVERIFY2(banner->text().contains(QStringLiteral("Verification: 3 configs computed wrong results: 3 leave elements "
                                                    "unwritten")),
             qPrintable(banner->text()));
    QVERIFY2(banner->text().contains(QStringLiteral("Second input set: the best 3 configs were verified again")),
             qPrintable(banner->text()));

    // The demo has no wrong result and no verdict: no banner.
    QVERIFY(window.openRecording(kDemo));
    QTRY_COMPARE_WITH_TIMEOUT(window.resultsView()->model()->rowCount(), kDemoResults, kTimeoutMs);
    QTRY_VERIFY(!banner->isVisible());

    // A failed session says why, computed from its results where it recorded no verdict.
    SessionInfo failed;
    failed.state = SessionState::Failed;
    failed.message = "the device fell off the bus";
    ResultRecord wrong;
    wrong.config["P"] = 1;
    wrong.measurement.status = ResultStatus::WrongResult;
    wrong.measurement.message = "argument 'out': 2 elements are NaN or Inf where the reference config's are finite";
    wrong.measurement.metrics = {{kVerifyNonFinite, 2}};
    const QString text = sessionVerdict(failed, {wrong});
    QVERIFY2(text.contains(QStringLiteral("The session failed: the device fell off the bus")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("hold NaN or Inf")), qPrintable(text));
}

void TestMainWindow::opensADatabaseWhoseProblemIsGone() {
    // A session tuned (replayed) from a problem whose folder is then deleted: the workbench opens
    // its database with the problem it stored, its parameters, conditions and valid count, where
    // it said "No conditions are known" of a recording.
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("problem"));
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(QFile::copy(QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny.json"), folder + "/tiny.json"));
    QVERIFY(QFile::copy(QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny.cu"), folder + "/tiny.cu"));
    const QString db = dir.filePath(QStringLiteral("tiny.db"));
    std::uint64_t valid = 0;
    {
        const TuningProblem problem = TuningProblem::load((folder + "/tiny.json").toStdString());
        valid = ConfigSpace::build(problem, 0).size();
        ResultStore store = ResultStore::open(db.toStdString());
        ReplayBackend replay(std::filesystem::path(TILESCOPE_TEST_DATA "/tuning/tiny_ktcache.json"));
        SessionOptions options;
        options.strategy = "random";
        options.budget.configs = 20;
        options.compile = SessionOptions::Compile::Never;
        options.backendLabel = "replay:tiny_ktcache.json";
        TuningSession session(problem, replay, store, options);
        QCOMPARE(session.run().progress.done, std::uint64_t(20));
    }
    QVERIFY(QDir(folder).removeRecursively());

    MainWindow window(transient());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openRecording(db));
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown(), kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(window.document()->hasProblem(), kTimeoutMs);
    ProblemDocument* document = window.document();
    QCOMPARE(document->origin(), ProblemDocument::Origin::Stored);
    QCOMPARE(document->displayName(), QStringLiteral("tiny.json (from tiny.db)"));
    QVERIFY2(document->kernelError().isEmpty(), qPrintable(document->kernelError()));
    QVERIFY(document->kernelSource().contains(QStringLiteral("__global__")));
    ProblemPanel* panel = window.problemPanel();
    QVERIFY(!panel->showsRecording());
    QAbstractItemModelTester parameters(panel->parameterModel());
    QCOMPARE(panel->parameterModel()->rowCount(), 4);
    QCOMPARE(panel->conditionModel()->rowCount(), 2);
    QString conditions;
    for (int row = 0; row < panel->conditionModel()->rowCount(); ++row)
        for (int column = 0; column < panel->conditionModel()->columnCount(); ++column)
            conditions += panel->conditionModel()->index(row, column).data().toString() + QLatin1Char('|');
    QVERIFY2(conditions.contains(QStringLiteral("BLOCK >= 32 * NUM_WARPS")) &&
                 conditions.contains(QStringLiteral("N % (BLOCK * ITEMS) == 0")),
             qPrintable(conditions));
    const auto* note = panel->findChild<QLabel*>(QStringLiteral("noConditionsNote"));
    QVERIFY(note && !note->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(panel->countLabel()->text().startsWith(QStringLiteral("%1 valid of").arg(valid)),
                             kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
    QVERIFY(window.windowTitle().contains(QStringLiteral("tiny.json (from tiny.db)")));

    // Save As writes the problem with the files the database kept beside it, and opens it.
    const QString saved = dir.filePath(QStringLiteral("again/tiny.json"));
    QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("again"))));
    ProblemError error;
    QVERIFY2(document->saveAs(saved, &error), qPrintable(error.text()));
    QCOMPARE(document->origin(), ProblemDocument::Origin::File);
    QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("again/tiny.cu"))));
    QCOMPARE(TuningProblem::load(saved.toStdString()).conditions.size(), std::size_t(2));
}

void TestMainWindow::opensShapeSets() {
    // A database of a shape set: softmax tuned on the H200 at three shapes, one session each.
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("set.db"));
    std::map<std::string, std::size_t> resultsAt; // shape label -> results of its session
    {
        ResultStore store = ResultStore::open(db.toStdString());
        for (const char* name : {"softmax-h200-8192x8192.t4.json.gz", "softmax-h200-32768x1024.t4.json.gz",
                                 "softmax-h200-4096x32768.t4.json.gz"})
            for (SessionData& s : readRecording(std::string(TILESCOPE_SOURCE_DIR "/tests/data/shapes/") + name)) {
                resultsAt[s.info.shapeLabel()] = s.results.size();
                importSession(store, std::move(s), name);
            }
    }
    MainWindow window(transient());
    QVERIFY(window.openRecording(db));
    auto* shapes = window.findChild<ShapesView*>(QStringLiteral("shapes"));
    QVERIFY(shapes);
    QTRY_VERIFY_WITH_TIMEOUT(shapes->hasShapeSet(), kTimeoutMs);
    // The panel comes forward, on the largest shape, and the window shows that shape's session.
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("shapesDock"));
    QVERIFY(dock && !dock->isHidden());
    const ShapeConfigMatrix& m = shapes->matrix();
    QCOMPARE(m.shapes.size(), std::size_t(3));
    QCOMPARE(shapes->currentShape(), 2);
    QTRY_COMPARE_WITH_TIMEOUT(window.sessionController()->session().shapeLabel(), m.shapeLabel(2), kTimeoutMs);
    QTRY_COMPARE(window.resultsView()->model()->rowCount(), static_cast<int>(resultsAt.at(m.shapeLabel(2))));
    // The heatmap: a row per shape, the table's entries first; each shape's own entry checked.
    QTableWidget* heat = shapes->heatmap();
    QCOMPARE(heat->rowCount(), 3);
    const DispatchTable& table = shapes->table();
    QVERIFY(table.worstRegret <= 0.03);
    for (int row = 0; row < 3; ++row) {
        const int column = 2 + static_cast<int>(table.choice[row]);
        QVERIFY2(heat->item(row, column)->text().startsWith(QStringLiteral("✓ ")),
                 qPrintable(heat->item(row, column)->text()));
        QVERIFY(heat->horizontalHeaderItem(column)->font().bold());
        QVERIFY(!heat->item(row, 0)->text().isEmpty()); // the regime
    }
    QVERIFY(shapes->summaryText().contains(QStringLiteral("within 3 % of their best")));
    // A looser bound never needs more entries.
    const std::size_t at3 = table.entries.size();
    shapes->setMaxRegret(0.5);
    QVERIFY(shapes->table().entries.size() <= at3);
    QVERIFY(shapes->table().worstRegret <= 0.5);
    // One control switches the window to another shape.
    QSignalSpy chosen(shapes, &ShapesView::shapeChosen);
    shapes->setCurrentShape(0);
    QCOMPARE(chosen.count(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(window.sessionController()->session().shapeLabel(), m.shapeLabel(0), kTimeoutMs);
    QTRY_COMPARE(window.resultsView()->model()->rowCount(), static_cast<int>(resultsAt.at(m.shapeLabel(0))));
    QVERIFY(shapes->verdictText().contains(QString::fromStdString(m.shapeLabel(0))));
    QVERIFY(window.windowTitle().contains(QStringLiteral("set.db")));
}

void TestMainWindow::shortcutsAndDocks() {
    MainWindow window(transient());
    auto shortcutOf = [&](const QKeySequence& sequence) -> QAction* {
        for (QAction* action : window.findChildren<QAction*>())
            if (action->shortcuts().contains(sequence))
                return action;
        return nullptr;
    };
    QVERIFY(shortcutOf(QKeySequence(Qt::CTRL | Qt::Key_O)));
    QVERIFY(shortcutOf(QKeySequence(Qt::CTRL | Qt::Key_R)));
    QVERIFY(shortcutOf(QKeySequence(Qt::CTRL | Qt::Key_E)));
    QVERIFY(shortcutOf(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S)));
    QAction* cancel = shortcutOf(QKeySequence(Qt::Key_Escape));
    QVERIFY(cancel);
    QCOMPARE(shortcutOf(QKeySequence(Qt::CTRL | Qt::Key_Period)), cancel);
    QVERIFY(!cancel->isEnabled()); // nothing runs

    // Every panel is a dock the View menu shows and hides.
    QStringList names;
    for (QDockWidget* dock : window.docks())
        names << dock->objectName();
    for (const char* name : {"problemDock", "spaceDock", "runDock", "heatmapDock", "scatterDock", "sourceDock",
                             "resultsDock", "crossGpuDock", "detailsDock"})
        QVERIFY2(names.contains(QLatin1String(name)), name);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (QDockWidget* dock : window.docks()) {
        QAction* toggle = dock->toggleViewAction();
        QVERIFY(toggle->isChecked());
        toggle->trigger();
        QVERIFY(dock->isHidden());
        toggle->trigger();
        QVERIFY(!dock->isHidden());
    }
}

// ------------------------------------------------------------------------------ export

void TestMainWindow::exportDialogWritesEveryFormat_data() {
    QTest::addColumn<int>("format");
    QTest::addColumn<QString>("file");
    QTest::newRow("t4") << int(ExportFormat::T4) << QStringLiteral("sgemm.t4.json");
    QTest::newRow("json") << int(ExportFormat::BestConfigsJson) << QStringLiteral("sgemm_best.json");
    QTest::newRow("triton") << int(ExportFormat::Triton) << QStringLiteral("sgemm_triton.py");
    QTest::newRow("cpp") << int(ExportFormat::CppHeader) << QStringLiteral("sgemm_tuned.h");
    QTest::newRow("csv") << int(ExportFormat::Csv) << QStringLiteral("sgemm.csv");
    QTest::newRow("kerneltuner") << int(ExportFormat::KernelTunerCache) << QStringLiteral("sgemm_ktcache.json");
}

void TestMainWindow::exportDialogWritesEveryFormat() {
    QFETCH(int, format);
    QFETCH(QString, file);
    const auto kind = static_cast<ExportFormat>(format);
    QTemporaryDir dir;
    ExportDialog dialog;
    QAbstractItemModelTester tester(dialog.sessionModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    dialog.setSessions(demoSessions(), QStringLiteral("the demo recording"));
    dialog.setOutputFolder(dir.path());
    dialog.setFormat(kind);
    dialog.setTopK(4);
    QCOMPARE(dialog.format(), kind);
    // The proposed name is the kernel's with the format's suffix.
    QCOMPARE(dialog.outputPath(), dir.filePath(file));
    QTRY_VERIFY_WITH_TIMEOUT(dialog.isReady(), kTimeoutMs);
    QVERIFY2(dialog.problemText().isEmpty(), qPrintable(dialog.problemText()));
    dialog.show();
    saveShot(dialog,
             QStringLiteral("tst_mainwindow_export_%1.png").arg(QString::fromStdString(exportFormatName(kind))));

    QSignalSpy exported(&dialog, &ExportDialog::exported);
    QString error;
    QVERIFY2(dialog.exportNow(&error), qPrintable(error));
    QCOMPARE(exported.count(), 1);
    const QString path = dir.filePath(file);
    QVERIFY(QFileInfo::exists(path));
    const QString text = readText(path);
    QVERIFY(!text.isEmpty());
    // The preview is the file's beginning.
    const QString preview = dialog.previewText();
    QVERIFY(!preview.isEmpty());
    QVERIFY(text.startsWith(preview));
    QVERIFY(preview.count(QLatin1Char('\n')) <= ExportDialog::kPreviewLines);

    switch (kind) {
    case ExportFormat::T4: {
        // It reads back as a recording with every result.
        const auto back = readRecording(path.toStdString());
        QCOMPARE(back.size(), std::size_t(1));
        QCOMPARE(back.front().results.size(), std::size_t(kDemoResults));
        QCOMPARE(back.front().info.deviceName, std::string("NVIDIA H200"));
        break;
    }
    case ExportFormat::BestConfigsJson: {
        const auto best = parseBestConfigsJson(text.toStdString(), path.toStdString());
        QCOMPARE(best.size(), std::size_t(1));
        QCOMPARE(best.front().kernel, std::string("sgemm"));
        QCOMPARE(best.front().config.at("BLOCK_M").asInt(), 256);
        break;
    }
    case ExportFormat::Triton:
        QVERIFY(text.contains(QStringLiteral("triton.Config(")));
        QCOMPARE(text.count(QStringLiteral("triton.Config(")), 4); // --top 4
        QVERIFY(text.contains(QStringLiteral("num_stages=")));
        break;
    case ExportFormat::CppHeader: {
        QVERIFY(text.contains(QStringLiteral("namespace sgemm")));
        const QString gxx = QStandardPaths::findExecutable(QStringLiteral("g++"));
        if (gxx.isEmpty()) {
            qInfo("g++ not found: the header's syntax is not checked");
            break;
        }
        QProcess compiler;
        compiler.start(gxx, {QStringLiteral("-std=c++17"), QStringLiteral("-fsyntax-only"), QStringLiteral("-x"),
                             QStringLiteral("c++"), path});
        QVERIFY(compiler.waitForFinished(60'000));
        QVERIFY2(compiler.exitCode() == 0, compiler.readAllStandardError().constData());
        break;
    }
    case ExportFormat::Csv: {
        const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), kDemoResults + 1);
        QVERIFY(lines.front().startsWith(QStringLiteral("session,kernel,shape,device,BLOCK_M,")));
        break;
    }
    case ExportFormat::KernelTunerCache: {
        // Kernel Tuner's own layout, and it reads back with every result.
        QVERIFY(text.contains(QStringLiteral("\"tune_params_keys\"")));
        const SessionData back = parseKernelTunerCache(text.toStdString(), path.toStdString());
        QCOMPARE(back.results.size(), std::size_t(kDemoResults));
        break;
    }
    }
}

void TestMainWindow::exportDialogExplainsWhatCannotBeWritten() {
    QTemporaryDir dir;
    ExportDialog dialog;
    QVERIFY(!dialog.exportNow());
    // Nothing to export.
    dialog.setFormat(ExportFormat::Csv);
    QTRY_VERIFY(dialog.isReady());
    QVERIFY(!dialog.problemText().isEmpty());

    // A session whose configs all failed has nothing for a header.
    std::vector<SessionData> failed(1);
    failed.front().info = demoSessions().front().info;
    for (std::size_t i = 0; i < 3; ++i) {
        ResultRecord r = demoSessions().front().results[i];
        r.measurement.status = ResultStatus::CompileError;
        r.objective.reset();
        failed.front().results.push_back(r);
    }
    dialog.setSessions(failed, QStringLiteral("failures"));
    dialog.setFormat(ExportFormat::CppHeader);
    dialog.setOutputPath(dir.filePath(QStringLiteral("x.h")));
    QTRY_VERIFY(dialog.isReady());
    QVERIFY(dialog.problemText().contains(QStringLiteral("nothing to put in a header")));
    QString error;
    QVERIFY(!dialog.exportNow(&error));
    QVERIFY(error.contains(QStringLiteral("nothing to put in a header")));
    QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("x.h"))));

    // A folder that is not there.
    dialog.setFormat(ExportFormat::Csv);
    dialog.setOutputPath(dir.filePath(QStringLiteral("no/such/folder/x.csv")));
    QTRY_VERIFY(dialog.isReady());
    QVERIFY(!dialog.exportNow(&error));
    QVERIFY(error.contains(QStringLiteral("does not exist")));

    // From the window: the dialog opens on the results on screen.
    QTemporaryDir folder;
    MainWindow window(transient());
    window.show();
    QVERIFY(window.openDemo(folder.path()));
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsShown(), kTimeoutMs);
    ExportDialog* fromWindow = window.showExportDialog();
    QVERIFY(fromWindow && fromWindow->isVisible());
    QCOMPARE(fromWindow->sessionModel()->rowCount(), 1);
    QCOMPARE(fromWindow->sessionModel()->sessions()->front().results.size(), std::size_t(kDemoResults));
}

void TestMainWindow::exportDialogReadsDatabases() {
    // A database of two sessions (the demo imported twice, the second as if on another device).
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("two.db"));
    {
        ResultStore store = ResultStore::open(db.toStdString());
        importSession(store, demoSessions().front(), "demo");
        SessionData other = demoSessions().front();
        other.info.deviceName = "NVIDIA A100";
        other.results.resize(100);
        importSession(store, other, "demo");
    }
    ExportDialog dialog;
    dialog.setOutputFolder(dir.path());
    QSignalSpy listed(&dialog, &ExportDialog::sourceChanged);
    dialog.openRecording(db);
    QTRY_COMPARE_WITH_TIMEOUT(listed.count(), 1, kTimeoutMs);
    QCOMPARE(dialog.sessionModel()->rowCount(), 2);
    QCOMPARE(dialog.sessionModel()->index(1, SessionListModel::DeviceColumn).data().toString(),
             QStringLiteral("NVIDIA A100"));

    // CSV of both, the best configs of both devices, T4 of one.
    dialog.setFormat(ExportFormat::Csv);
    QTRY_VERIFY_WITH_TIMEOUT(dialog.isReady(), kTimeoutMs);
    QVERIFY(dialog.exportNow());
    QCOMPARE(readText(dir.filePath(QStringLiteral("sgemm.csv"))).split(QLatin1Char('\n'), Qt::SkipEmptyParts).size(),
             kDemoResults + 100 + 1);
    dialog.setFormat(ExportFormat::BestConfigsJson);
    QTRY_VERIFY_WITH_TIMEOUT(dialog.isReady(), kTimeoutMs);
    QVERIFY(dialog.exportNow());
    QCOMPARE(parseBestConfigsJson(readText(dir.filePath(QStringLiteral("sgemm_best.json"))).toStdString(), "b").size(),
             std::size_t(2));
    dialog.setFormat(ExportFormat::T4);
    QCOMPARE(dialog.sessionModel()->checkedRows(), (std::vector<int>{0}));
    dialog.sessionModel()->setChecked(1, true);
    QTRY_VERIFY_WITH_TIMEOUT(dialog.isReady(), kTimeoutMs);
    QVERIFY(dialog.exportNow());
    QCOMPARE(readRecording(dir.filePath(QStringLiteral("sgemm.t4.json")).toStdString()).front().results.size(),
             std::size_t(100));
}

// ------------------------------------------------------------------------------ cross-GPU

void TestMainWindow::crossGpuViewCompilesSample() {
    auto problem = std::make_shared<const TuningProblem>(TuningProblem::load(kSgemm.toStdString()));
    auto space = std::make_shared<SpaceResult>();
    space->problem = problem;
    space->shapeIndex = 0;
    space->space = std::make_shared<const ConfigSpace>(ConfigSpace::build(*problem, 0));

    CrossGpuView view;
    QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxyTester(view.proxyModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    // The defaults: four archs, 200 configs.
    QCOMPARE(view.archs(), (std::vector<std::string>{"sm_80", "sm_86", "sm_89", "sm_90"}));
    QCOMPARE(view.configCount(), 200);

    view.setCacheDirectory(m_cacheDir.path()); // compiled for real, once, by NVRTC
    view.setSpace(space);
    view.setArchs({"sm_80", "sm_90"});
    view.setConfigCount(20);
    view.resize(1200, 600);
    view.show();
    QSignalSpy finished(&view, &CrossGpuView::finished);
    QSignalSpy progressed(&view, &CrossGpuView::progressed);
    view.start();
    QVERIFY(view.isRunning());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 600'000);
    QCOMPARE(finished.takeFirst().at(0).toBool(), false);
    QVERIFY(!view.isRunning());
    QVERIFY(progressed.count() >= 2);
    QCOMPARE(progressed.last().at(0).toInt(), 40);

    QCOMPARE(view.model()->rowCount(), 20);
    QCOMPARE(view.model()->archs(), (std::vector<std::string>{"sm_80", "sm_90"}));
    int compiled = 0;
    for (const CrossGpuRow& row : view.model()->rows()) {
        QCOMPARE(row.perArch.size(), std::size_t(2));
        QCOMPARE(row.values.size(), 7);
        for (const ConfigAnalysis& a : row.perArch)
            compiled += a.compiled() ? 1 : 0;
    }
    QCOMPARE(compiled, 40); // every sgemm config compiles on both
    using Q = CrossGpuModel::Quantity;
    const QString registers = view.model()->index(0, view.model()->column(Q::Registers, 1)).data().toString();
    QVERIFY(registers.toInt() > 0);
    const QString summary = view.summaryText();
    QVERIFY2(summary.contains(QStringLiteral("sm_80: 20 of 20 compiled")), qPrintable(summary));
    QVERIFY2(summary.contains(QStringLiteral("sm_90: 20 of 20 compiled")), qPrintable(summary));
    saveShot(view, QStringLiteral("tst_mainwindow_crossgpu.png"));

    // A row picked in the table names its config; a config picked elsewhere selects its row.
    QSignalSpy selected(&view, &CrossGpuView::configSelected);
    view.tableView()->setCurrentIndex(view.proxyModel()->index(3, 0));
    QCOMPARE(selected.count(), 1);
    const QString third = selected.takeFirst().at(0).toString();
    QCOMPARE(view.model()->rowOf(third), view.proxyModel()->mapToSource(view.proxyModel()->index(3, 0)).row());
    QVERIFY(view.selectConfig(QString::fromStdString(view.model()->rows()[7].configJson)));
    QCOMPARE(view.proxyModel()->mapToSource(view.tableView()->currentIndex()).row(), 7);
    QCOMPARE(selected.count(), 0); // no echo

    // The same sample again comes from the cache at once; cancelling a larger one stops it early.
    view.start();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60'000);
    finished.clear();
    QCOMPARE(view.model()->rowCount(), 20);
    QVERIFY(view.model()->rows().front().perArch.front().cached);
    view.setSeed(5);
    view.setConfigCount(400);
    view.start();
    QTRY_VERIFY_WITH_TIMEOUT(view.model()->rowCount() > 0, 120'000);
    view.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120'000);
    QCOMPARE(finished.takeFirst().at(0).toBool(), true);
    QVERIFY(view.model()->rowCount() < 400);
    QVERIFY(view.statusText().contains(QStringLiteral("Cancelled")));

    // The session's best results, then the config selected in the window.
    auto results = std::make_shared<const std::vector<ResultRecord>>(demoSessions().front().results);
    const std::string best = configJson(bestOf(*results)->config);
    view.setResults(results);
    view.setSource(CrossGpuView::Source::BestResults);
    view.setConfigCount(2);
    view.setArchs({"sm_90"});
    view.start();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120'000);
    finished.clear();
    QCOMPARE(view.model()->rowCount(), 2);
    QCOMPARE(nlohmann::json::parse(view.model()->rows().front().configJson), nlohmann::json::parse(best));
    const std::string second = configJson(ranked(*results)[1].config);
    view.setSelectedConfig(QString::fromStdString(second));
    view.setSource(CrossGpuView::Source::Selected);
    view.start();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120'000);
    QCOMPARE(view.model()->rowCount(), 1);
    QCOMPARE(nlohmann::json::parse(view.model()->rows().front().configJson), nlohmann::json::parse(second));
    QVERIFY(view.model()->rows().front().perArch.front().compiled());
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
