// On a GPU: reads past a buffer's end, caught (tests/data/cuda/overrun.json, whose kernel reads its
// input as deep as a header's LENGTH, 1,048,576 elements, while the problem declares it with
// Size 1).
//
// - The worker places guarded buffers so that each ends at its reservation's unmapped guard (to
//   within the 256-byte alignment of its start); without the guard asked for, ordinary ones.
// - A tuning session with the default guard (the reference run guarded): every config faults in
//   its guarded reference run, and the message names the arguments and their sizes, 'in' 1
//   element (4 B) among them.
// - With the backend's sanitize option (tune --sanitize): the first config runs under
//   compute-sanitizer, and its message gives the kernel's line (overrun.cu:LINE) and the buffer
//   'in'. Skipped where compute-sanitizer is not installed.
// - The same problem with its input sized right, every config on guarded buffers (tune --guard):
//   every config runs and is verified, at times close to those on ordinary buffers.

#include "workerprocess.h"

#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "measure/cuda/cudabackend.h"
#include "measure/cuda/memorycheck.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/tuningsession.h"

#include "gpudevice.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace tilescope;

namespace {

std::filesystem::path dataDir() {
    return std::filesystem::path(TILESCOPE_SOURCE_DIR) / "tests/data/cuda";
}

std::string readText(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The line of overrun.cu that reads `in`, as compute-sanitizer should name it.
std::string readLine() {
    std::istringstream source(readText(dataDir() / "overrun.cu"));
    std::string line;
    for (int number = 1; std::getline(source, line); ++number) {
        if (line.find("= 2.0f * in[i]") != std::string::npos)
            return "overrun.cu:" + std::to_string(number);
    }
    return "overrun.cu:?";
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

class TestGuarded : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void workerPlacesGuardedBuffers();
    void guardedReferenceRunFaults();
    void sanitizeGivesTheLine();
    void correctProblemTunesGuarded();

private:
    std::vector<ResultRecord> tune(const TuningProblem& problem, const CudaBackendOptions& options,
                                   const std::string& name);

    QString m_skip;
    CudaBackendOptions m_options;
    std::unique_ptr<CompileService> m_compiler;
    QTemporaryDir m_dir;
};

void TestGuarded::initTestCase() {
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

std::vector<ResultRecord> TestGuarded::tune(const TuningProblem& problem, const CudaBackendOptions& options,
                                            const std::string& name) {
    const std::string db = (std::filesystem::path(m_dir.path().toStdString()) / (name + ".db")).string();
    ResultStore store = ResultStore::open(db, StoreMode::ReadWrite);
    CudaBackend backend(options);
    SessionOptions session;
    session.backendLabel = "cuda:0";
    session.stopOnSystematicFailure = false; // every config of the broken problem fails alike: see them all
    TuningSession tuning(problem, backend, store, session, {}, m_compiler.get());
    const SessionSummary summary = tuning.run();
    std::vector<ResultRecord> results = store.results(summary.session.id);
    for (const ResultRecord& r : results)
        qInfo("%s %s: %s %.4g ms %s", name.c_str(), configJson(r.config).c_str(),
              std::string(statusName(r.status())).c_str(), r.timeMs(), r.measurement.message.c_str());
    return results;
}

void TestGuarded::workerPlacesGuardedBuffers() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const TuningProblem problem = TuningProblem::load(dataDir() / "overrun.json");
    for (const bool guard : {true, false}) {
        Worker w;
        QVERIFY(w.start(0));
        worker::Hello hello;
        QVERIFY2(w.hello(hello), "no hello from the worker");
        QVERIFY2(hello.ok, hello.error.c_str());
        worker::Open open;
        open.problemText = problem.toJson();
        open.problemName = problem.fileName;
        open.baseDir = problem.baseDir.string();
        open.guard = guard;
        QVERIFY(worker::writeFrame(w.requests, worker::encode(open)));
        worker::Frame frame;
        QVERIFY(worker::readFrame(w.replies, frame, 120000) == worker::ReadStatus::Ok);
        const worker::Opened opened = worker::decodeOpened(frame);
        QVERIFY2(opened.ok, opened.error.c_str());
        if (!opened.note.empty())
            qInfo("note: %s", opened.note.c_str());
        QCOMPARE(opened.buffers.size(), std::size_t(2));
        QCOMPARE(opened.buffers[0].name, std::string("out"));
        QCOMPARE(opened.buffers[0].bytes, std::int64_t(4) << 20);
        QCOMPARE(opened.buffers[1].name, std::string("in"));
        QCOMPARE(opened.buffers[1].bytes, std::int64_t(4));
        for (const worker::BufferExtent& b : opened.buffers) {
            qInfo("guard %d: %s at 0x%llx, %s", guard, b.name.c_str(), static_cast<unsigned long long>(b.address),
                  b.guarded ? "guarded" : "ordinary");
            QCOMPARE(b.address % 256, std::uint64_t(0));
            if (guard && opened.note.empty()) {
                QVERIFY(b.guarded);
                // The end, rounded up to the start's alignment, is where the mapped memory ends:
                // a multiple of the allocation granularity (64 KiB at the least).
                const std::uint64_t end = (b.address + static_cast<std::uint64_t>(b.bytes) + 255) / 256 * 256;
                QCOMPARE(end % (64 << 10), std::uint64_t(0));
            } else {
                QVERIFY(!b.guarded);
            }
        }
        QVERIFY(worker::writeFrame(w.requests, worker::encodeShutdown()));
        QCOMPARE(w.waitExit(30000), 0);
    }
}

void TestGuarded::guardedReferenceRunFaults() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    const TuningProblem problem = TuningProblem::load(dataDir() / "overrun.json");
    const std::vector<ResultRecord> results = tune(problem, m_options, "overrun");
    QCOMPARE(results.size(), std::size_t(3));
    for (const ResultRecord& r : results) {
        const std::string& m = r.measurement.message;
        QVERIFY2(r.status() == ResultStatus::Crashed, m.c_str());
        for (const char* phrase :
             {"illegal memory access in a guarded run", "past the end of a buffer", "'in' 1 element (4 B)",
              "'out' 1,048,576 elements (4 MiB)", "CUDA_ERROR_ILLEGAL_ADDRESS"})
            QVERIFY2(contains(m, phrase), (std::string(phrase) + " not in: " + m).c_str());
    }
}

void TestGuarded::sanitizeGivesTheLine() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    std::string why;
    if (findComputeSanitizer(&why).empty())
        QSKIP(qPrintable(QString::fromStdString(why)));
    const TuningProblem problem = TuningProblem::load(dataDir() / "overrun.json");
    CudaBackendOptions options = m_options;
    options.sanitize = true;
    const std::vector<ResultRecord> results = tune(problem, options, "overrun-sanitized");
    QCOMPARE(results.size(), std::size_t(3));
    const std::string line = readLine();
    int sanitized = 0;
    for (const ResultRecord& r : results) {
        const std::string& m = r.measurement.message;
        QVERIFY2(r.status() == ResultStatus::Crashed, m.c_str());
        if (m.rfind("compute-sanitizer (memcheck): ", 0) != 0)
            continue;
        ++sanitized;
        for (const std::string& phrase :
             {std::string("Invalid __global__ read of size 4 bytes"), " at " + line, std::string("overrun"),
              std::string("the address is"), std::string("'in' 1 element (4 B)")})
            QVERIFY2(contains(m, phrase), (phrase + " not in: " + m).c_str());
    }
    // Once: the first config; the others fault in their guarded reference runs.
    QCOMPARE(sanitized, 1);
}

void TestGuarded::correctProblemTunesGuarded() {
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(m_skip));
    nlohmann::json j = nlohmann::json::parse(readText(dataDir() / "overrun.json"));
    for (nlohmann::json& a : j["KernelSpecification"]["Arguments"]) {
        if (a["Name"] == "in")
            a["Size"] = "N";
    }
    const TuningProblem problem =
        TuningProblem::parse(j.dump(), (dataDir() / "overrun-sized.json").string(), dataDir());

    CudaBackendOptions guarded = m_options;
    guarded.guard = GuardPolicy::Every;
    CudaBackendOptions ordinary = m_options;
    ordinary.guard = GuardPolicy::Off;
    double best[2] = {0, 0};
    int k = 0;
    for (const CudaBackendOptions* options : {&guarded, &ordinary}) {
        const std::vector<ResultRecord> results = tune(problem, *options, k == 0 ? "sized-guarded" : "sized-ordinary");
        QCOMPARE(results.size(), std::size_t(3));
        for (const ResultRecord& r : results) {
            const std::string& m = r.measurement.message;
            QVERIFY2(r.status() == ResultStatus::Ok, m.c_str());
            QVERIFY2(!contains(m, "not verified"), m.c_str());
            QVERIFY(r.measurement.verificationError.has_value());
            // 4 MiB read and 4 MiB written: microseconds on any GPU of this decade.
            QVERIFY2(r.timeMs() > 0 && r.timeMs() < 1.0, qPrintable(QString::number(r.timeMs())));
            best[k] = best[k] == 0 ? r.timeMs() : std::min(best[k], r.timeMs());
        }
        ++k;
    }
    qInfo("best: %.4g ms on guarded buffers, %.4g ms on ordinary ones", best[0], best[1]);
    // Where a buffer lies does not change what the kernel costs by much.
    QVERIFY2(best[0] < 2 * best[1] && best[1] < 2 * best[0], "guarded and ordinary timings differ by 2x or more");
}

QTEST_GUILESS_MAIN(TestGuarded)
#include "tst_guarded.moc"
