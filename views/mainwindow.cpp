#include "mainwindow.h"

#include "analysis/launchcheck.h"
#include "common/emptystate.h"
#include "common/errorbanner.h"
#include "common/examples.h"
#include "common/format.h"
#include "common/manualview.h"
#include "compare/compareview.h"
#include "crossgpu/crossgpuview.h"
#include "export/exportdialog.h"
#include "plots/heatmapwidget.h"
#include "plots/plotstyle.h"
#include "plots/scatterwidget.h"
#include "problem/compilecheck.h"
#include "problem/kernelsourcepanel.h"
#include "problem/kernelspecdialog.h"
#include "problem/problempanel.h"
#include "problem/sourceview.h"
#include "problem/spacecontroller.h"
#include "problem/spacepanel.h"
#include "session/configdetails.h"
#include "session/resultsheadline.h"
#include "session/resultsview.h"
#include "session/runpanel.h"
#include "session/sessioncontroller.h"
#include "session/sessionproblem.h"
#include "shapes/shapesview.h"

#include "base/error.h"
#include "exchange/exchange.h"
#include "spec/kernelscan.h"
#include "spec/tuningproblem.h"

#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QShowEvent>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QWindow>

#include <algorithm>
#include <utility>

namespace tilescope::views {

namespace {

constexpr int kLayoutVersion = 2; // bump when docks are added or renamed
constexpr int kMaxRecentFiles = 12;
constexpr int kStatusTimeoutMs = 6000;
// The layout a user arranges is kept per screen size: a laptop's and a desktop monitor's differ.
const QString kLayoutGroup = QStringLiteral("MainWindow/layout-%1x%2");
const QString kGeometryKey = QStringLiteral("geometry");
const QString kStateKey = QStringLiteral("state");
// Below this available height the Run panel shares the Problem panel's place as a tab.
constexpr int kShortScreenHeight = 1050;
// Below this available width (or height) the window opens maximised: every pixel counts.
constexpr int kSmallScreenWidth = 1500;
const QString kRecentKey = QStringLiteral("MainWindow/recentFiles");
const QString kLastDirKey = QStringLiteral("MainWindow/lastDirectory");
const QString kExportDirKey = QStringLiteral("MainWindow/exportDirectory");

// A side panel in a scroll area: on a small screen it scrolls instead of making the window taller.
QScrollArea* scrollable(QWidget* panel) {
    auto* area = new QScrollArea(panel->parentWidget());
    area->setObjectName(panel->objectName() + QStringLiteral("Scroll"));
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    area->setWidget(panel);
    return area;
}

bool hasOpenableSuffix(const QString& path) {
    static const QStringList suffixes = {QStringLiteral(".json"), QStringLiteral(".gz"), QStringLiteral(".db"),
                                         QStringLiteral(".sqlite"), QStringLiteral(".sqlite3")};
    return std::any_of(suffixes.begin(), suffixes.end(),
                       [&](const QString& s) { return path.endsWith(s, Qt::CaseInsensitive); });
}

QStringList openableFilesFrom(const QMimeData* mime) {
    QStringList files;
    if (!mime || !mime->hasUrls())
        return files;
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && hasOpenableSuffix(url.toLocalFile()))
            files << url.toLocalFile();
    return files;
}

QIcon themeIcon(const char* name, QStyle::StandardPixmap fallback, const QStyle* style) {
    return QIcon::fromTheme(QString::fromLatin1(name), style->standardIcon(fallback));
}

// The format of a file by core's one rule; nullopt when it cannot be read.
std::optional<RecordingFormat> formatOf(const QString& path) {
    if (path.isEmpty())
        return std::nullopt;
    try {
        return detectRecordingFormat(std::filesystem::path(path.toStdString()));
    } catch (const InputError&) {
        return std::nullopt;
    }
}

bool isDatabase(const QString& path) {
    return formatOf(path) == RecordingFormat::TilescopeDatabase;
}

} // namespace

MainWindow::FileKind MainWindow::classifyFile(const QString& path) {
    const std::optional<RecordingFormat> format = formatOf(path);
    if (!format)
        return path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive) ? FileKind::Problem : FileKind::Recording;
    return isRecording(*format) ? FileKind::Recording : FileKind::Problem;
}

MainWindow::MainWindow(QWidget* parent)
    : MainWindow(Options{}, parent) {}

MainWindow::MainWindow(Options options, QWidget* parent)
    : QMainWindow(parent)
    , m_options(options)
    , m_document(new ProblemDocument(this))
    , m_controller(new SpaceController(this))
    , m_session(new SessionController(this))
    , m_results(std::make_shared<const std::vector<ResultRecord>>()) {
    initResources();
    setObjectName(QStringLiteral("MainWindow"));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowNestedDocks | QMainWindow::AllowTabbedDocks |
                   QMainWindow::GroupedDragging);
    setDocumentMode(true);
    setTabPosition(Qt::AllDockWidgetAreas, QTabWidget::North);
    // The left and right columns run the full height; the plots and the table sit between them.
    setCorner(Qt::TopLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);

    // Errors while opening show in a banner under the menu bar, across the whole window.
    m_menuBar = new QMenuBar(this);
    m_errorBanner = new ErrorBanner(this);
    auto* top = new QWidget(this);
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->setSpacing(0);
    topLayout->addWidget(m_menuBar);
    topLayout->addWidget(m_errorBanner);
    setMenuWidget(top);

    createDocks();
    createActions();

    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0);
    m_busyBar->setTextVisible(false);
    m_busyBar->setMaximumWidth(fontMetrics().horizontalAdvance(QLatin1Char('x')) * 14);
    m_busyBar->setMaximumHeight(fontMetrics().height());
    m_busyBar->hide();
    m_sessionStatus = new QLabel(this);
    m_spaceStatus = new QLabel(this);
    statusBar()->addPermanentWidget(m_sessionStatus);
    statusBar()->addPermanentWidget(m_busyBar);
    statusBar()->addPermanentWidget(m_spaceStatus);

    connect(m_document, &ProblemDocument::problemChanged, this, &MainWindow::onProblemChanged);
    connect(m_document, &ProblemDocument::problemEdited, this, &MainWindow::onProblemEdited);
    connect(m_document, &ProblemDocument::modifiedChanged, this, [this](bool modified) {
        m_saveAction->setEnabled(modified);
        updateTitle();
    });
    connect(m_document, &ProblemDocument::shapeChanged, this, &MainWindow::requestSpace);
    connect(m_document, &ProblemDocument::shapeChanged, this, [this](int shape) {
        if (m_runPanel->shapeCombo() && shape < m_runPanel->shapeCombo()->count())
            m_runPanel->shapeCombo()->setCurrentIndex(shape);
        updateDetailsContext();
    });
    connect(m_document, &ProblemDocument::loadFailed, this, &MainWindow::onLoadFailed);
    connect(m_controller, &SpaceController::busyChanged, this, &MainWindow::onBusyChanged);
    connect(m_controller, &SpaceController::settled, this, &MainWindow::settled);
    connect(m_controller, &SpaceController::spaceReady, this, &MainWindow::onSpaceReady);

    connect(m_session, &SessionController::snapshot, this, &MainWindow::onSnapshot);
    connect(m_session, &SessionController::loaded, this, &MainWindow::onRecordingLoaded);
    // A shape set: the Shapes panel comes forward and switches the window between its shapes,
    // starting from the one it shows (the largest).
    connect(m_session, &SessionController::recordingSessions, this,
            [this](std::shared_ptr<const std::vector<SessionData>> sessions) {
                m_shapes->setSessions(std::move(sessions));
                if (!m_shapes->hasShapeSet())
                    return;
                m_shapesDock->show();
                m_shapesDock->raise();
                const std::int64_t id = m_shapes->sessionOf(m_shapes->currentShape());
                QTimer::singleShot(0, this, [this, id]() { m_session->showSession(id); });
            });
    connect(m_shapes, &ShapesView::shapeChosen, this, [this](std::int64_t id) { m_session->showSession(id); });
    connect(m_session, &SessionController::started, this, &MainWindow::onSessionStarted);
    connect(m_session, &SessionController::failed, this, &MainWindow::onSessionFailed);
    connect(m_session, &SessionController::runningChanged, this, &MainWindow::onRunningChanged);

    // Selection: whichever view picks a config, all show it.
    connect(m_heatmap, &HeatmapWidget::configSelected, this, &MainWindow::selectConfig);
    connect(m_scatter, &ScatterWidget::configSelected, this, &MainWindow::selectConfig);
    connect(m_resultsView, &ResultsView::configSelected, this, &MainWindow::selectConfig);
    connect(m_crossGpu, &CrossGpuView::configSelected, this, &MainWindow::selectConfig);
    connect(m_compare, &CompareView::configSelected, this, &MainWindow::selectConfig);
    connect(m_heatmap, &HeatmapWidget::gridChanged, this, &MainWindow::onHeatmapGridChanged);

    followPalette();

    // A first-run size that suits the screen; a saved layout (of this screen size) replaces it.
    const QRect available = availableScreenArea();
    if (available.width() < kSmallScreenWidth || available.height() < kShortScreenHeight) {
        resize(available.size());
        setWindowState(windowState() | Qt::WindowMaximized);
    } else {
        resize(std::min(available.width() * 85 / 100, 2400), std::min(available.height() * 85 / 100, 1400));
    }
    if (m_options.persistent)
        restoreLayout();
    fitToScreen();
    updateTitle();
    updateResultsHeader();
}

MainWindow::~MainWindow() {
    // Children go in the order they were made, the controllers first: stop their signals reaching
    // this half-destroyed window, and let the panels that use them go before them.
    m_session->disconnect(this);
    m_controller->disconnect(this);
    m_document->disconnect(this);
    delete m_exportDialog;
    for (QDockWidget* dock : docks())
        delete dock;
}

QDockWidget* MainWindow::addDock(const QString& title, const QString& objectName, QWidget* widget) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(objectName);
    dock->setWidget(widget);
    dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                      QDockWidget::DockWidgetFloatable);
    return dock;
}

void MainWindow::createDocks() {
    // Left: what the problem is and how to run it.
    m_problemPanel = new ProblemPanel(m_document, m_controller, this);
    m_problemDock = addDock(tr("Problem"), QStringLiteral("problemDock"), scrollable(m_problemPanel));
    connect(m_problemPanel, &ProblemPanel::openProblemRequested, this, &MainWindow::openProblemForRecording);
    m_spacePanel = new SpacePanel(m_controller, this);
    m_spaceDock = addDock(tr("Config Space"), QStringLiteral("spaceDock"), m_spacePanel);
    m_runPanel = new RunPanel(m_session, this);
    m_runDock = addDock(tr("Run"), QStringLiteral("runDock"), scrollable(m_runPanel));

    // Middle: the plots and the kernel source as tabs, the results under them.
    m_heatmap = new HeatmapWidget(this);
    m_heatmap->setObjectName(QStringLiteral("heatmap"));
    m_heatmap->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    m_resultsHeader = new QLabel(this);
    m_resultsHeader->setObjectName(QStringLiteral("resultsHeader"));
    m_resultsHeader->setTextFormat(Qt::RichText);
    m_resultsHeader->setWordWrap(true);
    m_resultsHeader->setContentsMargins(8, 4, 8, 2);
    m_heatmapEmpty = emptyStateLabel(QString(), this);
    auto* heatmapPage = new QWidget(this);
    auto* heatmapLayout = new QVBoxLayout(heatmapPage);
    heatmapLayout->setContentsMargins(0, 0, 0, 0);
    heatmapLayout->setSpacing(0);
    heatmapLayout->addWidget(m_resultsHeader);
    heatmapLayout->addWidget(m_heatmap, 1);
    m_heatmapStack = new QStackedWidget(this);
    m_heatmapStack->addWidget(m_heatmapEmpty);
    m_heatmapStack->addWidget(heatmapPage);
    m_heatmapDock = addDock(tr("Heatmap"), QStringLiteral("heatmapDock"), m_heatmapStack);

    m_scatter = new ScatterWidget(this);
    m_scatter->setObjectName(QStringLiteral("scatter"));
    m_scatterStack = new QStackedWidget(this);
    m_scatterStack->addWidget(
        emptyStateLabel(tr("<h3>No results yet</h3><p>The scatter plot shows the results of a run "
                           "or a recording: any quantity against any other.</p>"),
                        this));
    m_scatterStack->addWidget(m_scatter);
    m_scatterDock = addDock(tr("Scatter"), QStringLiteral("scatterDock"), m_scatterStack);

    m_sourcePanel = new KernelSourcePanel(m_document, this);
    m_sourceDock = addDock(tr("Kernel Source"), QStringLiteral("sourceDock"), m_sourcePanel);
    m_compileCheck = new CompileCheckPanel(m_document, m_controller, this);
    m_compileCheck->setObjectName(QStringLiteral("compileCheck"));
    m_compileDock = addDock(tr("Compile Check"), QStringLiteral("compileDock"), m_compileCheck);
    connect(m_compileCheck, &CompileCheckPanel::showSourceLine, this, [this](int line) {
        m_sourceDock->show();
        m_sourceDock->raise();
        m_sourcePanel->sourceView()->showLine(line);
    });

    m_resultsView = new ResultsView(this);
    m_resultsView->setObjectName(QStringLiteral("resultsView"));
    m_resultsDock = addDock(tr("Results"), QStringLiteral("resultsDock"), m_resultsView);
    m_crossGpu = new CrossGpuView(this);
    m_crossGpu->setObjectName(QStringLiteral("crossGpu"));
    m_crossGpuDock = addDock(tr("Cross-GPU"), QStringLiteral("crossGpuDock"), m_crossGpu);
    m_shapes = new ShapesView(this);
    m_shapes->setObjectName(QStringLiteral("shapes"));
    m_shapesDock = addDock(tr("Shapes"), QStringLiteral("shapesDock"), m_shapes);
    m_compare = new CompareView(this);
    m_compare->setObjectName(QStringLiteral("compare"));
    m_compareDock = addDock(tr("Compare"), QStringLiteral("compareDock"), m_compare);

    // Right: one config in depth.
    m_details = new ConfigDetailsPanel(this);
    m_details->setObjectName(QStringLiteral("details"));
    m_detailsDock = addDock(tr("Details"), QStringLiteral("detailsDock"), m_details);

    // Splits before tabs: a tabbed dock cannot be split afterwards without taking its group along.
    addDockWidget(Qt::LeftDockWidgetArea, m_problemDock);
    splitDockWidget(m_problemDock, m_runDock, Qt::Vertical);
    addDockWidget(Qt::TopDockWidgetArea, m_heatmapDock);
    splitDockWidget(m_heatmapDock, m_resultsDock, Qt::Vertical);
    tabifyDockWidget(m_heatmapDock, m_scatterDock);
    tabifyDockWidget(m_scatterDock, m_sourceDock);
    tabifyDockWidget(m_sourceDock, m_compileDock);
    tabifyDockWidget(m_resultsDock, m_crossGpuDock);
    tabifyDockWidget(m_crossGpuDock, m_spaceDock);
    tabifyDockWidget(m_spaceDock, m_shapesDock);
    tabifyDockWidget(m_shapesDock, m_compareDock);
    addDockWidget(Qt::RightDockWidgetArea, m_detailsDock);
    // On a short screen the Run panel is a tab beside the Problem panel rather than under it.
    if (availableScreenArea().height() < kShortScreenHeight)
        tabifyDockWidget(m_problemDock, m_runDock);
    m_problemDock->raise();
    m_heatmapDock->raise();
    m_resultsDock->raise();

    // Narrower than this a panel would wrap its values or cut them: the window keeps every panel at
    // least this wide (and scrolls the panel's content rather than squeezing it).
    const int em = fontMetrics().averageCharWidth();
    for (const auto& [dock, chars] :
         {std::pair{m_problemDock, 34}, std::pair{m_runDock, 34}, std::pair{m_detailsDock, 30},
          std::pair{m_heatmapDock, 44}, std::pair{m_resultsDock, 44}}) {
        dock->setProperty(kReadableWidthProperty, em * chars);
        dock->setMinimumWidth(em * chars);
    }

    for (QDockWidget* dock : docks()) {
        const auto later = [this]() { QTimer::singleShot(0, this, &MainWindow::updateDockTitleBars); };
        connect(dock, &QDockWidget::visibilityChanged, this, later);
        connect(dock, &QDockWidget::topLevelChanged, this, later);
        connect(dock, &QDockWidget::dockLocationChanged, this, later);
    }
    updateDockTitleBars();
}

void MainWindow::updateDockTitleBars() {
    // A dock among tabs is named by its tab: its own title bar would say it again and take a
    // line of the plots' height. A dock on its own (or floating) keeps its title bar.
    for (QDockWidget* dock : docks()) {
        const QList<QDockWidget*> group = tabifiedDockWidgets(dock);
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

SourceView* MainWindow::sourceView() const {
    return m_sourcePanel->sourceView();
}

QList<QDockWidget*> MainWindow::docks() const {
    return {m_problemDock, m_spaceDock,   m_runDock,      m_heatmapDock, m_scatterDock, m_sourceDock,
            m_compileDock, m_resultsDock, m_crossGpuDock, m_shapesDock,  m_compareDock, m_detailsDock};
}

void MainWindow::createActions() {
    QMenu* file = m_menuBar->addMenu(tr("&File"));
    QAction* open = file->addAction(themeIcon("document-open", QStyle::SP_DialogOpenButton, style()), tr("&Open…"),
                                    this, &MainWindow::openDialog);
    open->setShortcut(QKeySequence::Open);
    open->setStatusTip(tr("Open a tuning problem (T1 JSON) or a recording of results (T4, Kernel Tuner cache, "
                          "Tilescope database)"));
    QAction* fromKernel = file->addAction(tr("&New Problem from Kernel…"), this, [this]() {
        const QString path = QFileDialog::getOpenFileName(this, tr("New Problem from a CUDA Kernel"),
                                                          QSettings().value(kLastDirKey).toString(),
                                                          tr("CUDA sources (*.cu *.cuh);;All files (*)"));
        if (!path.isEmpty())
            newProblemFromKernel(path);
    });
    fromKernel->setShortcut(QKeySequence::New);
    fromKernel->setStatusTip(tr("Scan a kernel for its tuning parameters and arguments and start a problem for it"));
    QAction* openRecording = file->addAction(tr("Open Re&cording…"), this, &MainWindow::openRecordingDialog);
    openRecording->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    openRecording->setStatusTip(tr("Browse recorded results: T4, a Kernel Tuner cache or a Tilescope database"));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addSeparator();
    m_saveAction = file->addAction(themeIcon("document-save", QStyle::SP_DialogSaveButton, style()),
                                   tr("&Save Problem"), this, [this]() { saveProblem(); });
    m_saveAction->setShortcut(QKeySequence::Save);
    m_saveAction->setStatusTip(tr("Write the edited problem back to its T1 file"));
    m_saveAction->setEnabled(false);
    m_saveAsAction = file->addAction(themeIcon("document-save-as", QStyle::SP_DialogSaveButton, style()),
                                     tr("Save Problem &As…"), this, &MainWindow::saveAsDialog);
    m_saveAsAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    m_saveAsAction->setStatusTip(tr("Write the problem to another T1 file"));
    m_saveAsAction->setEnabled(false);
    file->addSeparator();
    QAction* exportResults = file->addAction(tr("&Export Results…"), this, [this]() { showExportDialog(); });
    exportResults->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    exportResults->setStatusTip(tr("Write results as T4, a JSON cache of the best configs, triton.Config lists, a "
                                   "C++ header or CSV"));
    QMenu* exportPlot = file->addMenu(tr("Export &Plot"));
    exportPlot->addAction(tr("&Heatmap (PNG or PDF)…"), this,
                          [this]() { exportPlotDialog(m_heatmap, QStringLiteral("heatmap")); });
    exportPlot->addAction(tr("&Scatter Plot (PNG or PDF)…"), this,
                          [this]() { exportPlotDialog(m_scatter, QStringLiteral("scatter")); });
    file->addSeparator();
    QAction* quit = file->addAction(themeIcon("application-exit", QStyle::SP_DialogCloseButton, style()), tr("&Quit"),
                                    this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    QMenu* editMenu = m_menuBar->addMenu(tr("&Edit"));
    QAction* undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    editMenu->addAction(undo);
    QAction* redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    editMenu->addAction(redo);
    editMenu->addSeparator();
    QAction* kernelSpec = editMenu->addAction(tr("&Kernel and Launch…"), this, [this]() {
        if (!m_document->hasProblem())
            return;
        KernelSpecDialog dialog(m_document, this);
        dialog.exec();
    });
    kernelSpec->setStatusTip(tr("Edit the kernel's name, file and compiler options, the launch, the shapes and the "
                                "objective"));

    QMenu* run = m_menuBar->addMenu(tr("&Run"));
    m_runAction = run->addAction(themeIcon("media-playback-start", QStyle::SP_MediaPlay, style()), tr("&Start Run"),
                                 this, [this]() {
                                     m_runDock->show();
                                     m_runDock->raise();
                                     m_runPanel->startRun();
                                 });
    m_runAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_runAction->setStatusTip(tr("Tune the problem with the Run panel's settings"));
    m_cancelAction =
        run->addAction(themeIcon("process-stop", QStyle::SP_MediaStop, style()), tr("&Cancel"), this, [this]() {
            m_session->cancel();
            m_crossGpu->cancel();
        });
    m_cancelAction->setShortcuts({QKeySequence(Qt::Key_Escape), QKeySequence(Qt::CTRL | Qt::Key_Period)});
    m_cancelAction->setStatusTip(tr("Stop the run (or the cross-GPU analysis) after the work in hand"));
    m_cancelAction->setEnabled(false);
    run->addSeparator();
    run->addAction(tr("Analyse Across &GPUs"), this, [this]() {
        m_crossGpuDock->show();
        m_crossGpuDock->raise();
        m_crossGpu->start();
    });
    connect(m_crossGpu, &CrossGpuView::started, this, [this]() { m_cancelAction->setEnabled(true); });
    connect(m_crossGpu, &CrossGpuView::finished, this,
            [this]() { m_cancelAction->setEnabled(m_session->isRunning()); });

    m_viewMenu = m_menuBar->addMenu(tr("&View"));
    int number = 1;
    for (QDockWidget* dock : docks()) {
        QAction* toggle = dock->toggleViewAction();
        if (number <= 9)
            toggle->setShortcut(QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_0 + number)));
        ++number;
        m_viewMenu->addAction(toggle);
    }
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(tr("&Reset Layout"), this, &MainWindow::resetLayout);

    QMenu* help = m_menuBar->addMenu(tr("&Help"));
    ManualView::addMenuAction(help, this);
    QAction* about = help->addAction(tr("&About Tilescope"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
    QAction* aboutQt = help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
    aboutQt->setMenuRole(QAction::AboutQtRole);

    if (m_options.persistent)
        m_recentFiles = QSettings().value(kRecentKey).toStringList();
}

bool MainWindow::keepChangesSafe() {
    if (!m_document->isModified())
        return true;
    const auto answer =
        QMessageBox::question(this, tr("Unsaved changes"),
                              tr("%1 has changes that are not saved. Save them first?").arg(m_document->displayName()),
                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel)
        return false;
    return answer == QMessageBox::Discard || saveProblem();
}

bool MainWindow::saveProblem() {
    if (!m_document->hasProblem())
        return false;
    if (m_document->origin() != ProblemDocument::Origin::File) {
        saveAsDialog();
        return !m_document->isModified();
    }
    ProblemError failure;
    if (m_document->save(&failure)) {
        m_errorBanner->hide(); // what it said was about the unsaved problem
        statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(m_document->path())), kStatusTimeoutMs);
        return true;
    }
    m_errorBanner->showMessage(ErrorBanner::Level::Error, tr("Could not save %1").arg(m_document->displayName()),
                               failure.text());
    return false;
}

void MainWindow::onProblemEdited() {
    updateTitle();
    m_runPanel->setEditedProblem(m_document->problem());
    updateDetailsContext();
    requestSpace();
}

bool MainWindow::newProblemFromKernel(const QString& kernelPath) {
    if (!keepChangesSafe())
        return false;
    const QFileInfo kernel(kernelPath);
    std::shared_ptr<const TuningProblem> proposal;
    try {
        proposal = std::make_shared<const TuningProblem>(proposeProblem(kernel.absoluteFilePath().toStdString()));
    } catch (const std::exception& e) {
        const auto* input = dynamic_cast<const InputError*>(&e);
        m_errorBanner->showMessage(ErrorBanner::Level::Error,
                                   tr("No problem could be proposed for %1").arg(kernel.fileName()),
                                   QString::fromStdString(input ? input->message() : std::string(e.what())));
        return false;
    }
    // Beside the kernel, under a name no file has yet.
    QString target = kernel.absolutePath() + QLatin1Char('/') + kernel.completeBaseName() + QStringLiteral(".json");
    for (int n = 2; QFileInfo::exists(target); ++n)
        target =
            kernel.absolutePath() + QLatin1Char('/') + kernel.completeBaseName() + QStringLiteral("-%1.json").arg(n);
    m_errorBanner->hide();
    m_document->openProposal(proposal, target);
    m_errorBanner->showMessage(
        ErrorBanner::Level::Warning,
        (proposal->parameters.size() == 1 ? tr("A first problem for %1: 1 parameter found, with one value")
                                          : tr("A first problem for %1: %2 parameters found, each with one value")
                                                .arg(QStringLiteral("%1"))
                                                .arg(proposal->parameters.size()))
            .arg(kernel.fileName()),
        tr("Give each parameter the values to tune (select it and type), add conditions, check the arguments' "
           "sizes, then save (Ctrl+S writes %1).")
            .arg(QDir::toNativeSeparators(target)));
    return true;
}

bool MainWindow::openProblem(const QString& path, ProblemDocument::Origin origin) {
    if (!keepChangesSafe())
        return false;
    m_errorBanner->hide();
    return m_document->load(path, origin);
}

bool MainWindow::openRecording(const QString& path) {
    m_errorBanner->hide();
    if (!QFileInfo::exists(path)) {
        m_errorBanner->showMessage(ErrorBanner::Level::Error, tr("Could not open %1").arg(QFileInfo(path).fileName()),
                                   tr("No such file: %1").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    if (m_session->isRunning()) {
        m_errorBanner->showMessage(
            ErrorBanner::Level::Warning, tr("A run is in progress"),
            tr("Cancel it (%1) before opening a recording.").arg(shortcutText(m_cancelAction->shortcut())));
        return false;
    }
    m_pendingRecording = QFileInfo(path).absoluteFilePath();
    m_demoPending = false;
    m_session->openRecording(m_pendingRecording);
    m_sessionStatus->setText(tr("Reading %1…").arg(QFileInfo(path).fileName()));
    m_busyBar->show();
    return true;
}

bool MainWindow::openFile(const QString& path) {
    return classifyFile(path) == FileKind::Recording ? openRecording(path) : openProblem(path);
}

bool MainWindow::openDemo(const QString& folder) {
    QString error;
    const QString problem = extractExample(QStringLiteral("sgemm"), folder, &error);
    const QString recording = problem.isEmpty() ? QString() : extractDemoRecording(folder, &error);
    if (problem.isEmpty() || recording.isEmpty()) {
        m_errorBanner->showMessage(ErrorBanner::Level::Error, tr("Could not open the embedded example"), error);
        return false;
    }
    if (!openProblem(problem, ProblemDocument::Origin::Example))
        return false;
    m_document->setShapeIndex(kDemoShapeIndex);
    m_runPanel->setReplayRecording(recording);
    if (!openRecording(recording))
        return false;
    m_demoPending = true;
    return true;
}

bool MainWindow::saveProblemAs(const QString& path, ProblemError* error) {
    ProblemError failure;
    if (m_document->saveAs(path, &failure)) {
        statusBar()->showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), kStatusTimeoutMs);
        return true;
    }
    if (error)
        *error = failure;
    else
        QMessageBox::warning(
            this, tr("Save Problem As"),
            tr("Could not save the problem to %1.\n\n%2")
                .arg(QDir::toNativeSeparators(path), failure.location.isEmpty()
                                                         ? failure.message
                                                         : failure.location + QStringLiteral(": ") + failure.message));
    return false;
}

QStringList MainWindow::recentFiles() const {
    return m_recentFiles;
}

bool MainWindow::isBusy() const {
    return m_controller->isBusy();
}

bool MainWindow::isLoadingResults() const {
    return m_session->isLoading();
}

bool MainWindow::hasResultsShown() const {
    const auto grid = m_heatmap->grid();
    return grid && !grid->empty() && grid->okCount > 0 && !m_heatmap->isBusy();
}

void MainWindow::openDialog() {
    QSettings settings;
    const QString start = m_document->origin() == ProblemDocument::Origin::File && m_document->hasProblem()
                              ? QFileInfo(m_document->path()).absolutePath()
                              : settings.value(kLastDirKey).toString();
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a Tuning Problem or a Recording"), start,
        tr("Problems and recordings (*.json *.gz *.db *.sqlite);;Tuning problems (*.json);;"
           "Recordings (*.json *.gz *.db *.sqlite);;All files (*)"));
    if (path.isEmpty())
        return;
    settings.setValue(kLastDirKey, QFileInfo(path).absolutePath());
    openFile(path);
}

void MainWindow::openProblemForRecording() {
    // The problem usually lies beside its recording.
    const QString start = m_recordingPath.isEmpty() ? QSettings().value(kLastDirKey).toString()
                                                    : QFileInfo(m_recordingPath).absolutePath();
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open the T1 Problem of %1").arg(QFileInfo(m_recordingPath).fileName()),
                                     start, tr("Tuning problems (*.json);;All files (*)"));
    if (!path.isEmpty())
        openProblem(path);
}

void MainWindow::openRecordingDialog() {
    QSettings settings;
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a Recording"), settings.value(kLastDirKey).toString(),
        tr("Recordings: T4, Kernel Tuner caches, Tilescope databases (*.json *.gz *.db *.sqlite);;All files (*)"));
    if (path.isEmpty())
        return;
    settings.setValue(kLastDirKey, QFileInfo(path).absolutePath());
    openRecording(path);
}

void MainWindow::saveAsDialog() {
    if (!m_document->hasProblem())
        return;
    QString start =
        m_document->origin() == ProblemDocument::Origin::File
            ? m_document->path()
            : QSettings().value(kLastDirKey).toString() + QLatin1Char('/') + QFileInfo(m_document->path()).fileName();
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save Tuning Problem As"), start, tr("Tuning problems (*.json)"));
    if (!path.isEmpty())
        saveProblemAs(path);
}

ExportDialog* MainWindow::showExportDialog() {
    if (!m_exportDialog) {
        m_exportDialog = new ExportDialog(this);
        m_exportDialog->setOutputFolder(QSettings().value(kExportDirKey, QDir::homePath()).toString());
        connect(m_exportDialog, &ExportDialog::exported, this,
                [this](const QString& path, const QString& format, qint64 bytes) {
                    if (m_options.persistent)
                        QSettings().setValue(kExportDirKey, QFileInfo(path).absolutePath());
                    statusBar()->showMessage(
                        tr("Wrote %1 (%2, %3 bytes)")
                            .arg(QDir::toNativeSeparators(path), format, QLocale().toString(bytes)),
                        kStatusTimeoutMs);
                });
    }
    const SessionInfo info = m_session->session();
    if (isDatabase(m_recordingPath)) {
        // A database may hold several sessions (shapes, devices): list them all.
        m_exportDialog->openRecording(m_recordingPath);
    } else if (!m_results->empty()) {
        std::vector<SessionData> sessions(1);
        sessions.front().info = info;
        sessions.front().results = *m_results;
        const QString label =
            m_demo ? tr("the demo recording (%1 results of %2 on an %3)")
                         .arg(formatCount(std::uint64_t(m_results->size())), QString::fromStdString(info.kernel),
                              QString::fromStdString(info.deviceName))
                   : tr("the results on screen (%1 results%2)")
                         .arg(formatCount(std::uint64_t(m_results->size())),
                              m_recordingPath.isEmpty() ? QString()
                                                        : tr(" of %1").arg(QFileInfo(m_recordingPath).fileName()));
        m_exportDialog->setSessions(std::move(sessions), label);
    }
    m_exportDialog->show();
    m_exportDialog->raise();
    m_exportDialog->activateWindow();
    return m_exportDialog;
}

bool MainWindow::exportPlot(QWidget* plot, const QString& path) {
    auto* resultPlot = qobject_cast<ResultPlot*>(plot);
    if (!resultPlot)
        return false;
    return path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive) ? resultPlot->savePdf(path)
                                                                     : resultPlot->savePng(path);
}

void MainWindow::exportPlotDialog(QWidget* plot, const QString& name) {
    QSettings settings;
    const QString folder = settings.value(kExportDirKey, QDir::homePath()).toString();
    const QString stem = m_session->session().kernel.empty()
                             ? name
                             : QString::fromStdString(m_session->session().kernel) + QLatin1Char('_') + name;
    QString selected;
    QString path = QFileDialog::getSaveFileName(this, tr("Export Plot"), QDir(folder).filePath(stem + ".png"),
                                                tr("PNG image (*.png);;PDF document (*.pdf)"), &selected);
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += selected.contains(QLatin1String("pdf")) ? QStringLiteral(".pdf") : QStringLiteral(".png");
    if (!exportPlot(plot, path)) {
        QMessageBox::warning(this, tr("Export Plot"), tr("Could not write %1.").arg(QDir::toNativeSeparators(path)));
        return;
    }
    if (m_options.persistent)
        settings.setValue(kExportDirKey, QFileInfo(path).absolutePath());
    statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), kStatusTimeoutMs);
}

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About Tilescope"),
                       tr("<h3>Tilescope %1</h3>"
                          "<p>A workbench for autotuning CUDA kernels: explore config spaces, run tuning "
                          "sessions, diagnose register spilling and export the winners.</p>"
                          "<p>Built with Qt %2.</p>")
                           .arg(QStringLiteral(TILESCOPE_VERSION), QString::fromLatin1(qVersion())));
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    int number = 0;
    for (const QString& path : std::as_const(m_recentFiles)) {
        ++number;
        const QFileInfo info(path);
        const bool recording = info.exists() && classifyFile(path) == FileKind::Recording;
        QString name = info.fileName();
        if (recording)
            name += tr("  (recording)");
        const QString label = number < 10 ? tr("&%1  %2").arg(number).arg(name) : name;
        QAction* action = m_recentMenu->addAction(label, this, [this, path]() { openFile(path); });
        action->setToolTip(QDir::toNativeSeparators(path));
        action->setStatusTip(QDir::toNativeSeparators(path));
        action->setEnabled(info.exists());
    }
    if (m_recentFiles.isEmpty()) {
        m_recentMenu->addAction(tr("No recent files"))->setEnabled(false);
        return;
    }
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("&Clear Recent Files"), this, [this]() {
        m_recentFiles.clear();
        if (m_options.persistent)
            QSettings().setValue(kRecentKey, m_recentFiles);
    });
}

void MainWindow::addRecentFile(const QString& path) {
    m_recentFiles.removeAll(path);
    m_recentFiles.prepend(path);
    while (m_recentFiles.size() > kMaxRecentFiles)
        m_recentFiles.removeLast();
    if (m_options.persistent)
        QSettings().setValue(kRecentKey, m_recentFiles);
}

void MainWindow::onProblemChanged() {
    const auto problem = m_document->problem();
    updateTitle();
    m_saveAsAction->setEnabled(problem != nullptr);
    m_runPanel->setProblem(problem, m_document->path());
    updateDetailsContext();
    updateResultsHeader();
    if (!problem)
        return;
    if (m_document->origin() == ProblemDocument::Origin::File && QFileInfo::exists(m_document->path()))
        addRecentFile(m_document->path());
    if (const QString blockers = m_document->launchBlockersText(); !blockers.isEmpty()) {
        // The space is all there; only compiling and running the kernel is not.
        m_errorBanner->showMessage(ErrorBanner::Level::Warning,
                                   tr("The space opens, but its kernel cannot be compiled here"), blockers);
    }
    matchShapeToSession();
    statusBar()->showMessage(tr("Opened %1: %2 parameters, %3 conditions, %4 shapes")
                                 .arg(m_document->displayName())
                                 .arg(problem->parameters.size())
                                 .arg(problem->conditions.size())
                                 .arg(problem->shapes.size()),
                             kStatusTimeoutMs);
}

void MainWindow::onLoadFailed(const ProblemError& error) {
    const QString name = QFileInfo(error.file).fileName();
    m_errorBanner->showMessage(ErrorBanner::Level::Error, tr("Could not open %1").arg(name),
                               m_document->failureDetails(error));
    statusBar()->showMessage(tr("Could not open %1").arg(name), kStatusTimeoutMs);
}

void MainWindow::onBusyChanged(bool busy) {
    m_busyBar->setVisible(busy || m_session->isLoading());
    if (busy)
        m_spaceStatus->setText(tr("Building the config space…"));
}

void MainWindow::onSpaceReady(const std::shared_ptr<const SpaceResult>& result) {
    if (result->ok())
        m_spaceStatus->setText(tr("%1 valid configs").arg(formatCount(result->stats.validSize)));
    else
        m_spaceStatus->setText(tr("config space unavailable"));
    m_crossGpu->setSpace(result);

    // A launch that cannot be right is said before any GPU time: a banner, not a dialog. Said once
    // per problem and shape as long as the warnings stay the same; an error shown stays.
    QStringList warnings;
    if (result->ok()) {
        for (const LaunchWarning& w : checkLaunch(*result->problem, result->shapeIndex, *result->space))
            warnings << QStringLiteral("%1: %2").arg(QString::fromStdString(w.location),
                                                     QString::fromStdString(w.message));
    }
    if (warnings == m_launchWarnings)
        return;
    m_launchWarnings = warnings;
    const QString title = tr("The launch of %1 looks wrong").arg(m_document->displayName());
    if (warnings.isEmpty()) {
        // An edit fixed it: the banner that said so goes.
        if (m_errorBanner->isVisible() && m_errorBanner->title() == title)
            m_errorBanner->hide();
        return;
    }
    if (!m_errorBanner->isVisible())
        m_errorBanner->showMessage(ErrorBanner::Level::Warning, title, warnings.join(QStringLiteral("\n\n")));
}

void MainWindow::requestSpace() {
    m_controller->setProblem(m_document->problem(), static_cast<std::size_t>(std::max(0, m_document->shapeIndex())));
}

// ------------------------------------------------------------------------------ results

void MainWindow::onSnapshot(ResultsSnapshot results) {
    m_results = results ? std::move(results) : std::make_shared<const std::vector<ResultRecord>>();
    const std::vector<std::string> names = m_session->parameterNames();
    const std::string objective = m_session->objectiveName();
    const bool newKind = names != m_resultParameters;
    m_resultParameters = names;

    m_heatmap->setResults(m_results, names, objective);
    if (newKind && names.size() >= 2)
        m_heatmap->setSpec(sessionHeatmapSpec(m_heatmap->spec(), names, objective, *m_results));
    m_scatter->setResults(m_results, names, objective);
    m_resultsView->setResults(m_results, names, objective);
    if (newKind)
        m_resultsView->sortWinnersFirst(objective);
    m_crossGpu->setResults(m_results);
    m_compare->setCurrent(m_session->session(), m_results, compareLabel());
    updateDetailsContext();
    const bool any = !m_results->empty();
    m_scatterStack->setCurrentIndex(any ? 1 : 0);
    if (any)
        m_heatmapStack->setCurrentIndex(1);
    updateResultsHeader();
}

QString MainWindow::compareLabel() const {
    const SessionInfo info = m_session->session();
    const QString device = info.deviceName.empty() ? tr("unknown device") : QString::fromStdString(info.deviceName);
    const QString source = m_demo                      ? tr("the demo")
                           : m_recordingPath.isEmpty() ? tr("session %1").arg(info.id)
                                                       : QFileInfo(m_recordingPath).fileName();
    return QStringLiteral("%1 (%2)").arg(device, source);
}

void MainWindow::compareWith(const QString& path) {
    m_compare->setCurrent(m_session->session(), m_results, compareLabel());
    m_compare->compareWith(path);
    m_compareDock->show();
    m_compareDock->raise();
}

void MainWindow::updateDetailsContext() {
    const ProblemAtShape context =
        detailsContext(m_document->problem(), m_document->shapeIndex(), m_session->session());
    m_details->setContext(m_results, m_resultParameters, context.problem, m_session->arch(), context.shape);
    m_details->setObjectiveName(m_session->objectiveName());
}

void MainWindow::matchShapeToSession() {
    // Recorded results of the open problem's kernel at one of its shapes: look at that shape, so
    // that the space (and the cross-GPU analysis) is the recording's.
    const auto problem = m_document->problem();
    if (!problem)
        return;
    if (const auto shape = shapeOfSession(*problem, m_session->session()); shape && *shape != m_document->shapeIndex())
        m_document->setShapeIndex(*shape);
}

void MainWindow::onRecordingLoaded(const QString& description) {
    // A file opened, or another session of it shown (a shape of a shape set): then it stays.
    if (!m_pendingRecording.isEmpty()) {
        m_recordingPath = m_pendingRecording;
        m_pendingRecording.clear();
        m_demo = m_demoPending;
        m_demoPending = false;
        if (!m_demo && !m_recordingPath.isEmpty())
            addRecentFile(m_recordingPath);
    }
    m_busyBar->setVisible(m_controller->isBusy());
    // Start on the best config: the heatmap outlines its cell, the table shows its row, Details explains it.
    if (const auto best = bestOf(*m_results))
        selectConfig(QString::fromStdString(configJson(best->config)));
    matchShapeToSession();
    updateDetailsContext();
    updateTitle();
    updateResultsHeader();
    m_problemPanel->showRecording(m_session->session(), *m_results, QFileInfo(m_recordingPath).fileName());
    statusBar()->showMessage(description, kStatusTimeoutMs);
}

void MainWindow::onSessionStarted(const QString& description) {
    m_recordingPath.clear();
    m_demo = false;
    updateTitle();
    updateResultsHeader();
    statusBar()->showMessage(description, kStatusTimeoutMs);
}

void MainWindow::onSessionFailed(const QString& message) {
    const bool loading = !m_pendingRecording.isEmpty();
    m_busyBar->setVisible(m_controller->isBusy());
    if (loading) {
        m_errorBanner->showMessage(ErrorBanner::Level::Error,
                                   tr("Could not open %1").arg(QFileInfo(m_pendingRecording).fileName()), message);
        m_pendingRecording.clear();
        m_demoPending = false;
    } else {
        m_errorBanner->showMessage(ErrorBanner::Level::Error, tr("The run stopped"), message);
    }
    updateResultsHeader();
}

void MainWindow::onRunningChanged(bool running) {
    m_cancelAction->setEnabled(running || m_crossGpu->isRunning());
    m_runAction->setEnabled(!running);
    updateResultsHeader();
}

void MainWindow::onHeatmapGridChanged() {
    if (hasResultsShown())
        emit resultsShown();
}

void MainWindow::updateResultsHeader() {
    if (m_results->empty()) {
        m_heatmapEmpty->setText(noResultsNote(m_session->isLoading(), m_runAction->shortcut()));
        m_heatmapStack->setCurrentIndex(0);
        m_resultsHeader->clear();
        m_sessionStatus->setText(m_session->isLoading() ? tr("Reading the recording…") : QString());
        m_sessionStatus->setMinimumWidth(0);
        return;
    }
    const ResultsHeadline headline =
        describeResults(m_session->session(), *m_results, {m_demo, m_session->isRunning(), m_recordingPath});
    m_resultsHeader->setToolTip(headline.tooltip);
    m_resultsHeader->setText(headline.header);
    m_sessionStatus->setText(headline.status);
    // The status bar's messages must not squeeze it out.
    m_sessionStatus->setMinimumWidth(m_sessionStatus->fontMetrics().horizontalAdvance(headline.status) + 8);
}

void MainWindow::selectConfig(const QString& configJson) {
    if (m_selecting || configJson == m_selectedConfig)
        return;
    m_selecting = true; // the views' own signals while they follow come back here: ignored
    m_selectedConfig = configJson;
    m_heatmap->selectConfig(configJson);
    m_scatter->selectConfig(configJson);
    m_resultsView->selectConfig(configJson);
    m_crossGpu->setSelectedConfig(configJson);
    m_details->showConfig(configJson);
    m_problemPanel->showLaunchOf(configJson);
    m_selecting = false;
}

// ------------------------------------------------------------------------------ window

void MainWindow::updateTitle() {
    const SessionInfo info = m_session->session();
    setWindowModified(m_document->isModified());
    if (m_demo) {
        setWindowFilePath(QString());
        setWindowTitle(
            tr("%1 — recorded demo session on an %2 — Tilescope")
                .arg(m_document->hasProblem() ? m_document->displayName() : QString::fromStdString(info.kernel),
                     QString::fromStdString(info.deviceName.empty() ? std::string(kDemoDevice) : info.deviceName)));
    } else if (m_document->hasProblem()) {
        setWindowFilePath(m_document->path());
        const QString results =
            m_recordingPath.isEmpty() ? QString() : tr(" · %1").arg(QFileInfo(m_recordingPath).fileName());
        setWindowTitle(tr("%1[*]%2 — Tilescope").arg(m_document->displayName(), results));
    } else if (!m_recordingPath.isEmpty()) {
        setWindowTitle(tr("%1 — Tilescope").arg(QFileInfo(m_recordingPath).fileName()));
    } else {
        setWindowTitle(tr("Tilescope"));
    }
}

void MainWindow::followPalette() {
    applyPlotPalette(m_heatmap->plot(), m_heatmap->palette());
    applyPlotPalette(m_scatter->plot(), m_scatter->palette());
}

void MainWindow::followScreen() {
    fitToScreen();
    // Plots draw into a buffer at the screen's pixel ratio: sharp on high-DPI screens, also after
    // the window moves to another screen.
    const double ratio = devicePixelRatioF();
    for (QCustomPlot* plot : {m_heatmap->plot(), m_scatter->plot()}) {
        if (!qFuzzyCompare(plot->bufferDevicePixelRatio(), ratio)) {
            plot->setBufferDevicePixelRatio(ratio);
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
    }
}

void MainWindow::changeEvent(QEvent* event) {
    QMainWindow::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange) {
        // The window hears of a new palette before its children take it: follow once they have.
        QTimer::singleShot(0, this, [this]() {
            followPalette();
            updateResultsHeader();
        });
    }
}

void MainWindow::resetLayout() {
    for (QDockWidget* dock : docks()) {
        dock->setFloating(false);
        dock->show();
    }
    if (!m_defaultState.isEmpty())
        restoreState(m_defaultState, kLayoutVersion);
    updateDockTitleBars();
    m_problemDock->raise();
    m_heatmapDock->raise();
    m_resultsDock->raise();
}

void MainWindow::applyDefaultDockSizes() {
    // Left a quarter, right a little less, the plots in between (none below what its panels
    // need); the plots take 60 % of the height above the results, the problem a little less than half above the run
    // panel.
    const int w = width();
    const int h = height();
    // On a small screen the problem's side gets more: its tables and conditions need the width more
    // than the plot and Details do.
    const int leftShare = w < kSmallScreenWidth ? 30 : 26;
    const int rightShare = w < kSmallScreenWidth ? 24 : 23;
    // Wide enough for the Run panel's form without scrolling sideways, where the window allows.
    const int runForm = m_runPanel->minimumSizeHint().width() + style()->pixelMetric(QStyle::PM_ScrollBarExtent);
    const int left = std::max({w * leftShare / 100, m_problemDock->minimumWidth(), m_runDock->minimumWidth(),
                               std::min(runForm, w * 34 / 100)});
    const int right = std::max(w * rightShare / 100, m_detailsDock->minimumWidth());
    resizeDocks({m_problemDock, m_heatmapDock, m_detailsDock}, {left, std::max(w - left - right, 1), right},
                Qt::Horizontal);
    resizeDocks({m_heatmapDock, m_resultsDock}, {h * 60 / 100, h * 40 / 100}, Qt::Vertical);
    resizeDocks({m_problemDock, m_runDock}, {h * 46 / 100, h * 54 / 100}, Qt::Vertical);
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    followScreen();
    if (m_shownOnce)
        return;
    m_shownOnce = true;
    if (QWindow* window = windowHandle())
        connect(window, &QWindow::screenChanged, this, &MainWindow::followScreen);
    // Dock sizes only take once the window is laid out.
    QTimer::singleShot(0, this, [this]() {
        const QByteArray restored = m_layoutRestored ? saveState(kLayoutVersion) : QByteArray();
        applyDefaultDockSizes();
        m_defaultState = saveState(kLayoutVersion);
        if (m_layoutRestored)
            restoreState(restored, kLayoutVersion);
    });
}

QString MainWindow::layoutSettingsGroup() const {
    const QSize size = availableScreenArea().size();
    return kLayoutGroup.arg(size.width()).arg(size.height());
}

QRect MainWindow::availableScreenArea() const {
    const QScreen* s = screen() ? screen() : QGuiApplication::primaryScreen();
    return s ? s->availableGeometry() : QRect(0, 0, 1600, 1000);
}

void MainWindow::fitToScreen() {
    // Never larger than the screen it is on, whatever was saved or asked for.
    const QSize frame = frameGeometry().size() - size();
    const QSize most = availableScreenArea().size() - frame;
    if (width() > most.width() || height() > most.height())
        resize(size().boundedTo(most));
}

void MainWindow::saveLayout() const {
    QSettings settings;
    settings.beginGroup(layoutSettingsGroup());
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState(kLayoutVersion));
}

void MainWindow::restoreLayout() {
    QSettings settings;
    settings.beginGroup(layoutSettingsGroup());
    const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
    if (!geometry.isEmpty())
        restoreGeometry(geometry);
    const QByteArray state = settings.value(kStateKey).toByteArray();
    if (!state.isEmpty())
        m_layoutRestored = restoreState(state, kLayoutVersion);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!keepChangesSafe()) {
        event->ignore();
        return;
    }
    if (m_options.persistent)
        saveLayout();
    if (m_exportDialog)
        m_exportDialog->close();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!openableFilesFrom(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QStringList files = openableFilesFrom(event->mimeData());
    if (files.isEmpty())
        return;
    event->acceptProposedAction();
    // A problem first, then its recording: the recording's shape is matched to the problem.
    QString problem;
    QString recording;
    for (const QString& file : files) {
        if (classifyFile(file) == FileKind::Recording) {
            if (recording.isEmpty())
                recording = file;
        } else if (problem.isEmpty()) {
            problem = file;
        }
    }
    if (!problem.isEmpty())
        openProblem(problem);
    if (!recording.isEmpty())
        openRecording(recording);
}

} // namespace tilescope::views
