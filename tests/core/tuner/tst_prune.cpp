// What stops a compiled config before the device: a failed compile, a launch geometry that does
// not work out, a block over the device's limits, heavy spilling when asked.

#include "analysis/gpuarch.h"
#include "tuner/prune.h"

#include <QtTest>

using namespace tilescope;

namespace {

CompileResult compiled(int registers = 32, std::int64_t spillStores = 0, std::int64_t spillLoads = 0) {
    CompileResult cr;
    cr.status = CompileStatus::Ok;
    cr.info.registers = registers;
    cr.info.spillStores = spillStores;
    cr.info.spillLoads = spillLoads;
    return cr;
}

ConfigAnalysis analysed(std::int64_t threads, SpillClass spill = SpillClass::None) {
    ConfigAnalysis a;
    a.status = CompileStatus::Ok;
    a.geometry.block = {threads, 1, 1};
    a.spill = spill;
    return a;
}

} // namespace

class TestPrune : public QObject {
    Q_OBJECT

    std::optional<ArchLimits> m_sm90 = *findArch("sm_90");

private slots:
    void aConfigThatFitsIsMeasured() { QVERIFY(!verdictBeforeMeasuring(compiled(), analysed(256), m_sm90, true)); }

    void compileErrorsKeepTheirWordsAndLog() {
        CompileResult cr;
        cr.status = CompileStatus::CompileError;
        cr.message = "identifier \"X\" is undefined";
        cr.log = "k.cu(3): error: identifier \"X\" is undefined";
        const auto verdict = verdictBeforeMeasuring(cr, ConfigAnalysis{}, m_sm90, false);
        QVERIFY(verdict);
        QCOMPARE(verdict->status, ResultStatus::CompileError);
        QCOMPARE(verdict->message, cr.message);
        QCOMPARE(verdict->log, cr.log);
    }

    void aCompileFailureWithoutWordsIsNamedByItsStatus() {
        CompileResult cr;
        cr.status = CompileStatus::NoKernel;
        QCOMPARE(compileFailure(cr), std::string(compileStatusName(CompileStatus::NoKernel)));
        const auto verdict = verdictBeforeMeasuring(cr, ConfigAnalysis{}, m_sm90, false);
        QVERIFY(verdict);
        QCOMPARE(verdict->status, ResultStatus::CompileError);
        QCOMPARE(verdict->message, std::string("NoKernel"));
    }

    void aGeometryErrorIsALaunchError() {
        ConfigAnalysis a = analysed(256);
        a.geometry.error = "GlobalSize X: division by zero";
        const auto verdict = verdictBeforeMeasuring(compiled(), a, m_sm90, false);
        QVERIFY(verdict);
        QCOMPARE(verdict->status, ResultStatus::LaunchError);
        QCOMPARE(verdict->message, a.geometry.error);
    }

    void overTheDevicesLimitsIsPruned() {
        const auto verdict = verdictBeforeMeasuring(compiled(), analysed(2048), m_sm90, false);
        QVERIFY(verdict);
        QCOMPARE(verdict->status, ResultStatus::Pruned);
        QVERIFY2(verdict->message.rfind("over the device's limits: ", 0) == 0, verdict->message.c_str());
        // Registers count too: 255 per thread for 1024 threads is more than a block holds.
        QVERIFY(verdictBeforeMeasuring(compiled(255), analysed(1024), m_sm90, false));
        // Limits unknown: nothing to judge against, the device says.
        QVERIFY(!verdictBeforeMeasuring(compiled(), analysed(2048), std::nullopt, false));
    }

    void heavySpillsArePrunedOnlyWhenAsked() {
        const CompileResult cr = compiled(255, 300, 200);
        QVERIFY(!verdictBeforeMeasuring(cr, analysed(128, SpillClass::Heavy), m_sm90, false));
        QVERIFY(!verdictBeforeMeasuring(cr, analysed(128, SpillClass::Light), m_sm90, true));
        const auto verdict = verdictBeforeMeasuring(cr, analysed(128, SpillClass::Heavy), m_sm90, true);
        QVERIFY(verdict);
        QCOMPARE(verdict->status, ResultStatus::Pruned);
        QCOMPARE(verdict->message, std::string("heavy register spilling: 300 bytes stored, 200 loaded per thread"));
    }
};

QTEST_GUILESS_MAIN(TestPrune)
#include "tst_prune.moc"
