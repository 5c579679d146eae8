// Tuning sessions end to end in the engine: replay, budgets, events, cancellation, failure,
// resume, the per-config cap, and the compile -> prune -> measure pipeline with real NVRTC.

#include "analysis/gpuarch.h"
#include "analysis/verificationsplit.h"
#include "base/error.h"
#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "exchange/configcodec.h"
#include "exchange/kerneltunercache.h"
#include "measure/metricnames.h"
#include "measure/replay/replaybackend.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/objective.h"
#include "tuner/resume.h"
#include "tuner/tuningsession.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>

using namespace tilescope;

namespace {

const std::string kTiny = TILESCOPE_TEST_DATA "/tuning/tiny.json";
const std::string kTinyCache = TILESCOPE_TEST_DATA "/tuning/tiny_ktcache.json";

// A backend that answers from a formula, counts what it is asked, and fails on request.
class FakeBackend : public Backend {
public:
    BackendInfo info;
    std::vector<std::uint64_t> measured;
    std::vector<std::size_t> batches;
    std::vector<bool> hadCubins;
    std::vector<std::vector<std::string>> compiledArchs; // per measured item, the archs of its compiles
    std::vector<const CompileResult*> sm80Cubins;        // per measured item, compiledFor("sm_80")
    long throwAfter = -1;
    std::map<std::uint64_t, double> luckyFirst; // index -> the time its first measurement gives
    std::map<std::uint64_t, double> trueTime;   // index -> its time, in place of timeOf
    double noise = 0;                           // relative log-normal jitter of kept samples
    std::mt19937_64 rng{7};
    std::vector<int> samplesAsked; // per measure() call: MeasureControl::samplesPerConfig
    // Per measure() call: MeasureControl's race bound and profiling bound as the call began.
    std::vector<std::pair<double, double>> bounds;
    std::function<bool(const Config&)> wrong; // configs whose outputs differ
    std::vector<Metric> wrongMetrics;         // what the check of a wrong config's outputs found
    // Configs that still differ when verified within groups (MeasureControl::verifyWithin); unset: none.
    std::function<bool(const Config&)> wrongWithinGroups;
    std::vector<std::vector<std::size_t>> verifyWithinAsked; // per measure() call
    bool reseedable = false;
    std::optional<std::uint64_t> reseeded;
    std::function<bool(const Config&)> wrongOnSecondInputs;              // after reseed()
    std::map<std::uint64_t, std::pair<ResultStatus, std::string>> fails; // index -> its failure
    int opened = 0;
    int closed = 0;
    // Counters: a config profiled (MeasureControl's bounds say so) gets kCounter, its time.
    bool countsCounters = false;
    std::optional<DeviceState> state; // each measurement's GPU state, when set
    static constexpr const char* kCounter = "sm__cycles_elapsed.avg";
    std::vector<bool> countersOnlyAsked; // per measure() call

    FakeBackend() {
        info.kind = "fake";
        info.deviceName = "Fake GPU";
        info.preferredBatch = 8;
    }

    static double timeOf(std::uint64_t index) {
        return 1.0 + static_cast<double>((index * 7919) % 10007) / 1000.0; // distinct for index < 10007
    }

    BackendInfo open(const TuningProblem&, std::size_t, const ConfigSpace&) override {
        ++opened;
        return info;
    }
    void measure(std::span<const MeasureItem> items, const MeasureControl& control, const MeasureSink& sink) override {
        batches.push_back(items.size());
        samplesAsked.push_back(control.samplesPerConfig);
        bounds.emplace_back(control.slowerThanMs, control.profileUnderMs);
        verifyWithinAsked.push_back(control.verifyWithin);
        countersOnlyAsked.push_back(control.countersOnly);
        for (std::size_t i = 0; i < items.size(); ++i) {
            Measurement m;
            if (control.cancel && control.cancel->load()) {
                m.status = ResultStatus::Skipped;
                m.message = "cancelled";
                sink(i, m);
                continue;
            }
            if (throwAfter >= 0 && static_cast<long>(measured.size()) == throwAfter)
                throw std::runtime_error("the device fell off the bus");
            const bool again = std::find(measured.begin(), measured.end(), items[i].index) != measured.end();
            measured.push_back(items[i].index);
            hadCubins.push_back(items[i].compiled() && !items[i].compiled()->cubin.empty());
            std::vector<std::string> archs;
            for (const ArchCompile& c : items[i].compiles)
                archs.push_back(c.arch);
            compiledArchs.push_back(archs);
            sm80Cubins.push_back(items[i].compiledFor("sm_80"));
            m.status = ResultStatus::Ok;
            double t = trueTime.count(items[i].index) ? trueTime[items[i].index] : timeOf(items[i].index);
            if (const auto lucky = luckyFirst.find(items[i].index); lucky != luckyFirst.end() && !again)
                t = lucky->second;
            m.time = {t, t * 0.99, t * 1.02, t * 0.01, 10};
            if (control.keepSamples && control.samplesPerConfig > 0) {
                std::normal_distribution<double> jitter(0.0, noise);
                for (int k = 0; k < control.samplesPerConfig; ++k)
                    m.samplesMs.push_back(t * std::exp(jitter(rng)));
            }
            m.benchmarkSeconds = 0.05;
            m.device = 0;
            m.deviceState = state;
            const bool profiled = control.countersOnly || control.profileUnderMs == 0 ||
                                  (control.profileUnderMs > 0 && t <= control.profileUnderMs);
            if (countsCounters && profiled && control.samplesPerConfig == 0) {
                m.metrics.push_back({kCounter, t});
                m.parts.profiled = 1;
            }
            const bool isWrong = !control.verifyWithin.empty()
                                     ? wrongWithinGroups && wrongWithinGroups(items[i].config)
                                     : (wrong && wrong(items[i].config)) ||
                                           (reseeded && wrongOnSecondInputs && wrongOnSecondInputs(items[i].config));
            if (isWrong) {
                m.status = ResultStatus::WrongResult;
                m.verificationError = 1;
                m.message = "argument 'out': element 3 is 1, expected 2";
                m.metrics = wrongMetrics;
            }
            if (const auto f = fails.find(items[i].index); f != fails.end()) {
                m.status = f->second.first;
                m.message = f->second.second;
            }
            sink(i, m);
        }
    }
    void close() override { ++closed; }
    bool reseed(std::uint64_t seed) override {
        if (!reseedable)
            return false;
        reseeded = seed;
        return true;
    }
};

struct Recorder {
    int started = 0;
    int finished = 0;
    int progress = 0;
    std::vector<ResultRecord> results;
    std::vector<ResultRecord> bests;
    std::vector<std::string> errors;
    std::function<void(const ResultRecord&)> onResult;

    SessionEvents events() {
        SessionEvents e;
        e.started = [this](const SessionInfo&, const SessionProgress&) { ++started; };
        e.result = [this](const ResultRecord& r) {
            results.push_back(r);
            if (onResult)
                onResult(r);
        };
        e.newBest = [this](const ResultRecord& r) { bests.push_back(r); };
        e.progress = [this](const SessionProgress&) { ++progress; };
        e.finished = [this](const SessionSummary&) { ++finished; };
        e.error = [this](const std::string& what) { errors.push_back(what); };
        return e;
    }
};

std::string dbPath(const QTemporaryDir& dir, const char* name = "r.db") {
    return dir.filePath(name).toStdString();
}

// The space indices of a session's results, in the order they were stored.
std::vector<std::uint64_t> indicesOf(const ResultStore& store, std::int64_t session) {
    std::vector<std::uint64_t> out;
    for (const ResultRecord& r : store.results(session))
        out.push_back(r.spaceIndex.value_or(~std::uint64_t(0)));
    return out;
}

} // namespace

class TestTuner : public QObject {
    Q_OBJECT

    TuningProblem m_tiny = TuningProblem::load(kTiny);

private slots:
    void confirmationMeasuresTheBestAgain() {
        // A config whose first measurement was a lucky sample wins the search; measured again with
        // the two runners-up, it falls back, and the stored results keep the new timings.
        const ConfigSpace space = ConfigSpace::build(m_tiny);
        std::uint64_t trueBest = 0;
        for (std::uint64_t i = 0; i < space.size(); ++i)
            if (FakeBackend::timeOf(i) < FakeBackend::timeOf(trueBest))
                trueBest = i;
        const std::uint64_t lucky = trueBest == 0 ? 1 : 0;
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        FakeBackend backend;
        backend.luckyFirst[lucky] = FakeBackend::timeOf(trueBest) / 2;
        Recorder rec;
        std::vector<ResultRecord> updated;
        SessionEvents events = rec.events();
        events.updated = [&](const ResultRecord& r) { updated.push_back(r); };
        SessionOptions options;
        options.confirmTop = 3;
        options.compile = SessionOptions::Compile::Never;
        TuningSession session(m_tiny, backend, store, options, events);
        const SessionSummary summary = session.run();

        // The final round: 5 rounds of the 3 (SessionOptions' default), each a fixed count of samples.
        QCOMPARE(backend.measured.size(), std::size_t(space.size() + 3 * 5));
        QCOMPARE(backend.samplesAsked.back(), 10);
        QCOMPARE(summary.remeasured.size(), std::size_t(3));
        QCOMPARE(updated.size(), std::size_t(3));
        // The first of the three re-measured is the lucky one; the new winner is the true best.
        QCOMPARE(backend.measured[space.size()], lucky);
        QVERIFY(summary.progress.best);
        QCOMPARE(summary.progress.best->spaceIndex.value_or(~0ULL), trueBest);
        QCOMPARE(summary.remeasured.front().result.spaceIndex.value_or(~0ULL), trueBest);
        QVERIFY2(summary.confirmation.find("lucky") != std::string::npos, summary.confirmation.c_str());
        for (const Remeasurement& x : summary.remeasured) {
            QVERIFY(x.failure.empty());
            const std::uint64_t index = x.result.spaceIndex.value_or(~0ULL);
            QCOMPARE(x.result.timeMs(), FakeBackend::timeOf(index));
            QCOMPARE(x.firstMs, index == lucky ? FakeBackend::timeOf(trueBest) / 2 : FakeBackend::timeOf(index));
        }
        // The store holds one result per config, the re-measured ones with their new timing.
        const auto stored = store.results(summary.session.id);
        QCOMPARE(stored.size(), std::size_t(space.size()));
        for (const ResultRecord& r : stored)
            QCOMPARE(r.timeMs(), FakeBackend::timeOf(r.spaceIndex.value_or(0)));
        QCOMPARE(store.best(summary.session.id)->spaceIndex.value_or(~0ULL), trueBest);
        QVERIFY(store.session(summary.session.id)->message.find("lucky") != std::string::npos);

        // A replay answers the recorded numbers again: nothing is re-measured.
        ReplayBackend replay(kTinyCache);
        SessionOptions replayOptions;
        replayOptions.confirmTop = 3;
        replayOptions.backendLabel = "replay:tiny_ktcache.json";
        TuningSession replayed(m_tiny, replay, store, replayOptions);
        const SessionSummary replaySummary = replayed.run();
        QVERIFY(replaySummary.remeasured.empty());
        QVERIFY(replaySummary.confirmation.empty());
    }

    // The race and the profiling of the leaders follow the results so far: each batch after the
    // first is told to stop sampling a config clearly above the best (its median 5 % above the
    // upper end of the best's interval) and to profile only those at or under the 5th best time
    // (none, until 20 have a time); off, every config is sampled and profiled fully.
    void raceAndProfilingFollowTheBest() {
        const ConfigSpace space = ConfigSpace::build(m_tiny);
        QVERIFY(space.size() > 16); // several batches of 8
        for (const bool on : {true, false}) {
            QTemporaryDir dir;
            ResultStore store = ResultStore::open(dbPath(dir));
            FakeBackend backend;
            Recorder rec;
            SessionOptions options;
            options.compile = SessionOptions::Compile::Never;
            if (!on) {
                options.raceMargin.reset();
                options.profileTop.reset();
            }
            TuningSession session(m_tiny, backend, store, options, rec.events());
            session.run();
            QVERIFY(backend.bounds.size() >= 3);
            QCOMPARE(backend.bounds.front(), (std::pair<double, double>{0.0, on ? -1.0 : 0.0})); // no best yet
            std::size_t seen = 0;
            for (std::size_t call = 1; call < backend.bounds.size(); ++call) {
                seen += backend.batches[call - 1];
                std::vector<double> times;
                for (std::size_t k = 0; k < seen; ++k)
                    times.push_back(FakeBackend::timeOf(backend.measured[k]));
                std::sort(times.begin(), times.end());
                const auto [race, profile] = backend.bounds[call];
                if (on) {
                    // The fake's interval: none (0), so the median is the upper end.
                    QCOMPARE(race, times.front() * 1.05);
                    QCOMPARE(profile, times.size() >= 20 ? times[4] : -1.0);
                } else {
                    QCOMPARE(race, 0.0);
                    QCOMPARE(profile, 0.0);
                }
            }
        }
    }

    // After the search (and its final round) the best five that have no counters get theirs, in
    // one call of their own; the configs among the first 20 timed got none during the search.
    // Without counters asked for, or with every config's, there is no such call.
    void theLeadersAreProfiledAfterTheSearch() {
        const ConfigSpace space = ConfigSpace::build(m_tiny);
        QVERIFY(space.size() > 30);
        for (const int variant : {0, 1, 2}) { // counters of the leaders, none asked for, every config's
            QTemporaryDir dir;
            ResultStore store = ResultStore::open(dbPath(dir));
            FakeBackend backend;
            backend.countsCounters = true;
            Recorder rec;
            SessionOptions options;
            options.compile = SessionOptions::Compile::Never;
            options.confirmTop = 3;
            if (variant != 1)
                options.counterNames = {FakeBackend::kCounter};
            if (variant == 2)
                options.profileTop.reset();
            TuningSession session(m_tiny, backend, store, options, rec.events());
            const SessionSummary summary = session.run();
            const std::size_t afterwards = static_cast<std::size_t>(
                std::count(backend.countersOnlyAsked.begin(), backend.countersOnlyAsked.end(), true));
            auto hasCounter = [](const ResultRecord& r) {
                return std::any_of(r.measurement.metrics.begin(), r.measurement.metrics.end(),
                                   [](const Metric& m) { return m.name == FakeBackend::kCounter; });
            };
            const std::vector<ResultRecord> ranked = store.results(summary.session.id, true);
            QVERIFY(ranked.size() == space.size());
            if (variant != 0) {
                QCOMPARE(afterwards, std::size_t(0));
                continue;
            }
            QCOMPARE(afterwards, std::size_t(1));
            QVERIFY(backend.countersOnlyAsked.back());
            for (std::size_t k = 0; k < 5; ++k) // the best five have counters, with their own values
                QVERIFY2(hasCounter(ranked[k]), describeConfig(ranked[k].config).c_str());
            // Of the first 20 configs timed, only those among the best five have counters.
            const ConfigCodec codec(space);
            std::vector<std::uint64_t> bestFive;
            for (std::size_t k = 0; k < 5; ++k)
                bestFive.push_back(*spaceIndexOf(ranked[k], space, codec));
            std::size_t withCounters = 0;
            for (const ResultRecord& r : ranked)
                withCounters += hasCounter(r) ? 1 : 0;
            QVERIFY2(withCounters < space.size() / 2, std::to_string(withCounters).c_str());
            for (std::size_t k = 0; k < 20; ++k) {
                const std::uint64_t index = backend.measured[k];
                const auto r = std::find_if(ranked.begin(), ranked.end(), [&](const ResultRecord& x) {
                    return spaceIndexOf(x, space, codec) == index;
                });
                QVERIFY(r != ranked.end());
                const bool top = std::find(bestFive.begin(), bestFive.end(), index) != bestFive.end();
                QCOMPARE(hasCounter(*r), top);
            }
            QVERIFY(summary.pipeline && summary.pipeline->parts.profiled >= 1);
        }
    }

    // Asked for (gpu-state), each result keeps the GPU state its backend read as metrics; not
    // asked for, the state only feeds the session's range.
    void gpuStateKeptPerResult() {
        for (const bool asked : {true, false}) {
            QTemporaryDir dir;
            ResultStore store = ResultStore::open(dbPath(dir));
            FakeBackend backend;
            backend.state = DeviceState{1980, 2619, 44, 0, 0, 0};
            Recorder rec;
            SessionOptions options;
            options.compile = SessionOptions::Compile::Never;
            options.gpuStateMetrics = asked;
            TuningSession session(m_tiny, backend, store, options, rec.events());
            const SessionSummary summary = session.run();
            const std::vector<ResultRecord> results = store.results(summary.session.id);
            QVERIFY(!results.empty());
            for (const ResultRecord& r : results) {
                const auto t = std::find_if(r.measurement.metrics.begin(), r.measurement.metrics.end(),
                                            [](const Metric& m) { return m.name == kTemperatureMetric; });
                QCOMPARE(t != r.measurement.metrics.end(), asked);
                if (asked)
                    QCOMPARE(t->value, 44.0);
            }
        }
    }

    void implausibleTimesNeverWin() {
        // The device's copy runs at 4,000 GB/s, so writing the tiny problem's 4 MiB output takes
        // at least half of 1.05 us. Two configs claim less (a kernel that returns early): they are
        // implausible, never the best, never measured again in the final round.
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        FakeBackend backend;
        backend.info.provenanceJson = R"({"devices": [{"name": "Fake GPU", "copy_gbps": 4000}]})";
        backend.trueTime = {{0, 0.0001}, {1, 0.0004}, {2, 0.5}};
        SessionOptions options;
        options.confirmTop = 3;
        options.compile = SessionOptions::Compile::Never;
        Recorder rec;
        TuningSession session(m_tiny, backend, store, options, rec.events());
        const SessionSummary summary = session.run();
        const std::uint64_t space = ConfigSpace::build(m_tiny).size();

        QCOMPARE(summary.progress.counts.of(ResultStatus::Implausible), std::uint64_t(2));
        QVERIFY(summary.progress.best);
        QCOMPARE(summary.progress.best->spaceIndex, std::optional<std::uint64_t>(2));
        for (const ResultRecord& b : rec.bests)
            QVERIFY(b.spaceIndex != std::optional<std::uint64_t>(0) && b.spaceIndex != std::optional<std::uint64_t>(1));
        QCOMPARE(backend.measured.size(), std::size_t(space + 3 * 5));
        for (std::size_t k = space; k < backend.measured.size(); ++k)
            QVERIFY(backend.measured[k] > 1);
        for (const Remeasurement& x : summary.remeasured)
            QVERIFY(x.result.ok());
        std::map<std::uint64_t, ResultRecord> byIndex;
        for (const ResultRecord& r : store.results(summary.session.id))
            byIndex[r.spaceIndex.value_or(~0ULL)] = r;
        const ResultRecord& fastest = byIndex.at(0);
        QCOMPARE(fastest.status(), ResultStatus::Implausible);
        QCOMPARE(fastest.timeMs(), 0.0001); // the time stays, to see
        QVERIFY(!fastest.objective);
        QCOMPARE(fastest.measurement.message,
                 std::string("0.0001 ms is below 0.0005243 ms, half the time its outputs take to write at the measured "
                             "copy bandwidth 4,000 GB/s: 4 MiB in 'y'; a kernel that returns early or writes nothing "
                             "looks like this"));
        QCOMPARE(byIndex.at(1).status(), ResultStatus::Implausible);
        QCOMPARE(store.best(summary.session.id)->spaceIndex, std::optional<std::uint64_t>(2));
        QVERIFY2(summary.implausible.rfind("2 configs ran faster than physics allows and never rank (the fastest, " +
                                               describeConfig(fastest.config) + ": 0.0001 ms is below",
                                           0) == 0,
                 summary.implausible.c_str());

        // Without a bandwidth (no copy measured, a device of no known peak) nothing is judged.
        FakeBackend unknown;
        unknown.trueTime = {{0, 0.0001}};
        SessionOptions again = options;
        again.confirmTop = 0;
        again.seed = 1;
        TuningSession blind(m_tiny, unknown, store, again);
        const SessionSummary blindSummary = blind.run();
        QCOMPARE(blindSummary.progress.counts.of(ResultStatus::Implausible), std::uint64_t(0));
        QCOMPARE(blindSummary.progress.best->spaceIndex, std::optional<std::uint64_t>(0));
        QVERIFY(blindSummary.implausible.empty());
    }

    void aReplayedTooFastConfigIsImplausible() {
        // A Kernel Tuner cache recorded on an H200 (no copy measured: the H200's peak, from a
        // table) in which two configs claim times no kernel writing 4 MiB reaches.
        std::ifstream in(kTinyCache);
        nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
        std::vector<std::string> faked;
        for (auto it = doc["cache"].begin(); it != doc["cache"].end() && faked.size() < 2; ++it)
            if (it.value()["time"].is_number()) {
                it.value()["time"] = 0.0002;
                it.value()["times"] = {0.0002, 0.0002, 0.0002};
                faked.push_back(it.key());
            }
        QTemporaryDir dir;
        const std::string cache = dir.filePath("fast.json").toStdString();
        std::ofstream(cache) << doc.dump();
        ResultStore store = ResultStore::open(dbPath(dir));
        ReplayBackend replay(cache);
        SessionOptions options;
        options.backendLabel = "replay:fast.json";
        TuningSession session(m_tiny, replay, store, options);
        const SessionSummary summary = session.run();
        QCOMPARE(summary.progress.counts.of(ResultStatus::Implausible), std::uint64_t(2));
        for (const ResultRecord& r : store.results(summary.session.id)) {
            const bool fake = std::find(faked.begin(), faked.end(), configKey(r.config)) != faked.end();
            QCOMPARE(r.status() == ResultStatus::Implausible, fake);
            if (fake)
                QVERIFY2(r.measurement.message.find("at the NVIDIA H200's peak memory bandwidth 4,800 GB/s (from a "
                                                    "table: no copy was measured): 4 MiB in 'y'") != std::string::npos,
                         r.measurement.message.c_str());
        }
        QVERIFY(summary.progress.best);
        QVERIFY(summary.progress.best->timeMs() > 0.001);
        QVERIFY(std::find(faked.begin(), faked.end(), configKey(summary.progress.best->config)) == faked.end());
    }

    void wrongResultsSplitByAParameter() {
        // Every config with BLOCK = 32 matches the reference and every other differs, but each
        // agrees with the first config of its own BLOCK: the session verifies them again within the
        // groups of BLOCK and says so, and they stay wrong_result (a kernel wrong for BLOCK != 32
        // the same way each time would agree too); the summary says how the problem tells which.
        const ConfigSpace space = ConfigSpace::build(m_tiny);
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        FakeBackend backend;
        backend.wrong = [&](const Config& c) { return space.value(c, 0).i != 32; };
        SessionOptions options;
        options.compile = SessionOptions::Compile::Never;
        TuningSession session(m_tiny, backend, store, options);
        const SessionSummary summary = session.run();
        QVERIFY2(summary.verification.find("split by BLOCK: every config with BLOCK = 32 matches, every other does "
                                           "not") != std::string::npos,
                 summary.verification.c_str());
        QVERIFY2(summary.verification.find("agree with their group: either the kernel's outputs depend on BLOCK") !=
                     std::string::npos,
                 summary.verification.c_str());
        QVERIFY2(summary.verification.find("\"VerifyWithin\": [\"BLOCK\"]") != std::string::npos,
                 summary.verification.c_str());
        QVERIFY(summary.verification.find("--no-verify") == std::string::npos);
        QVERIFY(std::any_of(backend.verifyWithinAsked.begin(), backend.verifyWithinAsked.end(),
                            [](const std::vector<std::size_t>& v) { return v == std::vector<std::size_t>{0}; }));
        const std::uint64_t wrong = summary.progress.counts.of(ResultStatus::WrongResult);
        QVERIFY(wrong > 3);
        QCOMPARE(store.statusCounts(summary.session.id).of(ResultStatus::WrongResult), wrong);
        for (const ResultRecord& r : store.results(summary.session.id))
            if (r.status() == ResultStatus::WrongResult)
                QVERIFY2(r.measurement.message.find("it agrees with the first config with BLOCK = ") !=
                             std::string::npos,
                         r.measurement.message.c_str());
        QVERIFY(recordedVerdict(summary.session.provenanceJson, "verification") == summary.verification);

        // Some still differ within their groups: wrong, and the summary says so.
        FakeBackend partly;
        partly.wrong = backend.wrong;
        partly.wrongWithinGroups = [&](const Config& c) { return space.value(c, 0).i == 64; };
        SessionOptions second = options;
        second.seed = 3;
        TuningSession session3(m_tiny, partly, store, second);
        const SessionSummary s3 = session3.run();
        QVERIFY2(s3.verification.find("still differ") != std::string::npos, s3.verification.c_str());
        QVERIFY(s3.progress.counts.of(ResultStatus::WrongResult) > 0);

        // The configs that differ leave elements unwritten: wrong, not verified again.
        FakeBackend unwritten;
        unwritten.wrong = backend.wrong;
        unwritten.wrongMetrics = {{kVerifyUnwritten, 1024}};
        SessionOptions third = options;
        third.seed = 4;
        TuningSession session4(m_tiny, unwritten, store, third);
        const SessionSummary s4 = session4.run();
        QVERIFY2(s4.verification.find("leave elements unwritten that the reference config writes") != std::string::npos,
                 s4.verification.c_str());
        QVERIFY(std::all_of(unwritten.verifyWithinAsked.begin(), unwritten.verifyWithinAsked.end(),
                            [](const std::vector<std::size_t>& v) { return v.empty(); }));
        QVERIFY(s4.progress.counts.of(ResultStatus::WrongResult) > 3);

        // Wrong results that no parameter explains: what is wrong with them.
        FakeBackend scattered;
        scattered.wrong = [&](const Config& c) { return (space.indexOf(c).value_or(0) * 7919) % 5 == 0; };
        SessionOptions other = options;
        other.seed = 1;
        TuningSession session2(m_tiny, scattered, store, other);
        const std::string verdict = session2.run().verification;
        QVERIFY2(verdict.find("computed wrong results") != std::string::npos, verdict.c_str());
        QVERIFY(verdict.find("split by") == std::string::npos);
    }

    void secondInputSetCatchesALuckyKernel() {
        // The best config is right only on the first inputs: the final round verifies the best
        // again on a second input set, and it is stored as wrong_result, never the winner.
        const ConfigSpace space = ConfigSpace::build(m_tiny);
        std::uint64_t trueBest = 0;
        for (std::uint64_t i = 0; i < space.size(); ++i)
            if (FakeBackend::timeOf(i) < FakeBackend::timeOf(trueBest))
                trueBest = i;
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        FakeBackend backend;
        backend.reseedable = true;
        backend.wrongOnSecondInputs = [&](const Config& c) { return space.indexOf(c) == trueBest; };
        SessionOptions options;
        options.compile = SessionOptions::Compile::Never;
        options.confirmTop = 3;
        TuningSession session(m_tiny, backend, store, options);
        const SessionSummary summary = session.run();
        QVERIFY(backend.reseeded.has_value());
        QVERIFY2(summary.secondInputs.find("1 of the best 3 configs are wrong on a second input set") !=
                     std::string::npos,
                 summary.secondInputs.c_str());
        QVERIFY(summary.progress.best);
        QVERIFY(ConfigCodec(space).indexOf(summary.progress.best->config) != trueBest);
        QCOMPARE(store.statusCounts(summary.session.id).of(ResultStatus::WrongResult), std::uint64_t(1));
        QVERIFY(recordedVerdict(summary.session.provenanceJson, "second_inputs") == summary.secondInputs);

        // Without a Random fill the backend cannot reseed: nothing is said.
        FakeBackend fixed;
        SessionOptions other = options;
        other.seed = 2;
        TuningSession session2(m_tiny, fixed, store, other);
        QVERIFY(session2.run().secondInputs.empty());
    }

    void messagesLoseControlBytes() {
        // A compile error's message began with a NUL byte; a worker's may hold any byte. What is
        // stored and what the events carry is clean.
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        FakeBackend backend;
        backend.fails[0] = {ResultStatus::LaunchError,
                            std::string(1, '\0') + "ptxas error\x07: uses too much shared data\r\n" + '\0'};
        Recorder rec;
        SessionOptions options;
        options.compile = SessionOptions::Compile::Never;
        options.budget.configs = 4;
        TuningSession session(m_tiny, backend, store, options, rec.events());
        const SessionSummary summary = session.run();
        const std::string clean = "ptxas error : uses too much shared data";
        bool seen = false;
        for (const ResultRecord& r : rec.results)
            if (r.spaceIndex == std::optional<std::uint64_t>(0)) {
                QCOMPARE(r.measurement.message, clean);
                seen = true;
            }
        QVERIFY(seen);
        for (const ResultRecord& r : store.results(summary.session.id))
            if (r.spaceIndex == std::optional<std::uint64_t>(0))
                QCOMPARE(r.measurement.message, clean);
    }

    void finalRoundInterleavesAndPoolsSamples() {
        // Three configs lead the space: two 0.2 % apart, the third 5 % behind, timed with 1 %
        // jitter. The final round measures them round robin, pools 5 x 10 samples each, and says
        // the first two cannot be told apart and the third can.
        const ConfigSpace space = ConfigSpace::build(m_tiny);
        QVERIFY(space.size() > 3);
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        FakeBackend backend;
        backend.trueTime = {{0, 0.5}, {1, 0.501}, {2, 0.525}};
        backend.noise = 0.01;
        SessionOptions options;
        options.confirmTop = 3;
        options.compile = SessionOptions::Compile::Never;
        TuningSession session(m_tiny, backend, store, options);
        const SessionSummary summary = session.run();

        // Round robin: round r starts with the r-th of the three.
        const std::size_t s0 = space.size();
        QCOMPARE(backend.measured.size(), s0 + 15);
        for (std::size_t r = 0; r < 5; ++r)
            for (std::size_t k = 0; k < 3; ++k)
                QCOMPARE(backend.measured[s0 + 3 * r + k], backend.measured[s0 + (k + r) % 3]);
        QCOMPARE(summary.remeasured.size(), std::size_t(3));
        std::map<std::uint64_t, const Remeasurement*> byIndex;
        for (const Remeasurement& x : summary.remeasured) {
            byIndex[x.result.spaceIndex.value_or(~0ULL)] = &x;
            const TimingStats& t = x.result.measurement.time;
            QCOMPARE(x.rounds, std::size_t(5));
            QCOMPARE(t.samples, 50);
            QVERIFY(t.hasInterval());
            QVERIFY(t.ciHighMs > t.ciLowMs);
            QVERIFY(t.minMs <= t.ciLowMs && t.ciHighMs <= t.maxMs);
            // The pooled median is close to the true time (1 % jitter, 50 samples).
            const double truth = backend.trueTime.at(x.result.spaceIndex.value_or(0));
            QVERIFY2(std::abs(t.medianMs / truth - 1) < 0.01, std::to_string(t.medianMs).c_str());
        }
        QCOMPARE(byIndex.size(), std::size_t(3));
        QVERIFY(byIndex[0]->indistinguishable);
        QVERIFY(byIndex[1]->indistinguishable);
        QVERIFY(!byIndex[2]->indistinguishable);
        QVERIFY(summary.remeasured.back().result.spaceIndex == std::optional<std::uint64_t>(2));
        QVERIFY2(summary.confirmation.find("interleaved in 5 rounds") != std::string::npos,
                 summary.confirmation.c_str());
        QVERIFY2(summary.confirmation.find("1 of the others cannot be told apart") != std::string::npos,
                 summary.confirmation.c_str());
        // The store keeps the pooled timing with its interval.
        for (const ResultRecord& r : store.results(summary.session.id, true, 3))
            QCOMPARE(r.measurement.time.samples, 50);
    }

    void replayExhaustiveFindsTheRecordedBest() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        ReplayBackend backend(kTinyCache);
        Recorder rec;
        SessionOptions options;
        options.backendLabel = "replay:tiny_ktcache.json";
        TuningSession session(m_tiny, backend, store, options, rec.events());
        const SessionSummary summary = session.run();

        // The recording's best, computed here from the file.
        const std::string text = [] {
            std::ifstream in(kTinyCache);
            return std::string(std::istreambuf_iterator<char>(in), {});
        }();
        const SessionData recording = parseKernelTunerCache(text, kTinyCache);
        const auto recordedBest = bestOf(recording.results);
        QVERIFY(recordedBest);
        QVERIFY(summary.progress.best);
        QCOMPARE(configJson(summary.progress.best->config), configJson(recordedBest->config));
        QCOMPARE(summary.progress.best->timeMs(), recordedBest->timeMs());
        QVERIFY(summary.progress.best->objective); // GB/s, from the problem's objective
        QCOMPARE(*summary.progress.best->objective, 8.0 * 1048576 / (recordedBest->timeMs() * 1e-3) / 1e9);

        const ConfigSpace space = ConfigSpace::build(m_tiny);
        QCOMPARE(summary.session.state, SessionState::Finished);
        QCOMPARE(summary.progress.total, space.size());
        QCOMPARE(summary.progress.counts.total, space.size());
        QCOMPARE(summary.progress.counts.of(ResultStatus::Skipped), std::uint64_t(4)); // absent from the recording
        QCOMPARE(summary.progress.done, space.size() - 4);
        QVERIFY2(summary.stopReason.find("every config") != std::string::npos, summary.stopReason.c_str());
        QCOMPARE(summary.session.deviceName, std::string("NVIDIA H200"));
        QCOMPARE(summary.session.strategy, std::string("exhaustive"));
        QCOMPARE(summary.session.objectiveName, std::string("GB/s"));
        QCOMPARE(summary.session.spaceSize, space.size());
        QVERIFY(!summary.session.problemHash.empty());
        QVERIFY(!summary.session.sourceHash.empty());
        QVERIFY(summary.session.provenanceJson.find("replayed_from") != std::string::npos);
        // The recorded cost of what was replayed: compile + benchmark of every result.
        double cost = 0;
        for (const ResultRecord& r : recording.results)
            cost += r.measurement.compileSeconds + r.measurement.benchmarkSeconds;
        QVERIFY(std::abs(summary.progress.recordedSeconds - cost) < 1e-6 * cost);

        QCOMPARE(rec.started, 1);
        QCOMPARE(rec.finished, 1);
        QCOMPARE(rec.results.size(), std::size_t(space.size()));
        QCOMPARE(rec.progress, int(space.size()));
        QVERIFY(rec.errors.empty());
        for (std::size_t i = 1; i < rec.bests.size(); ++i)
            QVERIFY(ranksBefore(rec.bests[i], rec.bests[i - 1]));
        QCOMPARE(configJson(rec.bests.back().config), configJson(recordedBest->config));
        for (const ResultRecord& r : rec.results)
            if (r.status() == ResultStatus::Skipped)
                QCOMPARE(r.measurement.message, std::string("absent from the recording"));

        // Every config exactly once, in the store as in the events.
        const auto stored = indicesOf(store, summary.session.id);
        QCOMPARE(stored.size(), std::size_t(space.size()));
        QCOMPARE(std::set<std::uint64_t>(stored.begin(), stored.end()).size(), stored.size());
        QCOMPARE(configJson(store.best(summary.session.id)->config), configJson(recordedBest->config));
    }

    void randomIsReproducible() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        auto runWith = [&](std::uint64_t seed) {
            FakeBackend backend;
            SessionOptions options;
            options.strategy = "random";
            options.seed = seed;
            options.budget.configs = 40;
            TuningSession session(m_tiny, backend, store, options);
            return indicesOf(store, session.run().session.id);
        };
        const auto a = runWith(5);
        const auto b = runWith(5);
        const auto c = runWith(6);
        QCOMPARE(a.size(), std::size_t(40));
        QVERIFY(a == b);
        QVERIFY(a != c);
        QCOMPARE(store.sessions().size(), std::size_t(3)); // no --resume: a new session each time
    }

    void budgets() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        {
            FakeBackend backend;
            SessionOptions options;
            options.budget.fraction = 0.25;
            TuningSession session(m_tiny, backend, store, options);
            const auto summary = session.run();
            QCOMPARE(summary.progress.counts.total, std::uint64_t(66)); // ceil(0.25 * 264)
            QVERIFY2(summary.stopReason.find("budget of 66") != std::string::npos, summary.stopReason.c_str());
            for (std::size_t n : backend.batches)
                QVERIFY(n <= 8); // the backend's preferred batch
        }
        {
            // A replayed time budget counts recorded time: it stops where the real session would have.
            ReplayBackend backend(kTinyCache);
            SessionOptions options;
            options.budget.seconds = 20;
            TuningSession session(m_tiny, backend, store, options);
            const auto summary = session.run();
            const auto results = store.results(summary.session.id);
            double spent = 0;
            for (const ResultRecord& r : results)
                spent += r.measurement.compileSeconds + r.measurement.benchmarkSeconds;
            const ResultRecord& last = results.back();
            QVERIFY(spent >= 20);
            QVERIFY(spent - last.measurement.compileSeconds - last.measurement.benchmarkSeconds < 20);
            QVERIFY(results.size() < 264);
            QVERIFY2(summary.stopReason.find("time budget") != std::string::npos, summary.stopReason.c_str());
            // ... deterministically.
            ReplayBackend again(kTinyCache);
            TuningSession second(m_tiny, again, store, options);
            QCOMPARE(store.results(second.run().session.id).size(), results.size());
        }
    }

    void cancelThenResume() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        SessionOptions options;
        options.strategy = "random";
        options.seed = 3;
        options.resume = true;
        options.backendLabel = "fake";
        std::int64_t id = 0;
        {
            FakeBackend backend;
            Recorder rec;
            TuningSession* self = nullptr;
            rec.onResult = [&](const ResultRecord&) {
                if (rec.results.size() == 30)
                    self->cancel();
            };
            TuningSession session(m_tiny, backend, store, options, rec.events());
            self = &session;
            const auto summary = session.run();
            id = summary.session.id;
            QCOMPARE(summary.session.state, SessionState::Cancelled);
            QVERIFY2(summary.stopReason.find("stopped on request") == 0, summary.stopReason.c_str());
            QCOMPARE(store.resultCount(id), std::uint64_t(30)); // configs skipped as cancelled are not stored
            QCOMPARE(backend.closed, 1);
        }
        FakeBackend backend;
        TuningSession session(m_tiny, backend, store, options);
        const auto summary = session.run();
        QCOMPARE(summary.session.id, id);
        QVERIFY(summary.resumed);
        QCOMPARE(summary.priorResults, std::uint64_t(30));
        QCOMPARE(summary.session.state, SessionState::Finished);
        QCOMPARE(summary.progress.thisRun, std::uint64_t(264 - 30));
        const auto stored = indicesOf(store, id);
        QCOMPARE(stored.size(), std::size_t(264));
        QCOMPARE(std::set<std::uint64_t>(stored.begin(), stored.end()).size(), std::size_t(264));
        // The resumed run measured only what was missing, and ends as an uninterrupted run would.
        QCOMPARE(backend.measured.size(), std::size_t(264 - 30));
        QTemporaryDir other;
        ResultStore fresh = ResultStore::open(dbPath(other));
        FakeBackend b2;
        TuningSession uninterrupted(m_tiny, b2, fresh, options);
        const auto full = indicesOf(fresh, uninterrupted.run().session.id);
        QVERIFY(full == stored);
    }

    void aFailureKeepsWhatWasStored() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        SessionOptions options;
        options.resume = true;
        std::int64_t id = 0;
        {
            FakeBackend backend;
            backend.throwAfter = 50;
            Recorder rec;
            TuningSession session(m_tiny, backend, store, options, rec.events());
            QVERIFY_THROWS_EXCEPTION(std::runtime_error, session.run());
            QCOMPARE(rec.errors.size(), std::size_t(1));
            QVERIFY(rec.errors[0].find("fell off the bus") != std::string::npos);
            QCOMPARE(rec.finished, 0);
            id = store.sessions().back().id;
            QCOMPARE(store.session(id)->state, SessionState::Failed);
            QCOMPARE(store.resultCount(id), std::uint64_t(50));
        }
        FakeBackend backend;
        TuningSession session(m_tiny, backend, store, options);
        const auto summary = session.run();
        QCOMPARE(summary.session.id, id);
        QCOMPARE(store.resultCount(id), std::uint64_t(264));
        const auto stored = indicesOf(store, id);
        QCOMPARE(std::set<std::uint64_t>(stored.begin(), stored.end()).size(), std::size_t(264));
    }

    void perConfigCap() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        ReplayBackend backend(kTinyCache);
        SessionOptions options;
        options.perConfigSeconds = 0.0105;
        TuningSession session(m_tiny, backend, store, options);
        const auto summary = session.run();
        const auto timeouts = summary.progress.counts.of(ResultStatus::Timeout);
        QVERIFY(timeouts > 10);
        QVERIFY(summary.progress.counts.of(ResultStatus::Ok) > 10);
        for (const ResultRecord& r : store.results(summary.session.id)) {
            if (r.status() == ResultStatus::Timeout) {
                QVERIFY(r.measurement.message.find("per-config cap") != std::string::npos);
                QCOMPARE(r.measurement.benchmarkSeconds, 0.0105);
            } else if (r.ok()) {
                QVERIFY(r.measurement.benchmarkSeconds <= 0.0105);
            }
        }
    }

    // A failure every config shares, whatever its parameters, stops the session at once instead
    // of compiling the whole budget; one that a parameter explains does not.
    void systematicFailure_data() {
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<bool>("keepGoing");
        QTest::addColumn<bool>("stops");
        QTest::addColumn<int>("compileErrors"); // when it does not stop
        QTest::newRow("no such kernel") << "__global__ void other(float* out) { out[0] = A * B; }" << false << true
                                        << 0;
        QTest::newRow("does not compile") << "__global__ void k(float* out) { out[0] = A * B }" << false << true << 0;
        QTest::newRow("no such kernel, keep going")
            << "__global__ void other(float* out) { out[0] = A * B; }" << true << false << 32;
        // A == 1 fails: the first configs in exhaustive order all have A == 1, but configs from
        // elsewhere compile, so parameter A explains it.
        QTest::newRow("A explains it") << "__global__ void k(float* out) { static_assert(A != 1, \"A must not be 1\");"
                                          " out[0] = A * B; }"
                                       << false << false << 4;
    }

    void systematicFailure() {
        QFETCH(QString, kernel);
        QFETCH(bool, keepGoing);
        QFETCH(bool, stops);
        QFETCH(int, compileErrors);
        QTemporaryDir dir;
        {
            std::ofstream out(dir.filePath("k.cu").toStdString());
            out << kernel.toStdString() << "\n";
        }
        const std::string text =
            "{\"ConfigurationSpace\": {\"TuningParameters\": ["
            "{\"Name\": \"A\", \"Type\": \"int\", \"Values\": \"[i for i in range(1, 9)]\"},"
            "{\"Name\": \"B\", \"Type\": \"int\", \"Values\": \"[1, 2, 4, 8]\"}]},"
            "\"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"k\", \"KernelFile\": \"k.cu\","
            "\"GlobalSize\": {\"X\": \"1\"}, \"LocalSize\": {\"X\": \"32\"}}}";
        const TuningProblem problem = TuningProblem::parse(text, "k.json", dir.path().toStdString());
        CompileServiceOptions serviceOptions;
        serviceOptions.threads = 2;
        CompileService service(serviceOptions);
        ResultStore store = ResultStore::open(dbPath(dir));
        FakeBackend backend;
        backend.info.needsCubins = true;
        backend.info.arch = "sm_90";
        SessionOptions options;
        options.stopOnSystematicFailure = !keepGoing;
        Recorder recorder;
        TuningSession session(problem, backend, store, options, recorder.events(), &service);
        if (stops) {
            try {
                session.run();
                QFAIL("expected the session to stop");
            } catch (const SystematicFailure& e) {
                QVERIFY2(e.message().find("every config failed the same way") != std::string::npos, e.what());
                QVERIFY2(e.message().find("compile_error") != std::string::npos, e.what());
                QVERIFY2(e.message().find("compiled from across the space") != std::string::npos, e.what());
            }
            QVERIFY(backend.measured.empty());
            const auto sessions = store.sessions();
            QCOMPARE(sessions.size(), std::size_t(1));
            QCOMPARE(sessions.front().state, SessionState::Failed);
            const auto results = store.results(sessions.front().id);
            QVERIFY2(results.size() >= 5 && results.size() < 32, std::to_string(results.size()).c_str());
            QCOMPARE(recorder.errors.size(), std::size_t(1));
            return;
        }
        const SessionSummary summary = session.run();
        QCOMPARE(summary.progress.counts.total, std::uint64_t(32));
        QCOMPARE(summary.progress.counts.of(ResultStatus::CompileError), std::uint64_t(compileErrors));
        QCOMPARE(backend.measured.size(), std::size_t(32 - compileErrors));
    }

    void compileThenPruneThenMeasure() {
        // A real compile: four configs, one over the threads-per-block limit (pruned), one over
        // the static shared memory limit (a compile error), two measured.
        QTemporaryDir dir;
        {
            std::ofstream kernel(dir.filePath("k.cu").toStdString());
            kernel << "extern \"C\" __global__ void k(float* out) {\n"
                      "    __shared__ float buf[BLOCK * ITEMS];\n"
                      "    for (int i = 0; i < ITEMS; ++i) buf[i * BLOCK + threadIdx.x] = threadIdx.x * i;\n"
                      "    __syncthreads();\n"
                      "    out[blockIdx.x * BLOCK + threadIdx.x] = buf[(threadIdx.x * 7) % (BLOCK * ITEMS)];\n"
                      "}\n";
        }
        const std::string text =
            "{\"ConfigurationSpace\": {\"TuningParameters\": ["
            "{\"Name\": \"BLOCK\", \"Type\": \"int\", \"Values\": \"[256, 2048]\"},"
            "{\"Name\": \"ITEMS\", \"Type\": \"int\", \"Values\": \"[1, 16]\"}]},"
            "\"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"k\", \"KernelFile\": \"k.cu\","
            "\"GlobalSize\": {\"X\": \"4\"}, \"LocalSize\": {\"X\": \"BLOCK\"}}}";
        const TuningProblem problem = TuningProblem::parse(text, "k.json", dir.path().toStdString());
        CompileCacheOptions cacheOptions;
        cacheOptions.directory = dir.filePath("cache").toStdString();
        CompileServiceOptions serviceOptions;
        serviceOptions.threads = 2;
        serviceOptions.cache = std::make_shared<CompileCache>(cacheOptions);
        CompileService service(serviceOptions);

        ResultStore store = ResultStore::open(dbPath(dir));
        FakeBackend backend;
        backend.info.needsCubins = true;
        backend.info.arch = "sm_90";
        backend.info.limits = *findArch("sm_90");
        TuningSession session(problem, backend, store, {}, {}, &service);
        const auto summary = session.run();
        QCOMPARE(summary.progress.counts.total, std::uint64_t(4));

        std::map<std::string, ResultRecord> byConfig;
        for (const ResultRecord& r : store.results(summary.session.id))
            byConfig[describeConfig(r.config)] = r;
        const ResultRecord& small = byConfig.at("BLOCK=256 ITEMS=1");
        const ResultRecord& wide = byConfig.at("BLOCK=256 ITEMS=16");
        const ResultRecord& tooManyThreads = byConfig.at("BLOCK=2048 ITEMS=1");
        const ResultRecord& tooMuchShared = byConfig.at("BLOCK=2048 ITEMS=16");
        QCOMPARE(small.status(), ResultStatus::Ok);
        QCOMPARE(wide.status(), ResultStatus::Ok);
        QCOMPARE(tooManyThreads.status(), ResultStatus::Pruned);
        QVERIFY2(tooManyThreads.measurement.message.find("2048") != std::string::npos,
                 tooManyThreads.measurement.message.c_str());
        QCOMPARE(tooMuchShared.status(), ResultStatus::CompileError);
        QVERIFY(!tooMuchShared.log.empty());
        for (const ResultRecord* r : {&small, &wide}) {
            QVERIFY(r->measurement.staticInfo);
            QVERIFY(r->measurement.staticInfo->registers > 0);
            QCOMPARE(r->blockSize, std::optional<std::int64_t>(256));
            QVERIFY(r->occupancy && *r->occupancy > 0);
            QVERIFY(r->measurement.compileSeconds > 0);
            QCOMPARE(r->measurement.time.medianMs, FakeBackend::timeOf(*r->spaceIndex));
        }
        QCOMPARE(wide.measurement.staticInfo->sharedStatic, std::int64_t(256 * 16 * 4));
        QVERIFY(tooManyThreads.measurement.staticInfo); // compiled fine, pruned by the device's limits
        // Only the two launchable configs reached the device, each with its cubin.
        QCOMPARE(backend.measured.size(), std::size_t(2));
        QVERIFY(std::all_of(backend.hadCubins.begin(), backend.hadCubins.end(), [](bool b) { return b; }));
        QVERIFY(summary.session.provenanceJson.find("nvrtc_version") != std::string::npos);
        QCOMPARE(summary.session.arch, std::string("sm_90"));
    }

    void compilesForEveryArchOfTheDevices() {
        // Devices of two archs: each config is compiled for both, and a device gets its own.
        BackendInfo two;
        two.arch = "sm_90";
        two.archs = {"sm_90", "sm_80", "sm_90"};
        QCOMPARE(sessionArchs("", two), (std::vector<std::string>{"sm_90", "sm_80"}));
        QCOMPARE(sessionArchs("sm_86", two), std::vector<std::string>{"sm_86"}); // the user's word wins
        QVERIFY(sessionArchs("", BackendInfo{}).empty());

        QTemporaryDir dir;
        {
            std::ofstream kernel(dir.filePath("k.cu").toStdString());
            kernel << "extern \"C\" __global__ void k(float* out) { out[threadIdx.x] = BLOCK; }\n";
        }
        const std::string text =
            "{\"ConfigurationSpace\": {\"TuningParameters\": ["
            "{\"Name\": \"BLOCK\", \"Type\": \"int\", \"Values\": \"[64, 128]\"}]},"
            "\"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"k\", \"KernelFile\": \"k.cu\","
            "\"GlobalSize\": {\"X\": \"1\"}, \"LocalSize\": {\"X\": \"BLOCK\"}}}";
        const TuningProblem problem = TuningProblem::parse(text, "k.json", dir.path().toStdString());
        CompileServiceOptions serviceOptions;
        serviceOptions.threads = 2;
        CompileService service(serviceOptions);
        ResultStore store = ResultStore::open(dbPath(dir));
        FakeBackend backend;
        backend.info.needsCubins = true;
        backend.info.arch = "sm_90";
        backend.info.archs = {"sm_90", "sm_80"};
        TuningSession session(problem, backend, store, {}, {}, &service);
        const auto summary = session.run();
        QCOMPARE(summary.progress.counts.of(ResultStatus::Ok), std::uint64_t(2));
        QCOMPARE(backend.compiledArchs.size(), std::size_t(2));
        for (std::size_t i = 0; i < backend.compiledArchs.size(); ++i) {
            QCOMPARE(backend.compiledArchs[i], (std::vector<std::string>{"sm_90", "sm_80"}));
            QVERIFY(backend.sm80Cubins[i] && !backend.sm80Cubins[i]->cubin.empty());
        }
        QCOMPARE(summary.session.arch, std::string("sm_90"));
    }

    void recordingsOfAnotherProblemAreRefused() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dbPath(dir));
        auto refusal = [&](const TuningProblem& problem, std::size_t shape) {
            ReplayBackend backend(kTinyCache);
            SessionOptions options;
            options.shapeIndex = shape;
            TuningSession session(problem, backend, store, options);
            try {
                session.run();
            } catch (const InputError& e) {
                return std::string(e.what());
            }
            return std::string();
        };
        // Another shape: the cache's problem_size is [1048576].
        std::string why = refusal(m_tiny, 1);
        QVERIFY2(why.find("does not match") != std::string::npos && why.find("--shape") != std::string::npos,
                 why.c_str());
        // Another kernel.
        TuningProblem renamed = m_tiny;
        renamed.kernelName = "saxpy";
        why = refusal(renamed, 0);
        QVERIFY2(why.find("kernel 'scale'") != std::string::npos, why.c_str());
        // Other parameters.
        TuningProblem other = TuningProblem::load(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
        other.kernelName = "scale";
        why = refusal(other, 0);
        QVERIFY2(why.find("missing BLOCK_M") != std::string::npos && why.find("unknown BLOCK") != std::string::npos,
                 why.c_str());
        // A shape out of range.
        why = refusal(m_tiny, 5);
        QVERIFY2(why.find("shape 5 does not exist") != std::string::npos, why.c_str());
        // Nothing was stored by any of them.
        QVERIFY(store.sessions().empty());
    }

    void objective() {
        const ObjectiveEvaluator eval(m_tiny, 0);
        QVERIFY(eval.enabled());
        QCOMPARE(eval.name(), std::string("GB/s"));
        const ConfigSpace space = ConfigSpace::build(m_tiny);
        const auto v = eval.value(space, space.at(0), 0.004);
        QVERIFY(v);
        QCOMPARE(*v, 8.0 * 1048576 / 4e-6 / 1e9);
        QVERIFY(!eval.value(space, space.at(0), 0));
        const ObjectiveEvaluator atShape1(m_tiny, 1);
        QCOMPARE(*atShape1.value(space, space.at(0), 0.004), 8.0 * 4096 / 4e-6 / 1e9);
        TuningProblem none = m_tiny;
        none.objective.reset();
        QVERIFY(!ObjectiveEvaluator(none, 0).enabled());
    }

    void energyObjectives() {
        // --objective energy: the work per joule (GB/J here), needing each launch's energy.
        TuningProblem p = m_tiny;
        p.objective = objectiveFor("energy", m_tiny.objective);
        QCOMPARE(p.objective->name, std::string("GB/J"));
        QCOMPARE(p.objective->per, std::string("joule"));
        const ConfigSpace space = ConfigSpace::build(m_tiny);
        const ObjectiveEvaluator energy(p, 0);
        QVERIFY(energy.needsEnergy());
        QVERIFY(!energy.value(space, space.at(0), 0.004));      // no energy: no objective
        QVERIFY(!energy.value(space, space.at(0), 0.004, 0.0)); // nor with none measured
        QCOMPARE(*energy.value(space, space.at(0), 0.004, 0.002), 8.0 * 1048576 / 0.002 / 1e9);
        // edp: per joule-second.
        p.objective = objectiveFor("edp", m_tiny.objective);
        QCOMPARE(p.objective->name, std::string("GB/(J*s)"));
        QCOMPARE(*ObjectiveEvaluator(p, 0).value(space, space.at(0), 0.004, 0.002),
                 8.0 * 1048576 / (0.002 * 4e-6) / 1e9);
        // Without a problem objective: launches per joule, so less energy ranks higher.
        p.objective = objectiveFor("energy", std::nullopt);
        QCOMPARE(p.objective->name, std::string("launches/J"));
        QCOMPARE(*ObjectiveEvaluator(p, 0).value(space, space.at(0), 0.004, 0.5), 2.0);
        QVERIFY(objectiveFor("time", m_tiny.objective) == m_tiny.objective);
        QVERIFY_THROWS_EXCEPTION(InputError, objectiveFor("joules", m_tiny.objective));
        // Per is read and written as a Tilescope addition; an unknown one is refused where it is.
        p.objective = objectiveFor("edp", m_tiny.objective);
        const TuningProblem back = TuningProblem::parse(p.toJson(), "p.json", {});
        QVERIFY(back.objective == p.objective);
        QVERIFY(p.toJson().find("\"Per\": \"joule-second\"") != std::string::npos);
        QVERIFY(m_tiny.toJson().find("\"Per\"") == std::string::npos);
        std::string text = p.toJson();
        text.replace(text.find("joule-second"), 12, "fortnight");
        try {
            TuningProblem::parse(text, "p.json", {});
            QFAIL("an unknown Per was accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("/Tilescope/Objective/Per") != std::string::npos, e.what());
        }
        // Tilescope.Objectives: read and written; an unknown or repeated one is refused where it is.
        p = m_tiny;
        p.objectives = {"time", "energy"};
        QCOMPARE(TuningProblem::parse(p.toJson(), "p.json", {}).objectives, p.objectives);
        QCOMPARE(p.specHash(), m_tiny.specHash()); // what ranks results is not what decides them
        for (const char* bad : {R"(["time", "joules"])", R"(["energy", "energy"])"}) {
            std::string t = p.toJson();
            const std::size_t at = t.find("\"Objectives\"");
            const std::size_t end = t.find(']', at);
            t.replace(at, end + 1 - at, std::string("\"Objectives\": ") + bad);
            try {
                TuningProblem::parse(t, "p.json", {});
                QFAIL(bad);
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find("/Tilescope/Objectives/1") != std::string::npos, e.what());
            }
        }
        // What makes a session measure energy.
        QVERIFY(!objectivesNeedEnergy(m_tiny));
        QVERIFY(objectivesNeedEnergy(p)); // Objectives has energy
        TuningProblem perJoule = m_tiny;
        perJoule.objective = objectiveFor("edp", m_tiny.objective);
        QVERIFY(objectivesNeedEnergy(perJoule));
        // energyOf reads the energy metric.
        QCOMPARE(*energyOf({{"power", 400}, {kEnergyMetric, 0.25}}), 0.25);
        QVERIFY(!energyOf({{"power", 400}}));
    }

    void configCodec() {
        const ConfigSpace space = ConfigSpace::build(m_tiny);
        const ConfigCodec codec(space);
        QCOMPARE(codec.names().size(), std::size_t(4));
        for (std::uint64_t i = 0; i < space.size(); i += 17) {
            const ConfigValues values = codec.toValues(space.at(i));
            QCOMPARE(codec.indexOf(values), std::optional<std::uint64_t>(i));
        }
        ConfigValues v = {{"NUM_STAGES", 2}, {"BLOCK", 256.0}, {"ITEMS", 4}, {"NUM_WARPS", 4}};
        QVERIFY(codec.indexOf(v)); // any order; 256.0 == 256
        std::string why;
        v["ITEMS"] = 3;
        QVERIFY(!codec.fromValues(v, &why));
        QVERIFY2(why.find("'ITEMS' has no value 3") != std::string::npos, why.c_str());
        v = {{"NUM_STAGES", 2}, {"BLOCK", 256.0}, {"NUM_WARPS", 4}};
        QVERIFY(!codec.fromValues(v, &why));
        QVERIFY2(why.find("no value for parameter 'ITEMS'") != std::string::npos, why.c_str());
        v["COLOUR"] = "red";
        QVERIFY(!codec.fromValues(v, &why));
        QVERIFY2(why.find("unknown parameter 'COLOUR'") != std::string::npos, why.c_str());
        // Valid values, but a config the conditions reject: BLOCK >= 32 * NUM_WARPS fails.
        const ConfigValues rejected = {{"BLOCK", 32}, {"ITEMS", 1}, {"NUM_WARPS", 8}, {"NUM_STAGES", 1}};
        QVERIFY(codec.fromValues(rejected));
        QVERIFY(!codec.indexOf(rejected));
    }
};

QTEST_GUILESS_MAIN(TestTuner)
#include "tst_tuner.moc"
