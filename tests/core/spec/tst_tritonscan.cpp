// Triton problems read without Python (spec/tritonscan.h): the @triton.jit functions of a
// module and their parameters however the signature is laid out, and what a Triton problem must
// agree on with its kernel (a missing function, a tuning parameter that is not tl.constexpr, the
// count of Arguments, a tl.constexpr without a value), each refused naming the name and why.

#include "base/error.h"
#include "space/configspace.h"
#include "spec/launchgeometry.h"
#include "spec/tritonscan.h"
#include "spec/tuningproblem.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace tilescope;

namespace {

QString names(const TritonFunction& f) {
    QStringList out;
    for (const TritonParameter& p : f.parameters)
        out << QString::fromStdString(p.name) + (p.isConstexpr ? QStringLiteral("!") : QString()) +
                   (p.defaultText ? QStringLiteral("=") + QString::fromStdString(*p.defaultText) : QString());
    return out.join(QLatin1Char(' '));
}

const TritonFunction* find(const std::vector<TritonFunction>& functions, const std::string& name) {
    const TritonFunction* found = nullptr;
    for (const TritonFunction& f : functions)
        if (f.name == name)
            found = &f;
    return found;
}

const char* const kKernel = R"py(import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor,
                 BLOCK: tl.constexpr, MODE: tl.constexpr = "plain"):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * factor, mask=offs < n)
)py";

// A problem for kKernel with `parameters` (JSON array text), `arguments` Arguments and optional
// extra text in KernelSpecification.
std::string problemText(const std::string& parameters, int arguments = 4,
                        const std::string& kernelName = "scale_kernel",
                        const std::string& shapes = R"([{"N": 4096}])") {
    nlohmann::json p;
    p["General"] = {{"FormatVersion", 1}};
    p["ConfigurationSpace"] = {{"TuningParameters", nlohmann::json::parse(parameters)},
                               {"Conditions", nlohmann::json::array()}};
    nlohmann::json args = nlohmann::json::array();
    const char* const all[][3] = {{"x", "float", "Vector"},
                                  {"out", "float", "Vector"},
                                  {"n", "int32", "Scalar"},
                                  {"factor", "float", "Scalar"},
                                  {"extra", "int32", "Scalar"}};
    for (int i = 0; i < arguments && i < 5; ++i) {
        nlohmann::json a = {{"Name", all[i][0]}, {"Type", all[i][1]}, {"MemoryType", all[i][2]}};
        if (std::string(all[i][2]) == "Vector")
            a["Size"] = "N";
        else
            a["Value"] = "N";
        args.push_back(a);
    }
    p["KernelSpecification"] = {
        {"Language", "triton"},     {"KernelName", kernelName},          {"KernelFile", "scale.py"},
        {"GlobalSizeType", "CUDA"}, {"GlobalSize", {{"X", "N // 256"}}}, {"Arguments", args}};
    p["Tilescope"] = {{"Shapes", nlohmann::json::parse(shapes)}};
    return p.dump(2);
}

} // namespace

class TestTritonScan : public QObject {
    Q_OBJECT

private slots:
    void signatures_data();
    void signatures();
    void decorators();
    void topLevelOnly();
    void problemAccepted();
    void problemRefused_data();
    void problemRefused();
    void blockIsWarpsTimes32();
    void languageCaseInsensitive();
    void fixtureProblem();

private:
    QTemporaryDir m_dir;
    TuningProblem load(const std::string& text, const char* kernel = kKernel);
};

TuningProblem TestTritonScan::load(const std::string& text, const char* kernel) {
    std::ofstream(m_dir.filePath(QStringLiteral("scale.py")).toStdString()) << kernel;
    std::ofstream(m_dir.filePath(QStringLiteral("p.json")).toStdString()) << text;
    return TuningProblem::load(m_dir.filePath(QStringLiteral("p.json")).toStdString());
}

// Signatures as people write them: on one line, over many with comments between the
// parameters, defaults that hold commas, brackets and '#' in strings, a trailing comma,
// keyword-only markers, a return annotation, backslash continuations; "!" marks tl.constexpr.
void TestTritonScan::signatures_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("defLine");
    QTest::addColumn<int>("lastParameterLine");

    QTest::newRow("one line") << "@triton.jit\ndef k(a, b, N: tl.constexpr):\n    pass\n"
                              << "a b N!" << 2 << 2;
    QTest::newRow("tutorial matmul")
        << "@triton.jit\n"
           "def matmul_kernel(\n"
           "        # Pointers to matrices\n"
           "        a_ptr, b_ptr, c_ptr,\n"
           "        # Matrix dimensions\n"
           "        M, N, K,\n"
           "        # The stride variables (how much to move the ptr by, e.g. `stride_am`)\n"
           "        stride_am, stride_ak,  #\n"
           "        stride_bk, stride_bn,  #\n"
           "        stride_cm, stride_cn,\n"
           "        # Meta-parameters\n"
           "        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,  #\n"
           "        GROUP_SIZE_M: tl.constexpr,  #\n"
           "        ACTIVATION: tl.constexpr  #\n"
           "):\n"
           "    pass\n"
        << "a_ptr b_ptr c_ptr M N K stride_am stride_ak stride_bk stride_bn stride_cm stride_cn BLOCK_SIZE_M! "
           "BLOCK_SIZE_N! BLOCK_SIZE_K! GROUP_SIZE_M! ACTIVATION!"
        << 2 << 14;
    QTest::newRow("defaults with commas, brackets and # in strings")
        << "@triton.jit\ndef k(x, y=(1, 2), s: tl.constexpr = \"a, b) # c\", t: tl.constexpr=f'{1}', "
           "u=[3, (4, 5)],):\n    pass\n"
        << "x y=(1, 2) s!=\"a, b) # c\" t!=f'{1}' u=[3, (4, 5)]" << 2 << 2;
    QTest::newRow("comparisons in a default are no default's '='")
        << "@triton.jit\ndef k(x, flag: tl.constexpr = 1 == 2, z=3 <= 4):\n    pass\n"
        << "x flag!=1 == 2 z=3 <= 4" << 2 << 2;
    QTest::newRow("keyword-only, return annotation")
        << "@triton.jit\ndef k(x, *, BLOCK: 'tl.constexpr', other: tl.constexpr = None) -> None:\n    pass\n"
        << "x BLOCK! other!=None" << 2 << 2;
    QTest::newRow("backslash continuations and tabs") << "@triton.jit\ndef \\\n  k(x,\\\n\ty: tl.constexpr):\n\tpass\n"
                                                      << "x y!" << 3 << 4;
    QTest::newRow("triple-quoted docstrings around") << "\"\"\"def nope(a):\n\"\"\"\n@triton.jit\ndef k(a):\n    "
                                                        "\"\"\"def inner(b): pass\"\"\"\n"
                                                     << "a" << 4 << 4;
    QTest::newRow("CRLF line ends") << "@triton.jit\r\ndef k(a,\r\n      B: tl.constexpr):\r\n    pass\r\n"
                                    << "a B!" << 2 << 3;
}

void TestTritonScan::signatures() {
    QFETCH(QString, source);
    QFETCH(QString, expected);
    QFETCH(int, defLine);
    QFETCH(int, lastParameterLine);
    const std::vector<TritonFunction> functions = scanPythonFunctions(source.toStdString());
    const TritonFunction* f = find(functions, functions.empty() ? "" : functions.back().name);
    QVERIFY(f);
    QVERIFY(f->jit);
    QCOMPARE(names(*f), expected);
    QCOMPARE(f->line, defLine);
    QCOMPARE(f->parameters.back().line, lastParameterLine);
    QVERIFY(f->unsupported.empty());
}

// @triton.jit with arguments, under @triton.autotune over several lines, @jit imported alone;
// a function without it is found but is no kernel; *args cannot be a kernel's.
void TestTritonScan::decorators() {
    const std::string source = "from triton import jit\n"
                               "@triton.autotune(configs=[\n"
                               "    triton.Config({'B': 32}, num_warps=4),  # one\n"
                               "], key=['n'])\n"
                               "@triton.jit(do_not_specialize=['n'])\n"
                               "def tuned(x, n, B: tl.constexpr):\n    pass\n"
                               "@jit\ndef plain(x):\n    pass\n"
                               "def helper(x):\n    return x\n"
                               "@triton.jit\ndef varargs(x, *rest):\n    pass\n"
                               "@functools.lru_cache\ndef cached():\n    pass\n";
    const std::vector<TritonFunction> functions = scanPythonFunctions(source);
    QCOMPARE(functions.size(), std::size_t(5));
    const TritonFunction* tuned = find(functions, "tuned");
    QVERIFY(tuned && tuned->jit);
    QCOMPARE(tuned->decorators.size(), std::size_t(2));
    QCOMPARE(QString::fromStdString(tuned->decorators[1]), QStringLiteral("triton.jit(do_not_specialize=['n'])"));
    QCOMPARE(names(*tuned), QStringLiteral("x n B!"));
    QVERIFY(find(functions, "plain")->jit);
    QVERIFY(!find(functions, "helper")->jit);
    QVERIFY(!find(functions, "cached")->jit);
    QVERIFY2(QString::fromStdString(find(functions, "varargs")->unsupported).contains(QStringLiteral("'*rest'")),
             find(functions, "varargs")->unsupported.c_str());
}

// Functions inside a function or a class are not the module's: Tilescope imports the module and
// takes KernelName from its top level.
void TestTritonScan::topLevelOnly() {
    const std::string source = "class C:\n    @triton.jit\n    def method(x):\n        pass\n"
                               "def outer():\n    @triton.jit\n    def inner(y):\n        pass\n    return inner\n"
                               "@triton.jit\ndef top(z):\n    pass\n";
    const std::vector<TritonFunction> functions = scanPythonFunctions(source);
    QCOMPARE(functions.size(), std::size_t(2));
    QCOMPARE(QString::fromStdString(functions[0].name), QStringLiteral("outer"));
    QCOMPARE(QString::fromStdString(functions[1].name), QStringLiteral("top"));
}

// tl.constexpr parameters and compile options tune; a constexpr with a default needs no value.
void TestTritonScan::problemAccepted() {
    const TuningProblem p = load(problemText(R"([{"Name": "BLOCK", "Type": "int", "Values": "[128, 256]"},
        {"Name": "num_warps", "Type": "int", "Values": "[4, 8]"},
        {"Name": "num_stages", "Type": "int", "Values": "[2, 3]"},
        {"Name": "num_ctas", "Type": "int", "Values": "[1]"},
        {"Name": "maxnreg", "Type": "int", "Values": "[128]"}])"));
    QVERIFY(p.isTriton());
    QVERIFY(!p.isCuda());
    QVERIFY2(p.launchBlockers.empty(), p.launchBlockers.empty() ? "" : p.launchBlockers.front().what());
    const std::string source = kKernel;
    const TritonFunction f = checkTritonKernel(p, source);
    QCOMPARE(QString::fromStdString(f.name), QStringLiteral("scale_kernel"));
    QCOMPARE(f.runtimeParameters().size(), std::size_t(4));
    // The space counts as any other.
    QCOMPARE(ConfigSpace::build(p, 0).size(), std::uint64_t(8));
}

// Each mismatch: where (a JSON pointer) and what, naming the name.
void TestTritonScan::problemRefused_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<QString>("location");
    QTest::addColumn<QString>("message");
    const std::string block = R"([{"Name": "BLOCK", "Type": "int", "Values": "[128]"}])";
    QTest::newRow("missing function")
        << QString::fromStdString(problemText(block, 4, "scale")) << "/KernelSpecification/KernelName"
        << "no function 'scale' at the top level of the kernel file scale.py (its @triton.jit functions: "
           "scale_kernel)";
    QTest::newRow("non-constexpr parameter")
        << QString::fromStdString(problemText(R"([{"Name": "n", "Type": "int", "Values": "[1, 2]"}])"))
        << "/ConfigurationSpace/TuningParameters/0/Name"
        << "tuning parameter 'n' is a parameter of scale_kernel that is not tl.constexpr (scale.py line 6)";
    QTest::newRow("neither parameter nor option")
        << QString::fromStdString(problemText(
               R"([{"Name": "BLOCK", "Type": "int", "Values": "[128]"}, {"Name": "warps", "Type": "int", "Values": "[4]"}])"))
        << "/ConfigurationSpace/TuningParameters/1/Name"
        << "tuning parameter 'warps' is neither a tl.constexpr parameter of scale_kernel (scale.py line 6) nor one of "
           "Triton's compile options (num_warps, num_stages, num_ctas, maxnreg)";
    QTest::newRow("too few arguments")
        << QString::fromStdString(problemText(block, 3)) << "/KernelSpecification/Arguments"
        << "takes 4 arguments that are not tl.constexpr (x_ptr, out_ptr, n, factor), and Arguments has 3";
    QTest::newRow("too many arguments")
        << QString::fromStdString(problemText(block, 5)) << "/KernelSpecification/Arguments"
        << "and Arguments has 5: one Argument for each of them, in the order of the signature";
    QTest::newRow("constexpr without a value")
        << QString::fromStdString(problemText(R"([{"Name": "num_warps", "Type": "int", "Values": "[4]"}])"))
        << "/ConfigurationSpace/TuningParameters"
        << "the tl.constexpr parameter 'BLOCK' of scale_kernel (scale.py line 7) has no value";
}

void TestTritonScan::problemRefused() {
    QFETCH(QString, problem);
    QFETCH(QString, location);
    QFETCH(QString, message);
    // Counting needs no kernel: the problem loads, and compiling it stops with the reason.
    const TuningProblem p = load(problem.toStdString());
    QCOMPARE(p.launchBlockers.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(p.launchBlockers.front().location()), location);
    QVERIFY2(QString::fromStdString(p.launchBlockers.front().message()).contains(message),
             p.launchBlockers.front().what());
    try {
        p.requireLaunchable();
        QFAIL("a Triton problem that does not fit its kernel was launchable");
    } catch (const InputError& e) {
        QVERIFY2(QString::fromStdString(e.message()).contains(message), e.what());
    }
    try {
        checkTritonKernel(p, kKernel);
        QFAIL("checkTritonKernel accepted it");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.location()), location);
    }
}

// Without LocalSize the block is num_warps * 32 threads (4 warps by default); a shape name may
// give a tl.constexpr its value.
void TestTritonScan::blockIsWarpsTimes32() {
    const TuningProblem tuned = load(problemText(R"([{"Name": "BLOCK", "Type": "int", "Values": "[128]"},
        {"Name": "num_warps", "Type": "int", "Values": "[2, 8]"}])"));
    const GeometryPlanner planner(tuned, 0);
    QCOMPARE(planner.plan({0, 0}).block[0], std::int64_t(64));
    QCOMPARE(planner.plan({0, 1}).block[0], std::int64_t(256));
    QCOMPARE(planner.plan({0, 1}).grid[0], std::int64_t(16));

    const TuningProblem byShape = load(problemText("[]", 4, "scale_kernel", R"([{"N": 4096, "BLOCK": 64}])"));
    QVERIFY2(byShape.launchBlockers.empty(), byShape.launchBlockers.empty() ? "" : byShape.launchBlockers[0].what());
    QCOMPARE(GeometryPlanner(byShape, 0).plan({}).block[0], std::int64_t(kTritonDefaultWarps * 32));
}

// "Triton", "triton", "TRITON": Kernel Tuner compares languages without case.
void TestTritonScan::languageCaseInsensitive() {
    for (const char* language : {"Triton", "TRITON", "triton"}) {
        TuningProblem p;
        p.language = language;
        QVERIFY(p.isTriton());
        QVERIFY(!p.isCuda());
    }
    TuningProblem other;
    other.language = "OpenCL";
    QVERIFY(!other.isTriton());
}

// The test fixture the compile suites use reads with no blocker.
void TestTritonScan::fixtureProblem() {
    const TuningProblem p = TuningProblem::load(TILESCOPE_TEST_DATA "/triton/add.json");
    QVERIFY2(p.launchBlockers.empty(), p.launchBlockers.empty() ? "" : p.launchBlockers.front().what());
    QCOMPARE(ConfigSpace::build(p, 0).size(), std::uint64_t(9));
}

QTEST_GUILESS_MAIN(TestTritonScan)
#include "tst_tritonscan.moc"
