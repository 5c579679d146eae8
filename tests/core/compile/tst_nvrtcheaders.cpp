// core/compile: CUDA C++ as it is written for nvcc, compiled by NVRTC (no GPU needed): the toolkit's
// headers (CCCL's CUB and libcu++, cooperative groups, cuda_fp16.h), the C and C++ headers NVRTC
// lacks (stdio.h for printf, math.h, cstdint, ...), -I and -D options, templated kernel names, and
// what a compile that cannot find a header or uses a removed intrinsic says.

#include "compile/compiler.h"
#include "compile/nvrtcheaders.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <fstream>

using namespace tilescope;

namespace {

CompileRequest request(const std::string& source, const std::string& kernelName = "k") {
    CompileRequest r;
    r.source = source;
    r.sourceName = "wild.cu";
    r.kernelName = kernelName;
    r.arch = "sm_90";
    return r;
}

QString describe(const CompileResult& r) {
    return QString::fromStdString(std::string(compileStatusName(r.status)) + ": " + r.message + "\n" + r.log);
}

void writeFile(const std::filesystem::path& path, const std::string& text) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

} // namespace

class TestNvrtcHeaders : public QObject {
    Q_OBJECT

private slots:
    void toolkitFound();
    void compiles_data();
    void compiles();
    void templatedName();
    void includeAndDefineOptions();
    void relativeIncludeFromTheProblemsFolder();
    void missingHeader();
    void removedIntrinsic();
    void untunedUnrollFactor();
    void noToolkit();
    void toolkitOfNvrtcsVersion();
};

void TestNvrtcHeaders::toolkitFound() {
    const NvrtcHeaders& h = nvrtcHeaders();
    QVERIFY2(!h.root.empty(), "no CUDA toolkit's headers found: the suite needs the toolkit NVRTC came with");
    QCOMPARE(h.toolkitVersion, nvrtcVersionString());
    QVERIFY(!h.includeDirs.empty());
    QCOMPARE(h.includeDirs.back(), (h.root / "include").string());
    // CUDA 13 keeps CUB, Thrust and libcu++ under include/cccl, searched before include/.
    if (std::filesystem::is_directory(h.root / "include" / "cccl"))
        QCOMPARE(h.includeDirs.front(), (h.root / "include" / "cccl").string());
    QVERIFY(nvrtcHeaderText(h, "stdio.h"));
    QVERIFY(nvrtcHeaderText(h, "cub/cub.cuh"));
    QVERIFY(!nvrtcHeaderText(h, "cub/block/block_reduce.cuh")); // the toolkit's own
    QVERIFY(nvrtcHeaderText(h, "cub/cub.cuh")->find("cub/device/") == std::string::npos);
    QVERIFY(!h.digest.empty());
    // The toolkit's folders come after the request's, as nvcc searches them.
    CompileRequest r = request("");
    r.includeDirs = {"/kernel/folder"};
    r.options = {"-I/more"};
    const std::vector<std::string> options = compileOptions(r);
    const auto kernelDir = std::find(options.begin(), options.end(), "-I/kernel/folder");
    const auto more = std::find(options.begin(), options.end(), "-I/more");
    const auto toolkit = std::find(options.begin(), options.end(), "-I" + h.includeDirs.front());
    QVERIFY(kernelDir < more && more < toolkit && toolkit != options.end());
}

void TestNvrtcHeaders::compiles_data() {
    QTest::addColumn<QString>("source");
    QTest::newRow("stdio.h printf") << "#include <stdio.h>\n"
                                       "__global__ void k(const float* x) { if (x[0] < 0) printf(\"%f\\n\", x[0]); }\n";
    QTest::newRow("cstdio std::printf") << "#include <cstdio>\n__global__ void k() { std::printf(\"%d\\n\", 1); }\n";
    QTest::newRow("math.h macros") << "#include <math.h>\n"
                                      "__global__ void k(float* x) { x[0] = INFINITY + NAN + M_PI + sqrtf(x[1]); }\n";
    QTest::newRow("cmath std::") << "#include <cmath>\n"
                                    "__global__ void k(float* x) { x[0] = std::sqrt(x[1]) + std::exp(x[2]) + "
                                    "std::fabs(x[3]) + (std::isnan(x[4]) ? 1.0f : 0.0f); }\n";
    QTest::newRow("stdint.h, limits.h, float.h, assert.h, stdlib.h, string.h")
        << "#include <stdint.h>\n#include <limits.h>\n#include <float.h>\n#include <assert.h>\n#include <stdlib.h>\n"
           "#include <string.h>\n"
           "__global__ void k(int32_t* x, float* y) { assert(x); x[0] = INT_MAX; y[0] = FLT_MAX; "
           "memcpy(y + 1, y + 2, sizeof(float)); uint64_t z = UINT64_MAX; x[1] = (int32_t)(z >> 40); }\n";
    QTest::newRow("cstdint, climits, type_traits, utility, limits")
        << "#include <cstdint>\n#include <climits>\n#include <type_traits>\n#include <utility>\n#include <limits>\n"
           "template <typename T> __device__ T twice(T v) { static_assert(std::is_arithmetic_v<T>); return 2 * v; }\n"
           "__global__ void k(std::int64_t* x) { std::pair<int, int> p{1, CHAR_BIT}; "
           "x[0] = twice(p.first + p.second) + std::numeric_limits<std::int32_t>::max(); }\n";
    QTest::newRow("cub/cub.cuh block reduce")
        << "#include <cub/cub.cuh>\n"
           "__global__ void k(const float* in, float* out) {\n"
           "    using BlockReduce = cub::BlockReduce<float, 128>;\n"
           "    __shared__ typename BlockReduce::TempStorage temp;\n"
           "    float sum = BlockReduce(temp).Sum(in[blockIdx.x * 128 + threadIdx.x]);\n"
           "    if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
           "}\n";
    QTest::newRow("cooperative_groups.h") << "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n"
                                             "namespace cg = cooperative_groups;\n"
                                             "__global__ void k(const int* in, int* out) {\n"
                                             "    auto tile = cg::tiled_partition<32>(cg::this_thread_block());\n"
                                             "    int v = cg::reduce(tile, in[threadIdx.x], cg::plus<int>());\n"
                                             "    if (tile.thread_rank() == 0) atomicAdd(out, v);\n"
                                             "}\n";
    QTest::newRow("cuda/std/array, cuda_fp16.h")
        << "#include <cuda/std/array>\n#include <cuda_fp16.h>\n"
           "__global__ void k(const __half* in, __half* out) {\n"
           "    constexpr cuda::std::array<float, 3> w{0.25f, 0.5f, 0.25f};\n"
           "    float s = 0;\n"
           "    for (int i = 0; i < 3; i++) s += w[i] * __half2float(in[threadIdx.x + i]);\n"
           "    out[threadIdx.x] = __float2half(s);\n"
           "}\n";
}

void TestNvrtcHeaders::compiles() {
    QFETCH(QString, source);
    const CompileResult r = compileKernel(request(source.toStdString()));
    QVERIFY2(r.ok(), qPrintable(describe(r)));
    QVERIFY(r.info.registers > 0);
    QVERIFY(!r.cubin.empty());
}

void TestNvrtcHeaders::templatedName() {
    // A KernelName with template arguments, as RequestBuilder gives it once the tuning parameters
    // are substituted: NVRTC instantiates it and tells its name in the cubin, which the worker
    // launches by.
    const std::string source = "#include <cub/cub.cuh>\n"
                               "template <int block_size, typename T>\n"
                               "__global__ void reduce(T* out, const T* in, int n) {\n"
                               "    using BlockReduce = cub::BlockReduce<T, block_size>;\n"
                               "    __shared__ typename BlockReduce::TempStorage temp;\n"
                               "    int i = blockIdx.x * block_size + threadIdx.x;\n"
                               "    T sum = BlockReduce(temp).Sum(i < n ? in[i] : T(0));\n"
                               "    if (threadIdx.x == 0) out[blockIdx.x] = sum;\n"
                               "}\n";
    const CompileResult r = compileKernel(request(source, "reduce<256, float>"));
    QVERIFY2(r.ok(), qPrintable(describe(r)));
    QCOMPARE(r.entryName, std::string("_Z6reduceILi256EfEvPT0_PKS0_i"));
    QVERIFY(r.info.registers > 0);
    QVERIFY(r.info.sharedStatic > 0); // CUB's temporary storage

    // A name that instantiates nothing: NoKernel, naming it.
    const CompileResult bad = compileKernel(request(source, "reduce<256, no_such_type>"));
    QCOMPARE(bad.status, CompileStatus::NoKernel);
    QVERIFY2(bad.message.find("reduce<256, no_such_type>") != std::string::npos, bad.message.c_str());
}

void TestNvrtcHeaders::includeAndDefineOptions() {
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    writeFile(root / "include" / "lib" / "scale.cuh",
              "#pragma once\n__device__ float scale(float v) { return SCALE * v; }\n");
    CompileRequest r = request("#include <lib/scale.cuh>\n__global__ void k(float* x) { x[0] = scale(x[1]); }\n");
    r.options = {"-I", (root / "include").string(), "-DSCALE=2.0f"};
    CompileResult ok = compileKernel(r);
    QVERIFY2(ok.ok(), qPrintable(describe(ok)));
    r.options = {"--include-path=" + (root / "include").string(), "-D", "SCALE=3.0f"};
    ok = compileKernel(r);
    QVERIFY2(ok.ok(), qPrintable(describe(ok)));
    // Without the define the header does not compile: the option was what defined it.
    r.options = {"-I" + (root / "include").string()};
    QCOMPARE(compileKernel(r).status, CompileStatus::CompileError);
}

// A problem's relative -I names a folder of its own: found from the problem's folder whatever
// folder Tilescope runs in (this test runs in the build's).
void TestNvrtcHeaders::relativeIncludeFromTheProblemsFolder() {
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    writeFile(root / "include" / "lib" / "scale.cuh",
              "#pragma once\n__device__ float scale(float v) { return 2.0f * v; }\n");
    writeFile(root / "k.cu",
              "#include <lib/scale.cuh>\nextern \"C\" __global__ void k(float* x) { x[0] = scale(x[1]); }\n");
    writeFile(root / "k.json",
              R"({"ConfigurationSpace": {"TuningParameters": [{"Name": "B", "Type": "int", "Values": "[32]"}]},
        "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "CompilerOptions": ["-Iinclude"],
        "GlobalSize": {"X": "1"}, "LocalSize": {"X": "B"},
        "Arguments": [{"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "Size": 2,
                       "FillType": "Constant", "FillValue": 1}]}})");
    QVERIFY(!std::filesystem::exists(std::filesystem::current_path() / "include" / "lib" / "scale.cuh"));
    const TuningProblem problem = TuningProblem::load(root / "k.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    QCOMPARE(space.size(), std::uint64_t(1));
    const RequestBuilder builder(problem);
    const CompileResult compiled = compileKernel(builder.request(space.at(0), "sm_90"));
    QVERIFY2(compiled.ok(), qPrintable(describe(compiled)));
}

void TestNvrtcHeaders::missingHeader() {
    CompileRequest r = request("#include <no/such_header.cuh>\n__global__ void k() {}\n");
    r.includeDirs = {"/the/kernel/folder"};
    r.options = {"-I", "/an/include/folder"};
    const CompileResult result = compileKernel(r);
    QCOMPARE(result.status, CompileStatus::CompileError);
    const std::string& m = result.message;
    QVERIFY2(m.find("wild.cu(1)") != std::string::npos, m.c_str());
    QVERIFY2(m.find("\"no/such_header.cuh\" is in none of the folders searched") != std::string::npos, m.c_str());
    QVERIFY2(m.find("/the/kernel/folder, /an/include/folder") != std::string::npos, m.c_str());
    for (const std::string& dir : nvrtcHeaders().includeDirs)
        QVERIFY2(m.find(dir) != std::string::npos, m.c_str());
}

void TestNvrtcHeaders::removedIntrinsic() {
    // Kernel Tuner's spmv example reduces with __shfl_down, which CUDA 9 replaced by __shfl_down_sync.
    const CompileResult r = compileKernel(
        request("__global__ void k(float* y) { float v = y[threadIdx.x]; v += __shfl_down(v, 16); y[0] = v; }\n"));
    QCOMPARE(r.status, CompileStatus::CompileError);
    QVERIFY2(r.message.find("identifier \"__shfl_down\" is undefined: __shfl_down was removed in CUDA 9; use "
                            "__shfl_down_sync(0xffffffff, value, delta)") != std::string::npos,
             r.message.c_str());
    QVERIFY(removedIntrinsicMessage("k.cu(3): error: identifier \"__shfl_down_sync\" is undefined").empty());
    QVERIFY(removedIntrinsicMessage("k.cu(3): error: identifier \"__ballot\" is undefined")
                .find("__ballot_sync(0xffffffff, predicate)") != std::string::npos);
}

// Kernel Tuner's reduction example unrolls with `#pragma unroll loop_unroll_factor_0` but does not
// tune loop_unroll_factor_0: the error says the name is defined only as a tuning parameter.
void TestNvrtcHeaders::untunedUnrollFactor() {
    const CompileResult r =
        compileKernel(request("__global__ void k(float* y) {\n  float s = 0;\n#pragma unroll loop_unroll_factor_0\n"
                              "  for (int i = 0; i < 8; ++i) s += y[i];\n  y[0] = s;\n}\n"));
    QCOMPARE(r.status, CompileStatus::CompileError);
    QVERIFY2(r.message.find("identifier \"loop_unroll_factor_0\" is undefined: loop_unroll_factor_0 is defined (as "
                            "a constexpr int") != std::string::npos,
             r.message.c_str());
    QVERIFY2(r.message.find("only when it is a tuning parameter") != std::string::npos, r.message.c_str());
    QVERIFY(unrollFactorMessage("k.cu(3): error: identifier \"loop_unroll\" is undefined").empty());
    QVERIFY(unrollFactorMessage("k.cu(3): error: identifier \"n\" is undefined").empty());
}

void TestNvrtcHeaders::noToolkit() {
    QTemporaryDir dir;
    const std::filesystem::path empty = dir.path().toStdString();
    const NvrtcHeaders h = findNvrtcHeaders({empty}, nvrtcVersionString());
    QVERIFY(h.root.empty());
    QVERIFY(h.includeDirs.empty());
    QVERIFY(nvrtcHeaderText(h, "stdio.h")); // the C library's stand-ins need no toolkit
    QVERIFY(!nvrtcHeaderText(h, "cub/cub.cuh"));
    const std::string log =
        "k.cu(1): catastrophic error: cannot open source file \"cub/cub.cuh\"\n  #include <cub/cub.cuh>";
    const std::string m = missingHeaderMessage(log, request(""), h);
    QVERIFY2(m.starts_with("k.cu(1): catastrophic error: cannot open source file \"cub/cub.cuh\""), m.c_str());
    QVERIFY2(m.find("no CUDA toolkit's headers were found (looked for include/cuda.h in " + empty.string()) !=
                 std::string::npos,
             m.c_str());
    QVERIFY2(m.find("CUDA_HOME") != std::string::npos, m.c_str());
    QVERIFY(missingHeaderMessage("k.cu(1): error: expected a \";\"", request(""), h).empty());
}

void TestNvrtcHeaders::toolkitOfNvrtcsVersion() {
    // Of several toolkits, the one of NVRTC's own version, wherever it is in the list.
    QTemporaryDir dir;
    const std::filesystem::path root = dir.path().toStdString();
    writeFile(root / "old" / "include" / "cuda.h", "#define CUDA_VERSION 12040\n");
    writeFile(root / "new" / "include" / "cuda.h", "#define CUDA_VERSION 13000\n");
    std::filesystem::create_directories(root / "new" / "include" / "cccl");
    NvrtcHeaders h = findNvrtcHeaders({root / "none", root / "old", root / "new"}, "13.0");
    QCOMPARE(h.root, root / "new");
    QCOMPARE(h.toolkitVersion, std::string("13.0"));
    QCOMPARE(h.includeDirs, (std::vector<std::string>{(root / "new" / "include" / "cccl").string(),
                                                      (root / "new" / "include").string()}));
    // None of that version: the first toolkit there is.
    h = findNvrtcHeaders({root / "none", root / "old", root / "new"}, "13.1");
    QCOMPARE(h.root, root / "old");
    QCOMPARE(h.includeDirs, std::vector<std::string>{(root / "old" / "include").string()});
    QVERIFY(h.digest != findNvrtcHeaders({root / "new"}, "13.0").digest);
}

QTEST_GUILESS_MAIN(TestNvrtcHeaders)
#include "tst_nvrtcheaders.moc"
