// core/analysis's arch table (gpuarch.h) and theoretical occupancy (occupancy.h) against
// hand-computed cases on several archs, and the blocks per SM each limit allows.

#include "analysis/gpuarch.h"
#include "analysis/occupancy.h"
#include "analysis/staticanalysis.h"
#include "base/error.h"

#include <QtTest>

#include <string>
#include <vector>

using namespace tilescope;

class TestArchLimits : public QObject {
    Q_OBJECT

private slots:
    void archTable();
    void occupancy_data();
    void occupancy();
    void occupancyBlocksMatchTable();
};

void TestArchLimits::archTable() {
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

void TestArchLimits::occupancy_data() {
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

void TestArchLimits::occupancy() {
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

void TestArchLimits::occupancyBlocksMatchTable() {
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

QTEST_GUILESS_MAIN(TestArchLimits)
#include "tst_archlimits.moc"
