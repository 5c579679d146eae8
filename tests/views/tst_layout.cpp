// The workbench on screens of fixed sizes (the offscreen platform given one screen of the size in
// TILESCOPE_TEST_SCREEN, 1366x768 unless set; ctest runs this suite at 1366x768, 1280x800,
// 1600x1000 and 2560x1440): the window fits the screen, every visible panel is at least as wide
// as its readable minimum, the heatmap's controls stay inside their panel however many parameters
// there are, Details never breaks a word, and the layout is kept per screen size. On the demo and
// on a Kernel Tuner cache of ten parameters opened without its problem, whose Problem panel then
// shows what the recording knows; on a first problem made from a kernel (the empty results
// table's names and the value lists whole); and on a run that failed, its banner above the heatmap.

#include "common/errorbanner.h"
#include "mainwindow.h"
#include "models/conditionmodel.h"
#include "models/parametermodel.h"
#include "models/resultsmodel.h"
#include "models/resultsproxy.h"
#include "plots/heatmapwidget.h"
#include "problem/compilecheck.h"
#include "problem/problempanel.h"
#include "session/configdetails.h"
#include "session/resultsview.h"
#include "session/runpanel.h"
#include "session/sessioncontroller.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextLayout>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace tilescope;
using namespace tilescope::views;

namespace {

const QString kConvolutionCache = QStringLiteral(TILESCOPE_TEST_DATA "/tuning/conv_ktcache.json");
constexpr int kTimeoutMs = 120'000;

QSize requestedScreen() {
    const QByteArray text = qgetenv("TILESCOPE_TEST_SCREEN");
    const QList<QByteArray> parts = (text.isEmpty() ? QByteArray("1366x768") : text).split('x');
    return parts.size() == 2 ? QSize(parts[0].toInt(), parts[1].toInt()) : QSize();
}

MainWindow::Options transient() {
    MainWindow::Options options;
    options.persistent = false;
    return options;
}

void saveShot(QWidget& widget, const QString& name) {
    if (const QByteArray dir = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !dir.isEmpty())
        widget.grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + name);
}

// A panel is on screen when its dock is shown and not a hidden tab (those are moved out of the window).
bool onScreen(const QDockWidget* dock, const QWidget* window) {
    return dock->isVisible() && window->rect().intersects(QRect(dock->mapTo(window, QPoint(0, 0)), dock->size()));
}

// The places where a line of the document starts inside a word ("BLOC|K_M"); empty when words
// are kept whole.
QStringList brokenWords(const QTextDocument& document) {
    QStringList broken;
    for (QTextBlock block = document.begin(); block.isValid(); block = block.next()) {
        const QTextLayout* layout = block.layout();
        const QString text = block.text();
        for (int i = 1; layout && i < layout->lineCount(); ++i) {
            const int start = layout->lineAt(i).textStart();
            if (start > 0 && start < text.size() && !text[start - 1].isSpace() && !text[start].isSpace() &&
                text[start - 1].isLetterOrNumber() && text[start].isLetterOrNumber())
                broken << text.mid(std::max(0, start - 8), 16);
        }
    }
    return broken;
}

// The results table's column names that are cut ("ve: time (µs)" for "objective: time (µs)");
// empty when every name fits its column.
QStringList cutHeaders(const MainWindow& window) {
    QStringList cut;
    const QTableView* table = window.resultsView()->findChild<QTableView*>();
    const QHeaderView* header = table->horizontalHeader();
    for (int c = 0; c < header->count(); ++c) {
        const QString name = table->model()->headerData(c, Qt::Horizontal).toString();
        if (!header->isSectionHidden(c) &&
            header->sectionSize(c) < QFontMetrics(header->font()).horizontalAdvance(name))
            cut << name;
    }
    return cut;
}

// The Problem panel's lines of plain text that are cut at its edge ("(higher is bette"); empty
// when each reads whole, on one line or wrapped.
QStringList cutLabels(const QWidget& panel) {
    QStringList cut;
    for (const QLabel* label : panel.findChildren<QLabel*>()) {
        if (!label->isVisibleTo(&panel) || label->text().isEmpty() || Qt::mightBeRichText(label->text()))
            continue;
        const int width = label->contentsRect().width();
        const bool fits = label->wordWrap() ? label->height() >= label->heightForWidth(label->width())
                                            : label->fontMetrics().horizontalAdvance(label->text()) <= width;
        if (!fits)
            cut << label->text();
    }
    return cut;
}

// The Problem panel's value lists that do not show whole in their cells ("32, 64, 128, 256…"),
// or whose row is out of sight; empty when every list reads whole.
QStringList cutValueLists(const ProblemPanel& panel) {
    QStringList cut;
    const QTableView* view = panel.parameterView();
    const QFontMetrics metrics(view->font());
    const int margins = 2 * (view->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view) + 1);
    for (int row = 0; row < view->model()->rowCount(); ++row) {
        const QModelIndex index = view->model()->index(row, ParameterModel::ValuesColumn);
        const QString text = index.data().toString();
        const QRect cell = view->visualRect(index);
        const QRect needed = metrics.boundingRect(QRect(0, 0, cell.width() - margins, 1 << 20), Qt::TextWordWrap, text);
        if (needed.width() > cell.width() - margins || needed.height() > cell.height() ||
            !view->viewport()->rect().contains(cell))
            cut << text;
    }
    return cut;
}

// A widget's part that its window does not show (a dock too short for it): "" when all shows.
QString hiddenPart(const QWidget* widget, const QWidget* dock) {
    const QRect place(widget->mapTo(dock, QPoint(0, 0)), widget->size());
    if (dock->rect().contains(place))
        return {};
    return QStringLiteral("%1 at %2,%3 %4x%5 in a %6x%7 dock")
        .arg(widget->objectName())
        .arg(place.x())
        .arg(place.y())
        .arg(place.width())
        .arg(place.height())
        .arg(dock->width())
        .arg(dock->height());
}

// A 1D stencil of three parameters, as a user's first kernel: block_size_x, TILE and RADIUS left
// open with #ifndef guards. `typo` adds an error on every config's line 13 (a name never declared).
QByteArray stencilKernel(bool typo = false) {
    return QByteArray("// A 1D stencil: each output the mean of the 2 * RADIUS + 1 inputs around it.\n"
                      "#ifndef block_size_x\n#define block_size_x 128\n#endif\n"
                      "#ifndef TILE\n#define TILE 1\n#endif\n"
                      "#ifndef RADIUS\n#define RADIUS 1\n#endif\n\n"
                      "extern \"C\" __global__ void stencil1d(float* out, const float* in, int n) {\n"
                      "    int i = (blockIdx.x * block_size_x + threadIdx.x) * TILE;\n") +
           (typo ? "    float scale = weight[0];\n" : "    float scale = 1.0f;\n") +
           "    for (int t = 0; t < TILE; ++t, ++i)\n"
           "        if (i >= RADIUS && i < n - RADIUS) {\n"
           "            float sum = 0.0f;\n"
           "            for (int r = -RADIUS; r <= RADIUS; ++r)\n"
           "                sum += in[i + r];\n"
           "            out[i] = scale * sum / (2 * RADIUS + 1);\n"
           "        }\n"
           "}\n";
}

// The T1 problem of stencilKernel() with these values of block_size_x, TILE and RADIUS.
QByteArray stencilProblem(const char* blockSizes, const char* tiles, const char* radii) {
    return QStringLiteral(R"({
  "General": {"FormatVersion": 1},
  "ConfigurationSpace": {
    "TuningParameters": [
      {"Name": "block_size_x", "Type": "int", "Values": "%1"},
      {"Name": "TILE", "Type": "int", "Values": "%2"},
      {"Name": "RADIUS", "Type": "int", "Values": "%3"}
    ],
    "Conditions": []
  },
  "KernelSpecification": {
    "Language": "CUDA", "KernelName": "stencil1d", "KernelFile": "stencil1d.cu", "ProblemSize": [4096],
    "Arguments": [
      {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite",
       "Size": "ProblemSize[0]", "FillType": "Constant", "FillValue": 0},
      {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly",
       "Size": "ProblemSize[0]", "FillType": "Random"},
      {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "ProblemSize[0]"}
    ]
  }
}
)")
        .arg(QLatin1String(blockSizes), QLatin1String(tiles), QLatin1String(radii))
        .toUtf8();
}

bool writeFile(const QString& path, const QByteArray& text) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(text) == text.size();
}

// Gives parameter `row` of the Problem panel `values`, typed as a user types them.
void typeValues(ProblemPanel& panel, int row, const QString& values) {
    panel.selectParameter(row);
    QLineEdit* edit = panel.parameterValuesEditor();
    edit->setFocus();
    edit->selectAll();
    QTest::keyClicks(edit, values);
    QTest::keyClick(edit, Qt::Key_Return);
}

} // namespace

class TestLayout : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void screenIsTheOneAskedFor();
    void fitsTheScreen_data();
    void fitsTheScreen();
    void recordingWithoutItsProblem();
    void newProblemFromKernel();
    void failedSessionSaysWhy();
    void analysedSessionReadsAsResults();
    void layoutKeptPerScreenSize();

private:
    /// Opens `what` ("demo" or a recording's path) in `window`, shown, and waits until it is on screen.
    bool open(MainWindow& window, const QString& what, QTemporaryDir& folder);

    QTemporaryDir m_settingsDir;
};

void TestLayout::initTestCase() {
    QVERIFY(m_settingsDir.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("TilescopeTests"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_layout"));
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    QStandardPaths::setTestModeEnabled(true);
}

bool TestLayout::open(MainWindow& window, const QString& what, QTemporaryDir& folder) {
    window.show();
    if (!QTest::qWaitForWindowExposed(&window))
        return false;
    const bool started = what == QLatin1String("demo") ? window.openDemo(folder.path()) : window.openRecording(what);
    if (!started)
        return false;
    if (!QTest::qWaitFor([&]() { return window.hasResultsShown() && !window.isBusy(); }, kTimeoutMs))
        return false;
    QTest::qWait(200); // the dock sizes are applied once the window is laid out
    return true;
}

void TestLayout::screenIsTheOneAskedFor() {
    const QScreen* screen = QGuiApplication::primaryScreen();
    QVERIFY(screen);
    QCOMPARE(screen->geometry().size(), requestedScreen());
    QCOMPARE(QGuiApplication::screens().size(), 1);
}

void TestLayout::fitsTheScreen_data() {
    QTest::addColumn<QString>("what");
    QTest::addColumn<QString>("shot");
    QTest::newRow("demo") << QStringLiteral("demo") << QStringLiteral("demo");
    QTest::newRow("Kernel Tuner cache, 10 parameters") << kConvolutionCache << QStringLiteral("ktcache");
}

void TestLayout::fitsTheScreen() {
    QFETCH(QString, what);
    QFETCH(QString, shot);
    QTemporaryDir folder;
    MainWindow window(transient());
    QVERIFY(open(window, what, folder));
    const QSize screen = requestedScreen();
    saveShot(window, QStringLiteral("layout-%1-%2x%3.png").arg(shot).arg(screen.width()).arg(screen.height()));

    // The Problem panel shows how the selected (best) config launches: sgemm at 2048^3 with
    // 256 x 64 tiles of 16 x 8 is a grid of N / 64 x M / 256 blocks of 16 x 8 threads.
    if (what == QLatin1String("demo"))
        QVERIFY2(window.problemPanel()->launchText().contains(
                     QStringLiteral("a grid of 32 x 8 x 1 blocks of 128 x 1 x 1 threads (32,768 threads)")),
                 qPrintable(window.problemPanel()->launchText()));

    // The window, frame included, within the screen's available area.
    const QRect available = window.screen()->availableGeometry();
    QVERIFY2(window.frameGeometry().width() <= available.width() &&
                 window.frameGeometry().height() <= available.height(),
             qPrintable(QStringLiteral("window %1x%2 on a %3x%4 screen")
                            .arg(window.frameGeometry().width())
                            .arg(window.frameGeometry().height())
                            .arg(available.width())
                            .arg(available.height())));

    // Every panel on screen at least as wide as it reads, and tall enough for a few lines.
    const int line = window.fontMetrics().height();
    int checked = 0;
    for (QDockWidget* dock : window.findChildren<QDockWidget*>()) {
        const QVariant readable = dock->property(MainWindow::kReadableWidthProperty);
        if (!readable.isValid() || !onScreen(dock, &window))
            continue;
        ++checked;
        QVERIFY2(readable.toInt() >= window.fontMetrics().averageCharWidth() * 20, qPrintable(dock->objectName()));
        QVERIFY2(dock->width() >= readable.toInt(), qPrintable(QStringLiteral("%1 is %2 px wide, reads from %3")
                                                                   .arg(dock->objectName())
                                                                   .arg(dock->width())
                                                                   .arg(readable.toInt())));
        QVERIFY2(dock->height() >= line * 6,
                 qPrintable(QStringLiteral("%1 is %2 px high").arg(dock->objectName()).arg(dock->height())));
    }
    QVERIFY2(checked >= 4, "the problem, heatmap, results and details panels are on screen");

    // The heatmap's controls (a slice combo per parameter) inside the heatmap's panel.
    HeatmapWidget* heatmap = window.heatmap();
    int combos = 0;
    for (const QComboBox* combo : heatmap->findChildren<QComboBox*>()) {
        if (!combo->isVisibleTo(heatmap))
            continue;
        ++combos;
        const QRect place(combo->mapTo(heatmap, QPoint(0, 0)), combo->size());
        QVERIFY2(heatmap->rect().contains(place), qPrintable(QStringLiteral("a combo at %1,%2 %3x%4 outside %5x%6")
                                                                 .arg(place.x())
                                                                 .arg(place.y())
                                                                 .arg(place.width())
                                                                 .arg(place.height())
                                                                 .arg(heatmap->width())
                                                                 .arg(heatmap->height())));
    }
    QVERIFY(combos >= 4);
    QVERIFY2(heatmap->plot()->height() >= line * 8, "the plot keeps room to be read");
    // The values along the side do not print over each other (16 rows in a short plot).
    const auto ticker = heatmap->plot()->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
    QVERIFY(ticker);
    int labels = 0;
    for (const QString& label : ticker->ticks())
        labels += !label.isEmpty();
    const int tickLine = QFontMetrics(heatmap->plot()->yAxis->tickLabelFont()).height();
    QVERIFY2(labels >= 2 && labels * tickLine <= heatmap->plot()->axisRect()->height() + tickLine,
             qPrintable(QStringLiteral("%1 labels in %2 px").arg(labels).arg(heatmap->plot()->axisRect()->height())));

    // The results table's column names are not cut ("block_size_x", "objective: time (µs)").
    const QStringList cut = cutHeaders(window);
    QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QStringLiteral(" | "))));
    // Nor are the Problem panel's value lists, or its lines (the objective's formula).
    if (window.document()->hasProblem()) {
        const QStringList lists = cutValueLists(*window.problemPanel());
        QVERIFY2(lists.isEmpty(), qPrintable(lists.join(QStringLiteral(" | "))));
        const QStringList lines = cutLabels(*window.problemPanel());
        QVERIFY2(lines.isEmpty(), qPrintable(lines.join(QStringLiteral(" | "))));
    }
    // The heatmap's colour reads whole where the panel has room for it ("theoretical occupancy
    // (%)", "TFLOP/s").
    const QComboBox* colour = heatmap->quantityCombo();
    if (heatmap->width() >= colour->sizeHint().width() + window.fontMetrics().averageCharWidth() * 30)
        QVERIFY2(colour->width() >= colour->sizeHint().width(),
                 qPrintable(QStringLiteral("the colour combo is %1 px wide, its text needs %2")
                                .arg(colour->width())
                                .arg(colour->sizeHint().width())));

    // Details shows the best config as a form, no word broken across lines.
    ConfigDetailsPanel* details = window.detailsPanel();
    QVERIFY(details->shownRecord());
    const QStringList broken = brokenWords(*details->browser()->document());
    QVERIFY2(broken.isEmpty(), qPrintable(broken.join(QStringLiteral(" | "))));
    QVERIFY(details->plainText().contains(QStringLiteral("median time")));

    // Squeezed far below its readable width, Details still keeps words whole (it scrolls sideways).
    ConfigDetailsPanel narrow;
    std::vector<std::string> names;
    for (const auto& [name, value] : details->shownRecord()->config)
        names.push_back(name);
    narrow.setContext(window.results(), names, nullptr, "");
    narrow.showConfig(details->shownConfig());
    narrow.resize(window.fontMetrics().averageCharWidth() * 9, 600);
    narrow.show();
    QVERIFY(QTest::qWaitForWindowExposed(&narrow));
    QVERIFY(narrow.shownRecord());
    const QStringList squeezed = brokenWords(*narrow.browser()->document());
    QVERIFY2(squeezed.isEmpty(), qPrintable(squeezed.join(QStringLiteral(" | "))));
}

void TestLayout::recordingWithoutItsProblem() {
    QTemporaryDir folder;
    MainWindow window(transient());
    QVERIFY(open(window, kConvolutionCache, folder));
    QVERIFY(!window.document()->hasProblem());

    // The Problem panel says what the cache knows: kernel, problem size, device, the parameters
    // and the values found, and that no conditions are known.
    ProblemPanel* panel = window.problemPanel();
    QVERIFY(panel->showsRecording());
    const QString header = panel->findChild<QLabel*>(QStringLiteral("recordingHeader"))->text();
    for (const char* fact : {"convolution_kernel", "4096 × 4096", "NVIDIA A100-PCIE-40GB", "time", "900, 614 ok"})
        QVERIFY2(header.contains(QString::fromUtf8(fact)), qPrintable(header));
    const QTableWidget* table = panel->recordedParameterView();
    QCOMPARE(table->rowCount(), 10);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("block_size_x"));
    QCOMPARE(table->item(0, 2)->text(), QStringLiteral("16"));
    QCOMPARE(table->item(1, 1)->text(), QStringLiteral("1, 2, 4, 8, 16"));
    QCOMPARE(table->item(8, 1)->text(), QStringLiteral("15"));
    const QLabel* note = panel->findChild<QLabel*>(QStringLiteral("noConditionsNote"));
    QVERIFY(note && note->isVisible() && note->text().contains(QStringLiteral("No conditions are known")));
    QVERIFY(panel->openProblemButton()->isVisible());

    // The objective column shows the cache's objective, its time.
    const ResultsModel* model = window.resultsView()->model();
    const int objective = model->columnOf(ResultsModel::ColumnKind::Objective);
    QCOMPARE(model->headerData(objective, Qt::Horizontal).toString(), QStringLiteral("objective: time (µs)"));
    int filled = 0;
    for (int row = 0; row < model->rowCount(); ++row)
        filled += !model->data(model->index(row, objective)).toString().isEmpty();
    QCOMPARE(filled, 614);

    // Opening the problem that goes with it turns the panel back into the problem's.
    const QString problem = QStringLiteral(TILESCOPE_TEST_DATA "/t1corpus/kt_convolution.json");
    QVERIFY(window.openProblem(problem));
    QVERIFY(!panel->showsRecording());
    QVERIFY(panel->conditionModel()->rowCount() > 0);
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
}

void TestLayout::newProblemFromKernel() {
    // The user's first kernel, as the manual shows it: the demo open, then File > New Problem from
    // Kernel on a 1D stencil, its values typed, a sample compiled and a row of it picked.
    QTemporaryDir folder(QDir::tempPath() + QStringLiteral("/stencil1d-XXXXXX"));
    const QString kernel = folder.filePath(QStringLiteral("stencil1d.cu"));
    QVERIFY(writeFile(kernel, stencilKernel()));
    MainWindow window(transient());
    QVERIFY(open(window, QStringLiteral("demo"), folder));
    QVERIFY(window.newProblemFromKernel(kernel));
    QCOMPARE(window.errorBanner()->title(),
             QStringLiteral("A first problem for stencil1d.cu: 3 parameters found, each with one value"));
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
    // Nothing of the demo stays; the empty results table's column names read whole.
    QCOMPARE(window.resultsView()->model()->rowCount(), 0);
    QVERIFY(!window.detailsPanel()->shownRecord());
    QStringList cut = cutHeaders(window);
    QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QStringLiteral(" | "))));
    QTest::qWait(200);
    const QSize screen = requestedScreen();
    const QString size = QStringLiteral("%1x%2").arg(screen.width()).arg(screen.height());
    saveShot(window, QStringLiteral("new-problem-%1.png").arg(size));

    // Values typed: every list reads whole, the longest wrapping in its cell.
    ProblemPanel* panel = window.problemPanel();
    typeValues(*panel, 0, QStringLiteral("32, 64, 128, 256, 512, 1024"));
    typeValues(*panel, 1, QStringLiteral("1, 2, 4, 8"));
    typeValues(*panel, 2, QStringLiteral("1, 2, 3"));
    QTRY_VERIFY_WITH_TIMEOUT(panel->countLabel()->text().startsWith(QStringLiteral("72 valid of 72 raw")), kTimeoutMs);
    QTest::qWait(200); // the rows settle, the split follows them
    const QStringList lists = cutValueLists(*panel);
    QVERIFY2(lists.isEmpty(), qPrintable(lists.join(QStringLiteral(" | "))));

    // A sample compiled for sm_90, a row picked: Details says what compiling told of it.
    auto* compileDock = window.findChild<QDockWidget*>(QStringLiteral("compileDock"));
    QVERIFY(compileDock);
    compileDock->raise();
    CompileCheckPanel* check = window.compileCheck();
    check->countBox()->setValue(8);
    QTest::mouseClick(check->compileButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!check->isBusy(), kTimeoutMs);
    QCOMPARE(check->table()->rowCount(), 8);
    QTableWidget* table = check->table();
    // Every column in sight and named whole ("Limited by" was pushed off the edge), the configs
    // wrapping between their parameters.
    QTest::qWait(50);
    const QHeaderView* checkHeader = table->horizontalHeader();
    for (int c = 0; c < table->columnCount(); ++c) {
        const QString name = table->horizontalHeaderItem(c)->text();
        QVERIFY2(checkHeader->sectionViewportPosition(c) + checkHeader->sectionSize(c) <= table->viewport()->width(),
                 qPrintable(QStringLiteral("%1 ends past the table's edge").arg(name)));
        QVERIFY2(checkHeader->sectionSize(c) >= QFontMetrics(checkHeader->font()).horizontalAdvance(name),
                 qPrintable(QStringLiteral("%1 is cut").arg(name)));
    }
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualItemRect(table->item(1, 1)).center());
    QCOMPARE(window.selectedConfig(), check->configAt(1));
    QVERIFY(window.detailsPanel()->showsCompiledSample());
    const QStringList broken = brokenWords(*window.detailsPanel()->browser()->document());
    QVERIFY2(broken.isEmpty(), qPrintable(broken.join(QStringLiteral(" | "))));
    QTest::qWait(200);
    saveShot(window, QStringLiteral("new-problem-compiled-%1.png").arg(size));
    const QRect available = window.screen()->availableGeometry();
    QVERIFY(window.frameGeometry().width() <= available.width() &&
            window.frameGeometry().height() <= available.height());
}

void TestLayout::failedSessionSaysWhy() {
    // A run that stops: the stencil with a typo on every config's line, analysed for sm_90. The
    // banner above the heatmap says why, once (not again across the window), and the heatmap, its
    // controls and legend stay whole under it.
    QTemporaryDir folder(QDir::tempPath() + QStringLiteral("/stencil1d-XXXXXX"));
    QVERIFY(writeFile(folder.filePath(QStringLiteral("stencil1d.cu")), stencilKernel(true)));
    QVERIFY(writeFile(folder.filePath(QStringLiteral("stencil1d.json")),
                      stencilProblem("[32, 64, 128, 256, 512, 1024]", "[1, 2, 4, 8]", "[1, 2, 3]")));
    MainWindow window(transient());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openProblem(folder.filePath(QStringLiteral("stencil1d.json"))));
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
    RunPanel* run = window.runPanel();
    QVERIFY(run->setAnalysisArch(QStringLiteral("sm_90")));
    run->setDatabasePath(folder.filePath(QStringLiteral("results.db")));
    QSignalSpy failed(window.sessionController(), &SessionController::failed);
    QTest::mouseClick(run->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsLoaded(), kTimeoutMs);

    auto* verdict = window.findChild<QLabel*>(QStringLiteral("verdictBanner"));
    QVERIFY(verdict);
    QTRY_VERIFY(verdict->isVisible());
    QVERIFY2(verdict->text().startsWith(QStringLiteral("The session failed: ")), qPrintable(verdict->text()));
    QVERIFY2(verdict->text().contains(QStringLiteral("identifier \"weight\" is undefined")),
             qPrintable(verdict->text()));
    QVERIFY(window.errorBanner()->isHidden()); // said once, where the results are
    QTest::qWait(200);
    auto* heatmapDock = window.findChild<QDockWidget*>(QStringLiteral("heatmapDock"));
    QVERIFY(heatmapDock);
    for (const QWidget* part : {static_cast<const QWidget*>(verdict), static_cast<const QWidget*>(window.heatmap())}) {
        const QString hidden = hiddenPart(part, heatmapDock);
        QVERIFY2(hidden.isEmpty(), qPrintable(hidden));
    }
    const QStringList cut = cutHeaders(window);
    QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QStringLiteral(" | "))));
    // "compile_error" whole in its column.
    const QTableView* results = window.resultsView()->findChild<QTableView*>();
    const int status = window.resultsView()->model()->columnOf(ResultsModel::ColumnKind::Status);
    QVERIFY(results->horizontalHeader()->sectionSize(status) >
            QFontMetrics(results->font()).horizontalAdvance(QStringLiteral("compile_error")));
    // A failed config picked: Details gives NVRTC's words.
    window.selectConfig(QString::fromStdString(configJson(window.results()->front().config)));
    QVERIFY2(window.detailsPanel()->plainText().contains(QStringLiteral("compile_error — ")),
             qPrintable(window.detailsPanel()->plainText()));
    QTest::qWait(200);
    const QSize screen = requestedScreen();
    saveShot(window, QStringLiteral("failed-session-%1x%2.png").arg(screen.width()).arg(screen.height()));
}

void TestLayout::analysedSessionReadsAsResults() {
    // A run on the analysis backend: every config compiled for sm_90 and read, none timed. Its
    // heatmap is coloured by occupancy, the colour's name whole; the results table leaves out
    // the time columns that would stay empty, so that the registers come into sight.
    QTemporaryDir folder(QDir::tempPath() + QStringLiteral("/stencil1d-XXXXXX"));
    QVERIFY(writeFile(folder.filePath(QStringLiteral("stencil1d.cu")), stencilKernel()));
    QVERIFY(writeFile(folder.filePath(QStringLiteral("stencil1d.json")),
                      stencilProblem("[32, 64, 128, 256]", "[1, 2, 4]", "[1]")));
    MainWindow window(transient());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.openProblem(folder.filePath(QStringLiteral("stencil1d.json"))));
    QTRY_VERIFY_WITH_TIMEOUT(!window.isBusy(), kTimeoutMs);
    RunPanel* run = window.runPanel();
    QVERIFY(run->setAnalysisArch(QStringLiteral("sm_90")));
    run->setDatabasePath(folder.filePath(QStringLiteral("results.db")));
    QSignalSpy finished(window.sessionController(), &SessionController::finished);
    QTest::mouseClick(run->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(window.hasResultsLoaded() && window.results()->size() == 12, kTimeoutMs);
    QTest::qWait(200);

    // Coloured: by occupancy, 50 % for the blocks of 32 threads and 100 % for the others.
    HeatmapWidget* heatmap = window.heatmap();
    QCOMPARE(heatmap->spec().quantity.kind, QuantityKind::TheoreticalOccupancy);
    QVERIFY(heatmap->grid());
    QVERIFY(heatmap->grid()->best.valid());
    QCOMPARE(heatmap->grid()->analysedCount, std::size_t(12));
    int coloured = 0;
    for (int x = 0; x < heatmap->colorMap()->data()->keySize(); ++x)
        for (int y = 0; y < heatmap->colorMap()->data()->valueSize(); ++y)
            coloured += std::isfinite(heatmap->colorMap()->data()->cell(x, y)) ? 1 : 0;
    QCOMPARE(coloured, 12);
    const QComboBox* colour = heatmap->quantityCombo();
    QVERIFY2(colour->width() >= colour->sizeHint().width(),
             qPrintable(QStringLiteral("'%1' in %2 px").arg(colour->currentText()).arg(colour->width())));

    // The table: no time columns, the registers in sight, the highest occupancy first.
    const QTableView* table = window.resultsView()->table();
    const ResultsModel* model = window.resultsView()->model();
    for (const ResultsModel::ColumnKind kind : {ResultsModel::ColumnKind::Time, ResultsModel::ColumnKind::Objective})
        QVERIFY(table->isColumnHidden(model->columnOf(kind)));
    const int regs = model->columnOf(ResultsModel::ColumnKind::Registers);
    const QHeaderView* header = table->horizontalHeader();
    QVERIFY2(header->sectionViewportPosition(regs) + header->sectionSize(regs) <= table->viewport()->width(),
             "the registers are out of sight");
    // In the order they rank (occupancy, spills, registers, then the space's), whatever the order
    // their compiles finished in.
    const std::vector<ResultRecord> byRank = ranked(*window.results());
    const ResultsProxyModel* proxy = window.resultsView()->proxy();
    QCOMPARE(proxy->rowCount(), int(byRank.size()));
    for (int row = 0; row < proxy->rowCount(); ++row)
        QCOMPARE(model->configJsonAt(proxy->mapToSource(proxy->index(row, 0)).row()),
                 QString::fromStdString(configJson(byRank[static_cast<std::size_t>(row)].config)));
    const QStringList cut = cutHeaders(window);
    QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QStringLiteral(" | "))));
    // The best picked: Details says what compiling told of it.
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(table->model()->index(0, 0)).center());
    QTRY_VERIFY(window.detailsPanel()->shownRecord());
    QVERIFY2(window.detailsPanel()->plainText().contains(QStringLiteral("analysed — not measured")),
             qPrintable(window.detailsPanel()->plainText()));
    QTest::qWait(200);
    const QSize screen = requestedScreen();
    saveShot(window, QStringLiteral("analysed-session-%1x%2.png").arg(screen.width()).arg(screen.height()));
}

void TestLayout::layoutKeptPerScreenSize() {
    QSettings().clear();
    const QSize screen = QGuiApplication::primaryScreen()->availableGeometry().size();
    const QString group = QStringLiteral("layout-%1x%2").arg(screen.width()).arg(screen.height());
    const auto detailsOf = [](MainWindow& w) { return w.findChild<QDockWidget*>(QStringLiteral("detailsDock")); };
    const auto shown = [](MainWindow& w) {
        w.show();
        const bool exposed = QTest::qWaitForWindowExposed(&w);
        QTest::qWait(100);
        return exposed;
    };
    QByteArray arranged;
    {
        MainWindow window; // persistent: the layout goes to the (redirected) settings on close
        QVERIFY(shown(window));
        detailsOf(window)->hide(); // the user closes the Details panel
        arranged = window.saveState(2);
        QVERIFY(window.close());
    }
    QSettings settings;
    settings.beginGroup(QStringLiteral("MainWindow"));
    QStringList layouts = settings.childGroups().filter(QStringLiteral("layout-"));
    QCOMPARE(layouts, QStringList{group});
    QVERIFY(!settings.value(group + QStringLiteral("/state")).toByteArray().isEmpty());
    {
        MainWindow again;
        QVERIFY(shown(again));
        QVERIFY(detailsOf(again)->isHidden()); // as arranged on this screen
        QVERIFY(again.close());
    }
    // A layout arranged on another screen size is not applied on this one.
    settings.remove(group);
    settings.setValue(QStringLiteral("layout-640x480/state"), arranged);
    settings.sync();
    MainWindow other;
    QVERIFY(shown(other));
    QVERIFY(!detailsOf(other)->isHidden());
}

int main(int argc, char** argv) {
    // One offscreen screen of the size asked for, before the application starts.
    const QSize size = requestedScreen();
    if (!size.isValid()) {
        std::fprintf(stderr, "TILESCOPE_TEST_SCREEN must be WIDTHxHEIGHT\n");
        return 2;
    }
    QTemporaryDir dir;
    const QString config = dir.filePath(QStringLiteral("screen.json"));
    QFile file(config);
    if (!dir.isValid() || !file.open(QIODevice::WriteOnly))
        return 2;
    file.write(QStringLiteral(R"({"screens": [{"name": "test", "x": 0, "y": 0, "width": %1, "height": %2,
                                 "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})")
                   .arg(size.width())
                   .arg(size.height())
                   .toUtf8());
    file.close();
    qputenv("QT_QPA_PLATFORM", ("offscreen:configfile=" + config).toLocal8Bit());
    QApplication app(argc, argv);
    TestLayout test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_layout.moc"
