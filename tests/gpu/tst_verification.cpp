// On a GPU: results that cannot be wrong without saying so.
//
// - A kernel whose SKIP = 1 makes every fourth block return without writing leaves a quarter of
//   its output unwritten: every SKIP = 1 config is `wrong_result` with the unwritten count, with
//   verification on, with it off (--no-verify: the canary alone), and under `tilescope-cli kt`
//   from a Kernel Tuner script that gives no answer (a ReadWrite output: its initial contents
//   show what a config never wrote). The summary never advises --no-verify.
// - A per-block sum whose LAYOUT chooses which inputs each block adds: the outputs really depend
//   on LAYOUT; the configs that differ are verified again within the groups of LAYOUT and agree,
//   which the summary and their messages say (they stay wrong_result: agreeing with one's group
//   proves nothing); declared in the problem (Tilescope.VerifyWithin), every config is ok.
// - A kernel right only when its first input is positive passes the search on inputs where it
//   is and is caught by the final round's second input set.
// - A diffusion stencil whose TSTEPS computes that many time steps per launch: verified within
//   the groups of TSTEPS, found by the session (and said) or declared in the problem (all ok).
// - Outputs compared with their reference on the GPU read the same as on the host
//   (TILESCOPE_COMPARE_ON_HOST=1): the same statuses, messages and errors; only the configs whose
//   outputs agree are settled there, the others are copied and named by the host's comparison.
// - A ReadWrite buffer a kernel changes is restored before every launch (each sample of a kernel
//   that spins longer the more launches its counters saw takes the same time), and one it only
//   reads is not (the first launch left it as it was): one such buffer a config, counted.
// - With --sanitize, a read past the end of an input that lands in the next buffer is named by
//   its line (compute-sanitizer's padding between allocations).

#include "analysis/verificationsplit.h"
#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "measure/cuda/argumentdata.h"
#include "measure/cuda/cudabackend.h"
#include "measure/cuda/memorycheck.h"
#include "space/configspace.h"
#include "spec/launchplan.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/sessionreport.h"
#include "tuner/tuningsession.h"

#include "clirun.h"

#include "gpudevice.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

using namespace tilescope;

namespace {

constexpr const char* kWorker = TILESCOPE_WORKER;

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// out[i] = 2 in[i] + 1; with SKIP every fourth block returns first.
constexpr const char* kSkipKernel = R"cuda(
extern "C" __global__ void skipper(float* out, const float* in, int n) {
    if (SKIP && blockIdx.x % 4 == 3)
        return;
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i] + 1.0f;
}
)cuda";

constexpr const char* kSkipProblem = R"json({
    "General": {"FormatVersion": 1, "TimeUnit": "Milliseconds"},
    "ConfigurationSpace": {
        "TuningParameters": [
            {"Name": "SKIP", "Type": "int", "Values": "[0, 1]"},
            {"Name": "BLOCK", "Type": "int", "Values": "[128, 256, 512]"}
        ]
    },
    "KernelSpecification": {
        "Language": "CUDA", "KernelName": "skipper", "KernelFile": "skipper.cu",
        "ProblemSize": ["N"], "GridDivX": ["BLOCK"], "LocalSize": {"X": "BLOCK"},
        "Arguments": [
            {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N",
             "FillType": "Constant", "FillValue": 0},
            {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "N",
             "FillType": "Random"},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "N"}
        ]
    },
    "Tilescope": {"Shapes": [{"N": 16777216}]}
})json";

// The skipper's computation, every value scaled by 1.001 when BUG = 1.
constexpr const char* kScaledKernel = R"cuda(
extern "C" __global__ void skipper(float* out, const float* in, int n) {
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n)
        out[i] = (2.0f * in[i] + 1.0f) * (BUG ? 1.001f : 1.0f);
}
)cuda";

// The same kernel as a Kernel Tuner script writes it, with no answer.
constexpr const char* kSkipScript = R"py(
import numpy as np
from kernel_tuner import tune_kernel

kernel = """
extern "C" __global__ void skipper(float* out, const float* in, int n) {
    if (SKIP && blockIdx.x % 4 == 3)
        return;
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i] + 1.0f;
}
"""
n = np.int32(4194304)
x = np.random.rand(n).astype(np.float32)
out = np.zeros(n, dtype=np.float32)
params = {"SKIP": [0, 1], "block_size_x": [128, 256, 512]}
results, env = tune_kernel("skipper", kernel, n, [out, x, n], params, verbose=False)
)py";

// A sum per block in a buffer sized for the most blocks, as Kernel Tuner's expdist.py writes its
// cross terms, with no answer: a config with fewer blocks ends its output early. A stretch of the
// input is zero, so every config but the first writes sums of 0 over the buffer's zeros where the
// first config's sums are not (as expdist.py's far-apart points do): written, though unchanged.
constexpr const char* kBlockSumsScript = R"py(
import numpy as np
from kernel_tuner import tune_kernel

kernel = """
extern "C" __global__ void block_sums(float* sums, const float* in, int n) {
    __shared__ float part[512];
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    part[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = block_size_x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        sums[blockIdx.x] = part[0];
}
"""
n = np.int32(1 << 22)
x = np.random.rand(n).astype(np.float32)
x[65536:131072] = 0
sums = np.zeros(n // 64, dtype=np.float32)
params = {"block_size_x": [64, 128, 256, 512]}
results, env = tune_kernel("block_sums", kernel, n, [sums, x, n], params, verbose=False)
print("configs", len(results), "timed", sum(1 for r in results if isinstance(r.get("time"), float)))
)py";

// Each launch counts itself in `count` and first spins as many rounds as launches it saw before:
// restored before each launch, every launch spins none. `table` is read, never written, though
// not const (Kernel Tuner's scripts pass their arrays so).
constexpr const char* kGrowKernel = R"cuda(
extern "C" __global__ void grow(float* out, int* count, float* table, int n) {
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n)
        return;
    const int seen = count[i];
    float v = table[i];
    for (int k = 0; k < seen * 256; ++k)
        v = v * 0.999f + 0.001f;
    out[i] = v;
    count[i] = seen + 1;
}
)cuda";

constexpr const char* kGrowProblem = R"json({
    "General": {"FormatVersion": 1, "TimeUnit": "Milliseconds"},
    "ConfigurationSpace": {"TuningParameters": [{"Name": "BLOCK", "Type": "int", "Values": "[128, 256, 512]"}]},
    "KernelSpecification": {
        "Language": "CUDA", "KernelName": "grow", "KernelFile": "grow.cu",
        "ProblemSize": ["N"], "GridDivX": ["BLOCK"], "LocalSize": {"X": "BLOCK"},
        "Arguments": [
            {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N",
             "FillType": "Constant", "FillValue": 0},
            {"Name": "count", "Type": "int32", "MemoryType": "Vector", "AccessType": "ReadWrite", "Size": "N",
             "FillType": "Constant", "FillValue": 0},
            {"Name": "table", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "Size": "N",
             "FillType": "Random"},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "N"}
        ]
    },
    "Tilescope": {"Shapes": [{"N": 1048576}]}
})json";

// Each of the GROUPS blocks sums a share of the input: LAYOUT 0 a contiguous chunk, LAYOUT 1
// every GROUPS-th element from its own. Every element of `sums` is written, by design differently.
constexpr const char* kLayoutKernel = R"cuda(
extern "C" __global__ void blocksum(float* sums, const float* in, int n) {
    __shared__ float part[BLOCK];
    const int per = n / gridDim.x;
    float acc = 0.0f;
    for (int k = threadIdx.x; k < per; k += BLOCK)
        acc += LAYOUT == 0 ? in[blockIdx.x * per + k] : in[k * gridDim.x + blockIdx.x];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        sums[blockIdx.x] = part[0];
}
)cuda";

constexpr const char* kLayoutProblem = R"json({
    "General": {"FormatVersion": 1, "TimeUnit": "Milliseconds"},
    "ConfigurationSpace": {
        "TuningParameters": [
            {"Name": "LAYOUT", "Type": "int", "Values": "[0, 1]"},
            {"Name": "BLOCK", "Type": "int", "Values": "[64, 128, 256, 512]"}
        ]
    },
    "KernelSpecification": {
        "Language": "CUDA", "KernelName": "blocksum", "KernelFile": "blocksum.cu",
        "GlobalSizeType": "CUDA", "GlobalSize": {"X": "1024"}, "LocalSize": {"X": "BLOCK"},
        "Arguments": [
            {"Name": "sums", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": 1024,
             "FillType": "Constant", "FillValue": 0},
            {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "N",
             "FillType": "Random"},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "N"}
        ]
    },
    "Tilescope": {"Shapes": [{"N": 4194304}]}
})json";

// out[i] = in[i] + in[0]; BUG = 1 adds |in[0]| instead: right whenever in[0] >= 0.
constexpr const char* kLuckyKernel = R"cuda(
extern "C" __global__ void lucky(float* out, const float* in, int n) {
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n)
        out[i] = in[i] + (BUG ? fabsf(in[0]) : in[0]);
}
)cuda";

constexpr const char* kLuckyProblem = R"json({
    "General": {"FormatVersion": 1, "TimeUnit": "Milliseconds"},
    "ConfigurationSpace": {
        "TuningParameters": [
            {"Name": "BUG", "Type": "int", "Values": "[0, 1]"},
            {"Name": "BLOCK", "Type": "int", "Values": "[128, 256, 512]"}
        ]
    },
    "KernelSpecification": {
        "Language": "CUDA", "KernelName": "lucky", "KernelFile": "lucky.cu",
        "ProblemSize": ["N"], "GridDivX": ["BLOCK"], "LocalSize": {"X": "BLOCK"},
        "Arguments": [
            {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N",
             "FillType": "Constant", "FillValue": 0},
            {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "N",
             "FillType": "Random"},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "N"}
        ]
    },
    "Tilescope": {"Shapes": [{"N": 1048576}]}
})json";

// TSTEPS steps of u <- (u[i-1] + u[i] + u[i+1]) / 3 (zero outside [0, n)) in one launch: each
// block loads its tile with a halo of TSTEPS on either side, so its result does not depend on BLOCK.
constexpr const char* kStencilKernel = R"cuda(
extern "C" __global__ void diffuse(float* out, const float* in, int n) {
    constexpr int W = BLOCK + 2 * TSTEPS;
    __shared__ float a[W], b[W];
    const int start = blockIdx.x * BLOCK - TSTEPS;
    for (int k = threadIdx.x; k < W; k += BLOCK) {
        const int g = start + k;
        a[k] = g >= 0 && g < n ? in[g] : 0.0f;
    }
    __syncthreads();
    float* from = a;
    float* to = b;
    for (int t = 0; t < TSTEPS; ++t) {
        for (int k = threadIdx.x; k < W; k += BLOCK) {
            const int g = start + k;
            to[k] = k == 0 || k == W - 1 || g < 0 || g >= n ? 0.0f : (from[k - 1] + from[k] + from[k + 1]) / 3.0f;
        }
        __syncthreads();
        float* swap = from;
        from = to;
        to = swap;
    }
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n)
        out[i] = from[TSTEPS + threadIdx.x];
}
)cuda";

constexpr const char* kStencilProblem = R"json({
    "General": {"FormatVersion": 1, "TimeUnit": "Milliseconds"},
    "ConfigurationSpace": {
        "TuningParameters": [
            {"Name": "TSTEPS", "Type": "int", "Values": "[1, 2, 4]"},
            {"Name": "BLOCK", "Type": "int", "Values": "[64, 128, 256, 512]"}
        ]
    },
    "KernelSpecification": {
        "Language": "CUDA", "KernelName": "diffuse", "KernelFile": "diffuse.cu",
        "ProblemSize": ["N"], "GridDivX": ["BLOCK"], "LocalSize": {"X": "BLOCK"},
        "Arguments": [
            {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N",
             "FillType": "Constant", "FillValue": 0},
            {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "N",
             "FillType": "Random"},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "N"}
        ]
    },
    "Tilescope": {"Shapes": [{"N": 4194304}], "Objective": {"Name": "GCell/s", "Count": "N * TSTEPS", "Scale": 1e9}}
})json";

// out[i] = in[i + SHIFT]: `in` is declared with N elements, the kernel reads SHIFT past them;
// `in` is allocated before `out`, so those reads land in `out`'s memory.
constexpr const char* kShiftKernel = R"cuda(
extern "C" __global__ void shifted(const float* in, float* out, int n) {
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n)
        out[i] = in[i + SHIFT];
}
)cuda";

constexpr const char* kShiftProblem = R"json({
    "General": {"FormatVersion": 1, "TimeUnit": "Milliseconds"},
    "ConfigurationSpace": {
        "TuningParameters": [
            {"Name": "SHIFT", "Type": "int", "Values": "[4096]"},
            {"Name": "BLOCK", "Type": "int", "Values": "[128, 256]"}
        ]
    },
    "KernelSpecification": {
        "Language": "CUDA", "KernelName": "shifted", "KernelFile": "shifted.cu",
        "ProblemSize": ["N"], "GridDivX": ["BLOCK"], "LocalSize": {"X": "BLOCK"},
        "Arguments": [
            {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "N",
             "FillType": "Random"},
            {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N",
             "FillType": "Constant", "FillValue": 0},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "N"}
        ]
    },
    "Tilescope": {"Shapes": [{"N": 1048576}]}
})json";

} // namespace

class TestVerification : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void skippedBlocksAreUnwritten_data();
    void skippedBlocksAreUnwritten();
    void ktScriptWithoutAnswer();
    void ktOutputsAsLongAsTheGrid();
    void outputsThatDependOnAParameter_data();
    void outputsThatDependOnAParameter();
    void secondInputSet();
    void timeStepsVerifiedWithinGroups_data();
    void timeStepsVerifiedWithinGroups();
    void sanitizeFindsAnOverrunIntoTheNextBuffer();
    void comparedOnTheGpuAsOnTheHost_data();
    void comparedOnTheGpuAsOnTheHost();
    void readWriteRestoredWhereChanged();
    void readWriteCheckedOnTheGpuWithoutVerification();

private:
    // Writes `kernel` and `problem` as NAME.cu and NAME.json, and loads the problem.
    TuningProblem write(const std::string& name, const char* kernel, const std::string& problem);
    // A session of `problem` on device 0; its summary, the results in `results`.
    SessionSummary tune(const TuningProblem& problem, const CudaBackendOptions& options, const SessionOptions& session,
                        const std::string& name, std::vector<ResultRecord>& results);

    QString m_skip;
    CudaBackendOptions m_options;
    std::unique_ptr<CompileService> m_compiler;
    QTemporaryDir m_dir;
};

void TestVerification::initTestCase() {
    m_skip = whyNoCudaDevice();
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QVERIFY(m_dir.isValid());
    m_options.workerPath = kWorker;
    m_options.note = [](const std::string& text) { qInfo("note: %s", text.c_str()); };
    CompileCacheOptions cacheOptions;
    cacheOptions.directory = (std::filesystem::path(m_dir.path().toStdString()) / "cache").string();
    m_compiler =
        std::make_unique<CompileService>(CompileServiceOptions{0, std::make_shared<CompileCache>(cacheOptions)});
}

TuningProblem TestVerification::write(const std::string& name, const char* kernel, const std::string& problem) {
    const std::filesystem::path dir = m_dir.path().toStdString();
    std::ofstream(dir / (name + ".cu")) << kernel;
    std::ofstream(dir / (name + ".json")) << problem;
    return TuningProblem::load(dir / (name + ".json"));
}

SessionSummary TestVerification::tune(const TuningProblem& problem, const CudaBackendOptions& options,
                                      const SessionOptions& session, const std::string& name,
                                      std::vector<ResultRecord>& results) {
    const std::string db = (std::filesystem::path(m_dir.path().toStdString()) / (name + ".db")).string();
    ResultStore store = ResultStore::open(db, StoreMode::ReadWrite);
    CudaBackend backend(options);
    SessionOptions s = session;
    s.backendLabel = "cuda:0";
    s.stopOnSystematicFailure = false;
    TuningSession tuning(problem, backend, store, s, {}, m_compiler.get());
    SessionSummary summary = tuning.run();
    results = store.results(summary.session.id);
    for (const ResultRecord& r : results)
        qInfo("%s %s: %s %.4g ms %s", name.c_str(), describeConfig(r.config).c_str(),
              std::string(statusName(r.status())).c_str(), r.timeMs(), r.measurement.message.c_str());
    qInfo("%s verify: %s", name.c_str(), summary.verification.c_str());
    if (!summary.secondInputs.empty())
        qInfo("%s inputs: %s", name.c_str(), summary.secondInputs.c_str());
    return summary;
}

void TestVerification::skippedBlocksAreUnwritten_data() {
    QTest::addColumn<bool>("verify");
    QTest::newRow("verified") << true;
    QTest::newRow("--no-verify") << false;
}

void TestVerification::skippedBlocksAreUnwritten() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QFETCH(bool, verify);
    const TuningProblem problem = write("skipper", kSkipKernel, kSkipProblem);
    CudaBackendOptions options = m_options;
    options.verify = verify;
    SessionOptions session;
    session.strategy = "random"; // SKIP = 1 may come first: it cannot be the reference
    session.seed = 5;
    std::vector<ResultRecord> results;
    const SessionSummary summary =
        tune(problem, options, session, verify ? "skipper-verified" : "skipper-unverified", results);
    QCOMPARE(results.size(), std::size_t(6));
    for (const ResultRecord& r : results) {
        const std::string& m = r.measurement.message;
        if (r.config.at("SKIP").asInt() == 0) {
            QVERIFY2(r.status() == ResultStatus::Ok, m.c_str());
            continue;
        }
        QVERIFY2(r.status() == ResultStatus::WrongResult, m.c_str());
        // A quarter of the 16,777,216 elements: the blocks with blockIdx.x % 4 == 3.
        QVERIFY2(contains(m, "argument 'out': 4,194,304 of 16,777,216 elements never written, the first at "),
                 m.c_str());
    }
    QVERIFY(summary.progress.best);
    QCOMPARE(summary.progress.best->config.at("SKIP").asInt(), 0);
    QVERIFY2(contains(summary.verification, "leave elements unwritten"), summary.verification.c_str());
    QVERIFY2(!contains(summary.verification, "--no-verify"), summary.verification.c_str());
}

void TestVerification::ktScriptWithoutAnswer() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const QString python = QStringLiteral("python3");
    const CliRun numpy = runProgram(python, {"-c", "import numpy"});
    if (numpy.status != 0)
        QSKIP("no python3 with numpy for tilescope-cli kt");
    const QString script = m_dir.filePath("skipper_kt.py");
    std::ofstream(script.toStdString()) << kSkipScript;
    const QString db = m_dir.filePath("skipper_kt.db");
    const CliRun r = runProgram(QStringLiteral(TILESCOPE_CLI), {"kt", "--backend", "cuda:0", "--db", db, script},
                                300000, m_dir.path());
    qInfo("%s", qPrintable(describe(r)));
    // As Kernel Tuner does when a config fails verification, the script stops with the reason.
    QVERIFY2(r.status == 1 && r.err.contains(QStringLiteral("Kernel result verification failed for: SKIP=1")) &&
                 r.err.contains(QStringLiteral("keep their initial contents where the reference config changed them")),
             qPrintable(describe(r)));
    ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
    const std::vector<SessionInfo> sessions = store.sessions();
    QCOMPARE(sessions.size(), std::size_t(1));
    int wrong = 0;
    for (const ResultRecord& res : store.results(sessions.front().id)) {
        const std::string& m = res.measurement.message;
        qInfo("kt %s: %s %s", describeConfig(res.config).c_str(), std::string(statusName(res.status())).c_str(),
              m.c_str());
        if (res.config.at("SKIP").asInt() == 0) {
            QVERIFY2(res.status() == ResultStatus::Ok, m.c_str());
            continue;
        }
        ++wrong;
        QVERIFY2(res.status() == ResultStatus::WrongResult, m.c_str());
        // out is a ReadWrite numpy array of zeros: the skipped quarter keeps them.
        QVERIFY2(contains(m, "1,048,576 of 4,194,304 elements keep their initial contents where the reference config "
                             "changed them"),
                 m.c_str());
    }
    QCOMPARE(wrong, 3);
}

// Without an answer, a config whose output ends before the reference config's (fewer blocks, a
// sum each) is no error: the script runs to its end with every config timed, and the results say
// how much shorter each output is, though each writes zeros where the buffer held zeros and the
// reference config's sums are not zero. Holes stay errors (ktScriptWithoutAnswer).
void TestVerification::ktOutputsAsLongAsTheGrid() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    if (runProgram(QStringLiteral("python3"), {"-c", "import numpy"}).status != 0)
        QSKIP("no python3 with numpy for tilescope-cli kt");
    const QString script = m_dir.filePath("block_sums_kt.py");
    std::ofstream(script.toStdString()) << kBlockSumsScript;
    const QString db = m_dir.filePath("block_sums_kt.db");
    const CliRun r = runProgram(QStringLiteral(TILESCOPE_CLI), {"kt", "--backend", "cuda:0", "--db", db, script},
                                300000, m_dir.path());
    qInfo("%s", qPrintable(describe(r)));
    QVERIFY2(r.status == 0 && r.out.contains(QStringLiteral("configs 4 timed 4")), qPrintable(describe(r)));
    ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
    const std::vector<SessionInfo> sessions = store.sessions();
    QCOMPARE(sessions.size(), std::size_t(1));
    int shorter = 0;
    for (const ResultRecord& res : store.results(sessions.front().id)) {
        const std::string& m = res.measurement.message;
        qInfo("kt %s: %s %s", describeConfig(res.config).c_str(), std::string(statusName(res.status())).c_str(),
              m.c_str());
        QVERIFY2(res.status() == ResultStatus::Ok, m.c_str());
        shorter += contains(m, "elements before the reference config's (a result per block of its grid") ? 1 : 0;
    }
    QVERIFY2(shorter == 3, std::to_string(shorter).c_str()); // every config but the reference
}

void TestVerification::outputsThatDependOnAParameter_data() {
    QTest::addColumn<bool>("declared");
    QTest::newRow("found by the session") << false;
    QTest::newRow("Tilescope.VerifyWithin") << true;
}

void TestVerification::outputsThatDependOnAParameter() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QFETCH(bool, declared);
    std::string text = kLayoutProblem;
    if (declared)
        text.replace(text.find("\"Tilescope\": {"), 14, "\"Tilescope\": {\"VerifyWithin\": [\"LAYOUT\"], ");
    const TuningProblem problem = write(declared ? "blocksum-declared" : "blocksum", kLayoutKernel, text);
    std::vector<ResultRecord> results;
    const SessionSummary summary = tune(problem, m_options, {}, declared ? "blocksum-declared" : "blocksum", results);
    QCOMPARE(results.size(), std::size_t(8));
    if (declared) {
        for (const ResultRecord& r : results)
            QVERIFY2(r.status() == ResultStatus::Ok, r.measurement.message.c_str());
        QVERIFY2(summary.verification.empty(), summary.verification.c_str());
        return;
    }
    int wrong = 0;
    for (const ResultRecord& r : results) {
        if (r.status() == ResultStatus::Ok)
            continue;
        ++wrong;
        QVERIFY2(r.status() == ResultStatus::WrongResult &&
                     contains(r.measurement.message, "it agrees with the first config with LAYOUT = "),
                 r.measurement.message.c_str());
    }
    QCOMPARE(wrong, 4);
    QVERIFY2(contains(summary.verification, "split by LAYOUT") &&
                 contains(summary.verification, "all 4 agree with their group") &&
                 contains(summary.verification, "\"VerifyWithin\": [\"LAYOUT\"]"),
             summary.verification.c_str());
    QVERIFY2(!contains(summary.verification, "--no-verify"), summary.verification.c_str());
}

void TestVerification::secondInputSet() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const TuningProblem problem = write("lucky", kLuckyKernel, kLuckyProblem);
    // A session seed whose inputs start with a positive value, and whose second input set does not.
    const LaunchPlanner planner(problem, 0);
    const ArgumentSpec& in = planner.arguments().at(1);
    auto first = [&](std::uint64_t seed) {
        const std::vector<unsigned char> data = initialContents(in, seed, {});
        float v = 0;
        std::memcpy(&v, data.data(), sizeof v);
        return v;
    };
    std::uint64_t seed = 1;
    while (!(first(seed) > 0 && first(seed + 0x9E3779B97F4A7C15ull) < 0))
        ++seed;
    qInfo("seed %llu: in[0] %g, then %g", static_cast<unsigned long long>(seed), first(seed),
          first(seed + 0x9E3779B97F4A7C15ull));
    CudaBackendOptions options = m_options;
    options.seed = seed;
    SessionOptions session;
    session.seed = seed;
    session.strategy = "exhaustive"; // BUG = 0 first: the reference is right on both input sets
    session.confirmTop = 6;
    session.confirmRounds = 1;
    std::vector<ResultRecord> results;
    const SessionSummary summary = tune(problem, options, session, "lucky", results);
    QCOMPARE(results.size(), std::size_t(6));
    for (const ResultRecord& r : results) {
        const bool bug = r.config.at("BUG").asInt() == 1;
        QVERIFY2(r.status() == (bug ? ResultStatus::WrongResult : ResultStatus::Ok), r.measurement.message.c_str());
        if (bug)
            QVERIFY2(contains(r.measurement.message, "on a second input set"), r.measurement.message.c_str());
    }
    QVERIFY2(contains(summary.secondInputs, "3 of the best 6 configs are wrong on a second input set"),
             summary.secondInputs.c_str());
    QVERIFY(summary.progress.best);
    QCOMPARE(summary.progress.best->config.at("BUG").asInt(), 0);
}

void TestVerification::timeStepsVerifiedWithinGroups_data() {
    QTest::addColumn<bool>("declared");
    QTest::newRow("found by the session") << false;
    QTest::newRow("Tilescope.VerifyWithin") << true;
}

void TestVerification::timeStepsVerifiedWithinGroups() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QFETCH(bool, declared);
    std::string text = kStencilProblem;
    if (declared)
        text.replace(text.find("\"Tilescope\": {"), 14, "\"Tilescope\": {\"VerifyWithin\": [\"TSTEPS\"], ");
    const TuningProblem problem = write(declared ? "diffuse-declared" : "diffuse", kStencilKernel, text);
    QCOMPARE(problem.verifyWithin.size(), std::size_t(declared ? 1 : 0));
    SessionOptions session;
    session.strategy = "random";
    session.seed = 2;
    std::vector<ResultRecord> results;
    const SessionSummary summary =
        tune(problem, m_options, session, declared ? "diffuse-declared" : "diffuse", results);
    QCOMPARE(results.size(), std::size_t(12));
    int ok = 0;
    for (const ResultRecord& r : results) {
        ok += r.status() == ResultStatus::Ok;
        if (!declared && r.status() != ResultStatus::Ok)
            QVERIFY2(r.status() == ResultStatus::WrongResult &&
                         contains(r.measurement.message, "it agrees with the first config with TSTEPS = "),
                     r.measurement.message.c_str());
    }
    QCOMPARE(ok, declared ? 12 : 4);
    if (declared)
        QVERIFY2(summary.verification.empty(), summary.verification.c_str());
    else
        QVERIFY2(contains(summary.verification, "split by TSTEPS") &&
                     contains(summary.verification, "all 8 agree with their group") &&
                     contains(summary.verification, "the objective must count the work TSTEPS changes"),
                 summary.verification.c_str());
}

void TestVerification::sanitizeFindsAnOverrunIntoTheNextBuffer() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    std::string why;
    if (findComputeSanitizer(&why).empty())
        QSKIP(qPrintable(QString::fromStdString(why)));
    const TuningProblem problem = write("shifted", kShiftKernel, kShiftProblem);
    CudaBackendOptions options = m_options;
    options.sanitize = true;
    options.guard = GuardPolicy::Off; // ordinary buffers, one after the other
    std::vector<ResultRecord> results;
    tune(problem, options, {}, "shifted", results);
    int sanitized = 0;
    for (const ResultRecord& r : results) {
        const std::string& m = r.measurement.message;
        if (m.rfind("compute-sanitizer (memcheck): ", 0) != 0)
            continue;
        ++sanitized;
        QVERIFY2(r.status() == ResultStatus::Crashed, m.c_str());
        QVERIFY2(contains(m, "Invalid __global__ read of size 4 bytes") && contains(m, "shifted.cu:5"), m.c_str());
    }
    QCOMPARE(sanitized, 1);
}

void TestVerification::comparedOnTheGpuAsOnTheHost_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("unwritten blocks") << QStringLiteral("skipper");
    QTest::newRow("wrong values") << QStringLiteral("scaled");
}

void TestVerification::comparedOnTheGpuAsOnTheHost() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QFETCH(QString, name);
    const bool skipper = name == QStringLiteral("skipper");
    // "scaled": the skipper's problem with a kernel whose BUG = 1 scales every value by 1.001, an
    // error of 1e-3 of the output's scale where float's tolerance is 1e-4.
    std::string scaled = kSkipProblem;
    scaled.replace(scaled.find("\"SKIP\""), 6, "\"BUG\"");
    const TuningProblem problem =
        skipper ? write("skipper", kSkipKernel, kSkipProblem) : write("skipper", kScaledKernel, scaled);
    SessionOptions session; // exhaustive: the first config, the reference, is right (SKIP = 0, BUG = 0)
    std::map<std::string, ResultRecord> gpu, host;
    for (const bool onHost : {false, true}) {
        if (onHost)
            qputenv("TILESCOPE_COMPARE_ON_HOST", "1");
        else
            qunsetenv("TILESCOPE_COMPARE_ON_HOST");
        std::vector<ResultRecord> results;
        const SessionSummary summary =
            tune(problem, m_options, session, name.toStdString() + (onHost ? "-host" : "-gpu"), results);
        qunsetenv("TILESCOPE_COMPARE_ON_HOST");
        QVERIFY(summary.pipeline);
        const BenchmarkParts& parts = summary.pipeline->parts;
        qInfo("%s: %d outputs compared on the GPU, %d downloaded; %s", onHost ? "host" : "gpu", parts.comparedOnDevice,
              parts.downloaded, benchmarkPartsSentence(*summary.pipeline).c_str());
        // Six configs: the reference is downloaded, the two others right are settled on the GPU,
        // the three wrong ones go to the host for their message.
        QCOMPARE(parts.comparedOnDevice, onHost ? 0 : 2);
        QCOMPARE(parts.downloaded, onHost ? 6 : 4);
        for (const ResultRecord& r : results)
            (onHost ? host : gpu)[describeConfig(r.config)] = r;
    }
    QCOMPARE(gpu.size(), std::size_t(6));
    QCOMPARE(host.size(), gpu.size());
    for (const auto& [config, g] : gpu) {
        const ResultRecord& h = host.at(config);
        QVERIFY2(g.status() == h.status(), config.c_str());
        QCOMPARE(g.measurement.message, h.measurement.message);
        QCOMPARE(g.measurement.verificationError.has_value(), h.measurement.verificationError.has_value());
        if (g.measurement.verificationError)
            QCOMPARE(*g.measurement.verificationError, *h.measurement.verificationError);
        const bool wrong = g.config.at(skipper ? "SKIP" : "BUG").asInt() == 1;
        if (!skipper && wrong)
            QVERIFY2(contains(g.measurement.message, "beyond the tolerance"), g.measurement.message.c_str());
        QCOMPARE(g.status(), wrong ? ResultStatus::WrongResult : ResultStatus::Ok);
    }
}

void TestVerification::readWriteRestoredWhereChanged() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const TuningProblem problem = write("grow", kGrowKernel, kGrowProblem);
    SessionOptions session;
    session.raceMargin.reset(); // every config sampled in full
    std::vector<ResultRecord> results;
    const SessionSummary summary = tune(problem, m_options, session, "grow", results);
    QCOMPARE(results.size(), std::size_t(3));
    for (const ResultRecord& r : results) {
        const TimingStats& t = r.measurement.time;
        QVERIFY2(r.status() == ResultStatus::Ok, r.measurement.message.c_str());
        // 200 samples at most; with counts left over, the last would spin 199 x 256 rounds a thread.
        qInfo("grow %s: %d samples, %.4g-%.4g ms", describeConfig(r.config).c_str(), t.samples, t.minMs, t.maxMs);
        QVERIFY(t.samples >= 10);
        QVERIFY2(t.maxMs < 2 * t.minMs, describeConfig(r.config).c_str());
    }
    QVERIFY(summary.pipeline);
    qInfo("grow: %s", benchmarkPartsSentence(*summary.pipeline).c_str());
    QCOMPARE(summary.pipeline->parts.unrestored, 3); // `table` in each config, never `count`
}

void TestVerification::readWriteCheckedOnTheGpuWithoutVerification() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    // As `kt` writes a script's arrays, none declared const: both ReadWrite, `out` starting at 0.
    std::string readWrite = kSkipProblem;
    for (std::size_t at = readWrite.find("\"AccessType\": \""); at != std::string::npos;
         at = readWrite.find("\"AccessType\": \"", at + 1)) {
        const std::size_t value = at + std::string("\"AccessType\": \"").size();
        readWrite.replace(value, readWrite.find('"', value) - value, "ReadWrite");
    }
    const TuningProblem problem = write("skipper", kSkipKernel, readWrite);
    CudaBackendOptions options = m_options;
    options.verify = false;
    SessionOptions session; // exhaustive: the reference is SKIP = 0, BLOCK = 128
    std::map<std::string, ResultRecord> gpu, host;
    for (const bool onHost : {false, true}) {
        if (onHost)
            qputenv("TILESCOPE_COMPARE_ON_HOST", "1");
        else
            qunsetenv("TILESCOPE_COMPARE_ON_HOST");
        std::vector<ResultRecord> results;
        const SessionSummary summary =
            tune(problem, options, session, std::string("readwrite") + (onHost ? "-host" : "-gpu"), results);
        qunsetenv("TILESCOPE_COMPARE_ON_HOST");
        QVERIFY(summary.pipeline);
        const BenchmarkParts& parts = summary.pipeline->parts;
        qInfo("%s: %d outputs compared on the GPU, %d downloaded; %s", onHost ? "host" : "gpu", parts.comparedOnDevice,
              parts.downloaded, benchmarkPartsSentence(*summary.pipeline).c_str());
        // The reference's two outputs are downloaded; after it, `in` (unchanged) agrees bit for
        // bit five times, `out` twice (SKIP = 0); SKIP = 1's three go to the host for the message.
        QCOMPARE(parts.comparedOnDevice, onHost ? 0 : 7);
        QCOMPARE(parts.downloaded, onHost ? 12 : 5);
        for (const ResultRecord& r : results)
            (onHost ? host : gpu)[describeConfig(r.config)] = r;
    }
    QCOMPARE(gpu.size(), std::size_t(6));
    for (const auto& [config, g] : gpu) {
        const ResultRecord& h = host.at(config);
        QCOMPARE(g.measurement.message, h.measurement.message);
        const bool wrong = g.config.at("SKIP").asInt() == 1;
        QCOMPARE(g.status(), wrong ? ResultStatus::WrongResult : ResultStatus::Ok);
        if (wrong)
            QVERIFY2(contains(g.measurement.message, "keep their initial contents where the reference config changed"),
                     g.measurement.message.c_str());
    }
}

QTEST_GUILESS_MAIN(TestVerification)
#include "tst_verification.moc"
