#pragma once

// Runs the real tilescope-cli (TILESCOPE_CLI, set by tests/CMakeLists.txt) for the suites that
// test it as a user meets it: its exit status, stdout and stderr.

#include <QProcess>
#include <QString>
#include <QStringList>

struct CliRun {
    int status = -1; ///< the exit code; -1 when it crashed or ran past its time (two minutes unless told)
    QString out;
    QString err;
};

/// Runs `program` with `args` (in `workDir` when given) and waits up to `timeoutMs`.
inline CliRun runProgram(const QString& program, const QStringList& args, int timeoutMs = 120000,
                         const QString& workDir = {}) {
    QProcess p;
    if (!workDir.isEmpty())
        p.setWorkingDirectory(workDir);
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        CliRun overran;
        overran.err = QStringLiteral("(overran its deadline of %1 ms)").arg(timeoutMs);
        return overran;
    }
    CliRun r;
    r.status = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

inline CliRun runCli(const QStringList& args, const QString& program = QStringLiteral(TILESCOPE_CLI),
                     int timeoutMs = 120000) {
    return runProgram(program, args, timeoutMs);
}

/// For failure messages: the status and both streams.
inline QString describe(const CliRun& r) {
    return "status " + QString::number(r.status) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}
