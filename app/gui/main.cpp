// tilescope: the workbench GUI. Wiring only: arguments, the window, the embedded example.

#include "errorbanner.h"
#include "examples.h"
#include "mainwindow.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QTemporaryDir>
#include <QTimer>

#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string_view>

using tilescope::views::MainWindow;
using tilescope::views::ProblemDocument;

namespace {

// A screenshot waits for the space summary; past this something is wrong.
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
                       "Opens PROBLEM (a T1 tuning problem), or the embedded sgemm example without one."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("problem"), QStringLiteral("A T1 problem file (JSON)."),
                                 QStringLiteral("[PROBLEM.json]"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("Open the problem, wait until its config space is summarised, save the window to FILE "
                       "(PNG) and quit. Exit status 0 when the problem opened, 2 when it did not. Without a "
                       "display it draws offscreen."),
        QStringLiteral("FILE"));
    parser.addOption(screenshot);
    parser.process(*application); // exits for --help, --version and unknown options

    auto& app = static_cast<QApplication&>(*application);
    QApplication::setApplicationDisplayName(QStringLiteral("Tilescope"));
    tilescope::views::initResources();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/tilescope.png")));

    const QStringList arguments = parser.positionalArguments();
    if (arguments.size() > 1) {
        fail(QStringLiteral("expected at most one problem file, got %1").arg(arguments.size()));
        return 2;
    }

    QTemporaryDir exampleDir; // declared first, so it outlives the window that shows its files
    const bool screenshotMode = parser.isSet(screenshot);
    MainWindow::Options options;
    options.persistent = !screenshotMode;
    MainWindow window(options);

    QString path;
    auto origin = ProblemDocument::Origin::File;
    if (!arguments.isEmpty()) {
        path = arguments.first();
    } else {
        QString error;
        path = exampleDir.isValid()
                   ? tilescope::views::extractExample(QStringLiteral("sgemm"), exampleDir.path(), &error)
                   : QString();
        if (path.isEmpty())
            fail(QStringLiteral("cannot open the embedded example: %1")
                     .arg(exampleDir.isValid() ? error : exampleDir.errorString()));
        origin = ProblemDocument::Origin::Example;
    }

    window.show();
    const bool opened = !path.isEmpty() && window.openProblem(path, origin);
    if (!opened && !path.isEmpty())
        fail(window.errorBanner()->title() + QStringLiteral("\n") + window.errorBanner()->details());

    if (screenshotMode) {
        const QString file = parser.value(screenshot);
        auto save = [&window, &app, file, opened]() {
            if (!window.grab().save(file, "PNG")) {
                fail(QStringLiteral("cannot write the screenshot %1").arg(file));
                app.exit(1);
                return;
            }
            app.exit(opened ? 0 : 2);
        };
        // Let layouts and pending paints settle before grabbing.
        auto saveSoon = [save]() { QTimer::singleShot(100, save); };
        if (opened && window.isBusy())
            QObject::connect(&window, &MainWindow::settled, &app, saveSoon, Qt::SingleShotConnection);
        else
            saveSoon();
        QTimer::singleShot(kScreenshotTimeoutMs, &app, [&app]() {
            fail(QStringLiteral("timed out waiting for the config space"));
            app.exit(1);
        });
    }
    return app.exec();
}
