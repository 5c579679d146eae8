#pragma once

// The workbench window. Every panel is a dock (View menu to show and hide them, the layout kept in
// QSettings): Problem, Config Space and Run on the left; Heatmap, Scatter and the Kernel Source
// as tabs in the middle above the Results table (Cross-GPU beside it); Details on the right.
//
// A SessionController runs tuning sessions and opens recordings; its snapshots feed the table,
// the plots, the details and the cross-GPU view. A config selected in any of them (heatmap cell,
// scatter point, table row, cross-GPU row) is selected in all and shown in Details. File menu
// with recent problems and recordings, drag and drop of both, export of results and plots;
// errors while opening show in a banner under the menu bar.
//
// The window assembles the parts that do those jobs: FileOpening (files in), DockLayout (the docks
// and their arrangement), ResultsFanOut (a snapshot to every view), ConfigSelection (one config
// for every view) and ResultsExport (files out).

#include "docklayout.h"
#include "problem/problemdocument.h"
#include "session/sessiontypes.h"

#include <QMainWindow>

#include <memory>

class QAction;
class QDockWidget;
class QLabel;
class QMenuBar;
class QProgressBar;

namespace tilescope::views {

class ConfigDetailsPanel;
class ConfigSelection;
class CrossGpuView;
class ShapesView;
class CompareView;
class ErrorBanner;
class ExportDialog;
class FileOpening;
class HeatmapWidget;
class CompileCheckPanel;
class KernelSourcePanel;
class ProblemPanel;
class ResultsExport;
class ResultsFanOut;
class ResultsView;
class RunPanel;
class ScatterWidget;
class SessionController;
class SourceView;
class SpaceController;
class SpacePanel;
struct SpaceResult;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        /// Restore the layout and keep recent files in QSettings (off for screenshots).
        bool persistent = true;
    };

    /// What a file holds, as far as opening it goes.
    enum class FileKind { Problem, Recording };

    /// The dynamic property of each main panel's dock holding its readable minimum width in pixels:
    /// narrower, its values would wrap or be cut. The window keeps each dock at least this wide.
    static constexpr const char* kReadableWidthProperty = DockLayout::kReadableWidthProperty;

    explicit MainWindow(QWidget* parent = nullptr);
    explicit MainWindow(Options options, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens a problem file; on failure shows the error inline and keeps the current problem.
    bool openProblem(const QString& path, ProblemDocument::Origin origin = ProblemDocument::Origin::File);
    /// Opens a recording (T4, Kernel Tuner cache, Tilescope database; gzip-compressed or not) for
    /// browsing: read off the GUI thread, then shown in the table and the plots. False when the
    /// file does not exist (a file that does not read shows its error in the banner later).
    bool openRecording(const QString& path);
    /// Opens a problem or a recording, whichever `path` is.
    bool openFile(const QString& path);
    /// The embedded default: writes the sgemm example and the demo recording (a whole session
    /// measured on an NVIDIA H200) into `folder`, opens the problem at the recording's shape and
    /// the recording. False (with the error in the banner) when they cannot be written.
    bool openDemo(const QString& folder);
    /// The results on screen are the embedded demo recording's.
    bool isDemo() const;

    /// Saves the current problem under another name and opens that file; reports errors in a dialog
    /// (or, with `error` given, only there).
    bool saveProblemAs(const QString& path, ProblemError* error = nullptr);
    /// Save: the edited problem back to its file (an example asks where, as Save As).
    bool saveProblem();
    /// Scans a CUDA kernel file and opens the problem proposed for it (unsaved, to be filled in;
    /// Save writes it beside the kernel). False with a banner when the file has no kernel.
    bool newProblemFromKernel(const QString& kernelPath);

    /// Selects a config (compact JSON) in the heatmap, the scatter plot, the results table and
    /// the cross-GPU table, and shows it in Details; "" clears.
    void selectConfig(const QString& configJson);
    QString selectedConfig() const;

    /// Opens the export dialog (not modal) on the current results and returns it.
    ExportDialog* showExportDialog();
    /// Writes a plot to `path`: PNG or PDF by its suffix. False on failure.
    bool exportPlot(QWidget* plot, const QString& path);

    /// The recent files: problems and recordings, newest first.
    QStringList recentFiles() const;
    /// True while the config space of the current problem is being built or sampled.
    bool isBusy() const;
    /// True while a recording is being read.
    bool isLoadingResults() const;
    /// The heatmap shows results (a grid with at least one measured cell).
    /// Results are on the heatmap, measured or not (a recording of static analysis has no time
    /// to colour by, yet its results are there).
    bool hasResultsLoaded() const;
    bool hasResultsShown() const;
    /// The results on screen (never null).
    ResultsSnapshot results() const;
    /// The launch warnings of the open problem at its shape (analysis/launchcheck.h), "POINTER: message".
    QStringList launchWarnings() const { return m_launchWarnings; }

    ProblemDocument* document() const { return m_document; }
    SpaceController* spaceController() const { return m_controller; }
    SessionController* sessionController() const { return m_session; }
    ProblemPanel* problemPanel() const { return m_problemPanel; }
    CompileCheckPanel* compileCheck() const { return m_compileCheck; }
    SpacePanel* spacePanel() const { return m_spacePanel; }
    SourceView* sourceView() const;
    ErrorBanner* errorBanner() const { return m_errorBanner; }
    HeatmapWidget* heatmap() const { return m_heatmap; }
    ScatterWidget* scatter() const { return m_scatter; }
    ResultsView* resultsView() const { return m_resultsView; }
    RunPanel* runPanel() const { return m_runPanel; }
    ConfigDetailsPanel* detailsPanel() const { return m_details; }
    CrossGpuView* crossGpuView() const { return m_crossGpu; }
    CompareView* compareView() const { return m_compare; }
    /// Compares the results on screen with another recording (Compare panel, brought forward).
    void compareWith(const QString& path);
    /// The docks, by object name ("heatmapDock", ...).
    QList<QDockWidget*> docks() const;

    /// Whether a file is a problem or a recording: by its first bytes (SQLite and gzip headers,
    /// the keys of a T4 file or a Kernel Tuner cache), else a problem.
    static FileKind classifyFile(const QString& path);

signals:
    /// All background work for the current problem is done (the space summary is complete).
    void settled();
    /// Results are on screen: the heatmap shows a grid with measured cells (after a recording
    /// opened, or as a run goes).
    void resultsShown();

protected:
    void showEvent(QShowEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void changeEvent(QEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createDocks();
    void createActions();
    void onProblemChanged();
    void onProblemEdited();
    void onBusyChanged(bool busy);
    void onSpaceReady(const std::shared_ptr<const SpaceResult>& result);
    void onRecordingLoaded(const QString& description);
    void onSessionStarted(const QString& description);
    void onSessionFailed(const QString& message);
    void onRunningChanged(bool running);
    void onHeatmapGridChanged();
    void requestSpace();
    void followPalette();
    void followScreen();

    Options m_options;
    ProblemDocument* m_document;
    SpaceController* m_controller;
    SessionController* m_session;
    DockLayout* m_layout;
    ConfigSelection* m_selection;
    FileOpening* m_files = nullptr;
    ResultsFanOut* m_shown = nullptr;
    ResultsExport* m_export = nullptr;

    // Panels
    ProblemPanel* m_problemPanel = nullptr;
    SpacePanel* m_spacePanel = nullptr;
    RunPanel* m_runPanel = nullptr;
    ResultsView* m_resultsView = nullptr;
    HeatmapWidget* m_heatmap = nullptr;
    ScatterWidget* m_scatter = nullptr;
    ConfigDetailsPanel* m_details = nullptr;
    CrossGpuView* m_crossGpu = nullptr;
    ShapesView* m_shapes = nullptr;
    CompareView* m_compare = nullptr;
    KernelSourcePanel* m_sourcePanel = nullptr;
    ErrorBanner* m_errorBanner = nullptr;
    QMenuBar* m_menuBar = nullptr;

    // Docks
    QDockWidget* m_problemDock = nullptr;
    QDockWidget* m_spaceDock = nullptr;
    QDockWidget* m_runDock = nullptr;
    QDockWidget* m_heatmapDock = nullptr;
    QDockWidget* m_scatterDock = nullptr;
    QDockWidget* m_sourceDock = nullptr;
    QDockWidget* m_compileDock = nullptr;
    CompileCheckPanel* m_compileCheck = nullptr;
    QDockWidget* m_resultsDock = nullptr;
    QDockWidget* m_crossGpuDock = nullptr;
    QDockWidget* m_shapesDock = nullptr;
    QDockWidget* m_compareDock = nullptr;
    QDockWidget* m_detailsDock = nullptr;

    // Menus and status
    QAction* m_runAction = nullptr;
    QAction* m_cancelAction = nullptr;
    QProgressBar* m_busyBar = nullptr;
    QLabel* m_spaceStatus = nullptr;
    QStringList m_launchWarnings; // last shown, to say them once
};

} // namespace tilescope::views
