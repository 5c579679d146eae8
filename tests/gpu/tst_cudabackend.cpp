// On a GPU: the CUDA backend end to end, through the real tilescope-worker processes.
//
// - A copy kernel's best measured bandwidth is within 10 % of a device-to-device copy's
//   (cuMemcpyDtoD timed with events in this process).
// - On kernels/sgemm, configs that spill (ptxas) show local-memory sectors through CUPTI and
//   the others none; the worker's registers equal the static analysis'; achieved occupancy is
//   reported.
// - A session over tests/data/cuda/faults.json, whose MODE parameter makes configs fault, hang,
//   compute wrong results or trap: each is recorded crashed / timeout / wrong_result, and every
//   other config of the same session completes.
// - Problems written for Kernel Tuner (tests/data/t1corpus): a convolution whose kernel is not
//   extern "C" and reads its filter from __constant__ memory (MemType Constant), and a templated
//   kernel named "vector_scale<block_size_x, tile_size_x>": every config runs and matches the
//   expected output; without the constant upload the convolution's answers are wrong.
// - kernels/hgemm's three families (mma.sync; wgmma fed by cp.async; wgmma fed by TMA through
//   the worker's tensor maps, warp-specialised) agree on a bf16 GEMM (on sm_90 only: the wgmma
//   families need it); with mapB mapping A instead of B, every TMA config is a wrong result and
//   the others stay right, so the maps are what the kernel reads. The TMA family runs persistent
//   (4 tiles a block) with the staged epilogue in one of its configs.
// - The TMA family at M, N and K that no tile divides, the FP8 GEMMs (e4m3, e5m2) and the
//   tensor-core GEMV at 3 and 11 tokens: every config's output equals C computed on the host
//   from the same inputs, within two bf16 units in the last place.
// - kernels/attention, causal and not, at HEAD_DIM 128 and 64: every config of the mma.sync family
//   at a small shape (B = 1, H = 2, S = 256) runs, and its O (downloaded as tune --outputs keeps
//   it) equals attention computed on the host in double from the same inputs, within the rounding
//   of P and O to bf16; so does every config of the wgmma family (ALGO 1, on sm_90 only) at S = 384.
// - The worker takes configs from the session's feed while a measure() call runs: a sweep of 40
//   configs is a few calls, most configs fed (no batch of 2 waits for its slowest config).
// - Executed instructions (CUPTI's SASS metrics) of tests/data/sass/spill.json, a kernel that
//   spills under --maxrregcount=32: every counted offset is an instruction of nvdisasm's listing,
//   every count a multiple of the launch's warps (every warp takes the same path), the spills of
//   the straight code before the loop (line 8) ran once per warp, those in the loop more often
//   and at most once per warp and trip, and the range
//   profiler's metrics still come with the next config.

#include "analysis/sourcelines.h"
#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "compile/sass.h"
#include "measure/cuda/argumentdata.h"
#include "measure/cuda/cudabackend.h"
#include "measure/cuda/device/cudadriver.h"
#include "measure/cuda/workerprotocol.h"
#include "measure/metricnames.h"
#include "space/configspace.h"
#include "spec/launchplan.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/sessionreport.h"
#include "tuner/tuningsession.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace tilescope;

namespace {

std::filesystem::path sourceDir() {
    return TILESCOPE_SOURCE_DIR;
}

std::string workerPath() {
#ifdef TILESCOPE_WORKER
    return TILESCOPE_WORKER;
#else
    return {};
#endif
}

double metricOf(const Measurement& m, const std::string& name) {
    for (const Metric& metric : m.metrics) {
        if (metric.name == name)
            return metric.value;
    }
    return -1;
}

} // namespace

class TestCudaBackend : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void copyReachesDeviceBandwidth();
    void warmContextTimesShortKernelsInBatches();
    void sgemmSpillsAndRegisters();
    void faultsAreIsolated();
    void workersTakeConfigsFromTheFeed();
    void kernelTunerProblems_data();
    void kernelTunerProblems();
    void kernelTunerConventions_data();
    void kernelTunerConventions();
    void tensorCoreFamilies_data();
    void tensorCoreFamilies();
    void tensorCoreEdgesMatchTheHost_data();
    void tensorCoreEdgesMatchTheHost();
    void attentionMatchesTheHost_data();
    void attentionMatchesTheHost();
    void executedInstructionsByLine();
    void energyAgreesWithSampledPower();

private:
    // Device-to-device copy bandwidth (read + write) in GB/s, timed in this process.
    double deviceCopyGBs(std::size_t bytes);
    // A short random session of `problem` on the device (20 ms of samples a config at most, no
    // final round) in a database of its own, `budget` configs (0: all), and its results.
    struct QuickRun {
        SessionSummary summary;
        std::vector<ResultRecord> results;
    };
    QuickRun quickSession(const TuningProblem& problem, const std::string& dbName, int budget, std::uint64_t seed,
                          SessionEvents events = {});
    // Every config of `problem` in index order (3 samples, 20 ms of them at most, 20 s a config,
    // no final round) in a database of its own; `outputsDir`: each config's outputs kept there.
    QuickRun exhaustiveSession(const TuningProblem& problem, const QString& dbName,
                               const std::filesystem::path& outputsDir = {});

    QString m_skip;
    std::string m_arch;
    CudaBackendOptions m_options;
    std::unique_ptr<CompileService> m_compiler;
    QTemporaryDir m_dir;
};

void TestCudaBackend::initTestCase() {
    std::string error;
    const cuda::Driver* cu = cuda::Driver::load(&error);
    if (!cu) {
        m_skip = QString::fromStdString(error);
        QSKIP(qPrintable(m_skip));
    }
    int count = 0;
    if (cu->cuInit(0) != CUDA_SUCCESS || cu->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
        m_skip = QStringLiteral("no CUDA device");
        QSKIP(qPrintable(m_skip));
    }
    CUdevice device = 0;
    QCOMPARE(cu->cuDeviceGet(&device, 0), CUDA_SUCCESS);
    int major = 0;
    int minor = 0;
    cu->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    cu->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    m_arch = "sm_" + std::to_string(major * 10 + minor);
    QVERIFY(m_dir.isValid());

    m_options.workerPath = workerPath();
    m_options.note = [](const std::string& text) { qInfo("note: %s", text.c_str()); };
    CompileCacheOptions cacheOptions;
    cacheOptions.directory = (std::filesystem::path(m_dir.path().toStdString()) / "cache").string();
    m_compiler =
        std::make_unique<CompileService>(CompileServiceOptions{0, std::make_shared<CompileCache>(cacheOptions)});
}

double TestCudaBackend::deviceCopyGBs(std::size_t bytes) {
    const cuda::Driver* cu = cuda::Driver::load(nullptr);
    CUdevice device = 0;
    cu->cuDeviceGet(&device, 0);
    CUcontext context = nullptr;
    if (cu->cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS)
        return 0;
    cu->cuCtxSetCurrent(context);
    CUdeviceptr a = 0;
    CUdeviceptr b = 0;
    double best = 0;
    if (cu->cuMemAlloc(&a, bytes) == CUDA_SUCCESS && cu->cuMemAlloc(&b, bytes) == CUDA_SUCCESS) {
        CUevent start = nullptr;
        CUevent stop = nullptr;
        cu->cuEventCreate(&start, CU_EVENT_DEFAULT);
        cu->cuEventCreate(&stop, CU_EVENT_DEFAULT);
        cu->cuMemsetD8(a, 1, bytes);
        std::vector<double> times;
        for (int i = 0; i < 12; ++i) {
            cu->cuEventRecord(start, nullptr);
            cu->cuMemcpyDtoD(b, a, bytes);
            cu->cuEventRecord(stop, nullptr);
            cu->cuEventSynchronize(stop);
            float ms = 0;
            cu->cuEventElapsedTime(&ms, start, stop);
            if (i >= 2)
                times.push_back(ms);
        }
        std::sort(times.begin(), times.end());
        const double median = times[times.size() / 2];
        best = 2.0 * static_cast<double>(bytes) / (median * 1e-3) / 1e9;
        cu->cuEventDestroy(start);
        cu->cuEventDestroy(stop);
    }
    if (a)
        cu->cuMemFree(a);
    if (b)
        cu->cuMemFree(b);
    cu->cuDevicePrimaryCtxRelease(device);
    return best;
}

TestCudaBackend::QuickRun TestCudaBackend::quickSession(const TuningProblem& problem, const std::string& dbName,
                                                        int budget, std::uint64_t seed, SessionEvents events) {
    const std::string db = (std::filesystem::path(m_dir.path().toStdString()) / dbName).string();
    ResultStore store = ResultStore::open(db, StoreMode::ReadWrite);
    CudaBackendOptions options = m_options;
    options.timing.maxSeconds = 0.02;
    options.timing.minSamples = 5;
    CudaBackend backend(options);
    SessionOptions session;
    session.backendLabel = "cuda:0";
    session.strategy = "random";
    session.seed = seed;
    if (budget > 0)
        session.budget.configs = static_cast<std::uint64_t>(budget);
    session.confirmTop = 0;
    TuningSession tuning(problem, backend, store, session, std::move(events), m_compiler.get());
    QuickRun run;
    run.summary = tuning.run();
    run.results = store.results(run.summary.session.id);
    return run;
}

TestCudaBackend::QuickRun TestCudaBackend::exhaustiveSession(const TuningProblem& problem, const QString& dbName,
                                                             const std::filesystem::path& outputsDir) {
    QString name = dbName;
    ResultStore store =
        ResultStore::open(m_dir.filePath(name.replace(' ', '_').replace(',', '_')).toStdString(), StoreMode::ReadWrite);
    CudaBackendOptions options = m_options;
    options.outputsDir = outputsDir;
    options.timing.maxSeconds = 0.02;
    options.timing.minSamples = 3;
    CudaBackend backend(options);
    SessionOptions session;
    session.backendLabel = "cuda:0";
    session.strategy = "exhaustive";
    session.confirmTop = 0;
    session.perConfigSeconds = 20;
    TuningSession tuning(problem, backend, store, session, {}, m_compiler.get());
    QuickRun run;
    run.summary = tuning.run();
    run.results = store.results(run.summary.session.id);
    return run;
}

void TestCudaBackend::copyReachesDeviceBandwidth() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const TuningProblem problem = TuningProblem::load(sourceDir() / "kernels/copy/copy.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    std::int64_t n = 0;
    for (const auto& [name, value] : problem.shapes.at(0).dims)
        n = name == "N" ? value : n;
    QVERIFY(n > 0);
    const double reference = deviceCopyGBs(static_cast<std::size_t>(n) * sizeof(float));
    qInfo("device-to-device copy of %lld MB: %.0f GB/s (read + write)", static_cast<long long>(n * 4 / 1000000),
          reference);
    QVERIFY(reference > 0);

    const std::string db = (std::filesystem::path(m_dir.path().toStdString()) / "copy.db").string();
    ResultStore store = ResultStore::open(db, StoreMode::ReadWrite);
    CudaBackendOptions options = m_options;
    // The problem's metrics, as `tune` takes them (copy.json asks for the default set, DRAM bytes
    // among them); timing is done apart from the profiling pass, so the bandwidth is unchanged.
    options.metrics = expandMetricNames(problem.metrics);
    for (const char* name : {"dram__bytes_read.sum", "dram__bytes_write.sum"})
        QVERIFY2(std::find(options.metrics.begin(), options.metrics.end(), name) != options.metrics.end(), name);
    CudaBackend backend(options);
    SessionOptions session;
    session.backendLabel = "cuda:0";
    TuningSession tuning(problem, backend, store, session, {}, m_compiler.get());
    const SessionSummary summary = tuning.run();
    QCOMPARE(summary.progress.done, space.size());
    QVERIFY(summary.progress.best.has_value());
    const ResultRecord& best = *summary.progress.best;
    QVERIFY(best.objective.has_value());
    qInfo("copy: %llu configs, %llu ok; best %.0f GB/s (%.1f %% of the device copy) at %s",
          static_cast<unsigned long long>(summary.progress.done),
          static_cast<unsigned long long>(summary.progress.counts.of(ResultStatus::Ok)), *best.objective,
          100.0 * *best.objective / reference, configJson(best.config).c_str());
    QCOMPARE(summary.progress.counts.of(ResultStatus::Ok), space.size());
    QVERIFY2(*best.objective >= 0.9 * reference, "the best copy config is more than 10 % below a device copy");
    // The metrics came along: DRAM traffic of a copy is about its bytes read and written.
    const double read = metricOf(best.measurement, "dram__bytes_read.sum");
    const double written = metricOf(best.measurement, "dram__bytes_write.sum");
    qInfo("best copy config: DRAM read %.3g B, written %.3g B (buffer %.3g B); %zu metrics%s%s", read, written,
          double(n) * 4, best.measurement.metrics.size(), best.measurement.message.empty() ? "" : "; ",
          best.measurement.message.c_str());
    QVERIFY2(read >= 0 && written >= 0,
             qPrintable(QStringLiteral("no DRAM metrics for the best copy config (%1 metrics): %2")
                            .arg(best.measurement.metrics.size())
                            .arg(QString::fromStdString(best.measurement.message))));
    QVERIFY2(read > 0.9 * double(n) * 4 && read < 1.2 * double(n) * 4, qPrintable(QString::number(read)));
    QVERIFY2(written > 0.9 * double(n) * 4 && written < 1.2 * double(n) * 4, qPrintable(QString::number(written)));
}

void TestCudaBackend::warmContextTimesShortKernelsInBatches() {
    // A copy of 256 KiB in and out takes a few microseconds, less than a launch takes to queue.
    // Flushed, the 2x-L2 memset before each sample keeps the GPU busy while the launch is queued;
    // warm, nothing does, so the samples are queued behind the stream's hold and, this short, timed
    // in batches of launches. Both sessions' best must then agree (warm no slower than flushed
    // beyond noise): without the hold a warm sample of a 2-3 us kernel also holds the launch's
    // queueing, a few microseconds more.
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    TuningProblem problem = TuningProblem::load(sourceDir() / "kernels/copy/copy.json");
    problem.shapes.resize(1);
    problem.shapes[0].dims = {{"N", 65536}};
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    QVERIFY(space.size() > 0);
    std::map<std::string, SessionSummary> summaries;
    for (const char* context : {"flush", "warm"}) {
        const std::string db =
            (std::filesystem::path(m_dir.path().toStdString()) / ("copy-64k-" + std::string(context) + ".db")).string();
        ResultStore store = ResultStore::open(db, StoreMode::ReadWrite);
        CudaBackendOptions options = m_options;
        options.metrics.clear();
        QCOMPARE(worker::setL2Context(context, options.timing), std::string());
        CudaBackend backend(options);
        SessionOptions session;
        session.backendLabel = "cuda:0";
        TuningSession tuning(problem, backend, store, session, {}, m_compiler.get());
        SessionSummary summary = tuning.run();
        QCOMPARE(summary.progress.done, space.size());
        QCOMPARE(summary.progress.counts.of(ResultStatus::Ok), space.size());
        QVERIFY(summary.progress.best.has_value() && summary.pipeline.has_value());
        qInfo("%s: best %.5f ms (%s); %s", context, summary.progress.best->timeMs(),
              configJson(summary.progress.best->config).c_str(), benchmarkPartsSentence(*summary.pipeline).c_str());
        summaries[context] = std::move(summary);
    }
    const BenchmarkParts& flushed = summaries["flush"].pipeline->parts;
    const BenchmarkParts& warm = summaries["warm"].pipeline->parts;
    QCOMPARE(flushed.batched, 0);
    QVERIFY2(warm.batched >= static_cast<int>(space.size()),
             std::to_string(warm.batched).c_str()); // the final round too
    QVERIFY2(warm.batchLaunches > 1 && warm.batchLaunches <= 64, std::to_string(warm.batchLaunches).c_str());
    const double flushMs = summaries["flush"].progress.best->timeMs();
    const double warmMs = summaries["warm"].progress.best->timeMs();
    QVERIFY2(warmMs <= 1.1 * flushMs, qPrintable(QStringLiteral("warm %1 ms, flushed %2 ms").arg(warmMs).arg(flushMs)));
}

void TestCudaBackend::sgemmSpillsAndRegisters() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const TuningProblem problem = TuningProblem::load(sourceDir() / "kernels/sgemm/sgemm.json");
    const std::size_t shape = 1; // 2048^3: quick
    const ConfigSpace space = ConfigSpace::build(problem, shape);
    const RequestBuilder builder(problem);

    // Pick spilling and clean configs by the static analysis of a sample.
    const std::vector<std::uint64_t> sample = space.sample(400, 7);
    std::vector<CompileRequest> requests;
    for (std::uint64_t index : sample)
        requests.push_back(builder.request(space.at(index), m_arch));
    const std::vector<CompileResult> compiled = m_compiler->compileAll(requests);
    std::vector<std::size_t> chosen;
    int spilling = 0;
    int clean = 0;
    for (std::size_t i = 0; i < compiled.size() && (spilling < 10 || clean < 10); ++i) {
        if (!compiled[i].ok())
            continue;
        const bool spills = compiled[i].info.spills() && compiled[i].info.spillStores >= 64;
        const bool none = !compiled[i].info.spills() && compiled[i].info.stackFrame == 0;
        if (spills && spilling < 10) {
            ++spilling;
            chosen.push_back(i);
        } else if (none && clean < 10) {
            ++clean;
            chosen.push_back(i);
        }
    }
    QCOMPARE(spilling, 10);
    QCOMPARE(clean, 10);

    CudaBackendOptions options = m_options;
    options.metrics = defaultMetricNames();
    CudaBackend backend(options);
    const BackendInfo info = backend.open(problem, shape, space);
    QCOMPARE(info.arch, m_arch);
    std::vector<MeasureItem> items;
    for (std::size_t i : chosen)
        items.push_back(MeasureItem{sample[i], space.at(sample[i]), {{m_arch, &compiled[i]}}});
    std::map<std::size_t, Measurement> results;
    backend.measure(items, MeasureControl{}, [&](std::size_t item, Measurement m) { results[item] = std::move(m); });
    QCOMPARE(results.size(), items.size());

    for (std::size_t k = 0; k < items.size(); ++k) {
        const Measurement& m = results.at(k);
        const StaticInfo& expected = items[k].compiled()->info;
        const std::string what = space.describe(items[k].config);
        QVERIFY2(m.status == ResultStatus::Ok,
                 (what + ": " + std::string(statusName(m.status)) + " " + m.message).c_str());
        QVERIFY2(m.staticInfo.has_value(), what.c_str());
        QCOMPARE(m.staticInfo->registers, expected.registers);
        QCOMPARE(m.staticInfo->sharedStatic, expected.sharedStatic);
        QCOMPARE(m.staticInfo->stackFrame, expected.stackFrame);
        QVERIFY2(m.time.samples >= 3 && m.time.medianMs > 0, what.c_str());
        const double localLd = metricOf(m, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum");
        const double localSt = metricOf(m, "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum");
        const double occupancy = metricOf(m, "sm__warps_active.avg.pct_of_peak_sustained_active");
        qInfo("%s: %d registers, spill %lld/%lld B, %.3f ms, local sectors ld %.3g st %.3g, achieved occupancy "
              "%.1f %%, verification error %g",
              what.c_str(), m.staticInfo->registers, static_cast<long long>(expected.spillStores),
              static_cast<long long>(expected.spillLoads), m.time.medianMs, localLd, localSt, occupancy,
              m.verificationError.value_or(-1));
        QVERIFY2(occupancy > 0 && occupancy <= 100, what.c_str());
        if (expected.spills())
            QVERIFY2(localLd + localSt > 0, (what + " spills but shows no local-memory traffic").c_str());
        else
            QVERIFY2(localLd == 0 && localSt == 0, (what + " does not spill but shows local traffic").c_str());
    }
    backend.close();
}

void TestCudaBackend::kernelTunerProblems_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("patch"); // JSON merge patch: constant inputs, so that the answer is known
    QTest::addColumn<int>("budget");    // configs (0: all)
    QTest::addColumn<bool>("expectRight");
    // 0.5 * 7 * 7 over an image of ones.
    const QString convolution = QString::fromUtf8(
        R"json({"KernelSpecification": {"Arguments": [
            {"Name": "output_image", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
             "Size": "ProblemSize[0] * ProblemSize[1]", "FillType": "Constant", "FillValue": 0.0, "Output": 1},
            {"Name": "input_image", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly",
             "Size": "(ProblemSize[0] + max(filter_width) - 1) * (ProblemSize[1] + max(filter_height) - 1)",
             "FillType": "Constant", "FillValue": 1.0},
            {"Name": "d_filter", "Type": "float", "MemoryType": "Vector", "MemType": "Constant", "AccessType": "ReadOnly",
             "Size": "max(filter_width) * max(filter_height)", "FillType": "Constant", "FillValue": 0.5}],
         "ReferenceArguments": [{"Name": "expected", "TargetName": "output_image", "FillType": "Constant",
             "FillValue": 24.5, "ValidationMethod": "AbsoluteDifference", "ValidationThreshold": 0.001}]}})json");
    QTest::newRow("convolution, constant memory") << "kt_convolution.json" << convolution << 24 << true;
    QString withoutConstant = convolution;
    withoutConstant.replace(QString::fromUtf8("\"MemType\": \"Constant\", "), QString());
    QTest::newRow("convolution, the filter not uploaded") << "kt_convolution.json" << withoutConstant << 3 << false;
    QTest::newRow("templated kernel") << "kt_templated.json"
                                      << QString::fromUtf8(R"json({"KernelSpecification": {"Arguments": [
            {"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "ProblemSize[0]",
             "FillType": "Constant", "FillValue": 0.0, "Output": 1},
            {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": 4194304,
             "FillType": "Constant", "FillValue": 2.0},
            {"Name": "a", "Type": "float", "MemoryType": "Scalar", "FillValue": 2.5},
            {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 4194304}],
         "ReferenceArguments": [{"Name": "expected", "TargetName": "out", "FillType": "Constant", "FillValue": 5.0,
             "ValidationMethod": "AbsoluteDifference", "ValidationThreshold": 0.0001}]}})json")
                                      << 0 << true;
    // CUDA C++ written for nvcc (tests/data/cudacpp): the toolkit's headers and the C headers
    // NVRTC lacks; constant inputs, every config's output known.
    QTest::newRow("<cub/cub.cuh>, a template launched by its lowered name") << "../cudacpp/cub_block.json"
                                                                            << "{}" << 0 << true;
    QTest::newRow("<cooperative_groups.h>") << "../cudacpp/coop_groups.json"
                                            << "{}" << 0 << true;
    QTest::newRow("<cuda/std/array>, <cuda_fp16.h>") << "../cudacpp/std_array.json"
                                                     << "{}" << 0 << true;
    QTest::newRow("<stdio.h> printf, <math.h>") << "../cudacpp/printf.json"
                                                << "{}" << 0 << true;
}

void TestCudaBackend::kernelTunerProblems() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QFETCH(QString, file);
    QFETCH(QString, patch);
    QFETCH(int, budget);
    QFETCH(bool, expectRight);
    const std::filesystem::path corpus = sourceDir() / "tests/data/t1corpus";
    std::ifstream in(corpus / file.toStdString());
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
    doc.merge_patch(nlohmann::ordered_json::parse(patch.toStdString()));
    const TuningProblem problem =
        TuningProblem::parse(doc.dump(), file.toStdString(), (corpus / file.toStdString()).parent_path());
    QVERIFY(problem.launchBlockers.empty());
    const ConfigSpace space = ConfigSpace::build(problem, 0);

    const QuickRun run = quickSession(problem, "kt.db", budget, 3);
    const SessionSummary& summary = run.summary;
    const std::uint64_t expected = budget > 0 ? std::min<std::uint64_t>(budget, space.size()) : space.size();
    QCOMPARE(summary.progress.done, expected);
    std::map<std::string, int> byStatus;
    for (const ResultRecord& r : run.results) {
        ++byStatus[std::string(statusName(r.status()))];
        if (expectRight && r.status() != ResultStatus::Ok)
            QFAIL(qPrintable(QString::fromStdString(configJson(r.config) + ": " + std::string(statusName(r.status())) +
                                                    ": " + r.measurement.message)));
    }
    std::string counts;
    for (const auto& [status, n] : byStatus)
        counts += " " + status + " " + std::to_string(n);
    qInfo("%s: %llu configs:%s; best %.4g ms", qPrintable(file), static_cast<unsigned long long>(expected),
          counts.c_str(), summary.progress.best ? summary.progress.best->timeMs() : 0.0);
    if (!expectRight)
        QCOMPARE(byStatus["wrong_result"], static_cast<int>(expected));
}

// The corpus problems written in Kernel Tuner's conventions (defaults under #ifndef kernel_tuner,
// #pragma unroll loop_unroll_factor_*, grid_size_x), tuned with random inputs and every config
// verified against a reference computed here on the CPU.
void TestCudaBackend::kernelTunerConventions_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("budget");
    QTest::newRow("diffusion stencil") << "kt_diffusion.json" << 64;
    QTest::newRow("row sums, grid_size_x") << "kt_rowsum.json" << 0;
}

void TestCudaBackend::kernelTunerConventions() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QFETCH(QString, file);
    QFETCH(int, budget);
    const std::filesystem::path corpus = sourceDir() / "tests/data/t1corpus";
    const std::filesystem::path dir(m_dir.path().toStdString());
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<float> input;
    std::vector<float> expected;
    std::string inputName;
    std::string outputName;
    if (file == QStringLiteral("kt_diffusion.json")) {
        constexpr int nx = 1024, ny = 1024;
        input.resize(std::size_t(nx) * ny);
        for (float& v : input)
            v = uniform(rng);
        expected = input; // the boundary keeps its value
        for (int j = 1; j < ny - 1; ++j)
            for (int i = 1; i < nx - 1; ++i) {
                const auto at = [&](int y, int x) { return double(input[std::size_t(y) * nx + std::size_t(x)]); };
                expected[std::size_t(j) * nx + std::size_t(i)] = static_cast<float>(
                    at(j, i) + 0.225 * (at(j + 1, i) + at(j - 1, i) + at(j, i + 1) + at(j, i - 1) - 4.0 * at(j, i)));
            }
        inputName = "u";
        outputName = "u_new";
    } else {
        constexpr int rows = 4096, cols = 1024;
        input.resize(std::size_t(rows) * cols);
        for (float& v : input)
            v = uniform(rng);
        for (int r = 0; r < rows; ++r) {
            double sum = 0;
            for (int c = 0; c < cols; ++c)
                sum += input[std::size_t(r) * cols + std::size_t(c)];
            expected.push_back(static_cast<float>(sum));
        }
        inputName = "matrix";
        outputName = "sums";
    }
    auto write = [&](const std::string& name, const std::vector<float>& data) {
        const std::filesystem::path path = dir / (file.toStdString() + "." + name + ".bin");
        std::ofstream out(path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(data.data()),
                  static_cast<std::streamsize>(data.size() * sizeof(float)));
        return path.string();
    };
    const std::string inputPath = write("input", input);
    const std::string referencePath = write("reference", expected);

    std::ifstream in(corpus / file.toStdString());
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
    for (auto& a : doc["KernelSpecification"]["Arguments"]) {
        if (a["Name"] == inputName) {
            a["FillType"] = "BinaryRaw";
            a["DataSource"] = inputPath;
        }
    }
    doc["KernelSpecification"]["ReferenceArguments"] = nlohmann::ordered_json::array(
        {{{"Name", "expected"}, {"TargetName", outputName}, {"FillType", "BinaryRaw"}, {"DataSource", referencePath}}});
    const TuningProblem problem = TuningProblem::parse(doc.dump(), file.toStdString(), corpus);
    QVERIFY(problem.launchBlockers.empty());
    const ConfigSpace space = ConfigSpace::build(problem, 0);

    std::vector<std::string> warnings;
    SessionEvents events;
    events.warning = [&](const LaunchWarning& w) { warnings.push_back(w.message); };
    // The outputs come back too (tune --outputs): each config's, as its first launch left them.
    const std::filesystem::path outputs = dir / (file.toStdString() + ".outputs");
    m_options.outputsDir = outputs;
    const QuickRun run = quickSession(problem, file.toStdString() + ".db", budget, 5, events);
    m_options.outputsDir.clear();
    std::size_t outputIndex = 0;
    while (problem.arguments[outputIndex].name != outputName)
        ++outputIndex;
    std::size_t checked = 0;
    for (const ResultRecord& r : run.results) {
        std::string key;
        for (std::size_t p = 0; p < problem.parameters.size(); ++p) {
            const ConfigValue* v = r.config.find(problem.parameters[p].name);
            QVERIFY(v && v->isInt()); // both problems' parameters are integers
            key += (p ? "," : "") + std::to_string(v->asInt());
        }
        // Both problems flag their output ("Output": 1): only it comes back.
        for (std::size_t i = 0; i < problem.arguments.size(); ++i) {
            const std::filesystem::path f = outputs / key / (std::to_string(i) + ".bin");
            QVERIFY2(std::filesystem::exists(f) == problem.arguments[i].output.value_or(false), f.c_str());
        }
        std::ifstream got(outputs / key / (std::to_string(outputIndex) + ".bin"), std::ios::binary);
        std::vector<float> values(expected.size());
        got.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
        QCOMPARE(std::size_t(got.gcount()), values.size() * sizeof(float));
        for (std::size_t i = 0; i < values.size(); ++i)
            QVERIFY2(std::abs(values[i] - expected[i]) <= 1e-3f * (1 + std::abs(expected[i])),
                     qPrintable(QString::fromStdString(key) + " element " + QString::number(i)));
        ++checked;
    }
    QVERIFY(checked > 0);
    const SessionSummary& summary = run.summary;
    const std::uint64_t total = budget > 0 ? std::min<std::uint64_t>(budget, space.size()) : space.size();
    QCOMPARE(summary.progress.done, total);
    // Every parameter reaches the code: no inert-parameter warning.
    QVERIFY2(warnings.empty(), warnings.empty() ? "" : warnings.front().c_str());
    std::set<std::int64_t> registers;
    for (const ResultRecord& r : run.results) {
        if (r.status() != ResultStatus::Ok)
            QFAIL(qPrintable(QString::fromStdString(configJson(r.config) + ": " + std::string(statusName(r.status())) +
                                                    ": " + r.measurement.message)));
        if (r.measurement.staticInfo)
            registers.insert(r.measurement.staticInfo->registers);
    }
    qInfo("%s: %llu configs verified against the CPU reference; best %.4g ms; %zu distinct register counts",
          qPrintable(file), static_cast<unsigned long long>(total),
          summary.progress.best ? summary.progress.best->timeMs() : 0.0, registers.size());
    QVERIFY2(registers.size() > 1, "every config compiled to the same register count: the parameters did not reach "
                                   "the code");
}

void TestCudaBackend::tensorCoreFamilies_data() {
    QTest::addColumn<bool>("wrongMap");
    QTest::addColumn<int>("rows"); // M
    QTest::newRow("tensor maps of A and B") << false << 1024;
    QTest::newRow("mapB maps A") << true << 1024;
    // Ragged tile rows (M not a multiple of BLOCK_M): every family loads zeros past M (TMA's
    // fills them) and stores nothing there, and all agree; below 64 rows TMA's family is not in
    // the space (its boxes are 64 rows).
    QTest::newRow("ragged M = 100") << false << 100;
    QTest::newRow("decode M = 1") << false << 1;
}

void TestCudaBackend::tensorCoreFamilies() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    if (m_arch != "sm_90")
        QSKIP("the wgmma families need sm_90");
    QFETCH(bool, wrongMap);
    QFETCH(int, rows);
    const bool ragged = rows % 128 != 0;
    const std::filesystem::path dir = sourceDir() / "kernels/hgemm";
    std::ifstream in(dir / "hgemm_bf16_bt.json");
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
    // A small space with every family: 2 mma.sync, 2 cp.async wgmma and 4 TMA wgmma configs.
    auto values = [](const char* name, const char* list) {
        return nlohmann::ordered_json{{"Name", name}, {"Type", "int"}, {"Values", list}};
    };
    doc["ConfigurationSpace"]["TuningParameters"] = nlohmann::ordered_json::array(
        {values("ALGO", "[0, 1, 2]"), values("BLOCK_M", "[128]"), values("BLOCK_N", "[128, 256]"),
         values("BLOCK_K", "[64]"), values("WARPS_M", "[1, 2]"), values("WARPS_N", "[1, 2]"),
         values("STAGES", "[3, 4]"), values("GROUP_M", "[8]"), values("STORE", "[0, 1]"), values("TILES", "[1, 4]")});
    doc["ConfigurationSpace"]["Conditions"].push_back(
        {{"Parameters", {"ALGO", "WARPS_M", "WARPS_N", "STAGES", "BLOCK_N", "STORE", "TILES"}},
         {"Expression", "(ALGO == 0 and WARPS_M == 2 and WARPS_N == 2 and STAGES == 3 and BLOCK_N == 128) or "
                        "(ALGO == 1 and STAGES == 4) or (ALGO == 2 and STAGES == 3 and STORE == TILES // 4)"}});
    doc["Tilescope"]["Shapes"] = nlohmann::ordered_json::array({{{"M", rows}, {"N", 768}, {"K", 1024}}});
    if (wrongMap) {
        for (auto& a : doc["KernelSpecification"]["Arguments"]) {
            if (a.value("Name", "") == "mapB")
                a["TensorMap"]["Tensor"] = "A"; // A is M x K: the same extents here, other values
        }
        doc["Tilescope"]["Shapes"] = nlohmann::ordered_json::array({{{"M", 1024}, {"N", 1024}, {"K", 1024}}});
    }
    const TuningProblem problem = TuningProblem::parse(doc.dump(), "hgemm_bf16_bt.json", dir);
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const bool tma = rows >= 64;
    QCOMPARE(space.size(), std::uint64_t(tma ? 1 + 2 + 4 : 1 + 2));

    const std::string db =
        (std::filesystem::path(m_dir.path().toStdString()) / (wrongMap ? "hgemm-wrong.db" : "hgemm.db")).string();
    ResultStore store = ResultStore::open(db, StoreMode::ReadWrite);
    CudaBackendOptions options = m_options;
    options.timing.maxSeconds = 0.05;
    options.timing.minSamples = 5;
    CudaBackend backend(options);
    SessionOptions session;
    session.backendLabel = "cuda:0";
    session.strategy = "exhaustive"; // index order: ALGO 0 first, so mma.sync's output is the reference
    session.confirmTop = 0;
    TuningSession tuning(problem, backend, store, session, {}, m_compiler.get());
    const SessionSummary summary = tuning.run();
    std::map<std::int64_t, std::map<std::string, int>> byAlgo;
    std::map<std::int64_t, double> bestByAlgo;
    for (const ResultRecord& r : store.results(summary.session.id)) {
        const std::int64_t algo = r.config.at("ALGO").asInt();
        ++byAlgo[algo][std::string(statusName(r.status()))];
        qInfo("%s: %s %.4g ms %s", configJson(r.config).c_str(), std::string(statusName(r.status())).c_str(),
              r.timeMs(), r.measurement.message.c_str());
        if (r.status() == ResultStatus::Ok)
            bestByAlgo[algo] = std::max(bestByAlgo[algo], 2.0 * rows * 768 * 1024 / (r.timeMs() * 1e9));
    }
    QCOMPARE(byAlgo[0]["ok"], 1);
    QCOMPARE(byAlgo[1]["ok"], 2);
    if (wrongMap) {
        QCOMPARE(byAlgo[2]["wrong_result"], 4);
    } else if (!tma) {
        QVERIFY(byAlgo[2].empty());
        qInfo("best TFLOP/s at %dx768x1024: mma.sync %.2f, wgmma (cp.async) %.2f", rows, bestByAlgo[0], bestByAlgo[1]);
    } else {
        QCOMPARE(byAlgo[2]["ok"], 4);
        QVERIFY(ragged || rows == 1024);
        qInfo("best TFLOP/s at %dx768x1024: mma.sync %.1f, wgmma (cp.async) %.1f, wgmma (TMA) %.1f", rows,
              bestByAlgo[0], bestByAlgo[1], bestByAlgo[2]);
    }
}

namespace {

std::vector<float> decodeValues(const ArgumentSpec& arg, const std::vector<unsigned char>& bytes) {
    std::vector<float> out(static_cast<std::size_t>(arg.values()));
    for (std::size_t i = 0; i < out.size(); ++i) {
        switch (arg.element) {
        case ElementType::BFloat16:
            out[i] = floatFromBfloat16(static_cast<std::uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8));
            break;
        case ElementType::Half:
            out[i] = floatFromHalf(static_cast<std::uint16_t>(bytes[2 * i] | bytes[2 * i + 1] << 8));
            break;
        case ElementType::Float8E4M3:
            out[i] = floatFromFloat8E4M3(bytes[i]);
            break;
        case ElementType::Float8E5M2:
            out[i] = floatFromFloat8E5M2(bytes[i]);
            break;
        default:
            throw std::runtime_error("unexpected element type");
        }
    }
    return out;
}

const ArgumentSpec& argumentNamed(const std::vector<ArgumentSpec>& args, const std::string& name) {
    for (const ArgumentSpec& a : args)
        if (a.name == name)
            return a;
    throw std::runtime_error("no argument " + name);
}

} // namespace

// The families added for every shape and FP8, each config's output compared with C computed here
// on the host in double from the same inputs (the worker's Random fills, recomputed), rounded to
// bf16 (the output type): the persistent TMA family (TILES) with both epilogues (STORE) at M, N
// and K that are no multiple of any tile, the FP8 GEMMs with their per-tensor scales, and the
// tensor-core GEMV at token counts that pad the mma's 8 and 16.
void TestCudaBackend::tensorCoreEdgesMatchTheHost_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("parameters"); // JSON object: name -> Values
    QTest::addColumn<QString>("shape");      // JSON object
    QTest::addColumn<int>("configs");
    QTest::newRow("bf16 TMA persistent, ragged M N K")
        << "kernels/hgemm/hgemm_bf16_bt.json"
        << R"({"ALGO": "[2]", "BLOCK_M": "[128]", "BLOCK_N": "[128, 256]", "BLOCK_K": "[64]", "WARPS_M": "[1]",
              "WARPS_N": "[1]", "STAGES": "[3]", "GROUP_M": "[8]", "STORE": "[0, 1]", "TILES": "[1, 4]"})"
        << R"({"M": 200, "N": 776, "K": 1000})" << 8;
    QTest::newRow("fp8 e4m3, ragged M N K")
        << "kernels/hgemm/hgemm_fp8.json"
        << R"({"ALGO": "[2]", "BLOCK_M": "[64, 128]", "BLOCK_N": "[128, 256]", "STAGES": "[3]", "GROUP_M": "[8]",
              "STORE": "[0, 1]", "TILES": "[1, 3]"})"
        << R"({"M": 200, "N": 776, "K": 1008})" << 16;
    QTest::newRow("fp8 e5m2")
        << "kernels/hgemm/hgemm_fp8_e5m2.json"
        << R"({"ALGO": "[2]", "BLOCK_M": "[128]", "BLOCK_N": "[256]", "STAGES": "[4]", "GROUP_M": "[1]",
              "STORE": "[0]", "TILES": "[1, 2]"})"
        << R"({"M": 256, "N": 512, "K": 512})" << 2;
    const char* gemvSpace = R"({"ALGO": "[1]", "WARPS": "[1, 4]", "ROWS": "[1, 2]", "UNROLL": "[1, 4]",
                                "MT": "[1, 2, 4, 8, 16]", "HINT": "[1]"})";
    QTest::newRow("gemv tensor cores, M = 3")
        << "kernels/gemv/gemv_bf16.json" << gemvSpace << R"({"M": 3, "K": 4096, "N": 1024})" << 8;
    QTest::newRow("gemv tensor cores, M = 11")
        << "kernels/gemv/gemv_bf16.json" << gemvSpace << R"({"M": 11, "K": 4096, "N": 1024})" << 8;
    // The bulk-copy family at M = 1 (kernels/gemv ALGO 2; its problem a fixture until it has run
    // on a GPU): rings of 2 to 8 stages over 4 chunks, persistent blocks (TILES) over a ragged
    // count of groups, fewer chunks than stages, and x's 32 KiB in one bulk copy.
    QTest::newRow("gemv bulk copies, M = 1")
        << "tests/data/cuda/gemv_bf16_bulk.json"
        << R"({"ALGO": "[2]", "WARPS": "[1, 4]", "ROWS": "[1, 2, 4]", "STAGES": "[2, 8]", "CHUNK": "[1024]",
              "TILES": "[1, 3]"})"
        << R"({"M": 1, "K": 4096, "N": 1000})" << 24;
    QTest::newRow("gemv bulk copies, one chunk")
        << "tests/data/cuda/gemv_bf16_bulk.json"
        << R"({"ALGO": "[2]", "WARPS": "[4]", "ROWS": "[1, 4]", "STAGES": "[3]", "CHUNK": "[1024]", "TILES": "[5]"})"
        << R"({"M": 1, "K": 1024, "N": 1000})" << 2;
    QTest::newRow("gemv bulk copies, K = 16384")
        << "tests/data/cuda/gemv_bf16_bulk.json"
        << R"({"ALGO": "[2]", "WARPS": "[8]", "ROWS": "[2]", "STAGES": "[2, 4]", "CHUNK": "[4096, 8192]",
              "TILES": "[4]"})"
        << R"({"M": 1, "K": 16384, "N": 512})" << 4;
}

void TestCudaBackend::tensorCoreEdgesMatchTheHost() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    if (m_arch != "sm_90")
        QSKIP("the TMA and FP8 families need sm_90");
    QFETCH(QString, file);
    QFETCH(QString, parameters);
    QFETCH(QString, shape);
    QFETCH(int, configs);
    const std::filesystem::path path = sourceDir() / file.toStdString();
    std::ifstream in(path);
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
    const nlohmann::ordered_json values = nlohmann::ordered_json::parse(parameters.toStdString());
    for (auto& p : doc["ConfigurationSpace"]["TuningParameters"])
        p["Values"] = values.at(p["Name"].get<std::string>());
    doc["Tilescope"]["Shapes"] = nlohmann::ordered_json::array({nlohmann::ordered_json::parse(shape.toStdString())});
    const bool gemv = file.contains("gemv");
    const std::string out = gemv ? "y" : "C";

    // C on the host, from the inputs the worker will make.
    std::vector<double> expected;
    {
        const TuningProblem first = TuningProblem::parse(doc.dump(), path.filename().string(), path.parent_path());
        const LaunchPlanner planner(first, 0);
        const std::vector<ArgumentSpec>& args = planner.arguments();
        const ArgumentSpec& a = argumentNamed(args, gemv ? "x" : "A");
        const ArgumentSpec& b = argumentNamed(args, gemv ? "W" : "B");
        const std::vector<float> av = decodeValues(a, initialContents(a, 0, path.parent_path()));
        const std::vector<float> bv = decodeValues(b, initialContents(b, 0, path.parent_path()));
        const nlohmann::ordered_json s = doc["Tilescope"]["Shapes"][0];
        const int M = s["M"], N = s["N"], K = s["K"];
        const double scale = file.contains("fp8") ? 0.5 * 0.25 : 1.0; // the problems' scaleA and scaleB
        expected.assign(static_cast<std::size_t>(M) * N, 0.0);
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
                double sum = 0;
                for (int k = 0; k < K; ++k)
                    sum += static_cast<double>(av[static_cast<std::size_t>(m) * K + k]) *
                           bv[static_cast<std::size_t>(n) * K + k];
                expected[static_cast<std::size_t>(m) * N + n] = sum * scale;
            }
    }
    double largest = 0;
    std::vector<unsigned char> bytes;
    for (double v : expected) {
        largest = std::max(largest, std::abs(v));
        const std::uint16_t bits = bfloat16FromFloat(static_cast<float>(v));
        bytes.push_back(static_cast<unsigned char>(bits & 0xff));
        bytes.push_back(static_cast<unsigned char>(bits >> 8));
    }
    const std::string refFile =
        m_dir.filePath(QStringLiteral("ref-%1.bin").arg(QTest::currentDataTag()).replace(' ', '_')).toStdString();
    {
        std::ofstream f(refFile, std::ios::binary);
        f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    // Two units in the last place of bf16 at the largest value: fp32 sums in another order,
    // rounded once, stay within one.
    const double tolerance = 2 * std::ldexp(1.0, static_cast<int>(std::floor(std::log2(largest))) - 7);
    doc["KernelSpecification"]["ReferenceArguments"] =
        nlohmann::ordered_json::array({{{"Name", out + "_ref"},
                                        {"TargetName", out},
                                        {"FillType", "BinaryRaw"},
                                        {"DataSource", refFile},
                                        {"ValidationMethod", "AbsoluteDifference"},
                                        {"ValidationThreshold", tolerance}}});

    const TuningProblem problem = TuningProblem::parse(doc.dump(), path.filename().string(), path.parent_path());
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    QCOMPARE(space.size(), std::uint64_t(configs));
    int ok = 0;
    for (const ResultRecord& r :
         exhaustiveSession(problem, QStringLiteral("edges-%1.db").arg(QTest::currentDataTag())).results) {
        qInfo("%s: %s %.4g ms %s", configJson(r.config).c_str(), std::string(statusName(r.status())).c_str(),
              r.timeMs(), r.measurement.message.c_str());
        ok += r.status() == ResultStatus::Ok ? 1 : 0;
    }
    qInfo("largest |C| %.4g, tolerance %.3g", largest, tolerance);
    QCOMPARE(ok, configs);
}

// kernels/attention against the host: the worker's Random fills of Q, K and V recomputed here,
// O = softmax(scale Q K^T) V in double (causal: key <= query), and each config's O (its outputs
// kept, as tune --outputs keeps them) compared element by element. The kernel rounds P to bf16
// before P V and O at the end: an element may differ by 2^-9 of sum_k p_k |v_k| / l (P's
// rounding, each term at most 2^-9 relative) plus 2^-9 of |O| (O's), doubled for the fp32 sums
// and exp2's approximation; a wrong fragment layout, a lost key block or a stale tile moves
// values by far more. The mma.sync family's space is the problem's at S = 256, each value of each
// parameter in some config; the wgmma family (ALGO 1, sm_90a only) has rows of its own at S = 384.
void TestCudaBackend::attentionMatchesTheHost_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("seqLen");
    QTest::addColumn<QString>("parameters"); // JSON object: name -> Values, in place of the problem's
    QTest::addColumn<int>("configs");
    const char* mma = R"({"ALGO": "[0]"})"; // mma.sync, any GPU from sm_80
    QTest::newRow("bf16, HEAD_DIM 128") << "kernels/attention/attention_bf16.json" << 128 << 256 << mma << 22;
    QTest::newRow("bf16 causal, HEAD_DIM 128")
        << "kernels/attention/attention_bf16_causal.json" << 128 << 256 << mma << 22;
    QTest::newRow("bf16, HEAD_DIM 64") << "kernels/attention/attention_bf16.json" << 64 << 256 << mma << 30;
    QTest::newRow("bf16 causal, HEAD_DIM 64")
        << "kernels/attention/attention_bf16_causal.json" << 64 << 256 << mma << 30;
    // BLOCK_M 64 and 128 (WARPS 4 and 8) by BLOCK_N 32, 64 and 128 by STAGES 1 and 2.
    const char* wgmma = R"({"ALGO": "[1]", "Q_REGS": "[0]"})";
    QTest::newRow("wgmma bf16, HEAD_DIM 128") << "kernels/attention/attention_bf16.json" << 128 << 384 << wgmma << 12;
    QTest::newRow("wgmma bf16 causal, HEAD_DIM 128")
        << "kernels/attention/attention_bf16_causal.json" << 128 << 384 << wgmma << 12;
    QTest::newRow("wgmma bf16, HEAD_DIM 64") << "kernels/attention/attention_bf16.json" << 64 << 384 << wgmma << 12;
    QTest::newRow("wgmma bf16 causal, HEAD_DIM 64")
        << "kernels/attention/attention_bf16_causal.json" << 64 << 384 << wgmma << 12;
}

void TestCudaBackend::attentionMatchesTheHost() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    QFETCH(QString, file);
    QFETCH(int, headDim);
    QFETCH(int, seqLen);
    QFETCH(QString, parameters);
    QFETCH(int, configs);
    const bool causal = file.contains(QStringLiteral("causal"));
    const std::filesystem::path path = sourceDir() / file.toStdString();
    std::ifstream in(path);
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(in);
    const nlohmann::ordered_json overrides = nlohmann::ordered_json::parse(parameters.toStdString());
    bool wgmma = false; // ALGO 1 in the space
    for (auto& p : doc["ConfigurationSpace"]["TuningParameters"]) {
        const std::string name = p["Name"].get<std::string>();
        if (overrides.contains(name))
            p["Values"] = overrides.at(name);
        if (name == "ALGO") {
            const nlohmann::json algos = nlohmann::json::parse(p["Values"].get<std::string>());
            wgmma = std::find(algos.begin(), algos.end(), 1) != algos.end();
        }
    }
    // The problems compile for sm_90a, which wgmma needs; the mma.sync family alone is compiled for
    // the GPU at hand.
    auto& options = doc["KernelSpecification"]["CompilerOptions"];
    for (auto it = options.begin(); it != options.end();)
        it = it->get<std::string>().rfind("--gpu-architecture=", 0) == 0 ? options.erase(it) : it + 1;
    if (wgmma) {
        if (m_arch != "sm_90")
            QSKIP("the wgmma family needs sm_90");
        options.push_back("--gpu-architecture=sm_90a");
    }
    constexpr int heads = 2; // B = 1
    const int S = seqLen;
    const int D = headDim;
    doc["Tilescope"]["Shapes"] = nlohmann::ordered_json::array({{{"B", 1}, {"H", heads}, {"S", S}, {"D", D}}});
    std::size_t outIndex = 0;
    auto& arguments = doc["KernelSpecification"]["Arguments"];
    for (std::size_t i = 0; i < arguments.size(); ++i) {
        if (arguments[i]["Name"] == "O") {
            arguments[i]["Output"] = true; // only O comes back
            outIndex = i;
        }
    }
    const TuningProblem problem = TuningProblem::parse(doc.dump(), path.filename().string(), path.parent_path());
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    QCOMPARE(space.size(), std::uint64_t(configs));

    // O on the host, and beside it sum_k p_k |v_k| / l, what P's rounding can move it by.
    const LaunchPlanner planner(problem, 0);
    const std::vector<ArgumentSpec>& args = planner.arguments();
    const std::vector<float> q =
        decodeValues(argumentNamed(args, "Q"), initialContents(argumentNamed(args, "Q"), 0, path.parent_path()));
    const std::vector<float> k =
        decodeValues(argumentNamed(args, "K"), initialContents(argumentNamed(args, "K"), 0, path.parent_path()));
    const std::vector<float> v =
        decodeValues(argumentNamed(args, "V"), initialContents(argumentNamed(args, "V"), 0, path.parent_path()));
    const double scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D))); // as the kernel gets it
    const std::size_t values = static_cast<std::size_t>(heads) * S * D;
    std::vector<double> expected(values, 0.0);
    std::vector<double> spread(values, 0.0);
    std::vector<double> p(S);
    for (int h = 0; h < heads; ++h) {
        const std::size_t head = static_cast<std::size_t>(h) * S * D;
        for (int i = 0; i < S; ++i) {
            const int keys = causal ? i + 1 : S;
            double top = -std::numeric_limits<double>::infinity();
            for (int j = 0; j < keys; ++j) {
                double dot = 0;
                for (int d = 0; d < D; ++d)
                    dot += static_cast<double>(q[head + static_cast<std::size_t>(i) * D + d]) *
                           k[head + static_cast<std::size_t>(j) * D + d];
                p[j] = dot * scale;
                top = std::max(top, p[j]);
            }
            double l = 0;
            for (int j = 0; j < keys; ++j) {
                p[j] = std::exp(p[j] - top);
                l += p[j];
            }
            for (int d = 0; d < D; ++d) {
                double sum = 0;
                double magnitude = 0;
                for (int j = 0; j < keys; ++j) {
                    const double x = v[head + static_cast<std::size_t>(j) * D + d];
                    sum += p[j] * x;
                    magnitude += p[j] * std::abs(x);
                }
                expected[head + static_cast<std::size_t>(i) * D + d] = sum / l;
                spread[head + static_cast<std::size_t>(i) * D + d] = magnitude / l;
            }
        }
    }

    const std::filesystem::path outputs =
        m_dir.filePath(QStringLiteral("attention-%1").arg(QTest::currentDataTag()).replace(' ', '_').replace(',', '_'))
            .toStdString();
    // each config's O kept, as its first launch left it
    const std::vector<ResultRecord> results =
        exhaustiveSession(problem, QStringLiteral("attention-%1.db").arg(QTest::currentDataTag()), outputs).results;
    QCOMPARE(results.size(), std::size_t(configs));
    std::map<std::string, std::set<std::int64_t>> seen; // parameter -> values among the configs run
    for (const ResultRecord& r : results) {
        const std::string what = configJson(r.config);
        qInfo("%s: %s %.4g ms %s", what.c_str(), std::string(statusName(r.status())).c_str(), r.timeMs(),
              r.measurement.message.c_str());
        QVERIFY2(r.status() == ResultStatus::Ok, (what + ": " + r.measurement.message).c_str());
        std::string key;
        for (std::size_t i = 0; i < problem.parameters.size(); ++i) {
            const ConfigValue* value = r.config.find(problem.parameters[i].name);
            QVERIFY(value && value->isInt());
            seen[problem.parameters[i].name].insert(value->asInt());
            key += (i ? "," : "") + std::to_string(value->asInt());
        }
        std::ifstream got(outputs / key / (std::to_string(outIndex) + ".bin"), std::ios::binary);
        std::vector<unsigned char> bytes(values * 2);
        got.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        QCOMPARE(std::size_t(got.gcount()), bytes.size());
        const std::vector<float> o = decodeValues(argumentNamed(args, "O"), bytes);
        std::size_t wrong = 0;
        std::size_t first = 0;
        double worst = 0; // the largest error in units of its element's bound
        for (std::size_t e = 0; e < values; ++e) {
            const double bound = 2 * std::ldexp(spread[e] + std::abs(expected[e]), -9) + 1e-6;
            const double error = std::abs(static_cast<double>(o[e]) - expected[e]);
            if (!(error <= bound) && wrong++ == 0)
                first = e;
            worst = std::max(worst, error / bound);
        }
        const std::size_t row = first / static_cast<std::size_t>(D);
        QVERIFY2(wrong == 0,
                 qPrintable(QStringLiteral("%1: %2 of %3 values off, the first O[head %4][row %5][%6] = %7, "
                                           "expected %8")
                                .arg(QString::fromStdString(what))
                                .arg(wrong)
                                .arg(values)
                                .arg(row / S)
                                .arg(row % S)
                                .arg(first % static_cast<std::size_t>(D))
                                .arg(static_cast<double>(o[first]))
                                .arg(expected[first])));
        qInfo("  the largest error is %.2f of its bound", worst);
    }
    // The configs between them use every value of every parameter the space has.
    for (const TuningParameter& parameter : problem.parameters) {
        if (parameter.name == "HEAD_DIM")
            continue;
        QCOMPARE(seen[parameter.name].size(), parameter.values.size());
    }
}

void TestCudaBackend::faultsAreIsolated() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const TuningProblem problem = TuningProblem::load(sourceDir() / "tests/data/cuda/faults.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const int mode = problem.parameterIndex("MODE");
    QVERIFY(mode >= 0);

    const std::string db = (std::filesystem::path(m_dir.path().toStdString()) / "faults.db").string();
    ResultStore store = ResultStore::open(db, StoreMode::ReadWrite);
    CudaBackendOptions options = m_options;
    CudaBackend backend(options);
    SessionOptions session;
    session.backendLabel = "cuda:0";
    session.perConfigSeconds = 8; // the watchdog for the hanging configs
    TuningSession tuning(problem, backend, store, session, {}, m_compiler.get());
    const SessionSummary summary = tuning.run();
    qInfo("faults: %llu configs, %d worker restarts", static_cast<unsigned long long>(summary.progress.done),
          backend.restarts());

    const std::vector<ResultRecord> results = store.results(summary.session.id);
    QCOMPARE(results.size(), static_cast<std::size_t>(space.size()));
    const std::map<std::int64_t, ResultStatus> expected = {
        {0, ResultStatus::Ok},          {1, ResultStatus::Crashed}, {2, ResultStatus::Timeout},
        {3, ResultStatus::WrongResult}, {4, ResultStatus::Crashed},
    };
    std::map<std::int64_t, int> seen;
    for (const ResultRecord& r : results) {
        const std::int64_t m = r.config.at("MODE").asInt();
        ++seen[m];
        qInfo("%s: %s %s", configJson(r.config).c_str(), std::string(statusName(r.status())).c_str(),
              r.measurement.message.c_str());
        QVERIFY2(r.status() == expected.at(m), configJson(r.config).c_str());
        if (m == 3)
            QVERIFY(r.measurement.verificationError.has_value() && *r.measurement.verificationError > 0);
    }
    QCOMPARE(seen.size(), expected.size());
}

void TestCudaBackend::workersTakeConfigsFromTheFeed() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    // The backend as the session drives it, counted: how many measure() calls, how many configs
    // each was given, how many it measured beyond those (taken from the session's feed).
    struct Counting : Backend {
        Backend& inner;
        int calls = 0;
        std::size_t given = 0;
        std::size_t reported = 0;
        std::size_t fed = 0;
        explicit Counting(Backend& b)
            : inner(b) {}
        BackendInfo open(const TuningProblem& problem, std::size_t shape, const ConfigSpace& space) override {
            return inner.open(problem, shape, space);
        }
        void measure(std::span<const MeasureItem> items, const MeasureControl& control,
                     const MeasureSink& sink) override {
            ++calls;
            given += items.size();
            inner.measure(items, control, [&](std::size_t item, Measurement m) {
                ++reported;
                fed += item >= items.size() ? 1 : 0;
                sink(item, std::move(m));
            });
        }
        void close() override { inner.close(); }
    };
    const TuningProblem problem = TuningProblem::load(sourceDir() / "kernels/copy/copy.json");
    const std::string db = (std::filesystem::path(m_dir.path().toStdString()) / "feed.db").string();
    ResultStore store = ResultStore::open(db, StoreMode::ReadWrite);
    CudaBackendOptions options = m_options;
    options.timing.maxSeconds = 0.02;
    options.timing.minSamples = 5;
    CudaBackend cuda(options);
    Counting backend(cuda);
    SessionOptions session;
    session.backendLabel = "cuda:0";
    session.strategy = "random";
    session.seed = 3;
    session.budget.configs = 40;
    session.confirmTop = 0;
    TuningSession tuning(problem, backend, store, session, {}, m_compiler.get());
    const SessionSummary summary = tuning.run();
    qInfo("40 configs in %d measure() calls: %zu given, %zu taken from the feed", backend.calls, backend.given,
          backend.fed);
    QCOMPARE(store.results(summary.session.id).size(), std::size_t(40));
    QCOMPARE(backend.reported, std::size_t(40));
    QCOMPARE(backend.given + backend.fed, std::size_t(40));
    // In batches of 2 (one worker) it would take 20 calls and none from the feed.
    QVERIFY2(backend.fed >= 20, qPrintable(QString::number(backend.fed)));
    QVERIFY2(backend.calls <= 10, qPrintable(QString::number(backend.calls)));
}

void TestCudaBackend::executedInstructionsByLine() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    std::string why;
    const std::filesystem::path nvdisasm = findNvdisasm(&why);
    QVERIFY2(!nvdisasm.empty(), why.c_str());
    const TuningProblem problem = TuningProblem::load(sourceDir() / "tests/data/sass/spill.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    QCOMPARE(space.size(), std::uint64_t(2)); // block_size_x 64 and 128
    const RequestBuilder builder(problem);
    std::vector<CompileRequest> requests;
    for (std::uint64_t i = 0; i < space.size(); ++i)
        requests.push_back(builder.request(space.at(i), m_arch));
    const std::vector<CompileResult> compiled = m_compiler->compileAll(requests);
    for (const CompileResult& c : compiled)
        QVERIFY2(c.ok() && c.info.spills(), c.log.c_str());

    CudaBackendOptions options = m_options;
    options.executedCounts = true;
    options.metrics = defaultMetricNames();
    options.verify = false;
    CudaBackend backend(options);
    backend.open(problem, 0, space);
    std::vector<MeasureItem> items;
    for (std::uint64_t i = 0; i < space.size(); ++i)
        items.push_back(MeasureItem{i, space.at(i), {{m_arch, &compiled[i]}}});
    std::map<std::size_t, Measurement> results;
    backend.measure(items, MeasureControl{}, [&](std::size_t item, Measurement m) { results[item] = std::move(m); });
    backend.close();
    QCOMPARE(results.size(), items.size());

    const std::uint64_t warps = 65536 / 32; // the problem size over the warp, whatever the block
    const std::uint64_t k = 4;              // the loop's trip count (the scalar k)
    for (std::size_t i = 0; i < items.size(); ++i) {
        const Measurement& m = results.at(i);
        const std::string what = space.describe(items[i].config);
        QVERIFY2(m.status == ResultStatus::Ok, (what + ": " + m.message).c_str());
        QVERIFY2(!m.executed.empty(), (what + ": no executed counts").c_str());
        // The range profiler's pass ran before the SASS pass of this config and after the last one's.
        QVERIFY2(metricOf(m, "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum") > 0, what.c_str());

        const Disassembly d = disassemble(compiled[i].cubin, nvdisasm);
        QVERIFY2(d.ok, d.error.c_str());
        const SassFunction* f = findFunction(d, compiled[i].entryName);
        QVERIFY(f);
        LineCounts counts = countByLine(*f);
        QCOMPARE(addExecuted(counts, *f, m.executed), std::size_t(0));
        for (const InstructionCount& c : m.executed)
            QVERIFY2(c.executed % warps == 0,
                     (what + ": offset " + std::to_string(c.offset) + " ran " + std::to_string(c.executed) + " times")
                         .c_str());
        // The first instruction runs once per warp.
        QCOMPARE(m.executed.front().offset, std::uint32_t(0));
        QCOMPARE(m.executed.front().executed, warps);
        // An nvdisasm that does not mark spills (13.0's) counts them with the local array's traffic.
        auto executedLocal = [&](const auto& x) {
            return f->spillsMarked ? x.executedSpills()
                                   : x.executedSpills() + x.executedLocalStores + x.executedLocalLoads;
        };
        std::uint64_t loopSpills = 0, loopStatic = 0;
        for (const SourceLine& l : counts.lines) {
            qInfo("%s  spill.cu:%d  static spills %d, local %d; executed %llu spills, %llu local, %llu instructions",
                  what.c_str(), l.line, l.spills(), l.localStores + l.localLoads,
                  static_cast<unsigned long long>(l.executedSpills()),
                  static_cast<unsigned long long>(l.executedLocalStores + l.executedLocalLoads),
                  static_cast<unsigned long long>(l.executedInstructions));
            if (l.line == 15) {
                loopSpills = executedLocal(l);
                loopStatic = static_cast<std::uint64_t>(f->spillsMarked ? l.spills() : l.localTraffic());
            }
            // Line 8 is straight code before the loop: each of its local instructions ran once per warp.
            if (l.line == 8)
                QCOMPARE(executedLocal(l),
                         warps * static_cast<std::uint64_t>(f->spillsMarked ? l.spills() : l.localTraffic()));
        }
        QVERIFY(executedLocal(counts) > 0);
        // Line 15 is the loop body (k = 4 trips): its spills ran more than once per warp each.
        QVERIFY2(loopStatic > 0 && loopSpills > loopStatic * warps, what.c_str());
        QVERIFY2(loopSpills <= loopStatic * warps * k, what.c_str());
    }
}

// --metrics energy-check on kernels/sgemm at 2048³: the energy counter's joules per launch agree
// within 10 % with NVML's power readings sampled through another loop times its time per launch;
// the interval holds the figure; the counter steps every few hundred ms at most.
void TestCudaBackend::energyAgreesWithSampledPower() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const TuningProblem problem = TuningProblem::load(sourceDir() / "kernels/sgemm/sgemm.json");
    const ConfigSpace space = ConfigSpace::build(problem, 1);
    const RequestBuilder builder(problem);
    std::vector<CompileRequest> requests;
    const std::vector<std::uint64_t> sample = space.sample(2, 3);
    for (std::uint64_t index : sample)
        requests.push_back(builder.request(space.at(index), m_arch));
    const std::vector<CompileResult> compiled = m_compiler->compileAll(requests);
    CudaBackendOptions options = m_options;
    options.metrics = {"energy-check"};
    CudaBackend backend(options);
    backend.open(problem, 1, space);
    std::vector<MeasureItem> items;
    for (std::size_t i = 0; i < sample.size(); ++i)
        if (compiled[i].ok())
            items.push_back(MeasureItem{sample[i], space.at(sample[i]), {{m_arch, &compiled[i]}}});
    QVERIFY(!items.empty());
    std::map<std::size_t, Measurement> results;
    backend.measure(items, MeasureControl{}, [&](std::size_t item, Measurement m) { results[item] = std::move(m); });
    backend.close();
    for (const auto& [item, m] : results) {
        const std::string what = space.describe(items[item].config);
        QVERIFY2(m.status == ResultStatus::Ok, (what + ": " + m.message).c_str());
        const double joules = metricOf(m, kEnergyMetric);
        const double sampled = metricOf(m, kEnergySampledMetric);
        const double low = metricOf(m, kEnergyLowMetric), high = metricOf(m, kEnergyHighMetric);
        const double watts = metricOf(m, kPowerMetric), period = metricOf(m, kEnergyCounterMetric);
        qInfo("%s: %.3f ms, %.4f J [%.4f, %.4f] at %.0f W; sampled %.4f J at %.0f W; counter every %.0f ms",
              what.c_str(), m.time.medianMs, joules, low, high, watts, sampled, metricOf(m, kPowerSampledMetric),
              period);
        QVERIFY2(joules > 0 && sampled > 0, what.c_str());
        QVERIFY2(std::abs(joules / sampled - 1) < 0.10, what.c_str());
        QVERIFY(low <= joules && joules <= high);
        QVERIFY(watts > 50 && watts < 2000);
        QVERIFY(period > 0 && period < 1000);
    }
}

QTEST_GUILESS_MAIN(TestCudaBackend)
#include "tst_cudabackend.moc"
