#pragma once

// Programs some checks run besides the build's own: the C++ compiler that built the tests
// (TILESCOPE_CXX_COMPILER, set by tests/CMakeLists.txt), always there; and python3, which the
// README's install line installs. Where python3 is missing a check that needs it reports a skip
// with the reason, except under CI (the environment variable CI set, as CI services set it),
// where it fails: there a skip would hide that the check never ran.

#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QtGlobal>

inline bool haveProgram(const char* name) {
    return !QStandardPaths::findExecutable(QString::fromLatin1(name)).isEmpty();
}

/// Whether the suite runs under CI: CI is set to anything but "", "0" or "false".
inline bool underCi() {
    const QByteArray ci = qgetenv("CI").trimmed().toLower();
    return !ci.isEmpty() && ci != "0" && ci != "false";
}

/// The C++ compiler the tests were built with.
inline QString cxxCompiler() {
    return QStringLiteral(TILESCOPE_CXX_COMPILER);
}

/// Runs `program` with `args` (feeding `input` on its standard input), its output and errors
/// together in `output`; the exit code, -1 for a crash or two minutes without an end, -2 when it
/// does not start.
inline int runProcess(const QString& program, const QStringList& args, QString* output = nullptr,
                      const QByteArray& input = {}) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForStarted(10000))
        return -2;
    if (!input.isEmpty())
        p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(120000)) {
        p.kill();
        return -1;
    }
    if (output)
        *output = QString::fromUtf8(p.readAll());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

/// In a test function: `program` is missing, so the check `what` cannot run; a failure under
/// CI, else a skip that says so.
#define TILESCOPE_MISSING_PROGRAM(program, what)                                                                       \
    do {                                                                                                               \
        const QByteArray message_ = QByteArrayLiteral(program " is not installed: ") + QByteArray(what) +              \
                                    QByteArrayLiteral(" (install it; under CI this fails)");                           \
        if (underCi())                                                                                                 \
            QFAIL(message_.constData());                                                                               \
        QSKIP(message_.constData());                                                                                   \
    } while (false)
