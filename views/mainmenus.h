#pragma once

// The main window's Edit, Run and Help menus: the actions each holds and what they start. The
// File menu is FileOpening's and ResultsExport's, the View menu DockLayout's.

class QAction;
class QDockWidget;
class QMenuBar;
class QWidget;

namespace tilescope::views {

class CrossGpuView;
class ProblemDocument;
class RunPanel;
class SessionController;

/// Undo and redo of the problem's edits, and the kernel and launch dialog.
void addEditMenu(QMenuBar* bar, ProblemDocument* document, QWidget* window);

/// What the Run menu starts and stops.
struct RunMenuParts {
    QAction* start = nullptr;  ///< Start Run (the window's, which panels name)
    QAction* cancel = nullptr; ///< Cancel: the run and the cross-GPU analysis
    QDockWidget* runDock = nullptr;
    RunPanel* runPanel = nullptr;
    SessionController* session = nullptr;
    QDockWidget* crossGpuDock = nullptr;
    CrossGpuView* crossGpu = nullptr;
};

void addRunMenu(QMenuBar* bar, const RunMenuParts& parts, QWidget* window);

/// The manual, About Tilescope and About Qt.
void addHelpMenu(QMenuBar* bar, QWidget* window);

} // namespace tilescope::views
