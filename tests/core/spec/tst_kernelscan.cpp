// A first problem from a kernel's source (spec/kernelscan.h): the parameters and arguments the
// scan finds in kernels written in different styles, checked against the problems their
// authors wrote for them (the T1 corpus and kernels/).

#include "base/error.h"
#include "base/textformat.h"
#include "space/configspace.h"
#include "spec/kernelscan.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

using namespace tilescope;

namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::set<std::string> names(const KernelScan& scan) {
    std::set<std::string> out;
    for (const ScannedParameter& p : scan.parameters)
        out.insert(p.name);
    return out;
}

std::set<std::string> namesInProblem(const std::string& path) {
    std::set<std::string> out;
    for (const auto& p : nlohmann::json::parse(readFile(path))["ConfigurationSpace"]["TuningParameters"])
        out.insert(p["Name"].get<std::string>());
    return out;
}

} // namespace

class TestKernelScan : public QObject {
    Q_OBJECT

private slots:
    void sameParametersAsTheirAuthors_data() {
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<QString>("problem");
        const QString corpus = QStringLiteral(TILESCOPE_TEST_DATA "/t1corpus/");
        const QString kernels = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/");
        // #ifndef guards with defaults, lower-case (Kernel Tuner's style).
        for (const char* name : {"kt_convolution", "convolution", "hotspot", "pnpoly", "reduction"})
            QTest::newRow(name) << corpus + name + ".cu" << corpus + name + ".json";
        // ALL_CAPS #ifndef guards among constants and include-style macros.
        for (const char* name : {"sgemm", "softmax"})
            QTest::newRow(name) << kernels + name + "/" + name + ".cu" << kernels + name + "/" + name + ".json";
    }

    void sameParametersAsTheirAuthors() {
        QFETCH(QString, kernel);
        QFETCH(QString, problem);
        const KernelScan scan = scanKernel(readFile(kernel.toStdString()));
        const std::set<std::string> expected = namesInProblem(problem.toStdString());
        const std::set<std::string> found = names(scan);
        // Every parameter the author tunes is found; what else is found is a macro with a default
        // (the author chose to keep it fixed), for the user to drop.
        std::set<std::string> missing;
        std::set_difference(expected.begin(), expected.end(), found.begin(), found.end(),
                            std::inserter(missing, missing.end()));
        QVERIFY2(missing.empty(), ("missing: " + joined(missing) + "; found: " + joined(found)).c_str());
        for (const ScannedParameter& p : scan.parameters) {
            if (!expected.count(p.name))
                QVERIFY2(p.defaultValue, ("found " + p.name + " without a default (" + p.origin + ")").c_str());
        }
        QVERIFY(!scan.kernelName.empty());
    }

    void templatedKernel() {
        const KernelScan scan = scanKernel(readFile(TILESCOPE_TEST_DATA "/t1corpus/kt_templated.cu"));
        QCOMPARE(scan.kernelName, std::string("vector_scale"));
        QCOMPARE(scan.templateParameters, (std::vector<std::string>{"BLOCK", "TILE"}));
        const std::set<std::string> found = names(scan);
        QVERIFY2(found.count("BLOCK") && found.count("TILE"), joined(found).c_str());
        QCOMPARE(scan.arguments.size(), std::size_t(4));
        QCOMPARE(scan.arguments[0].name, std::string("out"));
        QVERIFY(scan.arguments[0].pointer && !scan.arguments[0].isConst);
        QCOMPARE(scan.arguments[1].name, std::string("in"));
        QVERIFY(scan.arguments[1].pointer && scan.arguments[1].isConst);
        QCOMPARE(scan.arguments[2].baseType, std::string("float"));
        QVERIFY(!scan.arguments[2].pointer);
        QCOMPARE(scan.arguments[3].baseType, std::string("int"));
    }

    void styles() {
        // #if tests without a default, names used and never defined, a template default, comments
        // and strings that only look like code, __launch_bounds__ before the name.
        const std::string source = R"(
#ifndef KERNEL_H
#define KERNEL_H
#define WIDTH 64            // a constant, not a parameter
// #ifdef COMMENTED_OUT
#if USE_SHUFFLE && defined(FAST_MATH)
#endif
template <typename T, int UNROLL = 4>
__global__ void __launch_bounds__(block_size_x) scale(T* __restrict__ out, const T* in, unsigned n, float s) {
    const char* msg = "TILE_FROM_A_STRING";
    for (int i = 0; i < UNROLL * TILE_SIZE; ++i) out[i] = in[i] * s * WIDTH + FLT_MAX * 0;
}
#endif
)";
        const KernelScan scan = scanKernel(source);
        QCOMPARE(scan.kernelName, std::string("scale"));
        std::vector<std::string> got;
        for (const ScannedParameter& p : scan.parameters)
            got.push_back(p.name);
        QCOMPARE(got, (std::vector<std::string>{"USE_SHUFFLE", "FAST_MATH", "block_size_x", "TILE_SIZE", "UNROLL"}));
        QCOMPARE(scan.parameters.back().defaultValue, std::optional<std::string>("4"));
        QCOMPARE(scan.arguments.size(), std::size_t(4));
        QCOMPARE(scan.arguments[2].baseType, std::string("unsigned int"));
        QVERIFY(!scan.arguments[0].isConst);
        QVERIFY(scan.arguments[1].isConst);
    }

    void proposal() {
        QTemporaryDir dir;
        const std::string cu = dir.filePath("kt_convolution.cu").toStdString();
        QVERIFY(
            QFile::copy(QStringLiteral(TILESCOPE_TEST_DATA "/t1corpus/kt_convolution.cu"), QString::fromStdString(cu)));
        const TuningProblem p = proposeProblem(cu);
        QCOMPARE(p.kernelName, std::string("convolution_kernel"));
        QCOMPARE(p.kernelFile, std::string("kt_convolution.cu"));
        QVERIFY(p.parameterIndex("block_size_x") >= 0);
        QCOMPARE(p.parameters[static_cast<std::size_t>(p.parameterIndex("block_size_x"))].valuesText,
                 std::string("[32]"));
        QCOMPARE(p.arguments.size(), std::size_t(3));
        QCOMPARE(ConfigSpace::build(p).size(), std::uint64_t(1)); // one value each, to be filled in
        p.requireLaunchable();                                    // compiles and launches as proposed
        QVERIFY_THROWS_EXCEPTION(InputError, proposeProblem(dir.filePath("missing.cu").toStdString()));

        // A bf16 kernel: its buffers are bfloat16, a type the problem reads and writes back.
        const std::string bf16 = dir.filePath("scale.cu").toStdString();
        std::ofstream(bf16) << "#include <cuda_bf16.h>\n"
                               "__global__ void scale(__nv_bfloat16* y, const __nv_bfloat16* x, int n) {\n"
                               "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                               "    if (i < n) y[i] = x[i];\n"
                               "}\n";
        const TuningProblem scaled = proposeProblem(bf16);
        QCOMPARE(scaled.arguments[0].type, std::string("bfloat16"));
        QCOMPARE(scaled.arguments[1].type, std::string("bfloat16"));
        const TuningProblem again = TuningProblem::parse(scaled.toJson(), bf16 + ".json", dir.path().toStdString());
        QCOMPARE(again.arguments, scaled.arguments);

        // An FP8 GEMM: FP8 inputs of both kinds, a bfloat16 output.
        const std::string fp8 = dir.filePath("fp8gemm.cu").toStdString();
        std::ofstream(fp8) << "#include <cuda_fp8.h>\n#include <cuda_bf16.h>\n"
                              "__global__ void fp8gemm(__nv_bfloat16* c, const __nv_fp8_e4m3* a,\n"
                              "                        const __nv_fp8_e5m2* b, int n) {\n"
                              "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "    if (i < n) c[i] = __float2bfloat16(float(a[i]) * float(b[i]));\n"
                              "}\n";
        const TuningProblem gemm = proposeProblem(fp8);
        QCOMPARE(gemm.arguments.size(), std::size_t(4));
        QCOMPARE(gemm.arguments[0].type, std::string("bfloat16"));
        QCOMPARE(gemm.arguments[1].type, std::string("float8_e4m3"));
        QCOMPARE(gemm.arguments[2].type, std::string("float8_e5m2"));
        QCOMPARE(gemm.arguments[1].accessType, std::string("ReadOnly"));
        const TuningProblem gemmAgain = TuningProblem::parse(gemm.toJson(), fp8 + ".json", dir.path().toStdString());
        QCOMPARE(gemmAgain.arguments, gemm.arguments);
    }
};

QTEST_GUILESS_MAIN(TestKernelScan)
#include "tst_kernelscan.moc"
