// The failure watch: when the first configs of a run all fail the same way, from across the
// space, no tuning parameter explains it and the session stops (SystematicFailure).

#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "tuner/failurewatch.h"

#include <QtTest>

#include <functional>
#include <future>
#include <unordered_set>

using namespace tilescope;

namespace {

// A = 1..4, B = 1..8 (32 configs), C a single value: only A and B can explain a failure.
TuningProblem problem() {
    const std::string text =
        "{\"ConfigurationSpace\": {\"TuningParameters\": ["
        "{\"Name\": \"A\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4]\"},"
        "{\"Name\": \"B\", \"Type\": \"int\", \"Values\": \"[i for i in range(1, 9)]\"},"
        "{\"Name\": \"C\", \"Type\": \"int\", \"Values\": \"[7]\"}]},"
        "\"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"k\", "
        "\"KernelFile\": \"k.cu\", \"GlobalSize\": {\"X\": \"1\"}, \"LocalSize\": {\"X\": \"32\"}}}";
    return TuningProblem::parse(text, "k.json", ".");
}

ResultRecord failed(ResultStatus status, const std::string& message) {
    ResultRecord r;
    r.measurement.status = status;
    r.measurement.message = message;
    return r;
}

// The first `count` space indices whose config satisfies `keep`.
std::vector<std::uint64_t> indicesWhere(const ConfigSpace& space, std::size_t count,
                                        const std::function<bool(const Config&)>& keep) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t i = 0; i < space.size() && out.size() < count; ++i)
        if (keep(space.at(i)))
            out.push_back(i);
    return out;
}

// Five configs that take two values or more of A and of B.
std::vector<std::uint64_t> acrossTheSpace(const ConfigSpace& space) {
    std::vector<std::uint64_t> out;
    for (std::uint16_t k = 0; k < 5; ++k)
        out.push_back(indicesWhere(space, 1, [&](const Config& c) { return c[0] == k % 4 && c[1] == k; }).at(0));
    return out;
}

std::future<CompileResult> ready(CompileStatus status, const std::string& message) {
    std::promise<CompileResult> promise;
    CompileResult cr;
    cr.status = status;
    cr.message = message;
    promise.set_value(cr);
    return promise.get_future();
}

} // namespace

class TestFailureWatch : public QObject {
    Q_OBJECT

    TuningProblem m_problem = problem();
    ConfigSpace m_space = ConfigSpace::build(m_problem, 0);

private slots:
    void stopsWhenNoParameterExplains() {
        FailureWatch watch(m_problem, m_space);
        const std::vector<std::uint64_t> indices = acrossTheSpace(m_space);
        for (std::size_t i = 0; i < indices.size(); ++i) {
            QVERIFY(!watch.due());
            watch.observe(failed(ResultStatus::LaunchError, "too many resources requested"), indices[i]);
        }
        QVERIFY(watch.active());
        QVERIFY(watch.due());
        const std::string why = watch.check({}, 0, {});
        QVERIFY2(why.find("every config failed the same way") != std::string::npos, why.c_str());
        QVERIFY2(why.find("launch_error: too many resources requested") != std::string::npos, why.c_str());
        QVERIFY2(why.find("(the first 5 configs of this run)") != std::string::npos, why.c_str());
    }

    // The configs that failed all have A = 1: A may explain it, so the run goes on, and the next
    // check waits for twice as many.
    void aParameterThatStaysExplains() {
        FailureWatch watch(m_problem, m_space);
        // The 8 configs with A = 1 (a config that failed again counts again).
        const auto indices = indicesWhere(m_space, 8, [](const Config& c) { return c[0] == 0; });
        QCOMPARE(indices.size(), std::size_t(8));
        for (std::size_t i = 0; i < 5; ++i)
            watch.observe(failed(ResultStatus::Crashed, "illegal address"), indices[i]);
        QVERIFY(watch.due());
        QCOMPARE(watch.check({}, 0, {}), std::string());
        QVERIFY(watch.active());
        QVERIFY(!watch.due());
        for (std::size_t i = 5; i < 9; ++i)
            watch.observe(failed(ResultStatus::Crashed, "illegal address"), indices[i % 8]);
        QVERIFY(!watch.due());
        watch.observe(failed(ResultStatus::Crashed, "illegal address"), indices[1]);
        QVERIFY(watch.due());
    }

    void endsWhenAConfigRunsOrFailsOtherwise_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("message");
        QTest::addColumn<bool>("ends");
        QTest::newRow("ok") << int(ResultStatus::Ok) << "" << true;
        QTest::newRow("wrong result") << int(ResultStatus::WrongResult) << "" << true;
        QTest::newRow("timeout") << int(ResultStatus::Timeout) << "" << true;
        QTest::newRow("another message") << int(ResultStatus::CompileError) << "another error" << true;
        QTest::newRow("another status") << int(ResultStatus::LaunchError) << "boom" << true;
        QTest::newRow("the same") << int(ResultStatus::CompileError) << "boom" << false;
        QTest::newRow("skipped") << int(ResultStatus::Skipped) << "" << false;
        QTest::newRow("pruned") << int(ResultStatus::Pruned) << "over the device's limits" << false;
    }

    void endsWhenAConfigRunsOrFailsOtherwise() {
        QFETCH(int, status);
        QFETCH(QString, message);
        QFETCH(bool, ends);
        FailureWatch watch(m_problem, m_space);
        watch.observe(failed(ResultStatus::CompileError, "boom"), 0);
        watch.observe(failed(static_cast<ResultStatus>(status), message.toStdString()), 1);
        QCOMPARE(watch.active(), !ends);
    }

    // Skipped and pruned results say nothing: they are not among the configs that failed alike.
    void skippedAndPrunedDoNotCount() {
        FailureWatch watch(m_problem, m_space);
        const std::vector<std::uint64_t> indices = acrossTheSpace(m_space);
        for (std::size_t i = 0; i < 4; ++i)
            watch.observe(failed(ResultStatus::CompileError, "boom"), indices[i]);
        watch.observe(failed(ResultStatus::Skipped, ""), indices[4]);
        watch.observe(failed(ResultStatus::Pruned, ""), indices[4]);
        QVERIFY(!watch.due());
    }

    void aDisabledWatchNeverStops() {
        FailureWatch watch(m_problem, m_space, false);
        QVERIFY(!watch.active());
        for (const std::uint64_t index : acrossTheSpace(m_space))
            watch.observe(failed(ResultStatus::CompileError, "boom"), index);
        QVERIFY(!watch.due());
    }

    // Compile errors are checked against a few configs compiled from anywhere in the space.
    void compileErrorsAreProbed_data() {
        QTest::addColumn<int>("probeStatus");
        QTest::addColumn<QString>("probeMessage");
        QTest::addColumn<bool>("stops");
        QTest::newRow("they fail alike") << int(CompileStatus::CompileError) << "boom" << true;
        QTest::newRow("one compiles") << int(CompileStatus::Ok) << "" << false;
        QTest::newRow("they fail otherwise") << int(CompileStatus::CompileError) << "another" << false;
        // Without a message the status's name stands for it.
        QTest::newRow("no kernel") << int(CompileStatus::NoKernel) << "" << false;
    }

    void compileErrorsAreProbed() {
        QFETCH(int, probeStatus);
        QFETCH(QString, probeMessage);
        QFETCH(bool, stops);
        // The configs that failed all have A = 1, so without probes A would explain it; the probes
        // come from anywhere.
        FailureWatch watch(m_problem, m_space);
        const auto indices = indicesWhere(m_space, 5, [](const Config& c) { return c[0] == 0; });
        for (const std::uint64_t index : indices)
            watch.observe(failed(ResultStatus::CompileError, "boom"), index);
        std::vector<Config> probed;
        const auto probe = [&](const Config& config) {
            probed.push_back(config);
            return ready(static_cast<CompileStatus>(probeStatus), probeMessage.toStdString());
        };
        const std::unordered_set<std::uint64_t> done(indices.begin(), indices.end());
        const std::string why = watch.check(done, 3, probe);
        QCOMPARE(probed.size(), std::size_t(4));
        for (const Config& c : probed)
            QVERIFY(!done.count(m_space.indexOf(c).value()));
        QCOMPARE(watch.active(), stops);
        if (!stops) {
            QCOMPARE(why, std::string());
            return;
        }
        // Only 3 configs with A = 1 are left, so a probe has another A.
        QVERIFY2(why.find("(the first 5 configs of this run and 4 more compiled from across the space)") !=
                     std::string::npos,
                 why.c_str());
    }

    // Without a compile service (a replay), compile errors are judged on the configs that failed.
    void withoutProbesCompileErrorsStand() {
        FailureWatch watch(m_problem, m_space);
        for (const std::uint64_t index : acrossTheSpace(m_space))
            watch.observe(failed(ResultStatus::CompileError, "boom"), index);
        const std::string why = watch.check({}, 0, {});
        QVERIFY2(why.find("compile_error: boom (the first 5 configs of this run)") != std::string::npos, why.c_str());
    }

    // Configs already done are never probed again: with every config done, none is.
    void doneConfigsAreNotProbed() {
        FailureWatch watch(m_problem, m_space);
        std::unordered_set<std::uint64_t> done;
        for (std::uint64_t i = 0; i < m_space.size(); ++i)
            done.insert(i);
        for (const std::uint64_t index : acrossTheSpace(m_space))
            watch.observe(failed(ResultStatus::CompileError, "boom"), index);
        int probes = 0;
        const std::string why = watch.check(done, 0, [&](const Config&) {
            ++probes;
            return ready(CompileStatus::Ok, "");
        });
        QCOMPARE(probes, 0);
        QVERIFY(!why.empty());
    }
};

QTEST_GUILESS_MAIN(TestFailureWatch)
#include "tst_failurewatch.moc"
