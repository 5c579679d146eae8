#include "docklayout.h"

#include <QAction>
#include <QDockWidget>
#include <QGuiApplication>
#include <QMainWindow>
#include <QMenu>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>

#include <algorithm>
#include <utility>

namespace tilescope::views {

namespace {

constexpr int kLayoutVersion = 2; // bump when docks are added or renamed
// The layout a user arranges is kept per screen size: a laptop's and a desktop monitor's differ.
const QString kLayoutGroup = QStringLiteral("MainWindow/layout-%1x%2");
const QString kGeometryKey = QStringLiteral("geometry");
const QString kStateKey = QStringLiteral("state");
// Below this available height the Run panel shares the Problem panel's place as a tab.
constexpr int kShortScreenHeight = 1050;
// Below this available width (or height) the window opens maximised: every pixel counts.
constexpr int kSmallScreenWidth = 1500;

} // namespace

DockLayout::DockLayout(QMainWindow* window, bool persistent)
    : QObject(window)
    , m_window(window)
    , m_persistent(persistent) {
    window->setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowNestedDocks | QMainWindow::AllowTabbedDocks |
                           QMainWindow::GroupedDragging);
    window->setDocumentMode(true);
    window->setTabPosition(Qt::AllDockWidgetAreas, QTabWidget::North);
    // The left and right columns run the full height; the plots and the table sit between them.
    window->setCorner(Qt::TopLeftCorner, Qt::LeftDockWidgetArea);
    window->setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    window->setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    window->setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
}

QScrollArea* DockLayout::scrollable(QWidget* panel) {
    auto* area = new QScrollArea(panel->parentWidget());
    area->setObjectName(panel->objectName() + QStringLiteral("Scroll"));
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setWidget(panel);
    return area;
}

QDockWidget* DockLayout::addDock(const QString& title, const QString& objectName, QWidget* widget) {
    auto* dock = new QDockWidget(title, m_window);
    dock->setObjectName(objectName);
    dock->setWidget(widget);
    dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                      QDockWidget::DockWidgetFloatable);
    m_docks.append(dock);
    return dock;
}

void DockLayout::arrange(const Places& places) {
    m_places = places;
    // Splits before tabs: a tabbed dock cannot be split afterwards without taking its group along.
    m_window->addDockWidget(Qt::LeftDockWidgetArea, places.problem);
    m_window->splitDockWidget(places.problem, places.run, Qt::Vertical);
    m_window->addDockWidget(Qt::TopDockWidgetArea, places.plots);
    m_window->splitDockWidget(places.plots, places.results, Qt::Vertical);
    for (const auto& [first, tabs] :
         {std::pair{places.plots, places.plotTabs}, std::pair{places.results, places.resultTabs}}) {
        QDockWidget* previous = first;
        for (QDockWidget* tab : tabs)
            m_window->tabifyDockWidget(std::exchange(previous, tab), tab);
    }
    m_window->addDockWidget(Qt::RightDockWidgetArea, places.details);
    // On a short screen the Run panel is a tab beside the Problem panel rather than under it.
    if (availableScreenArea().height() < kShortScreenHeight)
        m_window->tabifyDockWidget(places.problem, places.run);
    raiseDefaults();

    // Narrower than this a panel would wrap its values or cut them: the window keeps every panel at
    // least this wide (and scrolls the panel's content rather than squeezing it).
    const int em = m_window->fontMetrics().averageCharWidth();
    for (const auto& [dock, chars] :
         {std::pair{places.problem, 34}, std::pair{places.run, 34}, std::pair{places.details, 30},
          std::pair{places.plots, 44}, std::pair{places.results, 44}}) {
        dock->setProperty(kReadableWidthProperty, em * chars);
        dock->setMinimumWidth(em * chars);
    }

    for (QDockWidget* dock : std::as_const(m_docks)) {
        const auto later = [this]() { QTimer::singleShot(0, this, &DockLayout::updateTitleBars); };
        connect(dock, &QDockWidget::visibilityChanged, this, later);
        connect(dock, &QDockWidget::topLevelChanged, this, later);
        connect(dock, &QDockWidget::dockLocationChanged, this, later);
    }
    updateTitleBars();
}

void DockLayout::raiseDefaults() {
    m_places.problem->raise();
    m_places.plots->raise();
    m_places.results->raise();
}

void DockLayout::updateTitleBars() {
    // A dock among tabs is named by its tab: its own title bar would say it again and take a
    // line of the plots' height. A dock on its own (or floating) keeps its title bar.
    for (QDockWidget* dock : std::as_const(m_docks)) {
        const QList<QDockWidget*> group = m_window->tabifiedDockWidgets(dock);
        const bool tabbed = !dock->isFloating() && !dock->isHidden() &&
                            std::any_of(group.begin(), group.end(), [](QDockWidget* d) { return !d->isHidden(); });
        QWidget* empty = dock->titleBarWidget();
        if (tabbed && !empty) {
            dock->setTitleBarWidget(new QWidget(dock));
        } else if (!tabbed && empty) {
            dock->setTitleBarWidget(nullptr);
            empty->deleteLater();
        }
    }
}

void DockLayout::sizeWindow() {
    // A first-run size that suits the screen; a saved layout (of this screen size) replaces it.
    const QRect available = availableScreenArea();
    if (available.width() < kSmallScreenWidth || available.height() < kShortScreenHeight) {
        m_window->resize(available.size());
        m_window->setWindowState(m_window->windowState() | Qt::WindowMaximized);
    } else {
        m_window->resize(std::min(available.width() * 85 / 100, 2400), std::min(available.height() * 85 / 100, 1400));
    }
    if (m_persistent) {
        QSettings settings;
        settings.beginGroup(settingsGroup());
        const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
        if (!geometry.isEmpty())
            m_window->restoreGeometry(geometry);
        const QByteArray state = settings.value(kStateKey).toByteArray();
        if (!state.isEmpty())
            m_layoutRestored = m_window->restoreState(state, kLayoutVersion);
    }
    fitToScreen();
}

void DockLayout::reset() {
    for (QDockWidget* dock : std::as_const(m_docks)) {
        dock->setFloating(false);
        dock->show();
    }
    if (!m_defaultState.isEmpty())
        m_window->restoreState(m_defaultState, kLayoutVersion);
    updateTitleBars();
    raiseDefaults();
}

void DockLayout::applyDefaultSizes() {
    // Left a quarter, right a little less, the plots in between (none below what its panels
    // need); the plots take 60 % of the height above the results, the problem a little less than half above the run
    // panel.
    const int w = m_window->width();
    const int h = m_window->height();
    // On a small screen the problem's side gets more: its tables and conditions need the width more
    // than the plot and Details do.
    const int leftShare = w < kSmallScreenWidth ? 30 : 26;
    const int rightShare = w < kSmallScreenWidth ? 24 : 23;
    // Wide enough for the Run panel's form without scrolling sideways, where the window allows.
    const int runForm =
        m_places.runForm->minimumSizeHint().width() + m_window->style()->pixelMetric(QStyle::PM_ScrollBarExtent);
    const int left = std::max({w * leftShare / 100, m_places.problem->minimumWidth(), m_places.run->minimumWidth(),
                               std::min(runForm, w * 34 / 100)});
    const int right = std::max(w * rightShare / 100, m_places.details->minimumWidth());
    m_window->resizeDocks({m_places.problem, m_places.plots, m_places.details},
                          {left, std::max(w - left - right, 1), right}, Qt::Horizontal);
    m_window->resizeDocks({m_places.plots, m_places.results}, {h * 60 / 100, h * 40 / 100}, Qt::Vertical);
    m_window->resizeDocks({m_places.problem, m_places.run}, {h * 46 / 100, h * 54 / 100}, Qt::Vertical);
}

void DockLayout::addViewActions(QMenu* view) {
    int number = 1;
    for (QDockWidget* dock : std::as_const(m_docks)) {
        QAction* toggle = dock->toggleViewAction();
        if (number <= 9)
            toggle->setShortcut(QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_0 + number)));
        ++number;
        view->addAction(toggle);
    }
    view->addSeparator();
    view->addAction(tr("&Reset Layout"), this, &DockLayout::reset);
}

bool DockLayout::windowShown() {
    if (m_shownOnce)
        return false;
    m_shownOnce = true;
    // Dock sizes only take once the window is laid out.
    QTimer::singleShot(0, this, [this]() {
        const QByteArray restored = m_layoutRestored ? m_window->saveState(kLayoutVersion) : QByteArray();
        applyDefaultSizes();
        m_defaultState = m_window->saveState(kLayoutVersion);
        if (m_layoutRestored)
            m_window->restoreState(restored, kLayoutVersion);
    });
    return true;
}

QString DockLayout::settingsGroup() const {
    const QSize size = availableScreenArea().size();
    return kLayoutGroup.arg(size.width()).arg(size.height());
}

QRect DockLayout::availableScreenArea() const {
    const QScreen* s = m_window->screen() ? m_window->screen() : QGuiApplication::primaryScreen();
    return s ? s->availableGeometry() : QRect(0, 0, 1600, 1000);
}

void DockLayout::fitToScreen() {
    // Never larger than the screen it is on, whatever was saved or asked for.
    const QSize frame = m_window->frameGeometry().size() - m_window->size();
    const QSize most = availableScreenArea().size() - frame;
    if (m_window->width() > most.width() || m_window->height() > most.height())
        m_window->resize(m_window->size().boundedTo(most));
}

void DockLayout::save() const {
    if (!m_persistent)
        return;
    QSettings settings;
    settings.beginGroup(settingsGroup());
    settings.setValue(kGeometryKey, m_window->saveGeometry());
    settings.setValue(kStateKey, m_window->saveState(kLayoutVersion));
}

} // namespace tilescope::views
