// core/measure/cuda without a GPU: the launch planner (grid, block and shared memory of configs
// under each of Kernel Tuner's grid rules, the same as the static analysis sees them, kernels/sgemm by hand, buffers
// sized by max(param), and every error a problem's arguments or geometry can cause), and the host side of the worker's
// buffers (half and bfloat16 conversions, fills, the comparison with a reference).

#include "analysis/boundsreach.h"
#include "analysis/launchcheck.h"
#include "analysis/staticanalysis.h"
#include "base/error.h"
#include "measure/cuda/argumentdata.h"
#include "space/configspace.h"
#include "spec/launchplan.h"
#include "spec/tuningproblem.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

using namespace tilescope;
using Json = nlohmann::ordered_json;

namespace {

const char* const kSgemmProblem = TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json";

/// A small problem made in memory: parameters BX [32, 64, 128, 256], BY [1, 2, 4, 8] and
/// FW [3, 5, 7], one shape N=1000 M=300, a grid of N threads in blocks of BX; the test merges
/// `patch` (JSON merge patch, RFC 7386: arrays are replaced whole) into it.
TuningProblem makeProblem(const QString& patch = {}) {
    Json j = Json::parse(R"json({
        "ConfigurationSpace": {
            "TuningParameters": [
                {"Name": "BX", "Type": "int", "Values": "[32, 64, 128, 256]"},
                {"Name": "BY", "Type": "int", "Values": "[1, 2, 4, 8]"},
                {"Name": "FW", "Type": "int", "Values": "[3, 5, 7]"}
            ]
        },
        "KernelSpecification": {
            "Language": "CUDA",
            "KernelName": "k",
            "KernelFile": "k.cu",
            "GlobalSize": {"X": "N"},
            "LocalSize": {"X": "BX"},
            "Arguments": [
                {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "N"},
                {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "N",
                 "FillType": "Random"}
            ]
        },
        "Tilescope": {"Shapes": [{"N": 1000, "M": 300}]}
    })json");
    if (!patch.isEmpty())
        j.merge_patch(Json::parse(patch.toStdString()));
    return TuningProblem::parse(j.dump(), "test.json", {});
}

/// The config whose values are `values` (one per parameter, in order).
Config configOf(const TuningProblem& problem, const QList<int>& values) {
    Config config;
    for (std::size_t p = 0; p < problem.parameters.size(); ++p) {
        const auto& list = problem.parameters[p].values;
        const auto it = std::find_if(list.begin(), list.end(), [&](const expr::Value& v) {
            return v.kind == expr::Kind::Int && v.i == values.value(static_cast<qsizetype>(p));
        });
        if (it == list.end())
            return {};
        config.push_back(static_cast<std::uint16_t>(it - list.begin()));
    }
    return config;
}

QList<int> listOf(const std::array<std::int64_t, 3>& a) {
    return {static_cast<int>(a[0]), static_cast<int>(a[1]), static_cast<int>(a[2])};
}

std::int32_t scalarInt32(const ArgumentSpec& a) {
    std::int32_t v = 0;
    std::memcpy(&v, a.scalarBytes.data(), sizeof v);
    return v;
}

template <typename T>
T valueAt(const std::vector<unsigned char>& data, std::size_t i) {
    T v;
    std::memcpy(&v, data.data() + i * sizeof(T), sizeof v);
    return v;
}

ArgumentSpec vectorOf(ElementType type, std::int64_t count, int lanes = 1) {
    ArgumentSpec a;
    a.index = 2;
    a.name = "out";
    a.typeName = std::string(elementTypeName(type)) + (lanes > 1 ? std::to_string(lanes) : "");
    a.element = type;
    a.lanes = lanes;
    a.memory = MemoryKind::Vector;
    a.access = Access::WriteOnly;
    a.count = count;
    return a;
}

std::vector<unsigned char> floats(const std::vector<float>& values) {
    std::vector<unsigned char> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return bytes;
}

} // namespace

class TestLaunchPlan : public QObject {
    Q_OBJECT

private slots:
    void sgemmPlan_data();
    void sgemmPlan();
    void sgemmArguments();
    void gridRules_data();
    void gridRules();
    void launchWarnings_data();
    void launchWarnings();
    void silenceIsReadAndWritten();
    void kernelReach();
    void bufferEdge_data();
    void bufferEdge();
    void bufferEdgeOnTheCorpus();
    void bufferEdgeThroughHeaders();
    void headerDefines();
    void sharedMemory();
    void maxParameterSizing();
    void kernelTunerArguments();
    void tensorMapArguments();
    void scalarValues_data();
    void scalarValues();
    void problemErrors_data();
    void problemErrors();
    void planErrors_data();
    void planErrors();

    void halfConversion_data();
    void halfConversion();
    void halfRoundTrip();
    void bfloat16Conversion();
    void float8Conversion_data();
    void float8Conversion();
    void float8RoundTrip();
    void float8Arguments();
    void randomFill_data();
    void randomFill();
    void randomSeeds();
    void constantFill();
    void binaryRawFill();
    void compare_data();
    void compare();
    void poison();
    void compareLargeOutputs();
    void compareFloat8();
};

// ---- the planner ----

void TestLaunchPlan::sgemmPlan_data() {
    QTest::addColumn<int>("shape");
    QTest::addColumn<QList<int>>("values"); // BLOCK_M, BLOCK_N, BLOCK_K, THREAD_M, THREAD_N, VEC, STAGES
    QTest::addColumn<QList<int>>("grid");
    QTest::addColumn<QList<int>>("block");
    // Grid (N / BLOCK_N, M / BLOCK_M), a 1-D block of
    // (BLOCK_M / THREAD_M) * (BLOCK_N / THREAD_N) threads, no dynamic shared memory.
    QTest::newRow("4096, 128x128 tiles of 8x8")
        << 0 << QList<int>{128, 128, 8, 8, 8, 4, 2} << QList<int>{32, 32, 1} << QList<int>{256, 1, 1};
    QTest::newRow("4096, 256x64 tiles of 16x4")
        << 0 << QList<int>{256, 64, 8, 16, 4, 4, 1} << QList<int>{64, 16, 1} << QList<int>{256, 1, 1};
    QTest::newRow("2048, 64x32 tiles of 4x2")
        << 1 << QList<int>{64, 32, 16, 4, 2, 2, 1} << QList<int>{64, 32, 1} << QList<int>{256, 1, 1};
    QTest::newRow("2048, 32x256 tiles of 1x8")
        << 1 << QList<int>{32, 256, 32, 1, 8, 4, 1} << QList<int>{8, 64, 1} << QList<int>{1024, 1, 1};
    QTest::newRow("2048, 256x256 tiles of 16x16")
        << 1 << QList<int>{256, 256, 8, 16, 16, 4, 2} << QList<int>{8, 8, 1} << QList<int>{256, 1, 1};
}

void TestLaunchPlan::sgemmPlan() {
    QFETCH(int, shape);
    QFETCH(QList<int>, values);
    QFETCH(QList<int>, grid);
    QFETCH(QList<int>, block);
    const TuningProblem problem = TuningProblem::load(kSgemmProblem);
    const LaunchPlanner planner(problem, static_cast<std::size_t>(shape));
    // sgemm gives GlobalSize in blocks and ProblemSize over GridDiv; both say the same, and
    // Kernel Tuner's reading (ProblemSize) is the one taken.
    QCOMPARE(planner.gridRule(), GridRule::ProblemSizeOverGridDiv);
    const Config config = configOf(problem, values);
    QCOMPARE(config.size(), std::size_t{7});
    const LaunchGeometry plan = planner.plan(config);
    QVERIFY2(plan.ok(), plan.error.c_str());
    QCOMPARE(listOf(plan.grid), grid);
    QCOMPARE(listOf(plan.block), block);
    QCOMPARE(plan.sharedDynamic, std::int64_t{0});
    // The static analysis (and through it the session's records) sees the very same launch.
    const StaticAnalyzer analyzer(problem, static_cast<std::size_t>(shape));
    const LaunchGeometry seen = analyzer.geometry(config);
    QCOMPARE(seen.grid, plan.grid);
    QCOMPARE(seen.block, plan.block);
    QCOMPARE(seen.sharedDynamic, plan.sharedDynamic);
    QCOMPARE(seen.error, plan.error);
}

void TestLaunchPlan::sgemmArguments() {
    const TuningProblem problem = TuningProblem::load(kSgemmProblem);
    for (std::size_t shape = 0; shape < 2; ++shape) {
        const std::int64_t n = shape == 0 ? 4096 : 2048; // M = N = K
        const LaunchPlanner planner(problem, shape);
        const auto& args = planner.arguments();
        QCOMPARE(args.size(), std::size_t{6});
        for (std::size_t i = 0; i < 3; ++i) {
            const ArgumentSpec& s = args[i];
            QCOMPARE(s.name, std::string(1, "MNK"[i]));
            QCOMPARE(s.memory, MemoryKind::Scalar);
            QCOMPARE(s.element, ElementType::Int32);
            QCOMPARE(s.scalarValue, static_cast<double>(n));
            QCOMPARE(scalarInt32(s), static_cast<std::int32_t>(n));
            QVERIFY(!s.isOutput());
        }
        for (std::size_t i = 3; i < 6; ++i) {
            const ArgumentSpec& s = args[i];
            QCOMPARE(s.index, i);
            QCOMPARE(s.name, std::string(1, "ABC"[i - 3]));
            QCOMPARE(s.memory, MemoryKind::Vector);
            QCOMPARE(s.element, ElementType::Float);
            QCOMPARE(s.lanes, 1);
            QCOMPARE(s.elementBytes(), std::size_t{4});
            QCOMPARE(s.count, n * n);
            QCOMPARE(s.bytes(), n * n * 4);
        }
        QCOMPARE(args[3].access, Access::ReadOnly);
        QCOMPARE(args[3].fill, FillKind::Random);
        QCOMPARE(args[3].randomSeed, std::optional<std::int64_t>(1));
        QCOMPARE(args[4].randomSeed, std::optional<std::int64_t>(2));
        QCOMPARE(args[5].access, Access::WriteOnly);
        QCOMPARE(args[5].fill, FillKind::Constant);
        QCOMPARE(args[5].fillValue, 0.0);
        QVERIFY(args[5].isOutput());
        QVERIFY(!args[3].isOutput());
        QCOMPARE(args[5].label(), std::string("argument 'C'"));
        QCOMPARE(planner.bufferBytes(), 3 * n * n * 4);
    }
}

void TestLaunchPlan::gridRules_data() {
    QTest::addColumn<QString>("patch");
    QTest::addColumn<QList<int>>("values"); // BX, BY, FW
    QTest::addColumn<int>("rule");
    QTest::addColumn<QList<int>>("grid");
    QTest::addColumn<QList<int>>("block");
    // N = 1000, M = 300.
    const int blocks = static_cast<int>(GridRule::GlobalSizeInBlocks);
    const int divided = static_cast<int>(GridRule::ProblemSizeOverGridDiv);
    const int threads = static_cast<int>(GridRule::GlobalSizeInThreads);
    QTest::newRow("GlobalSize in blocks")
        << R"json({"KernelSpecification": {"GlobalSizeType": "CUDA", "GlobalSize": {"X": "(N + BX - 1) // BX", "Y": "M // BY"},
               "LocalSize": {"X": "BX", "Y": "BY"}}})json"
        << QList<int>{64, 4, 3} << blocks << QList<int>{16, 75, 1} << QList<int>{64, 4, 1};
    // Kernel Tuner reads ProblemSize and GridDiv and never GlobalSize: where a file gives both,
    // its reading wins (a GlobalSize that disagrees is the file's mistake, not the launch).
    QTest::newRow("ProblemSize and GridDiv win over GlobalSize in blocks")
        << R"json({"KernelSpecification": {"GlobalSizeType": "CUDA", "GlobalSize": {"X": "7"}, "ProblemSize": ["N"],
               "GridDivX": ["BX"]}})json"
        << QList<int>{64, 4, 3} << divided << QList<int>{16, 1, 1} << QList<int>{64, 1, 1};
    QTest::newRow("ProblemSize over GridDiv")
        << R"json({"KernelSpecification": {"ProblemSize": ["N", "M"], "GridDivX": ["BX", "2"], "GridDivY": ["BY"],
               "LocalSize": {"X": "BX", "Y": "BY"}}})json"
        << QList<int>{64, 4, 3} << divided << QList<int>{8, 75, 1} << QList<int>{64, 4, 1};
    QTest::newRow("ProblemSize, no GridDivY and no block_size_y: divided by 1")
        << R"json({"KernelSpecification": {"ProblemSize": ["N", "M"], "GridDivX": ["BX"], "LocalSize": {"X": "BX", "Y": "BY"}}})json"
        << QList<int>{128, 8, 3} << divided << QList<int>{8, 300, 1} << QList<int>{128, 8, 1};
    // Kernel Tuner's names for the block: without LocalSize the block is block_size_x/y/z, the
    // parameters of those names or 256, 1, 1; without GridDiv a dimension is divided by the
    // parameter block_size_x/y/z, or by 1.
    QTest::newRow("no LocalSize, no block_size_x: 256 threads, grid of ProblemSize")
        << R"json({"KernelSpecification": {"ProblemSize": ["N"], "GlobalSize": null, "LocalSize": null}})json"
        << QList<int>{64, 4, 3} << divided << QList<int>{1000, 1, 1} << QList<int>{256, 1, 1};
    QTest::newRow("GridDiv and LocalSize name block_size_x, no such parameter")
        << R"json({"KernelSpecification": {"ProblemSize": ["N"], "GridDivX": ["block_size_x"],
               "LocalSize": {"X": "block_size_x", "Y": "block_size_y"}}})json"
        << QList<int>{64, 4, 3} << divided << QList<int>{4, 1, 1} << QList<int>{256, 1, 1};
    QTest::newRow("block_size_x a parameter: the block and the default divisor")
        << R"json({"ConfigurationSpace": {"TuningParameters": [
                {"Name": "block_size_x", "Type": "int", "Values": "[32, 64, 128, 256]"},
                {"Name": "BY", "Type": "int", "Values": "[1, 2, 4, 8]"},
                {"Name": "FW", "Type": "int", "Values": "[3, 5, 7]"}]},
               "KernelSpecification": {"ProblemSize": ["N", "M"], "GlobalSize": null, "LocalSize": null}})json"
        << QList<int>{64, 4, 3} << divided << QList<int>{16, 300, 1} << QList<int>{64, 1, 1};
    // The incident that made the rule: a convolution written for Kernel Tuner whose GlobalSize,
    // taken as blocks, launched 64 times the blocks in each dimension. Kernel Tuner divides
    // ProblemSize by the tuned block_size_x/y and never reads GlobalSize; so does Tilescope.
    QTest::newRow("block_size_x/y tuned: ProblemSize over them, GlobalSize not read")
        << R"json({"ConfigurationSpace": {"TuningParameters": [
                {"Name": "block_size_x", "Type": "int", "Values": "[32, 64]"},
                {"Name": "block_size_y", "Type": "int", "Values": "[4, 8]"},
                {"Name": "FW", "Type": "int", "Values": "[3, 5, 7]"}]},
               "KernelSpecification": {"ProblemSize": ["N", "M"], "GlobalSizeType": "CUDA",
               "GlobalSize": {"X": "64 * ((N + block_size_x - 1) // block_size_x)", "Y": "64 * ((M + block_size_y - 1) // block_size_y)"},
               "LocalSize": {"X": "block_size_x", "Y": "block_size_y"}}})json"
        << QList<int>{64, 4, 3} << divided << QList<int>{16, 75, 1} << QList<int>{64, 4, 1};
    QTest::newRow("ProblemSize without Y")
        << R"json({"KernelSpecification": {"ProblemSize": ["N"], "GridDivX": ["BX"], "LocalSize": {"X": "BX", "Y": "BY"}}})json"
        << QList<int>{256, 2, 3} << divided << QList<int>{4, 1, 1} << QList<int>{256, 2, 1};
    QTest::newRow("ProblemSize as numbers")
        << R"json({"KernelSpecification": {"ProblemSize": [4096, 100, 3], "GridDivX": ["BX"], "GridDivZ": ["1"]}})json"
        << QList<int>{32, 1, 3} << divided << QList<int>{128, 100, 3} << QList<int>{32, 1, 1};
    QTest::newRow("GridDiv not whole")
        << R"json({"KernelSpecification": {"ProblemSize": ["N"], "GridDivX": ["BX", "1.5"]}})json"
        << QList<int>{64, 1, 3} << divided << QList<int>{11, 1, 1} << QList<int>{64, 1, 1};
    QTest::newRow("GlobalSize in threads")
        << R"json({"KernelSpecification": {"GlobalSize": {"X": "N", "Y": "M"}, "LocalSize": {"X": "BX", "Y": "BY"}}})json"
        << QList<int>{32, 8, 3} << threads << QList<int>{32, 38, 1} << QList<int>{32, 8, 1};
    QTest::newRow("GlobalSize in threads, GlobalSizeType OpenCL")
        << R"json({"KernelSpecification": {"GlobalSizeType": "OpenCL", "GlobalSize": {"X": "N", "Y": "M"},
               "LocalSize": {"X": "BX", "Y": "BY"}}})json"
        << QList<int>{256, 1, 3} << threads << QList<int>{4, 300, 1} << QList<int>{256, 1, 1};
    QTest::newRow("ProblemSize without GridDiv: GlobalSize in threads")
        << R"json({"KernelSpecification": {"ProblemSize": ["M"], "GlobalSize": {"X": "N"}}})json"
        << QList<int>{128, 1, 3} << threads << QList<int>{8, 1, 1} << QList<int>{128, 1, 1};
    QTest::newRow("three dimensions")
        << R"json({"KernelSpecification": {"GlobalSize": {"X": "N", "Y": "M", "Z": "FW"}, "LocalSize": {"X": "BX", "Z": "1"}}})json"
        << QList<int>{32, 1, 7} << threads << QList<int>{32, 300, 7} << QList<int>{32, 1, 1};
}

void TestLaunchPlan::launchWarnings_data() {
    QTest::addColumn<QString>("patch");
    QTest::addColumn<QString>("warning"); // the warning's name, "" for none
    QTest::addColumn<QString>("location");
    // Kernel Tuner's block names tuned: the grid is ProblemSize over them, GlobalSize is not read.
    const QString blockNames = R"json("ConfigurationSpace": {"TuningParameters": [
            {"Name": "block_size_x", "Type": "int", "Values": "[32, 64]"},
            {"Name": "block_size_y", "Type": "int", "Values": "[4, 8]"}]},)json";
    const QString sizes = R"json("ProblemSize": ["N", "M"], "LocalSize": {"X": "block_size_x", "Y": "block_size_y"},
            "Arguments": [{"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": "N * M", "FillType": "Random"}])json";
    QTest::newRow("GlobalSize 64x the grid in each dimension")
        << "{" + blockNames + R"json("KernelSpecification": {"GlobalSizeType": "CUDA",
               "GlobalSize": {"X": "64 * ((N + block_size_x - 1) // block_size_x)", "Y": "64 * ((M + block_size_y - 1) // block_size_y)"},)json" +
               sizes + "}}"
        << "global-size"
        << "/KernelSpecification/GlobalSize";
    QTest::newRow("the same, silenced")
        << "{" + blockNames + R"json("Tilescope": {"Shapes": [{"N": 1000, "M": 300}], "Silence": ["global-size"]},
               "KernelSpecification": {"GlobalSizeType": "CUDA",
               "GlobalSize": {"X": "64 * ((N + block_size_x - 1) // block_size_x)", "Y": "64 * ((M + block_size_y - 1) // block_size_y)"},)json" +
               sizes + "}}"
        << ""
        << "";
    QTest::newRow("GlobalSize that agrees")
        << "{" + blockNames + R"json("KernelSpecification": {"GlobalSizeType": "CUDA",
               "GlobalSize": {"X": "(N + block_size_x - 1) // block_size_x", "Y": "(M + block_size_y - 1) // block_size_y"},)json" +
               sizes + "}}"
        << ""
        << "";
    // GlobalSize launched (the block is Kernel Tuner's to know not): blocks where threads were meant.
    QTest::newRow("GlobalSize in blocks that counts threads")
        << R"json({"KernelSpecification": {"GlobalSizeType": "CUDA", "GlobalSize": {"X": "N", "Y": "M"},
               "LocalSize": {"X": "BX", "Y": "BY"}, "ProblemSize": ["N", "M"]}})json"
        << "launch-coverage"
        << "/KernelSpecification/ProblemSize";
    QTest::newRow("GlobalSize in blocks of the right count")
        << R"json({"KernelSpecification": {"GlobalSizeType": "CUDA", "GlobalSize": {"X": "(N + BX - 1) // BX", "Y": "(M + BY - 1) // BY"},
               "LocalSize": {"X": "BX", "Y": "BY"}, "ProblemSize": ["N", "M"]}})json"
        << ""
        << "";
    QTest::newRow("blocks beyond 1024 threads")
        << R"json({"KernelSpecification": {"GlobalSize": {"X": "N"}, "LocalSize": {"X": "BX * 32"}}})json"
        << "launch-limits"
        << "/KernelSpecification";
    QTest::newRow("an argument sized by a tuning parameter") << R"json({"KernelSpecification": {"Arguments": [
               {"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": "N * FW", "FillType": "Random"}]}})json"
                                                             << "varying-size"
                                                             << "/KernelSpecification/Arguments/0/Size";
    QTest::newRow("an argument sized by max() of a tuning parameter") << R"json({"KernelSpecification": {"Arguments": [
               {"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": "N * max(FW)", "FillType": "Random"}]}})json"
                                                                      << ""
                                                                      << "";
    // Without ProblemSize the buffers measure the launch: at most the largest buffer's values
    // (a reduction reads far more than it writes), at least the largest output's.
    QTest::newRow("GlobalSize in blocks that counts threads, no ProblemSize")
        << R"json({"KernelSpecification": {"GlobalSizeType": "CUDA", "GlobalSize": {"X": "N", "Y": "M"},
               "LocalSize": {"X": "BX"}}})json"
        << "launch-coverage"
        << "/KernelSpecification/GlobalSize";
    QTest::newRow("a reduction without ProblemSize") << R"json({"KernelSpecification": {"GlobalSize": {"X": "N * M"},
               "Arguments": [{"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly",
                              "Size": "N * M", "FillType": "Random"},
                             {"Name": "sum", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
                              "Size": "1"}]}})json"
                                                     << ""
                                                     << "";
    QTest::newRow("one block for a million outputs, no ProblemSize")
        << R"json({"KernelSpecification": {"GlobalSizeType": "CUDA", "GlobalSize": {"X": "1"},
               "Arguments": [{"Name": "y", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
                              "Size": "N * M * 1000"}]}})json"
        << "launch-coverage"
        << "/KernelSpecification/GlobalSize";
    QTest::newRow("the base problem") << QString() << ""
                                      << "";
}

void TestLaunchPlan::launchWarnings() {
    QFETCH(QString, patch);
    QFETCH(QString, warning);
    QFETCH(QString, location);
    const TuningProblem problem = makeProblem(patch);
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const std::vector<LaunchWarning> warnings = checkLaunch(problem, 0, space);
    QStringList names;
    for (const LaunchWarning& w : warnings)
        names << QString::fromStdString(w.name + " at " + w.location + ": " + w.message);
    if (warning.isEmpty()) {
        QVERIFY2(warnings.empty(), qPrintable(names.join(QLatin1Char('\n'))));
        return;
    }
    QCOMPARE(warnings.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(warnings[0].name), warning);
    QCOMPARE(QString::fromStdString(warnings[0].location), location);
    // It says what it compared and how to silence it.
    QVERIFY2(warnings[0].message.find("sampled valid config") != std::string::npos || warning == "varying-size",
             warnings[0].message.c_str());
    QVERIFY2(warnings[0].message.find("\"Silence\": [\"" + warning.toStdString() + "\"]") != std::string::npos,
             warnings[0].message.c_str());
}

void TestLaunchPlan::silenceIsReadAndWritten() {
    const TuningProblem problem = makeProblem(
        R"json({"Tilescope": {"Shapes": [{"N": 1000, "M": 300}], "Silence": ["global-size", "varying-size"]}})json");
    QCOMPARE(problem.silencedWarnings, (std::vector<std::string>{"global-size", "varying-size"}));
    const TuningProblem again = TuningProblem::parse(problem.toJson(), "again.json", {});
    QCOMPARE(again.silencedWarnings, problem.silencedWarnings);
    try {
        makeProblem(R"json({"Tilescope": {"Shapes": [{"N": 1000, "M": 300}], "Silence": ["global-sizes"]}})json");
        QFAIL("a name that is no warning's was taken");
    } catch (const InputError& e) {
        QCOMPARE(e.location(), std::string("/Tilescope/Silence/0"));
        QVERIFY2(std::string(e.what()).find("launch-coverage") != std::string::npos, e.what());
    }
}

namespace {

// A convolution written the way Kernel Tuner's users write it: the input carries a halo of
// FW - 1 columns and rows, the bounds checks name scalar arguments and a local constant.
const char* const kConvolution = R"cu(
#ifndef FW
#define FW 3
#endif
#define LOAD(p) (*(p))

__global__ void conv(float* out, const float* __restrict__ in, int width, int height) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int in_width = width + FW - 1;
    if (y < height && x < width) {
        float sum = 0.0f;
        for (int i = 0; i < FW; i++)
            for (int j = 0; j < FW; j++)
                sum += in[(y + i) * in_width + x + j];
        out[y * width + x] = sum;
    }
}
)cu";

// One element to the right of its own: an early return bounds it.
const char* const kShifted = R"cu(
__global__ void shifted(float* y, const float* x, const int* idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    y[i] = LOAD(x + i + 1) + x[idx[i]];
}
)cu";

// A problem of `kernel` (written as k.cu into `dir`): parameters BX, BY, FW, ProblemSize
// N x M (1000 x 300), arguments out (N * M), in (`inSize`) and the scalars N and M.
TuningProblem edgeProblem(const QTemporaryDir& dir, const char* kernel, const std::string& kernelName,
                          const std::string& inSize) {
    std::ofstream(dir.filePath("k.cu").toStdString()) << kernel;
    Json j = Json::parse(R"json({
        "ConfigurationSpace": {"TuningParameters": [
            {"Name": "BX", "Type": "int", "Values": "[32, 64]"},
            {"Name": "BY", "Type": "int", "Values": "[4, 8]"},
            {"Name": "FW", "Type": "int", "Values": "[3, 5, 7]"}]},
        "KernelSpecification": {"Language": "CUDA", "KernelFile": "k.cu", "ProblemSize": ["N", "M"],
            "GlobalSize": {"X": "N", "Y": "M"}, "LocalSize": {"X": "BX", "Y": "BY"}},
        "Tilescope": {"Shapes": [{"N": 1000, "M": 300}]}
    })json");
    j["KernelSpecification"]["KernelName"] = kernelName;
    Json args = Json::array();
    args.push_back(
        {{"Name", "out"}, {"Type", "float"}, {"MemoryType", "Vector"}, {"AccessType", "WriteOnly"}, {"Size", "N * M"}});
    args.push_back({{"Name", "in"},
                    {"Type", "float"},
                    {"MemoryType", "Vector"},
                    {"AccessType", "ReadOnly"},
                    {"Size", inSize},
                    {"FillType", "Random"}});
    if (kernelName == "shifted")
        args.push_back({{"Name", "idx"},
                        {"Type", "int32"},
                        {"MemoryType", "Vector"},
                        {"AccessType", "ReadOnly"},
                        {"Size", "N * M"}});
    args.push_back({{"Name", "width"}, {"Type", "int32"}, {"MemoryType", "Scalar"}, {"Value", "N"}});
    if (kernelName == "conv")
        args.push_back({{"Name", "height"}, {"Type", "int32"}, {"MemoryType", "Scalar"}, {"Value", "M"}});
    j["KernelSpecification"]["Arguments"] = args;
    const std::string file = dir.filePath("k.json").toStdString();
    return TuningProblem::parse(j.dump(), file, dir.path().toStdString());
}

} // namespace

// What the bounds checks let a kernel index, evaluated exactly for one config.
void TestLaunchPlan::kernelReach() {
    const KernelReach conv(kConvolution, "conv");
    QCOMPARE(conv.argumentNames(), (std::vector<std::string>{"out", "in", "width", "height"}));
    QCOMPARE(conv.pointee(1), std::string("float"));
    QCOMPARE(conv.indexes().size(), std::size_t(2));
    const BoundedIndex& in = conv.indexes()[0];
    QCOMPARE(in.argument, std::size_t(1));
    QCOMPARE(in.line, 15);
    QCOMPARE(in.checks, std::string("y < height && x < width && i < FW && j < FW"));
    // (height - 1 + FW - 1) * (width + FW - 1) + (width - 1) + (FW - 1): the last element of
    // a (width + FW - 1) x (height + FW - 1) input.
    const std::map<std::string, std::string> values = {{"FW", "5"}, {"width", "1000"}, {"height", "300"}};
    QCOMPARE(conv.largest(in, values), std::optional<std::int64_t>((300 + 4) * (1000 + 4) - 1));
    QCOMPARE(conv.largest(conv.indexes()[1], values), std::optional<std::int64_t>(300 * 1000 - 1));
    // The source's own #define stands in where the config gives no value.
    QCOMPARE(conv.largest(in, {{"width", "10"}, {"height", "10"}}), std::optional<std::int64_t>(12 * 12 - 1));
    // A name nothing gives a value to: nothing is claimed.
    QCOMPARE(conv.largest(in, {{"FW", "5"}, {"width", "1000"}}), std::nullopt);

    const KernelReach shifted(kShifted, "shifted");
    QCOMPARE(shifted.indexes().size(), std::size_t(4)); // y[i], x + i + 1, x[idx[i]], idx[i]
    QCOMPARE(shifted.indexes()[1].access, std::string("x + i + 1"));
    QCOMPARE(shifted.largest(shifted.indexes()[1], {{"n", "1000"}}), std::optional<std::int64_t>(1000));
    QCOMPARE(shifted.largest(shifted.indexes()[2], {{"n", "1000"}}), std::nullopt); // x[idx[i]]: not followed
    QCOMPARE(shifted.largest(shifted.indexes()[3], {{"n", "1000"}}), std::optional<std::int64_t>(999));
    // The kernel is found by name, template arguments aside; another name finds nothing.
    QCOMPARE(KernelReach(kShifted, "shifted<float>").indexes().size(), std::size_t(4));
    QVERIFY(KernelReach(kShifted, "other").indexes().empty());
}

void TestLaunchPlan::bufferEdge_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<QString>("inSize");
    QTest::addColumn<bool>("warns");
    QTest::newRow("a convolution whose input lacks its halo") << "conv"
                                                              << "N * M" << true;
    QTest::newRow("a convolution whose input has its halo") << "conv"
                                                            << "(N + max(FW) - 1) * (M + max(FW) - 1)" << false;
    QTest::newRow("a halo for the smallest filter only") << "conv"
                                                         << "(N + 2) * (M + 2)" << true;
    QTest::newRow("one element to the right, not there") << "shifted"
                                                         << "N" << true;
    QTest::newRow("one element to the right, there") << "shifted"
                                                     << "N + 1" << false;
}

void TestLaunchPlan::bufferEdge() {
    QFETCH(QString, kernel);
    QFETCH(QString, inSize);
    QFETCH(bool, warns);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const TuningProblem problem =
        edgeProblem(dir, kernel == "conv" ? kConvolution : kShifted, kernel.toStdString(), inSize.toStdString());
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const std::vector<LaunchWarning> warnings = checkLaunch(problem, 0, space);
    QStringList all;
    for (const LaunchWarning& w : warnings)
        all << QString::fromStdString(w.name + " at " + w.location + ": " + w.message);
    if (!warns) {
        QVERIFY2(warnings.empty(), qPrintable(all.join(QLatin1Char('\n'))));
        return;
    }
    QCOMPARE(warnings.size(), std::size_t(1));
    const LaunchWarning& w = warnings[0];
    QCOMPARE(w.name, std::string("buffer-edge"));
    QCOMPARE(w.location, std::string("/KernelSpecification/Arguments/1/Size"));
    // It names the buffer, its size, the line and the checks, the configs, and the way out.
    for (const std::string& phrase :
         {std::string("argument 'in' holds"), "(Size \"" + inSize.toStdString() + "\")", std::string("k.cu:"),
          std::string("sampled valid configs"), std::string("\"Silence\": [\"buffer-edge\"]")})
        QVERIFY2(w.message.find(phrase) != std::string::npos, (phrase + " not in: " + w.message).c_str());
    if (kernel == "conv") {
        // Every config reads its halo: 300 x 1000 with FW 3 already reaches 302 x 1002.
        const bool smallestFilterFits = inSize.contains(QLatin1String("+ 2"));
        QVERIFY2(w.message.find(smallestFilterFits ? "for 8 of 12" : "for 12 of 12") != std::string::npos,
                 w.message.c_str());
        QVERIFY2(w.message.find("k.cu:15, in [ ( y + i ) * in_width + x + j ] under y < height && x < width && "
                                "i < FW && j < FW") != std::string::npos,
                 w.message.c_str());
    }

    // Silenced, it is gone.
    QTemporaryDir again;
    TuningProblem silenced =
        edgeProblem(again, kernel == "conv" ? kConvolution : kShifted, kernel.toStdString(), inSize.toStdString());
    silenced.silencedWarnings = {"buffer-edge"};
    QVERIFY(checkLaunch(silenced, 0, ConfigSpace::build(silenced, 0)).empty());
}

// Kernels written by others: the corpus's CUDA problems draw no buffer-edge warning, the analysis
// follows a good share of their indexes, and two real convolutions whose input loses its halo
// (the mistake of a Size written as the image alone) are caught.
void TestLaunchPlan::bufferEdgeOnTheCorpus() {
    const std::filesystem::path corpus = TILESCOPE_SOURCE_DIR "/tests/data/t1corpus";
    int followed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
        if (entry.path().extension() != ".json" || entry.path().filename() == "counts.json")
            continue;
        const TuningProblem problem = TuningProblem::load(entry.path());
        if (!problem.isCuda() || !problem.launchBlockers.empty())
            continue;
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        for (const LaunchWarning& w : checkLaunch(problem, 0, space))
            QVERIFY2(w.name != "buffer-edge", (entry.path().filename().string() + ": " + w.message).c_str());
        std::ifstream in(problem.kernelPath(), std::ios::binary);
        const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const KernelReach reach(source, problem.kernelName);
        for (const BoundedIndex& index : reach.indexes())
            followed += index.bounds.empty() ? 0 : 1;
    }
    QVERIFY2(followed >= 10, qPrintable(QString::number(followed)));

    for (const char* name : {"convolution.json", "kt_convolution.json"}) {
        std::ifstream in(corpus / name);
        Json j = Json::parse(in);
        for (Json& a : j["KernelSpecification"]["Arguments"]) {
            if (a["Name"] == "input_image")
                a["Size"] = "ProblemSize[0] * ProblemSize[1]";
        }
        const TuningProblem problem = TuningProblem::parse(j.dump(), (corpus / name).string(), corpus);
        const std::vector<LaunchWarning> warnings = checkLaunch(problem, 0, ConfigSpace::build(problem, 0));
        const auto edge = std::find_if(warnings.begin(), warnings.end(),
                                       [](const LaunchWarning& w) { return w.name == "buffer-edge"; });
        QVERIFY2(edge != warnings.end(), name);
        QVERIFY2(edge->message.find("argument 'input_image'") != std::string::npos, edge->message.c_str());
    }
}

// Sizes a header gives: tests/data/cuda/overrun.cu reads its input as deep as overrun_sizes.h's
// LENGTH (1,048,576), and overrun.json declares that input with Size 1 (the guarded GPU test's
// problem). The warning is drawn only by following the header.
void TestLaunchPlan::bufferEdgeThroughHeaders() {
    const TuningProblem problem = TuningProblem::load(TILESCOPE_TEST_DATA "/cuda/overrun.json");
    const std::vector<LaunchWarning> warnings = checkLaunch(problem, 0, ConfigSpace::build(problem, 0));
    const auto edge =
        std::find_if(warnings.begin(), warnings.end(), [](const LaunchWarning& w) { return w.name == "buffer-edge"; });
    QVERIFY2(edge != warnings.end(), "no buffer-edge warning for overrun.json");
    QCOMPARE(edge->location, std::string("/KernelSpecification/Arguments/1/Size"));
    for (const std::string phrase : {"argument 'in' holds 1 element (Size \"1\")", "reach 1,048,576 elements",
                                     "overrun.cu:19, in [ i ] under i < LENGTH", "for 3 of 3"})
        QVERIFY2(edge->message.find(phrase) != std::string::npos, (phrase + " not in: " + edge->message).c_str());

    std::ifstream in(problem.kernelPath(), std::ios::binary);
    const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const KernelReach alone(source, "overrun");
    const KernelReach followed(source, "overrun", headerSearch(problem));
    QCOMPARE(followed.indexes().size(), std::size_t(2)); // out[i], in[i]
    for (std::size_t k = 0; k < 2; ++k) {
        QCOMPARE(alone.largest(alone.indexes()[k], {{"BLOCK", "256"}}), std::nullopt); // LENGTH unknown
        QCOMPARE(followed.largest(followed.indexes()[k], {{"BLOCK", "256"}}), std::optional<std::int64_t>(1048575));
    }
    // A config's -D of the same name comes first, as it would on NVRTC's command line.
    QCOMPARE(followed.largest(followed.indexes()[1], {{"LENGTH", "10"}}), std::optional<std::int64_t>(9));
}

// How headers are found and read: beside the including file, then in the include folders (the
// kernel's and the -I ones of CompilerOptions), nested, each once, never through a comment;
// a name two headers define differently is nobody's.
void TestLaunchPlan::headerDefines() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::filesystem::path root = dir.path().toStdString();
    std::filesystem::create_directories(root / "src");
    std::filesystem::create_directories(root / "include" / "deep");
    const char* const kernel = R"cu(
#include "outer.h"
// #include "commented.h"
/* #include "commented.h" */
#include <cuda_fp16.h>
__global__ void k(float* a, float* b, float* c, float* d) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ROWS * COLS) a[i] = 0;
    if (i < INNER) b[i] = 0;
    if (i < HIDDEN) c[i] = 0;
    if (i < TWICE) d[i] = 0;
}
)cu";
    std::ofstream(root / "src" / "k.cu") << kernel;
    std::ofstream(root / "include" / "outer.h") << "#pragma once\n#include \"deep/inner.h\"\n#define ROWS 64\n"
                                                   "#define TWICE 5\n#include \"outer.h\"\n";
    std::ofstream(root / "include" / "deep" / "inner.h")
        << "#ifndef INNER_H\n#define INNER_H\n#define COLS (ROWS / 2) // columns\n#define INNER 1000\n"
           "#define TWICE 6\n#include \"../outer.h\"\n#endif\n";
    std::ofstream(root / "src" / "commented.h") << "#define HIDDEN 77\n";

    const HeaderSearch search{root / "src" / "k.cu", {root / "src", root / "include"}};
    const KernelReach reach(kernel, "k", search);
    QCOMPARE(reach.indexes().size(), std::size_t(4));
    QCOMPARE(reach.largest(reach.indexes()[0], {}), std::optional<std::int64_t>(64 * 32 - 1));
    QCOMPARE(reach.largest(reach.indexes()[1], {}), std::optional<std::int64_t>(999));
    QCOMPARE(reach.largest(reach.indexes()[2], {}), std::nullopt); // its header is only named in comments
    QCOMPARE(reach.largest(reach.indexes()[3], {}), std::nullopt); // 5 in one header, 6 in another
    // Without the include folder the headers are not found, and nothing is claimed.
    const KernelReach lost(kernel, "k", HeaderSearch{root / "src" / "k.cu", {root / "src"}});
    QCOMPARE(lost.largest(lost.indexes()[1], {}), std::nullopt);

    // A problem's search: its kernel's folder and its -I folders.
    Json j = Json::parse(R"json({
        "ConfigurationSpace": {"TuningParameters": [{"Name": "BX", "Type": "int", "Values": "[32]"}]},
        "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "src/k.cu",
            "CompilerOptions": ["-I", "include", "--include-path=other", "-Ithird"],
            "GlobalSize": {"X": "1024"}, "LocalSize": {"X": "BX"}, "Arguments": []}
    })json");
    const TuningProblem problem = TuningProblem::parse(j.dump(), (root / "k.json").string(), root);
    const HeaderSearch fromProblem = headerSearch(problem);
    QCOMPARE(fromProblem.file, root / "src" / "k.cu");
    QCOMPARE(fromProblem.dirs.size(), std::size_t(4));
    QCOMPARE(fromProblem.dirs[0], std::filesystem::absolute(root / "src"));
    QCOMPARE(fromProblem.dirs[1], std::filesystem::path("include"));
    QCOMPARE(fromProblem.dirs[2], std::filesystem::path("other"));
    QCOMPARE(fromProblem.dirs[3], std::filesystem::path("third"));
}

void TestLaunchPlan::gridRules() {
    QFETCH(QString, patch);
    QFETCH(QList<int>, values);
    QFETCH(int, rule);
    QFETCH(QList<int>, grid);
    QFETCH(QList<int>, block);
    const TuningProblem problem = makeProblem(patch);
    const LaunchPlanner planner(problem, 0);
    QCOMPARE(static_cast<int>(planner.gridRule()), rule);
    const LaunchGeometry plan = planner.plan(configOf(problem, values));
    QVERIFY2(plan.ok(), plan.error.c_str());
    QCOMPARE(listOf(plan.grid), grid);
    QCOMPARE(listOf(plan.block), block);
    QCOMPARE(plan.threadsPerBlock(), static_cast<std::int64_t>(block[0]) * block[1] * block[2]);
}

// Arguments as Kernel Tuner's T1 files write them: Output flags say which buffers to verify (the
// others, even writable ones, are not compared), and MemType Constant fills a __constant__ variable.
void TestLaunchPlan::tensorMapArguments() {
    // kernels/hgemm passes TMA tensor maps of A and B: extents per shape, innermost first.
    const TuningProblem problem = TuningProblem::load(TILESCOPE_SOURCE_DIR "/kernels/hgemm/hgemm_bf16_bt.json");
    const LaunchPlanner planner(problem, 2); // M = N = 8192, K = 1024
    const auto& args = planner.arguments();
    QCOMPARE(args.size(), std::size_t(8));
    QVERIFY(args[6].isTensorMap() && args[7].isTensorMap());
    QVERIFY(!args[6].isVector() && !args[6].isOutput() && !args[6].verify);
    QCOMPARE(args[6].tensorArgument, std::size_t(3)); // A
    QCOMPARE(args[7].tensorArgument, std::size_t(4)); // B
    QCOMPARE(args[6].tensorDims, (std::vector<std::int64_t>{1024, 8192}));
    QCOMPARE(args[7].tensorDims, (std::vector<std::int64_t>{1024, 8192}));
    QCOMPARE(args[6].tensorBox, (std::vector<std::int64_t>{64, 64}));
    QCOMPARE(args[6].tensorSwizzle, 128);
    QCOMPARE(args[6].element, ElementType::BFloat16);
    // A box that follows the config cannot be: the worker encodes each map once per shape. The
    // problem opens (space counts it) with a launch blocker naming the field, before any GPU.
    nlohmann::json json =
        nlohmann::json::parse(std::ifstream(TILESCOPE_SOURCE_DIR "/kernels/hgemm/hgemm_bf16_bt.json"));
    json["KernelSpecification"]["KernelFile"] = TILESCOPE_SOURCE_DIR "/kernels/hgemm/hgemm.cu";
    json["KernelSpecification"]["Arguments"][6]["TensorMap"]["Box"][1] = "min(BLOCK_M, M)";
    const QTemporaryDir dir;
    const std::string file = dir.filePath(QStringLiteral("box.json")).toStdString();
    std::ofstream(file) << json.dump();
    const TuningProblem byConfig = TuningProblem::load(file);
    QCOMPARE(byConfig.launchBlockers.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(byConfig.launchBlockers[0].location()),
             QStringLiteral("/KernelSpecification/Arguments/6/TensorMap/Box/1"));
    QVERIFY2(byConfig.launchBlockers[0].message().find("'min(BLOCK_M, M)' depends on the config (parameter "
                                                       "'BLOCK_M'); a tensor map is built once per shape") !=
                 std::string::npos,
             byConfig.launchBlockers[0].message().c_str());
    json["KernelSpecification"]["Arguments"][6]["TensorMap"]["Box"][1] = "min(max(BLOCK_M), M)";
    std::ofstream(file) << json.dump();
    QVERIFY(TuningProblem::load(file).launchBlockers.empty());
    // Only the buffers count as memory.
    QCOMPARE(planner.bufferBytes(), std::int64_t(2) * (8192 * 1024 * 2 + 8192 * 8192));
    // Row-major B (K x N) is mapped as N innermost.
    const TuningProblem rowMajor = TuningProblem::load(TILESCOPE_SOURCE_DIR "/kernels/hgemm/hgemm_bf16.json");
    const LaunchPlanner rowPlanner(rowMajor, 2);
    QCOMPARE(rowPlanner.arguments()[7].tensorDims, (std::vector<std::int64_t>{8192, 1024}));
    // The decode shapes (M from 1): A's box is no taller than A (the driver's rule), and ragged
    // tile rows count in the grid.
    const LaunchPlanner decode(problem, 3); // M = 1, N = 14336, K = 4096
    QCOMPARE(decode.arguments()[6].tensorDims, (std::vector<std::int64_t>{4096, 1}));
    QCOMPARE(decode.arguments()[6].tensorBox, (std::vector<std::int64_t>{64, 1}));
    QCOMPARE(decode.arguments()[7].tensorBox, (std::vector<std::int64_t>{64, 64}));
}

void TestLaunchPlan::kernelTunerArguments() {
    const TuningProblem problem = makeProblem(R"json({"KernelSpecification": {"Arguments": [
        {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": 1000, "Output": 1},
        {"Name": "scratch", "Type": "float", "MemoryType": "Vector", "Size": "N", "FillType": "Constant", "FillValue": 0},
        {"Name": "d_filter", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "MemType": "Constant",
         "Size": "max(FW) * max(FW)", "FillType": "Random"},
        {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 1000}]}})json");
    const LaunchPlanner planner(problem, 0);
    const auto& args = planner.arguments();
    QCOMPARE(args.size(), std::size_t(4));
    QVERIFY(args[0].verify);
    QVERIFY(args[1].isOutput()); // ReadWrite by default, so the kernel may write it ...
    QVERIFY(!args[1].verify);    // ... but the file flags only `out`
    QVERIFY(!args[2].verify);
    QVERIFY(args[2].constantMemory);
    QCOMPARE(args[2].count, std::int64_t(49));
    QVERIFY(!args[0].constantMemory);
    QCOMPARE(scalarInt32(args[3]), 1000);

    // Without Output flags every buffer the kernel may write is verified.
    const TuningProblem unflagged = makeProblem(R"json({"KernelSpecification": {"Arguments": [
        {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": 1000},
        {"Name": "io", "Type": "float", "MemoryType": "Vector", "Size": 1000},
        {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": 1000}]}})json");
    const LaunchPlanner plain(unflagged, 0);
    QVERIFY(plain.arguments()[0].verify);
    QVERIFY(plain.arguments()[1].verify);
    QVERIFY(!plain.arguments()[2].verify);
}

void TestLaunchPlan::sharedMemory() {
    const TuningProblem problem =
        makeProblem(R"json({"KernelSpecification": {"SharedMemory": "4 * BX * (FW + 1)"}})json");
    const LaunchPlanner planner(problem, 0);
    QCOMPARE(planner.plan(configOf(problem, {64, 1, 5})).sharedDynamic, std::int64_t{4 * 64 * 6});
    QCOMPARE(planner.plan(configOf(problem, {256, 1, 7})).sharedDynamic, std::int64_t{4 * 256 * 8});
    const TuningProblem fixed = makeProblem(R"json({"KernelSpecification": {"SharedMemory": 49152}})json");
    QCOMPARE(LaunchPlanner(fixed, 0).plan(configOf(fixed, {32, 1, 3})).sharedDynamic, std::int64_t{49152});
}

void TestLaunchPlan::maxParameterSizing() {
    // A convolution's input: one halo of the widest filter, whichever config runs.
    const TuningProblem problem = makeProblem(R"json({"KernelSpecification": {"Arguments": [
        {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly",
         "Size": "(N + max(FW) - 1) * (M + max(FW) - 1)", "FillType": "Random"},
        {"Name": "tiles", "Type": "int32", "MemoryType": "Vector", "Size": "N // min(BX) + 1", "FillType": "Constant"},
        {"Name": "out", "Type": "double2", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N * M"},
        {"Name": "raw", "Type": "uint8", "MemoryType": "Vector", "Size": 17, "FillType": "BinaryRaw",
         "DataSource": "raw.bin"}
    ]}})json");
    const LaunchPlanner planner(problem, 0);
    const auto& args = planner.arguments();
    QCOMPARE(args.size(), std::size_t{4});
    QCOMPARE(args[0].count, std::int64_t{1006 * 306});
    QCOMPARE(args[1].count, std::int64_t{1000 / 32 + 1});
    QCOMPARE(args[1].access, Access::ReadWrite); // absent AccessType
    QCOMPARE(args[1].fillValue, 0.0);
    QCOMPARE(args[2].element, ElementType::Double);
    QCOMPARE(args[2].lanes, 2);
    QCOMPARE(args[2].count, std::int64_t{300000});
    QCOMPARE(args[2].values(), std::int64_t{600000});
    QCOMPARE(args[2].bytes(), std::int64_t{300000 * 16});
    QCOMPARE(args[2].fill, FillKind::Constant); // absent FillType
    QCOMPARE(args[3].count, std::int64_t{17});
    QCOMPARE(args[3].fill, FillKind::BinaryRaw);
    QCOMPARE(args[3].dataSource, std::string("raw.bin"));
    QCOMPARE(planner.bufferBytes(), std::int64_t{1006 * 306 * 4 + 32 * 4 + 300000 * 16 + 17});
}

void TestLaunchPlan::scalarValues_data() {
    QTest::addColumn<QString>("argument");
    QTest::addColumn<QByteArray>("bytes"); // little-endian, as x86 and the GPU hold them
    QTest::newRow("int32 expression")
        << R"json({"Name": "s", "Type": "int32", "MemoryType": "Scalar", "Value": "N * 2 + M"})json"
        << QByteArray::fromHex("fc080000"); // 2300
    QTest::newRow("int32 from a whole float")
        << R"json({"Name": "s", "Type": "int32", "MemoryType": "Scalar", "Value": "N / 8"})json"
        << QByteArray::fromHex("7d000000"); // 125.0
    QTest::newRow("int64 FillValue")
        << R"json({"Name": "s", "Type": "int64", "MemoryType": "Scalar", "FillValue": -2})json"
        << QByteArray::fromHex("feffffffffffffff");
    QTest::newRow("uint16")
        << R"json({"Name": "s", "Type": "uint16", "MemoryType": "Scalar", "Value": "M + 65000"})json"
        << QByteArray::fromHex("14ff"); // 65300
    QTest::newRow("float") << R"json({"Name": "s", "Type": "float", "MemoryType": "Scalar", "Value": "1 / 4"})json"
                           << QByteArray::fromHex("0000803e");
    QTest::newRow("double FillValue")
        << R"json({"Name": "s", "Type": "double", "MemoryType": "Scalar", "FillValue": 1.5})json"
        << QByteArray::fromHex("000000000000f83f");
    QTest::newRow("half") << R"json({"Name": "s", "Type": "half", "MemoryType": "Scalar", "Value": "M / 100"})json"
                          << QByteArray::fromHex("0042"); // 3.0
    QTest::newRow("bool") << R"json({"Name": "s", "Type": "bool", "MemoryType": "Scalar", "Value": "N > M"})json"
                          << QByteArray::fromHex("01");
    QTest::newRow("float8_e4m3")
        << R"json({"Name": "s", "Type": "float8_e4m3", "MemoryType": "Scalar", "Value": "M / 100"})json"
        << QByteArray::fromHex("44"); // 3.0: 0.1000.100
    QTest::newRow("float8_e5m2 FillValue")
        << R"json({"Name": "s", "Type": "float8_e5m2", "MemoryType": "Scalar", "FillValue": -0.5})json"
        << QByteArray::fromHex("b8"); // 1.01110.00
    QTest::newRow("int8 from max()")
        << R"json({"Name": "s", "Type": "int8", "MemoryType": "Scalar", "Value": "-max(FW)"})json"
        << QByteArray::fromHex("f9");
}

void TestLaunchPlan::scalarValues() {
    QFETCH(QString, argument);
    QFETCH(QByteArray, bytes);
    const TuningProblem problem =
        makeProblem(QStringLiteral(R"json({"KernelSpecification": {"Arguments": [%1]}})json").arg(argument));
    const LaunchPlanner planner(problem, 0);
    const ArgumentSpec& s = planner.arguments().at(0);
    QCOMPARE(s.memory, MemoryKind::Scalar);
    QCOMPARE(QByteArray(reinterpret_cast<const char*>(s.scalarBytes.data()), bytes.size()), bytes);
    for (std::size_t i = static_cast<std::size_t>(bytes.size()); i < s.scalarBytes.size(); ++i)
        QCOMPARE(s.scalarBytes[i], static_cast<unsigned char>(0));
    QCOMPARE(reinterpret_cast<std::uintptr_t>(s.scalarBytes.data()) % 8, std::uintptr_t{0});
}

void TestLaunchPlan::problemErrors_data() {
    QTest::addColumn<QString>("patch");
    QTest::addColumn<int>("shape");
    QTest::addColumn<QString>("location");
    QTest::addColumn<QString>("message");
    auto args = [](const char* argument) {
        return QStringLiteral(R"json({"KernelSpecification": {"Arguments": [%1]}})json")
            .arg(QString::fromUtf8(argument));
    };
    const QString first = "/KernelSpecification/Arguments/0";
    QTest::newRow("shape out of range") << QString() << 3 << "/Tilescope/Shapes"
                                        << "shape 3 does not exist (the problem has 1 shape)";
    QTest::newRow("Size depends on the config")
        << args(R"json({"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": "N * BX"})json") << 0
        << first + "/Size"
        << "argument 'x': Size 'N * BX' depends on the config (parameter 'BX'); it must be fixed for a shape "
           "(max(BX) stands for the largest value of BX)";
    QTest::newRow("Size fails for the shape")
        << args(R"json({"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": "N // (M - 300)"})json") << 0
        << first + "/Size"
        << "argument 'x': Size: ZeroDivisionError";
    QTest::newRow("Size zero") << args(R"json({"Type": "float", "MemoryType": "Vector", "Size": "M - 300"})json") << 0
                               << first + "/Size"
                               << "argument 0: Size 'M - 300' is 0 (a buffer needs at least one element) (shape "
                                  "N=1000 M=300)";
    QTest::newRow("Size not whole")
        << args(R"json({"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": "N / 3"})json") << 0
        << first + "/Size"
        << "argument 'x': Size 'N / 3' is 333.3";
    QTest::newRow("MemoryType Local")
        << args(R"json({"Name": "x", "Type": "float", "MemoryType": "Local", "Size": 4})json") << 0
        << first + "/MemoryType"
        << "argument 'x': MemoryType 'Local' is not supported (the worker passes Scalar "
           "and Vector arguments)";
    QTest::newRow("MemoryType Symbol")
        << args(R"json({"Name": "x", "Type": "float", "MemoryType": "Symbol", "Size": 4})json") << 0
        << first + "/MemoryType"
        << "argument 'x': MemoryType 'Symbol' is not supported";
    QTest::newRow("custom type") << args(
                                        R"json({"Name": "x", "Type": "custom", "MemoryType": "Vector", "Size": 4})json")
                                 << 0 << first + "/Type"
                                 << "argument 'x': Type 'custom' is not supported";
    QTest::newRow("TypeSize mismatch")
        << args(R"json({"Name": "x", "Type": "float2", "MemoryType": "Vector", "Size": 4, "TypeSize": 4})json") << 0
        << first + "/TypeSize"
        << "argument 'x': TypeSize 4 does not match Type 'float2' (8 bytes)";
    QTest::newRow("FillType Script")
        << args(R"json({"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": 4, "FillType": "Script"})json")
        << 0 << first + "/FillType"
        << "argument 'x': FillType 'Script' is not supported (use Constant, Random or BinaryRaw)";
    QTest::newRow("FillType Generator")
        << args(R"json({"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": 4, "FillType": "Generator"})json")
        << 0 << first + "/FillType"
        << "argument 'x': FillType 'Generator' is not supported";
    QTest::newRow("BinaryRaw without DataSource")
        << args(R"json({"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": 4, "FillType": "BinaryRaw"})json")
        << 0 << first << "argument 'x': FillType BinaryRaw needs a DataSource (a file of 16 bytes";
    QTest::newRow("FillValue not whole")
        << args(R"json({"Name": "x", "Type": "int32", "MemoryType": "Vector", "Size": 4, "FillValue": 0.5})json") << 0
        << first + "/FillValue"
        << "argument 'x': FillValue 0.5 is not a whole number (int32 is an integer type)";
    QTest::newRow("FillValue out of range")
        << args(R"json({"Name": "x", "Type": "uint8", "MemoryType": "Vector", "Size": 4, "FillValue": 256})json") << 0
        << first + "/FillValue"
        << "argument 'x': FillValue 256 is out of the range of uint8";
    // FP8 conversions saturate: a value past the largest would silently become it.
    QTest::newRow("FillValue beyond float8_e4m3")
        << args(R"json({"Name": "x", "Type": "float8_e4m3", "MemoryType": "Vector", "Size": 4, "FillValue": 1000})json")
        << 0 << first + "/FillValue"
        << "argument 'x': FillValue 1000 is out of the range of float8_e4m3 (whose largest value is 448)";
    QTest::newRow("scalar beyond float8_e5m2")
        << args(R"json({"Name": "s", "Type": "float8_e5m2", "MemoryType": "Scalar", "Value": "-N * 60"})json") << 0
        << first + "/Value"
        << "argument 's': Value '-N * 60' is -60000, out of the range of float8_e5m2 (whose largest value is 57344) "
           "(shape N=1000 M=300)";
    QTest::newRow("scalar without a value")
        << args(R"json({"Name": "s", "Type": "int32", "MemoryType": "Scalar"})json") << 0 << first
        << "argument 's': a Scalar argument needs a value: \"Value\" (an "
           "expression such as \"M\") or FillValue";
    QTest::newRow("scalar Value depends on the config")
        << args(R"json({"Name": "s", "Type": "int32", "MemoryType": "Scalar", "Value": "BY * 2"})json") << 0
        << first + "/Value"
        << "argument 's': Value 'BY * 2' depends on the config (parameter 'BY')";
    QTest::newRow("scalar out of range")
        << args(R"json({"Name": "s", "Type": "int8", "MemoryType": "Scalar", "Value": "N"})json") << 0
        << first + "/Value"
        << "argument 's': Value 'N' is 1000, out of the range of int8 (shape N=1000 M=300)";
    QTest::newRow("scalar negative uint64")
        << args(R"json({"Name": "s", "Type": "uint64", "MemoryType": "Scalar", "Value": "M - N"})json") << 0
        << first + "/Value"
        << "argument 's': Value 'M - N' is -700, below the range of uint64";
    QTest::newRow("scalar not whole")
        << args(R"json({"Name": "s", "Type": "int32", "MemoryType": "Scalar", "Value": "(N + 1) / 8"})json") << 0
        << first + "/Value"
        << "argument 's': Value '(N + 1) / 8' is 125.125, not a whole number (int32 is an integer type) (shape "
           "N=1000 M=300)";
    QTest::newRow("scalar of a vector type")
        << args(R"json({"Name": "s", "Type": "float4", "MemoryType": "Scalar", "FillValue": 1})json") << 0
        << first + "/Type"
        << "argument 's': a Scalar argument of vector type 'float4' is not supported";
    QTest::newRow("scalar bool FillValue")
        << args(R"json({"Name": "s", "Type": "bool", "MemoryType": "Scalar", "FillValue": 2})json") << 0
        << first + "/FillValue"
        << "argument 's': FillValue 2 is not 0 or 1 (the type is bool)";
    QTest::newRow("scalar string Value")
        << args(R"json({"Name": "s", "Type": "int32", "MemoryType": "Scalar", "Value": "'abc'"})json") << 0
        << first + "/Value"
        << "argument 's': Value ''abc'' is 'abc', not a number";
    // Tensor maps (a Tilescope addition): the driver's rules, checked before a launch.
    const QString buffer = R"json({"Name": "t", "Type": "bfloat16", "MemoryType": "Vector", "Size": "N * M"})json";
    auto map = [&](const char* tensorMap) {
        return args(qPrintable(
            buffer +
            QStringLiteral(R"json(, {"Name": "m", "Type": "bfloat16", "MemoryType": "Scalar", "TensorMap": %1})json")
                .arg(QString::fromUtf8(tensorMap))));
    };
    const QString second = "/KernelSpecification/Arguments/1/TensorMap";
    QTest::newRow("tensor map larger than its buffer")
        << map(R"json({"Tensor": "t", "Dims": ["N", "M + 1"], "Box": [64, 64]})json") << 0 << second + "/Dims"
        << "argument 'm': the extents span 301000 values, and 't' holds 300000 (shape N=1000 M=300)";
    QTest::newRow("tensor map box over 256")
        << map(R"json({"Tensor": "t", "Dims": ["N", "M"], "Box": [64, 512]})json") << 0 << second + "/Box/1"
        << "argument 'm': a box is at most 256 values a dimension, got 512";
    QTest::newRow("tensor map box beyond the extent")
        << map(R"json({"Tensor": "t", "Dims": ["N", "M - 100"], "Box": [8, 256]})json") << 0 << second + "/Box/1"
        << "argument 'm': the box (256) is larger than the extent (200) (shape N=1000 M=300)";
    QTest::newRow("tensor map row not 16 bytes")
        << map(R"json({"Tensor": "t", "Dims": ["N - 1", "M"], "Box": [64, 64]})json") << 0 << second + "/Dims/0"
        << "argument 'm': a row (the innermost extent, 999 values of 2 bytes) must be a whole number of 16 bytes";
    QTest::newRow("tensor map box row not 16 bytes")
        << map(R"json({"Tensor": "t", "Dims": ["N", "M"], "Box": [4, 64]})json") << 0 << second + "/Box/0"
        << "argument 'm': the box's row (4 values of 2 bytes) must be a whole number of 16 bytes";
    QTest::newRow("tensor map box row wider than the swizzle")
        << map(R"json({"Tensor": "t", "Dims": ["N", "M"], "Box": [128, 64], "Swizzle": 128})json") << 0
        << second + "/Box/0"
        << "argument 'm': the box's row is 256 bytes, more than the 128-byte swizzle span";
    QTest::newRow("tensor map extent depends on the config")
        << map(R"json({"Tensor": "t", "Dims": ["N", "BX"], "Box": [64, 64]})json") << 0 << second + "/Dims/1"
        << "argument 'm': an extent 'BX' depends on the config (parameter 'BX')";
    QTest::newRow("tensor map extent zero")
        << map(R"json({"Tensor": "t", "Dims": ["N", "M - 300"], "Box": [64, 1]})json") << 0 << second + "/Dims/1"
        << "argument 'm': an extent 'M - 300' is 0, not a positive whole number";
    QTest::newRow("second argument unnamed")
        << args(R"json({"Name": "x", "Type": "float", "MemoryType": "Vector", "Size": 4},
                   {"Type": "float", "MemoryType": "Local", "Size": 4})json")
        << 0 << "/KernelSpecification/Arguments/1/MemoryType"
        << "argument 1: MemoryType 'Local' is not supported";
}

void TestLaunchPlan::problemErrors() {
    QFETCH(QString, patch);
    QFETCH(int, shape);
    QFETCH(QString, location);
    QFETCH(QString, message);
    const TuningProblem problem = makeProblem(patch);
    try {
        LaunchPlanner planner(problem, static_cast<std::size_t>(shape));
        QFAIL("no error");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.file()), QStringLiteral("test.json"));
        QCOMPARE(QString::fromStdString(e.location()), location);
        QVERIFY2(QString::fromStdString(e.message()).startsWith(message), e.what());
    }
}

void TestLaunchPlan::planErrors_data() {
    QTest::addColumn<QString>("patch");
    QTest::addColumn<QList<int>>("values");
    QTest::addColumn<QString>("message");
    QTest::newRow("block of 0 threads") << R"json({"KernelSpecification": {"LocalSize": {"X": "BX - 32"}}})json"
                                        << QList<int>{32, 1, 3}
                                        << "LocalSize.X 'BX - 32' is 0 threads (a block needs 1 or more)";
    QTest::newRow("LocalSize fails")
        << R"json({"KernelSpecification": {"LocalSize": {"X": "BX", "Y": "N // (BY - 1)"}}})json"
        << QList<int>{32, 1, 3}
        << "LocalSize.Y: ZeroDivisionError: integer division or modulo by zero in "
           "'N // (BY - 1)' at column";
    QTest::newRow("GlobalSize fails") << R"json({"KernelSpecification": {"GlobalSize": {"X": "N // (FW - 3)"}}})json"
                                      << QList<int>{32, 1, 3} << "GlobalSize.X: ZeroDivisionError";
    QTest::newRow("grid of 0 blocks")
        << R"json({"KernelSpecification": {"GlobalSizeType": "CUDA", "GlobalSize": {"X": "BX // 512"}}})json"
        << QList<int>{256, 1, 3}
        << "the grid's X size is 0 blocks (GlobalSize.X 'BX // 512', in blocks): a grid needs at least one block";
    QTest::newRow("GlobalSize of 0 threads")
        << R"json({"KernelSpecification": {"GlobalSize": {"X": "N - 1000"}}})json" << QList<int>{32, 1, 3}
        << "GlobalSize.X 'N - 1000' is 0 threads (the grid needs at least one block)";
    QTest::newRow("grid divisor 0")
        << R"json({"KernelSpecification": {"ProblemSize": ["N"], "GridDivX": ["BX", "FW - 3"]}})json"
        << QList<int>{32, 1, 3} << "GridDivX[1] 'FW - 3' is 0 (a grid divisor must be positive)";
    QTest::newRow("grid beyond 32 bits")
        << R"json({"KernelSpecification": {"GlobalSizeType": "CUDA", "GlobalSize": {"X": "N ** 4"}}})json"
        << QList<int>{32, 1, 3}
        << "the grid's X size is 1000000000000 blocks (GlobalSize.X 'N ** 4', in blocks): more "
           "than 2^31 - 1";
    QTest::newRow("negative shared memory") << R"json({"KernelSpecification": {"SharedMemory": "BX - 64"}})json"
                                            << QList<int>{32, 1, 3} << "SharedMemory 'BX - 64' is -32 bytes (negative)";
    QTest::newRow("shared memory fails") << R"json({"KernelSpecification": {"SharedMemory": "4 * N // (BY - 1)"}})json"
                                         << QList<int>{32, 1, 3} << "SharedMemory: ZeroDivisionError";
    QTest::newRow("config too short") << QString() << QList<int>{32, 1}
                                      << "the config has 0 values, the problem 3 parameters";
}

void TestLaunchPlan::planErrors() {
    QFETCH(QString, patch);
    QFETCH(QList<int>, values);
    QFETCH(QString, message);
    const TuningProblem problem = makeProblem(patch);
    const LaunchPlanner planner(problem, 0);
    const LaunchGeometry plan = planner.plan(configOf(problem, values));
    QVERIFY(!plan.ok());
    QVERIFY2(QString::fromStdString(plan.error).startsWith(message), plan.error.c_str());

    const LaunchGeometry outOfRange = planner.plan(Config{0, 9, 0});
    QVERIFY(!outOfRange.ok());
    QCOMPARE(outOfRange.error, std::string("the config's value index 9 for BY is out of range (it has 4 values)"));
}

// ---- the host side of buffers ----

void TestLaunchPlan::halfConversion_data() {
    QTest::addColumn<float>("value");
    QTest::addColumn<int>("bits");
    QTest::newRow("1") << 1.0f << 0x3C00;
    QTest::newRow("-2") << -2.0f << 0xC000;
    QTest::newRow("0") << 0.0f << 0x0000;
    QTest::newRow("-0") << -0.0f << 0x8000;
    QTest::newRow("1/3") << 1.0f / 3.0f << 0x3555;
    QTest::newRow("largest") << 65504.0f << 0x7BFF;
    QTest::newRow("rounds down to largest") << 65519.0f << 0x7BFF;
    QTest::newRow("rounds up to inf") << 65520.0f << 0x7C00;
    QTest::newRow("inf") << std::numeric_limits<float>::infinity() << 0x7C00;
    QTest::newRow("-inf") << -std::numeric_limits<float>::infinity() << 0xFC00;
    QTest::newRow("smallest normal") << 0x1p-14f << 0x0400;
    QTest::newRow("smallest subnormal") << 0x1p-24f << 0x0001;
    QTest::newRow("half the smallest subnormal: ties to even 0") << 0x1p-25f << 0x0000;
    QTest::newRow("just above half the smallest subnormal") << 0x1.000002p-25f << 0x0001;
    QTest::newRow("1.5 subnormal units: ties to even 2") << 0x1.8p-24f << 0x0002;
    QTest::newRow("tie to even, down") << 1.00048828125f << 0x3C00; // 1 + 2^-11
    QTest::newRow("tie to even, up") << 1.00146484375f << 0x3C02;   // 1 + 3 * 2^-11
    QTest::newRow("above the tie") << 1.000488400459f << 0x3C01;
    QTest::newRow("largest subnormal rounds up to normal") << 0x1.ffep-15f << 0x0400;
}

void TestLaunchPlan::halfConversion() {
    QFETCH(float, value);
    QFETCH(int, bits);
    QCOMPARE(static_cast<int>(halfFromFloat(value)), bits);
    const float back = floatFromHalf(static_cast<std::uint16_t>(bits));
    if (std::isfinite(value) && std::fabs(value) < 65504.0f)
        QVERIFY(std::fabs(back - value) <= std::fabs(value) * 0x1p-11f + 0x1p-25f);
}

void TestLaunchPlan::halfRoundTrip() {
    // Every half value survives half -> float -> half (NaNs stay NaNs).
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
        const auto h = static_cast<std::uint16_t>(bits);
        const float f = floatFromHalf(h);
        const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
        if (nan) {
            QVERIFY(std::isnan(f));
            const std::uint16_t again = halfFromFloat(f);
            QVERIFY((again & 0x7C00) == 0x7C00 && (again & 0x3FF) != 0);
            continue;
        }
        if (halfFromFloat(f) != h)
            QFAIL(qPrintable(QString("half 0x%1 -> %2 -> 0x%3")
                                 .arg(bits, 4, 16, QChar('0'))
                                 .arg(static_cast<double>(f))
                                 .arg(halfFromFloat(f), 4, 16, QChar('0'))));
    }
    QCOMPARE(floatFromHalf(0x0001), 0x1p-24f);
    QCOMPARE(floatFromHalf(0x7BFF), 65504.0f);
    QCOMPARE(floatFromHalf(0xBC00), -1.0f);
    QVERIFY(std::isnan(floatFromHalf(0xFFFF))); // the poison
}

void TestLaunchPlan::bfloat16Conversion() {
    QCOMPARE(bfloat16FromFloat(1.0f), std::uint16_t{0x3F80});
    QCOMPARE(bfloat16FromFloat(-2.0f), std::uint16_t{0xC000});
    QCOMPARE(bfloat16FromFloat(3.14159265f), std::uint16_t{0x4049});
    QCOMPARE(bfloat16FromFloat(std::bit_cast<float>(0x3F808000u)), std::uint16_t{0x3F80}); // tie, even stays
    QCOMPARE(bfloat16FromFloat(std::bit_cast<float>(0x3F818000u)), std::uint16_t{0x3F82}); // tie, odd rounds up
    QCOMPARE(bfloat16FromFloat(std::bit_cast<float>(0x3F808001u)), std::uint16_t{0x3F81});
    QCOMPARE(bfloat16FromFloat(std::numeric_limits<float>::max()), std::uint16_t{0x7F80}); // rounds to inf
    QVERIFY((bfloat16FromFloat(std::numeric_limits<float>::quiet_NaN()) & 0x7FFF) > 0x7F80);
    QVERIFY((bfloat16FromFloat(std::bit_cast<float>(0x7F800001u)) & 0x7FFF) > 0x7F80); // a NaN never becomes inf
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
        const auto b = static_cast<std::uint16_t>(bits);
        const float f = floatFromBfloat16(b);
        if (std::isnan(f))
            continue;
        if (bfloat16FromFloat(f) != b)
            QFAIL(qPrintable(QString("bfloat16 0x%1 does not round-trip").arg(bits, 4, 16, QChar('0'))));
    }
}

void TestLaunchPlan::float8Conversion_data() {
    QTest::addColumn<float>("value");
    QTest::addColumn<int>("e4m3");
    QTest::addColumn<int>("e5m2");
    const float inf = std::numeric_limits<float>::infinity();
    QTest::newRow("1") << 1.0f << 0x38 << 0x3C;
    QTest::newRow("-2") << -2.0f << 0xC0 << 0xC0;
    QTest::newRow("0") << 0.0f << 0x00 << 0x00;
    QTest::newRow("-0") << -0.0f << 0x80 << 0x80;
    QTest::newRow("0.3") << 0.3f << 0x2A << 0x35; // 0.3125 (1.25 * 2^-2) in both
    QTest::newRow("e4m3 largest") << 448.0f << 0x7E << 0x5F;
    QTest::newRow("e5m2 largest") << 57344.0f << 0x7E << 0x7B;
    // e4m3: 464 is the tie between 448 and 480 (the NaN code): to even, 448; above, saturated.
    QTest::newRow("e4m3 tie at the top") << 464.0f << 0x7E << 0x5F;
    QTest::newRow("1000 saturates in e4m3") << 1000.0f << 0x7E << 0x64; // e5m2: 1024
    QTest::newRow("-1000") << -1000.0f << 0xFE << 0xE4;
    // e5m2: 61440 is the tie between 57344 and infinity: saturated, as everything beyond.
    QTest::newRow("e5m2 tie at the top") << 61440.0f << 0x7E << 0x7B;
    QTest::newRow("float max") << std::numeric_limits<float>::max() << 0x7E << 0x7B;
    QTest::newRow("inf saturates") << inf << 0x7E << 0x7B;
    QTest::newRow("-inf saturates") << -inf << 0xFE << 0xFB;
    QTest::newRow("NaN: canonical") << -std::numeric_limits<float>::quiet_NaN() << 0x7F << 0x7F;
    QTest::newRow("e4m3 smallest normal") << 0x1p-6f << 0x08 << 0x24;
    QTest::newRow("e4m3 smallest subnormal") << 0x1p-9f << 0x01 << 0x18;
    QTest::newRow("e5m2 smallest normal") << 0x1p-14f << 0x00 << 0x04;
    QTest::newRow("e5m2 smallest subnormal") << 0x1p-16f << 0x00 << 0x01;
    // Ties to even: 1 + 2^-4 lies between e4m3's 1 and 1.125 (1 even); 1 + 3 * 2^-4 between 1.125
    // and 1.25 (1.25 even). In e5m2 1 + 2^-3 lies between 1 and 1.25, 1 + 3 * 2^-3 between 1.25 and 1.5.
    QTest::newRow("tie 1 + 2^-4") << 1.0625f << 0x38 << 0x3C;
    QTest::newRow("tie 1 + 3 * 2^-4") << 1.1875f << 0x3A << 0x3D;
    QTest::newRow("above the tie 1 + 2^-4") << 1.0625001f << 0x39 << 0x3C;
    QTest::newRow("tie 1 + 2^-3") << 1.125f << 0x39 << 0x3C;
    QTest::newRow("tie 1 + 3 * 2^-3") << 1.375f << 0x3B << 0x3E;
    // Subnormal ties: half the smallest subnormal to even 0, 1.5 units to 2.
    QTest::newRow("e4m3 half a subnormal unit") << 0x1p-10f << 0x00 << 0x14;
    QTest::newRow("e4m3 1.5 subnormal units") << 0x1.8p-9f << 0x02 << 0x1A;
    QTest::newRow("e5m2 half a subnormal unit") << 0x1p-17f << 0x00 << 0x00;
    QTest::newRow("e5m2 just above half a unit") << 0x1.000002p-17f << 0x00 << 0x01;
    QTest::newRow("e5m2 1.5 subnormal units") << 0x1.8p-16f << 0x00 << 0x02;
    QTest::newRow("e4m3 largest subnormal rounds up to normal") << 0x1.fp-7f << 0x08 << 0x24;
}

// Bit-exact with CUDA's __nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E4M3 / __NV_E5M2).
void TestLaunchPlan::float8Conversion() {
    QFETCH(float, value);
    QFETCH(int, e4m3);
    QFETCH(int, e5m2);
    QCOMPARE(static_cast<int>(float8E4M3FromFloat(value)), e4m3);
    QCOMPARE(static_cast<int>(float8E5M2FromFloat(value)), e5m2);
}

void TestLaunchPlan::float8RoundTrip() {
    // Every FP8 value survives fp8 -> float -> fp8; the NaNs decode to NaN.
    for (std::uint32_t bits = 0; bits <= 0xFF; ++bits) {
        const auto b = static_cast<std::uint8_t>(bits);
        const float e4 = floatFromFloat8E4M3(b);
        if ((b & 0x7F) == 0x7F) {
            QVERIFY(std::isnan(e4));
            QCOMPARE(float8E4M3FromFloat(e4), std::uint8_t{0x7F});
        } else if (float8E4M3FromFloat(e4) != b) {
            QFAIL(qPrintable(QString("float8_e4m3 0x%1 -> %2 does not round-trip")
                                 .arg(bits, 2, 16, QChar('0'))
                                 .arg(static_cast<double>(e4))));
        }
        const float e5 = floatFromFloat8E5M2(b);
        if ((b & 0x7F) > 0x7C) {
            QVERIFY(std::isnan(e5));
            QCOMPARE(float8E5M2FromFloat(e5), std::uint8_t{0x7F});
        } else if ((b & 0x7F) == 0x7C) {
            QCOMPARE(e5, (b & 0x80) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
        } else if (float8E5M2FromFloat(e5) != b) {
            QFAIL(qPrintable(QString("float8_e5m2 0x%1 -> %2 does not round-trip")
                                 .arg(bits, 2, 16, QChar('0'))
                                 .arg(static_cast<double>(e5))));
        }
    }
    QCOMPARE(floatFromFloat8E4M3(0x7E), 448.0f);
    QCOMPARE(floatFromFloat8E4M3(0x08), 0x1p-6f);
    QCOMPARE(floatFromFloat8E4M3(0x01), 0x1p-9f);
    QCOMPARE(floatFromFloat8E4M3(0x07), 0x1.cp-7f); // the largest subnormal, 7 * 2^-9
    QCOMPARE(floatFromFloat8E4M3(0xB8), -1.0f);
    QCOMPARE(floatFromFloat8E4M3(0x80), -0.0f);
    QVERIFY(std::signbit(floatFromFloat8E4M3(0x80)));
    QVERIFY(std::isnan(floatFromFloat8E4M3(0xFF))); // the poison
    QCOMPARE(floatFromFloat8E5M2(0x7B), 57344.0f);
    QCOMPARE(floatFromFloat8E5M2(0x7C), std::numeric_limits<float>::infinity());
    QCOMPARE(floatFromFloat8E5M2(0xFC), -std::numeric_limits<float>::infinity());
    QCOMPARE(floatFromFloat8E5M2(0x04), 0x1p-14f);
    QCOMPARE(floatFromFloat8E5M2(0x01), 0x1p-16f);
    QCOMPARE(floatFromFloat8E5M2(0x3C), 1.0f);
    QVERIFY(std::isnan(floatFromFloat8E5M2(0xFF))); // the poison
    // Decoding is monotonic over the finite codes of each sign: the values are ordered as their bits.
    for (std::uint8_t b = 1; b < 0x7E; ++b) {
        QVERIFY(floatFromFloat8E4M3(b) < floatFromFloat8E4M3(static_cast<std::uint8_t>(b + 1)));
        if (b < 0x7C)
            QVERIFY(floatFromFloat8E5M2(b) < floatFromFloat8E5M2(static_cast<std::uint8_t>(b + 1)));
    }
}

// An FP8 GEMM's problem: FP8 inputs (one of them mapped for TMA), a bfloat16 output.
void TestLaunchPlan::float8Arguments() {
    const TuningProblem problem = makeProblem(R"json({"KernelSpecification": {"Arguments": [
        {"Name": "A", "Type": "float8_e4m3", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "N * M",
         "FillType": "Random", "RandomSeed": 3},
        {"Name": "B", "Type": "float8_e5m2", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "M",
         "FillValue": 0.75, "TypeSize": 1},
        {"Name": "C", "Type": "bfloat16", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N"},
        {"Name": "scale", "Type": "float8_e4m3", "MemoryType": "Scalar", "Value": "N / 4000"},
        {"Name": "mapA", "Type": "float8_e4m3", "MemoryType": "Scalar",
         "TensorMap": {"Tensor": "A", "Dims": ["M + 20", "N - 100"], "Box": [16, 8], "Swizzle": 32}}
    ]}})json");
    const LaunchPlanner planner(problem, 0); // N=1000 M=300
    const auto& args = planner.arguments();
    QCOMPARE(args.size(), std::size_t(5));
    QCOMPARE(args[0].element, ElementType::Float8E4M3);
    QCOMPARE(args[1].element, ElementType::Float8E5M2);
    QCOMPARE(args[0].elementBytes(), std::size_t(1));
    QCOMPARE(args[0].bytes(), std::int64_t(300000));
    QCOMPARE(args[1].bytes(), std::int64_t(300));
    QVERIFY(isFloatingPoint(args[0].element) && isFloatingPoint(args[1].element));
    QCOMPARE(elementTypeName(args[1].element), std::string_view("float8_e5m2"));
    QVERIFY(args[2].verify && !args[0].verify);
    QCOMPARE(args[3].scalarBytes[0], static_cast<unsigned char>(0x28)); // 0.25: 0.0101.000
    QCOMPARE(args[4].tensorArgument, std::size_t(0));
    QCOMPARE(planner.bufferBytes(), std::int64_t(300000 + 300 + 2000));

    const std::vector<unsigned char> a = initialContents(args[0], 1, {});
    QCOMPARE(a.size(), std::size_t(300000));
    QCOMPARE(initialContents(args[0], 2, {}), a); // RandomSeed 3 holds
    std::set<unsigned char> codes(a.begin(), a.end());
    QCOMPARE(codes.size(), std::size_t(16));                                          // -1, -7/8, ..., 7/8
    QCOMPARE(initialContents(args[1], 1, {}), std::vector<unsigned char>(300, 0x3A)); // 0.75 = 1.5 * 2^-1

    // The box's row is counted in bytes: 8 one-byte values are not 16 bytes.
    try {
        LaunchPlanner(makeProblem(R"json({"KernelSpecification": {"Arguments": [
            {"Name": "A", "Type": "float8_e4m3", "MemoryType": "Vector", "Size": "N * M"},
            {"Name": "mapA", "Type": "float8_e4m3", "MemoryType": "Scalar",
             "TensorMap": {"Tensor": "A", "Dims": ["M + 20", "N - 100"], "Box": [8, 8]}}]}})json"),
                      0);
        QFAIL("no error");
    } catch (const InputError& e) {
        QCOMPARE(e.message(), std::string("argument 'mapA': the box's row (8 values of 1 bytes) must be a whole number "
                                          "of 16 bytes"));
    }
}

void TestLaunchPlan::randomFill_data() {
    QTest::addColumn<int>("type");
    QTest::addColumn<double>("low");
    QTest::addColumn<double>("high"); // exclusive
    QTest::addColumn<double>("step"); // every value is a multiple of it
    QTest::newRow("float") << static_cast<int>(ElementType::Float) << -1.0 << 1.0 << 0x1p-23;
    QTest::newRow("double") << static_cast<int>(ElementType::Double) << -1.0 << 1.0 << 0x1p-52;
    QTest::newRow("half") << static_cast<int>(ElementType::Half) << -1.0 << 1.0 << 0x1p-10;
    QTest::newRow("bfloat16") << static_cast<int>(ElementType::BFloat16) << -1.0 << 1.0 << 0x1p-7;
    QTest::newRow("float8_e4m3") << static_cast<int>(ElementType::Float8E4M3) << -1.0 << 1.0 << 0x1p-3;
    QTest::newRow("float8_e5m2") << static_cast<int>(ElementType::Float8E5M2) << -1.0 << 1.0 << 0x1p-2;
    QTest::newRow("int8") << static_cast<int>(ElementType::Int8) << -8.0 << 8.0 << 1.0;
    QTest::newRow("int32") << static_cast<int>(ElementType::Int32) << -8.0 << 8.0 << 1.0;
    QTest::newRow("int64") << static_cast<int>(ElementType::Int64) << -8.0 << 8.0 << 1.0;
    QTest::newRow("uint16") << static_cast<int>(ElementType::UInt16) << 0.0 << 8.0 << 1.0;
    QTest::newRow("uint64") << static_cast<int>(ElementType::UInt64) << 0.0 << 8.0 << 1.0;
    QTest::newRow("bool") << static_cast<int>(ElementType::Bool) << 0.0 << 2.0 << 1.0;
}

void TestLaunchPlan::randomFill() {
    QFETCH(int, type);
    QFETCH(double, low);
    QFETCH(double, high);
    QFETCH(double, step);
    ArgumentSpec a = vectorOf(static_cast<ElementType>(type), 5000);
    a.fill = FillKind::Random;
    a.randomSeed = 42;
    const std::vector<unsigned char> data = initialContents(a, 7, {});
    QCOMPARE(data.size(), static_cast<std::size_t>(a.bytes()));
    QCOMPARE(initialContents(a, 99, {}), data); // the file's RandomSeed wins over the run's seed
    std::set<double> seen;
    double sum = 0;
    for (std::size_t i = 0; i < 5000; ++i) {
        double v = 0;
        switch (a.element) {
        case ElementType::Float:
            v = valueAt<float>(data, i);
            break;
        case ElementType::Double:
            v = valueAt<double>(data, i);
            break;
        case ElementType::Half:
            v = floatFromHalf(valueAt<std::uint16_t>(data, i));
            break;
        case ElementType::BFloat16:
            v = floatFromBfloat16(valueAt<std::uint16_t>(data, i));
            break;
        case ElementType::Float8E4M3:
            v = floatFromFloat8E4M3(data[i]);
            break;
        case ElementType::Float8E5M2:
            v = floatFromFloat8E5M2(data[i]);
            break;
        case ElementType::Int8:
            v = valueAt<std::int8_t>(data, i);
            break;
        case ElementType::Int32:
            v = valueAt<std::int32_t>(data, i);
            break;
        case ElementType::Int64:
            v = static_cast<double>(valueAt<std::int64_t>(data, i));
            break;
        case ElementType::UInt16:
            v = valueAt<std::uint16_t>(data, i);
            break;
        case ElementType::UInt64:
            v = static_cast<double>(valueAt<std::uint64_t>(data, i));
            break;
        case ElementType::Bool:
            v = data[i];
            break;
        default:
            QFAIL("type not covered");
        }
        QVERIFY2(v >= low && v < high, qPrintable(QString("value %1 = %2").arg(i).arg(v)));
        QVERIFY(std::fmod(v, step) == 0.0);
        seen.insert(v);
        sum += v;
    }
    // Uniform: the mean is near the middle and the values are spread out.
    QVERIFY2(std::fabs(sum / 5000 - (low + high - step) / 2) < (high - low) * 0.05, qPrintable(QString::number(sum)));
    QVERIFY(seen.size() >= std::min<std::size_t>(static_cast<std::size_t>((high - low) / step), 1000));
}

void TestLaunchPlan::randomSeeds() {
    ArgumentSpec a = vectorOf(ElementType::Float, 64);
    a.fill = FillKind::Random;
    ArgumentSpec b = a;
    b.index = 3;
    // Unseeded: derived from the run's seed and the argument's index.
    QCOMPARE(initialContents(a, 5, {}), initialContents(a, 5, {}));
    QVERIFY(initialContents(a, 5, {}) != initialContents(a, 6, {}));
    QVERIFY(initialContents(a, 5, {}) != initialContents(b, 5, {}));
    QVERIFY(fillSeed(a, 5) != fillSeed(b, 5));
    a.randomSeed = 1;
    QCOMPARE(fillSeed(a, 5), std::uint64_t{1});
    // Pinned: the first values of seed 1 are the same on every machine and in every version.
    const std::vector<unsigned char> data = initialContents(a, 0, {});
    const std::uint64_t z0 = [] {
        std::uint64_t z = 1 + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }();
    QCOMPARE(valueAt<float>(data, 0), static_cast<float>(static_cast<double>(z0 >> 40) * 0x1p-23 - 1.0));
}

void TestLaunchPlan::constantFill() {
    ArgumentSpec a = vectorOf(ElementType::Int16, 1001);
    a.fillValue = -3;
    std::vector<unsigned char> data = initialContents(a, 0, {});
    QCOMPARE(data.size(), std::size_t{2002});
    for (std::size_t i = 0; i < 1001; ++i)
        QCOMPARE(valueAt<std::int16_t>(data, i), std::int16_t{-3});
    ArgumentSpec h = vectorOf(ElementType::Half, 3, 4); // half4
    data = constantContents(h, 1.5);
    QCOMPARE(data.size(), std::size_t{24});
    for (std::size_t i = 0; i < 12; ++i)
        QCOMPARE(valueAt<std::uint16_t>(data, i), std::uint16_t{0x3E00});
    data = constantContents(vectorOf(ElementType::Double, 7), 0.0);
    QCOMPARE(data, std::vector<unsigned char>(56, 0));
    // FP8: one byte a value, converted as CUDA converts.
    ArgumentSpec e4 = vectorOf(ElementType::Float8E4M3, 37);
    e4.fillValue = -1.5;
    QCOMPARE(initialContents(e4, 0, {}), std::vector<unsigned char>(37, 0xBC)); // 1.0111.100
    QCOMPARE(constantContents(vectorOf(ElementType::Float8E5M2, 5), 0.1),
             std::vector<unsigned char>(5, 0x2E)); // 0.1 rounds to 0.09375 = 1.5 * 2^-4: 0.01011.10
    QCOMPARE(constantContents(vectorOf(ElementType::Float8E4M3, 3), 448.0), std::vector<unsigned char>(3, 0x7E));
    QCOMPARE(valueFits(ElementType::Float8E4M3, 448), std::string());
    QCOMPARE(valueFits(ElementType::Float8E4M3, -448.5),
             std::string("out of the range of float8_e4m3 (whose largest value is 448)"));
    QCOMPARE(valueFits(ElementType::Float8E5M2, 57344), std::string());
    QCOMPARE(valueFits(ElementType::Float8E5M2, std::numeric_limits<double>::infinity()),
             std::string("out of the range of float8_e5m2 (whose largest value is 57344)"));
    QCOMPARE(valueFits(ElementType::Float8E4M3, std::nan("")), std::string());

    QCOMPARE(valueFits(ElementType::Float, 1e300), std::string());
    QCOMPARE(valueFits(ElementType::Int64, 9223372036854775807.0), std::string("out of the range of int64"));
    QCOMPARE(valueFits(ElementType::Int64, -9223372036854775808.0), std::string());
    QCOMPARE(valueFits(ElementType::UInt32, -1), std::string("out of the range of uint32"));
    QCOMPARE(valueFits(ElementType::Int32, std::nan("")), std::string("not a number (int32 is an integer type)"));
}

void TestLaunchPlan::binaryRawFill() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::filesystem::path base = dir.path().toStdString();
    {
        std::ofstream out(base / "data.bin", std::ios::binary);
        const float values[3] = {1.0f, -2.5f, 4.0f};
        out.write(reinterpret_cast<const char*>(values), sizeof values);
    }
    ArgumentSpec a = vectorOf(ElementType::Float, 3);
    a.fill = FillKind::BinaryRaw;
    a.dataSource = "data.bin";
    const std::vector<unsigned char> data = initialContents(a, 0, base, "p.json");
    QCOMPARE(valueAt<float>(data, 1), -2.5f);

    a.count = 4;
    try {
        initialContents(a, 0, base, "p.json");
        QFAIL("no error");
    } catch (const InputError& e) {
        QCOMPARE(e.file(), std::string("p.json"));
        QCOMPARE(e.location(), std::string("/KernelSpecification/Arguments/2/DataSource"));
        QCOMPARE(e.message(),
                 "argument 'out': data file '" + (base / "data.bin").string() + "' holds 12 bytes, expected 16");
    }
    a.dataSource = "missing.bin";
    try {
        initialContents(a, 0, base, "p.json");
        QFAIL("no error");
    } catch (const InputError& e) {
        QVERIFY2(e.message().rfind("argument 'out': cannot read data file '" + (base / "missing.bin").string() + "'",
                                   0) == 0,
                 e.what());
    }
}

void TestLaunchPlan::compare_data() {
    QTest::addColumn<int>("method");
    QTest::addColumn<double>("tolerance");
    QTest::addColumn<QList<float>>("output");
    QTest::addColumn<QList<float>>("reference");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<double>("error");
    QTest::addColumn<QString>("message");
    const int normalized = static_cast<int>(Validation::Normalized);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const double infinite = std::numeric_limits<double>::infinity();
    QTest::newRow("equal") << normalized << 1e-4 << QList<float>{1, 2, 3} << QList<float>{1, 2, 3} << true << 0.0
                           << QString();
    QTest::newRow("rounding, scale 100") << normalized << 1e-4 << QList<float>{100.001f, 2, -50}
                                         << QList<float>{100, 2, -50} << true << 0.001 / 100 << QString();
    QTest::newRow("small outputs: their own scale")
        << normalized << 1e-4 << QList<float>{2e-5f, 3e-5f} << QList<float>{1e-5f, 3e-5f} << false << 1.0 / 3
        << "argument 'out': element 0 is 1.99999995e-05, expected "
           "9.99999975e-06 (error 0.333 of the output's scale 3e-05, "
           "tolerance 0.0001 for float) (1 of 2 values beyond the tolerance)";
    QTest::newRow("all-zero reference: absolute")
        << normalized << 1e-4 << QList<float>{0.00001f, 0} << QList<float>{0, 0} << true << 0.00001 << QString();
    QTest::newRow("wrong") << normalized << 1e-4 << QList<float>{1, 2, 3.5f, 4} << QList<float>{1, 2, 3, 4} << false
                           << 0.5 / 4
                           << "argument 'out': element 2 is 3.5, expected 3 (error 0.125 of the output's scale 4, "
                              "tolerance 0.0001 for float) (1 of 4 values beyond the tolerance)";
    QTest::newRow("never written") << normalized << 1e-4 << QList<float>{1, std::bit_cast<float>(0xFFFFFFFFu), 3}
                                   << QList<float>{1, 2, 3} << false << infinite
                                   << "argument 'out': element 1 was never written (still the NaN poison), expected 2 "
                                      "(1 of 3 values beyond the tolerance)";
    QTest::newRow("NaN") << normalized << 1e-4 << QList<float>{nan, 2} << QList<float>{1, 2} << false << infinite
                         << "argument 'out': element 0 is nan, expected 1 (1 of 2 values beyond the tolerance)";
    QTest::newRow("inf") << normalized << 1e-4 << QList<float>{1, -inf} << QList<float>{1, 2} << false << infinite
                         << "argument 'out': element 1 is -inf, expected 2 (1 of 2 values beyond the tolerance)";
    QTest::newRow("NaN in both") << normalized << 1e-4 << QList<float>{nan, 2} << QList<float>{nan, 2} << true << 0.0
                                 << QString();
    QTest::newRow("side by side") << static_cast<int>(Validation::SideBySide) << 0.1 << QList<float>{1, 2.25f}
                                  << QList<float>{1, 2} << false << 0.25
                                  << "argument 'out': element 1 is 2.25, expected 2 (difference 0.25, threshold 0.1) "
                                     "(1 of 2 values beyond the tolerance)";
    QTest::newRow("side by side relative")
        << static_cast<int>(Validation::SideBySideRelative) << 0.1 << QList<float>{1000, 0.5f}
        << QList<float>{1050, 0.5f} << true << 50.0 / 1050 << QString();
    QTest::newRow("side by side relative, over")
        << static_cast<int>(Validation::SideBySideRelative) << 0.1 << QList<float>{1000, 0.75f}
        << QList<float>{1050, 0.5f} << false << 0.5
        << "argument 'out': element 1 is 0.75, expected 0.5 (relative "
           "difference 0.5, threshold 0.1) (1 of 2 values beyond the tolerance)";
    QTest::newRow("absolute difference") << static_cast<int>(Validation::AbsoluteDifference) << 1.0
                                         << QList<float>{1.5f, 2.25f, 3} << QList<float>{1, 2, 4} << false << 1.75
                                         << "argument 'out': the absolute differences add up to 1.75, over the "
                                            "threshold 1 (the largest: element 2 is 3, expected 4) (3 of 3 values "
                                            "differ)";
}

void TestLaunchPlan::compare() {
    QFETCH(int, method);
    QFETCH(double, tolerance);
    QFETCH(QList<float>, output);
    QFETCH(QList<float>, reference);
    QFETCH(bool, ok);
    QFETCH(double, error);
    QFETCH(QString, message);
    const ArgumentSpec a = vectorOf(ElementType::Float, output.size());
    const Verdict v =
        compareValues(a, floats({output.begin(), output.end()}), floats({reference.begin(), reference.end()}),
                      static_cast<Validation>(method), tolerance);
    QCOMPARE(v.ok, ok);
    if (std::isinf(error))
        QVERIFY(std::isinf(v.error));
    else
        QVERIFY2(std::fabs(v.error - error) <= 1e-6 * std::max(1.0, error), qPrintable(QString::number(v.error)));
    QCOMPARE(QString::fromStdString(v.message), message);
}

// Outputs of millions of values are compared in chunks on several threads: the verdict is the
// one a single pass gives (the first non-finite mismatch, else the first worst element).
void TestLaunchPlan::compareLargeOutputs() {
    constexpr std::int64_t n = 5'000'000; // five chunks of 2^20 values
    const ArgumentSpec a = vectorOf(ElementType::Float, n);
    std::vector<float> ref(n);
    for (std::int64_t i = 0; i < n; ++i)
        ref[i] = 1e-6f * static_cast<float>(i % 1000);
    auto bytes = [](const std::vector<float>& v) {
        std::vector<unsigned char> b(v.size() * 4);
        std::memcpy(b.data(), v.data(), b.size());
        return b;
    };
    const std::vector<unsigned char> refBytes = bytes(ref);
    std::vector<float> out = ref;
    QVERIFY(compareValues(a, bytes(out), refBytes, Validation::Normalized, 1e-4).ok);
    // Two wrong values in different chunks, the same error twice: the earlier is named.
    out[2'500'000] += 0.0005f;
    out[4'000'000] += 0.0005f;
    out[4'200'000] += 0.0001f;
    Verdict v = compareValues(a, bytes(out), refBytes, Validation::Normalized, 1e-4);
    QVERIFY(!v.ok);
    QVERIFY2(QString::fromStdString(v.message).startsWith("argument 'out': element 2500000 is "), v.message.c_str());
    QVERIFY(std::fabs(v.error - 0.0005 / 0.000999) < 1e-3);
    // A larger error later wins; a NaN anywhere wins over both, the first NaN is named.
    out[4'000'000] += 0.001f;
    v = compareValues(a, bytes(out), refBytes, Validation::Normalized, 1e-4);
    QVERIFY2(QString::fromStdString(v.message).startsWith("argument 'out': element 4000000 is "), v.message.c_str());
    out[4'900'000] = std::nanf("");
    out[3'100'000] = std::nanf("");
    v = compareValues(a, bytes(out), refBytes, Validation::Normalized, 1e-4);
    QVERIFY(std::isinf(v.error));
    QVERIFY2(QString::fromStdString(v.message).startsWith("argument 'out': element 3100000 is nan"), v.message.c_str());
    // The absolute difference sums over every chunk.
    out = ref;
    for (std::int64_t i = 0; i < n; i += 100'000)
        out[i] += 0.25f;
    v = compareValues(a, bytes(out), refBytes, Validation::AbsoluteDifference, 1.0);
    QVERIFY(std::fabs(v.error - 0.25 * 50) < 1e-3);
}

void TestLaunchPlan::poison() {
    // Integers compare exactly, and all bits set is named as the likely poison.
    ArgumentSpec a = vectorOf(ElementType::Int32, 3);
    std::vector<unsigned char> out(12, 0);
    std::vector<unsigned char> ref(12, 0);
    QVERIFY(compareValues(a, out, ref, Validation::Normalized, defaultTolerance(a.element)).ok);
    std::memset(out.data() + 4, 0xFF, 4);
    const Verdict v = compareValues(a, out, ref, Validation::Normalized, defaultTolerance(a.element));
    QVERIFY(!v.ok);
    QCOMPARE(v.message, std::string("argument 'out': element 1 is -1, expected 0 (error 1 of the output's scale 1, "
                                    "tolerance 0 for int32; all its bits are set, as the worker's poison before the "
                                    "launch: never written?) (1 of 3 values beyond the tolerance)"));
    QCOMPARE(firstPoisoned(a, out), std::int64_t{-1}); // cannot tell for integers

    // int64 values a double cannot tell apart still differ.
    ArgumentSpec w = vectorOf(ElementType::Int64, 1);
    std::vector<unsigned char> big(8);
    std::vector<unsigned char> bigger(8);
    const std::int64_t x = (std::int64_t{1} << 60) + 1;
    const std::int64_t y = std::int64_t{1} << 60;
    std::memcpy(big.data(), &x, 8);
    std::memcpy(bigger.data(), &y, 8);
    QVERIFY(!compareValues(w, big, bigger, Validation::Normalized, 0).ok);

    // half4: components are named.
    ArgumentSpec h = vectorOf(ElementType::Half, 2, 4);
    std::vector<unsigned char> hout = constantContents(h, 1.0);
    const std::vector<unsigned char> href = constantContents(h, 1.0);
    std::memset(hout.data() + 2 * 6, 0xFF, 2);
    QCOMPARE(firstPoisoned(h, hout), std::int64_t{6});
    const Verdict hv = compareValues(h, hout, href, Validation::Normalized, defaultTolerance(h.element));
    QCOMPARE(hv.message, std::string("argument 'out': element 6 (component 2 of half4 1) was never written (still the "
                                     "NaN poison), expected 1 (1 of 8 values beyond the tolerance)"));
    QCOMPARE(firstPoisoned(h, href), std::int64_t{-1});

    QCOMPARE(defaultTolerance(ElementType::Float), 1e-4);
    QCOMPARE(defaultTolerance(ElementType::Double), 1e-9);
    QCOMPARE(defaultTolerance(ElementType::Half), 1e-2);
    QCOMPARE(defaultTolerance(ElementType::BFloat16), 5e-2);
    QCOMPARE(defaultTolerance(ElementType::Float8E4M3), 0.125); // one step: 3 mantissa bits
    QCOMPARE(defaultTolerance(ElementType::Float8E5M2), 0.25);  // 2 bits
    QCOMPARE(defaultTolerance(ElementType::UInt8), 0.0);
    QCOMPARE(parseValidation("SideBySideComparison"), std::optional<Validation>(Validation::SideBySide));
    QCOMPARE(parseValidation(""), std::optional<Validation>(Validation::Normalized));
    QVERIFY(!parseValidation("Bogus"));
}

// FP8 outputs are decoded for the comparison; two configs' sums may round to neighbouring values.
void TestLaunchPlan::compareFloat8() {
    ArgumentSpec a = vectorOf(ElementType::Float8E4M3, 4);
    // 4, 2, -1, 0.5 as the reference; the output one step off at the largest value (4.5) passes:
    // 0.5 of the scale 4 is the tolerance 2^-3.
    const std::vector<unsigned char> ref{0x48, 0x40, 0xB8, 0x30};
    std::vector<unsigned char> out{0x49, 0x40, 0xB8, 0x30};
    Verdict v = compareValues(a, out, ref, Validation::Normalized, defaultTolerance(a.element));
    QVERIFY2(v.ok, v.message.c_str());
    QCOMPARE(v.error, 0.125);
    // Two steps (5) do not.
    out[0] = 0x4A;
    v = compareValues(a, out, ref, Validation::Normalized, defaultTolerance(a.element));
    QVERIFY(!v.ok);
    QCOMPARE(v.message, std::string("argument 'out': element 0 is 5, expected 4 (error 0.25 of the output's scale 4, "
                                    "tolerance 0.125 for float8_e4m3) (1 of 4 values beyond the tolerance)"));
    // A sign flip is a real error at any scale.
    out = ref;
    out[2] = 0x38;
    QVERIFY(!compareValues(a, out, ref, Validation::Normalized, defaultTolerance(a.element)).ok);
    // The poison (0xFF, a NaN in both formats) is found and named.
    out = ref;
    out[3] = 0xFF;
    QCOMPARE(firstPoisoned(a, out), std::int64_t{3});
    QCOMPARE(firstPoisoned(a, ref), std::int64_t{-1});
    v = compareValues(a, out, ref, Validation::Normalized, defaultTolerance(a.element));
    QVERIFY(std::isinf(v.error));
    QCOMPARE(v.message,
             std::string("argument 'out': element 3 was never written (still the NaN poison), expected 0.5 (1 of 4 "
                         "values beyond the tolerance)"));

    // e5m2: infinities compare as values; NaNs with other bits still agree.
    ArgumentSpec b = vectorOf(ElementType::Float8E5M2, 3);
    const std::vector<unsigned char> bref{0x7C, 0x7E, 0x3C}; // inf, NaN, 1
    std::vector<unsigned char> bout{0x7C, 0x7F, 0x3D};       // inf, NaN, 1.25
    v = compareValues(b, bout, bref, Validation::Normalized, defaultTolerance(b.element));
    QVERIFY2(v.ok, v.message.c_str()); // 0.25 of the scale 1 (the finite values' largest)
    QCOMPARE(v.error, 0.25);
    bout[0] = 0xFC;
    v = compareValues(b, bout, bref, Validation::Normalized, defaultTolerance(b.element));
    QCOMPARE(v.message,
             std::string("argument 'out': element 0 is -inf, expected inf (1 of 3 values beyond the tolerance)"));
    bout = {0x7C, 0x7E, 0x3E}; // 1.5
    v = compareValues(b, bout, bref, Validation::SideBySide, 0.25);
    QCOMPARE(v.message, std::string("argument 'out': element 2 is 1.5, expected 1 (difference 0.5, threshold 0.25) (1 "
                                    "of 3 values beyond the tolerance)"));
}

QTEST_GUILESS_MAIN(TestLaunchPlan)
#include "tst_launchplan.moc"
