#include "fileopening.h"

#include "common/emptystate.h"
#include "common/errorbanner.h"
#include "common/examples.h"
#include "common/format.h"
#include "common/themeicon.h"
#include "session/runpanel.h"
#include "session/sessioncontroller.h"
#include "session/sessionproblem.h"

#include "base/error.h"
#include "exchange/detection.h"
#include "spec/kernelscan.h"
#include "spec/tuningproblem.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QUrl>

#include <algorithm>
#include <optional>

namespace tilescope::views {

namespace {

constexpr int kMaxRecentFiles = 12;
constexpr int kStatusTimeoutMs = 6000;
const QString kRecentKey = QStringLiteral("MainWindow/recentFiles");
const QString kLastDirKey = QStringLiteral("MainWindow/lastDirectory");

bool hasOpenableSuffix(const QString& path) {
    static const QStringList suffixes = {QStringLiteral(".json"), QStringLiteral(".gz"), QStringLiteral(".db"),
                                         QStringLiteral(".sqlite"), QStringLiteral(".sqlite3")};
    return std::any_of(suffixes.begin(), suffixes.end(),
                       [&](const QString& s) { return path.endsWith(s, Qt::CaseInsensitive); });
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

} // namespace

bool isRecordingFile(const QString& path) {
    const std::optional<RecordingFormat> format = formatOf(path);
    if (!format)
        return !path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive);
    return isRecording(*format);
}

bool isDatabaseFile(const QString& path) {
    return formatOf(path) == RecordingFormat::TilescopeDatabase;
}

FileOpening::FileOpening(Parts parts, bool persistent, QObject* parent)
    : QObject(parent)
    , m_parts(parts)
    , m_persistent(persistent) {
    if (m_persistent)
        m_recentFiles = QSettings().value(kRecentKey).toStringList();
    connect(m_parts.document, &ProblemDocument::loadFailed, this, &FileOpening::problemFailed);
}

void FileOpening::addActions(QMenu* file) {
    QWidget* window = m_parts.window;
    const QStyle* style = window->style();
    QAction* open = file->addAction(themeIcon("document-open", QStyle::SP_DialogOpenButton, style), tr("&Open…"), this,
                                    &FileOpening::openDialog);
    open->setShortcut(QKeySequence::Open);
    open->setStatusTip(tr("Open a tuning problem (T1 JSON) or a recording of results (T4, Kernel Tuner cache, "
                          "Tilescope database)"));
    QAction* fromKernel = file->addAction(tr("&New Problem from Kernel…"), this, [this, window]() {
        const QString path = QFileDialog::getOpenFileName(window, tr("New Problem from a CUDA Kernel"),
                                                          QSettings().value(kLastDirKey).toString(),
                                                          tr("CUDA sources (*.cu *.cuh);;All files (*)"));
        if (!path.isEmpty())
            newProblemFromKernel(path);
    });
    fromKernel->setShortcut(QKeySequence::New);
    fromKernel->setStatusTip(tr("Scan a kernel for its tuning parameters and arguments and start a problem for it"));
    QAction* openRecording = file->addAction(tr("Open Re&cording…"), this, &FileOpening::openRecordingDialog);
    openRecording->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    openRecording->setStatusTip(tr("Browse recorded results: T4, a Kernel Tuner cache or a Tilescope database"));
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    connect(m_recentMenu, &QMenu::aboutToShow, this, &FileOpening::rebuildRecentMenu);
    file->addSeparator();
    QAction* save = file->addAction(themeIcon("document-save", QStyle::SP_DialogSaveButton, style), tr("&Save Problem"),
                                    this, [this]() { saveProblem(); });
    save->setShortcut(QKeySequence::Save);
    save->setStatusTip(tr("Write the edited problem back to its T1 file"));
    save->setEnabled(false);
    connect(m_parts.document, &ProblemDocument::modifiedChanged, save, &QAction::setEnabled);
    QAction* saveAs = file->addAction(themeIcon("document-save-as", QStyle::SP_DialogSaveButton, style),
                                      tr("Save Problem &As…"), this, &FileOpening::saveAsDialog);
    saveAs->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    saveAs->setStatusTip(tr("Write the problem to another T1 file"));
    saveAs->setEnabled(false);
    connect(m_parts.document, &ProblemDocument::problemChanged, saveAs,
            [this, saveAs]() { saveAs->setEnabled(m_parts.document->problem() != nullptr); });
}

void FileOpening::showStatus(const QString& text) const {
    m_parts.window->statusBar()->showMessage(text, kStatusTimeoutMs);
}

bool FileOpening::keepChangesSafe() {
    ProblemDocument* document = m_parts.document;
    if (!document->isModified())
        return true;
    const auto answer =
        QMessageBox::question(m_parts.window, tr("Unsaved changes"),
                              tr("%1 has changes that are not saved. Save them first?").arg(document->displayName()),
                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Cancel)
        return false;
    return answer == QMessageBox::Discard || saveProblem();
}

bool FileOpening::saveProblem() {
    ProblemDocument* document = m_parts.document;
    if (!document->hasProblem())
        return false;
    if (document->origin() != ProblemDocument::Origin::File) {
        saveAsDialog();
        return !document->isModified();
    }
    ProblemError failure;
    if (document->save(&failure)) {
        m_parts.banner->hide(); // what it said was about the unsaved problem
        showStatus(tr("Saved %1").arg(QDir::toNativeSeparators(document->path())));
        return true;
    }
    m_parts.banner->showMessage(ErrorBanner::Level::Error, tr("Could not save %1").arg(document->displayName()),
                                failure.text());
    return false;
}

bool FileOpening::newProblemFromKernel(const QString& kernelPath) {
    if (m_parts.session->isRunning()) {
        // The run's results would stay on screen beside a problem they are not of.
        m_parts.banner->showMessage(
            ErrorBanner::Level::Warning, tr("A run is in progress"),
            tr("Cancel it (%1) before starting a new problem.").arg(shortcutText(m_parts.cancelAction->shortcut())));
        return false;
    }
    if (!keepChangesSafe())
        return false;
    const QFileInfo kernel(kernelPath);
    std::shared_ptr<const TuningProblem> proposal;
    try {
        proposal = std::make_shared<const TuningProblem>(proposeProblem(kernel.absoluteFilePath().toStdString()));
    } catch (const std::exception& e) {
        const auto* input = dynamic_cast<const InputError*>(&e);
        m_parts.banner->showMessage(ErrorBanner::Level::Error,
                                    tr("No problem could be proposed for %1").arg(kernel.fileName()),
                                    QString::fromStdString(input ? input->message() : std::string(e.what())));
        return false;
    }
    // Beside the kernel, under a name no file has yet.
    QString target = kernel.absolutePath() + QLatin1Char('/') + kernel.completeBaseName() + QStringLiteral(".json");
    for (int n = 2; QFileInfo::exists(target); ++n)
        target =
            kernel.absolutePath() + QLatin1Char('/') + kernel.completeBaseName() + QStringLiteral("-%1.json").arg(n);
    m_parts.banner->hide();
    // The results on screen are another problem's: the new one has none yet.
    m_parts.session->clear();
    m_parts.document->openProposal(proposal, target);
    const auto found = static_cast<int>(proposal->parameters.size());
    QString title;
    if (found == 0)
        title = tr("A first problem for %1: no tuning parameters found").arg(kernel.fileName());
    else if (found == 1)
        title = tr("A first problem for %1: 1 parameter found, with one value").arg(kernel.fileName());
    else
        title = tr("A first problem for %1: %2 parameters found, each with one value")
                    .arg(kernel.fileName(), QString::number(found)); // one pass: a '%2' in the name stays
    const QString first = found == 0 ? tr("Add the parameters to tune (a name and its values, then +)")
                                     : tr("Give each parameter the values to tune (select it and type)");
    m_parts.banner->showMessage(ErrorBanner::Level::Warning, title,
                                tr("%1, add conditions, check the arguments' sizes, then save (Ctrl+S writes %2).")
                                    .arg(first, QDir::toNativeSeparators(target)));
    return true;
}

bool FileOpening::openProblem(const QString& path, ProblemDocument::Origin origin) {
    if (!keepChangesSafe())
        return false;
    m_parts.banner->hide();
    return m_parts.document->load(path, origin);
}

bool FileOpening::openRecording(const QString& path) {
    m_parts.banner->hide();
    if (!QFileInfo::exists(path)) {
        m_parts.banner->showMessage(ErrorBanner::Level::Error, tr("Could not open %1").arg(QFileInfo(path).fileName()),
                                    tr("No such file: %1").arg(QDir::toNativeSeparators(path)));
        return false;
    }
    if (m_parts.session->isRunning()) {
        m_parts.banner->showMessage(
            ErrorBanner::Level::Warning, tr("A run is in progress"),
            tr("Cancel it (%1) before opening a recording.").arg(shortcutText(m_parts.cancelAction->shortcut())));
        return false;
    }
    m_pendingRecording = QFileInfo(path).absoluteFilePath();
    m_demoPending = false;
    m_parts.session->openRecording(m_pendingRecording);
    emit readingRecording(QFileInfo(path).fileName());
    return true;
}

bool FileOpening::openFile(const QString& path) {
    return isRecordingFile(path) ? openRecording(path) : openProblem(path);
}

bool FileOpening::openDemo(const QString& folder) {
    QString error;
    const QString problem = extractExample(QStringLiteral("sgemm"), folder, &error);
    const QString recording = problem.isEmpty() ? QString() : extractDemoRecording(folder, &error);
    if (problem.isEmpty() || recording.isEmpty()) {
        m_parts.banner->showMessage(ErrorBanner::Level::Error, tr("Could not open the embedded example"), error);
        return false;
    }
    if (!openProblem(problem, ProblemDocument::Origin::Example))
        return false;
    m_parts.document->setShapeIndex(kDemoShapeIndex);
    m_parts.runPanel->setReplayRecording(recording);
    if (!openRecording(recording))
        return false;
    m_demoPending = true;
    return true;
}

bool FileOpening::saveProblemAs(const QString& path, ProblemError* error) {
    ProblemError failure;
    if (m_parts.document->saveAs(path, &failure)) {
        showStatus(tr("Saved %1").arg(QDir::toNativeSeparators(path)));
        return true;
    }
    if (error)
        *error = failure;
    else
        QMessageBox::warning(
            m_parts.window, tr("Save Problem As"),
            tr("Could not save the problem to %1.\n\n%2")
                .arg(QDir::toNativeSeparators(path), failure.location.isEmpty()
                                                         ? failure.message
                                                         : failure.location + QStringLiteral(": ") + failure.message));
    return false;
}

void FileOpening::openDialog() {
    QSettings settings;
    const ProblemDocument* document = m_parts.document;
    const QString start = document->origin() == ProblemDocument::Origin::File && document->hasProblem()
                              ? QFileInfo(document->path()).absolutePath()
                              : settings.value(kLastDirKey).toString();
    const QString path = QFileDialog::getOpenFileName(
        m_parts.window, tr("Open a Tuning Problem or a Recording"), start,
        tr("Problems and recordings (*.json *.gz *.db *.sqlite);;Tuning problems (*.json);;"
           "Recordings (*.json *.gz *.db *.sqlite);;All files (*)"));
    if (path.isEmpty())
        return;
    settings.setValue(kLastDirKey, QFileInfo(path).absolutePath());
    openFile(path);
}

void FileOpening::openProblemForRecording() {
    // The problem usually lies beside its recording; `tilescope-cli kt` keeps a script's problems
    // in DB.kt/ beside its database.
    QString start = m_recordingPath.isEmpty() ? QSettings().value(kLastDirKey).toString()
                                              : QFileInfo(m_recordingPath).absolutePath();
    if (!m_recordingPath.isEmpty()) {
        const QFileInfo recording(m_recordingPath);
        const QString problems =
            recording.absolutePath() + QLatin1Char('/') + recording.completeBaseName() + QStringLiteral(".kt");
        if (QFileInfo(problems).isDir())
            start = problems;
    }
    const QString path = QFileDialog::getOpenFileName(
        m_parts.window, tr("Open the T1 Problem of %1").arg(QFileInfo(m_recordingPath).fileName()), start,
        tr("Tuning problems (*.json);;All files (*)"));
    if (!path.isEmpty())
        openProblem(path);
}

void FileOpening::openRecordingDialog() {
    QSettings settings;
    const QString path = QFileDialog::getOpenFileName(
        m_parts.window, tr("Open a Recording"), settings.value(kLastDirKey).toString(),
        tr("Recordings: T4, Kernel Tuner caches, Tilescope databases (*.json *.gz *.db *.sqlite);;All files (*)"));
    if (path.isEmpty())
        return;
    settings.setValue(kLastDirKey, QFileInfo(path).absolutePath());
    openRecording(path);
}

void FileOpening::saveAsDialog() {
    const ProblemDocument* document = m_parts.document;
    if (!document->hasProblem())
        return;
    QString start =
        document->origin() == ProblemDocument::Origin::File
            ? document->path()
            : QSettings().value(kLastDirKey).toString() + QLatin1Char('/') + QFileInfo(document->path()).fileName();
    const QString path = QFileDialog::getSaveFileName(m_parts.window, tr("Save Tuning Problem As"), start,
                                                      tr("Tuning problems (*.json)"));
    if (!path.isEmpty())
        saveProblemAs(path);
}

void FileOpening::rebuildRecentMenu() {
    m_recentMenu->clear();
    int number = 0;
    for (const QString& path : std::as_const(m_recentFiles)) {
        ++number;
        const QFileInfo info(path);
        const bool recording = info.exists() && isRecordingFile(path);
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
        if (m_persistent)
            QSettings().setValue(kRecentKey, m_recentFiles);
    });
}

void FileOpening::addRecentFile(const QString& path) {
    m_recentFiles.removeAll(path);
    m_recentFiles.prepend(path);
    while (m_recentFiles.size() > kMaxRecentFiles)
        m_recentFiles.removeLast();
    if (m_persistent)
        QSettings().setValue(kRecentKey, m_recentFiles);
}

void FileOpening::problemOpened() {
    const ProblemDocument* document = m_parts.document;
    const std::shared_ptr<const TuningProblem> problem = document->problem();
    if (!problem)
        return;
    if (document->origin() == ProblemDocument::Origin::File && QFileInfo::exists(document->path()))
        addRecentFile(document->path());
    if (const QString blockers = document->launchBlockersText(); !blockers.isEmpty()) {
        // The space is all there; only compiling and running the kernel is not.
        m_parts.banner->showMessage(ErrorBanner::Level::Warning,
                                    tr("The space opens, but its kernel cannot be compiled here"), blockers);
    }
    const auto counted = [](std::size_t n, const QString& one, const QString& many) {
        return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
    };
    showStatus(tr("Opened %1: %2, %3, %4")
                   .arg(document->displayName(), counted(problem->parameters.size(), tr("parameter"), tr("parameters")),
                        counted(problem->conditions.size(), tr("condition"), tr("conditions")),
                        counted(problem->shapes.size(), tr("shape"), tr("shapes"))));
}

void FileOpening::problemFailed(const ProblemError& error) {
    const QString name = QFileInfo(error.file).fileName();
    m_parts.banner->showMessage(ErrorBanner::Level::Error, tr("Could not open %1").arg(name),
                                m_parts.document->failureDetails(error));
    showStatus(tr("Could not open %1").arg(name));
}

void FileOpening::matchShapeToSession() {
    ProblemDocument* document = m_parts.document;
    const auto problem = document->problem();
    if (!problem)
        return;
    if (const auto shape = shapeOfSession(*problem, m_parts.session->session());
        shape && *shape != document->shapeIndex())
        document->setShapeIndex(*shape);
}

void FileOpening::updateTitle() {
    QMainWindow* window = m_parts.window;
    const ProblemDocument* document = m_parts.document;
    const SessionInfo info = m_parts.session->session();
    window->setWindowModified(document->isModified());
    if (m_demo) {
        window->setWindowFilePath(QString());
        window->setWindowTitle(
            tr("%1 — recorded demo session on an %2 — Tilescope")
                .arg(document->hasProblem() ? document->displayName() : QString::fromStdString(info.kernel),
                     QString::fromStdString(info.deviceName.empty() ? std::string(kDemoDevice) : info.deviceName)));
    } else if (document->hasProblem()) {
        window->setWindowFilePath(document->path());
        const QString results =
            m_recordingPath.isEmpty() ? QString() : tr(" · %1").arg(QFileInfo(m_recordingPath).fileName());
        window->setWindowTitle(tr("%1[*]%2 — Tilescope").arg(document->displayName(), results));
    } else if (!m_recordingPath.isEmpty()) {
        window->setWindowTitle(tr("%1 — Tilescope").arg(QFileInfo(m_recordingPath).fileName()));
    } else {
        window->setWindowTitle(tr("Tilescope"));
    }
}

void FileOpening::recordingLoaded() {
    // A file opened, or another session of it shown (a shape of a shape set): then it stays.
    if (m_pendingRecording.isEmpty())
        return;
    m_recordingPath = m_pendingRecording;
    m_pendingRecording.clear();
    m_demo = m_demoPending;
    m_demoPending = false;
    if (!m_demo && !m_recordingPath.isEmpty())
        addRecentFile(m_recordingPath);
    // A database opened where no problem is: the problem its session stored, with the files it
    // was tuned with, so that its parameters, conditions and space are there without its files.
    if (!m_parts.document->hasProblem())
        if (std::shared_ptr<const StoredProblem> stored = m_parts.session->storedProblem())
            m_parts.document->openStored(std::move(stored), QFileInfo(m_recordingPath).fileName());
}

void FileOpening::resultsCleared() {
    m_recordingPath.clear();
    m_pendingRecording.clear();
    m_demo = false;
    m_demoPending = false;
    updateTitle();
}

void FileOpening::runStarted() {
    m_recordingPath.clear();
    m_demo = false;
}

void FileOpening::sessionFailed(const QString& message) {
    if (m_pendingRecording.isEmpty()) {
        // A session that failed with results on screen says so in the verdict above them (and the
        // Run panel): the same words again across the window would take the plot's room.
        const SessionController* session = m_parts.session;
        if (session->session().state == SessionState::Failed && !session->results()->empty()) {
            showStatus(tr("The run stopped: the banner above the heatmap says why"));
            return;
        }
        m_parts.banner->showMessage(ErrorBanner::Level::Error, tr("The run stopped"), message);
        return;
    }
    m_parts.banner->showMessage(ErrorBanner::Level::Error,
                                tr("Could not open %1").arg(QFileInfo(m_pendingRecording).fileName()), message);
    m_pendingRecording.clear();
    m_demoPending = false;
}

QStringList FileOpening::openableFiles(const QMimeData* mime) {
    QStringList files;
    if (!mime || !mime->hasUrls())
        return files;
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && hasOpenableSuffix(url.toLocalFile()))
            files << url.toLocalFile();
    return files;
}

void FileOpening::openDropped(const QStringList& files) {
    // A problem first, then its recording: the recording's shape is matched to the problem.
    QString problem;
    QString recording;
    for (const QString& file : files) {
        if (isRecordingFile(file)) {
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
