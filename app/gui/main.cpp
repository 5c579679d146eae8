// tilescope: the workbench GUI. Wiring only: arguments, the window, the embedded demo (the sgemm
// example with a whole session recorded on an H200).

#include "common/errorbanner.h"
#include "common/examples.h"
#include "compare/compareview.h"
#include "mainwindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QScreen>
#include <QTemporaryDir>
#include <QTimer>

#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string_view>

using tilescope::views::MainWindow;

namespace {

// A screenshot waits for the space summary (and the demo's heatmap); past this something is wrong.
constexpr int kScreenshotTimeoutMs = 120'000;

void fail(const QString& message) {
    std::fprintf(stderr, "tilescope: %s\n", qPrintable(message));
}

// Whether argv holds one of `names` (before a "--" that ends the options).
bool hasArgument(int argc, char** argv, std::initializer_list<std::string_view> names) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--")
            return false;
        for (std::string_view name : names)
            if (arg == name ||
                (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '='))
                return true;
    }
    return false;
}

// A core application for --help and --version (they need no display), else the workbench's.
std::unique_ptr<QCoreApplication> makeApplication(int& argc, char** argv) {
    if (hasArgument(argc, argv, {"-h", "--help", "--help-all", "-?", "-v", "--version"}))
        return std::make_unique<QCoreApplication>(argc, argv);
    // A screenshot on a machine without a display (CI) draws offscreen.
    if (hasArgument(argc, argv, {"--screenshot"}) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    return std::make_unique<QApplication>(argc, argv);
}

// The options the workbench takes beyond --help and --version.
struct GuiOptions {
    QCommandLineOption screenshot{
        QStringLiteral("screenshot"),
        QStringLiteral("Open the problem (or the demo), wait until its config space is summarised and the "
                       "results are drawn, save the window to FILE (PNG) and quit. Exit status 0 when it opened, "
                       "2 when it did not. Without a display it draws offscreen."),
        QStringLiteral("FILE")};
    QCommandLineOption compare{
        QStringLiteral("compare"),
        QStringLiteral("Compare the results of FILE with those of RECORDING (the same problem from another GPU or "
                       "another measurement context), in the Compare panel."),
        QStringLiteral("RECORDING")};

    void addTo(QCommandLineParser& parser) const {
        parser.setApplicationDescription(
            QStringLiteral("Tilescope: a workbench for autotuning CUDA kernels.\n"
                           "Opens FILE: a T1 tuning problem, or recorded results (a T4 file, a Kernel Tuner cache, a "
                           "Tilescope database). Without one it opens the embedded demo: the sgemm example with a "
                           "whole tuning session recorded on an NVIDIA H200."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(QStringLiteral("file"),
                                     QStringLiteral("A T1 problem file (JSON), or a recording (.json, .json.gz, .db)."),
                                     QStringLiteral("[FILE]"));
        parser.addOption(screenshot);
        parser.addOption(compare);
    }
};

// Compares the window's results with `other` once they are on screen: the comparison needs them.
void compareOnceShown(MainWindow& window, const QString& other) {
    auto* wait = new QTimer(&window);
    QObject::connect(wait, &QTimer::timeout, &window, [wait, &window, other]() {
        if (window.isLoadingResults() || !window.hasResultsShown())
            return;
        wait->stop();
        window.compareWith(other);
    });
    wait->start(50);
}

// Saves the window to `file` and quits once the space is summarised and, with results to show, the
// heatmap has them (and a comparison asked for is done): exit 0 when it opened, 2 when not, 1
// when the screenshot cannot be written or never gets ready.
void screenshotWhenReady(MainWindow& window, QApplication& app, const QString& file, bool opened, bool expectResults,
                         bool comparing) {
    auto ready = [&window, expectResults, comparing]() {
        return !window.isBusy() && !window.isLoadingResults() && (!expectResults || window.hasResultsLoaded()) &&
               (!comparing || (!window.compareView()->isLoading() &&
                               (window.compareView()->comparison() || !window.compareView()->error().isEmpty())));
    };
    auto save = [&window, &app, file, opened, expectResults]() {
        const bool shown = opened && (!expectResults || window.hasResultsLoaded()); // else the recording did not open
        if (!window.grab().save(file, "PNG")) {
            fail(QStringLiteral("cannot write the screenshot %1").arg(file));
            app.exit(1);
            return;
        }
        app.exit(shown ? 0 : 2);
    };
    // Polled rather than signalled: the space and the recording arrive in either order.
    // Once ready, layouts and pending paints settle before grabbing.
    auto* poll = new QTimer(&app);
    QObject::connect(poll, &QTimer::timeout, &app, [poll, ready, save, &window, opened, expectResults]() {
        const bool failedToLoad = expectResults && !window.isLoadingResults() && !window.hasResultsLoaded() &&
                                  !window.errorBanner()->isHidden();
        if (opened && !ready() && !failedToLoad)
            return;
        poll->stop();
        QTimer::singleShot(300, save);
    });
    poll->start(50);
    QTimer::singleShot(kScreenshotTimeoutMs, &app, [&app]() {
        fail(QStringLiteral("timed out waiting for the config space and the results"));
        app.exit(1);
    });
}

} // namespace

int main(int argc, char** argv) {
    const std::unique_ptr<QCoreApplication> application = makeApplication(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("Tilescope"));
    QCoreApplication::setApplicationName(QStringLiteral("Tilescope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TILESCOPE_VERSION));

    QCommandLineParser parser;
    const GuiOptions guiOptions;
    guiOptions.addTo(parser);
    parser.process(*application); // exits for --help, --version and unknown options

    auto& app = static_cast<QApplication&>(*application);
    QApplication::setApplicationDisplayName(QStringLiteral("Tilescope"));
    tilescope::views::initResources();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/tilescope.png")));

    const QStringList arguments = parser.positionalArguments();
    if (arguments.size() > 1) {
        fail(QStringLiteral("expected at most one file, got %1").arg(arguments.size()));
        return 2;
    }

    QTemporaryDir exampleDir; // declared first, so it outlives the window that shows its files
    const bool screenshotMode = parser.isSet(guiOptions.screenshot);
    MainWindow::Options options;
    options.persistent = !screenshotMode;
    MainWindow window(options);
    if (screenshotMode && window.screen()) // the whole screen, as a user would size it
        window.resize(window.screen()->availableGeometry().size());

    window.show();
    bool opened = false;
    bool expectResults = false;
    if (!arguments.isEmpty()) {
        const QString path = arguments.first();
        expectResults = MainWindow::classifyFile(path) == MainWindow::FileKind::Recording;
        opened = window.openFile(path);
    } else if (exampleDir.isValid()) {
        opened = window.openDemo(exampleDir.path());
        expectResults = opened;
    } else {
        fail(QStringLiteral("cannot open the embedded demo: %1").arg(exampleDir.errorString()));
    }
    if (opened && parser.isSet(guiOptions.compare))
        compareOnceShown(window, parser.value(guiOptions.compare));
    if (!opened && !window.errorBanner()->title().isEmpty())
        fail(window.errorBanner()->title() + QStringLiteral("\n") + window.errorBanner()->details());
    if (screenshotMode)
        screenshotWhenReady(window, app, parser.value(guiOptions.screenshot), opened, expectResults,
                            parser.isSet(guiOptions.compare));
    return app.exec();
}
