// core/compile: NVRTC compiles of kernels/sgemm/sgemm.cu for sm_80 and sm_90 (no GPU needed),
// compile errors, the ptxas -v parser on fixed texts, and agreement with nvcc where it exists.

#include "compile/compiler.h"
#include "compile/nvrtcheaders.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <future>
#include <sstream>

using namespace tilescope;

namespace {

const char* const kSgemmPath = TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.cu";

const std::string& sgemmSource() {
    static const std::string source = [] {
        std::ifstream in(kSgemmPath, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
    }();
    return source;
}

struct SgemmConfig {
    int blockM = 128;
    int blockN = 128;
    int blockK = 8;
    int threadM = 8;
    int threadN = 8;
    int vec = 4;
    int stages = 2;

    std::vector<std::pair<std::string, std::string>> defines() const {
        return {{"BLOCK_M", std::to_string(blockM)},   {"BLOCK_N", std::to_string(blockN)},
                {"BLOCK_K", std::to_string(blockK)},   {"THREAD_M", std::to_string(threadM)},
                {"THREAD_N", std::to_string(threadN)}, {"VEC", std::to_string(vec)},
                {"STAGES", std::to_string(stages)}};
    }
    // The kernel's static shared memory: STAGES slices of A (transposed, rows padded by 4
    // floats) and of B.
    std::int64_t sharedBytes() const { return 4LL * stages * blockK * ((blockM + 4) + blockN); }
    QString label() const {
        return QStringLiteral("%1x%2x%3 t%4x%5 v%6 s%7")
            .arg(blockM)
            .arg(blockN)
            .arg(blockK)
            .arg(threadM)
            .arg(threadN)
            .arg(vec)
            .arg(stages);
    }
};

CompileRequest sgemmRequest(const SgemmConfig& config, const std::string& arch) {
    CompileRequest request;
    request.source = sgemmSource();
    request.sourceName = "sgemm.cu";
    request.kernelName = "sgemm";
    request.defines = config.defines();
    request.options = {"-std=c++17"};
    request.arch = arch;
    return request;
}

QString describe(const StaticInfo& info) {
    return QStringLiteral("%1 registers, %2 barriers, stack %3, spill stores %4, spill loads %5, smem %6, cmem %7")
        .arg(info.registers)
        .arg(info.barriers)
        .arg(info.stackFrame)
        .arg(info.spillStores)
        .arg(info.spillLoads)
        .arg(info.sharedStatic)
        .arg(info.constantBytes);
}

StaticInfo makeInfo(int registers, int barriers, std::int64_t stack, std::int64_t stores, std::int64_t loads,
                    std::int64_t smem, std::int64_t cmem) {
    StaticInfo info;
    info.registers = registers;
    info.barriers = barriers;
    info.stackFrame = stack;
    info.spillStores = stores;
    info.spillLoads = loads;
    info.sharedStatic = smem;
    info.constantBytes = cmem;
    return info;
}

} // namespace

Q_DECLARE_METATYPE(SgemmConfig)
Q_DECLARE_METATYPE(StaticInfo)
Q_DECLARE_METATYPE(CompileRequest)

class TestCompile : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void supportedArchs();
    void options();
    void kernelTunerPrefix_data();
    void kernelTunerPrefix();
    void kernelTunerNames();
    void kernelTunerConventions();
    void sgemm_data();
    void sgemm();
    void sgemmSpills();
    void compileError_data();
    void compileError();
    void ptxasErrorHasNoNul();
    void compileLogIsBounded();
    void noKernel();
    void cppKernelNames_data();
    void cppKernelNames();
    void ambiguousKernelNames_data();
    void ambiguousKernelNames();
    void archVariant();
    void concurrentCompilesAgree();
    void ptxasLog_data();
    void ptxasLog();
    void ptxasSeveralEntries();
    void matchesNvcc_data();
    void matchesNvcc();
};

void TestCompile::initTestCase() {
    QVERIFY2(!sgemmSource().empty(), kSgemmPath);
    QVERIFY(sgemmSource().find("extern \"C\" __global__") != std::string::npos);
}

void TestCompile::supportedArchs() {
    const std::vector<std::string> archs = tilescope::supportedArchs();
    QVERIFY(std::find(archs.begin(), archs.end(), "sm_80") != archs.end());
    QVERIFY(std::find(archs.begin(), archs.end(), "sm_90") != archs.end());
    QVERIFY(std::is_sorted(archs.begin(), archs.end(), [](const std::string& a, const std::string& b) {
        return std::stoi(a.substr(3)) < std::stoi(b.substr(3));
    }));
    QVERIFY(!nvrtcVersionString().empty());
    QVERIFY(nvrtcVersionString() != "unknown");
}

void TestCompile::options() {
    CompileRequest request = sgemmRequest(SgemmConfig{}, "sm_90");
    request.includeDirs = {"/opt/include"};
    const std::vector<std::string> options = compileOptions(request);
    // The defines are no options: they are the source's prefix, as Kernel Tuner writes them.
    std::vector<std::string> expected = {"--gpu-architecture=sm_90", "--ptxas-options=-v", "-I/opt/include",
                                         "-std=c++17"};
    // Then the CUDA toolkit's include folders, as nvcc searches them (tst_nvrtcheaders).
    for (const std::string& dir : nvrtcHeaders().includeDirs)
        expected.push_back("-I" + dir);
    QCOMPARE(options, expected);
    QCOMPARE(compileOptions(request), options); // deterministic: usable in a cache key
    const std::string prepared = preparedSource(request);
    QVERIFY(prepared.starts_with("#define BLOCK_M 128\n#define BLOCK_N 128\n#define BLOCK_K 8\n#define THREAD_M 8\n"
                                 "#define THREAD_N 8\n#define VEC 4\n#define STAGES 2\n#line 1\n"));
    QVERIFY(prepared.ends_with(request.source));
}

// Expected texts: Kernel Tuner 1.5.0's prepare_kernel_string(name, source, {}, grid, threads,
// block_size_names, "CUDA", defines) for the same source and defines, printed by Python.
void TestCompile::kernelTunerPrefix_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QStringList>("defines"); // name=value
    QTest::addColumn<QString>("expected");
    QTest::newRow("defines, then #line 1")
        << "k" << QStringList{"block_size_x=128", "tile=4", "kernel_tuner=1"}
        << "#define block_size_x 128\n#define tile 4\n#define kernel_tuner 1\n#line 1\nk";
    QTest::newRow("unroll factor as constexpr int")
        << "k" << QStringList{"loop_unroll_factor_x=4"} << "constexpr int loop_unroll_factor_x = 4;\n#line 1\nk";
    QTest::newRow("unroll factor inside a name")
        << "k" << QStringList{"my_loop_unroll_factor=2"} << "constexpr int my_loop_unroll_factor = 2;\n#line 1\nk";
    QTest::newRow("unroll 0 removes the pragma, no prefix")
        << "a\n    #pragma unroll loop_unroll_factor_x\n  for" << QStringList{"loop_unroll_factor_x=0"}
        << "a\n\n  for";
    QTest::newRow("unroll 0: blank lines, tabs, a longer name")
        << "x\n\n#pragma  unroll\tloop_unroll_factor_x2\nfor" << QStringList{"loop_unroll_factor_x=0"}
        << "x\n2\nfor";
    QTest::newRow("unroll 0: a pragma on the first line stays")
        << "#pragma unroll loop_unroll_factor_x\nfor" << QStringList{"loop_unroll_factor_x=0"}
        << "#pragma unroll loop_unroll_factor_x\nfor";
    QTest::newRow("a line break in a value") << "k" << QStringList{"V=a\nb"} << "#define V a\\\nb\n#line 1\nk";
    QTest::newRow("no defines") << "k" << QStringList{} << "k";
}

void TestCompile::kernelTunerPrefix() {
    QFETCH(QString, source);
    QFETCH(QStringList, defines);
    QFETCH(QString, expected);
    Defines list;
    for (const QString& define : defines) {
        const qsizetype eq = define.indexOf('=');
        list.emplace_back(define.left(eq).toStdString(), define.mid(eq + 1).toStdString());
    }
    QCOMPARE(QString::fromStdString(prepareKernelSource(source.toStdString(), list)), expected);
}

void TestCompile::kernelTunerNames() {
    const Defines parameters = {{"block_size_x", "128"}, {"tile", "4"}, {"T", "float"}};
    QCOMPARE(replaceParameterNames("scale<block_size_x, tile>", parameters), std::string("scale<128, 4>"));
    QCOMPARE(replaceParameterNames("scale<T,tile_size>", parameters), std::string("scale<float,tile_size>"));
    QCOMPARE(replaceParameterNames("", parameters), std::string());
}

// A kernel written for Kernel Tuner: defaults under #ifndef kernel_tuner (a constexpr int among
// them), #pragma unroll with a factor, grid_size_x in a grid-stride loop. It compiles for every
// factor, 0 included, and its binary follows the parameters.
void TestCompile::kernelTunerConventions() {
    CompileRequest request;
    request.source = R"(#ifndef kernel_tuner
#define block_size_x 64
const int loop_unroll_factor_x = 1;
#endif
extern "C" __global__ void sum(float* out, const float* in, int n) {
    float s = 0.0f;
    #pragma unroll loop_unroll_factor_x
    for (int i = blockIdx.x * block_size_x + threadIdx.x; i < n; i += grid_size_x * block_size_x)
        s += in[i];
    out[blockIdx.x * block_size_x + threadIdx.x] = s;
}
)";
    request.sourceName = "sum.cu";
    request.kernelName = "sum";
    request.arch = "sm_90";
    std::vector<std::string> cubins;
    for (const char* factor : {"0", "1", "4"}) {
        request.defines = {{"grid_size_x", "132"}, {"grid_size_y", "1"}, {"grid_size_z", "1"},
                           {"block_size_x", "256"}, {"block_size_y", "1"}, {"block_size_z", "1"},
                           {"loop_unroll_factor_x", factor}, {"kernel_tuner", "1"}};
        const CompileResult result = compileKernel(request);
        QVERIFY2(result.ok(), (std::string(factor) + ": " + result.message + "\n" + result.log).c_str());
        cubins.emplace_back(result.cubin.begin(), result.cubin.end());
    }
    QVERIFY(cubins[1] != cubins[2]); // the factor reaches the code

    // A diagnostic keeps the file's line numbers (#line 1 after the prefix).
    request.defines = {{"grid_size_x", "132"}, {"block_size_x", "256"}, {"loop_unroll_factor_x", "2"},
                       {"kernel_tuner", "1"}};
    request.source += "__global__ void broken() { undefined_name; }\n";
    const CompileResult broken = compileKernel(request);
    QCOMPARE(broken.status, CompileStatus::CompileError);
    QVERIFY2(broken.log.find("sum.cu(12)") != std::string::npos, broken.log.c_str());
}

void TestCompile::sgemm_data() {
    QTest::addColumn<SgemmConfig>("config");
    QTest::addColumn<QString>("arch");
    QTest::addColumn<bool>("mustNotSpill");

    const SgemmConfig configs[] = {
        {128, 128, 8, 8, 8, 4, 2},   // the classic 8x8 register tile, double-buffered
        {64, 64, 16, 4, 4, 2, 1},    // 4x4 per thread: never spills
        {32, 32, 32, 2, 1, 1, 2},    // scalar loads, 512 threads, 2x1 tile
        {128, 256, 16, 8, 16, 4, 1}, // a wide 8x16 tile
    };
    for (const SgemmConfig& config : configs) {
        for (const char* arch : {"sm_80", "sm_90"}) {
            const bool small = config.threadM * config.threadN <= 16;
            QTest::addRow("%s %s", qPrintable(config.label()), arch) << config << QString::fromLatin1(arch) << small;
        }
    }
}

void TestCompile::sgemm() {
    QFETCH(SgemmConfig, config);
    QFETCH(QString, arch);
    QFETCH(bool, mustNotSpill);

    const CompileResult result = compileKernel(sgemmRequest(config, arch.toStdString()));
    QVERIFY2(result.ok(), (result.message + "\n" + result.log).c_str());
    QVERIFY(result.message.empty());
    qInfo("%s %s: %s, %.3f s", qPrintable(config.label()), qPrintable(arch), qPrintable(describe(result.info)),
          result.seconds);

    QVERIFY2(result.info.registers > 0 && result.info.registers <= 255, qPrintable(describe(result.info)));
    QCOMPARE(result.info.sharedStatic, config.sharedBytes());
    QCOMPARE(result.info.barriers, 1);
    if (mustNotSpill) {
        QCOMPARE(result.info.spillStores, std::int64_t{0});
        QCOMPARE(result.info.spillLoads, std::int64_t{0});
        QCOMPARE(result.info.stackFrame, std::int64_t{0});
    }
    // A cubin is an ELF image.
    QVERIFY(result.cubin.size() > 4);
    QCOMPARE(std::string(result.cubin.data(), 4), std::string("\x7f"
                                                              "ELF"));
    QVERIFY(result.log.find("Compiling entry function 'sgemm' for '" + arch.toStdString() + "'") != std::string::npos);
    QVERIFY(result.seconds > 0.0);
    QCOMPARE(result.nvrtcVersion, nvrtcVersionString());
}

void TestCompile::sgemmSpills() {
    // 256 accumulators per thread cannot fit in 255 registers.
    const SgemmConfig config{128, 128, 8, 16, 16, 4, 2};
    bool spilledSomewhere = false;
    for (const std::string arch : {"sm_80", "sm_90"}) {
        const CompileResult result = compileKernel(sgemmRequest(config, arch));
        QVERIFY2(result.ok(), (result.message + "\n" + result.log).c_str());
        qInfo("%s %s: %s, %.3f s", qPrintable(config.label()), arch.c_str(), qPrintable(describe(result.info)),
              result.seconds);
        QCOMPARE(result.info.sharedStatic, config.sharedBytes());
        if (result.info.spillStores > 0) {
            spilledSomewhere = true;
            QVERIFY(result.info.spillLoads > 0);
            QVERIFY(result.info.stackFrame > 0);
            QCOMPARE(result.info.registers, 255);
        }
    }
    QVERIFY2(spilledSomewhere, "a 16x16 per-thread tile spilled on neither sm_80 nor sm_90");
}

void TestCompile::compileError_data() {
    QTest::addColumn<CompileRequest>("request");
    QTest::addColumn<QString>("inLog"); // must appear in the log and the message

    const CompileRequest good = sgemmRequest(SgemmConfig{}, "sm_90");

    CompileRequest syntax = good;
    syntax.source += "\nint broken(int x { return x; }\n";
    QTest::newRow("syntax error") << syntax << "error";

    CompileRequest badValue = good;
    badValue.defines.emplace_back("VEC", "3"); // the last -D wins; the kernel's static_assert rejects it
    QTest::newRow("VEC=3") << badValue << "VEC must be 1, 2 or 4";

    CompileRequest notANumber = good;
    notANumber.defines = {{"BLOCK_M", "sixty-four"}};
    QTest::newRow("BLOCK_M=sixty-four") << notANumber << "error";

    CompileRequest badName = good;
    badName.defines.emplace_back("BLOCK M", "64");
    QTest::newRow("bad define name") << badName << "'BLOCK M' is not an identifier";

    CompileRequest virtualArch = good;
    virtualArch.arch = "compute_90";
    QTest::newRow("virtual arch") << virtualArch << "compute_90";

    CompileRequest oldArch = good;
    oldArch.arch = "sm_50"; // Maxwell: gone from NVRTC 13
    QTest::newRow("unsupported arch") << oldArch << "sm_50";

    CompileRequest noNumber = good;
    noNumber.arch = "sm_";
    QTest::newRow("arch without a number") << noNumber << "'sm_'";

    CompileRequest noName = good;
    noName.kernelName.clear();
    QTest::newRow("no kernel name") << noName << "no kernel name";

    CompileRequest badOption = good;
    badOption.options.emplace_back("--no-such-option");
    QTest::newRow("bad option") << badOption << "no-such-option";
}

void TestCompile::compileError() {
    QFETCH(CompileRequest, request);
    QFETCH(QString, inLog);

    const CompileResult result = compileKernel(request);
    QCOMPARE(result.status, CompileStatus::CompileError);
    QVERIFY(!result.ok());
    QVERIFY(result.cubin.empty());
    QCOMPARE(result.info, StaticInfo{});
    QVERIFY2(!result.message.empty(), result.log.c_str());
    QVERIFY2(result.message.find('\n') == std::string::npos, result.message.c_str());
    QVERIFY2(result.log.find(inLog.toStdString()) != std::string::npos, result.log.c_str());
    QVERIFY2(result.message.find(inLog.toStdString()) != std::string::npos, result.message.c_str());
}

// ptxas' errors come after a NUL byte in NVRTC's log: neither the log nor the message carry it.
void TestCompile::ptxasErrorHasNoNul() {
    CompileRequest request;
    request.source = "extern \"C\" __global__ void big(float* out) {\n"
                     "    __shared__ float tile[20000];\n"
                     "    tile[threadIdx.x] = out[threadIdx.x];\n"
                     "    __syncthreads();\n"
                     "    out[threadIdx.x] = tile[19999 - threadIdx.x];\n"
                     "}\n";
    request.sourceName = "big.cu";
    request.kernelName = "big";
    request.arch = "sm_90";
    const CompileResult result = compileKernel(request);
    QCOMPARE(result.status, CompileStatus::CompileError);
    QVERIFY2(result.message.find("shared") != std::string::npos, result.message.c_str());
    QVERIFY(result.message.find('\0') == std::string::npos);
    QVERIFY(result.log.find('\0') == std::string::npos);
    QVERIFY2(!result.message.empty() && std::isprint(static_cast<unsigned char>(result.message.front())),
             result.message.c_str());
}

// NVRTC quotes the source line of each diagnostic, and the log is stored with the results: a
// source of one very long line, or thousands of errors, is kept in part, saying what was left out.
void TestCompile::compileLogIsBounded() {
    CompileRequest request;
    request.sourceName = "long.cu";
    request.kernelName = "k";
    request.arch = "sm_90";
    request.source = "extern \"C\" __global__ void k(float* p) { p[0] = 1; }\nint a = " + std::string(20000, '1') +
                     " + undefined_one;\n";
    CompileResult result = compileKernel(request);
    QCOMPARE(result.status, CompileStatus::CompileError);
    QVERIFY2(result.log.find("undefined_one") != std::string::npos || result.log.find("not kept") != std::string::npos,
             result.log.c_str());
    QVERIFY2(result.log.find("more bytes of this line not kept") != std::string::npos, result.log.c_str());
    std::size_t longest = 0;
    for (std::size_t start = 0; start < result.log.size();) {
        const std::size_t end = std::min(result.log.find('\n', start), result.log.size());
        longest = std::max(longest, end - start);
        start = end + 1;
    }
    QVERIFY2(longest < 1200, qPrintable(QString::number(longest))); // 1 KiB and what says it was cut
    std::string many = "extern \"C\" __global__ void k(float* p) { p[0] = 1; }\n";
    for (int i = 0; i < 300; ++i)
        many += "__device__ int v" + std::to_string(i) + " = undefined_" + std::to_string(i) + " + " +
                std::string(800, '2') + ";\n";
    request.source = many;
    result = compileKernel(request);
    QCOMPARE(result.status, CompileStatus::CompileError);
    QVERIFY2(result.log.size() <= (64 << 10) + 100, qPrintable(QString::number(result.log.size())));
    QVERIFY2(result.log.find("more bytes, not kept") != std::string::npos, result.log.substr(0, 300).c_str());
    QVERIFY(result.log.find("undefined_0") != std::string::npos); // the first errors are kept
}

void TestCompile::noKernel() {
    CompileRequest request = sgemmRequest(SgemmConfig{64, 64, 16, 4, 4, 4, 1}, "sm_90");
    request.kernelName = "dgemm";
    const CompileResult result = compileKernel(request);
    QCOMPARE(result.status, CompileStatus::NoKernel);
    QVERIFY2(result.message.find("no __global__ function 'dgemm' in sgemm.cu") != std::string::npos,
             result.message.c_str());
    QVERIFY2(result.message.find("identifier \"dgemm\" is undefined") != std::string::npos, result.message.c_str());
    QVERIFY(result.message.find('\n') == std::string::npos);
    QVERIFY(result.cubin.empty());
    QCOMPARE(result.info.registers, -1);
    QCOMPARE(compileStatusName(result.status), std::string_view("NoKernel"));
    // The source itself is fine: a syntax error is a CompileError, not NoKernel.
    request.source += "\nint broken(int x { return x; }\n";
    QCOMPARE(compileKernel(request).status, CompileStatus::CompileError);
}

// Kernels as Kernel Tuner users write them: C++ linkage, namespaces, templates whose arguments
// are tuning parameters (defines). NVRTC's name expressions find the entry; it need not be extern "C".
void TestCompile::cppKernelNames_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("kernelName");
    QTest::addColumn<QString>("entryName");
    const QString body = QStringLiteral("{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = 2 * in[i]; }");
    QTest::newRow("extern C") << "extern \"C\" __global__ void scale(float* out, const float* in, int n) " + body
                              << "scale"
                              << "scale";
    QTest::newRow("C++ linkage") << "__global__ void scale(float* out, const float* in, int n) " + body << "scale"
                                 << "_Z5scalePfPKfi";
    QTest::newRow("namespace") << "namespace ops { __global__ void scale(float* out, const float* in, int n) " + body +
                                      " }"
                               << "ops::scale"
                               << "_ZN3ops5scaleEPfPKfi";
    QTest::newRow("template of defines")
        << "template <int BLOCK, int TILE> __global__ void scale(float* out, const float* in, int n) "
           "{ for (int t = 0; t < TILE; ++t) { int i = (blockIdx.x * TILE + t) * BLOCK + threadIdx.x; "
           "if (i < n) out[i] = 2 * in[i]; } }"
        << "scale<block_size_x, tile_size_x>"
        << "_Z5scaleILi128ELi4EEvPfPKfi";
    QTest::newRow("template of a type")
        << "template <typename T> __global__ void scale(T* out, const T* in, int n) " + body << "scale<float>"
        << "_Z5scaleIfEvPT_PKS0_i";
}

void TestCompile::cppKernelNames() {
    QFETCH(QString, source);
    QFETCH(QString, kernelName);
    QFETCH(QString, entryName);
    CompileRequest request;
    request.source = source.toStdString();
    request.sourceName = "scale.cu";
    request.kernelName = kernelName.toStdString();
    request.defines = {{"block_size_x", "128"}, {"tile_size_x", "4"}};
    request.arch = "sm_90";
    const CompileResult result = compileKernel(request);
    QVERIFY2(result.ok(), (result.message + "\n" + result.log).c_str());
    QCOMPARE(QString::fromStdString(result.entryName), entryName);
    QVERIFY(result.info.registers > 0);
    // The cubin holds the entry under that name (it is what the worker loads).
    const std::string cubin(result.cubin.begin(), result.cubin.end());
    QVERIFY(cubin.find(result.entryName) != std::string::npos);
}

void TestCompile::ambiguousKernelNames_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("kernelName");
    QTest::addColumn<QString>("why");
    QTest::newRow("overloaded") << "__global__ void f(float* x) {} __global__ void f(int* x) {}"
                                << "f"
                                << "cannot determine which instance of overloaded function";
    QTest::newRow("template without arguments") << "template <int B> __global__ void f(float* x) { x[B] = 0; }"
                                                << "f"
                                                << "cannot determine which instance of function template";
    QTest::newRow("a variable") << "__device__ int f;"
                                << "f"
                                << "expression must have a constant value";
}

void TestCompile::ambiguousKernelNames() {
    QFETCH(QString, source);
    QFETCH(QString, kernelName);
    QFETCH(QString, why);
    CompileRequest request;
    request.source = source.toStdString();
    request.kernelName = kernelName.toStdString();
    request.arch = "sm_90";
    const CompileResult result = compileKernel(request);
    QCOMPARE(result.status, CompileStatus::NoKernel);
    QVERIFY2(result.message.find(why.toStdString()) != std::string::npos, result.message.c_str());
}

void TestCompile::archVariant() {
    // The arch-specific variant of a supported number compiles (Hopper's wgmma needs sm_90a).
    const CompileResult result = compileKernel(sgemmRequest(SgemmConfig{64, 64, 16, 4, 4, 4, 1}, "sm_90a"));
    QVERIFY2(result.ok(), (result.message + "\n" + result.log).c_str());
    QVERIFY(result.log.find("for 'sm_90a'") != std::string::npos);
    QCOMPARE(result.info.sharedStatic, SgemmConfig({64, 64, 16, 4, 4, 4, 1}).sharedBytes());
}

void TestCompile::concurrentCompilesAgree() {
    // Same requests on two threads at once and one after the other: equal static info and
    // byte-identical cubins (what a content-addressed cache relies on).
    const std::vector<CompileRequest> requests = {
        sgemmRequest(SgemmConfig{64, 64, 16, 4, 4, 4, 1}, "sm_80"),
        sgemmRequest(SgemmConfig{64, 64, 8, 4, 4, 2, 2}, "sm_90"),
    };
    std::vector<std::future<CompileResult>> running;
    for (const CompileRequest& request : requests)
        running.push_back(std::async(std::launch::async, [&request] { return compileKernel(request); }));
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const CompileResult parallel = running[i].get();
        const CompileResult serial = compileKernel(requests[i]);
        QVERIFY2(parallel.ok(), parallel.message.c_str());
        QCOMPARE(parallel.info, serial.info);
        QVERIFY(parallel.cubin == serial.cubin);
    }
}

void TestCompile::ptxasLog_data() {
    QTest::addColumn<QString>("log");
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<StaticInfo>("expected");

    QTest::newRow("nvrtc sm_90, spilling") << "ptxas info    : 0 bytes gmem\n"
                                              "ptxas info    : Compiling entry function 'sgemm' for 'sm_90'\n"
                                              "ptxas info    : Function properties for sgemm\n"
                                              "ptxas         .     1304 bytes stack frame, 4544 bytes spill stores, "
                                              "4348 bytes spill loads\n"
                                              "ptxas info    : Used 255 registers, used 1 barriers, 1304 bytes "
                                              "cumulative stack size, 8192 bytes smem\n"
                                              "ptxas info    : Compile time = 967.498 ms\n"
                                           << "sgemm" << makeInfo(255, 1, 1304, 4544, 4348, 8192, 0);

    QTest::newRow("nvcc sm_80, cmem") << "ptxas info    : 0 bytes gmem\n"
                                         "ptxas info    : Compiling entry function 'sgemm' for 'sm_80'\n"
                                         "ptxas info    : Function properties for sgemm\n"
                                         "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                                         "ptxas info    : Used 127 registers, used 1 barriers, 16640 bytes smem, "
                                         "392 bytes cmem[0]\n"
                                      << "sgemm" << makeInfo(127, 1, 0, 0, 0, 16640, 392);

    QTest::newRow("only registers") << "ptxas info    : Compiling entry function 'copy' for 'sm_75'\n"
                                       "ptxas info    : Used 8 registers\n"
                                    << "copy" << makeInfo(8, 0, 0, 0, 0, 0, 0);

    QTest::newRow("old style, no barriers, cmem[2]")
        << "ptxas info    : Compiling entry function 'k' for 'sm_75'\r\n"
           "ptxas info    : Function properties for k\r\n"
           "    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\r\n"
           "ptxas info    : Used 32 registers, 4096 bytes smem, 352 bytes cmem[0], 4 bytes cmem[2]\r\n"
        << "k" << makeInfo(32, 0, 16, 0, 0, 4096, 352);

    QTest::newRow("kernel absent") << "ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
                                      "ptxas info    : Used 8 registers, used 0 barriers\n"
                                   << "sgemm" << StaticInfo{};

    QTest::newRow("empty log") << ""
                               << "sgemm" << StaticInfo{};

    QTest::newRow("compile error log") << "sgemm.cu(3): error: expected a \";\"\n1 error detected in the compilation "
                                          "of \"sgemm.cu\".\n"
                                       << "sgemm" << StaticInfo{};
}

void TestCompile::ptxasLog() {
    QFETCH(QString, log);
    QFETCH(QString, kernel);
    QFETCH(StaticInfo, expected);

    const StaticInfo info = parsePtxasLog(log.toStdString(), kernel.toStdString());
    QVERIFY2(info == expected, qPrintable(describe(info) + " != " + describe(expected)));
}

void TestCompile::ptxasSeveralEntries() {
    // nvcc with two -gencode runs ptxas concurrently; one line here is two messages glued
    // together, as seen with CUDA 13. foo's properties block belongs to a device function.
    const std::string log = "ptxas info    : 0 bytes gmem, 256 bytes cmem[3]\n"
                            "ptxas info    : Compiling entry function 'third' for 'sm_80'\n"
                            "ptxas info    : Function properties for third\n"
                            "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                            "ptxas info    : Used 22 registers, used 0 barriers, 364 bytes cmem[0]\n"
                            "ptxas info    : Compiling entry function '_Z6secondPf' for 'sm_80'\n"
                            "ptxas info    : Function properties for _Z6secondPf\n"
                            "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                            "ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n"
                            "ptxas info    : Compiling entry function 'first' for 'sm_80'ptxas info    : 0 bytes gmem\n"
                            "ptxas info    : Function properties for first\n"
                            "    128 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
                            "ptxas info    : Used 38 registers, used 1 barriers, 128 bytes cumulative stack size, "
                            "512 bytes smem, 364 bytes cmem[0]\n"
                            "ptxas info    : Function properties for _Z3fooPfi\n"
                            "    96 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                            "ptxas info    : Compiling entry function 'first' for 'sm_90'\n"
                            "ptxas info    : Function properties for first\n"
                            "    128 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                            "ptxas info    : Used 32 registers, used 1 barriers, 128 bytes cumulative stack size, "
                            "512 bytes smem\n"
                            "ptxas info    : Function properties for _Z3fooPfi\n"
                            "    96 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";

    const std::vector<PtxasEntry> entries = parsePtxasEntries(log);
    const std::vector<PtxasEntry> expected = {
        {"third", "sm_80", makeInfo(22, 0, 0, 0, 0, 0, 364)},
        {"_Z6secondPf", "sm_80", makeInfo(8, 0, 0, 0, 0, 0, 360)},
        {"first", "sm_80", makeInfo(38, 1, 128, 8, 4, 512, 364)},
        {"first", "sm_90", makeInfo(32, 1, 128, 0, 0, 512, 0)},
    };
    QCOMPARE(entries.size(), expected.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        QCOMPARE(entries[i].function, expected[i].function);
        QCOMPARE(entries[i].arch, expected[i].arch);
        QVERIFY2(entries[i].info == expected[i].info,
                 qPrintable(QString::fromStdString(entries[i].function) + ": " + describe(entries[i].info)));
    }

    QCOMPARE(parsePtxasLog(log, "first"), expected[2].info);
    QCOMPARE(parsePtxasLog(log, "first", "sm_90"), expected[3].info);
    QCOMPARE(parsePtxasLog(log, "first", "sm_75").registers, -1);
    QCOMPARE(parsePtxasLog(log, "second").registers, -1);    // mangled: the name is _Z6secondPf
    QCOMPARE(parsePtxasLog(log, "_Z3fooPfi").registers, -1); // a device function, not an entry
}

void TestCompile::matchesNvcc_data() {
    QTest::addColumn<SgemmConfig>("config");
    QTest::newRow("128x128x8 t8x8 v4 s2") << SgemmConfig{128, 128, 8, 8, 8, 4, 2};
    QTest::newRow("64x64x16 t4x4 v2 s1") << SgemmConfig{64, 64, 16, 4, 4, 2, 1};
    QTest::newRow("64x128x8 t16x16 v4 s1") << SgemmConfig{64, 128, 8, 16, 16, 4, 1};
}

void TestCompile::matchesNvcc() {
    QFETCH(SgemmConfig, config);

    QString nvcc = QStandardPaths::findExecutable(QStringLiteral("nvcc"));
    if (nvcc.isEmpty())
        nvcc = QStandardPaths::findExecutable(QStringLiteral("nvcc"), {QStringLiteral("/usr/local/cuda/bin")});
    if (nvcc.isEmpty())
        QSKIP("nvcc is neither on PATH nor in /usr/local/cuda/bin");

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QStringList arguments = {QStringLiteral("-cubin"),
                             QStringLiteral("-arch=sm_90"),
                             QStringLiteral("-Xptxas"),
                             QStringLiteral("-v"),
                             QStringLiteral("-std=c++17"),
                             QStringLiteral("-o"),
                             dir.filePath(QStringLiteral("sgemm.cubin"))};
    for (const auto& [name, value] : config.defines())
        arguments << QStringLiteral("-D%1=%2").arg(QString::fromStdString(name), QString::fromStdString(value));
    arguments << QString::fromLatin1(kSgemmPath);

    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(nvcc, arguments);
    QVERIFY2(process.waitForFinished(120000), qPrintable(process.errorString()));
    const std::string nvccLog = process.readAll().toStdString();
    QVERIFY2(process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0, nvccLog.c_str());

    const StaticInfo fromNvcc = parsePtxasLog(nvccLog, "sgemm", "sm_90");
    const CompileResult fromNvrtc = compileKernel(sgemmRequest(config, "sm_90"));
    QVERIFY2(fromNvrtc.ok(), fromNvrtc.message.c_str());
    qInfo("%s sm_90 nvcc:  %s", qPrintable(config.label()), qPrintable(describe(fromNvcc)));
    qInfo("%s sm_90 nvrtc: %s", qPrintable(config.label()), qPrintable(describe(fromNvrtc.info)));
    QVERIFY2(fromNvcc.registers > 0, nvccLog.c_str());
    QCOMPARE(fromNvrtc.info.registers, fromNvcc.registers);
    QCOMPARE(fromNvrtc.info.sharedStatic, fromNvcc.sharedStatic);
}

QTEST_GUILESS_MAIN(TestCompile)
#include "tst_compile.moc"
