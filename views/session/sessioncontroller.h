#pragma once

// Runs the tune use case (jobs/tune.h, as the CLI's tune does) on a worker thread and turns its
// events into signals on the GUI thread, at most 10 times a second, so that a run of 40,000
// results a second cannot flood the views.
//
// Threads: the session runs on a thread of its own (a BackgroundTask, as all the views' work off
// the GUI thread), which opens its own ResultStore connection (SQLite connections stay on the
// thread that opened them) and owns the backend and the compile service. Its events append to worker-side storage under
// a mutex (chunks that never move, so a reader copies them without holding the lock). A QTimer on the GUI thread ticks
// every 100 ms: it emits the newest progress and best, drains the run log, and, when results arrived, asks a helper
// thread to copy them into a new immutable vector (the snapshot), which the GUI thread then emits. One copy is in
// flight at a time, and the next waits three times as long as the last took, so a large session publishes less often
// instead of piling copies up (100,000 results: see bench_results). The snapshot replaced is released on
// the helper thread too. On Linux the session thread (and the compile threads it starts) and the copies run at nice 5,
// so that a replay running flat out yields the cores to the GUI thread. cancel() only sets an atomic flag; the
// destructor cancels and waits.

#include "common/backgroundtask.h"
#include "session/sessiontypes.h"

#include "exchange/detection.h"
#include "jobs/tune.h"
#include "model/records.h"
#include "spec/tuningproblem.h"
#include "tuner/storedproblem.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class QTimer;

namespace tilescope::views {

class SessionController : public QObject {
    Q_OBJECT
public:
    struct Request {
        std::shared_ptr<const TuningProblem> problem;
        /// "replay:/path/rec.t4.json.gz", "cuda:0" or "cuda:0,1", "analysis:sm_90" (TuneRequest::backend).
        QString backend;
        /// Shape, strategy, seed, budget (as given: an unlimited one is the whole space; the run
        /// panel starts from the problem's T1 Budget), resume, the final round (confirmTop,
        /// confirmRounds), stopOnSystematicFailure and rankBy: the request's (TuneRequest); the
        /// backend's label and arch come from `backend`.
        SessionOptions options;
        /// For cuda: CUPTI metric names, expanded (expandMetricNames); empty = none.
        std::vector<std::string> metrics;
        /// A shape set (two shapes or more): one session per shape into the one database, as `tune
        /// --shapes` runs them (core/tuner/shapesetrun.h); options.shapeIndex is then unused. Empty:
        /// options.shapeIndex alone.
        ShapeSetOptions shapeSet;
        /// The results database (created when missing, with its folder).
        QString databasePath;
        /// Testing aid for replays: wall time per config (ReplayOptions::delay).
        std::chrono::milliseconds replayDelay{0};
    };

    /// The snapshot rate's floor: publications are at least this far apart.
    static constexpr std::chrono::milliseconds kPublishInterval{100};

    explicit SessionController(QObject* parent = nullptr);
    /// Cancels the run and waits for it (the backend stops after the results in hand).
    ~SessionController() override;

    /// Runs a TuningSession on a worker thread. Emits started(), then snapshots and progress,
    /// then finished() or failed(). Ignored (with a log message) while a run or a load is in
    /// progress. Replaces the current results once the session has started. A shape set runs its
    /// sessions one after the other (each started() replaces the results with its own), then
    /// emits recordingSessions() with them after finished(), to be browsed as a recording is.
    void start(Request request);
    /// Asks the run to stop after the results in hand (resumable). Callable from any thread, but
    /// not concurrently with start() (which runs on the GUI thread).
    void cancel();
    /// True from start() until finished() or failed() has been emitted.
    bool isRunning() const { return m_running; }
    /// True while openRecording() is reading.
    bool isLoading() const { return m_loading; }

    /// Opens a recording (T4, Kernel Tuner cache, or a Tilescope database: its newest session
    /// with results) for browsing without tuning: reads it off the GUI thread, then emits
    /// snapshot() once and loaded(), or failed(). Only the newest request counts.
    void openRecording(const QString& path);
    /// Shows another session of the recording opened last (a shape of a shape set): emits
    /// snapshot() and loaded() as openRecording() does. False (nothing changes) when there is no
    /// such session, or while a run or a load is in progress.
    bool showSession(std::int64_t sessionId);

    /// Puts the results away (a problem that has none yet, such as one proposed for a new
    /// kernel): the recording is forgotten, a recording being read is dropped, and recordingSessions()
    /// (null), snapshot() (empty) and cleared() are emitted. False, and nothing changes, while a run
    /// is in progress.
    bool clear();

    /// The problem the database opened last stored for the session it showed first, with the
    /// files it was tuned with (StoredProblem: whether or not they are still where they were);
    /// null for another recording, a session of imported results, or after clear().
    std::shared_ptr<const StoredProblem> storedProblem() const { return m_storedProblem; }

    /// The latest snapshot (never null; empty before any results).
    ResultsSnapshot results() const { return m_results; }
    /// The session's parameter names in order.
    std::vector<std::string> parameterNames() const { return m_session.parameters; }
    /// "TFLOP/s"; "" = time only.
    std::string objectiveName() const { return m_session.objectiveName; }
    /// The session being run or browsed (its id is 0 for a recording that was not a database).
    SessionInfo session() const { return m_session; }
    /// The latest progress of the run (default before any).
    const SessionProgress& progress() const { return m_progress; }
    /// The recorded device's arch ("sm_90"), or the analysis arch; "" unknown.
    std::string arch() const { return m_session.arch; }

signals:
    /// The session has started (after the backend opened): "session 3: replay of rec.t4.json.gz, ...".
    void started(const QString& description);
    /// The results so far: coalesced, at most 10 per second, the last one complete before finished().
    void snapshot(tilescope::views::ResultsSnapshot results);
    /// Coalesced likewise.
    void progressed(const tilescope::SessionProgress& progress);
    /// A better result than any before (coalesced: the newest best of each tick).
    void newBest(const tilescope::ResultRecord& best);
    /// Notes and errors for the run log, one line each (compile errors included).
    void logMessage(const QString& text);
    /// The same lines with their kind and config (a compile error carries its NVRTC log).
    void logEntry(const tilescope::views::RunLogEntry& entry);
    /// The run ended: finished, cancelled (summary.session.state says which) or out of budget.
    void finished(const tilescope::SessionSummary& summary);
    /// The run or the load could not go on: a bad request, a recording of another problem, no
    /// driver, a database that cannot be written.
    void failed(const QString& message);
    /// openRecording() is done (after its snapshot): "rec.t4.json.gz: T4, kernel sgemm, 2,761 results".
    void loaded(const QString& description);
    /// clear() put the results away.
    void cleared();
    /// isRunning() changed.
    void runningChanged(bool running);
    /// openRecording() read these sessions (all of the recording, before its snapshot): a shape
    /// set when they are of one kernel at several shapes. Null when a run starts.
    void recordingSessions(std::shared_ptr<const std::vector<tilescope::SessionData>> sessions);

private:
    struct Shared;
    struct RunEnd;

    static std::shared_ptr<RunEnd> runWorker(const std::shared_ptr<Shared>& shared, const Request& request);
    void onTick();
    void pullState(bool publish);
    void requestPublish();
    void applyPublished(std::uint64_t sequence, ResultsSnapshot results);
    void onRunEnded(std::shared_ptr<RunEnd> end);
    void emitLog(const RunLogEntry& entry);
    void setRunning(bool running);
    void present(std::size_t index); // session `index` of m_recording becomes the one shown

    std::shared_ptr<Shared> m_shared; // the worker's side, guarded by its mutex
    QTimer* m_timer = nullptr;
    bool m_running = false;
    bool m_loading = false;
    bool m_runStarted = false;                        // the run in hand started a session (m_session is its)
    bool m_publishing = false;                        // a snapshot copy is in flight
    std::chrono::steady_clock::time_point m_nextCopy; // no copy starts before (3 x the last copy's cost after it)
    std::uint64_t m_appliedSequence = 0;
    std::int64_t m_lastBestId = -1;
    std::uint64_t m_lastProgressSerial = 0;
    std::uint64_t m_logTaken = 0; // log entries taken from the worker's side of this run

    ResultsSnapshot m_results;
    SessionInfo m_session;
    SessionProgress m_progress;
    std::shared_ptr<const std::vector<SessionData>> m_recording; // the sessions of the recording opened last
    QString m_recordingPath;
    RecordingFormat m_recordingFormat = RecordingFormat::Unknown;
    std::shared_ptr<const StoredProblem> m_storedProblem; // the database's problem of its first session shown

    BackgroundTask m_run{this};      // the session
    BackgroundTask m_copies{this};   // snapshot copies, one at a time
    BackgroundTask m_releases{this}; // snapshots replaced, freed off the GUI thread
    BackgroundTask m_loads{this};    // recordings being read: the newest counts
};

} // namespace tilescope::views
