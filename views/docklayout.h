#pragma once

// The workbench's docks and how they are arranged: each panel in a dock (closable, movable,
// floatable); the default places (the problem and the run on the left, the plots as tabs above
// the results in the middle, the details on the right), each main dock kept wide enough to read,
// title bars only on docks that stand alone, and the arrangement the user makes kept per screen
// size in QSettings (View > Reset Layout goes back to the default).

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QRect>
#include <QString>

class QDockWidget;
class QMainWindow;
class QMenu;
class QScrollArea;
class QWidget;

namespace tilescope::views {

/// Makes, places, sizes and keeps the window's docks; see the top of this file.
class DockLayout : public QObject {
    Q_OBJECT
public:
    /// The dynamic property of each main panel's dock holding its readable minimum width in pixels:
    /// narrower, its values would wrap or be cut. The window keeps each dock at least this wide.
    static constexpr const char* kReadableWidthProperty = "readableMinimumWidth";

    /// The main docks by their place in the default arrangement.
    struct Places {
        QDockWidget* problem = nullptr; ///< left, top
        QDockWidget* run = nullptr;     ///< left, under the problem (a tab beside it on a short screen)
        QDockWidget* plots = nullptr;   ///< middle, top; plotTabs are tabs beside it
        QDockWidget* results = nullptr; ///< middle, under the plots; resultTabs are tabs beside it
        QDockWidget* details = nullptr; ///< right
        QList<QDockWidget*> plotTabs;
        QList<QDockWidget*> resultTabs;
        QWidget* runForm = nullptr; ///< the Run panel: the left column is wide enough for its form where it can be
    };

    /// `persistent`: the layout is kept in QSettings. Sets the window's dock options: nested and
    /// tabbed docks with tabs on top, the left and right columns the full height.
    DockLayout(QMainWindow* window, bool persistent);

    /// A side panel in a scroll area: on a small screen it scrolls instead of making the window taller.
    static QScrollArea* scrollable(QWidget* panel);

    /// A dock for `widget`, named `objectName` (the saved layout knows it by that name).
    QDockWidget* addDock(const QString& title, const QString& objectName, QWidget* widget);
    /// Every dock, in the order added.
    QList<QDockWidget*> docks() const { return m_docks; }
    /// Puts the docks in their default places and keeps the main ones readable.
    void arrange(const Places& places);
    /// A first size that suits the screen; then the layout saved for this screen size, if any.
    void sizeWindow();
    /// The View menu: a toggle for each dock (Alt+1 to Alt+9 for the first nine), then Reset Layout.
    void addViewActions(QMenu* view);
    /// The window was shown: the first time, the default dock sizes (they only take once the window
    /// is laid out), kept for Reset Layout. True the first time.
    bool windowShown();
    /// Every dock back in its default place and size.
    void reset();
    /// Keeps the layout for this screen size (when persistent).
    void save() const;
    /// Shrinks the window to the screen's available area when it is larger.
    void fitToScreen();
    QRect availableScreenArea() const;

private:
    void updateTitleBars();
    void applyDefaultSizes();
    void raiseDefaults();
    QString settingsGroup() const;

    QMainWindow* m_window;
    bool m_persistent;
    QList<QDockWidget*> m_docks;
    Places m_places;
    QByteArray m_defaultState;     // the layout as built, for Reset Layout
    bool m_layoutRestored = false; // a saved layout was applied: keep its dock sizes
    bool m_shownOnce = false;
};

} // namespace tilescope::views
