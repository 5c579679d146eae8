#include "export/resultsexport.h"

#include "common/format.h"
#include "export/exportdialog.h"
#include "fileopening.h"
#include "plots/resultplot.h"
#include "session/sessioncontroller.h"

#include "jobs/export.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>

#include <utility>

namespace tilescope::views {

namespace {

constexpr int kStatusTimeoutMs = 6000;
const QString kExportDirKey = QStringLiteral("MainWindow/exportDirectory");

} // namespace

ResultsExport::ResultsExport(QMainWindow* window, SessionController* session, const FileOpening* files,
                             std::function<ResultsSnapshot()> shown, bool persistent)
    : QObject(window)
    , m_window(window)
    , m_session(session)
    , m_files(files)
    , m_shown(std::move(shown))
    , m_persistent(persistent) {}

ResultsExport::~ResultsExport() {
    delete m_dialog;
}

void ResultsExport::addActions(QMenu* file, QWidget* heatmap, QWidget* scatter, std::function<QString()> selected) {
    QAction* exportResults = file->addAction(tr("&Export Results…"), this, [this]() { showDialog(); });
    exportResults->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportResults->setStatusTip(tr("Write results as T4, a JSON cache of the best configs, triton.Config lists, a "
                                   "C++ header or CSV"));
    if (selected) {
        m_selected = std::move(selected);
        QAction* one = file->addAction(tr("Export Selected &Config…"), this, [this]() { exportSelectedDialog(); });
        one->setStatusTip(tr("Write the selected config (a trade-off picked on the time-energy front, say) as the "
                             "JSON cache or C++ header entry, instead of the fastest"));
    }
    QMenu* exportPlot = file->addMenu(tr("Export &Plot"));
    exportPlot->addAction(tr("&Heatmap (PNG or PDF)…"), this,
                          [this, heatmap]() { exportPlotDialog(heatmap, QStringLiteral("heatmap")); });
    exportPlot->addAction(tr("&Scatter Plot (PNG or PDF)…"), this,
                          [this, scatter]() { exportPlotDialog(scatter, QStringLiteral("scatter")); });
}

ExportDialog* ResultsExport::showDialog() {
    if (!m_dialog) {
        m_dialog = new ExportDialog(m_window);
        m_dialog->setOutputFolder(QSettings().value(kExportDirKey, QDir::homePath()).toString());
        connect(m_dialog, &ExportDialog::exported, this,
                [this](const QString& path, const QString& format, qint64 bytes) {
                    if (m_persistent)
                        QSettings().setValue(kExportDirKey, QFileInfo(path).absolutePath());
                    m_window->statusBar()->showMessage(
                        tr("Wrote %1 (%2, %3 bytes)")
                            .arg(QDir::toNativeSeparators(path), format, QLocale().toString(bytes)),
                        kStatusTimeoutMs);
                });
    }
    const SessionInfo info = m_session->session();
    const ResultsSnapshot results = m_shown();
    const QString recordingPath = m_files->recordingPath();
    if (isDatabaseFile(recordingPath)) {
        // A database may hold several sessions (shapes, devices): list them all.
        m_dialog->openRecording(recordingPath);
    } else if (!results->empty()) {
        std::vector<SessionData> sessions(1);
        sessions.front().info = info;
        sessions.front().results = *results;
        const QString label =
            m_files->isDemo()
                ? tr("the demo recording (%1 results of %2 on an %3)")
                      .arg(formatCount(std::uint64_t(results->size())), QString::fromStdString(info.kernel),
                           QString::fromStdString(info.deviceName))
                : tr("the results on screen (%1 results%2)")
                      .arg(formatCount(std::uint64_t(results->size())),
                           recordingPath.isEmpty() ? QString() : tr(" of %1").arg(QFileInfo(recordingPath).fileName()));
        m_dialog->setSessions(std::move(sessions), label);
    }
    m_dialog->show();
    m_dialog->raise();
    m_dialog->activateWindow();
    return m_dialog;
}

QString ResultsExport::writeSelectedConfig(const SessionInfo& session, const std::vector<ResultRecord>& results,
                                           const QString& configJson, const QString& path) {
    try {
        if (!exportChosenConfig(session, results, configJson.toStdString(), path.toStdString()))
            return tr("The selected config has no correct result to export.");
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

void ResultsExport::exportSelectedDialog() {
    const QString selected = m_selected ? m_selected() : QString();
    if (selected.isEmpty()) {
        QMessageBox::information(m_window, tr("Export Selected Config"),
                                 tr("Select a config first: click a cell of the heatmap or a point of the scatter "
                                    "plot (on the time-energy front, the trade-off you want)."));
        return;
    }
    QSettings settings;
    const QString folder = settings.value(kExportDirKey, QDir::homePath()).toString();
    const QString path = QFileDialog::getSaveFileName(
        m_window, tr("Export Selected Config"), QDir(folder).filePath(QStringLiteral("selected_config.json")),
        tr("JSON cache of best configs (*.json);;C++ dispatch header (*.h *.hpp)"));
    if (path.isEmpty())
        return;
    const ResultsSnapshot results = m_shown();
    const QString error = writeSelectedConfig(m_session->session(), results ? *results : std::vector<ResultRecord>{},
                                              selected, path);
    if (!error.isEmpty()) {
        QMessageBox::warning(m_window, tr("Export Selected Config"), error);
        return;
    }
    if (m_persistent)
        settings.setValue(kExportDirKey, QFileInfo(path).absolutePath());
    m_window->statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), kStatusTimeoutMs);
}

void ResultsExport::closeDialog() {
    if (m_dialog)
        m_dialog->close();
}

bool ResultsExport::exportPlot(QWidget* plot, const QString& path) {
    auto* resultPlot = qobject_cast<ResultPlot*>(plot);
    if (!resultPlot)
        return false;
    return path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive) ? resultPlot->savePdf(path)
                                                                     : resultPlot->savePng(path);
}

void ResultsExport::exportPlotDialog(QWidget* plot, const QString& name) {
    QSettings settings;
    const QString folder = settings.value(kExportDirKey, QDir::homePath()).toString();
    const QString stem = m_session->session().kernel.empty()
                             ? name
                             : QString::fromStdString(m_session->session().kernel) + QLatin1Char('_') + name;
    QString selected;
    QString path = QFileDialog::getSaveFileName(m_window, tr("Export Plot"), QDir(folder).filePath(stem + ".png"),
                                                tr("PNG image (*.png);;PDF document (*.pdf)"), &selected);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += selected.contains(QLatin1String("pdf")) ? QStringLiteral(".pdf") : QStringLiteral(".png");
    if (!exportPlot(plot, path)) {
        QMessageBox::warning(m_window, tr("Export Plot"),
                             tr("Could not write %1.").arg(QDir::toNativeSeparators(path)));
        return;
    }
    if (m_persistent)
        settings.setValue(kExportDirKey, QFileInfo(path).absolutePath());
    m_window->statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), kStatusTimeoutMs);
}

} // namespace tilescope::views
