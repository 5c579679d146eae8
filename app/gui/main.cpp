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

} // namespace

int main(int argc, char** argv) {
    // --help and --version need no display: answer them from a core application.
    std::unique_ptr<QCoreApplication> application;
    if (hasArgument(argc, argv, {"-h", "--help", "--help-all", "-?", "-v", "--version"})) {
        application = std::make_unique<QCoreApplication>(argc, argv);
    } else {
        // A screenshot on a machine without a display (CI) draws offscreen.
        if (hasArgument(argc, argv, {"--screenshot"}) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
            qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        application = std::make_unique<QApplication>(argc, argv);
    }
    QCoreApplication::setOrganizationName(QStringLiteral("Tilescope"));
    QCoreApplication::setApplicationName(QStringLiteral("Tilescope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TILESCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Tilescope: a workbench for autotuning CUDA kernels.\n"
                       "Opens FILE: a T1 tuning problem, or recorded results (a T4 file, a Kernel Tuner cache, a "
                       "Tilescope database). Without one it opens the embedded demo: the sgemm example with a whole "
                       "tuning session recorded on an NVIDIA H200."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("file"),
                                 QStringLiteral("A T1 problem file (JSON), or a recording (.json, .json.gz, .db)."),
                                 QStringLiteral("[FILE]"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("Open the problem (or the demo), wait until its config space is summarised and the "
                       "results are drawn, save the window to FILE (PNG) and quit. Exit status 0 when it opened, "
                       "2 when it did not. Without a display it draws offscreen."),
        QStringLiteral("FILE"));
    parser.addOption(screenshot);
    const QCommandLineOption compare(
        QStringLiteral("compare"),
        QStringLiteral("Compare the results of FILE with those of RECORDING (the same problem from another GPU or "
                       "another measurement context), in the Compare panel."),
        QStringLiteral("RECORDING"));
    parser.addOption(compare);
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
    const bool screenshotMode = parser.isSet(screenshot);
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
    if (opened && parser.isSet(compare)) {
        // Once the results are on screen: the comparison needs them.
        const QString other = parser.value(compare);
        auto* wait = new QTimer(&window);
        QObject::connect(wait, &QTimer::timeout, &window, [wait, &window, other]() {
            if (window.isLoadingResults() || !window.hasResultsShown())
                return;
            wait->stop();
            window.compareWith(other);
        });
        wait->start(50);
    }
    if (!opened && !window.errorBanner()->title().isEmpty())
        fail(window.errorBanner()->title() + QStringLiteral("\n") + window.errorBanner()->details());

    if (screenshotMode) {
        const QString file = parser.value(screenshot);
        // Grabs once the space is summarised and, with results to show, the heatmap has them.
        const bool comparing = parser.isSet(compare);
        auto ready = [&window, expectResults, comparing]() {
            return !window.isBusy() && !window.isLoadingResults() && (!expectResults || window.hasResultsLoaded()) &&
                   (!comparing || (!window.compareView()->isLoading() &&
                                   (window.compareView()->comparison() || !window.compareView()->error().isEmpty())));
        };
        auto save = [&window, &app, file, &opened, expectResults]() {
            if (expectResults && !window.hasResultsLoaded())
                opened = false; // the recording did not open
            if (!window.grab().save(file, "PNG")) {
                fail(QStringLiteral("cannot write the screenshot %1").arg(file));
                app.exit(1);
                return;
            }
            app.exit(opened ? 0 : 2);
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
    return app.exec();
}
