// The shape set run (core/tuner/shapesetrun.h) and what the front ends build around it
// (backendspec's makeBackend and makeCompileService, sessionsetup, sessionreport), on the gemv
// recorded at four shapes on the H200, replayed:
//
// - the shape lists `all` and `0,2,5` read as the CLI and the Run panel give them, and the errors;
// - one session per shape into one database, each search started from the winners of the shapes
//   tuned before (gemv's shapes 0 and 1 share M = 1; shape 2 has M = 4, where no config of M = 1
//   is valid);
// - cross-evaluation measures the best configs of the other shapes, none twice, then the notes
//   say what the set says (the regime per shape, the table within 3 %);
// - a cancelled session stops the set there; one shape is one session, without notes;
// - the backend a spec names, the strategy and part a session takes, and its summary in words.

#include "base/error.h"
#include "exchange/configcodec.h"
#include "measure/analysis/analysisbackend.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/backendspec.h"
#include "tuner/sessionreport.h"
#include "tuner/sessionsetup.h"
#include "tuner/shapesetrun.h"

#include <QTemporaryDir>
#include <QtTest>

#include <set>

using namespace tilescope;

namespace {

const std::string kGemv = TILESCOPE_TEST_DATA "/shapes/gemv/gemv_bf16.json";
const std::string kRecording = TILESCOPE_TEST_DATA "/shapes/gemv-bf16-h200-shapes.db";

std::set<std::string> keysOf(const std::vector<ResultRecord>& results) {
    std::set<std::string> keys;
    for (const ResultRecord& r : results)
        keys.insert(configKey(r.config));
    return keys;
}

} // namespace

class TestShapeSetRun : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<TuningProblem> m_gemv;

    // One replayed session per call, as the CLI and the controller run them; `cancelAt` (1-based)
    // cancels that session before it measures anything.
    struct Runner {
        Runner(const TuningProblem& p, ResultStore& s)
            : problem(p)
            , store(s) {}
        const TuningProblem& problem;
        ResultStore& store;
        ReplayBackend backend{kRecording};
        std::size_t calls = 0;
        std::size_t cancelAt = 0;
        std::vector<SessionOptions> asked;

        SessionSummary operator()(const SessionOptions& options) {
            asked.push_back(options);
            // Each shape searched with a seed of its own: the shapes' random searches differ.
            SessionOptions run = options;
            run.seed += run.shapeIndex;
            TuningSession session(problem, backend, store, run);
            if (++calls == cancelAt)
                session.cancel();
            return session.run();
        }
    };

    SessionOptions base() const {
        SessionOptions options;
        options.strategy = "random";
        options.seed = 1;
        options.budget.configs = 12;
        options.backendLabel = "replay:" + kRecording;
        return options;
    }

    ResultStore openStore(const QString& name) {
        return ResultStore::open(m_dir.filePath(name).toStdString(), StoreMode::ReadWrite);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_gemv = std::make_unique<TuningProblem>(TuningProblem::load(kGemv));
        QCOMPARE(m_gemv->shapes.size(), std::size_t(4));
    }

    void parsesShapeLists_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("count");
        QTest::addColumn<QList<int>>("shapes");
        QTest::addColumn<QString>("error");
        QTest::newRow("all") << "all" << 4 << QList<int>{0, 1, 2, 3} << "";
        QTest::newRow("list") << "0,2" << 4 << QList<int>{0, 2} << "";
        QTest::newRow("order kept, each once") << " 2, 0 ,2," << 4 << QList<int>{2, 0} << "";
        QTest::newRow("no shapes is one") << "all" << 0 << QList<int>{0} << "";
        QTest::newRow("past the end") << "0,7" << 3 << QList<int>{}
                                      << "shape 7 does not exist (the problem has 3 shapes: 0 to 2)";
        QTest::newRow("one shape") << "1" << 1 << QList<int>{} << "shape 1 does not exist (the problem has 1 shape)";
        QTest::newRow("not a number") << "0,x" << 4 << QList<int>{}
                                      << "expected all or shape indexes such as 0,2,5, got 'x'";
        QTest::newRow("negative") << "-1" << 4 << QList<int>{}
                                  << "expected all or shape indexes such as 0,2,5, got '-1'";
        QTest::newRow("empty") << " , " << 4 << QList<int>{} << "expected all or shape indexes such as 0,2,5";
    }

    void parsesShapeLists() {
        QFETCH(QString, text);
        QFETCH(int, count);
        QFETCH(QList<int>, shapes);
        QFETCH(QString, error);
        try {
            const std::vector<std::size_t> parsed = parseShapeList(text.toStdString(), std::size_t(count));
            QVERIFY2(error.isEmpty(), "no error");
            QCOMPARE(QList<int>(parsed.begin(), parsed.end()), shapes);
        } catch (const InputError& e) {
            QVERIFY2(!error.isEmpty() && QString::fromStdString(e.message()).contains(error), e.what());
            QCOMPARE(e.location(), std::string("--shapes"));
        }
    }

    void tunesEachShapeFromTheOnesBefore() {
        ResultStore store = openStore(QStringLiteral("set.db"));
        Runner runner(*m_gemv, store);
        QStringList notes;
        ShapeSetOptions set;
        set.shapes = {0, 1, 2};
        set.seedTop = 3;
        set.database = "set.db";
        const ShapeSetResult result =
            runShapeSet(*m_gemv, store, set, base(), std::ref(runner),
                        [&](const std::string& line) { notes << QString::fromStdString(line); });
        QVERIFY(!result.cancelled);
        QCOMPARE(result.sessions.size(), std::size_t(3));
        QVERIFY(result.last);
        QCOMPARE(result.last->session.id, result.sessions.back());
        const std::vector<SessionInfo> sessions = store.sessions();
        QCOMPARE(sessions.size(), std::size_t(3));
        for (std::size_t i = 0; i < 3; ++i) {
            QCOMPARE(sessions[i].id, result.sessions[i]);
            QCOMPARE(sessions[i].shapeIndex.value_or(-1), std::int64_t(set.shapes[i]));
            QCOMPARE(store.results(sessions[i].id).size(), std::size_t(12));
        }

        // Shape 1 (M = 1, as shape 0) starts from shape 0's three best; shape 2 (M = 4) from none.
        QCOMPARE(runner.asked[0].firstConfigs.size(), std::size_t(0));
        QCOMPARE(runner.asked[1].firstConfigs.size(), std::size_t(3));
        const std::vector<ResultRecord> firstBest = ranked(store.results(sessions[0].id));
        for (std::size_t i = 0; i < 3; ++i)
            QCOMPARE(configKey(runner.asked[1].firstConfigs[i]), configKey(firstBest[i].config));
        QCOMPARE(configKey(store.results(sessions[1].id).front().config), configKey(firstBest.front().config));
        // Shape 2 is offered the winners of both (the session keeps those valid there: none, as MT
        // follows M), and measures its own.
        QCOMPARE(runner.asked[2].firstConfigs.size(), std::size_t(6));
        const ConfigSpace space2 = ConfigSpace::build(*m_gemv, 2);
        const ConfigCodec atShape2(space2);
        for (const ConfigValues& c : runner.asked[2].firstConfigs)
            QVERIFY(!atShape2.indexOf(c));
        QVERIFY2(notes.value(0) == QStringLiteral("Shape 1 of 3"), qPrintable(notes.join('\n')));
        QVERIFY2(notes.value(1).startsWith(QStringLiteral("Shape 2 of 3: the search starts from 3 winners")),
                 qPrintable(notes.join('\n')));

        // What the set says, at the end.
        QVERIFY2(notes.contains(QStringLiteral("Shape set: 3 shapes in set.db")), qPrintable(notes.join('\n')));
        QVERIFY2(notes.filter(QStringLiteral("configs run every shape within 3 % of its best")).size() == 1,
                 qPrintable(notes.join('\n')));
        QVERIFY2(notes.filter(QStringLiteral("M=4 K=4096 N=16384  ")).size() == 1, qPrintable(notes.join('\n')));
    }

    void crossEvaluatesWhatIsNew() {
        ResultStore store = openStore(QStringLiteral("cross.db"));
        Runner runner(*m_gemv, store);
        QStringList notes;
        ShapeSetOptions set;
        set.shapes = {0, 1};
        set.crossEval = 4;
        set.database = "cross.db";
        const ShapeSetResult result =
            runShapeSet(*m_gemv, store, set, base(), std::ref(runner),
                        [&](const std::string& line) { notes << QString::fromStdString(line); });
        QVERIFY(!result.cancelled);
        QVERIFY2(result.sessions.size() > 2, qPrintable(notes.join('\n')));
        const std::vector<SessionInfo> sessions = store.sessions();
        QCOMPARE(sessions.size(), result.sessions.size());
        for (std::size_t i = 2; i < sessions.size(); ++i) {
            const SessionOptions& asked = runner.asked[i];
            QCOMPARE(asked.strategy, std::string("exhaustive"));
            QCOMPARE(asked.confirmTop, std::size_t(0));
            QVERIFY(!asked.resume);
            QCOMPARE(asked.budget.configs.value_or(0), std::uint64_t(asked.firstConfigs.size()));
            // Only configs not measured at that shape yet, each at most once.
            const std::size_t shape = asked.shapeIndex;
            const std::set<std::string> before = keysOf(store.results(sessions[shape].id));
            const std::vector<ResultRecord> measured = store.results(sessions[i].id);
            QVERIFY(!measured.empty());
            QCOMPARE(keysOf(measured).size(), measured.size());
            for (const ResultRecord& r : measured)
                QVERIFY2(!before.count(configKey(r.config)), configKey(r.config).c_str());
            QVERIFY(notes.contains(QStringLiteral("Cross-evaluation at shape %1: the best 4 of the other shapes, %2 "
                                                  "configs not measured here yet")
                                       .arg(shape)
                                       .arg(asked.firstConfigs.size())));
        }
        QVERIFY2(notes.contains(QStringLiteral("Shape set: 2 shapes in cross.db")), qPrintable(notes.join('\n')));
    }

    void cancelledSessionStopsTheSet() {
        ResultStore store = openStore(QStringLiteral("cancel.db"));
        Runner runner(*m_gemv, store);
        runner.cancelAt = 2;
        QStringList notes;
        ShapeSetOptions set;
        set.shapes = {0, 1, 2};
        set.crossEval = 2;
        const ShapeSetResult result =
            runShapeSet(*m_gemv, store, set, base(), std::ref(runner),
                        [&](const std::string& line) { notes << QString::fromStdString(line); });
        QVERIFY(result.cancelled);
        QCOMPARE(result.sessions.size(), std::size_t(2));
        QCOMPARE(result.last->session.state, SessionState::Cancelled);
        QCOMPARE(store.sessions().size(), std::size_t(2));
        QCOMPARE(notes.filter(QStringLiteral("Shape set")).size(), 0);
    }

    void oneShapeIsOneSession() {
        ResultStore store = openStore(QStringLiteral("one.db"));
        Runner runner(*m_gemv, store);
        QStringList notes;
        ShapeSetOptions set;
        set.shapes = {3};
        set.crossEval = 2;
        const ShapeSetResult result =
            runShapeSet(*m_gemv, store, set, base(), std::ref(runner),
                        [&](const std::string& line) { notes << QString::fromStdString(line); });
        QCOMPARE(result.sessions.size(), std::size_t(1));
        QCOMPARE(store.sessions().front().shapeIndex.value_or(-1), std::int64_t(3));
        QVERIFY2(notes.isEmpty(), qPrintable(notes.join('\n')));
        // No shapes given: the base options' own shape.
        SessionOptions atTwo = base();
        atTwo.shapeIndex = 2;
        const ShapeSetResult plain = runShapeSet(*m_gemv, store, {}, atTwo, std::ref(runner));
        QCOMPARE(plain.sessions.size(), std::size_t(1));
        QCOMPARE(store.session(plain.sessions.front())->shapeIndex.value_or(-1), std::int64_t(2));
    }

    void backendsFromSpecs() {
        const std::unique_ptr<Backend> replay = makeBackend(parseBackendSpec("replay:" + kRecording));
        QVERIFY(dynamic_cast<ReplayBackend*>(replay.get()));
        QVERIFY(!makeCompileService(parseBackendSpec("replay:" + kRecording)));
        const std::unique_ptr<Backend> analysis = makeBackend(parseBackendSpec("analysis:sm_90"));
        QVERIFY(dynamic_cast<AnalysisBackend*>(analysis.get()));
        // A CUDA backend starts its workers when it opens, not when it is made.
        const std::unique_ptr<Backend> cuda = makeBackend(parseBackendSpec("cuda:0,1"));
        QVERIFY(dynamic_cast<CudaBackend*>(cuda.get()));
        QVERIFY(makeCompileService(parseBackendSpec("cuda"), 1, false));
        QVERIFY_THROWS_EXCEPTION(InputError, makeBackend(parseBackendSpec("replay:/no/such/recording.json")));
    }

    void strategyAndPart() {
        // The problem names no strategy: exhaustive without a budget, the lab's choice with one.
        QCOMPARE(chooseStrategy(std::nullopt, *m_gemv, Budget{}), std::string("exhaustive"));
        Budget some;
        some.configs = 50;
        QCOMPARE(chooseStrategy(std::nullopt, *m_gemv, some), std::string("auto"));
        // A strategy the problem names that this version lacks: said, and the default taken.
        TuningProblem named = *m_gemv;
        named.searchName = "no_such_strategy";
        std::string note;
        QCOMPARE(chooseStrategy(std::nullopt, named, Budget{}, [&](const std::string& text) { note = text; }),
                 std::string("exhaustive"));
        QCOMPARE(note, std::string("the problem's Search.Name 'no_such_strategy' is no strategy this version has; "
                                   "tuning with exhaustive (--strategy picks one)"));
        QCOMPARE(chooseStrategy(std::string("random"), *m_gemv, some), std::string("random"));
        try {
            chooseStrategy(std::string("magic"), *m_gemv, some);
            QFAIL("no error");
        } catch (const InputError& e) {
            QVERIFY2(e.message().find("unknown strategy 'magic' (known: ") == 0, e.what());
            QCOMPARE(e.location(), std::string("--strategy"));
        }
        const SweepPart part = parseSweepPart("2/4");
        QCOMPARE(part.index, std::uint64_t(1));
        QCOMPARE(part.count, std::uint64_t(4));
        for (const char* bad : {"0/4", "5/4", "2", "2/", "/4", "a/b", "2/4x", "1/0"})
            QVERIFY_THROWS_EXCEPTION(InputError, parseSweepPart(bad));
    }

    void summaryInWords() {
        ResultStore store = openStore(QStringLiteral("report.db"));
        Runner runner(*m_gemv, store);
        SessionOptions options = base();
        options.shapeIndex = 2;
        const SessionSummary summary = runner(options);
        SessionReportContext context;
        context.problemPath = "gemv_bf16.json";
        context.database = "report.db";
        context.shapeIndex = 2;
        context.objectiveName = "GB/s";
        context.spec = parseBackendSpec("replay:" + kRecording);
        context.backend = &runner.backend;
        const SessionReport report = sessionReport(summary, context);
        const QString text = QString::fromStdString(report.text);
        const QStringList lines = text.split('\n', Qt::SkipEmptyParts);
        QVERIFY2(lines.value(0).startsWith(QStringLiteral("Session %1 finished: ").arg(summary.session.id)),
                 qPrintable(text));
        QVERIFY2(
            lines.contains(QStringLiteral("  problem     gemv_bf16.json  (kernel gemv, shape 2: M=4 K=4096 N=16384)")),
            qPrintable(text));
        QVERIFY2(lines.filter(QStringLiteral("  backend     replay of ") + QString::fromStdString(kRecording)).size() ==
                     1,
                 qPrintable(text));
        QVERIFY2(lines.contains(QStringLiteral("  strategy    random, seed 3, budget: 12 configs")), qPrintable(text));
        QVERIFY2(lines.filter(QStringLiteral("  results     12 of 12 configs: ok 12")).size() == 1, qPrintable(text));
        QVERIFY2(lines.filter(QRegularExpression(QStringLiteral("^  best        [0-9.]+ ms  [0-9.]+ GB/s  WARPS=")))
                         .size() == 1,
                 qPrintable(text));
        QVERIFY2(lines.filter(QStringLiteral("(what the recorded session spent on these configs)")).size() == 1,
                 qPrintable(text));
        QVERIFY2(lines.contains(QStringLiteral("  database    report.db  (tilescope-cli show report.db --session %1)")
                                    .arg(summary.session.id)),
                 qPrintable(text));
        QVERIFY(report.warnings.empty());
        QCOMPARE(statusSummary(StatusCounts{}), std::string("none"));
    }
};

QTEST_GUILESS_MAIN(TestShapeSetRun)
#include "tst_shapesetrun.moc"
