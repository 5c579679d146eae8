#include "mainwindow.h"

#include "common/errorbanner.h"
#include "common/examples.h"
#include "common/format.h"
#include "common/themeicon.h"
#include "compare/compareview.h"
#include "configselection.h"
#include "crossgpu/crossgpuview.h"
#include "docklayout.h"
#include "export/resultsexport.h"
#include "fileopening.h"
#include "mainmenus.h"
#include "panellinks.h"
#include "plots/heatmapwidget.h"
#include "plots/plotstyle.h"
#include "plots/scatterwidget.h"
#include "problem/compilecheck.h"
#include "problem/kernelsourcepanel.h"
#include "problem/problempanel.h"
#include "problem/spacecontroller.h"
#include "problem/spacepanel.h"
#include "resultsfanout.h"
#include "session/configdetails.h"
#include "session/resultsview.h"
#include "session/runpanel.h"
#include "session/sessioncontroller.h"
#include "session/sessionproblem.h"
#include "shapes/shapesview.h"

#include "spec/tuningproblem.h"

#include <qcustomplot.h>

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QProgressBar>
#include <QShowEvent>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>
#include <QWindow>

#include <algorithm>
#include <utility>

namespace tilescope::views {

namespace {

constexpr int kStatusTimeoutMs = 6000;

} // namespace

MainWindow::FileKind MainWindow::classifyFile(const QString& path) {
    return isRecordingFile(path) ? FileKind::Recording : FileKind::Problem;
}

MainWindow::MainWindow(QWidget* parent)
    : MainWindow(Options{}, parent) {}

MainWindow::MainWindow(Options options, QWidget* parent)
    : QMainWindow(parent)
    , m_options(options)
    , m_document(new ProblemDocument(this))
    , m_controller(new SpaceController(this))
    , m_session(new SessionController(this))
    , m_layout(new DockLayout(this, options.persistent))
    , m_selection(new ConfigSelection(this)) {
    initResources();
    setObjectName(QStringLiteral("MainWindow"));
    setAcceptDrops(true);

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

    // Start and Cancel are named by panels (their shortcuts) before the Run menu takes them.
    m_runAction = new QAction(themeIcon("media-playback-start", QStyle::SP_MediaPlay, style()), tr("&Start Run"), this);
    m_cancelAction = new QAction(themeIcon("process-stop", QStyle::SP_MediaStop, style()), tr("&Cancel"), this);
    createDocks();
    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0);
    m_busyBar->setTextVisible(false);
    m_busyBar->setMaximumWidth(fontMetrics().horizontalAdvance(QLatin1Char('x')) * 14);
    m_busyBar->setMaximumHeight(fontMetrics().height());
    m_busyBar->hide();
    m_spaceStatus = new QLabel(this);
    statusBar()->addPermanentWidget(m_shown->statusLabel());
    statusBar()->addPermanentWidget(m_busyBar);
    statusBar()->addPermanentWidget(m_spaceStatus);
    createActions();
    connect(m_files, &FileOpening::readingRecording, this, [this](const QString& fileName) {
        m_shown->statusLabel()->setText(tr("Reading %1…").arg(fileName));
        m_busyBar->show();
    });

    connect(m_document, &ProblemDocument::problemChanged, this, &MainWindow::onProblemChanged);
    connect(m_document, &ProblemDocument::problemEdited, this, &MainWindow::onProblemEdited);
    connect(m_document, &ProblemDocument::modifiedChanged, m_files, &FileOpening::updateTitle);
    connect(m_document, &ProblemDocument::shapeChanged, this, &MainWindow::requestSpace);
    connect(m_document, &ProblemDocument::shapeChanged, this, [this](int shape) {
        if (m_runPanel->shapeCombo() && shape < m_runPanel->shapeCombo()->count())
            m_runPanel->shapeCombo()->setCurrentIndex(shape);
        m_shown->updateDetailsContext();
    });
    connect(m_controller, &SpaceController::busyChanged, this, &MainWindow::onBusyChanged);
    connect(m_controller, &SpaceController::settled, this, &MainWindow::settled);
    connect(m_controller, &SpaceController::spaceReady, this, &MainWindow::onSpaceReady);

    connect(m_session, &SessionController::snapshot, m_shown, &ResultsFanOut::show);
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
    connect(m_session, &SessionController::cleared, this, [this]() {
        m_files->resultsCleared();
        selectConfig(QString()); // the config picked was of the results put away
        m_busyBar->setVisible(m_controller->isBusy());
        m_shown->updateHeader();
    });
    connect(m_session, &SessionController::started, this, &MainWindow::onSessionStarted);
    connect(m_session, &SessionController::failed, this, &MainWindow::onSessionFailed);
    connect(m_session, &SessionController::runningChanged, this, &MainWindow::onRunningChanged);

    // Selection: whichever view picks a config, all show it.
    m_selection->addView(m_heatmap, &HeatmapWidget::configSelected, &HeatmapWidget::selectConfig);
    m_selection->addView(m_scatter, &ScatterWidget::configSelected, &ScatterWidget::selectConfig);
    m_selection->addView(m_resultsView, &ResultsView::configSelected, &ResultsView::selectConfig);
    m_selection->addView(m_crossGpu, &CrossGpuView::configSelected, &CrossGpuView::setSelectedConfig);
    m_selection->addSource(m_compare, &CompareView::configSelected);
    // A Compile Check row is a config too: Details shows what compiling told when no result has it.
    m_selection->addView(m_compileCheck, &CompileCheckPanel::configSelected, &CompileCheckPanel::selectConfig);
    connect(m_compileCheck, &CompileCheckPanel::sampleChanged, this,
            [this]() { m_details->setCompiledSample(m_compileCheck->sample(), m_compileCheck->sampleArch()); });
    m_selection->addFollower(m_details, &ConfigDetailsPanel::showConfig);
    m_selection->addFollower(m_sourcePanel, &KernelSourcePanel::showConfig);
    // Heatmap by a line: the configs of the results shown, counted by the Kernel Source panel.
    linkSourceToHeatmap(m_sourcePanel, m_heatmap, m_heatmapDock);
    m_selection->addFollower(m_problemPanel, &ProblemPanel::showLaunchOf);
    connect(m_heatmap, &HeatmapWidget::gridChanged, this, &MainWindow::onHeatmapGridChanged);

    followPalette();
    m_layout->sizeWindow();
    m_files->updateTitle();
    m_shown->updateHeader();
}

MainWindow::~MainWindow() {
    // Children go in the order they were made, the controllers first: stop their signals reaching
    // this half-destroyed window, and let the panels that use them go before them.
    m_session->disconnect(this);
    m_controller->disconnect(this);
    m_document->disconnect(this);
    delete m_export;
    for (QDockWidget* dock : docks())
        delete dock;
}

void MainWindow::createDocks() {
    // The panels, then their docks: left, what the problem is and how to run it; middle, the plots
    // and the kernel source as tabs, the results under them; right, one config in depth.
    m_problemPanel = new ProblemPanel(m_document, m_controller, this);
    m_spacePanel = new SpacePanel(m_controller, this);
    m_runPanel = new RunPanel(m_session, this);
    m_heatmap = new HeatmapWidget(this);
    m_heatmap->setObjectName(QStringLiteral("heatmap"));
    m_heatmap->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    m_scatter = new ScatterWidget(this);
    m_scatter->setObjectName(QStringLiteral("scatter"));
    m_sourcePanel = new KernelSourcePanel(m_document, this);
    m_compileCheck = new CompileCheckPanel(m_document, m_controller, this);
    m_compileCheck->setObjectName(QStringLiteral("compileCheck"));
    m_resultsView = new ResultsView(this);
    m_resultsView->setObjectName(QStringLiteral("resultsView"));
    m_crossGpu = new CrossGpuView(this);
    m_crossGpu->setObjectName(QStringLiteral("crossGpu"));
    m_shapes = new ShapesView(this);
    m_shapes->setObjectName(QStringLiteral("shapes"));
    m_compare = new CompareView(this);
    m_compare->setObjectName(QStringLiteral("compare"));
    m_details = new ConfigDetailsPanel(this);
    m_details->setObjectName(QStringLiteral("details"));
    m_shown = new ResultsFanOut(
        m_session, m_document, {m_heatmap, m_scatter, m_resultsView, m_crossGpu, m_compare, m_details},
        [this]() {
            return ResultsFanOut::Origin{isDemo(), m_files->recordingPath()};
        },
        m_runAction, this);

    m_problemDock =
        m_layout->addDock(tr("Problem"), QStringLiteral("problemDock"), DockLayout::scrollable(m_problemPanel));
    m_spaceDock = m_layout->addDock(tr("Config Space"), QStringLiteral("spaceDock"), m_spacePanel);
    m_runDock = m_layout->addDock(tr("Run"), QStringLiteral("runDock"), DockLayout::scrollable(m_runPanel));
    m_heatmapDock = m_layout->addDock(tr("Heatmap"), QStringLiteral("heatmapDock"), m_shown->heatmapPane());
    m_scatterDock = m_layout->addDock(tr("Scatter"), QStringLiteral("scatterDock"), m_shown->scatterPane());
    m_sourceDock = m_layout->addDock(tr("Kernel Source"), QStringLiteral("sourceDock"), m_sourcePanel);
    m_compileDock = m_layout->addDock(tr("Compile Check"), QStringLiteral("compileDock"), m_compileCheck);
    m_resultsDock = m_layout->addDock(tr("Results"), QStringLiteral("resultsDock"), m_resultsView);
    m_crossGpuDock = m_layout->addDock(tr("Cross-GPU"), QStringLiteral("crossGpuDock"), m_crossGpu);
    m_shapesDock = m_layout->addDock(tr("Shapes"), QStringLiteral("shapesDock"), m_shapes);
    m_compareDock = m_layout->addDock(tr("Compare"), QStringLiteral("compareDock"), m_compare);
    m_detailsDock = m_layout->addDock(tr("Details"), QStringLiteral("detailsDock"), m_details);
    m_layout->arrange({m_problemDock,
                       m_runDock,
                       m_heatmapDock,
                       m_resultsDock,
                       m_detailsDock,
                       {m_scatterDock, m_sourceDock, m_compileDock},
                       {m_crossGpuDock, m_spaceDock, m_shapesDock, m_compareDock},
                       m_runPanel});
    linkCompileCheckToSource(m_compileCheck, m_sourcePanel, m_sourceDock);
}

SourceView* MainWindow::sourceView() const {
    return m_sourcePanel->sourceView();
}

QList<QDockWidget*> MainWindow::docks() const {
    return m_layout->docks();
}

void MainWindow::createActions() {
    m_files = new FileOpening({this, m_document, m_session, m_runPanel, m_errorBanner, m_cancelAction},
                              m_options.persistent, this);
    connect(m_problemPanel, &ProblemPanel::openProblemRequested, m_files, &FileOpening::openProblemForRecording);

    QMenu* file = m_menuBar->addMenu(tr("&File"));
    m_files->addActions(file);
    file->addSeparator();
    m_export = new ResultsExport(
        this, m_session, m_files, [this]() { return results(); }, m_options.persistent);
    m_export->addActions(file, m_heatmap, m_scatter, [this]() { return selectedConfig(); });
    file->addSeparator();
    QAction* quit = file->addAction(themeIcon("application-exit", QStyle::SP_DialogCloseButton, style()), tr("&Quit"),
                                    this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);
    addEditMenu(m_menuBar, m_document, this);
    addRunMenu(m_menuBar, {m_runAction, m_cancelAction, m_runDock, m_runPanel, m_session, m_crossGpuDock, m_crossGpu},
               this);
    m_layout->addViewActions(m_menuBar->addMenu(tr("&View")));

    addHelpMenu(m_menuBar, this);
}

// ------------------------------------------------------------------------------ files

bool MainWindow::openProblem(const QString& path, ProblemDocument::Origin origin) {
    return m_files->openProblem(path, origin);
}

bool MainWindow::openRecording(const QString& path) {
    return m_files->openRecording(path);
}

bool MainWindow::openFile(const QString& path) {
    return m_files->openFile(path);
}

bool MainWindow::openDemo(const QString& folder) {
    return m_files->openDemo(folder);
}

bool MainWindow::isDemo() const {
    return m_files->isDemo();
}

bool MainWindow::saveProblemAs(const QString& path, ProblemError* error) {
    return m_files->saveProblemAs(path, error);
}

bool MainWindow::saveProblem() {
    return m_files->saveProblem();
}

bool MainWindow::newProblemFromKernel(const QString& kernelPath) {
    return m_files->newProblemFromKernel(kernelPath);
}

QStringList MainWindow::recentFiles() const {
    return m_files->recentFiles();
}

bool MainWindow::isBusy() const {
    return m_controller->isBusy();
}

bool MainWindow::isLoadingResults() const {
    return m_session->isLoading();
}

bool MainWindow::hasResultsLoaded() const {
    const auto grid = m_heatmap->grid();
    return grid && !grid->empty() && !m_heatmap->isBusy();
}

bool MainWindow::hasResultsShown() const {
    const auto grid = m_heatmap->grid();
    return grid && !grid->empty() && grid->okCount + grid->analysedCount > 0 && !m_heatmap->isBusy();
}

ExportDialog* MainWindow::showExportDialog() {
    return m_export->showDialog();
}

bool MainWindow::exportPlot(QWidget* plot, const QString& path) {
    return ResultsExport::exportPlot(plot, path);
}

ResultsSnapshot MainWindow::results() const {
    return m_shown->results();
}

// ------------------------------------------------------------------------------ problem

void MainWindow::onProblemEdited() {
    m_files->updateTitle();
    m_runPanel->setEditedProblem(m_document->problem());
    m_shown->updateDetailsContext();
    requestSpace();
}

void MainWindow::onProblemChanged() {
    const auto problem = m_document->problem();
    m_files->updateTitle();
    m_runPanel->setProblem(problem, m_document->path());
    m_shown->updateDetailsContext();
    m_shown->updateHeader();
    m_shown->showTable();
    if (!problem)
        return;
    m_files->problemOpened();
    m_files->matchShapeToSession();
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

    sayLaunchWarnings(m_errorBanner, *result, m_document->displayName(), m_launchWarnings);
}

void MainWindow::requestSpace() {
    m_controller->setProblem(m_document->problem(), static_cast<std::size_t>(std::max(0, m_document->shapeIndex())));
}

// ------------------------------------------------------------------------------ results

void MainWindow::compareWith(const QString& path) {
    m_shown->compareWith(path);
    m_compareDock->show();
    m_compareDock->raise();
}

void MainWindow::onRecordingLoaded(const QString& description) {
    m_files->recordingLoaded();
    m_busyBar->setVisible(m_controller->isBusy());
    // Start on the best config: the heatmap outlines its cell, the table shows its row, Details explains it.
    if (const auto best = bestOf(*results()))
        selectConfig(QString::fromStdString(configJson(best->config)));
    m_files->matchShapeToSession();
    m_shown->updateDetailsContext();
    m_files->updateTitle();
    m_shown->updateHeader();
    m_problemPanel->showRecording(m_session->session(), *results(), QFileInfo(m_files->recordingPath()).fileName());
    statusBar()->showMessage(description, kStatusTimeoutMs);
}

void MainWindow::onSessionStarted(const QString& description) {
    m_files->runStarted();
    m_files->updateTitle();
    m_shown->updateHeader();
    statusBar()->showMessage(description, kStatusTimeoutMs);
}

void MainWindow::onSessionFailed(const QString& message) {
    m_busyBar->setVisible(m_controller->isBusy());
    m_files->sessionFailed(message);
    m_shown->updateHeader();
}

void MainWindow::onRunningChanged(bool running) {
    m_cancelAction->setEnabled(running || m_crossGpu->isRunning());
    m_runAction->setEnabled(!running);
    m_shown->updateHeader();
}

void MainWindow::onHeatmapGridChanged() {
    if (hasResultsShown())
        emit resultsShown();
}

void MainWindow::selectConfig(const QString& configJson) {
    m_selection->select(configJson);
}

QString MainWindow::selectedConfig() const {
    return m_selection->current();
}

// ------------------------------------------------------------------------------ window

void MainWindow::followPalette() {
    applyPlotPalette(m_heatmap->plot(), m_heatmap->palette());
    applyPlotPalette(m_scatter->plot(), m_scatter->palette());
}

void MainWindow::followScreen() {
    m_layout->fitToScreen();
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
            m_shown->updateHeader();
        });
    }
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    followScreen();
    if (m_layout->windowShown()) // the first time
        if (QWindow* window = windowHandle())
            connect(window, &QWindow::screenChanged, this, &MainWindow::followScreen);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!m_files->keepChangesSafe()) {
        event->ignore();
        return;
    }
    m_layout->save();
    m_export->closeDialog();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!FileOpening::openableFiles(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QStringList files = FileOpening::openableFiles(event->mimeData());
    if (files.isEmpty())
        return;
    event->acceptProposedAction();
    m_files->openDropped(files);
}

} // namespace tilescope::views
