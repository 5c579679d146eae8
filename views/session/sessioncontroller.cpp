#include "session/sessioncontroller.h"

#include "common/format.h"

#include "exchange/detection.h"
#include "exchange/recording.h"
#include "jobs/tune.h"

#include <nlohmann/json.hpp>

#include <QFileInfo>
#include <QTimer>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace tilescope::views {

namespace {

// Results are kept in chunks that never reallocate, so that a snapshot copy reads them without
// holding the lock while the worker appends.
constexpr std::size_t kChunkSize = 4096;
// Run-log entries emitted per tick at most; a larger backlog is summarised in one line.
constexpr std::size_t kMaxLogPerTick = 100;

// The session, the compile threads it starts (they inherit it) and the snapshot copies yield to
// the GUI thread when the cores are busy: a replay runs flat out, and the window must not stutter.
void yieldToGui() {
#ifdef __linux__
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
#endif
}

QString statusCountsText(const StatusCounts& counts) {
    QStringList parts;
    for (const ResultStatus s : kAllStatuses)
        if (counts.of(s) > 0)
            parts << QStringLiteral("%1 %2").arg(qs(std::string(statusName(s))), formatCount(counts.of(s)));
    return parts.isEmpty() ? QStringLiteral("none") : parts.join(QStringLiteral(", "));
}

QString backendDescription(const SessionInfo& info) {
    const auto provenance = nlohmann::json::parse(info.provenanceJson, nullptr, false);
    if (provenance.is_object() && provenance.contains("backend") && provenance["backend"].is_string())
        return qs(provenance["backend"].get<std::string>());
    return qs(info.backend);
}

QString describeStart(const SessionInfo& info, const SessionProgress& progress) {
    QString text = QStringLiteral("Session %1: %2").arg(info.id).arg(qs(info.kernel));
    if (info.shapeIndex)
        text += QStringLiteral(", shape %1 (%2)").arg(*info.shapeIndex).arg(qs(info.shapeLabel()));
    text += QStringLiteral(" on %1; %2, seed %3, budget: %4")
                .arg(backendDescription(info), qs(info.strategy))
                .arg(info.seed)
                .arg(info.budget.empty() ? QStringLiteral("the whole space") : qs(info.budget));
    if (progress.done > 0)
        text += QStringLiteral("; resumed with %1 configs done").arg(formatCount(progress.done));
    return text;
}

std::vector<std::string> parameterNamesOf(const SessionData& data) {
    if (!data.info.parameters.empty())
        return data.info.parameters;
    std::vector<std::string> names;
    if (!data.results.empty())
        for (const auto& [name, value] : data.results.front().config)
            names.push_back(name);
    return names;
}

} // namespace

// The worker's side: written by the session thread, read by the GUI thread and the copier.
struct SessionController::Shared {
    std::mutex mutex;

    // Results, in arrival order
    std::vector<std::unique_ptr<std::vector<ResultRecord>>> chunks;
    std::size_t count = 0;
    std::vector<std::size_t> dropped; // positions of Skipped placeholders a later result replaced
    std::uint64_t serial = 0;         // bumps with every change of the results
    // A shape set's earlier sessions' chunks: a copy in flight may still read them, so they live as long as this.
    std::vector<std::unique_ptr<std::vector<ResultRecord>>> retired;

    // State for the ticks
    struct Start {
        SessionInfo info;
        SessionProgress progress;
        std::uint64_t serial = 0;  // of the results when it started: copies from before are stale
        std::uint64_t logMark = 0; // log entries pushed before it
    };
    std::vector<Start> starts; // sessions started since the last tick (a shape set's come one after another)
    std::uint64_t logPushed = 0;
    SessionProgress progress;
    std::uint64_t progressSerial = 0;
    std::optional<ResultRecord> best;
    std::deque<RunLogEntry> log;

    // Cancellation
    std::atomic<bool> cancel{false};
    TuningSession* session = nullptr; // while run() runs

    // Worker only (no lock): prior Skipped results by config key, which a result of this run replaces
    std::unordered_map<std::string, std::size_t> placeholders;

    // Called with the lock held.
    void appendLocked(ResultRecord record) {
        if (chunks.empty() || chunks.back()->size() == kChunkSize) {
            auto chunk = std::make_unique<std::vector<ResultRecord>>();
            chunk->reserve(kChunkSize);
            chunks.push_back(std::move(chunk));
        }
        chunks.back()->push_back(std::move(record));
        ++count;
        ++serial;
    }

    void append(ResultRecord record) {
        std::optional<std::size_t> replaced;
        if (!placeholders.empty()) {
            const auto it = placeholders.find(configKey(record.config));
            if (it != placeholders.end()) {
                replaced = it->second;
                placeholders.erase(it);
            }
        }
        std::lock_guard lock(mutex);
        if (replaced)
            dropped.push_back(*replaced);
        appendLocked(std::move(record));
    }

    // A stored result measured again: the new record takes the old one's place (moved to the end).
    void update(ResultRecord record) {
        std::lock_guard lock(mutex);
        std::size_t position = 0;
        for (const auto& chunk : chunks) {
            for (const ResultRecord& r : *chunk) {
                if (r.id == record.id && std::find(dropped.begin(), dropped.end(), position) == dropped.end()) {
                    dropped.push_back(position);
                    appendLocked(std::move(record));
                    return;
                }
                ++position;
            }
        }
    }

    // Called with the lock held when a session starts: its results replace the previous session's
    // (the next shape of a shape set).
    void restartLocked() {
        for (auto& chunk : chunks)
            retired.push_back(std::move(chunk));
        chunks.clear();
        count = 0;
        dropped.clear();
        placeholders.clear();
        ++serial;
    }

    void pushLog(RunLogEntry entry) {
        std::lock_guard lock(mutex);
        log.push_back(std::move(entry));
        ++logPushed;
    }

    // A new immutable vector of the results so far. Copies outside the lock: the elements it
    // reads are complete (published under the lock) and never move or change.
    std::pair<std::uint64_t, ResultsSnapshot> copyResults() {
        std::vector<std::pair<const ResultRecord*, std::size_t>> spans;
        std::vector<std::size_t> skip;
        std::uint64_t at = 0;
        std::size_t total = 0;
        {
            std::lock_guard lock(mutex);
            spans.reserve(chunks.size());
            for (const auto& chunk : chunks)
                spans.emplace_back(chunk->data(), chunk->size());
            skip = dropped;
            at = serial;
            total = count;
        }
        std::sort(skip.begin(), skip.end());
        auto out = std::make_shared<std::vector<ResultRecord>>();
        out->reserve(total - std::min(total, skip.size()));
        std::size_t position = 0;
        auto nextSkip = skip.begin();
        for (const auto& [data, size] : spans) {
            for (std::size_t i = 0; i < size; ++i, ++position) {
                if (nextSkip != skip.end() && *nextSkip == position) {
                    ++nextSkip;
                    continue;
                }
                out->push_back(data[i]);
            }
        }
        return {at, std::move(out)};
    }

    // The run's events into this (the session thread's side). Called while the run lasts only.
    TuneEvents tuneEvents() {
        TuneEvents events;
        events.started = [this](const SessionInfo& info, const SessionProgress& p, std::vector<ResultRecord> prior) {
            // A resumed session's earlier results belong to the snapshot too.
            std::lock_guard lock(mutex);
            restartLocked();
            for (ResultRecord& r : prior) {
                if (r.status() == ResultStatus::Skipped)
                    placeholders.emplace(configKey(r.config), count);
                appendLocked(std::move(r));
            }
            starts.push_back({info, p, serial, logPushed});
            progress = p;
            ++progressSerial;
            best = p.best;
        };
        events.session.result = [this](const ResultRecord& r) {
            logFailure(r);
            append(r);
        };
        events.session.newBest = [this](const ResultRecord& r) {
            std::lock_guard lock(mutex);
            best = r;
        };
        events.session.updated = [this](const ResultRecord& r) { update(r); };
        events.session.progress = [this](const SessionProgress& p) {
            std::lock_guard lock(mutex);
            progress = p;
            ++progressSerial;
        };
        events.session.warning = [this](const LaunchWarning& w) {
            pushLog({RunLogEntry::Kind::Note, QStringLiteral("warning: %1").arg(qs(w.message)), QString(),
                     qs(w.location + ": " + w.message)});
        };
        events.session.note = [this](const std::string& text) { // "Resume" found no session to continue
            pushLog({RunLogEntry::Kind::Note, QStringLiteral("Resume: %1").arg(qs(text)), {}, {}});
        };
        // events.session.error: run() rethrows the error, and the run's end reports it once.
        events.note = [this](const std::string&, const std::string& text) {
            pushLog({RunLogEntry::Kind::Note, qs(text), {}, {}});
        };
        events.line = [this](const std::string& line) { pushLog({RunLogEntry::Kind::Note, qs(line), {}, {}}); };
        events.running = [this](TuningSession* running) {
            std::lock_guard lock(mutex);
            session = running;
            if (session && cancel.load())
                session->cancel();
        };
        return events;
    }

    // A config that failed, in the run log (a compile error with its log).
    void logFailure(const ResultRecord& r) {
        const ResultStatus status = r.status();
        if (status == ResultStatus::CompileError) {
            pushLog(
                {RunLogEntry::Kind::CompileError,
                 QStringLiteral("compile error: %1: %2").arg(qs(describeConfig(r.config)), qs(r.measurement.message)),
                 qs(configJson(r.config)), qs(r.log.empty() ? r.measurement.message : r.log)});
        } else if (status != ResultStatus::Ok && status != ResultStatus::Pruned && status != ResultStatus::Skipped &&
                   status != ResultStatus::Analysed) {
            pushLog(
                {RunLogEntry::Kind::ConfigFailure,
                 QStringLiteral("%1: %2: %3")
                     .arg(qs(std::string(statusName(status))), qs(describeConfig(r.config)), qs(r.measurement.message)),
                 qs(configJson(r.config)), qs(r.measurement.message)});
        }
    }
};

// How a run ended, handed from the worker to the GUI thread.
struct SessionController::RunEnd {
    std::optional<SessionSummary> summary;
    QString error;
    std::uint64_t serial = 0;
    ResultsSnapshot results;
    std::shared_ptr<std::vector<SessionData>> sessions; // a shape set's, as stored (null: one session)
    QString databasePath;
};

SessionController::SessionController(QObject* parent)
    : QObject(parent)
    , m_shared(std::make_shared<Shared>())
    , m_timer(new QTimer(this))
    , m_results(std::make_shared<const std::vector<ResultRecord>>()) {
    qRegisterMetaType<ResultsSnapshot>("tilescope::views::ResultsSnapshot");
    qRegisterMetaType<RunLogEntry>("tilescope::views::RunLogEntry");
    qRegisterMetaType<ResultRecord>("tilescope::ResultRecord");
    qRegisterMetaType<SessionProgress>("tilescope::SessionProgress");
    qRegisterMetaType<SessionSummary>("tilescope::SessionSummary");
    m_timer->setInterval(kPublishInterval);
    connect(m_timer, &QTimer::timeout, this, &SessionController::onTick);
}

SessionController::~SessionController() {
    cancel();
    m_run.stop();
    m_copies.stop();
    m_releases.stop();
    m_loads.stop();
}

void SessionController::start(Request request) {
    if (m_running || m_loading) {
        emitLog({RunLogEntry::Kind::Error,
                 m_running ? QStringLiteral("A session is running: cancel it before starting another")
                           : QStringLiteral("A recording is loading: start again once it is open"),
                 {},
                 {}});
        return;
    }
    if (!request.problem) {
        emit failed(QStringLiteral("No problem to tune"));
        return;
    }
    m_shared = std::make_shared<Shared>(); // a copy of the previous run's results may still read the old one
    m_appliedSequence = 0;
    m_nextCopy = {};
    m_lastBestId = -1;
    m_lastProgressSerial = 0;
    m_logTaken = 0;
    m_progress = {};
    m_runStarted = false;
    m_recording.reset(); // the run's results replace the recording's: showSession() has nothing to show
    emit recordingSessions(m_recording);
    setRunning(true);
    m_timer->start();
    // The run's end arrives once the worker has released the store, the backend and the compile service.
    m_run.start([shared = m_shared, request = std::move(request)]() { return runWorker(shared, request); },
                [this](std::shared_ptr<RunEnd> end) { onRunEnded(std::move(end)); });
}

void SessionController::cancel() {
    const std::shared_ptr<Shared> shared = m_shared;
    shared->cancel.store(true);
    std::lock_guard lock(shared->mutex);
    if (shared->session)
        shared->session->cancel();
}

std::shared_ptr<SessionController::RunEnd> SessionController::runWorker(const std::shared_ptr<Shared>& shared,
                                                                        const Request& request) {
    yieldToGui();
    auto end = std::make_shared<RunEnd>();
    try {
        // The tune use case, as the CLI's tune runs it: the Run panel's choices are its request.
        TuneRequest tune;
        tune.problem = request.problem;
        tune.backend = request.backend.toStdString();
        tune.database = request.databasePath.toStdString();
        tune.makeDatabaseFolder = true;
        tune.shape = request.options.shapeIndex;
        tune.shapeSet = request.shapeSet;
        tune.strategy = request.options.strategy;
        tune.budget = request.options.budget; // as given: an unlimited one is the whole space
        tune.seed = request.options.seed;
        tune.resume = request.options.resume;
        tune.confirmTop = request.options.confirmTop;
        tune.confirmRounds = request.options.confirmRounds;
        tune.keepGoing = !request.options.stopOnSystematicFailure;
        tune.rankBy = request.options.rankBy;
        tune.cuda.metrics = request.metrics;
        tune.replayDelay = request.replayDelay;
        tune.loadShapeSet = true; // the Shapes panel shows them at the end
        tune.cancel = &shared->cancel;
        TuneOutcome outcome = runTune(tune, shared->tuneEvents());
        end->summary = std::move(outcome.last);
        if (!outcome.shapeSet.empty()) {
            end->sessions = std::make_shared<std::vector<SessionData>>(std::move(outcome.shapeSet));
            for (SessionData& session : *end->sessions)
                session.info.parameters = parameterNamesOf(session);
            end->databasePath = request.databasePath;
        }
    } catch (const std::exception& e) {
        end->error = qs(e.what());
    }
    std::tie(end->serial, end->results) = shared->copyResults();
    return end;
}

void SessionController::onTick() {
    pullState(true);
}

void SessionController::pullState(bool publish) {
    const std::shared_ptr<Shared> shared = m_shared;
    std::vector<Shared::Start> starts;
    std::deque<RunLogEntry> entries;
    std::optional<SessionProgress> newProgress;
    std::optional<ResultRecord> best;
    bool resultsChanged = false;
    {
        std::lock_guard lock(shared->mutex);
        starts.swap(shared->starts);
        entries.swap(shared->log);
        if (shared->progressSerial != m_lastProgressSerial) {
            m_lastProgressSerial = shared->progressSerial;
            newProgress = shared->progress;
        }
        if (shared->best && shared->best->id != m_lastBestId) {
            m_lastBestId = shared->best->id;
            best = shared->best;
        }
        resultsChanged = shared->serial != m_appliedSequence;
    }
    // The log and the sessions started, in the order they came (the notes of a shape set before its
    // next session); at most kMaxLogPerTick lines, a larger backlog summarised in one.
    std::size_t next = 0;
    std::size_t shown = 0;
    std::size_t compileErrorsHidden = 0;
    auto emitUpTo = [&](std::size_t end) {
        for (; next < std::min(end, entries.size()); ++next) {
            if (shown < kMaxLogPerTick) {
                emitLog(entries[next]);
                ++shown;
            } else {
                compileErrorsHidden += entries[next].kind == RunLogEntry::Kind::CompileError;
            }
        }
    };
    for (const Shared::Start& start : starts) {
        emitUpTo(static_cast<std::size_t>(start.logMark - m_logTaken));
        m_session = start.info;
        m_runStarted = true;
        m_appliedSequence = std::max(m_appliedSequence, start.serial); // a copy of the session before is stale
        m_results = std::make_shared<const std::vector<ResultRecord>>();
        const QString description = describeStart(start.info, start.progress);
        emit started(description);
        emitLog({RunLogEntry::Kind::Note, description, {}, {}});
    }
    emitUpTo(entries.size());
    m_logTaken += entries.size();
    if (entries.size() > shown)
        emitLog({RunLogEntry::Kind::Note,
                 QStringLiteral("… %1 more lines (%2 compile errors) not shown: the results table lists every "
                                "config with its status")
                     .arg(formatCount(std::uint64_t(entries.size() - shown)),
                          formatCount(std::uint64_t(compileErrorsHidden))),
                 {},
                 {}});
    if (newProgress) {
        m_progress = *newProgress;
        emit progressed(m_progress);
    }
    if (best)
        emit newBest(*best);
    if (publish && resultsChanged)
        requestPublish();
}

void SessionController::requestPublish() {
    if (m_publishing || std::chrono::steady_clock::now() < m_nextCopy)
        return;
    m_publishing = true;
    m_copies.start(
        [shared = m_shared]() {
            yieldToGui();
            const auto begin = std::chrono::steady_clock::now();
            std::pair<std::uint64_t, ResultsSnapshot> copy = shared->copyResults();
            return std::make_pair(std::chrono::steady_clock::now() - begin, std::move(copy));
        },
        [this, shared = m_shared](auto copied) {
            const auto& [cost, copy] = copied;
            m_publishing = false;
            // Copies take a quarter of a core at most: a large session publishes less often.
            m_nextCopy = std::chrono::steady_clock::now() + 3 * cost;
            if (shared == m_shared)
                applyPublished(copy.first, copy.second);
        });
}

void SessionController::applyPublished(std::uint64_t sequence, ResultsSnapshot results) {
    if (sequence <= m_appliedSequence)
        return;
    m_appliedSequence = sequence;
    ResultsSnapshot previous = std::exchange(m_results, std::move(results));
    emit snapshot(m_results);
    // The views have moved on to the new snapshot: the old one is (most likely) only ours now.
    // Freeing tens of thousands of records takes milliseconds: not on the GUI thread.
    if (previous && previous->size() > 256)
        m_releases.start([previous = std::move(previous)]() mutable { previous.reset(); });
}

void SessionController::onRunEnded(std::shared_ptr<RunEnd> end) {
    m_timer->stop();
    pullState(false); // started, the last progress and best, the log
    applyPublished(end->serial, end->results);
    if (end->summary) {
        const SessionSummary& summary = *end->summary;
        m_session = summary.session;
        m_progress = summary.progress;
        emit progressed(m_progress);
        emitLog({RunLogEntry::Kind::Note,
                 QStringLiteral("Session %1 %2: %3. Results: %4 of %5 configs (%6) in %7")
                     .arg(summary.session.id)
                     .arg(qs(std::string(sessionStateName(summary.session.state))),
                          qs(summary.confirmation.empty() ? summary.stopReason
                                                          : summary.stopReason + "; " + summary.confirmation),
                          formatCount(summary.progress.done), formatCount(summary.progress.total),
                          statusCountsText(summary.progress.counts), formatDuration(summary.progress.elapsedSeconds)),
                 {},
                 {}});
        // Why configs that ran do not rank: times that cannot be right, outputs that differ by a parameter.
        if (!summary.implausible.empty())
            emitLog({RunLogEntry::Kind::Note, QStringLiteral("Implausible: %1").arg(qs(summary.implausible)), {}, {}});
        if (!summary.verification.empty())
            emitLog(
                {RunLogEntry::Kind::Note, QStringLiteral("Verification: %1").arg(qs(summary.verification)), {}, {}});
        setRunning(false);
        emit finished(summary);
        if (end->sessions) {
            // A shape set: browsed as its database would be once opened.
            m_recordingPath = end->databasePath;
            m_recordingFormat = RecordingFormat::TilescopeDatabase;
            m_recording = std::move(end->sessions);
            emit recordingSessions(m_recording);
        }
    } else {
        if (m_runStarted) {
            // The session on screen failed, as its database now says: its verdict says so too.
            m_session.state = SessionState::Failed;
            m_session.message = end->error.toStdString();
        }
        emitLog({RunLogEntry::Kind::Error, end->error, {}, {}});
        setRunning(false);
        emit failed(end->error);
    }
}

void SessionController::emitLog(const RunLogEntry& entry) {
    emit logEntry(entry);
    emit logMessage(entry.text);
}

void SessionController::setRunning(bool running) {
    if (m_running == running)
        return;
    m_running = running;
    emit runningChanged(running);
}

namespace {

// "rec.db: Tilescope database, kernel hgemm, M=1 N=14336 K=4096 on NVIDIA H200, 152 results".
QString describeSession(const QString& path, RecordingFormat format, const SessionInfo& info, std::size_t results) {
    QString description = QStringLiteral("%1: %2").arg(QFileInfo(path).fileName(), qs(recordingFormatName(format)));
    if (!info.kernel.empty())
        description += QStringLiteral(", kernel %1").arg(qs(info.kernel));
    if (!info.shape.empty())
        description += QStringLiteral(", %1").arg(qs(info.shapeLabel()));
    if (!info.deviceName.empty())
        description += QStringLiteral(" on %1").arg(qs(info.deviceName));
    description += QStringLiteral(", %1 results").arg(formatCount(std::uint64_t(results)));
    return description;
}

} // namespace

void SessionController::openRecording(const QString& path) {
    if (m_running) {
        emitLog({RunLogEntry::Kind::Error,
                 QStringLiteral("A session is running: cancel it before opening a recording"),
                 {},
                 {}});
        return;
    }
    m_loading = true;
    struct Loaded {
        QString error;
        RecordingFormat format = RecordingFormat::Unknown;
        std::shared_ptr<std::vector<SessionData>> sessions;
        std::size_t chosen = 0;
        std::shared_ptr<const StoredProblem> problem; // a database's, of the chosen session
    };
    m_loads.start(
        [path]() {
            Loaded read;
            read.sessions = std::make_shared<std::vector<SessionData>>();
            try {
                const std::filesystem::path file = path.toStdString();
                read.format = detectRecordingFormat(file);
                *read.sessions = readRecording(file);
                std::vector<SessionData>& sessions = *read.sessions;
                if (sessions.empty())
                    read.error = QStringLiteral("%1: the recording holds no session").arg(path);
                // The newest session with results (a database lists its sessions oldest first).
                read.chosen = sessions.empty() ? 0 : sessions.size() - 1;
                for (std::size_t i = sessions.size(); i-- > 0;)
                    if (!sessions[i].results.empty()) {
                        read.chosen = i;
                        break;
                    }
                for (SessionData& s : sessions)
                    s.info.parameters = parameterNamesOf(s);
                // The problem the session stored, for the window to open where none is open; a
                // problem that cannot be read back leaves the results as a recording's.
                if (read.format == RecordingFormat::TilescopeDatabase && !sessions.empty() &&
                    !sessions[read.chosen].info.problemJson.empty()) {
                    try {
                        read.problem = StoredProblem::open(file, sessions[read.chosen].info.id);
                    } catch (const std::exception&) {
                    }
                }
            } catch (const std::exception& e) {
                read.error = qs(e.what());
            }
            return read;
        },
        [this, path](const Loaded& read) {
            m_loading = false;
            if (!read.error.isEmpty()) {
                emit failed(read.error);
                return;
            }
            m_recordingPath = path;
            m_recordingFormat = read.format;
            m_recording = read.sessions;
            m_storedProblem = read.problem;
            emit recordingSessions(m_recording);
            present(read.chosen);
        });
}

bool SessionController::clear() {
    if (m_running)
        return false;
    if (m_loading) {
        m_loads.supersede(); // its delivery is dropped
        m_loading = false;
    }
    m_recording.reset();
    m_recordingPath.clear();
    m_recordingFormat = RecordingFormat::Unknown;
    m_storedProblem.reset();
    m_session = {};
    m_progress = {};
    ResultsSnapshot previous = std::exchange(m_results, std::make_shared<const std::vector<ResultRecord>>());
    emit recordingSessions(nullptr);
    emit snapshot(m_results);
    emit cleared();
    if (previous && previous->size() > 256)
        m_releases.start([previous = std::move(previous)]() mutable { previous.reset(); });
    return true;
}

bool SessionController::showSession(std::int64_t sessionId) {
    if (m_running || m_loading || !m_recording)
        return false;
    for (std::size_t i = 0; i < m_recording->size(); ++i)
        if ((*m_recording)[i].info.id == sessionId) {
            present(i);
            return true;
        }
    return false;
}

void SessionController::present(std::size_t index) {
    const SessionData& chosen = (*m_recording)[index];
    m_session = chosen.info;
    m_progress = {};
    m_results = std::make_shared<const std::vector<ResultRecord>>(chosen.results);
    QString description = describeSession(m_recordingPath, m_recordingFormat, chosen.info, chosen.results.size());
    if (m_recording->size() > 1)
        description += QStringLiteral(" (session %1 of %2)").arg(chosen.info.id).arg(m_recording->size());
    emit snapshot(m_results);
    emit loaded(description);
}

} // namespace tilescope::views
