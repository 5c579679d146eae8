// The tune use case (core/jobs/tune.h), as the CLI's tune and the workbench's session controller
// run it, on the analysis backend (NVRTC offline) and a Kernel Tuner cache replayed:
//
// - a request on analysis:sm_90 stores a session whose results a ResultStore reads back, each
//   analysed for sm_90, and says so through its events (started, each session's end in words);
// - a shape set is one session per shape, loaded back for the workbench;
// - a resumed run continues its session and hands the results from before to `started`;
// - bad requests are refused before any work, with what is wrong and where, and no database left
//   behind: a backend spec that names none, options for a GPU with another backend, devices given
//   twice, MPI in a program without it, a shape the problem does not have, an objective of
//   energy the analysis backend cannot measure, a run cancelled before its session starts;
// - the CUDA backend's settings from the request (tuneBackendOptions);
// - the race and the profiling of the leaders from the request (tuneSessionOptions, parseRaceMargin):
//   on by default, the race off where energy ranks, every config profiled with all-configs.

#include "jobs/tune.h"

#include "base/error.h"
#include "measure/metricnames.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <set>

using namespace tilescope;

namespace {

const std::string kTiny = TILESCOPE_TEST_DATA "/tuning/tiny.json";
const std::string kTinyCache = TILESCOPE_TEST_DATA "/tuning/tiny_ktcache.json";

} // namespace

class TestTune : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    std::string path(const char* name) const { return m_dir.filePath(QString::fromUtf8(name)).toStdString(); }

    // A request of a few configs of tiny.json on `backend`, compiled through a cache of the test's own.
    TuneRequest request(const std::string& backend, const char* database) const {
        TuneRequest r;
        r.problemPath = kTiny;
        r.backend = backend;
        r.database = path(database);
        r.strategy = "random";
        r.budget = Budget{};
        r.budget->configs = 6;
        r.seed = 3;
        r.cacheDir = path("compile-cache");
        return r;
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void analysisRunStoresASession() {
        const TuneRequest r = request("analysis:sm_90", "analysis.db");
        int started = 0;
        std::string report;
        TuneEvents events;
        events.started = [&](const SessionInfo&, const SessionProgress& p, std::vector<ResultRecord> prior) {
            ++started;
            QCOMPARE(p.done, std::uint64_t(0));
            QVERIFY(prior.empty());
        };
        events.ended = [&](const TuneSessionEnd& end) { report = end.report.text; };
        const TuneOutcome outcome = runTune(r, events);

        QVERIFY(!outcome.cancelled);
        QVERIFY(!outcome.served);
        QCOMPARE(started, 1);
        QVERIFY(outcome.last);
        QCOMPARE(outcome.last->session.state, SessionState::Finished);
        QCOMPARE(outcome.sessions.size(), std::size_t(1));
        QVERIFY2(report.find("Session " + std::to_string(outcome.sessions.front())) != std::string::npos,
                 report.c_str());
        QVERIFY2(report.find("analysis:sm_90") != std::string::npos, report.c_str());

        // What the store reads back: the session, on its backend and arch, and its results.
        const ResultStore store = ResultStore::open(r.database, StoreMode::ReadOnly);
        const std::vector<SessionInfo> sessions = store.sessions();
        QCOMPARE(sessions.size(), std::size_t(1));
        QCOMPARE(sessions.front().id, outcome.sessions.front());
        QCOMPARE(sessions.front().backend, std::string("analysis:sm_90"));
        QCOMPARE(sessions.front().strategy, std::string("random"));
        QCOMPARE(sessions.front().state, SessionState::Finished);
        const std::vector<ResultRecord> results = store.results(sessions.front().id);
        QCOMPARE(results.size(), std::size_t(6));
        std::set<std::string> configs;
        std::size_t analysed = 0;
        for (const ResultRecord& result : results) {
            QVERIFY2(result.status() == ResultStatus::Analysed || result.status() == ResultStatus::Pruned,
                     std::string(statusName(result.status())).c_str());
            if (result.status() == ResultStatus::Analysed) {
                QVERIFY(result.measurement.staticInfo && result.measurement.staticInfo->registers > 0);
                ++analysed;
            }
            configs.insert(configJson(result.config));
        }
        QCOMPARE(configs.size(), std::size_t(6));
        QVERIFY(analysed > 0); // compiled for sm_90 (a config over its shared memory is pruned)
    }

    void shapeSetIsOneSessionPerShape() {
        TuneRequest r = request("analysis:sm_90", "shapes.db");
        r.shapeList = "all";
        r.loadShapeSet = true;
        std::vector<std::string> lines;
        TuneEvents events;
        events.line = [&](const std::string& line) { lines.push_back(line); };
        const TuneOutcome outcome = runTune(r, events);
        QCOMPARE(outcome.sessions.size(), std::size_t(2));
        QCOMPARE(outcome.shapeSet.size(), std::size_t(2));
        QCOMPARE(outcome.shapeSet[0].info.shapeIndex, std::optional<std::int64_t>(0));
        QCOMPARE(outcome.shapeSet[1].info.shapeIndex, std::optional<std::int64_t>(1));
        QVERIFY(!outcome.shapeSet[1].results.empty());
        QVERIFY(!lines.empty()); // which shape is tuned, from what
    }

    void resumeHandsOnTheResultsBefore() {
        TuneRequest r = request("replay:" + kTinyCache, "resume.db");
        r.strategy = "exhaustive";
        r.budget->configs = 10;
        const TuneOutcome first = runTune(r);
        QVERIFY(first.last);
        QCOMPARE(first.last->progress.done, std::uint64_t(10));

        r.resume = true;
        r.budget->configs = 25;
        std::size_t prior = 0;
        TuneEvents events;
        events.started = [&](const SessionInfo&, const SessionProgress&, std::vector<ResultRecord> before) {
            prior = before.size();
        };
        const TuneOutcome second = runTune(r, events);
        QVERIFY(second.last && second.last->resumed);
        QCOMPARE(second.sessions, first.sessions);
        QCOMPARE(prior, std::size_t(10));
        const ResultStore store = ResultStore::open(r.database, StoreMode::ReadOnly);
        QCOMPARE(store.sessions().size(), std::size_t(1));
    }

    void badRequestsAreRefusedBeforeAnyWork_data() {
        QTest::addColumn<QString>("backend");
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("message");
        QTest::newRow("no such backend") << "opencl"
                                         << ""
                                         << "unknown backend 'opencl' (known: cuda, cuda:DEVICES, "
                                            "ssh://USER@HOST/DEVICES, replay:FILE, analysis:ARCH)";
        QTest::newRow("guard without a GPU") << "analysis:sm_90"
                                             << "guard"
                                             << "--guard: --guard is for --backend cuda: it runs configs on a GPU";
        QTest::newRow("devices twice") << "cuda:0"
                                       << "devices"
                                       << "--devices: give the devices once";
        QTest::newRow("mpi without MPI") << "analysis:sm_90"
                                         << "mpi"
                                         << "this tilescope-cli was built without MPI";
        QTest::newRow("no such shape") << "analysis:sm_90"
                                       << "shape"
                                       << "shape 7 does not exist";
        QTest::newRow("energy offline") << "analysis:sm_90"
                                        << "energy"
                                        << "needs each launch's energy, which NVML measures on a GPU";
        QTest::newRow("launcher and ssh") << "ssh://gpu-host/0"
                                          << "launcher"
                                          << "give one way to reach the GPUs";
    }

    void badRequestsAreRefusedBeforeAnyWork() {
        QFETCH(QString, backend);
        QFETCH(QString, change);
        QFETCH(QString, message);
        TuneRequest r = request(backend.toStdString(), "refused.db");
        if (change == "guard")
            r.cuda.guard = true;
        else if (change == "devices")
            r.devices = "1";
        else if (change == "mpi")
            r.mpi = true;
        else if (change == "shape")
            r.shape = 7;
        else if (change == "energy")
            r.objectives = {"energy"};
        else if (change == "launcher")
            r.cuda.launcher = "srun --gres=gpu:1";
        try {
            runTune(r);
            QFAIL("the request ran");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find(message.toStdString()) != std::string::npos, e.what());
        }
        QVERIFY(!std::filesystem::exists(r.database));
    }

    void cancelledBeforeItsSessionStarts() {
        TuneRequest r = request("replay:" + kTinyCache, "cancelled.db");
        const std::atomic<bool> cancel{true};
        r.cancel = &cancel;
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, runTune(r));
        QVERIFY(!std::filesystem::exists(r.database));
    }

    void cudaSettingsFromTheRequest() {
        TuneRequest r = request("cuda:0,1", "unused.db");
        r.cuda.metrics = std::vector<std::string>{"none"};
        r.cuda.context = "warm";
        r.cuda.guard = true;
        r.cuda.verify = false;
        r.seed = 11;
        TuningProblem problem = TuningProblem::load(kTiny);
        problem.objectives = {"time", "energy"}; // the second is measured too
        std::vector<std::string> notes;
        TuneEvents events;
        events.note = [&](const std::string& from, const std::string& text) { notes.push_back(from + text); };
        const BackendSpec spec = parseBackendSpec(r.backend);
        const BackendOptions options = tuneBackendOptions(r, spec, problem, events, "rank 1: ");
        QCOMPARE(options.cuda.metrics, std::vector<std::string>{"energy"}); // the objective measures energy
        QVERIFY(!options.cuda.timing.flushL2);
        QCOMPARE(options.cuda.guard, GuardPolicy::Every);
        QVERIFY(!options.cuda.verify);
        QCOMPARE(options.cuda.seed, std::uint64_t(11));
        QVERIFY(options.cuda.note);
        options.cuda.note("a worker restarted");
        QCOMPARE(notes, std::vector<std::string>{"rank 1: a worker restarted"});

        r.cuda.context = "lukewarm";
        QVERIFY_THROWS_EXCEPTION(InputError, tuneBackendOptions(r, spec, problem, events));
    }

    void raceAndProfilingFromTheRequest() {
        QCOMPARE(parseRaceMargin("5%"), std::optional<double>(0.05));
        QCOMPARE(parseRaceMargin("0.1"), std::optional<double>(0.1));
        QCOMPARE(parseRaceMargin("0"), std::optional<double>(0.0));
        QVERIFY(!parseRaceMargin("off"));
        for (const char* bad : {"", "%", "fast", "5 %", "-1%", "2000%", "nan", "1e400"})
            QVERIFY_THROWS_EXCEPTION(InputError, parseRaceMargin(bad));

        const TuningProblem problem = TuningProblem::load(kTiny);
        const BackendSpec spec = parseBackendSpec("cuda:0");
        TuneRequest r = request("cuda:0", "unused.db");
        SessionOptions o = tuneSessionOptions(r, spec, problem, {});
        QCOMPARE(o.raceMargin, std::optional<double>(0.05));
        QCOMPARE(o.profileTop, std::optional<std::size_t>(5));
        r.raceMargin = 0.2;
        QCOMPARE(tuneSessionOptions(r, spec, problem, {}).raceMargin, std::optional<double>(0.2));
        // A slower config may use less energy: no race where energy ranks, or trades off with time.
        TuningProblem energy = problem;
        energy.objectives = {"time", "energy"};
        QVERIFY(!tuneSessionOptions(r, spec, energy, {}).raceMargin);
        // Every config's counters: asked by the request, or by the word in the metric names.
        r.profileAll = true;
        QVERIFY(!tuneSessionOptions(r, spec, problem, {}).profileTop);
        r.profileAll = false;
        r.cuda.metrics = std::vector<std::string>{"default", "all-configs"};
        QVERIFY(!tuneSessionOptions(r, spec, problem, {}).profileTop);
        r.cuda.metrics = std::vector<std::string>{"all-configs"};
        QVERIFY(!tuneSessionOptions(r, spec, problem, {}).profileTop);
        QCOMPARE(tuneBackendOptions(r, spec, problem, {}).cuda.metrics, defaultMetricNames());
    }
};

QTEST_GUILESS_MAIN(TestTune)
#include "tst_tune.moc"
