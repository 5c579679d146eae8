#include "mainwindow.h"

#include "errorbanner.h"
#include "examples.h"
#include "format.h"
#include "problempanel.h"
#include "sourceview.h"
#include "spacecontroller.h"
#include "spacepanel.h"
#include "spec/tuningproblem.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScreen>
#include <QSettings>
#include <QShowEvent>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

namespace tilescope::views {

namespace {

constexpr int kLayoutVersion = 1; // bump when docks are added or renamed
constexpr int kMaxRecentFiles = 10;
constexpr int kStatusTimeoutMs = 6000;
const QString kGeometryKey = QStringLiteral("MainWindow/geometry");
const QString kStateKey = QStringLiteral("MainWindow/state");
const QString kRecentKey = QStringLiteral("MainWindow/recentFiles");
const QString kLastDirKey = QStringLiteral("MainWindow/lastDirectory");

QString problemFileFrom(const QMimeData* mime) {
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile() && url.toLocalFile().endsWith(QLatin1String(".json"), Qt::CaseInsensitive))
            return url.toLocalFile();
    }
    return {};
}

QIcon themeIcon(const char* name, QStyle::StandardPixmap fallback, const QStyle* style) {
    return QIcon::fromTheme(QString::fromLatin1(name), style->standardIcon(fallback));
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : MainWindow(Options{}, parent) {}

MainWindow::MainWindow(Options options, QWidget* parent)
    : QMainWindow(parent)
    , m_options(options)
    , m_document(new ProblemDocument(this))
    , m_controller(new SpaceController(this)) {
    initResources();
    setObjectName(QStringLiteral("MainWindow"));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowNestedDocks | QMainWindow::AllowTabbedDocks);
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);

    // Central area: an empty state until a problem is open, then tabs (the kernel source now;
    // heatmaps and plots later).
    m_errorBanner = new ErrorBanner(this);
    auto* empty = new QLabel(tr("<h3>No tuning problem open</h3>"
                                "<p>Open a T1 problem file with <b>File ▸ Open Problem…</b> (%1), "
                                "or drop a <tt>.json</tt> file here.</p>")
                                 .arg(QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText)),
                             this);
    empty->setAlignment(Qt::AlignCenter);
    empty->setWordWrap(true);

    m_sourceView = new SourceView(this);
    m_sourceView->setObjectName(QStringLiteral("kernelSource"));
    m_sourceHeader = new QLabel(this);
    m_sourceHeader->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_sourceHeader->setTextFormat(Qt::RichText);
    m_sourceHeader->setContentsMargins(6, 4, 6, 4);
    auto* kernelPage = new QWidget(this);
    auto* kernelLayout = new QVBoxLayout(kernelPage);
    kernelLayout->setContentsMargins(0, 0, 0, 0);
    kernelLayout->setSpacing(0);
    kernelLayout->addWidget(m_sourceHeader);
    kernelLayout->addWidget(m_sourceView, 1);

    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(kernelPage, tr("Kernel Source"));

    m_centralStack = new QStackedWidget(this);
    m_centralStack->addWidget(empty);
    m_centralStack->addWidget(m_tabs);
    auto* central = new QWidget(this);
    auto* centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    centralLayout->addWidget(m_errorBanner);
    centralLayout->addWidget(m_centralStack, 1);
    setCentralWidget(central);

    createDocks();
    createActions();

    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0);
    m_busyBar->setTextVisible(false);
    m_busyBar->setMaximumWidth(fontMetrics().horizontalAdvance(QLatin1Char('x')) * 14);
    m_busyBar->setMaximumHeight(fontMetrics().height());
    m_busyBar->hide();
    m_spaceStatus = new QLabel(this);
    statusBar()->addPermanentWidget(m_busyBar);
    statusBar()->addPermanentWidget(m_spaceStatus);

    connect(m_document, &ProblemDocument::problemChanged, this, &MainWindow::onProblemChanged);
    connect(m_document, &ProblemDocument::shapeChanged, this, &MainWindow::requestSpace);
    connect(m_document, &ProblemDocument::loadFailed, this, &MainWindow::onLoadFailed);
    connect(m_controller, &SpaceController::busyChanged, this, &MainWindow::onBusyChanged);
    connect(m_controller, &SpaceController::settled, this, &MainWindow::settled);
    connect(m_controller, &SpaceController::spaceReady, this, [this](const std::shared_ptr<const SpaceResult>& r) {
        if (r->ok())
            m_spaceStatus->setText(tr("%1 valid configs").arg(formatCount(r->stats.validSize)));
        else
            m_spaceStatus->setText(tr("config space unavailable"));
    });

    // A first-run size that suits the screen; a saved layout replaces it.
    const QRect available = screen() ? screen()->availableGeometry() : QRect(0, 0, 1600, 1000);
    resize(std::min(available.width(), 1600) * 9 / 10, std::min(available.height(), 1000) * 9 / 10);
    if (m_options.persistent)
        restoreLayout();
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks() {
    m_problemPanel = new ProblemPanel(m_document, m_controller, this);
    m_problemDock = new QDockWidget(tr("Problem"), this);
    m_problemDock->setObjectName(QStringLiteral("problemDock"));
    m_problemDock->setWidget(m_problemPanel);
    addDockWidget(Qt::LeftDockWidgetArea, m_problemDock);

    m_spacePanel = new SpacePanel(m_controller, this);
    m_spaceDock = new QDockWidget(tr("Config Space"), this);
    m_spaceDock->setObjectName(QStringLiteral("spaceDock"));
    m_spaceDock->setWidget(m_spacePanel);
    addDockWidget(Qt::BottomDockWidgetArea, m_spaceDock);
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(themeIcon("document-open", QStyle::SP_DialogOpenButton, style()),
                                    tr("&Open Problem…"), this, &MainWindow::openDialog);
    open->setShortcut(QKeySequence::Open);
    open->setStatusTip(tr("Open a tuning problem (T1 JSON)"));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::rebuildRecentMenu);
    file->addSeparator();
    m_saveAsAction = file->addAction(themeIcon("document-save-as", QStyle::SP_DialogSaveButton, style()),
                                     tr("Save Problem &As…"), this, &MainWindow::saveAsDialog);
    m_saveAsAction->setShortcut(QKeySequence::SaveAs);
    m_saveAsAction->setStatusTip(tr("Write the problem to another T1 file"));
    m_saveAsAction->setEnabled(false);
    file->addSeparator();
    QAction* quit = file->addAction(themeIcon("application-exit", QStyle::SP_DialogCloseButton, style()), tr("&Quit"),
                                    this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    quit->setMenuRole(QAction::QuitRole);

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    QAction* toggleProblem = m_problemDock->toggleViewAction();
    toggleProblem->setShortcut(QKeySequence(Qt::ALT | Qt::Key_1));
    m_viewMenu->addAction(toggleProblem);
    QAction* toggleSpace = m_spaceDock->toggleViewAction();
    toggleSpace->setShortcut(QKeySequence(Qt::ALT | Qt::Key_2));
    m_viewMenu->addAction(toggleSpace);
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(tr("&Reset Layout"), this, &MainWindow::resetLayout);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* about = help->addAction(tr("&About Tilescope"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
    QAction* aboutQt = help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
    aboutQt->setMenuRole(QAction::AboutQtRole);

    if (m_options.persistent)
        m_recentFiles = QSettings().value(kRecentKey).toStringList();
}

bool MainWindow::openProblem(const QString& path, ProblemDocument::Origin origin) {
    m_errorBanner->hide();
    return m_document->load(path, origin);
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

void MainWindow::openDialog() {
    QSettings settings;
    const QString start = m_document->origin() == ProblemDocument::Origin::File && m_document->hasProblem()
                              ? QFileInfo(m_document->path()).absolutePath()
                              : settings.value(kLastDirKey).toString();
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Tuning Problem"), start,
                                                      tr("Tuning problems (*.json);;All files (*)"));
    if (path.isEmpty())
        return;
    settings.setValue(kLastDirKey, QFileInfo(path).absolutePath());
    openProblem(path);
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
        const QString label =
            number < 10 ? tr("&%1  %2").arg(number).arg(QFileInfo(path).fileName()) : QFileInfo(path).fileName();
        QAction* action = m_recentMenu->addAction(label, this, [this, path]() { openProblem(path); });
        action->setToolTip(QDir::toNativeSeparators(path));
        action->setStatusTip(QDir::toNativeSeparators(path));
        action->setEnabled(QFileInfo::exists(path));
    }
    if (m_recentFiles.isEmpty()) {
        m_recentMenu->addAction(tr("No recent problems"))->setEnabled(false);
        return;
    }
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(tr("&Clear Recent Problems"), this, [this]() {
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
    m_centralStack->setCurrentIndex(problem ? 1 : 0);
    if (!problem)
        return;
    if (m_document->kernelError().isEmpty()) {
        m_sourceView->setSource(m_document->kernelSource(), problem->language == "CUDA" || problem->language == "C++");
    } else {
        m_sourceView->setSource(m_document->kernelError(), false);
    }
    const QFileInfo kernel(m_document->kernelPath());
    const QString where =
        m_document->origin() == ProblemDocument::Origin::Example
            ? tr("embedded example, extracted to %1").arg(QDir::toNativeSeparators(kernel.absolutePath()))
            : QDir::toNativeSeparators(kernel.absolutePath());
    m_sourceHeader->setText(tr("<b>%1</b>&nbsp;&nbsp;<span style='color:%2'>%3</span>")
                                .arg(kernel.fileName().toHtmlEscaped(),
                                     palette().color(QPalette::PlaceholderText).name(), where.toHtmlEscaped()));
    if (m_document->origin() == ProblemDocument::Origin::File)
        addRecentFile(m_document->path());
    statusBar()->showMessage(tr("Opened %1: %2 parameters, %3 conditions, %4 shapes")
                                 .arg(m_document->displayName())
                                 .arg(problem->parameters.size())
                                 .arg(problem->conditions.size())
                                 .arg(problem->shapes.size()),
                             kStatusTimeoutMs);
}

void MainWindow::onLoadFailed(const ProblemError& error) {
    const QString name = QFileInfo(error.file).fileName();
    QString details = error.location.isEmpty() ? error.message : tr("At %1: %2").arg(error.location, error.message);
    details +=
        QLatin1Char('\n') + tr("File: %1").arg(QDir::toNativeSeparators(QFileInfo(error.file).absoluteFilePath()));
    if (m_document->hasProblem())
        details += QLatin1Char('\n') + tr("%1 stays open.").arg(m_document->displayName());
    m_errorBanner->showMessage(ErrorBanner::Level::Error, tr("Could not open %1").arg(name), details);
    statusBar()->showMessage(tr("Could not open %1").arg(name), kStatusTimeoutMs);
}

void MainWindow::onBusyChanged(bool busy) {
    m_busyBar->setVisible(busy);
    if (busy)
        m_spaceStatus->setText(tr("Building the config space…"));
}

void MainWindow::requestSpace() {
    m_controller->setProblem(m_document->problem(), static_cast<std::size_t>(std::max(0, m_document->shapeIndex())));
}

void MainWindow::updateTitle() {
    if (m_document->hasProblem()) {
        setWindowFilePath(m_document->path());
        setWindowTitle(tr("%1 — Tilescope").arg(m_document->displayName()));
    } else {
        setWindowTitle(tr("Tilescope"));
    }
}

void MainWindow::resetLayout() {
    if (!m_defaultState.isEmpty())
        restoreState(m_defaultState, kLayoutVersion);
    m_problemDock->show();
    m_spaceDock->show();
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (m_shownOnce)
        return;
    m_shownOnce = true;
    // Dock sizes only take once the window is laid out: the default layout gives the problem
    // 40 % of the width and the space summary 40 % of the height.
    QTimer::singleShot(0, this, [this]() {
        const QByteArray restored = m_layoutRestored ? saveState(kLayoutVersion) : QByteArray();
        resizeDocks({m_problemDock}, {width() * 2 / 5}, Qt::Horizontal);
        resizeDocks({m_spaceDock}, {height() * 2 / 5}, Qt::Vertical);
        m_defaultState = saveState(kLayoutVersion);
        if (m_layoutRestored)
            restoreState(restored, kLayoutVersion);
    });
}

void MainWindow::saveLayout() const {
    QSettings settings;
    settings.setValue(kGeometryKey, saveGeometry());
    settings.setValue(kStateKey, saveState(kLayoutVersion));
}

void MainWindow::restoreLayout() {
    const QSettings settings;
    const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
    if (!geometry.isEmpty())
        restoreGeometry(geometry);
    const QByteArray state = settings.value(kStateKey).toByteArray();
    if (!state.isEmpty())
        m_layoutRestored = restoreState(state, kLayoutVersion);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (m_options.persistent)
        saveLayout();
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!problemFileFrom(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString path = problemFileFrom(event->mimeData());
    if (path.isEmpty())
        return;
    event->acceptProposedAction();
    openProblem(path);
}

} // namespace tilescope::views
