// tilescope-cli tune: a tuning session (or a shape set) from the command line. The use case is
// jobs/tune.h (the backend a spec names, the session, the shape set, the store, an MPI job's
// ranks, a cache refreshed); this file maps the options (tuneoptions.cpp) onto its request, shows
// progress on stderr and each session's summary on stdout.

#include "tuneoptions.h"

#include "jobs/tune.h"
#ifdef TILESCOPE_HAVE_MPI
#include "jobs/tunempi.h"
#endif

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>

namespace tilescope::cli {

namespace {

// The session a signal cancels. cancel() only sets an atomic flag, which a handler may do.
std::atomic<TuningSession*> g_session{nullptr};

void cancelSessionOnSignal(int) {
    if (TuningSession* s = g_session.load())
        s->cancel();
}

/// The budget the options give; nullopt: the problem's.
std::optional<Budget> budgetOf(const TuneOptions& opt) {
    Budget budget;
    if (opt.budgetOption->count() > 0)
        budget.configs = opt.budget;
    else if (opt.fractionOption->count() > 0)
        budget.fraction = opt.fraction;
    else if (opt.maxTimeOption->count() > 0)
        budget.seconds = opt.maxTime;
    else
        return std::nullopt;
    return budget;
}

/// The CUDA backend's settings from the command line.
TuneCudaSettings cudaSettingsOf(const TuneOptions& opt) {
    TuneCudaSettings cuda;
    if (opt.metricsOption->count() > 0)
        cuda.metrics = splitList(opt.metrics);
    cuda.verify = !opt.noVerify;
    cuda.guard = opt.guard;
    cuda.sanitize = opt.sanitize;
    cuda.outputs = opt.outputs;
    cuda.sampleSeconds = opt.sampleSeconds;
    cuda.minSamples = opt.minSamples;
    cuda.context = opt.context;
    cuda.launcher = opt.launcher;
    cuda.remoteWorker = opt.remoteWorker;
    cuda.configTimeout = opt.configTimeout;
    return cuda;
}

/// The request the options make; a database's problem (`opened`) is tuned as it stored it.
TuneRequest tuneRequest(const TuneOptions& opt, OpenedProblem& opened) {
    if (!opt.shapes.empty() && opt.shapeOption->count() > 0)
        throw InputError("", "--shapes", "give --shape or --shapes, not both");
    TuneRequest r;
    r.problemPath = opt.problemPath;
    if (opened.stored)
        r.problem = std::make_shared<const TuningProblem>(std::move(opened.problem));
    if (!opt.objective.empty())
        r.objectives = splitList(opt.objective);
    r.shape = opt.shape;
    r.shapeList = opt.shapes;
    r.shapeSet = opt.shapeSet;
    r.backend = opt.backend;
    r.devices = opt.devices;
    r.database = opt.db;
    if (!opt.strategy.empty())
        r.strategy = opt.strategy;
    r.budget = budgetOf(opt);
    r.seed = opt.seed;
    r.resume = opt.resume;
    r.part = opt.part;
    r.confirmTop = opt.confirm;
    r.confirmRounds = opt.confirmRounds;
    r.raceMargin = parseRaceMargin(opt.race);
    r.stopEarly = opt.stopEarly;
    r.keepGoing = opt.keepGoing;
    r.keepGoingOption = "--keep-going";
    r.rankBy = opt.rankBy;
    r.cuda = cudaSettingsOf(opt);
    r.jobs = opt.jobs;
    r.cacheDir = opt.cacheDir;
    r.noCache = opt.noCache;
    r.replayDelay = std::chrono::milliseconds(std::max(0, opt.replayDelayMs));
    r.replayPace = opt.replayPace;
    r.mpi = opt.mpi;
    r.mpiCoordinator = opt.mpiCoordinator;
    r.mpiSilence = opt.mpiSilence;
    r.replaySlots = opt.replaySlots;
#ifdef TILESCOPE_HAVE_MPI
    r.joinCluster = joinMpiJob;
#endif
    r.onlyStale = opt.onlyStale;
    return r;
}

/// What the terminal shows of a run: a progress line per session on stderr, notes and warnings
/// there too, each session's summary and the run's lines on stdout; Ctrl-C cancels the session
/// running.
class TuneScreen {
public:
    explicit TuneScreen(const TuneOptions& opt)
        : m_opt(opt) {}

    TuneEvents events() {
        TuneEvents events;
        events.session.started = [this](const SessionInfo& info, const SessionProgress& p) { started(info, p); };
        events.session.note = [](const std::string& text) {
            std::fprintf(stderr, "note: --resume: %s\n", text.c_str());
        };
        events.session.warning = [this](const LaunchWarning& w) { warn(w); };
        events.session.progress = [this](const SessionProgress& p) {
            if (m_progress)
                m_progress->update(p.done - std::min(p.done, m_priorDone), bestNote(p));
        };
        events.note = [](const std::string& from, const std::string& text) {
            std::fprintf(stderr, "%snote: %s\n", from.c_str(), text.c_str());
        };
        events.line = [](const std::string& line) {
            std::printf("%s\n", line.c_str());
            std::fflush(stdout);
        };
        events.launchWarning = [this](std::size_t, const LaunchWarning& w) { warn(w); };
        events.running = [this](TuningSession* session) { running(session); };
        events.ended = [this](const TuneSessionEnd& end) { ended(end); };
        return events;
    }

private:
    std::string bestNote(const SessionProgress& p) const {
        return p.best ? "best " + bestResultText(*p.best, m_objectiveName, m_opt.rankBy) : std::string();
    }

    void warn(const LaunchWarning& w) const {
        std::fprintf(stderr, "warning: %s: %s: %s\n", m_opt.problemPath.c_str(), w.location.c_str(), w.message.c_str());
    }

    void started(const SessionInfo& info, const SessionProgress& p) {
        m_priorDone = p.done;
        m_objectiveName = info.objectiveName;
        std::string verb = "tuned";
        if (m_priorDone > 0)
            verb = "tuned (resumed; " + formatCount(double(m_priorDone)) + " done before)";
        m_progress = std::make_unique<Progress>(verb, p.total > m_priorDone ? p.total - m_priorDone : 0);
    }

    void running(TuningSession* session) {
        g_session.store(session);
        if (session) {
            m_oldInt = std::signal(SIGINT, cancelSessionOnSignal);
            m_oldTerm = std::signal(SIGTERM, cancelSessionOnSignal);
        } else {
            std::signal(SIGINT, m_oldInt);
            std::signal(SIGTERM, m_oldTerm);
        }
    }

    void ended(const TuneSessionEnd& end) {
        // The progress line's last state: complete only when the session got through its total (a
        // cancelled or timed-out run ends on its last update; the summary says where it stopped).
        const SessionProgress& p = end.summary.progress;
        if (m_progress && p.done + p.counts.of(ResultStatus::Skipped) >= p.total)
            m_progress->finish(bestNote(p));
        std::fputs(end.report.text.c_str(), stdout);
        for (const std::string& warning : end.report.warnings)
            std::fprintf(stderr, "warning: %s\n", warning.c_str());
        for (const std::string& note : end.report.notes)
            std::fprintf(stderr, "note: %s\n", note.c_str());
    }

    const TuneOptions& m_opt;
    std::unique_ptr<Progress> m_progress;
    std::uint64_t m_priorDone = 0;
    std::string m_objectiveName;
    void (*m_oldInt)(int) = SIG_DFL;
    void (*m_oldTerm)(int) = SIG_DFL;
};

} // namespace

int runTune(const TuneOptions& given) {
    OpenedProblem opened; // a database's problem, with its session's options; its files live as long as this
    const TuneOptions opt = resolveTuneOptions(given, opened);
    const TuneRequest request = tuneRequest(opt, opened);
    TuneScreen screen(opt);
    const TuneOutcome outcome = runTune(request, screen.events());
    if (outcome.served)
        return *outcome.served;
    return outcome.cancelled ? 130 : kOk;
}

} // namespace tilescope::cli
