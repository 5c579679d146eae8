#include "session/resultsheadline.h"

#include "analysis/clocks.h"
#include "analysis/verificationsplit.h"
#include "common/emptystate.h"
#include "common/format.h"

#include <QDir>
#include <QFileInfo>
#include <QKeySequence>
#include <QLocale>
#include <QObject>

#include <cstdint>

namespace tilescope::views {

ResultsHeadline describeResults(const SessionInfo& info, const std::vector<ResultRecord>& results,
                                const ResultsOrigin& origin) {
    std::size_t ok = 0;
    std::size_t analysed = 0;
    for (const ResultRecord& r : results) {
        ok += r.ok() ? 1 : 0;
        analysed += r.ranksStatically() ? 1 : 0;
    }
    // A session of no device (the analysis backend's) is of an arch.
    const QString device = !info.deviceName.empty() ? QString::fromStdString(info.deviceName)
                           : !info.arch.empty()     ? QString::fromStdString(info.arch)
                                                    : QObject::tr("an unknown device");
    const QString shape = QString::fromStdString(info.shapeLabel());
    QString best;
    QString shortBest;
    QString bestConfig;
    if (const auto b = bestOf(results); b && b->ranksStatically()) {
        // Analysed, never run: the best by what compiling told.
        best = QObject::tr("best %1 (not timed)").arg(QString::fromStdString(describeStatic(*b)).toHtmlEscaped());
        shortBest = best;
        bestConfig = QString::fromStdString(describeConfig(b->config));
    } else if (b) {
        const QString time = QObject::tr("%1 ms").arg(QLocale().toString(b->timeMs(), 'g', 4));
        best = b->objective && !info.objectiveName.empty() ? QObject::tr("best %1 %2 (%3)")
                                                                 .arg(QLocale().toString(*b->objective, 'f', 2),
                                                                      QString::fromStdString(info.objectiveName), time)
                                                           : QObject::tr("best %1").arg(time);
        bestConfig = QString::fromStdString(describeConfig(b->config));
        shortBest = b->objective && !info.objectiveName.empty() ? QObject::tr("best %1 %2")
                                                                      .arg(QLocale().toString(*b->objective, 'f', 2),
                                                                           QString::fromStdString(info.objectiveName))
                                                                : best;
    }
    const QString what = QString::fromStdString(info.kernel.empty() ? std::string("results") : info.kernel);
    const QString counts =
        ok == results.size() ? QObject::tr("%1 configs").arg(formatCount(std::uint64_t(ok)))
        : analysed > 0 && ok == 0
            ? (analysed == results.size()
                   ? QObject::tr("%1 configs analysed").arg(formatCount(std::uint64_t(analysed)))
                   : QObject::tr("%1 results, %2 analysed")
                         .arg(formatCount(std::uint64_t(results.size())), formatCount(std::uint64_t(analysed))))
            : QObject::tr("%1 results, %2 ok")
                  .arg(formatCount(std::uint64_t(results.size())), formatCount(std::uint64_t(ok)));
    const QString dot = QStringLiteral(" &nbsp;·&nbsp; ");
    ResultsHeadline out;
    if (origin.demo) {
        // One line where the window is wide enough: the time of the best is in the tooltip and Details.
        out.header = QObject::tr("<b>Recorded demo session</b>%5%1, %2%5<b>%3</b>%5%4")
                         .arg(what.toHtmlEscaped(), shape.toHtmlEscaped(), device.toHtmlEscaped(), counts, dot) +
                     (shortBest.isEmpty() ? QString() : dot + shortBest);
        out.tooltip =
            QObject::tr("The example's whole config space, measured on an %1 with Tilescope's CUDA backend and shipped "
                        "with the program (resources/demo). It is replayed here: no GPU is needed to browse it.\n"
                        "Best: %2, %3.\nOpen your own problem or recording with File > Open; Run replays this one.")
                .arg(device, best, bestConfig);
        out.status = QObject::tr("Demo session recorded on an %1").arg(device);
    } else if (origin.running) {
        out.header = QObject::tr("<b>Tuning</b> %1 at %2 on %3%5%4 so far")
                         .arg(what.toHtmlEscaped(), shape.toHtmlEscaped(), device.toHtmlEscaped(), counts, dot) +
                     (best.isEmpty() ? QString() : dot + best);
        out.status = QObject::tr("Tuning on %1").arg(device);
    } else {
        const QString& path = origin.recordingPath;
        const QString source =
            path.isEmpty() ? QObject::tr("Session %1").arg(info.id) : QFileInfo(path).fileName().toHtmlEscaped();
        out.header =
            QObject::tr("<b>%1</b>%6%2 at %3 on %4%6%5")
                .arg(source, what.toHtmlEscaped(), shape.toHtmlEscaped(), device.toHtmlEscaped(), counts, dot) +
            (best.isEmpty() ? QString() : dot + best); // no best: no dangling dot
        out.tooltip = path.isEmpty() ? QString() : QDir::toNativeSeparators(path);
        if (!bestConfig.isEmpty())
            out.tooltip +=
                (out.tooltip.isEmpty() ? QString() : QStringLiteral("\n")) + QObject::tr("Best: %1").arg(bestConfig);
        out.status = path.isEmpty() ? QObject::tr("Session %1 on %2").arg(info.id).arg(device)
                                    : QObject::tr("Recording %1 from %2").arg(QFileInfo(path).fileName(), device);
    }
    // What the GPU did while it measured, and in which L2 context (from the provenance).
    bool moved = false;
    if (const std::string state = measuredStateSentence(info.provenanceJson, &moved); !state.empty()) {
        out.tooltip += (out.tooltip.isEmpty() ? QString() : QStringLiteral("\n")) +
                       QObject::tr("GPU while measuring: %1").arg(QString::fromStdString(state));
        if (moved)
            out.header += dot + QObject::tr("<span style='color:#b45309'>⚠ clocks moved</span>");
    }
    if (const std::string context = measurementContext(info.provenanceJson); !context.empty())
        out.tooltip += (out.tooltip.isEmpty() ? QString() : QStringLiteral("\n")) +
                       QObject::tr("L2 context: %1").arg(QString::fromStdString(context));
    if (const std::string from = provenanceSentence(info); !from.empty())
        out.tooltip += (out.tooltip.isEmpty() ? QString() : QStringLiteral("\n")) +
                       QObject::tr("Provenance: %1").arg(QString::fromStdString(from));
    out.verdict = sessionVerdict(info, results);
    return out;
}

QString sessionVerdict(const SessionInfo& info, const std::vector<ResultRecord>& results) {
    QStringList lines;
    if (info.state == SessionState::Failed && !info.message.empty())
        lines << QObject::tr("The session failed: %1").arg(QString::fromStdString(info.message));
    std::string verification = recordedVerdict(info.provenanceJson, "verification");
    if (verification.empty()) // a session recorded before sessions kept their verdict, or a recording
        verification = describeVerification(results, verificationSplits(results));
    if (!verification.empty())
        lines << QObject::tr("Verification: %1").arg(QString::fromStdString(verification));
    if (const std::string inputs = recordedVerdict(info.provenanceJson, "second_inputs"); !inputs.empty())
        lines << QObject::tr("Second input set: %1").arg(QString::fromStdString(inputs));
    return lines.join(QLatin1Char('\n'));
}

QString noResultsNote(bool loading, const QKeySequence& runShortcut) {
    if (loading)
        return QObject::tr("<h3>Reading the recording…</h3>");
    return QObject::tr("<h3>No results yet</h3>"
                       "<p>Start a tuning run from the Run panel (%1), or open recorded results (%2): a T4 file, a "
                       "Kernel Tuner cache or a Tilescope database; dropping one on the window works too.</p>"
                       "<p>The heatmap then shows the best result of every pair of parameter values.</p>")
        .arg(shortcutText(runShortcut), shortcutText(QKeySequence(QKeySequence::Open)));
}

} // namespace tilescope::views
