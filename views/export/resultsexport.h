#pragma once

// The File menu's exports: the results through the export dialog (a database with all its
// sessions, else the results on screen), and a plot as PNG or PDF; the folder last written to is
// remembered.

#include "session/sessiontypes.h"

#include <QObject>
#include <QString>

#include <functional>

class QMainWindow;
class QMenu;
class QWidget;

namespace tilescope::views {

class ExportDialog;
class FileOpening;
class SessionController;

/// The export dialog and the plot exports of a window.
class ResultsExport : public QObject {
    Q_OBJECT
public:
    /// `shown` gives the results on screen; `files` where they came from. `persistent`: the export
    /// folder is kept in QSettings.
    ResultsExport(QMainWindow* window, SessionController* session, const FileOpening* files,
                  std::function<ResultsSnapshot()> shown, bool persistent);
    /// Closes and deletes the dialog.
    ~ResultsExport() override;

    /// Export Results…, Export Selected Config… (with `selected`: the selected config's compact
    /// JSON text, "" when none), and Export Plot with the heatmap and the scatter plot (ResultPlots).
    void addActions(QMenu* file, QWidget* heatmap, QWidget* scatter, std::function<QString()> selected = {});
    /// Writes one result of `results` (the config of `configJson`, compact JSON text) as the one
    /// entry of the JSON cache of best configs (a path ending in .json) or of the C++ dispatch
    /// header (.h, .hpp): a trade-off chosen on the time-energy front rather than the fastest.
    /// "" when written, else why not.
    static QString writeSelectedConfig(const SessionInfo& session, const std::vector<ResultRecord>& results,
                                       const QString& configJson, const QString& path);
    /// Opens the export dialog (not modal) on the current results and returns it.
    ExportDialog* showDialog();
    /// Writes a plot (a ResultPlot) to `path`: PNG or PDF by its suffix. False on failure.
    static bool exportPlot(QWidget* plot, const QString& path);
    /// Closes the dialog, if open.
    void closeDialog();

private:
    void exportPlotDialog(QWidget* plot, const QString& name);
    void exportSelectedDialog();
    std::function<QString()> m_selected;

    QMainWindow* m_window;
    SessionController* m_session;
    const FileOpening* m_files;
    std::function<ResultsSnapshot()> m_shown;
    bool m_persistent;
    ExportDialog* m_dialog = nullptr;
};

} // namespace tilescope::views
