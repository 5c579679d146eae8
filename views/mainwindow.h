#pragma once

// The workbench window: the Problem panel and the Config space panel as dock widgets around a
// central area (the kernel source for now; plots join it later). File menu with recent files,
// drag and drop of problem files, window layout kept in QSettings, load errors shown inline.

#include "problemdocument.h"

#include <QMainWindow>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QStackedWidget;
class QTabWidget;

namespace tilescope::views {

class ErrorBanner;
class ProblemPanel;
class SourceView;
class SpaceController;
class SpacePanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    struct Options {
        /// Restore the layout and keep recent files in QSettings (off for screenshots).
        bool persistent = true;
    };

    explicit MainWindow(QWidget* parent = nullptr);
    explicit MainWindow(Options options, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Opens a problem file; on failure shows the error inline and keeps the current problem.
    bool openProblem(const QString& path, ProblemDocument::Origin origin = ProblemDocument::Origin::File);
    /// Saves the current problem under another name and opens that file; reports errors in a dialog
    /// (or, with `error` given, only there).
    bool saveProblemAs(const QString& path, ProblemError* error = nullptr);

    QStringList recentFiles() const;
    /// True while the config space of the current problem is being built or sampled.
    bool isBusy() const;

    ProblemDocument* document() const { return m_document; }
    SpaceController* spaceController() const { return m_controller; }
    ProblemPanel* problemPanel() const { return m_problemPanel; }
    SpacePanel* spacePanel() const { return m_spacePanel; }
    SourceView* sourceView() const { return m_sourceView; }
    ErrorBanner* errorBanner() const { return m_errorBanner; }

signals:
    /// All background work for the current problem is done (the space summary is complete).
    void settled();

protected:
    void showEvent(QShowEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createActions();
    void createDocks();
    void openDialog();
    void saveAsDialog();
    void showAbout();
    void rebuildRecentMenu();
    void addRecentFile(const QString& path);
    void onProblemChanged();
    void onLoadFailed(const ProblemError& error);
    void onBusyChanged(bool busy);
    void requestSpace();
    void resetLayout();
    void saveLayout() const;
    void restoreLayout();
    void updateTitle();

    Options m_options;
    ProblemDocument* m_document;
    SpaceController* m_controller;
    ProblemPanel* m_problemPanel = nullptr;
    SpacePanel* m_spacePanel = nullptr;
    SourceView* m_sourceView = nullptr;
    QLabel* m_sourceHeader = nullptr;
    ErrorBanner* m_errorBanner = nullptr;
    QStackedWidget* m_centralStack = nullptr;
    QTabWidget* m_tabs = nullptr;
    QDockWidget* m_problemDock = nullptr;
    QDockWidget* m_spaceDock = nullptr;
    QMenu* m_recentMenu = nullptr;
    QMenu* m_viewMenu = nullptr;
    QAction* m_saveAsAction = nullptr;
    QProgressBar* m_busyBar = nullptr;
    QLabel* m_spaceStatus = nullptr;
    QByteArray m_defaultState; // the layout as built, for View > Reset Layout
    QStringList m_recentFiles;
    bool m_layoutRestored = false; // a saved layout was applied: keep its dock sizes
    bool m_shownOnce = false;
};

} // namespace tilescope::views
