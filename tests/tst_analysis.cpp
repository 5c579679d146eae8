// core/analysis: theoretical occupancy against hand-computed cases on several archs, the arch
// table, spill classes, the register-pressure rule search on synthetic labels and on recorded
// sgemm results, and the analysis of a kernel that fails to compile for some configs. The
// tilescope-cli analyze command is run as a user runs it.

#include "analysis/clocks.h"
#include "analysis/confidence.h"
#include "analysis/devicecompare.h"
#include "analysis/gpuarch.h"
#include "analysis/occupancy.h"
#include "analysis/rulesuggest.h"
#include "analysis/staticanalysis.h"
#include "base/error.h"
#include "compile/compileservice.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

using namespace tilescope;

namespace {

const char* const kBrokenProblem = TILESCOPE_SOURCE_DIR "/kernels/broken/broken.json";
const char* const kSgemmProblem = TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json";
const char* const kSgemmRecord = TILESCOPE_TEST_DATA "/analysis/sgemm_static.csv";
const QString kCli = QStringLiteral(TILESCOPE_CLI);

struct Param {
    std::string name;
    std::vector<std::int64_t> values;
};

TuningProblem makeProblem(const std::vector<Param>& params, const std::string& localSize) {
    TuningProblem problem;
    problem.fileName = "synthetic.json";
    problem.kernelName = "k";
    for (const Param& p : params) {
        TuningParameter tp;
        tp.name = p.name;
        tp.type = "int";
        for (std::int64_t v : p.values)
            tp.values.push_back(expr::Value::ofInt(v));
        tp.valuesText = expr::repr(expr::ValueList(tp.values).value());
        problem.parameters.push_back(std::move(tp));
    }
    problem.localSize.x = localSize;
    problem.shapes = {Shape{}};
    return problem;
}

// Every config of the raw space (mixed radix, first parameter slowest) with its label.
std::vector<RuleSample> label(const TuningProblem& problem,
                              const std::function<bool(const std::vector<std::int64_t>&)>& positive) {
    std::vector<RuleSample> samples;
    const std::size_t n = problem.parameters.size();
    Config config(n, 0);
    for (;;) {
        std::vector<std::int64_t> values(n);
        for (std::size_t p = 0; p < n; ++p)
            values[p] = problem.parameters[p].values[config[p]].i;
        samples.push_back({config, positive(values)});
        std::size_t p = n;
        while (p > 0) {
            --p;
            if (++config[p] < problem.parameters[p].values.size())
                break;
            config[p] = 0;
            if (p == 0)
                return samples;
        }
    }
}

struct CliRun {
    int status = -1;
    QString out;
    QString err;
};

CliRun runCli(const QStringList& args) {
    QProcess process;
    process.start(kCli, args);
    CliRun run;
    if (!process.waitForFinished(300000)) {
        process.kill();
        return run;
    }
    run.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

// One row of tests/data/analysis/sgemm_static.csv: the 7 sgemm parameters and, for sm_90 and
// sm_80, registers, spill stores and spill loads.
struct SgemmRow {
    std::vector<std::int64_t> params;
    std::map<std::string, StaticInfo> byArch;
};

std::vector<SgemmRow> readSgemmRecord() {
    std::ifstream in(kSgemmRecord);
    std::vector<SgemmRow> rows;
    std::string line;
    std::getline(in, line); // header
    while (std::getline(in, line)) {
        std::vector<std::int64_t> v;
        std::stringstream fields(line);
        std::string field;
        while (std::getline(fields, field, ','))
            v.push_back(std::stoll(field));
        if (v.size() != 13)
            continue;
        SgemmRow row;
        row.params.assign(v.begin(), v.begin() + 7);
        for (int a = 0; a < 2; ++a) {
            StaticInfo info;
            info.registers = static_cast<int>(v[7 + 3 * a]);
            info.spillStores = v[8 + 3 * a];
            info.spillLoads = v[9 + 3 * a];
            row.byArch[a == 0 ? "sm_90" : "sm_80"] = info;
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

Config configOf(const TuningProblem& problem, const std::vector<std::int64_t>& values) {
    Config config;
    for (std::size_t p = 0; p < problem.parameters.size(); ++p) {
        const auto& list = problem.parameters[p].values;
        const auto it = std::find_if(list.begin(), list.end(), [&](const expr::Value& v) { return v.i == values[p]; });
        config.push_back(static_cast<std::uint16_t>(it - list.begin()));
    }
    return config;
}

} // namespace

class TestAnalysis : public QObject {
    Q_OBJECT

private slots:
    void archTable();
    void occupancy_data();
    void occupancy();
    void occupancyBlocksMatchTable();
    void spillClass();
    void summaries();
    void ruleSynthetic_data();
    void ruleSynthetic();
    void ruleNoisy();
    void ruleDegenerate();
    void ruleOnSgemmRecord_data();
    void ruleOnSgemmRecord();
    void sgemmRecordIsCurrent();
    void brokenKernel();
    void geometryErrors();
    void cliAnalyze();
    void cliBadInput_data();
    void cliBadInput();
    void bootstrapCoversTheMedian();
    void indistinguishableSet();
    void measuredDeviceState();
    void deviceComparison();
};

void TestAnalysis::archTable() {
    for (const char* arch :
         {"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110", "sm_120", "sm_121"}) {
        const ArchLimits* limits = findArch(arch);
        QVERIFY2(limits, arch);
        QCOMPARE(limits->arch, std::string(arch));
        QVERIFY(limits->maxWarpsPerSm >= 32 && limits->maxBlocksPerSm >= 16);
        QVERIFY(limits->sharedPerBlockOptIn <= limits->sharedPerSm);
        QCOMPARE(limits->sharedPerSm - limits->sharedPerBlockOptIn, limits->reservedSharedPerBlock);
    }
    QCOMPARE(findArch("sm_90a"), findArch("sm_90"));
    QCOMPARE(findArch("sm_100f"), findArch("sm_100"));
    QVERIFY(!findArch("sm_88")); // NVRTC 13.0 compiles for it; NVIDIA does not document its limits
    QVERIFY(!findArch("compute_90"));
    QVERIFY(!findArch("sm_"));
    QVERIFY(!findArch("sm_90x"));

    // Every table entry is an arch this NVRTC compiles for.
    const std::vector<std::string> analysable = StaticAnalyzer::analysableArchs();
    QCOMPARE(analysable.size(), knownArchs().size());
    StaticAnalyzer::checkArch("sm_90");
    StaticAnalyzer::checkArch("sm_90a");
    QVERIFY_THROWS_EXCEPTION(InputError, StaticAnalyzer::checkArch("sm_88"));
    QVERIFY_THROWS_EXCEPTION(InputError, StaticAnalyzer::checkArch("sm_50"));
    try {
        StaticAnalyzer::checkArch("sm_91");
        QFAIL("sm_91 accepted");
    } catch (const InputError& error) {
        QVERIFY2(std::string(error.what()).find("sm_75") != std::string::npos, error.what());
    }
}

void TestAnalysis::occupancy_data() {
    QTest::addColumn<QString>("arch");
    QTest::addColumn<int>("registers");
    QTest::addColumn<qint64>("sharedStatic");
    QTest::addColumn<qint64>("sharedDynamic");
    QTest::addColumn<int>("barriers");
    QTest::addColumn<int>("blockSize");
    QTest::addColumn<int>("blocks");     // resident blocks per SM, by hand
    QTest::addColumn<double>("percent"); // theoretical occupancy
    QTest::addColumn<QString>("limiter");

    // Registers: 128 x 32 = 4096 per warp; a sub-partition's 16384 hold 4 warps, the SM 16 = 2
    // blocks of 8 warps. (Warps allow 8 blocks, shared memory 233472 / 17408 = 13.)
    QTest::newRow("sm_90 registers") << "sm_90" << 128 << qint64(16384) << qint64(0) << 1 << 256 << 2 << 25.0
                                     << "registers";
    // 255 registers round to 8192 per warp: 2 warps per sub-partition, 8 per SM = 2 blocks of 4.
    QTest::newRow("sm_100 registers") << "sm_100" << 255 << qint64(0) << qint64(0) << 1 << 128 << 2 << 12.5
                                      << "registers";
    // Shared memory: 48 KB + 1 KB reserved = 50176 per block; 167936 per SM hold 3. (Registers
    // and warps allow 16.)
    QTest::newRow("sm_80 shared") << "sm_80" << 32 << qint64(49152) << qint64(0) << 1 << 128 << 3 << 18.75
                                  << "shared_memory";
    // Dynamic shared memory beyond 48 KB (opted in): 64 KB + 1 KB per block; 100 KB per SM hold 1
    // block of 8 warps of 48. (Registers allow 4, warps 6.)
    QTest::newRow("sm_120 dynamic shared")
        << "sm_120" << 64 << qint64(0) << qint64(65536) << 1 << 256 << 1 << (100.0 * 8 / 48) << "shared_memory";
    // Warps: a 1024-thread block is 32 warps; 48 per SM hold 1. (Registers allow 2.)
    QTest::newRow("sm_86 warps") << "sm_86" << 32 << qint64(0) << qint64(0) << 1 << 1024 << 1 << (100.0 * 32 / 48)
                                 << "warps";
    // Blocks: 16 one-warp blocks on Turing fill half of its 32 warps.
    QTest::newRow("sm_75 blocks") << "sm_75" << 16 << qint64(0) << qint64(0) << 1 << 32 << 16 << 50.0 << "blocks";
    // Blocks: 24 one-warp blocks of 48 warps on Ada.
    QTest::newRow("sm_89 blocks") << "sm_89" << 32 << qint64(0) << qint64(0) << 1 << 32 << 24 << 50.0 << "blocks";
    // Full: registers and warps both allow 8 blocks of 8 warps; at 100 % the limiter is warps.
    QTest::newRow("sm_90 full") << "sm_90" << 32 << qint64(0) << qint64(0) << 1 << 256 << 8 << 100.0 << "warps";
    // Barriers: 16 named barriers per block; Hopper has 2 per resident block slot, 64 / 16 = 4.
    QTest::newRow("sm_90 barriers") << "sm_90" << 16 << qint64(0) << qint64(0) << 16 << 32 << 4 << 6.25 << "barriers";
    // Cannot launch: too many threads, shared memory beyond the opt-in limit, registers beyond a block's.
    QTest::newRow("sm_90 2048 threads") << "sm_90" << 16 << qint64(0) << qint64(0) << 1 << 2048 << 0 << 0.0 << "warps";
    QTest::newRow("sm_86 100 KB shared") << "sm_86" << 32 << qint64(0) << qint64(102400) << 1 << 128 << 0 << 0.0
                                         << "shared_memory";
    QTest::newRow("sm_80 128 regs x 1024")
        << "sm_80" << 128 << qint64(0) << qint64(0) << 1 << 1024 << 0 << 0.0 << "registers";
}

void TestAnalysis::occupancy() {
    QFETCH(QString, arch);
    QFETCH(int, registers);
    QFETCH(qint64, sharedStatic);
    QFETCH(qint64, sharedDynamic);
    QFETCH(int, barriers);
    QFETCH(int, blockSize);
    QFETCH(int, blocks);
    QFETCH(double, percent);
    QFETCH(QString, limiter);

    const ArchLimits* limits = findArch(arch.toStdString());
    QVERIFY(limits);
    KernelResources kernel;
    kernel.registers = registers;
    kernel.sharedStatic = sharedStatic;
    kernel.sharedDynamic = sharedDynamic;
    kernel.barriers = barriers;
    kernel.blockSize = blockSize;
    const Occupancy occ = theoreticalOccupancy(*limits, kernel);
    QCOMPARE(occ.activeBlocks, blocks);
    QCOMPARE(occ.launchable, blocks > 0);
    QVERIFY2(qAbs(occ.percent() - percent) < 1e-9, qPrintable(QString::number(occ.percent())));
    QCOMPARE(QString::fromUtf8(limiterName(occ.limiter).data()), limiter);
    QVERIFY(occ.limitedBy(occ.limiter));
    if (blocks == 0)
        QVERIFY2(!occ.reason.empty(), "a config that cannot launch says why");
    else
        QCOMPARE(occ.activeWarps, blocks * ((blockSize + 31) / 32));
}

void TestAnalysis::occupancyBlocksMatchTable() {
    // One-warp blocks with nothing else are bound by blocks per SM alone; the calculator's own
    // count must agree with the table.
    for (const ArchLimits& arch : knownArchs()) {
        KernelResources kernel;
        kernel.registers = 8;
        kernel.blockSize = 32;
        const Occupancy occ = theoreticalOccupancy(arch, kernel);
        QVERIFY2(occ.activeBlocks == arch.maxBlocksPerSm, arch.arch.c_str());
        QCOMPARE(occ.limiter, Limiter::Blocks);
        QCOMPARE(occ.maxWarps, arch.maxWarpsPerSm);
    }
}

void TestAnalysis::spillClass() {
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

void TestAnalysis::summaries() {
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

void TestAnalysis::ruleSynthetic_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("expected");
    QTest::newRow("per-thread product") << 0 << "A * B <= 32";
    QTest::newRow("union of two regions") << 1 << "A <= 4 and C <= 64";
    QTest::newRow("block size") << 2 << "C <= 64";
    QTest::newRow("lower bound") << 3 << "B >= 2";
}

void TestAnalysis::ruleSynthetic() {
    QFETCH(int, kind);
    QFETCH(QString, expected);
    const TuningProblem problem =
        makeProblem({{"A", {1, 2, 4, 8, 16}}, {"B", {1, 2, 4, 8, 16}}, {"C", {32, 64, 128}}, {"D", {0, 1}}}, "C * 2");
    const std::vector<RuleSample> samples = label(problem, [&](const std::vector<std::int64_t>& v) {
        switch (kind) {
        case 0:
            return v[0] * v[1] > 32;
        case 1:
            return v[0] >= 8 || v[2] == 128;
        case 2:
            return v[2] * 2 > 128;
        default:
            return v[1] < 2;
        }
    });
    const RuleSuggestion s = suggestRule(problem, 0, samples);
    QVERIFY2(s.found, s.reason.c_str());
    QCOMPARE(QString::fromStdString(s.best.condition), expected);
    QCOMPARE(s.best.counts.errors(), std::size_t(0));
    QCOMPARE(s.best.counts.total, samples.size());
    QVERIFY(!s.catchAll); // best already catches everything
    QCOMPARE(evaluateRule(problem, 0, s.best.condition, samples), s.best.counts);
    for (const SuggestedRule& alternative : s.alternatives) {
        QVERIFY(alternative.condition != s.best.condition);
        QCOMPARE(evaluateRule(problem, 0, alternative.condition, samples), alternative.counts);
    }
}

void TestAnalysis::ruleNoisy() {
    // One config spills against the trend: the best rule gives it up; the catch-all rule takes it
    // at the price of removing clean ones, and says how many.
    const TuningProblem problem =
        makeProblem({{"A", {1, 2, 4, 8, 16}}, {"B", {1, 2, 4, 8, 16}}, {"C", {32, 64, 128}}}, "C");
    const std::vector<RuleSample> samples = label(problem, [](const std::vector<std::int64_t>& v) {
        return v[0] * v[1] > 32 || (v[0] == 2 && v[1] == 1 && v[2] == 64);
    });
    const RuleSuggestion s = suggestRule(problem, 0, samples);
    QVERIFY2(s.found, s.reason.c_str());
    QCOMPARE(s.best.condition, std::string("A * B <= 32"));
    QCOMPARE(s.best.counts.missed(), std::size_t(1));
    QCOMPARE(s.best.counts.prunedNegatives, std::size_t(0));
    QVERIFY(s.catchAll);
    QCOMPARE(s.catchAll->counts.missed(), std::size_t(0));
    QVERIFY(s.catchAll->counts.prunedNegatives > 0);
    QCOMPARE(evaluateRule(problem, 0, s.catchAll->condition, samples), s.catchAll->counts);
}

void TestAnalysis::ruleDegenerate() {
    const TuningProblem problem = makeProblem({{"A", {1, 2, 4}}, {"B", {1, 2}}}, "32");
    RuleSuggestion s = suggestRule(problem, 0, label(problem, [](const auto&) { return false; }));
    QVERIFY(!s.found);
    QVERIFY2(s.reason.find("no config spills") != std::string::npos, s.reason.c_str());
    s = suggestRule(problem, 0, label(problem, [](const auto&) { return true; }));
    QVERIFY(!s.found);
    QVERIFY2(s.reason.find("every config spills") != std::string::npos, s.reason.c_str());
    s = suggestRule(problem, 0, {});
    QVERIFY(!s.found);
    QVERIFY_THROWS_EXCEPTION(InputError, evaluateRule(problem, 0, "A <=", {}));
}

void TestAnalysis::ruleOnSgemmRecord_data() {
    QTest::addColumn<QString>("arch");
    QTest::newRow("sm_90") << "sm_90";
    QTest::newRow("sm_80") << "sm_80";
}

void TestAnalysis::ruleOnSgemmRecord() {
    // Every valid sgemm config as compiled by NVRTC 13.0 (tests/data/analysis/README.md says how
    // the record was made). Spilling in sgemm follows ptxas' heuristics under __launch_bounds__ as
    // much as the tile sizes: no simple bound separates it exactly. The rule must still catch most
    // spilling configs and most heavy ones while removing few clean ones, reproduce its
    // counts, and the catch-all rule must catch every spilling config (whatever it costs; it is
    // reported).
    QFETCH(QString, arch);
    const TuningProblem problem = TuningProblem::load(kSgemmProblem);
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const std::vector<SgemmRow> rows = readSgemmRecord();
    QCOMPARE(rows.size(), std::size_t(space.size()));

    std::vector<RuleSample> any;
    std::vector<RuleSample> heavy;
    for (const SgemmRow& row : rows) {
        const Config config = configOf(problem, row.params);
        QVERIFY(space.isValid(config));
        const StaticInfo& info = row.byArch.at(arch.toStdString());
        any.push_back({config, info.spills()});
        heavy.push_back({config, classifySpill(info) == SpillClass::Heavy});
    }
    QElapsedTimer timer;
    timer.start();
    const RuleSuggestion s = suggestRule(problem, 0, any);
    const qint64 ms = timer.elapsed();
    QVERIFY2(s.found, s.reason.c_str());
    QVERIFY(s.catchAll);
    const RuleCounts heavyCounts = evaluateRule(problem, 0, s.best.condition, heavy);
    auto report = [](const char* what, const SuggestedRule& r) {
        qInfo("%s: %s\n    prunes %zu of %zu: caught %zu of %zu spilling, kept %zu, wrongly removed %zu", what,
              r.condition.c_str(), r.counts.pruned, r.counts.total, r.counts.prunedPositives, r.counts.positives,
              r.counts.missed(), r.counts.prunedNegatives);
    };
    report("best", s.best);
    qInfo("    of the %zu heavy spills it catches %zu", heavyCounts.positives, heavyCounts.prunedPositives);
    report("catch-all", *s.catchAll);
    qInfo("searched in %lld ms", static_cast<long long>(ms));

    for (const SuggestedRule* rule : {&s.best, &*s.catchAll})
        QCOMPARE(evaluateRule(problem, 0, rule->condition, any), rule->counts);
    QCOMPARE(countPrunedInSpace(problem, space, 0, s.best.condition), std::uint64_t(s.best.counts.pruned));

    const RuleCounts& c = s.best.counts;
    QVERIFY2(c.prunedPositives * 10 >= c.positives * 6, "the rule catches less than 60 % of the spilling configs");
    QVERIFY2(heavyCounts.prunedPositives * 100 >= heavyCounts.positives * 85,
             "the rule catches less than 85 % of the heavy spills");
    QVERIFY2(c.prunedNegatives * 100 <= (c.total - c.positives) * 7, "the rule removes more than 7 % of the clean");
    QCOMPARE(s.catchAll->counts.missed(), std::size_t(0));
    QVERIFY2(ms < 20000, "the rule search is slow");
}

void TestAnalysis::sgemmRecordIsCurrent() {
    // The record must match what this NVRTC and sgemm.cu give: a few configs, recompiled for both
    // of its archs, every recorded field compared.
    const TuningProblem problem = TuningProblem::load(kSgemmProblem);
    const RequestBuilder builder(problem);
    const std::vector<SgemmRow> rows = readSgemmRecord();
    QCOMPARE(rows.size(), std::size_t(2761));
    const auto sm90 = [](const SgemmRow& r) -> const StaticInfo& { return r.byArch.at("sm_90"); };
    // The first spilling and the first clean one on sm_90, and the one with most registers without
    // spilling (the heaviest spills take ten times as long to compile).
    const auto spilling = std::find_if(rows.begin(), rows.end(), [&](const SgemmRow& r) { return sm90(r).spills(); });
    const auto clean = std::find_if(rows.begin(), rows.end(), [&](const SgemmRow& r) { return !sm90(r).spills(); });
    QVERIFY(spilling != rows.end() && clean != rows.end());
    auto mostRegisters = clean;
    for (auto it = rows.begin(); it != rows.end(); ++it)
        if (!sm90(*it).spills() && sm90(*it).registers > sm90(*mostRegisters).registers)
            mostRegisters = it;
    QVERIFY(sm90(*mostRegisters).registers > sm90(*clean).registers);
    std::vector<std::size_t> picks;
    for (auto it : {spilling, clean, mostRegisters})
        picks.push_back(static_cast<std::size_t>(it - rows.begin()));

    CompileService service({0, nullptr});
    std::vector<CompileRequest> requests;
    std::vector<std::pair<std::size_t, std::string>> what; // (row, arch) of each request
    for (std::size_t i : picks) {
        for (const char* arch : {"sm_90", "sm_80"}) {
            requests.push_back(builder.request(configOf(problem, rows[i].params), arch));
            what.emplace_back(i, arch);
        }
    }
    const std::vector<CompileResult> results = service.compileAll(requests);
    QCOMPARE(results.size(), requests.size());
    for (std::size_t k = 0; k < results.size(); ++k) {
        QVERIFY2(results[k].ok(), results[k].message.c_str());
        const StaticInfo& recorded = rows[what[k].first].byArch.at(what[k].second);
        const StaticInfo& now = results[k].info;
        const std::string where =
            "tests/data/analysis/sgemm_static.csv row " + std::to_string(what[k].first + 2) + ", " + what[k].second +
            ": recorded " + std::to_string(recorded.registers) + " registers, spills " +
            std::to_string(recorded.spillStores) + "/" + std::to_string(recorded.spillLoads) + " B; compiled " +
            std::to_string(now.registers) + ", " + std::to_string(now.spillStores) + "/" +
            std::to_string(now.spillLoads) + " B. The record is stale: regenerate it (tests/data/analysis/README.md)";
        QVERIFY2(now.registers == recorded.registers && now.spillStores == recorded.spillStores &&
                     now.spillLoads == recorded.spillLoads,
                 where.c_str());
    }
}

void TestAnalysis::brokenKernel() {
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

void TestAnalysis::geometryErrors() {
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

void TestAnalysis::cliAnalyze() {
    QVERIFY2(QFile::exists(kCli), qPrintable(kCli + QStringLiteral(" is missing: the tests build it")));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString csv = dir.filePath(QStringLiteral("out.csv"));
    const QStringList args = {QStringLiteral("analyze"),
                              QString::fromLatin1(kBrokenProblem),
                              QStringLiteral("--arch"),
                              QStringLiteral("sm_90,sm_80"),
                              QStringLiteral("--sample"),
                              QStringLiteral("6"),
                              QStringLiteral("--seed"),
                              QStringLiteral("3"),
                              QStringLiteral("--cache-dir"),
                              dir.filePath(QStringLiteral("cache")),
                              QStringLiteral("--json"),
                              QStringLiteral("--csv"),
                              csv};
    const CliRun first = runCli(args);
    QVERIFY2(first.status == 0, qPrintable(first.err));
    const nlohmann::json records = nlohmann::json::parse(first.out.toStdString());
    QVERIFY(records.is_array());
    QCOMPARE(records.size(), std::size_t(12));
    std::size_t errors = 0;
    for (const auto& record : records) {
        for (const char* key : {"config", "arch", "registers", "spill_stores", "spill_loads", "stack_frame",
                                "shared_bytes", "occupancy", "limiter"})
            QVERIFY2(record.contains(key), key);
        QVERIFY(record["config"].contains("BLOCK") && record["config"].contains("ITEMS"));
        // UNROLL=3 is the broken variant: those, and only those, do not compile.
        const bool broken = record["config"]["UNROLL"].get<int>() == 3;
        QCOMPARE(QString::fromStdString(record["status"].get<std::string>()),
                 QString::fromLatin1(broken ? "compile_error" : "ok"));
        if (record["status"] == "compile_error") {
            ++errors;
            QVERIFY(record["registers"].is_null());
            QVERIFY(record["log"].get<std::string>().find("deliberate syntax error") != std::string::npos);
        } else {
            QCOMPARE(record["status"].get<std::string>(), std::string("ok"));
            QVERIFY(record["registers"].get<int>() > 0);
            QVERIFY(record["occupancy"].get<double>() > 0);
            QCOMPARE(record["shared_bytes"].get<std::int64_t>(), 4 * record["config"]["BLOCK"].get<std::int64_t>());
        }
    }
    QCOMPARE(errors, std::size_t(6)); // the sample of seed 3 holds three UNROLL=3 configs, each for two archs
    QVERIFY(first.err.contains(QStringLiteral("Summary")));
    QVERIFY2(first.err.contains(QStringLiteral("compiled 12/12")), qPrintable(first.err));

    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csvFile.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 13);
    QVERIFY(lines[0].startsWith(QStringLiteral("index,BLOCK,ITEMS,UNROLL,arch,status,registers")));

    // Again: everything from the cache, the same records bar the cached flag; the text table.
    QStringList textArgs = args.mid(0, 10);
    const CliRun second = runCli(textArgs);
    QVERIFY2(second.status == 0, qPrintable(second.err));
    QVERIFY2(second.err.contains(QStringLiteral("12 from the cache")), qPrintable(second.err));
    QVERIFY(second.out.contains(QStringLiteral("occ %")));
    QVERIFY(second.out.contains(QStringLiteral("Summary")));
    QVERIFY2(second.out.contains(QStringLiteral("Compile errors")), qPrintable(second.out));
    QVERIFY2(second.out.contains(QStringLiteral("deliberate syntax error")), qPrintable(second.out));
}

void TestAnalysis::cliBadInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("inMessage");
    const QString problem = QString::fromLatin1(kBrokenProblem);
    QTest::newRow("unknown arch") << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--arch"),
                                                 QStringLiteral("sm_91")}
                                  << "sm_91";
    QTest::newRow("arch without a table")
        << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--arch"), QStringLiteral("sm_88")}
        << "occupancy limits";
    QTest::newRow("shape out of range") << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--shape"),
                                                       QStringLiteral("4")}
                                        << "shape 4";
    QTest::newRow("missing problem") << QStringList{QStringLiteral("analyze"), QStringLiteral("/no/such/problem.json")}
                                     << "no/such/problem.json";
    QTest::newRow("all and sample") << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--all"),
                                                   QStringLiteral("--sample"), QStringLiteral("3")}
                                    << "exclude";
    QTest::newRow("cache-dir and no-cache")
        << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--no-cache"), QStringLiteral("--cache-dir"),
                       QStringLiteral("/tmp")}
        << "exclude";
}

void TestAnalysis::cliBadInput() {
    QFETCH(QStringList, args);
    QFETCH(QString, inMessage);
    QVERIFY2(QFile::exists(kCli), qPrintable(kCli + QStringLiteral(" is missing: the tests build it")));
    const CliRun run = runCli(args);
    QCOMPARE(run.status, 2);
    QVERIFY2(run.err.contains(inMessage, Qt::CaseInsensitive), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
}

// A noise model of kernel timings: 1 % log-normal jitter, and one sample in 20 slowed by 10 to
// 30 % (a clock dip, another process). The 95 % bootstrap interval of the median of 25 samples
// holds the model's true median (estimated from 2 million draws) at close to the stated rate (the
// percentile bootstrap of a median covers a little under its level at this size: 92.7 % here).
void TestAnalysis::bootstrapCoversTheMedian() {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> jitter(0.0, 0.01);
    std::bernoulli_distribution slowed(0.05);
    std::uniform_real_distribution<double> slowBy(1.1, 1.3);
    auto draw = [&] { return 0.2 * std::exp(jitter(rng)) * (slowed(rng) ? slowBy(rng) : 1.0); };
    std::vector<double> many(2'000'000);
    for (double& x : many)
        x = draw();
    const double trueMedian = medianOf(many);
    int covered = 0;
    double width = 0;
    constexpr int kTrials = 600;
    for (int t = 0; t < kTrials; ++t) {
        std::vector<double> samples(25);
        for (double& x : samples)
            x = draw();
        const MedianInterval ci = bootstrapMedian(samples, 0.95, 1000, static_cast<std::uint64_t>(t) + 1);
        QVERIFY(ci.low <= ci.median && ci.median <= ci.high);
        covered += ci.low <= trueMedian && trueMedian <= ci.high;
        width += ci.relativeHalfWidth();
    }
    const double rate = static_cast<double>(covered) / kTrials;
    qInfo("95 %% bootstrap interval of the median of 25 samples: covers the true median in %.1f %% of %d trials, "
          "mean half-width %.2f %%",
          100 * rate, kTrials, 100 * width / kTrials);
    QVERIFY2(rate >= 0.90 && rate <= 0.99, qPrintable(QString::number(rate)));
    // A 50 % interval is narrower and covers less often.
    int coveredHalf = 0;
    for (int t = 0; t < kTrials; ++t) {
        std::vector<double> samples(25);
        for (double& x : samples)
            x = draw();
        const MedianInterval ci = bootstrapMedian(samples, 0.5, 1000, static_cast<std::uint64_t>(t) + 1);
        coveredHalf += ci.low <= trueMedian && trueMedian <= ci.high;
    }
    QVERIFY(coveredHalf < covered);
    // Edge cases: the same seed gives the same interval; one sample, none, NaN left out.
    const std::vector<double> few = {1.0, 1.2, 0.9, 1.1, 1.05};
    const MedianInterval a = bootstrapMedian(few, 0.95, 500, 3);
    const MedianInterval b = bootstrapMedian(few, 0.95, 500, 3);
    QCOMPARE(a.low, b.low);
    QCOMPARE(a.high, b.high);
    QCOMPARE(a.median, 1.05);
    const std::vector<double> one = {2.0, std::nan("")};
    const MedianInterval single = bootstrapMedian(one);
    QCOMPARE(single.samples, std::size_t(1));
    QCOMPARE(single.low, 2.0);
    QCOMPARE(single.high, 2.0);
    QCOMPARE(bootstrapMedian(std::vector<double>{}).samples, std::size_t(0));
    QCOMPARE(medianOf({4.0, 1.0, 3.0, 2.0}), 2.5);
}

void TestAnalysis::indistinguishableSet() {
    auto interval = [](double median, double low, double high) {
        MedianInterval m;
        m.median = median;
        m.low = low;
        m.high = high;
        return m;
    };
    // The best (index 2), two that overlap it (0 touches its upper end), one clearly slower.
    const std::vector<MedianInterval> four = {interval(1.05, 1.03, 1.07), interval(1.20, 1.15, 1.25),
                                              interval(1.00, 0.98, 1.03), interval(1.02, 1.00, 1.04)};
    QCOMPARE(indistinguishableFromBest(four), (std::vector<std::size_t>{2, 0, 3}));
    // A tight best alone.
    const std::vector<MedianInterval> apart = {interval(1.0, 0.999, 1.001), interval(1.01, 1.005, 1.015)};
    QCOMPARE(indistinguishableFromBest(apart), (std::vector<std::size_t>{0}));
    // Ties go to the earlier; nothing in, nothing out.
    const std::vector<MedianInterval> tie = {interval(1.0, 0.9, 1.1), interval(1.0, 0.95, 1.05)};
    QCOMPARE(indistinguishableFromBest(tie), (std::vector<std::size_t>{0, 1}));
    QVERIFY(indistinguishableFromBest({}).empty());
    // From samples: two configs 0.2 % apart in 1 % noise cannot be told apart; 5 % apart they can.
    std::mt19937_64 rng(11);
    std::normal_distribution<double> noise(0.0, 0.01);
    auto samplesAt = [&](double ms) {
        std::vector<double> xs(40);
        for (double& x : xs)
            x = ms * (1 + noise(rng));
        return xs;
    };
    const std::vector<MedianInterval> close = {bootstrapMedian(samplesAt(1.0)), bootstrapMedian(samplesAt(1.002))};
    QCOMPARE(indistinguishableFromBest(close).size(), std::size_t(2));
    const std::vector<MedianInterval> far = {bootstrapMedian(samplesAt(1.0)), bootstrapMedian(samplesAt(1.05))};
    QCOMPARE(indistinguishableFromBest(far), (std::vector<std::size_t>{0}));
}

void TestAnalysis::measuredDeviceState() {
    // Steady clocks: no note, the range in the provenance and a sentence for people.
    DeviceStateRange steady;
    for (int i = 0; i < 20; ++i)
        steady.add(DeviceState{1980 - (i % 3) * 15, 3201, 35 + i / 4, 0, 300.0 + i, 0});
    QCOMPARE(steady.count(), std::size_t(20));
    QCOMPARE(steady.movedNote(), std::string()); // 1950-1980 MHz is within 2 %
    const auto j = nlohmann::json::parse(steady.json());
    QCOMPARE(j["sm_clock_mhz"][0].get<int>(), 1950);
    QCOMPARE(j["sm_clock_mhz"][2].get<int>(), 1980);
    QCOMPARE(j["temperature_c"][1].get<int>(), 39);
    QCOMPARE(j["moved"].get<bool>(), false);
    const std::string provenance = nlohmann::json{{"measured_state", j}}.dump();
    bool moved = true;
    const std::string sentence = measuredStateSentence(provenance, &moved);
    QVERIFY(!moved);
    QVERIFY2(sentence.find("SM 1950-1980 MHz") == 0, sentence.c_str());
    QVERIFY2(sentence.find("memory 3201 MHz") != std::string::npos, sentence.c_str());
    QVERIFY2(sentence.find("P0") != std::string::npos, sentence.c_str());

    // A GPU that throttled: the SM clock fell by a third under a power cap, the P-state changed.
    DeviceStateRange throttled = steady;
    throttled.add(DeviceState{1320, 3201, 84, 2, 700, 0x4});
    const std::string note = throttled.movedNote();
    QVERIFY2(note.find("1320-1980 MHz") != std::string::npos, note.c_str());
    QVERIFY2(note.find("P-state") != std::string::npos, note.c_str());
    QVERIFY2(note.find("power cap") != std::string::npos, note.c_str());
    const std::string moving = nlohmann::json{{"measured_state", nlohmann::json::parse(throttled.json())}}.dump();
    QVERIFY(measuredStateSentence(moving, &moved).find("clocks moved") != std::string::npos);
    QVERIFY(moved);

    // Idle and application-clock reasons are normal; states without an SM clock are not counted.
    DeviceStateRange idle;
    idle.add(DeviceState{1980, 3201, 30, 0, 0, 0x1 | 0x2});
    idle.add(DeviceState{});
    QCOMPARE(idle.count(), std::size_t(1));
    QCOMPARE(idle.movedNote(), std::string());
    QCOMPARE(slowdownReasons(0x1 | 0x2), std::string());
    QCOMPARE(slowdownReasons(0x40 | 0x4), std::string("power cap, thermal (hardware)"));

    // Provenance without the state (other tools, older sessions), or not JSON at all.
    QCOMPARE(measuredStateSentence("{}"), std::string());
    QCOMPARE(measuredStateSentence("not json"), std::string());
    QCOMPARE(DeviceStateRange().json(), std::string("{}"));
    QCOMPARE(measurementContext(R"({"timing":{"context":"warm"}})").rfind("warm", 0), std::size_t(0));
    QCOMPARE(measurementContext(R"({"timing":{"flush_l2":true}})").rfind("flush", 0), std::size_t(0));
    QCOMPARE(measurementContext("{}"), std::string());

    // Versions and hashes, each part only when recorded.
    SessionInfo info;
    info.provenanceJson = R"({"devices":[{"driver_version":13000}],"nvrtc_version":"13.0","tool_version":"0.1.0"})";
    info.problemHash = std::string(64, 'a');
    info.sourceHash = "0123456789abcdef" + std::string(48, '0');
    QCOMPARE(provenanceSentence(info),
             std::string("driver 13.0, NVRTC 13.0, Tilescope 0.1.0; problem aaaaaaaa, kernel source 01234567"));
    info.provenanceJson = "{}";
    info.problemHash.clear();
    QCOMPARE(provenanceSentence(info), std::string("kernel source 01234567"));
    info.sourceHash.clear();
    QCOMPARE(provenanceSentence(info), std::string());
}

void TestAnalysis::deviceComparison() {
    // Spearman: identical orders 1, reversed -1, ties share ranks, too few values NaN.
    QCOMPARE(spearmanCorrelation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    QCOMPARE(spearmanCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    QVERIFY(std::abs(spearmanCorrelation({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) - 0.8) < 1e-12);
    QVERIFY(std::isnan(spearmanCorrelation({1, 2}, {1, 2})));
    QVERIFY(std::isnan(spearmanCorrelation({1, 2, 3}, {5, 5, 5})));

    // Two GPUs: B is twice as slow everywhere except that its order of the two fastest is swapped;
    // B also records a clock parameter fixed to one value, A a parameter B lacks with two values
    // (A's best over it is taken), and A has a config that failed on B.
    auto result = [](int block, int vec, double ms, ResultStatus status = ResultStatus::Ok) {
        ResultRecord r;
        r.config = ConfigValues{};
        r.config["BLOCK"] = block;
        r.config["VEC"] = vec;
        r.measurement.status = status;
        r.measurement.time.medianMs = ms;
        return r;
    };
    auto withUnroll = [&](int block, int unroll, double ms) {
        ResultRecord r = result(block, 1, ms);
        r.config["UNROLL"] = unroll;
        return r;
    };
    CompareSide a;
    a.label = "A GPU";
    a.info.shape = {{"N", 1024}};
    a.results = {withUnroll(64, 1, 1.0),  withUnroll(64, 2, 1.3),  withUnroll(128, 1, 1.1),
                 withUnroll(256, 1, 1.5), withUnroll(512, 1, 2.0), withUnroll(1024, 1, 3.0),
                 withUnroll(64, 4, 9.0),  withUnroll(2048, 1, 0.5)}; // 2048 fails on B
    CompareSide b;
    b.label = "B GPU";
    b.info.shape = {{"N", 1024}};
    for (auto r : {result(64, 1, 2.4), result(128, 1, 2.2), result(256, 1, 3.0), result(512, 1, 4.0),
                   result(1024, 1, 6.0), result(2048, 1, 0, ResultStatus::LaunchError)}) {
        r.config["clock"] = 1080;
        b.results.push_back(r);
    }
    const DeviceComparison c = compareSides(a, b, 2);
    QCOMPARE(c.shared, (std::vector<std::string>{"BLOCK", "VEC"}));
    QCOMPARE(c.leftOut.size(), std::size_t(2));
    QVERIFY2(c.leftOut[0].find("UNROLL (only A; 3 values, its best taken)") == 0, c.leftOut[0].c_str());
    QVERIFY2(c.leftOut[1].find("clock (only B; always 1080)") == 0, c.leftOut[1].c_str());
    QCOMPARE(c.okA, std::size_t(6));
    QCOMPARE(c.okB, std::size_t(5));
    QCOMPARE(c.configs.size(), std::size_t(5));
    QCOMPARE(c.configs.front().config.at("BLOCK").asInt(), 64); // fastest on A first
    QCOMPARE(c.configs.front().timeA, 1.0);                     // UNROLL's best
    QCOMPARE(c.configs.front().rankB, 2.0);
    QVERIFY(std::abs(c.medianRatio - 2.0) < 1e-12);
    QVERIFY(std::abs(c.maxRatio - 2.4) < 1e-12);
    QVERIFY(std::abs(c.minRatio - 2.0) < 1e-12);
    QVERIFY(std::abs(c.spearman - 0.9) < 1e-12);
    QVERIFY(c.aOnB && c.bOnA);
    QCOMPARE(c.aOnB->config.at("BLOCK").asInt(), 64);
    QVERIFY(std::abs(c.aOnB->loss() - (2.4 / 2.2 - 1)) < 1e-12);
    QCOMPARE(c.aOnB->rankThere, 2.0);
    QCOMPARE(c.bOnA->config.at("BLOCK").asInt(), 128);
    QVERIFY(std::abs(c.bOnA->loss() - 0.1) < 1e-12);
    QCOMPARE(c.topK, std::size_t(2));
    QCOMPARE(c.topOverlap, std::size_t(2)); // 64 and 128 are both sides' top two
    QVERIFY(c.sizeNote.empty());
    const std::vector<std::string> lines = comparisonSentences(c);
    QVERIFY(lines.size() >= 5);
    QVERIFY2(lines[0].find("5 configs ran on both (6 ok on A, 5 on B), matched on BLOCK, VEC") == 0, lines[0].c_str());

    // Different problem sizes are said; no shared parameter or no common Ok config is an error.
    CompareSide bigger = b;
    bigger.info.shape = {{"N", 4096}};
    QVERIFY(compareSides(a, bigger).sizeNote.find("different problem sizes") != std::string::npos);
    CompareSide unrelated;
    unrelated.label = "other";
    ResultRecord x;
    x.config = ConfigValues{};
    x.config["TILE"] = 8;
    x.measurement.status = ResultStatus::Ok;
    x.measurement.time.medianMs = 1;
    unrelated.results.push_back(x);
    QVERIFY_THROWS_EXCEPTION(InputError, compareSides(a, unrelated));
    CompareSide failed = b;
    for (ResultRecord& r : failed.results)
        r.measurement.status = ResultStatus::CompileError;
    QVERIFY_THROWS_EXCEPTION(InputError, compareSides(a, failed));
}

QTEST_GUILESS_MAIN(TestAnalysis)
#include "tst_analysis.moc"
