// core/compile with Triton (compile/triton.h): a Triton problem's configs compiled by Triton in
// helper processes, without a GPU: the cubin, registers and spills from ptxas' report, the launch
// from Triton's metadata, the call specialised as Triton's JIT would for the shape's values, a
// config Triton refuses as a compile error with Triton's message, results kept whole by the
// compile cache, the static analysis on the binary's own launch. Needs Triton ($TILESCOPE_PYTHON,
// else python3); without it these report a skip (tests/support/tritontest.h).

#include "analysis/staticanalysis.h"
#include "base/error.h"
#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "tritontest.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

using namespace tilescope;

namespace {

const std::string kData = TILESCOPE_TEST_DATA "/triton/";

// The config of `problem` with these values (by parameter name), or an empty config.
Config configOf(const TuningProblem& problem, const std::vector<std::pair<std::string, std::int64_t>>& values) {
    Config config(problem.parameters.size(), 0);
    for (const auto& [name, value] : values) {
        const int p = problem.parameterIndex(name);
        if (p < 0)
            return {};
        const auto& list = problem.parameters[static_cast<std::size_t>(p)].values;
        for (std::size_t v = 0; v < list.size(); ++v)
            if (list[v].i == value)
                config[static_cast<std::size_t>(p)] = static_cast<std::uint16_t>(v);
    }
    return config;
}

} // namespace

class TestTritonCompile : public QObject {
    Q_OBJECT

private slots:
    void requestIsTheCall();
    void compilesWithoutAGpu();
    void integerOneIsCompiledIn();
    void refusedConfigIsACompileError_data();
    void refusedConfigIsACompileError();
    void cacheKeepsTheLaunch();
    void keysCoverTheCall();
    void poolCompilesInParallel();
    void analysisUsesTheBinarysLaunch();
    void spillsFromPtxas();
    void helperThatDies();
};

// The request a config makes: the module's text and name, the call's arguments at the shape (the
// buffers by their Triton type, the scalars by value), its keywords as JSON.
void TestTritonCompile::requestIsTheCall() {
    TILESCOPE_NEED_TRITON();
    const TuningProblem problem = TuningProblem::load(kData + "add.json");
    const RequestBuilder builder(problem, 1); // N = 1000
    const CompileRequest r = builder.request(configOf(problem, {{"BLOCK", 512}, {"num_warps", 8}}), "sm_90");
    QVERIFY(r.language == SourceLanguage::Triton);
    QCOMPARE(r.sourceName, std::string("add.py"));
    QCOMPARE(r.kernelName, std::string("add_kernel"));
    QVERIFY(r.source.find("def add_kernel") != std::string::npos);
    const std::vector<std::string> arguments{R"({"pointer":"fp32"})", R"({"pointer":"fp32"})", R"({"pointer":"fp32"})",
                                             "1000", "2.0"};
    QCOMPARE(r.arguments, arguments);
    const Defines keywords{{"BLOCK", "512"}, {"num_warps", "8"}};
    QCOMPARE(r.defines, keywords);
    QVERIFY(!r.includeDirs.empty());
    QVERIFY(std::filesystem::exists(std::filesystem::path(r.includeDirs.front()) / "add.py"));
    QCOMPARE(builder.preparedSource(configOf(problem, {{"BLOCK", 512}, {"num_warps", 8}})), r.source);
}

// A config compiles to a cubin with the kernel's name, ptxas' registers and Triton's launch: the
// block of num_warps x 32 threads, no shared memory for an elementwise kernel, Triton 3's trailing
// scratch buffers, the argument types of the specialised call.
void TestTritonCompile::compilesWithoutAGpu() {
    TILESCOPE_NEED_TRITON();
    const TuningProblem problem = TuningProblem::load(kData + "add.json");
    const RequestBuilder builder(problem, 0);
    const CompileResult r =
        compileKernel(builder.request(configOf(problem, {{"BLOCK", 256}, {"num_warps", 2}}), "sm_90"));
    QVERIFY2(r.ok(), (r.message + "\n" + r.log).c_str());
    QCOMPARE(r.entryName, std::string("add_kernel"));
    QVERIFY(r.cubin.size() > 4 && r.cubin[0] == 0x7f && r.cubin[1] == 'E' && r.cubin[2] == 'L' && r.cubin[3] == 'F');
    QVERIFY(r.info.registers > 0);
    QCOMPARE(r.info.spillStores, std::int64_t(0));
    QVERIFY2(r.log.find("Compiling entry function 'add_kernel'") != std::string::npos, r.log.c_str());
    QCOMPARE(QString::fromStdString(r.nvrtcVersion), "Triton " + QString::fromStdString(tritonSetup().version));
    QVERIFY(r.launch.has_value());
    QCOMPARE(r.launch->threadsPerBlock, 64);
    QCOMPARE(r.launch->sharedBytes, std::int64_t(0));
    QCOMPARE(r.launch->clusterSize, 1);
    QVERIFY(!r.launch->scratch.empty() && r.launch->scratch.size() <= 2);
    const std::vector<std::string> types{"*fp32", "*fp32", "*fp32", "i32", "fp32"};
    QCOMPARE(r.launch->argumentTypes, types);
    QVERIFY(r.seconds > 0);
}

// An integer argument equal to 1 is compiled into the binary, as Triton's JIT does: the kernel
// does not take it, and the launch says so.
void TestTritonCompile::integerOneIsCompiledIn() {
    TILESCOPE_NEED_TRITON();
    const TuningProblem problem = TuningProblem::load(kData + "add.json");
    CompileRequest request =
        RequestBuilder(problem, 0).request(configOf(problem, {{"BLOCK", 256}, {"num_warps", 4}}), "sm_90");
    request.arguments[3] = "1";
    const CompileResult r = compileKernel(request);
    QVERIFY2(r.ok(), (r.message + "\n" + r.log).c_str());
    QVERIFY(r.launch.has_value());
    QCOMPARE(r.launch->argumentTypes.size(), std::size_t(5));
    QCOMPARE(r.launch->argumentTypes[3], std::string("constexpr"));
}

// What Triton refuses is that config's compile error, with Triton's message (where it is in the
// kernel's file for an error in its code), deterministic and so cached.
void TestTritonCompile::refusedConfigIsACompileError_data() {
    QTest::addColumn<QString>("keyword");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("message");
    QTest::newRow("block not a power of 2") << "BLOCK"
                                            << "300"
                                            << "add.py:14:29: arange's range must be a power of 2";
    QTest::newRow("warps not a power of 2") << "num_warps"
                                            << "3"
                                            << "num_warps must be a power of 2";
    // A static_assert without a message: the assertion itself says what failed.
    QTest::newRow("static_assert") << "BLOCK"
                                   << "8192"
                                   << "add.py:15:5: CompileTimeAssertionFailure: tl.static_assert(BLOCK <= 4096)";
    QTest::newRow("an option Triton does not know") << "num_warpz"
                                                    << "4"
                                                    << "Keyword argument num_warpz was specified but unrecognised";
}

void TestTritonCompile::refusedConfigIsACompileError() {
    TILESCOPE_NEED_TRITON();
    QFETCH(QString, keyword);
    QFETCH(QString, value);
    QFETCH(QString, message);
    const TuningProblem problem = TuningProblem::load(kData + "add.json");
    CompileRequest request =
        RequestBuilder(problem, 0).request(configOf(problem, {{"BLOCK", 256}, {"num_warps", 4}}), "sm_90");
    bool replaced = false;
    for (auto& [name, text] : request.defines)
        if (name == keyword.toStdString()) {
            text = value.toStdString();
            replaced = true;
        }
    if (!replaced)
        request.defines.emplace_back(keyword.toStdString(), value.toStdString());
    const CompileResult r = compileKernel(request);
    QCOMPARE(r.status, CompileStatus::CompileError);
    QVERIFY2(QString::fromStdString(r.message).contains(message), r.message.c_str());
    QVERIFY(r.message.size() <= 1100);
    QVERIFY(!r.transient);
    QVERIFY(r.cubin.empty());
    QVERIFY(!r.log.empty());

    // The helper that compiled it goes on compiling.
    const CompileResult next = compileKernel(
        RequestBuilder(problem, 0).request(configOf(problem, {{"BLOCK", 256}, {"num_warps", 4}}), "sm_90"));
    QVERIFY2(next.ok(), next.message.c_str());
}

// The cache keeps a Triton binary whole: its launch travels with the entry, and a second compile
// of the request is a hit with the same result.
void TestTritonCompile::cacheKeepsTheLaunch() {
    TILESCOPE_NEED_TRITON();
    QTemporaryDir dir;
    auto cache = std::make_shared<CompileCache>(CompileCacheOptions{dir.path().toStdString(), 1 << 30});
    const TuningProblem problem = TuningProblem::load(kData + "add.json");
    const CompileRequest request =
        RequestBuilder(problem, 0).request(configOf(problem, {{"BLOCK", 1024}, {"num_warps", 8}}), "sm_90");
    CompileService first({1, cache});
    const CompileResult compiled = first.compile(request);
    QVERIFY2(compiled.ok(), compiled.message.c_str());
    QVERIFY(!compiled.cached);
    CompileService second({1, cache});
    const CompileResult hit = second.compile(request);
    QVERIFY(hit.cached);
    QCOMPARE(second.stats().compiles, std::uint64_t(0));
    QVERIFY(hit.launch.has_value());
    QVERIFY(*hit.launch == *compiled.launch);
    QVERIFY(hit.cubin == compiled.cubin);
    QVERIFY(hit.info == compiled.info);
    QCOMPARE(hit.entryName, compiled.entryName);
    QCOMPARE(hit.nvrtcVersion, compiled.nvrtcVersion);
}

// The key covers the Triton that compiles, the kernel's text and every argument and keyword: a
// launch-only change for NVRTC (a name the source never mentions) is a compile option to Triton.
void TestTritonCompile::keysCoverTheCall() {
    TILESCOPE_NEED_TRITON();
    const TuningProblem problem = TuningProblem::load(kData + "add.json");
    const CompileRequest base =
        RequestBuilder(problem, 0).request(configOf(problem, {{"BLOCK", 256}, {"num_warps", 4}}), "sm_90");
    const std::string key = compileCacheKey(base);
    QCOMPARE(compileCacheKey(base), key);
    CompileRequest other = base;
    other.defines[1].second = "8"; // num_warps
    QVERIFY(compileCacheKey(other) != key);
    other = base;
    other.arguments[3] = "1000"; // n not divisible by 16
    QVERIFY(compileCacheKey(other) != key);
    // What Triton specialises an integer on, and nothing more: another multiple of 16 (the
    // shape 4096 after 3968) is the same binary; 1, another residue or another type are not.
    other = base;
    QCOMPARE(other.arguments[3], std::string("1048576"));
    other.arguments[3] = "3968";
    QCOMPARE(compileCacheKey(other), key);
    for (const char* differs : {"1", "16000000001", "4294967296", "1048577", "-17"}) {
        other.arguments[3] = differs;
        QVERIFY2(compileCacheKey(other) != key, differs);
    }
    other.arguments[3] = "1000";
    const std::string notDivisible = compileCacheKey(other);
    other.arguments[3] = "1001";
    QCOMPARE(compileCacheKey(other), notDivisible);
    other.arguments[3] = "-16"; // an i32 divisible by 16, as 1048576
    QCOMPARE(compileCacheKey(other), key);
    other = base;
    other.arguments[4] = "3.5"; // a float as given
    QVERIFY(compileCacheKey(other) != key);
    other = base;
    other.source += "\n# a comment\n";
    QVERIFY(compileCacheKey(other) != key);
    other = base;
    other.arch = "sm_80";
    QVERIFY(compileCacheKey(other) != key);
    other = base;
    other.includeDirs = {"/elsewhere"}; // a moved checkout keeps its cache
    QCOMPARE(compileCacheKey(other), key);
    other = base;
    other.language = SourceLanguage::Cuda;
    QVERIFY(compileCacheKey(other) != key);
}

// A batch on two threads: a helper each, every config compiled, in request order.
void TestTritonCompile::poolCompilesInParallel() {
    TILESCOPE_NEED_TRITON();
    const TuningProblem problem = TuningProblem::load(kData + "add.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const RequestBuilder builder(problem, 0);
    std::vector<CompileRequest> requests;
    for (std::uint64_t i = 0; i < 4; ++i)
        requests.push_back(builder.request(space.at(i * 2), "sm_90"));
    CompileService service({2, nullptr});
    const std::vector<CompileResult> results = service.compileAll(requests);
    QCOMPARE(results.size(), requests.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
        QVERIFY2(results[i].ok(), results[i].message.c_str());
        const auto& values = problem.parameters[1].values;
        QCOMPARE(std::int64_t(results[i].launch->threadsPerBlock), values[space.at(i * 2)[1]].i * 32);
    }
    QCOMPARE(service.stats().compiles, std::uint64_t(4));
}

// The static analysis takes the binary's launch: its threads and the dynamic shared memory
// Triton gives it (a matmul's tiles), and the occupancy from them.
void TestTritonCompile::analysisUsesTheBinarysLaunch() {
    TILESCOPE_NEED_TRITON();
    const TuningProblem problem = TuningProblem::load(kData + "add.json");
    const StaticAnalyzer analyzer(problem, 0);
    const Config config = configOf(problem, {{"BLOCK", 512}, {"num_warps", 8}});
    CompileResult result = compileKernel(analyzer.requests().request(config, "sm_90"));
    QVERIFY2(result.ok(), result.message.c_str());
    result.launch->sharedBytes = 40960; // as a kernel with tiles in shared memory would have
    const ConfigAnalysis a = analyzer.analyze(0, config, "sm_90", result);
    QCOMPARE(a.geometry.threadsPerBlock(), std::int64_t(256));
    QCOMPARE(a.geometry.sharedDynamic, std::int64_t(40960));
    QCOMPARE(a.sharedBytes(), result.info.sharedStatic + 40960);
    QVERIFY(a.occupancy.launchable);
    // 228 KiB of shared memory an SM on sm_90, 41 KiB a block (with the 1 KiB the system keeps):
    // 5 blocks, 40 of 64 warps.
    QCOMPARE(a.occupancy.activeBlocks, 5);
    QCOMPARE(a.occupancy.limiter, Limiter::SharedMemory);

    // A LocalSize other than the threads the binary was compiled for cannot launch it.
    TuningProblem sized = problem;
    sized.localSize.x = "128";
    const StaticAnalyzer other(sized, 0);
    const ConfigAnalysis refused = other.analyze(0, config, "sm_90", result);
    QVERIFY2(refused.geometry.error.find("LocalSize gives 128 threads a block, and the kernel was compiled for 256") !=
                 std::string::npos,
             refused.geometry.error.c_str());
    QVERIFY(!refused.occupancy.launchable);
    sized.localSize.x = "256";
    QVERIFY(StaticAnalyzer(sized, 0).analyze(0, config, "sm_90", result).geometry.ok());
}

// A config that spills: ptxas' report counts it (maxnreg 32 squeezes the kernel's tile), the
// other does not, and the spill rule names maxnreg.
void TestTritonCompile::spillsFromPtxas() {
    TILESCOPE_NEED_TRITON();
    const TuningProblem problem = TuningProblem::load(kData + "spill.json");
    const StaticAnalyzer analyzer(problem, 0);
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    CompileService service({2, nullptr});
    const std::vector<std::uint64_t> all{0, 1};
    const std::vector<ConfigAnalysis> results = analyzer.run(space, all, {"sm_90"}, service);
    QCOMPARE(results.size(), std::size_t(2));
    QVERIFY2(results[0].compiled() && results[1].compiled(), (results[0].message + results[1].message).c_str());
    QVERIFY(results[0].spills());
    QVERIFY(!results[1].spills());
    QCOMPARE(results[0].spill, SpillClass::Heavy);
    QCOMPARE(results[0].info.registers, 32);
    const RuleSuggestion rule = suggestSpillRule(problem, 0, results, "sm_90");
    QVERIFY(rule.found);
    QVERIFY2(rule.best.condition.find("maxnreg") != std::string::npos, rule.best.condition.c_str());
}

namespace {

// The helpers of this process, by their command line.
std::vector<pid_t> helperProcesses() {
    std::vector<pid_t> found;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        const std::size_t close = text.rfind(')');
        if (close == std::string::npos)
            continue;
        std::istringstream rest(text.substr(close + 2));
        std::string state;
        pid_t parent = 0;
        rest >> state >> parent;
        std::ifstream cmdline(entry.path() / "cmdline");
        const std::string command((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
        if (parent == ::getpid() && command.find("tilescope_triton_compile.py") != std::string::npos && state != "Z")
            found.push_back(static_cast<pid_t>(std::stoi(name)));
    }
    return found;
}

} // namespace

// A helper that dies is replaced: one killed while it waits (the next compile gets a new one,
// and the config compiles), one that dies compiling (a kernel module that ends the process) is
// that config's compile error, saying how it ended, and the next compile gets a new one.
void TestTritonCompile::helperThatDies() {
    TILESCOPE_NEED_TRITON();
    const TuningProblem problem = TuningProblem::load(kData + "add.json");
    const CompileRequest request =
        RequestBuilder(problem, 0).request(configOf(problem, {{"BLOCK", 256}, {"num_warps", 4}}), "sm_90");
    QVERIFY(compileKernel(request).ok());
    const std::vector<pid_t> helpers = helperProcesses();
    QVERIFY(!helpers.empty());
    for (const pid_t pid : helpers)
        ::kill(pid, SIGKILL);
    QTest::qWait(200);
    const CompileResult again = compileKernel(request);
    QVERIFY2(again.ok(), again.message.c_str());

    CompileRequest dying = request;
    dying.source = "import os\nos._exit(3)\n" + dying.source;
    const CompileResult died = compileKernel(dying);
    QCOMPARE(died.status, CompileStatus::CompileError);
    QVERIFY2(died.message.find("Triton's compiler process exited with status 3") != std::string::npos,
             died.message.c_str());
    QVERIFY(!died.transient);
    const CompileResult after = compileKernel(request);
    QVERIFY2(after.ok(), after.message.c_str());
}

QTEST_GUILESS_MAIN(TestTritonCompile)
#include "tst_tritoncompile.moc"
