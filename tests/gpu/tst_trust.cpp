// On a GPU: results that cannot be right are named, never a winner.
//
// - A kernel that fills a 256 MiB output, whose EARLY parameter makes it return before writing
//   anything, tuned with verification off (`--no-verify`): every EARLY = 1 config runs in a few
//   microseconds, below half the time its output takes to write at the worker's measured copy
//   bandwidth, and is `implausible` with that floor in its message; every EARLY = 0 config is
//   `ok`, and the winner is one of them. The problem declares `out` as written only in part
//   (Tilescope.Partial), so the check of which elements a config wrote stays out of it (it would
//   name these configs first: tests/gpu/tst_verification.cpp) and only the time can tell.

#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "measure/cuda/cudabackend.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/tuningsession.h"

#include "gpudevice.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

using namespace tilescope;

namespace {

std::string workerPath() {
#ifdef TILESCOPE_WORKER
    return TILESCOPE_WORKER;
#else
    return {};
#endif
}

// A grid-stride fill of `out`; with EARLY it returns first, so it takes the time of an empty launch.
constexpr const char* kKernel = R"cuda(
extern "C" __global__ void fill(int n, float* __restrict__ out) {
    if (EARLY)
        return;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = 1.0f + static_cast<float>(i & 1023);
}
)cuda";

constexpr const char* kProblem = R"json({
    "General": {"FormatVersion": 1, "TimeUnit": "Milliseconds"},
    "ConfigurationSpace": {
        "TuningParameters": [
            {"Name": "EARLY", "Type": "int", "Values": "[0, 1]"},
            {"Name": "BLOCK", "Type": "int", "Values": "[128, 256, 512]"}
        ],
        "Conditions": []
    },
    "KernelSpecification": {
        "Language": "CUDA", "KernelName": "fill", "KernelFile": "fill.cu",
        "GlobalSizeType": "CUDA", "GlobalSize": {"X": "1056"}, "LocalSize": {"X": "BLOCK"},
        "Arguments": [
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "Value": "N"},
            {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N",
             "FillType": "Constant", "FillValue": 0}
        ]
    },
    "Tilescope": {"Shapes": [{"N": 67108864}], "Partial": ["out"]}
})json";

} // namespace

class TestTrust : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void anEarlyReturnIsImplausible();

private:
    QString m_skip;
    QTemporaryDir m_dir;
};

void TestTrust::initTestCase() {
    m_skip = whyNoCudaDevice();
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QVERIFY(m_dir.isValid());
}

void TestTrust::anEarlyReturnIsImplausible() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const std::filesystem::path dir = m_dir.path().toStdString();
    std::ofstream(dir / "fill.cu") << kKernel;
    std::ofstream(dir / "fill.json") << kProblem;
    const TuningProblem problem = TuningProblem::load(dir / "fill.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    QCOMPARE(space.size(), std::uint64_t(6));

    CompileCacheOptions cacheOptions;
    cacheOptions.directory = (dir / "cache").string();
    CompileService compiler(CompileServiceOptions{0, std::make_shared<CompileCache>(cacheOptions)});
    CudaBackendOptions options;
    options.workerPath = workerPath();
    options.verify = false; // --no-verify: nothing but the time can tell
    options.note = [](const std::string& text) { qInfo("note: %s", text.c_str()); };
    CudaBackend backend(options);
    ResultStore store = ResultStore::open((dir / "trust.db").string(), StoreMode::ReadWrite);
    SessionOptions session;
    session.backendLabel = "cuda:0";
    session.confirmTop = 3;
    TuningSession tuning(problem, backend, store, session, {}, &compiler);
    const SessionSummary summary = tuning.run();
    qInfo("provenance: %s", summary.session.provenanceJson.c_str());
    QCOMPARE(summary.progress.done, space.size());

    for (const ResultRecord& r : store.results(summary.session.id)) {
        const bool early = r.config.at("EARLY").asInt() == 1;
        qInfo("%s: %s %.4g ms%s%s", describeConfig(r.config).c_str(), std::string(statusName(r.status())).c_str(),
              r.timeMs(), r.measurement.message.empty() ? "" : ": ", r.measurement.message.c_str());
        if (early) {
            QCOMPARE(r.status(), ResultStatus::Implausible);
            QVERIFY2(r.measurement.message.find("half the time its outputs take to write at the measured copy "
                                                "bandwidth") != std::string::npos &&
                         r.measurement.message.find("256 MiB in 'out'") != std::string::npos,
                     r.measurement.message.c_str());
        } else {
            QCOMPARE(r.status(), ResultStatus::Ok);
        }
    }
    QCOMPARE(summary.progress.counts.of(ResultStatus::Implausible), std::uint64_t(3));
    QVERIFY(summary.progress.best);
    QCOMPARE(summary.progress.best->config.at("EARLY").asInt(), 0);
    for (const Remeasurement& x : summary.remeasured)
        QCOMPARE(x.result.config.at("EARLY").asInt(), 0);
    qInfo("implausible: %s", summary.implausible.c_str());
    QVERIFY(summary.implausible.rfind("3 configs ran faster than physics allows", 0) == 0);
}

QTEST_GUILESS_MAIN(TestTrust)
#include "tst_trust.moc"
