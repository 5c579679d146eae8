// core/analysis's static analysis: spill classes, the per-arch summaries of a space, and the
// analysis of a kernel that fails to compile for some configs or has no geometry for others.

#include "analysis/staticanalysis.h"
#include "base/error.h"
#include "compile/compileservice.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QtTest>

#include <string>
#include <vector>

using namespace tilescope;

namespace {

const char* const kBrokenProblem = TILESCOPE_SOURCE_DIR "/kernels/broken/broken.json";

} // namespace

class TestStaticAnalysis : public QObject {
    Q_OBJECT

private slots:
    void spillClass();
    void summaries();
    void brokenKernel();
    void geometryErrors();
};

void TestStaticAnalysis::spillClass() {
    StaticInfo info;
    QCOMPARE(classifySpill(info), SpillClass::None);
    info.stackFrame = 64; // a local array, no spill
    QCOMPARE(classifySpill(info), SpillClass::None);
    info.spillStores = 8;
    info.spillLoads = 8;
    QCOMPARE(classifySpill(info), SpillClass::Light);
    info.spillStores = 128;
    info.spillLoads = 128;
    QCOMPARE(classifySpill(info), SpillClass::Heavy);
    QCOMPARE(spillClassName(SpillClass::Heavy), std::string_view("heavy"));
}

void TestStaticAnalysis::summaries() {
    // Fabricated results for configs 0..3 on two archs: 1 spills on sm_80 only, 2 on both, 3 fails on sm_90.
    std::vector<ConfigAnalysis> results;
    auto add = [&](std::uint64_t index, const std::string& arch, CompileStatus status, std::int64_t spill,
                   double occupancyWarps, Limiter limiter) {
        ConfigAnalysis a;
        a.index = index;
        a.arch = arch;
        a.status = status;
        a.info.registers = 64;
        a.info.spillStores = spill;
        a.info.spillLoads = spill;
        a.spill = classifySpill(a.info);
        a.occupancy.launchable = status == CompileStatus::Ok;
        a.occupancy.maxWarps = 64;
        a.occupancy.activeWarps = static_cast<int>(occupancyWarps);
        a.occupancy.limiter = limiter;
        results.push_back(a);
    };
    add(0, "sm_90", CompileStatus::Ok, 0, 64, Limiter::Warps);
    add(0, "sm_80", CompileStatus::Ok, 0, 32, Limiter::Registers);
    add(1, "sm_90", CompileStatus::Ok, 0, 16, Limiter::Registers);
    add(1, "sm_80", CompileStatus::Ok, 8, 16, Limiter::Registers);
    add(2, "sm_90", CompileStatus::Ok, 400, 8, Limiter::Registers);
    add(2, "sm_80", CompileStatus::Ok, 400, 8, Limiter::Registers);
    add(3, "sm_90", CompileStatus::CompileError, 0, 0, Limiter::None);
    add(3, "sm_80", CompileStatus::Ok, 0, 48, Limiter::SharedMemory);
    const std::vector<std::string> archs = {"sm_90", "sm_80"};

    const std::vector<ArchSummary> s = summarizeByArch(results, archs);
    QCOMPARE(s.size(), std::size_t(2));
    QCOMPARE(s[0].arch, std::string("sm_90"));
    QCOMPARE(s[0].configs, std::size_t(4));
    QCOMPARE(s[0].compiled, std::size_t(3));
    QCOMPARE(s[0].failed, std::size_t(1));
    QCOMPARE(s[0].spilling, std::size_t(1));
    QCOMPARE(s[0].heavySpills, std::size_t(1));
    QCOMPARE(s[0].minOccupancy, 12.5);
    QCOMPARE(s[0].medianOccupancy, 25.0);
    QCOMPARE(s[0].maxOccupancy, 100.0);
    QCOMPARE(s[0].limiters[static_cast<std::size_t>(Limiter::Registers)], std::size_t(2));
    QCOMPARE(s[1].spilling, std::size_t(2));
    QCOMPARE(s[1].lightSpills, std::size_t(1));
    QCOMPARE(s[1].medianOccupancy, 37.5); // of 12.5, 25, 50, 75

    const std::vector<SpillDifference> d = spillDifferences(results, archs);
    QCOMPARE(d.size(), std::size_t(1));
    QCOMPARE(d[0].spillsOn, std::string("sm_80"));
    QCOMPARE(d[0].cleanOn, std::string("sm_90"));
    QCOMPARE(d[0].indices, std::vector<std::uint64_t>{1});
}

void TestStaticAnalysis::brokenKernel() {
    // UNROLL=3 does not compile: those configs report NVRTC's log, the others complete.
    const TuningProblem problem = TuningProblem::load(kBrokenProblem);
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    QCOMPARE(space.size(), std::uint64_t(48));
    std::vector<std::uint64_t> indices;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
        const Config config = space.at(i);
        // BLOCK=128 and ITEMS in {8, 256}: 6 configs, 2 of them broken, 2 spilling.
        if (space.value(config, 0).i == 128 && space.value(config, 1).i % 8 == 0 && space.value(config, 1).i != 64)
            indices.push_back(i);
    }
    QCOMPARE(indices.size(), std::size_t(6));

    const StaticAnalyzer analyzer(problem, 0);
    CompileService service({0, nullptr});
    std::size_t lastDone = 0;
    const std::vector<std::string> archs = {"sm_90"};
    const std::vector<ConfigAnalysis> results =
        analyzer.run(space, indices, archs, service, [&](std::size_t done, std::size_t total) {
            QVERIFY(done >= lastDone && total == 6);
            lastDone = done;
        });
    QCOMPARE(lastDone, std::size_t(6));
    QCOMPARE(results.size(), std::size_t(6));
    std::size_t broken = 0;
    std::size_t spilling = 0;
    for (std::size_t k = 0; k < results.size(); ++k) {
        const ConfigAnalysis& r = results[k];
        QCOMPARE(r.index, indices[k]);
        QCOMPARE(r.arch, std::string("sm_90"));
        QCOMPARE(r.geometry.threadsPerBlock(), std::int64_t(128));
        QCOMPARE(r.geometry.sharedDynamic, std::int64_t(4 * 128));
        if (space.value(r.config, 2).i == 3) {
            ++broken;
            QCOMPARE(r.status, CompileStatus::CompileError);
            QVERIFY2(r.log.find("the deliberate syntax error") != std::string::npos, r.log.c_str());
            QVERIFY2(r.message.find("error") != std::string::npos, r.message.c_str());
            QVERIFY(!r.occupancy.launchable);
            continue;
        }
        QVERIFY2(r.compiled(), r.message.c_str());
        QVERIFY(r.log.empty());
        QVERIFY(r.info.registers > 0);
        QVERIFY(r.occupancy.launchable);
        QVERIFY(r.occupancy.activeBlocks > 0);
        QCOMPARE(r.sharedBytes(), std::int64_t(512));
        if (space.value(r.config, 1).i == 256) {
            ++spilling;
            QVERIFY(r.spills());
            QVERIFY(r.spill != SpillClass::None);
            QCOMPARE(r.occupancy.limiter, Limiter::Registers);
        } else {
            QVERIFY(!r.spills());
        }
    }
    QCOMPARE(broken, std::size_t(2));
    QCOMPARE(spilling, std::size_t(2));

    const std::vector<ArchSummary> summary = summarizeByArch(results, archs);
    QCOMPARE(summary.size(), std::size_t(1));
    QCOMPARE(summary[0].configs, std::size_t(6));
    QCOMPARE(summary[0].failed, std::size_t(2));
    QCOMPARE(summary[0].spilling, std::size_t(2));

    const RuleSuggestion rule = suggestSpillRule(problem, 0, results, "sm_90");
    QVERIFY2(rule.found, rule.reason.c_str());
    QCOMPARE(rule.best.condition, std::string("ITEMS <= 8"));
    QCOMPARE(rule.best.counts.errors(), std::size_t(0));
}

void TestStaticAnalysis::geometryErrors() {
    // A LocalSize that raises for some configs: the compile result stays, the occupancy says why.
    TuningProblem problem = TuningProblem::load(kBrokenProblem);
    problem.localSize.x = "BLOCK // (ITEMS - 8)";
    const StaticAnalyzer analyzer(problem, 0);
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    Config config;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
        config = space.at(i);
        if (space.value(config, 1).i == 8)
            break;
    }
    const LaunchGeometry g = analyzer.geometry(config);
    QVERIFY2(g.error.find("ZeroDivisionError") != std::string::npos, g.error.c_str());
    CompileResult fake;
    fake.status = CompileStatus::Ok;
    fake.info.registers = 32;
    const ConfigAnalysis a = analyzer.analyze(0, config, "sm_90", fake);
    QVERIFY(a.compiled());
    QVERIFY(!a.occupancy.launchable);
    QVERIFY2(a.message.find("LocalSize.X") != std::string::npos, a.message.c_str());

    problem.localSize.x = "BLOCK +";
    QVERIFY_THROWS_EXCEPTION(InputError, StaticAnalyzer(problem, 0));
    problem.localSize.x = "BLOCK";
    QVERIFY_THROWS_EXCEPTION(InputError, StaticAnalyzer(problem, 5));
}

QTEST_GUILESS_MAIN(TestStaticAnalysis)
#include "tst_staticanalysis.moc"
