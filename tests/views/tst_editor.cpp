// The space editor, driven as a user drives it: clicks on the Problem panel's tables and
// buttons, keystrokes in its editors. Counts are checked against Python's count of the same
// edited problem (tests/data/t1corpus/python_counts.py --count), undo against the exact earlier
// problem, save against the file read back.

#include "common/errorbanner.h"
#include "compile/sass.h"
#include "mainwindow.h"
#include "models/parametermodel.h"
#include "plots/heatmapwidget.h"
#include "problem/compilecheck.h"
#include "problem/expressionedit.h"
#include "problem/kernelsourcepanel.h"
#include "problem/kernelspecdialog.h"
#include "problem/problemdocument.h"
#include "problem/problempanel.h"
#include "problem/sourceview.h"
#include "problem/spacecontroller.h"
#include "session/configdetails.h"
#include "session/runpanel.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include "tritontest.h"
#include <QAction>
#include <QComboBox>
#include <QDirIterator>
#include <QDockWidget>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QUndoStack>

#include <QtTest>

using namespace tilescope;
using namespace tilescope::views;

namespace {

const QString kCorpus = QStringLiteral(TILESCOPE_TEST_DATA "/t1corpus");
constexpr int kTimeoutMs = 60'000;

MainWindow::Options transient() {
    MainWindow::Options options;
    options.persistent = false;
    return options;
}

QString grouped(std::uint64_t n) {
    QLocale locale;
    if (locale.language() == QLocale::C)
        locale = QLocale(QLocale::English, QLocale::UnitedStates);
    locale.setNumberOptions(locale.numberOptions() & ~QLocale::OmitGroupSeparator);
    return locale.toString(static_cast<qulonglong>(n));
}

} // namespace

class TestEditor : public QObject {
    Q_OBJECT

private slots:
    void init();
    void editConditionCountsAsPython();
    void invalidExpressionKeepsTheLastCountStale();
    void conditionTextIsColoured();
    void editParametersAndAddOne();
    void undoGivesBackTheExactProblem();
    void saveThenReopenIsEqual();
    void runTakesTheEditedProblem();
    void deadValuesShow();
    void editingSgemm();
    void newProblemFromAKernel();
    void compileCheck();
    void registerRuleInOneClick();
    void spillsBySourceLine();
    void tritonSpillsByPythonLine();
    void kernelAndLaunch();
    void kernelFormKeepsEveryFile();
    void budgetSearchDeviceAndReferences();

private:
    // Copies a problem and its kernel (NAME.json, NAME.cu; from the T1 corpus unless `folder` is
    // given) into a fresh folder and opens it; waits for its count.
    void open(const QString& name, const QString& folder = kCorpus);
    // A fresh main window, shown and active; then, with a path, the problem opened and counted.
    void startWindow();
    void openPath(const QString& path);
    // Writes `text` to a file of the test's folder.
    void writeFile(const QString& name, const QByteArray& text);
    // regs.cu: UNROLL live values under __launch_bounds__(1024, 2), 32 registers a thread at
    // most, so that 64 and 128 spill (line 8 keeps them live across a loop).
    void writeRegsKernel();
    void waitForCount();
    // Python's (raw, valid) count of the problem now in the editor.
    std::pair<std::uint64_t, std::uint64_t> pythonCount();
    void clickRow(QTableView* view, int row);
    void typeInto(QLineEdit* edit, const QString& text);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<MainWindow> m_window;
    ProblemPanel* m_panel = nullptr;
    QString m_path;
};

void TestEditor::init() {
    m_window.reset();
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void TestEditor::open(const QString& name, const QString& folder) {
    for (const QString& file : {name + QStringLiteral(".json"), name + QStringLiteral(".cu")})
        QVERIFY(QFile::copy(folder + QLatin1Char('/') + file, m_dir->filePath(file)));
    openPath(m_dir->filePath(name + QStringLiteral(".json")));
}

void TestEditor::startWindow() {
    m_window = std::make_unique<MainWindow>(transient());
    m_window->resize(1600, 1000);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    m_panel = m_window->problemPanel();
}

void TestEditor::openPath(const QString& path) {
    m_path = path;
    startWindow();
    QVERIFY(m_window->openProblem(m_path));
    waitForCount();
}

void TestEditor::writeFile(const QString& name, const QByteArray& text) {
    QFile file(m_dir->filePath(name));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

void TestEditor::waitForCount() {
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->spaceController()->isBusy() &&
                                 m_panel->countLabel()->text().contains(QStringLiteral("valid of")) &&
                                 !m_panel->countLabel()->text().contains(QStringLiteral("counting")),
                             kTimeoutMs);
}

std::pair<std::uint64_t, std::uint64_t> TestEditor::pythonCount() {
    const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
    if (python.isEmpty()) {
        if (qEnvironmentVariableIsSet("CI"))
            qFatal("python3 is missing: README's install line has it, and CI must check counts against it");
        return {0, 0};
    }
    const QString edited = m_dir->filePath(QStringLiteral("edited-for-python.json"));
    m_window->document()->problem()->save(edited.toStdString());
    QProcess p;
    p.start(python, {kCorpus + QStringLiteral("/python_counts.py"), QStringLiteral("--count"), edited});
    if (!p.waitForFinished(kTimeoutMs) || p.exitCode() != 0)
        qFatal("python_counts.py failed: %s", p.readAllStandardError().constData());
    const QJsonObject counts = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    return {static_cast<std::uint64_t>(counts.value(QStringLiteral("raw")).toDouble()),
            static_cast<std::uint64_t>(counts.value(QStringLiteral("valid")).toDouble())};
}

void TestEditor::clickRow(QTableView* view, int row) {
    const QModelIndex index = view->model()->index(row, 1);
    QVERIFY(index.isValid());
    view->scrollTo(index);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(index).center());
}

void TestEditor::typeInto(QLineEdit* edit, const QString& text) {
    QVERIFY(edit->isEnabled());
    edit->setFocus();
    edit->selectAll();
    if (text.isEmpty())
        QTest::keyClick(edit, Qt::Key_Backspace);
    QTest::keyClicks(edit, text);
    QTest::keyClick(edit, Qt::Key_Return); // the edit is checked at once
}

void TestEditor::editConditionCountsAsPython() {
    open(QStringLiteral("kt_convolution"));
    QVERIFY(m_panel->countLabel()->text().startsWith(QStringLiteral("220 valid of 420 raw")));
    QVERIFY(!m_window->document()->isModified());

    clickRow(m_panel->conditionView(), 1);
    QCOMPARE(m_panel->selectedCondition(), 1);
    QCOMPARE(m_panel->conditionEditor()->text(), QStringLiteral("tile_size_x * tile_size_y <= 8"));
    typeInto(m_panel->conditionEditor(), QStringLiteral("tile_size_x * tile_size_y <= 4"));
    QCOMPARE(m_window->document()->problem()->conditions[1].expression, std::string("tile_size_x * tile_size_y <= 4"));
    waitForCount();
    const auto [raw, valid] = pythonCount();
    if (raw == 0)
        QSKIP("python3 is not installed; the count cannot be checked against Python");
    QVERIFY2(valid < 220, qPrintable(QString::number(valid)));
    QVERIFY2(m_panel->countLabel()->text().startsWith(tr("%1 valid of %2 raw").arg(grouped(valid), grouped(raw))),
             qPrintable(m_panel->countLabel()->text()));
    QVERIFY(m_window->document()->isModified());
    QVERIFY(m_window->isWindowModified());

    // A new condition, typed while the count follows each settled edit.
    QTest::mouseClick(m_panel->findChild<QToolButton*>(QStringLiteral("addCondition")), Qt::LeftButton);
    QCOMPARE(m_panel->selectedCondition(), 3);
    QVERIFY(m_panel->conditionEditor()->hasFocus());
    QTest::keyClicks(m_panel->conditionEditor(), QStringLiteral("block_size_x >= 64"));
    QTest::keyClick(m_panel->conditionEditor(), Qt::Key_Return);
    waitForCount();
    QCOMPARE(m_window->document()->problem()->conditions.size(), std::size_t(4));
    const auto [raw2, valid2] = pythonCount();
    QVERIFY(valid2 < valid);
    QVERIFY2(m_panel->countLabel()->text().startsWith(tr("%1 valid of %2 raw").arg(grouped(valid2), grouped(raw2))),
             qPrintable(m_panel->countLabel()->text()));
}

void TestEditor::invalidExpressionKeepsTheLastCountStale() {
    open(QStringLiteral("kt_convolution"));
    clickRow(m_panel->conditionView(), 1);
    const QString before = m_panel->countLabel()->text();
    const auto problemBefore = m_window->document()->problem();

    typeInto(m_panel->conditionEditor(), QStringLiteral("tile_size_x * tile_sise_y <= 8"));
    QVERIFY(m_panel->editErrorLabel()->isVisible());
    const QString error = m_panel->editErrorLabel()->text();
    QVERIFY2(error.contains(QStringLiteral("column 15")) && error.contains(QStringLiteral("tile_sise_y")),
             qPrintable(error));
    QCOMPARE(m_panel->conditionEditor()->property("errorColumn").toInt(), 15); // underlined there
    QCOMPARE(m_window->document()->problem(), problemBefore);                  // nothing taken
    QVERIFY(!m_window->document()->isModified());
    QVERIFY2(m_panel->countLabel()->text().startsWith(before.section(QStringLiteral("  ·  "), 0, 0)),
             qPrintable(m_panel->countLabel()->text()));
    QVERIFY(m_panel->countLabel()->text().contains(QStringLiteral("stale")));
    QVERIFY(m_panel->countLabel()->property("stale").toBool());
    // The text the user typed stays for them to fix.
    QCOMPARE(m_panel->conditionEditor()->text(), QStringLiteral("tile_size_x * tile_sise_y <= 8"));

    typeInto(m_panel->conditionEditor(), QStringLiteral("tile_size_x * tile_size_y <= 2"));
    QVERIFY(!m_panel->editErrorLabel()->isVisible());
    QCOMPARE(m_panel->conditionEditor()->property("errorColumn").toInt(), 0);
    waitForCount();
    QVERIFY(!m_panel->countLabel()->property("stale").toBool());
    QVERIFY(m_panel->countLabel()->text() != before);
}

// Pixels of the edit (as drawn) within a small distance of `colour`.
static int pixelsOf(QWidget* widget, const QColor& colour) {
    const QImage image = widget->grab().toImage();
    int n = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
            const QColor c = image.pixelColor(x, y);
            n += std::abs(c.red() - colour.red()) + std::abs(c.green() - colour.green()) +
                     std::abs(c.blue() - colour.blue()) <
                 24;
        }
    return n;
}

void TestEditor::conditionTextIsColoured() {
    open(QStringLiteral("kt_convolution"));
    clickRow(m_panel->conditionView(), 1);
    ExpressionEdit* edit = m_panel->conditionEditor();
    edit->setFocus();
    edit->selectAll();
    const QString text = QStringLiteral("tile_size_x * 2 <= min(filter_width, 64) and not use_padding");
    QTest::keyClicks(edit, text);
    const QColor parameter = edit->colourAt(0);
    const QColor number = edit->colourAt(static_cast<int>(text.indexOf(QLatin1Char('2'))));
    const QColor builtin = edit->colourAt(static_cast<int>(text.indexOf(QStringLiteral("min"))));
    const QColor name = edit->colourAt(static_cast<int>(text.indexOf(QStringLiteral("use_padding"))));
    const QColor keyword = edit->colourAt(static_cast<int>(text.indexOf(QStringLiteral("and"))));
    const QColor plain = edit->colourAt(static_cast<int>(text.indexOf(QLatin1Char('*'))));
    QCOMPARE(plain, edit->palette().color(QPalette::Text));
    const QSet<QRgb> distinct = {parameter.rgb(), number.rgb(), builtin.rgb(), name.rgb(), keyword.rgb(), plain.rgb()};
    QVERIFY2(distinct.size() == 6, qPrintable(QStringList({parameter.name(), number.name(), builtin.name(), name.name(),
                                                           keyword.name(), plain.name()})
                                                  .join(QLatin1Char(' '))));
    // filter_width is a parameter of this problem, use_padding is not.
    QCOMPARE(edit->colourAt(static_cast<int>(text.indexOf(QStringLiteral("filter_width")))), parameter);
    // As drawn: the parameters' colour is on screen (the start of the line in view).
    edit->setCursorPosition(0);
    QVERIFY(pixelsOf(edit, parameter) > 10);
    edit->end(false);

    // Past a lexical error ('=' for '=='), the rest is red; typing the fix colours it again.
    QTest::keyClicks(edit, QStringLiteral(" = 1"));
    const QColor invalid = edit->colourAt(edit->text().size() - 1);
    QVERIFY(invalid != parameter && invalid != number && invalid != plain);
    QVERIFY(pixelsOf(edit, invalid) > 5);
    edit->setCursorPosition(static_cast<int>(edit->text().size()) - 2);
    QTest::keyClick(edit, Qt::Key_Equal);
    QCOMPARE(edit->colourAt(edit->text().size() - 1), number);
}

void TestEditor::editParametersAndAddOne() {
    open(QStringLiteral("kt_convolution"));
    const auto original = m_window->document()->problem();
    const int tile = original->parameterIndex("tile_size_x");
    QVERIFY(tile >= 0);
    clickRow(m_panel->parameterView(), tile);
    QCOMPARE(m_panel->parameterNameEditor()->text(), QStringLiteral("tile_size_x"));
    typeInto(m_panel->parameterValuesEditor(), QStringLiteral("[1, 2]"));
    waitForCount();
    QCOMPARE(m_window->document()->problem()->parameters[static_cast<std::size_t>(tile)].values.size(), std::size_t(2));
    const auto [raw, valid] = pythonCount();
    if (raw == 0)
        QSKIP("python3 is not installed; the count cannot be checked against Python");
    QVERIFY2(m_panel->countLabel()->text().startsWith(tr("%1 valid of %2 raw").arg(grouped(valid), grouped(raw))),
             qPrintable(m_panel->countLabel()->text()));

    // A values expression that does not parse: located, not taken.
    typeInto(m_panel->parameterValuesEditor(), QStringLiteral("[1, 2"));
    QVERIFY(m_panel->editErrorLabel()->isVisible());
    QVERIFY(m_panel->editErrorLabel()->text().contains(QStringLiteral("tile_size_x")));

    // A new parameter: named and given values by typing; the count multiplies.
    QTest::mouseClick(m_panel->findChild<QToolButton*>(QStringLiteral("addParameter")), Qt::LeftButton);
    const int added = static_cast<int>(original->parameters.size());
    QCOMPARE(m_panel->selectedParameter(), added);
    QVERIFY(m_panel->parameterNameEditor()->hasFocus());
    QTest::keyClicks(m_panel->parameterNameEditor(), QStringLiteral("unroll"));
    QTest::keyClick(m_panel->parameterNameEditor(), Qt::Key_Return);
    typeInto(m_panel->parameterValuesEditor(), QStringLiteral("[1, 2, 4]"));
    waitForCount();
    const auto& parameters = m_window->document()->problem()->parameters;
    QCOMPARE(parameters.size(), original->parameters.size() + 1);
    QCOMPARE(parameters.back().name, std::string("unroll"));
    const auto [raw2, valid2] = pythonCount();
    QCOMPARE(valid2, 3 * valid);
    QCOMPARE(raw2, 3 * raw);
    QVERIFY2(m_panel->countLabel()->text().startsWith(tr("%1 valid of %2 raw").arg(grouped(valid2), grouped(raw2))),
             qPrintable(m_panel->countLabel()->text()));

    // Moved to the front, then removed.
    QTest::mouseClick(m_panel->findChild<QToolButton*>(QStringLiteral("parameterUp")), Qt::LeftButton);
    QCOMPARE(m_window->document()->problem()->parameters[parameters.size() - 2].name, std::string("unroll"));
    QTest::mouseClick(m_panel->findChild<QToolButton*>(QStringLiteral("removeParameter")), Qt::LeftButton);
    QCOMPARE(m_window->document()->problem()->parameters.size(), original->parameters.size());
}

void TestEditor::undoGivesBackTheExactProblem() {
    open(QStringLiteral("kt_convolution"));
    const std::string original = m_window->document()->problem()->toJson();
    clickRow(m_panel->conditionView(), 0);
    typeInto(m_panel->conditionEditor(), QStringLiteral("128 <= block_size_x * block_size_y <= 512"));
    clickRow(m_panel->parameterView(), 0);
    typeInto(m_panel->parameterValuesEditor(), QStringLiteral("[3, 5]"));
    QTest::mouseClick(m_panel->findChild<QToolButton*>(QStringLiteral("addCondition")), Qt::LeftButton);
    const std::string edited = m_window->document()->problem()->toJson();
    QVERIFY(edited != original);
    QUndoStack* undo = m_window->document()->undoStack();
    QCOMPARE(undo->count(), 3);

    // Through the Edit menu's actions, as a user would.
    QAction* undoAction = nullptr;
    QAction* redoAction = nullptr;
    for (QAction* a : m_window->findChildren<QAction*>()) {
        if (a->shortcut() == QKeySequence(QKeySequence::Undo))
            undoAction = a;
        if (a->shortcut() == QKeySequence(QKeySequence::Redo))
            redoAction = a;
    }
    QVERIFY(undoAction && redoAction);
    while (undoAction->isEnabled())
        undoAction->trigger();
    QCOMPARE(m_window->document()->problem()->toJson(), original);
    QVERIFY(!m_window->document()->isModified());
    QVERIFY(!m_window->isWindowModified());
    // The editor shows the selected condition as it now is (the added one is gone: the last).
    QCOMPARE(m_panel->selectedCondition(), 2);
    QCOMPARE(m_panel->conditionEditor()->text(),
             QString::fromStdString(m_window->document()->problem()->conditions[2].expression));
    waitForCount();
    QVERIFY(m_panel->countLabel()->text().startsWith(QStringLiteral("220 valid of 420 raw")));
    while (redoAction->isEnabled())
        redoAction->trigger();
    QCOMPARE(m_window->document()->problem()->toJson(), edited);
}

void TestEditor::saveThenReopenIsEqual() {
    open(QStringLiteral("kt_convolution"));
    clickRow(m_panel->conditionView(), 2);
    typeInto(m_panel->conditionEditor(), QStringLiteral("block_size_x * tile_size_x <= 256"));
    QVERIFY(m_window->document()->isModified());
    QVERIFY(m_window->windowTitle().contains(QStringLiteral("[*]")));
    QVERIFY(m_window->saveProblem());
    QVERIFY(!m_window->document()->isModified());
    const std::string inEditor = m_window->document()->problem()->toJson();
    const TuningProblem reread = TuningProblem::load(m_path.toStdString());
    QCOMPARE(reread.toJson(), inEditor);
    QCOMPARE(reread.conditions[2].expression, std::string("block_size_x * tile_size_x <= 256"));
    QCOMPARE(reread.conditions[2].parameters, (std::vector<std::string>{"block_size_x", "tile_size_x"}));
}

void TestEditor::runTakesTheEditedProblem() {
    open(QStringLiteral("kt_convolution"));
    clickRow(m_panel->conditionView(), 1);
    typeInto(m_panel->conditionEditor(), QStringLiteral("tile_size_x * tile_size_y <= 2"));
    QComboBox* backend = m_window->runPanel()->backendCombo();
    backend->setCurrentIndex(backend->findData(QStringLiteral("analysis")));
    QString why;
    const auto request = m_window->runPanel()->request(&why);
    QVERIFY2(request, qPrintable(why));
    QCOMPARE(request->problem, m_window->document()->problem()); // the edited snapshot
    QCOMPARE(request->problem->conditions[1].expression, std::string("tile_size_x * tile_size_y <= 2"));
}

void TestEditor::deadValuesShow() {
    open(QStringLiteral("kt_convolution"));
    const int tile = m_window->document()->problem()->parameterIndex("tile_size_x");
    clickRow(m_panel->parameterView(), tile);
    // tile_size_x * tile_size_y <= 8 leaves no valid config with tile_size_x = 16.
    typeInto(m_panel->parameterValuesEditor(), QStringLiteral("[1, 2, 16]"));
    waitForCount();
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->spaceController()->isBusy() && m_window->spaceController()->currentImpact(),
                             kTimeoutMs);
    const ParameterModel* model = m_panel->parameterModel();
    const QVariantList kept =
        model->index(tile, ParameterModel::KeptColumn).data(ParameterModel::ValueCountsRole).toList();
    QCOMPARE(kept.size(), 3);
    QVERIFY(kept[0].toDouble() > 0);
    QVERIFY(kept[1].toDouble() > 0);
    QCOMPARE(kept[2].toDouble(), 0.0);
    const std::uint64_t valid = m_window->spaceController()->currentSpace()->stats.validSize;
    // Every parameter's counts add up to the valid count (each config keeps one value of each).
    for (int row = 0; row < model->rowCount(); ++row) {
        double sum = 0;
        for (const QVariant& v :
             model->index(row, ParameterModel::KeptColumn).data(ParameterModel::ValueCountsRole).toList())
            sum += v.toDouble();
        QCOMPARE(sum, static_cast<double>(valid));
    }
    const QString tip = model->index(tile, ParameterModel::KeptColumn).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(QStringLiteral("tile_size_x = 16: no valid config")), qPrintable(tip));
}

void TestEditor::editingSgemm() {
    // The shipped GEMM: its threads-per-block condition made stricter by typing, then a typo.
    open(QStringLiteral("sgemm"), QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/sgemm"));
    const std::uint64_t before = m_window->spaceController()->currentSpace()->stats.validSize;
    clickRow(m_panel->conditionView(), 2);
    typeInto(m_panel->conditionEditor(), QStringLiteral("128 <= (BLOCK_M // THREAD_M) * (BLOCK_N // THREAD_N) <= 256"));
    waitForCount();
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->spaceController()->isBusy(), kTimeoutMs);
    const std::uint64_t after = m_window->spaceController()->currentSpace()->stats.validSize;
    QVERIFY2(after < before, qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(after)));
    // Every shape's count follows the edit too, in the shape list.
    {
        const auto problem = m_window->document()->problem();
        QVERIFY(problem->shapes.size() > 1);
        for (std::size_t s = 0; s < problem->shapes.size(); ++s) {
            const QString expected = grouped(ConfigSpace::build(*problem, s).size()) + QStringLiteral(" valid");
            QTRY_VERIFY2_WITH_TIMEOUT(
                m_panel->shapeBox()->itemText(static_cast<int>(s)).contains(expected),
                qPrintable(m_panel->shapeBox()->itemText(static_cast<int>(s)) + QStringLiteral(" vs ") + expected),
                kTimeoutMs);
        }
    }
    // What ConfigSpace counts for the saved file is what the editor showed.
    QVERIFY(m_window->saveProblem());
    QCOMPARE(ConfigSpace::build(TuningProblem::load(m_path.toStdString()), 0).size(),
             m_window->spaceController()->currentSpace()->space->size());
    m_panel->selectParameter(0);
    m_panel->conditionEditor()->setFocus();
    QTest::keyClicks(m_panel->conditionEditor(), QStringLiteral(" and BLOCK_Q > 1"));
    QTest::keyClick(m_panel->conditionEditor(), Qt::Key_Return);
    QVERIFY(m_panel->editErrorLabel()->text().contains(QStringLiteral("BLOCK_Q")));
    if (const QByteArray dir = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !dir.isEmpty())
        m_window->grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/editor-sgemm.png"));
}

void TestEditor::newProblemFromAKernel() {
    // A templated kernel, scanned: its template parameters become the problem's, one value each.
    QVERIFY(
        QFile::copy(kCorpus + QStringLiteral("/kt_templated.cu"), m_dir->filePath(QStringLiteral("kt_templated.cu"))));
    startWindow();
    QVERIFY(m_window->newProblemFromKernel(m_dir->filePath(QStringLiteral("kt_templated.cu"))));
    m_panel = m_window->problemPanel();
    waitForCount();
    const auto proposal = m_window->document()->problem();
    QCOMPARE(proposal->kernelName, std::string("vector_scale<BLOCK, TILE>"));
    QCOMPARE(m_panel->parameterModel()->rowCount(), 2);
    // The banner names the file and the count, each in its place.
    QCOMPARE(m_window->errorBanner()->title(),
             QStringLiteral("A first problem for kt_templated.cu: 2 parameters found, each with one value"));
    QVERIFY2(m_window->errorBanner()->details().contains(m_dir->filePath(QStringLiteral("kt_templated.json"))),
             qPrintable(m_window->errorBanner()->details()));
    QVERIFY(m_window->document()->isModified());
    QVERIFY(m_panel->countLabel()->text().startsWith(QStringLiteral("1 valid of 1 raw")));

    // The user gives the values, then saves beside the kernel.
    clickRow(m_panel->parameterView(), 0);
    QCOMPARE(m_panel->parameterNameEditor()->text(), QStringLiteral("BLOCK"));
    typeInto(m_panel->parameterValuesEditor(), QStringLiteral("[64, 128, 256]"));
    clickRow(m_panel->parameterView(), 1);
    typeInto(m_panel->parameterValuesEditor(), QStringLiteral("[1, 2, 4, 8]"));
    waitForCount();
    QVERIFY2(m_panel->countLabel()->text().startsWith(QStringLiteral("12 valid of 12 raw")),
             qPrintable(m_panel->countLabel()->text()));
    QVERIFY(m_window->saveProblem());
    const QString saved = m_dir->filePath(QStringLiteral("kt_templated.json"));
    QCOMPARE(m_window->document()->path(), saved);
    const TuningProblem reread = TuningProblem::load(saved.toStdString());
    QCOMPARE(reread.toJson(), m_window->document()->problem()->toJson());
    QCOMPARE(ConfigSpace::build(reread).size(), std::uint64_t(12));

    // A file without a kernel is refused with a banner, the open problem kept.
    QFile notKernel(m_dir->filePath(QStringLiteral("notes.cu")));
    QVERIFY(notKernel.open(QIODevice::WriteOnly));
    notKernel.write("// nothing here\n");
    notKernel.close();
    QVERIFY(!m_window->newProblemFromKernel(notKernel.fileName()));
    QCOMPARE(m_window->document()->path(), saved);

    // A kernel that leaves nothing open: the banner says so, and how to add parameters.
    writeFile(QStringLiteral("copy 100%2.cu"),
              "extern \"C\" __global__ void copy(float* out, const float* in, int n) {\n"
              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
              "    if (i < n) out[i] = in[i];\n"
              "}\n");
    QVERIFY(m_window->newProblemFromKernel(m_dir->filePath(QStringLiteral("copy 100%2.cu"))));
    QCOMPARE(m_window->errorBanner()->title(),
             QStringLiteral("A first problem for copy 100%2.cu: no tuning parameters found"));
    QVERIFY2(m_window->errorBanner()->details().startsWith(QStringLiteral("Add the parameters to tune")),
             qPrintable(m_window->errorBanner()->details()));
}

void TestEditor::compileCheck() {
    // A kernel whose MODE=2 variant does not compile, on line 5.
    writeFile(QStringLiteral("modes.cu"), "extern \"C\" __global__ void modes(float* out) {\n"
                                          "    float acc[UNROLL];\n"
                                          "    for (int i = 0; i < UNROLL; ++i) acc[i] = out[threadIdx.x * i];\n"
                                          "#if MODE == 2\n"
                                          "    this is not C++;\n"
                                          "#endif\n"
                                          "    out[threadIdx.x] = acc[UNROLL - 1];\n"
                                          "}\n");
    writeFile(QStringLiteral("modes.json"),
              "{\"ConfigurationSpace\": {\"TuningParameters\": ["
              "{\"Name\": \"MODE\", \"Type\": \"int\", \"Values\": \"[1, 2]\"},"
              "{\"Name\": \"UNROLL\", \"Type\": \"int\", \"Values\": \"[1, 4]\"}]},"
              "\"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"modes\","
              " \"KernelFile\": \"modes.cu\", \"GlobalSize\": {\"X\": \"1\"}, \"LocalSize\": {\"X\": \"32\"}}}");
    openPath(m_dir->filePath(QStringLiteral("modes.json")));

    CompileCheckPanel* check = m_window->compileCheck();
    check->countBox()->setValue(4);
    QTest::mouseClick(check->compileButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!check->isBusy(), 120'000);
    QCOMPARE(check->table()->rowCount(), 4);
    int failed = 0;
    for (int row = 0; row < 4; ++row) {
        if (check->table()->item(row, 1)->text() == QStringLiteral("compile error"))
            ++failed;
        else
            QVERIFY(check->table()->item(row, 2)->text().toInt() > 0); // registers from ptxas
    }
    QCOMPARE(failed, 2); // the two MODE=2 configs
    QVERIFY(check->errorList()->count() >= 1);
    QListWidgetItem* first = check->errorList()->item(0);
    QVERIFY2(first->text().contains(QStringLiteral(":5: error")), qPrintable(first->text()));
    QCOMPARE(first->data(Qt::UserRole).toInt(), 5);
    emit check->errorList()->itemDoubleClicked(first);
    QCOMPARE(m_window->findChild<SourceView*>()->textCursor().blockNumber(), 4);

    // A row picked is the config picked: Details shows what compiling told (no result holds it)
    // and Kernel Source reads its lines for the check's arch.
    auto* compileDock = m_window->findChild<QDockWidget*>(QStringLiteral("compileDock"));
    QVERIFY(compileDock);
    compileDock->raise();
    QTRY_VERIFY(check->table()->isVisible());
    int compiledRow = -1;
    int failedRow = -1;
    for (int row = 0; row < 4; ++row)
        (check->table()->item(row, 1)->text() == QStringLiteral("compile error") ? failedRow : compiledRow) = row;
    QVERIFY(compiledRow >= 0 && failedRow >= 0);
    ConfigDetailsPanel* details = m_window->detailsPanel();
    KernelSourcePanel* source = m_window->findChild<KernelSourcePanel*>();
    QVERIFY(source);
    clickRow(check->table(), compiledRow);
    const QString picked = check->configAt(compiledRow);
    QVERIFY(picked.contains(QStringLiteral("\"MODE\":1")));
    QCOMPARE(m_window->selectedConfig(), picked);
    QVERIFY(details->showsCompiledSample());
    QCOMPARE(details->shownConfig(), picked);
    const QString text = details->plainText();
    QVERIFY2(text.contains(QStringLiteral("compiled, not run")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Compile Check's sample for sm_90")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Compiled for sm_90")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("registers / thread\t") + check->table()->item(compiledRow, 2)->text()) ||
                 text.contains(QStringLiteral("registers / thread\n") + check->table()->item(compiledRow, 2)->text()),
             qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("theoretical occupancy")), qPrintable(text));
    QCOMPARE(source->shownConfig(), picked);
    QTRY_VERIFY_WITH_TIMEOUT(!source->isBusy(), 120'000);
    const QString label = check->table()->item(compiledRow, 0)->text(); // "MODE=1 UNROLL=4"
    QVERIFY2(source->linesLabel()->text().contains(label), qPrintable(source->linesLabel()->text()));

    // A config that did not compile: its error and NVRTC's log.
    clickRow(check->table(), failedRow);
    QCOMPARE(m_window->selectedConfig(), check->configAt(failedRow));
    QVERIFY(details->showsCompiledSample());
    QVERIFY2(details->plainText().contains(QStringLiteral("compile_error")), qPrintable(details->plainText()));
    QVERIFY2(details->plainText().contains(QStringLiteral("Compile log")), qPrintable(details->plainText()));

    // Picked elsewhere (nothing here): the row lets go; another problem empties the check.
    m_window->selectConfig(QString());
    QVERIFY(check->table()->selectionModel()->selectedRows().isEmpty());
    QVERIFY(!details->shownRecord());
    m_window->selectConfig(picked);
    QCOMPARE(check->table()->currentRow(), compiledRow);
    QVERIFY(details->showsCompiledSample());
    QVERIFY(m_window->openProblem(QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny.json")));
    QCOMPARE(check->table()->rowCount(), 0);
    QVERIFY(!check->sample() || check->sample()->empty());
    QVERIFY(!details->showsCompiledSample());
}

void TestEditor::writeRegsKernel() {
    writeFile(QStringLiteral("regs.cu"),
              "extern \"C\" __global__ void __launch_bounds__(1024, 2) regs(float* out) {\n"
              "    float acc[UNROLL];\n"
              "#pragma unroll\n"
              "    for (int i = 0; i < UNROLL; ++i) acc[i] = out[threadIdx.x + i * 32] * 1.5f;\n"
              "#pragma unroll\n"
              "    for (int r = 0; r < 4; ++r)\n"
              "#pragma unroll\n"
              "        for (int i = 0; i < UNROLL; ++i) acc[i] = acc[i] * acc[(i + 1) % UNROLL] + 1.0f;\n"
              "    float s = 0;\n"
              "#pragma unroll\n"
              "    for (int i = 0; i < UNROLL; ++i) s += acc[i];\n"
              "    out[threadIdx.x] = s;\n"
              "}\n");
}

void TestEditor::registerRuleInOneClick() {
    // 32 registers a thread at most (__launch_bounds__): 64 and 128 live values spill.
    writeRegsKernel();
    writeFile(QStringLiteral("regs.json"),
              "{\"ConfigurationSpace\": {\"TuningParameters\": ["
              "{\"Name\": \"UNROLL\", \"Type\": \"int\", \"Values\": \"[2, 4, 8, 64, 128]\"}]},"
              "\"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"regs\","
              " \"KernelFile\": \"regs.cu\", \"GlobalSize\": {\"X\": \"1\"}, \"LocalSize\": {\"X\": \"32\"}}}");
    openPath(m_dir->filePath(QStringLiteral("regs.json")));
    CompileCheckPanel* check = m_window->compileCheck();
    check->countBox()->setValue(5);
    QTest::mouseClick(check->compileButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!check->isBusy(), 120'000);
    QCOMPARE(check->table()->rowCount(), 5);
    QVERIFY2(check->addRuleButton()->isVisible(), qPrintable(check->ruleLabel()->text()));
    QTest::mouseClick(check->addRuleButton(), Qt::LeftButton);
    const auto problem = m_window->document()->problem();
    QCOMPARE(problem->conditions.size(), std::size_t(1));
    waitForCount();
    // The rule keeps the configs that did not spill and prunes the ones that did.
    QVERIFY2(m_panel->countLabel()->text().startsWith(QStringLiteral("3 valid of 5 raw")),
             qPrintable(QString::fromStdString(problem->conditions[0].expression) + QStringLiteral(": ") +
                        m_panel->countLabel()->text()));
}

// The Kernel Source panel marks the selected config's spilling lines (with nvdisasm), and with a
// config pinned, the lines that spill in one and not the other; without nvdisasm it says how to
// get it.
void TestEditor::spillsBySourceLine() {
    writeRegsKernel();
    writeFile(QStringLiteral("regs.json"),
              "{\"ConfigurationSpace\": {\"TuningParameters\": ["
              "{\"Name\": \"UNROLL\", \"Type\": \"int\", \"Values\": \"[4, 128]\"}]},"
              "\"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"regs\","
              " \"KernelFile\": \"regs.cu\", \"GlobalSize\": {\"X\": \"1\"}, \"LocalSize\": {\"X\": \"32\"}}}");
    openPath(m_dir->filePath(QStringLiteral("regs.json")));
    KernelSourcePanel* panel = m_window->findChild<KernelSourcePanel*>();
    QVERIFY(panel);
    panel->showConfig(QStringLiteral("{\"UNROLL\":128}"));
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isBusy(), 120'000);
    std::string why;
    if (findNvdisasm(&why).empty()) {
        QVERIFY2(panel->linesLabel()->text().contains(QStringLiteral("nvidia-cuda-nvdisasm")),
                 qPrintable(panel->linesLabel()->text()));
        QVERIFY(panel->sourceView()->lineMarks().empty());
        QSKIP("nvdisasm is not installed: the marks themselves are not checked");
    }
    const std::map<int, LineMark>& marks = panel->sourceView()->lineMarks();
    QVERIFY2(!marks.empty(), qPrintable(panel->linesLabel()->text()));
    int spills = 0;
    for (const auto& [line, mark] : marks) {
        spills += mark.spills();
        if (mark.spills() > 0)
            QVERIFY2(mark.tooltip.contains(QStringLiteral("STL")) || mark.tooltip.contains(QStringLiteral("LDL")),
                     qPrintable(mark.tooltip));
    }
    QVERIFY(spills > 0);
    QVERIFY(marks.count(8) && marks.at(8).spills() > 0); // the loop that keeps 128 values live
    const int line8Spills = marks.at(8).spills();
    QVERIFY2(panel->linesLabel()->text().contains(QStringLiteral("UNROLL=128")),
             qPrintable(panel->linesLabel()->text()));
    const QByteArray shots = qgetenv("TILESCOPE_SCREENSHOT_DIR");
    auto screenshot = [&](const QString& name) {
        if (shots.isEmpty())
            return;
        m_window->resize(1366, 768);
        if (auto* dock = m_window->findChild<QDockWidget*>(QStringLiteral("sourceDock"))) {
            dock->show();
            dock->raise();
        }
        QApplication::processEvents();
        m_window->grab().save(QString::fromLocal8Bit(shots) + QStringLiteral("/") + name);
    };
    screenshot(QStringLiteral("source-lines.png"));

    // Pinned, then the config that does not spill: the lines that spill only in the pinned one.
    QVERIFY(panel->pinButton()->isEnabled());
    QTest::mouseClick(panel->pinButton(), Qt::LeftButton);
    panel->showConfig(QStringLiteral("{\"UNROLL\":4}"));
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isBusy(), 120'000);
    const QString compared = panel->linesLabel()->text();
    QVERIFY2(compared.contains(QStringLiteral("against the pinned")), qPrintable(compared));
    QVERIFY2(compared.contains(QStringLiteral("Spill in the pinned config only: line")), qPrintable(compared));
    QVERIFY2(compared.contains(QStringLiteral("8")), qPrintable(compared));
    const std::map<int, LineMark>& diff = panel->sourceView()->lineMarks();
    QVERIFY(diff.count(8) && diff.at(8).otherSpills > 0 && diff.at(8).spills() == 0);
    screenshot(QStringLiteral("source-lines-compared.png"));

    // The heatmap by line 8: each config's spill instructions there (the window's heatmap takes
    // the quantity).
    QSignalSpy counted(panel, &KernelSourcePanel::lineQuantity);
    panel->countLine(8, {QStringLiteral("{\"UNROLL\":4}"), QStringLiteral("{\"UNROLL\":128}")});
    QTRY_COMPARE_WITH_TIMEOUT(counted.size(), 1, 120'000);
    const Quantity quantity = counted.front().front().value<Quantity>();
    QCOMPARE(quantity.kind, QuantityKind::LineSpills);
    QCOMPARE(quantity.line, std::string("regs.cu:8"));
    QVERIFY(quantity.byConfig);
    QCOMPARE(quantity.byConfig->at("{\"UNROLL\":4}"), 0.0);
    QCOMPARE(quantity.byConfig->at("{\"UNROLL\":128}"), double(line8Spills));
    HeatmapWidget* heatmap = m_window->findChild<HeatmapWidget*>();
    QVERIFY(heatmap);
    QCOMPARE(heatmap->spec().quantity.kind, QuantityKind::LineSpills);
}

// A Triton problem's Kernel Source shows the .py file, its spills marked by the Python line that
// causes them (tests/data/triton/spill.py squeezed by maxnreg 32: the loop on line 19), read with
// the toolkit's nvdisasm or the one Triton's wheel ships.
void TestEditor::tritonSpillsByPythonLine() {
    TILESCOPE_NEED_TRITON();
    for (const char* file : {"spill.json", "spill.py"})
        QVERIFY(QFile::copy(QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/triton/") + QLatin1String(file),
                            m_dir->filePath(QLatin1String(file))));
    openPath(m_dir->filePath(QStringLiteral("spill.json")));
    KernelSourcePanel* panel = m_window->findChild<KernelSourcePanel*>();
    QVERIFY(panel);
    panel->showConfig(QStringLiteral("{\"ROWS\":64,\"COLS\":64,\"STEPS\":4,\"num_warps\":4,\"maxnreg\":32}"));
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isBusy(), 120'000);
    QVERIFY2(panel->sourceView()->toPlainText().contains(QStringLiteral("acc = acc * tile + tl.sin(acc + step)")),
             qPrintable(panel->sourceView()->toPlainText().left(400)));
    std::string why;
    if (findNvdisasm(&why, true).empty())
        QSKIP(why.c_str());
    const std::map<int, LineMark>& marks = panel->sourceView()->lineMarks();
    // Spill stores and loads where the toolkit's nvdisasm marks them; Triton's marks none, and its
    // local stores and loads are the spills (the config with room has no local memory on line 19).
    QVERIFY2(marks.count(19) && marks.at(19).spills() + marks.at(19).local() > 0,
             qPrintable(panel->linesLabel()->text()));
    QVERIFY2(panel->linesLabel()->text().contains(QStringLiteral("maxnreg=32")),
             qPrintable(panel->linesLabel()->text()));
    // The line with the most local stores and loads is the cursor's, in sight.
    int hottest = 0;
    for (const auto& [line, mark] : marks)
        if (hottest == 0 || mark.spills() + mark.local() > marks.at(hottest).spills() + marks.at(hottest).local())
            hottest = line;
    QCOMPARE(panel->sourceView()->textCursor().blockNumber() + 1, hottest);
    if (const QByteArray shots = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !shots.isEmpty()) {
        m_window->resize(1366, 768);
        if (auto* dock = m_window->findChild<QDockWidget*>(QStringLiteral("sourceDock"))) {
            dock->show();
            dock->raise();
        }
        QApplication::processEvents();
        m_window->grab().save(QString::fromLocal8Bit(shots) + QStringLiteral("/triton-source-lines.png"));
    }
}

void TestEditor::kernelAndLaunch() {
    open(QStringLiteral("kt_convolution"));
    const std::string original = m_window->document()->problem()->toJson();
    KernelSpecDialog dialog(m_window->document(), m_window.get());
    QCOMPARE(dialog.field(QStringLiteral("kernelName"))->text(), QStringLiteral("convolution_kernel"));
    QCOMPARE(dialog.argumentTable()->rowCount(), 3);
    // The form as it opens changes nothing.
    QVERIFY2(dialog.apply(), qPrintable(dialog.errorLabel()->text()));
    QCOMPARE(m_window->document()->problem()->toJson(), original);
    QCOMPARE(m_window->document()->undoStack()->count(), 0);

    // A block size expression with a syntax error: refused, located, nothing changed.
    typeInto(dialog.field(QStringLiteral("localX")), QStringLiteral("block_size_x *"));
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.errorLabel()->text().startsWith(QStringLiteral("/KernelSpecification/LocalSize/X")),
             qPrintable(dialog.errorLabel()->text()));
    QCOMPARE(m_window->document()->problem()->toJson(), original);

    // Options, a block size, two shapes and an objective, as one edit.
    typeInto(dialog.field(QStringLiteral("localX")), QStringLiteral("block_size_x"));
    typeInto(dialog.field(QStringLiteral("localY")), QStringLiteral("block_size_y"));
    typeInto(dialog.field(QStringLiteral("compilerOptions")), QStringLiteral("-use_fast_math -lineinfo"));
    dialog.shapesEdit()->setPlainText(QStringLiteral("W=2048\nW=4096"));
    typeInto(dialog.field(QStringLiteral("objectiveName")), QStringLiteral("GB/s"));
    typeInto(dialog.field(QStringLiteral("objectiveCount")), QStringLiteral("8 * W * W"));
    typeInto(dialog.field(QStringLiteral("objectiveScale")), QStringLiteral("1e9"));
    typeInto(dialog.field(QStringLiteral("metrics")), QStringLiteral("default"));
    QTest::mouseClick(dialog.findChild<QPushButton*>(QStringLiteral("addArgument")), Qt::LeftButton);
    QCOMPARE(dialog.argumentTable()->rowCount(), 4);
    dialog.argumentTable()->item(3, 0)->setText(QStringLiteral("scale"));
    dialog.argumentTable()->item(3, 1)->setText(QStringLiteral("float"));
    dialog.argumentTable()->item(3, 2)->setText(QStringLiteral("Scalar"));
    dialog.argumentTable()->item(3, 3)->setText(QString());
    dialog.argumentTable()->item(3, 4)->setText(QString());
    dialog.argumentTable()->item(3, 5)->setText(QStringLiteral("Constant"));
    dialog.argumentTable()->item(3, 6)->setText(QStringLiteral("2.5"));
    QVERIFY2(dialog.apply(), qPrintable(dialog.errorLabel()->text()));
    const auto edited = m_window->document()->problem();
    QCOMPARE(edited->compilerOptions, (std::vector<std::string>{"-use_fast_math", "-lineinfo"}));
    QCOMPARE(edited->localSize.y, std::string("block_size_y"));
    QCOMPARE(edited->shapes.size(), std::size_t(2));
    QVERIFY(edited->objective && edited->objective->count == "8 * W * W");
    QCOMPARE(edited->metrics, std::vector<std::string>{"default"});
    QCOMPARE(edited->arguments.size(), std::size_t(4));
    QCOMPARE(edited->arguments[3].memoryType, std::string("Scalar"));
    QCOMPARE(edited->arguments[3].fillValue, std::optional<double>(2.5));
    QCOMPARE(m_window->document()->undoStack()->count(), 1);
    QCOMPARE(m_panel->shapeBox()->count(), 2);

    m_window->document()->undoStack()->undo();
    QCOMPARE(m_window->document()->problem()->toJson(), original);
}

// The form as it opens, applied, changes nothing: on every shipped problem and every corpus file,
// and on a file that holds every section (device, reference outputs, search, budget, unknown
// fields).
void TestEditor::kernelFormKeepsEveryFile() {
    QStringList files = {QStringLiteral(TILESCOPE_TEST_DATA "/spec/rich.json")};
    for (const QString& folder : {kCorpus, QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels")}) {
        QDirIterator it(folder, {QStringLiteral("*.json")}, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext())
            files << it.next();
    }
    int checked = 0;
    for (const QString& file : files) {
        ProblemDocument document;
        if (!document.load(file))
            continue; // not a problem (counts.json) or one that does not load (missing_kernel.json)
        const std::string original = document.problem()->toJson();
        KernelSpecDialog dialog(&document);
        QVERIFY2(dialog.apply(), qPrintable(file + QStringLiteral(": ") + dialog.errorLabel()->text()));
        QVERIFY2(document.problem()->toJson() == original, qPrintable(file));
        QCOMPARE(document.undoStack()->count(), 0);
        ++checked;
    }
    QVERIFY2(checked >= 20, qPrintable(QString::number(checked)));
}

void TestEditor::budgetSearchDeviceAndReferences() {
    ProblemDocument document;
    QVERIFY(document.load(QStringLiteral(TILESCOPE_TEST_DATA "/spec/rich.json")));
    const std::string original = document.problem()->toJson();
    KernelSpecDialog dialog(&document);
    QCOMPARE(dialog.field(QStringLiteral("deviceName"))->text(), QStringLiteral("NVIDIA H100"));
    QCOMPARE(dialog.field(QStringLiteral("budgetDuration"))->text(), QStringLiteral("600"));
    QCOMPARE(dialog.field(QStringLiteral("budgetCount"))->text(), QStringLiteral("250"));
    QCOMPARE(dialog.field(QStringLiteral("searchName"))->text(), QStringLiteral("random_sample"));
    QCOMPARE(dialog.searchAttributesEdit()->toPlainText(), QStringLiteral("fraction = \"0.1\"\nseed = \"7\""));
    QCOMPARE(dialog.referenceTable()->rowCount(), 1);
    QCOMPARE(dialog.referenceTable()->item(0, 1)->text(), QStringLiteral("C"));
    if (const QByteArray dir = qgetenv("TILESCOPE_SCREENSHOT_DIR"); !dir.isEmpty()) {
        dialog.show();
        for (int tab = 0; tab < dialog.tabs()->count(); ++tab) {
            dialog.tabs()->setCurrentIndex(tab);
            dialog.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/kernel-and-launch-%1.png").arg(tab));
        }
        dialog.hide();
    }

    // A budget that is not a number, a bad threshold, an attribute without a name: refused, said.
    typeInto(dialog.field(QStringLiteral("budgetFraction")), QStringLiteral("half"));
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.errorLabel()->text().contains(QStringLiteral("ConfigurationFraction")),
             qPrintable(dialog.errorLabel()->text()));
    typeInto(dialog.field(QStringLiteral("budgetFraction")), QStringLiteral("1.5"));
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.errorLabel()->text().contains(QStringLiteral("at most 1")),
             qPrintable(dialog.errorLabel()->text()));
    typeInto(dialog.field(QStringLiteral("budgetFraction")), QStringLiteral("0.25"));
    dialog.referenceTable()->item(0, 7)->setText(QStringLiteral("tight"));
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.errorLabel()->text().startsWith(QStringLiteral("Reference output 1: threshold")),
             qPrintable(dialog.errorLabel()->text()));
    dialog.referenceTable()->item(0, 1)->setText(QStringLiteral("nosuch"));
    dialog.referenceTable()->item(0, 7)->setText(QStringLiteral("1e-4"));
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.errorLabel()->text().contains(QStringLiteral("TargetName 'nosuch'")),
             qPrintable(dialog.errorLabel()->text()));
    dialog.referenceTable()->item(0, 1)->setText(QStringLiteral("C"));
    dialog.searchAttributesEdit()->setPlainText(QStringLiteral("fraction = 0.05\n= 3"));
    QVERIFY(!dialog.apply());
    QVERIFY2(dialog.errorLabel()->text().startsWith(QStringLiteral("Search attributes, line 2")),
             qPrintable(dialog.errorLabel()->text()));
    QCOMPARE(document.problem()->toJson(), original);
    QCOMPARE(document.undoStack()->count(), 0);

    // All of them as one edit.
    dialog.searchAttributesEdit()->setPlainText(QStringLiteral("fraction = 0.05\nseed = \"7\"\nmode = greedy"));
    typeInto(dialog.field(QStringLiteral("budgetDuration")), QString());
    typeInto(dialog.field(QStringLiteral("searchName")), QStringLiteral("genetic_algorithm"));
    typeInto(dialog.field(QStringLiteral("deviceName")), QStringLiteral("NVIDIA H200"));
    typeInto(dialog.field(QStringLiteral("deviceId")), QStringLiteral("1"));
    QVERIFY2(dialog.apply(), qPrintable(dialog.errorLabel()->text()));
    const auto edited = document.problem();
    QCOMPARE(edited->budget.size(), std::size_t(2));
    QCOMPARE(edited->budget[0].type, std::string("ConfigurationCount"));
    QCOMPARE(edited->budget[1].type, std::string("ConfigurationFraction"));
    QCOMPARE(edited->budget[1].value, 0.25);
    QCOMPARE(edited->searchName, std::string("genetic_algorithm"));
    QCOMPARE(edited->searchAttributes.size(), std::size_t(3));
    QVERIFY(edited->searchAttributes[0].valueIsJson && edited->searchAttributes[0].value == "0.05");
    QVERIFY(!edited->searchAttributes[1].valueIsJson && edited->searchAttributes[1].value == "7");
    QVERIFY(!edited->searchAttributes[2].valueIsJson && edited->searchAttributes[2].value == "greedy");
    QCOMPARE(edited->referenceArguments.at(0).validationThreshold, std::optional<double>(1e-4));
    QVERIFY(edited->device && edited->device->name == "NVIDIA H200" && edited->device->deviceId == 1);
    // What the form does not show is kept: the attribute's comment, the device's vendor.
    const auto json = nlohmann::ordered_json::parse(edited->toJson());
    QCOMPARE(json["Search"]["Attributes"][1].value("Comment", std::string()), std::string("fixed"));
    QCOMPARE(json["KernelSpecification"]["Device"].value("Vendor", std::string()), std::string("NVIDIA"));
    QCOMPARE(document.undoStack()->count(), 1);
    document.undoStack()->undo();
    QCOMPARE(document.problem()->toJson(), original);
}

QTEST_MAIN(TestEditor)
#include "tst_editor.moc"
