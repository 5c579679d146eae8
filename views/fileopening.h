#pragma once

// Files into the workbench: a problem (T1 JSON) or a recording (T4, Kernel Tuner cache, Tilescope
// database), from the File menu, its dialogs, the recent files, drag and drop or the embedded demo;
// the problem saved back; which recording the results on screen came from, matched to the
// problem's shape and named in the window's title. Errors show in the window's banner, successes
// in its status bar.

#include "problem/problemdocument.h"

#include <QObject>
#include <QString>
#include <QStringList>

class QAction;
class QMainWindow;
class QMenu;
class QMimeData;

namespace tilescope::views {

class ErrorBanner;
class RunPanel;
class SessionController;

/// Whether a file is a recording (rather than a problem): by its first bytes (SQLite and gzip
/// headers, the keys of a T4 file or a Kernel Tuner cache, core's detectRecordingFormat); a file
/// that cannot be read is a problem when it ends in .json.
bool isRecordingFile(const QString& path);
/// Whether `path` is a Tilescope database.
bool isDatabaseFile(const QString& path);

/// Opens, saves and remembers the window's files; see the top of this file.
class FileOpening : public QObject {
    Q_OBJECT
public:
    /// The window's parts it opens files into.
    struct Parts {
        QMainWindow* window = nullptr;
        ProblemDocument* document = nullptr;
        SessionController* session = nullptr;
        RunPanel* runPanel = nullptr; ///< the demo replays its recording
        ErrorBanner* banner = nullptr;
        QAction* cancelAction = nullptr; ///< named when a run keeps a recording from opening
    };

    /// `persistent`: recent files are kept in QSettings.
    FileOpening(Parts parts, bool persistent, QObject* parent = nullptr);

    /// The File menu's entries for opening (Open, New Problem from Kernel, Open Recording, Open
    /// Recent) and saving (Save Problem, Save Problem As), with a separator between.
    void addActions(QMenu* file);

    /// See MainWindow::openProblem, openRecording, openFile, openDemo, saveProblemAs, saveProblem,
    /// newProblemFromKernel.
    bool openProblem(const QString& path, ProblemDocument::Origin origin = ProblemDocument::Origin::File);
    bool openRecording(const QString& path);
    bool openFile(const QString& path);
    bool openDemo(const QString& folder);
    bool saveProblemAs(const QString& path, ProblemError* error = nullptr);
    bool saveProblem();
    bool newProblemFromKernel(const QString& kernelPath);
    /// With unsaved edits, asks whether to save them; false when the user cancels.
    bool keepChangesSafe();
    /// Asks for the T1 problem of the recording shown, starting in the recording's folder.
    void openProblemForRecording();

    /// The problems and recordings opened, newest first.
    QStringList recentFiles() const { return m_recentFiles; }
    void addRecentFile(const QString& path);

    /// The recording the results on screen came from ("" none, or the results of a run).
    QString recordingPath() const { return m_recordingPath; }
    /// The results on screen are the embedded demo recording's.
    bool isDemo() const { return m_demo; }

    /// A problem opened: it joins the recent files, the status bar says what it holds, and the banner
    /// says when its kernel cannot be compiled here.
    void problemOpened();

    /// Recorded results of the open problem's kernel at one of its shapes: the problem looks at that
    /// shape, so that the space (and the cross-GPU analysis) is the recording's.
    void matchShapeToSession();
    /// The window's title: the problem (modified or not) and the recording, or the demo.
    void updateTitle();

    /// The controller showed a recording: the one being opened (if any) becomes the one on screen.
    void recordingLoaded();
    /// The results were put away (SessionController::cleared): no recording is on screen.
    void resultsCleared();
    /// A run started: its results are no file's.
    void runStarted();
    /// The controller failed: shows why in the banner, as an opening or a run that stopped.
    void sessionFailed(const QString& message);

    /// The local files among dropped ones that might be problems or recordings.
    static QStringList openableFiles(const QMimeData* mime);
    /// Opens dropped files: a problem first, then a recording (matched to the problem's shape).
    void openDropped(const QStringList& files);

signals:
    /// A recording is being read off the GUI thread.
    void readingRecording(const QString& fileName);

private:
    void openDialog();
    void openRecordingDialog();
    void saveAsDialog();
    void rebuildRecentMenu();
    void showStatus(const QString& text) const;
    void problemFailed(const ProblemError& error);

    Parts m_parts;
    bool m_persistent;
    QMenu* m_recentMenu = nullptr;
    QStringList m_recentFiles;
    QString m_recordingPath;    // the recording on screen ("" none, or the results of a run)
    QString m_pendingRecording; // being read
    bool m_demo = false;
    bool m_demoPending = false;
};

} // namespace tilescope::views
