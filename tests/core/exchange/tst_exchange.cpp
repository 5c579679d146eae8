// Exchange formats: Kernel Tuner caches and T4 in (with their damage), and every export usable:
// T4 imports back to the same results, the C++ header compiles and looks up the right configs,
// the Triton snippet parses as Python, the JSON cache round-trips, CSV quotes what it must.

#include "base/error.h"
#include "exchange/bestconfigs.h"
#include "exchange/cppheader.h"
#include "exchange/csv.h"
#include "exchange/detection.h"
#include "exchange/exportformat.h"
#include "exchange/kerneltunercache.h"
#include "exchange/recording.h"
#include "exchange/t4.h"
#include "exchange/triton.h"
#include "model/configjson.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"

#include "testprograms.h"

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QTemporaryDir>

#include <QtTest>
#include <zlib.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <optional>
#include <set>

using namespace tilescope;
using Json = nlohmann::ordered_json;

namespace {

const std::string kCache = TILESCOPE_TEST_DATA "/tuning/tiny_ktcache.json";
const std::string kT4 = TILESCOPE_TEST_DATA "/tuning/tiny_t4.json";

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

template <typename F>
std::string inputErrorOf(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

// A session with every kind of field set, two shapes' worth of them when `shape` differs.
SessionData syntheticSession(std::int64_t id, std::int64_t m, const std::string& device, double scale) {
    SessionData d;
    SessionInfo& s = d.info;
    s.id = id;
    s.kernel = "matmul";
    s.shapeIndex = 0;
    s.shape = {{"M", m}, {"N", 1024}};
    s.problemSize = {1024, m};
    s.parameters = {"BLOCK_M", "num_warps", "STAGES", "SPLIT", "LAYOUT", "RATIO"};
    s.backend = "cuda";
    s.strategy = "random";
    s.seed = 9;
    s.deviceName = device;
    s.arch = "sm_90";
    s.objectiveName = "TFLOP/s";
    s.spaceSize = 12;
    s.state = SessionState::Finished;
    s.startedAt = "2026-11-29T10:00:00.000Z";
    s.endedAt = "2026-11-29T10:05:00.000Z";
    s.provenanceJson = "{\"driver\":\"580.1\"}";
    const ResultStatus statuses[] = {ResultStatus::Ok,          ResultStatus::Ok,      ResultStatus::CompileError,
                                     ResultStatus::Ok,          ResultStatus::Crashed, ResultStatus::WrongResult,
                                     ResultStatus::Ok,          ResultStatus::Timeout, ResultStatus::Pruned,
                                     ResultStatus::LaunchError, ResultStatus::Ok,      ResultStatus::Skipped};
    for (int i = 0; i < 12; ++i) {
        ResultRecord r;
        r.id = id * 100 + i;
        r.spaceIndex = static_cast<std::uint64_t>(i);
        r.config["BLOCK_M"] = 16 << (i % 4);
        r.config["num_warps"] = 1 << (i % 3);
        r.config["STAGES"] = 1 + i % 2;
        r.config["SPLIT"] = i % 2 == 0;
        r.config["LAYOUT"] = i % 3 ? "row" : "col\"umn";
        r.config["RATIO"] = 0.25 * (i + 1);
        Measurement& mm = r.measurement;
        mm.status = statuses[i];
        if (mm.status == ResultStatus::Ok || mm.status == ResultStatus::WrongResult) {
            const double t = scale * (1.0 + 0.37 * ((i * 5) % 7));
            mm.time = {t, t * 0.98, t * 1.05, t * 0.012, 25, t * 0.995, t * 1.004}; // with the median's interval
            r.objective = 2.0 * m * 1024 * 512 / (t * 1e-3) / 1e12;
            mm.metrics = {{"dram__bytes_read.sum", 1.5e8 + i},
                          {"sm__warps_active.avg.pct_of_peak_sustained_active", 40.0 + i}};
        }
        if (mm.status == ResultStatus::WrongResult)
            mm.verificationError = 0.5;
        if (mm.status != ResultStatus::Ok)
            mm.message = "failed, \"badly\"\nsee log";
        if (mm.status == ResultStatus::CompileError)
            r.log = "k.cu(3): error: expected a ';'";
        mm.compileSeconds = 0.1 + 0.01 * i;
        mm.benchmarkSeconds = 0.02 * i;
        mm.device = 0;
        if (mm.status != ResultStatus::CompileError && mm.status != ResultStatus::Skipped) {
            StaticInfo info;
            info.registers = 40 + i;
            info.barriers = 1;
            info.stackFrame = 8 * i;
            info.spillStores = i;
            info.spillLoads = i;
            info.sharedStatic = 1024 * i;
            info.constantBytes = 400;
            mm.staticInfo = info;
            r.blockSize = 128;
            r.sharedDynamic = 0;
            r.occupancy = 50.0;
        }
        r.recordedAt = "2026-11-29T10:01:0" + std::to_string(i % 10) + ".000Z";
        d.results.push_back(r);
    }
    return d;
}

void compareResults(const std::vector<ResultRecord>& got, const std::vector<ResultRecord>& want) {
    QCOMPARE(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const ResultRecord& a = got[i];
        const ResultRecord& b = want[i];
        QCOMPARE(configJson(a.config), configJson(b.config));
        QCOMPARE(a.spaceIndex, b.spaceIndex);
        QVERIFY2(a.measurement == b.measurement, describeConfig(a.config).c_str());
        QCOMPARE(a.objective, b.objective);
        QCOMPARE(a.blockSize, b.blockSize);
        QCOMPARE(a.sharedDynamic, b.sharedDynamic);
        QCOMPARE(a.occupancy, b.occupancy);
        QCOMPARE(a.log, b.log);
        QCOMPARE(a.recordedAt, b.recordedAt);
    }
}

// `text` in a file that lives as long as the test run.
std::string writeTemp(const std::string& text) {
    static QTemporaryDir dir;
    static int n = 0;
    const std::string path = dir.filePath(QString("f%1.json").arg(++n)).toStdString();
    writeFile(path, text);
    return path;
}

} // namespace

class TestExchange : public QObject {
    Q_OBJECT

private slots:
    void kernelTunerCache() {
        const SessionData d = parseKernelTunerCache(readFile(kCache), kCache);
        QCOMPARE(d.info.kernel, std::string("scale"));
        QCOMPARE(d.info.deviceName, std::string("NVIDIA H200"));
        QVERIFY(d.info.problemSize == std::vector<std::int64_t>{1048576});
        QVERIFY((d.info.parameters == std::vector<std::string>{"BLOCK", "ITEMS", "NUM_WARPS", "NUM_STAGES"}));
        QCOMPARE(d.info.objectiveName, std::string()); // Kernel Tuner's objective is time
        QCOMPARE(d.results.size(), std::size_t(260));
        std::map<ResultStatus, int> counts;
        for (const ResultRecord& r : d.results)
            ++counts[r.status()];
        QCOMPARE(counts[ResultStatus::Ok], 202);
        QCOMPARE(counts[ResultStatus::CompileError], 28);
        QCOMPARE(counts[ResultStatus::Pruned], 28);
        QCOMPARE(counts[ResultStatus::LaunchError], 2);
        const ResultRecord& first = d.results.front(); // "32,1,1,1"
        QCOMPARE(configJson(first.config), std::string("{\"BLOCK\":32,\"ITEMS\":1,\"NUM_WARPS\":1,\"NUM_STAGES\":1}"));
        QCOMPARE(first.measurement.time.medianMs, 0.009331); // Kernel Tuner's time, in ms
        QCOMPARE(first.measurement.time.samples, 3);
        QCOMPARE(first.measurement.time.minMs, 0.00932);
        QCOMPARE(first.measurement.time.maxMs, 0.009345);
        QCOMPARE(first.measurement.compileSeconds, 0.20476); // ms in the file
        QCOMPARE(first.measurement.benchmarkSeconds, 0.010839);
        QCOMPARE(first.measurement.metrics.size(), std::size_t(1));
        QCOMPARE(first.measurement.metrics[0].name, std::string("GB/s"));
        QVERIFY(first.recordedAt.find("2026-11-20") == 0);
        QCOMPARE(detectRecordingFormat(kCache), RecordingFormat::KernelTunerCache);
    }

    void kernelTunerCacheWithImpossibleLaunches() {
        // Kernel Tuner 1.5 recorded 7-16 us for launches of 255 registers x 448 threads, more
        // than a block's 65,536 registers: they could not have run. Imported, they are implausible
        // and never the best; the problem's sizes are not known, so no time floor is checked.
        Json doc = Json::parse(R"({"schema_version": "1.1.0", "device_name": "NVIDIA H200",
            "kernel_name": "convolution_kernel", "problem_size": [4096, 4096],
            "tune_params_keys": ["block_size_x", "tile_size_x"],
            "tune_params": {"block_size_x": [128, 256, 448], "tile_size_x": [1, 2]}, "objective": "time",
            "cache": {
              "448,2": {"block_size_x": 448, "tile_size_x": 2, "time": 0.0071, "times": [0.0071], "num_regs": 255},
              "256,2": {"block_size_x": 256, "tile_size_x": 2, "time": 0.302, "times": [0.302], "num_regs": 255},
              "128,1": {"block_size_x": 128, "tile_size_x": 1, "time": 0.284, "times": [0.284]}}})");
        const SessionData d = parseKernelTunerCache(doc.dump(), "conv.json");
        QCOMPARE(d.results.size(), std::size_t(3));
        const ResultRecord& impossible = d.results[0];
        QCOMPARE(impossible.status(), ResultStatus::Implausible);
        QCOMPARE(impossible.timeMs(), 0.0071);
        QCOMPARE(impossible.measurement.message,
                 std::string("255 registers x 448 threads = 114,240 registers, more than the 65,536 a thread block "
                             "may hold: the launch could not have run, whatever time was recorded"));
        QCOMPARE(d.results[1].status(), ResultStatus::Ok);
        QCOMPARE(d.results[2].status(), ResultStatus::Ok);
        QVERIFY2(d.info.message.find("1 of 3 timed results are implausible") == 0 &&
                     d.info.message.find("times are not checked against a floor: the problem's sizes are not known") !=
                         std::string::npos,
                 d.info.message.c_str());
        const std::vector<BestConfig> best = bestConfigs({d});
        QCOMPARE(best.size(), std::size_t(1));
        QCOMPARE(best[0].timeMs, 0.284);
        // Exported, it is no time Kernel Tuner's simulation mode would take, and it reads back the same.
        const std::string cache = writeKernelTunerCache(d);
        QVERIFY(Json::parse(cache)["cache"]["448,2"]["time"] == "RuntimeFailedConfig");
        const SessionData back = parseKernelTunerCache(cache, "back.json");
        QCOMPARE(back.results[0].status(), ResultStatus::Implausible);
        QCOMPARE(back.results[0].measurement.message, impossible.measurement.message);
        const Json t4 = Json::parse(writeT4(d));
        QCOMPARE(t4["results"][0]["invalidity"], Json("correctness"));
        QCOMPARE(parseT4(t4.dump(), "back.json").results[0].status(), ResultStatus::Implausible);
    }

    void energyUnderKernelTunersNames() {
        // Kernel Tuner's NVML observer's nvml_energy and nvml_power read as energy and power, and
        // are written back under Kernel Tuner's names.
        Json doc = Json::parse(R"({"schema_version": "1.1.0", "device_name": "NVIDIA H200",
            "kernel_name": "vector_add", "problem_size": [1000000],
            "tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": [128, 256]}, "objective": "time",
            "cache": {
              "128": {"block_size_x": 128, "time": 0.05, "times": [0.05], "nvml_energy": 0.021, "nvml_power": 412.5},
              "256": {"block_size_x": 256, "time": 0.04, "times": [0.04], "nvml_energy": 0.018, "nvml_power": 450.0}}})");
        const SessionData d = parseKernelTunerCache(doc.dump(), "energy.json");
        QCOMPARE(d.results.size(), std::size_t(2));
        const std::vector<Metric>& metrics = d.results[0].measurement.metrics;
        QCOMPARE(metrics.size(), std::size_t(2));
        QCOMPARE(metrics[0].name, std::string(kEnergyMetric));
        QCOMPARE(metrics[0].value, 0.021);
        QCOMPARE(metrics[1].name, std::string(kPowerMetric));
        QCOMPARE(metrics[1].value, 412.5);
        const Json back = Json::parse(writeKernelTunerCache(d));
        QCOMPARE(back["cache"]["256"]["nvml_energy"].get<double>(), 0.018);
        QCOMPARE(back["cache"]["256"]["nvml_power"].get<double>(), 450.0);
        QVERIFY(!back["cache"]["256"].contains("energy"));
        QCOMPARE(parseKernelTunerCache(back.dump(), "back.json").results[1].measurement.metrics,
                 d.results[1].measurement.metrics);

        // Every export of the best config carries its energy beside its time.
        const std::vector<BestConfig> best = bestConfigs({d});
        QCOMPARE(best.size(), std::size_t(1));
        QVERIFY(best[0].energyJ);
        QCOMPARE(*best[0].energyJ, 0.018); // block 256, the faster
        const std::string json = writeBestConfigsJson(best);
        QCOMPARE(Json::parse(json)["entries"][0]["energy_j"].get<double>(), 0.018);
        QCOMPARE(parseBestConfigsJson(json, "best.json"), best);
        QVERIFY(writeCppHeader(best).find("0.018 J a launch") != std::string::npos);
        const std::string triton = writeTritonConfigs({d}, 8);
        QVERIFY2(triton.find("0.0400 ms, 0.018 J") != std::string::npos, triton.c_str());
        const Json t4 = Json::parse(writeT4(d));
        bool joules = false;
        for (const auto& m : t4["results"][0]["measurements"])
            joules = joules || (m["name"] == "energy" && m["unit"] == "J");
        QVERIFY(joules);
    }

    void importedTimesBelowTheFloor() {
        // A recording that carries its problem (Tilescope's T4 and caches do) is judged at its
        // shape against its measured copy bandwidth: the tiny problem writes 4 MiB in 'y', which
        // at 4,000 GB/s takes no less than half of 1.05 us.
        const TuningProblem tiny = TuningProblem::load(TILESCOPE_TEST_DATA "/tuning/tiny.json");
        SessionData d;
        d.info.kernel = "scale";
        d.info.problemJson = tiny.toJson();
        d.info.shapeIndex = 0;
        d.info.shape = tiny.shapes[0].dims;
        d.info.parameters = {"BLOCK", "ITEMS", "NUM_WARPS", "NUM_STAGES"};
        d.info.deviceName = "NVIDIA H200";
        d.info.provenanceJson = R"({"devices": [{"copy_gbps": 4000}]})";
        d.info.state = SessionState::Finished;
        const double times[] = {0.0001, 0.0094, 0.0091};
        for (int i = 0; i < 3; ++i) {
            ResultRecord r;
            r.config = {{"BLOCK", 32 << i}, {"ITEMS", 1}, {"NUM_WARPS", 1}, {"NUM_STAGES", 1}};
            r.measurement.status = ResultStatus::Ok;
            r.measurement.time = {times[i], times[i], times[i], 0, 3, 0, 0};
            d.results.push_back(r);
        }
        ResultRecord failed = d.results[1];
        failed.config["ITEMS"] = 2;
        failed.measurement.status = ResultStatus::CompileError;
        failed.measurement.time = {};
        failed.measurement.message = std::string(1, '\0') + "ptxas error\x1b: uses too much shared data\r\n";
        d.results.push_back(failed);
        for (const bool t4 : {true, false}) {
            const SessionData back =
                t4 ? parseT4(writeT4(d), "t4.json") : parseKernelTunerCache(writeKernelTunerCache(d), "cache.json");
            QCOMPARE(back.results.size(), std::size_t(4));
            QCOMPARE(back.results[0].status(), ResultStatus::Implausible);
            QVERIFY2(back.results[0].measurement.message.rfind(
                         "0.0001 ms is below 0.0005243 ms, half the time its outputs take to write at the measured "
                         "copy bandwidth 4,000 GB/s: 4 MiB in 'y'",
                         0) == 0,
                     back.results[0].measurement.message.c_str());
            QCOMPARE(back.results[1].status(), ResultStatus::Ok);
            QCOMPARE(back.results[2].status(), ResultStatus::Ok);
            QCOMPARE(back.results[3].measurement.message, std::string("ptxas error : uses too much shared data"));
            QCOMPARE(bestConfigs({back}).front().timeMs, 0.0091);
        }
        // Without a measured copy, the H200's peak from the table; an unknown device: not checked.
        d.info.provenanceJson = "{}";
        QCOMPARE(parseT4(writeT4(d), "t4.json").results[0].status(), ResultStatus::Implausible);
        d.info.deviceName = "Some GPU";
        const SessionData unknown = parseT4(writeT4(d), "t4.json");
        QCOMPARE(unknown.results[0].status(), ResultStatus::Ok);
        QVERIFY2(unknown.info.message.find("times are not checked against a floor: no copy bandwidth was measured and "
                                           "the device 'Some GPU' is not in the table of peaks") != std::string::npos,
                 unknown.info.message.c_str());
    }

    void anOpenKernelTunerCacheIsRead() {
        // A Kernel Tuner run that was stopped leaves the cache open: the last entry ends with ','.
        std::string text = readFile(kCache);
        text.resize(text.rfind("}}"));
        text += "},";
        const SessionData d = parseKernelTunerCache(text, "open.json");
        QCOMPARE(d.results.size(), std::size_t(260));
    }

    void damagedKernelTunerCaches() {
        const std::string text = readFile(kCache);
        // Cut in the middle of an entry.
        std::string why = inputErrorOf([&] { parseKernelTunerCache(text.substr(0, text.size() / 2), "cut.json"); });
        QVERIFY2(why.find("cut.json: line ") == 0 && why.find("truncated") != std::string::npos, why.c_str());
        // A schema version from the future.
        Json doc = Json::parse(text);
        doc["schema_version"] = "2.0.0";
        why = inputErrorOf([&] { parseKernelTunerCache(doc.dump(), "future.json"); });
        QVERIFY2(why.find("future.json: /schema_version: unknown Kernel Tuner cache schema version \"2.0.0\"") == 0,
                 why.c_str());
        QVERIFY(why.find("1.0.0, 1.0.1, 1.1.0") != std::string::npos);
        // A required field missing.
        doc = Json::parse(text);
        doc.erase("tune_params_keys");
        why = inputErrorOf([&] { parseKernelTunerCache(doc.dump(), "k.json"); });
        QVERIFY2(why.find("missing required field 'tune_params_keys'") != std::string::npos, why.c_str());
        // An entry without a parameter's value.
        doc = Json::parse(text);
        doc["cache"]["32,1,1,1"].erase("ITEMS");
        why = inputErrorOf([&] { parseKernelTunerCache(doc.dump(), "k.json"); });
        QVERIFY2(why.find("/cache/32,1,1,1: missing the value of parameter 'ITEMS'") != std::string::npos, why.c_str());
        // Unversioned caches (before 1.0.0) are read, as Kernel Tuner reads them.
        doc = Json::parse(text);
        doc.erase("schema_version");
        doc.erase("objective");
        QCOMPARE(parseKernelTunerCache(doc.dump(), "old.json").results.size(), std::size_t(260));
    }

    void t4FromKernelTuner() {
        const SessionData d = parseT4(readFile(kT4), kT4);
        QCOMPARE(d.results.size(), std::size_t(260));
        QVERIFY((d.info.parameters == std::vector<std::string>{"BLOCK", "ITEMS", "NUM_WARPS", "NUM_STAGES"}));
        const ResultRecord& first = d.results.front();
        QCOMPARE(first.status(), ResultStatus::Ok);
        QCOMPARE(first.measurement.time.medianMs, 0.009331);
        QCOMPARE(first.measurement.time.samples, 3); // from the runtimes
        QCOMPARE(first.measurement.compileSeconds, 0.20476);
        std::map<ResultStatus, int> counts;
        for (const ResultRecord& r : d.results)
            ++counts[r.status()];
        QCOMPARE(counts[ResultStatus::Ok], 202);
        QCOMPARE(counts[ResultStatus::CompileError], 28);
        QCOMPARE(counts[ResultStatus::Pruned], 28);
        QCOMPARE(counts[ResultStatus::LaunchError], 2);
        QCOMPARE(detectRecordingFormat(kT4), RecordingFormat::T4);
        // The same recording in both formats.
        const SessionData kt = parseKernelTunerCache(readFile(kCache), kCache);
        QCOMPARE(configJson(bestOf(d.results)->config), configJson(bestOf(kt.results)->config));
    }

    void damagedT4() {
        const std::string text = readFile(kT4);
        std::string why = inputErrorOf([&] { parseT4(text.substr(0, text.size() * 2 / 3), "cut.json"); });
        QVERIFY2(why.find("cut.json: line 1, column ") == 0 && why.find("truncated") != std::string::npos, why.c_str());
        QTemporaryDir dir;
        const std::string cut = dir.filePath("cut.json").toStdString();
        writeFile(cut, text.substr(0, text.size() / 3));
        why = inputErrorOf([&] { readRecording(cut); }); // sniffed as T4, reported as truncated
        QVERIFY2(why.find("truncated") != std::string::npos, why.c_str());

        Json doc = Json::parse(text);
        doc["results"][3].erase("invalidity");
        why = inputErrorOf([&] { parseT4(doc.dump(), "t4.json"); });
        QVERIFY2(why.find("t4.json: /results/3: missing required field 'invalidity'") == 0, why.c_str());
        doc = Json::parse(text);
        doc["results"][5]["invalidity"] = "flaky";
        why = inputErrorOf([&] { parseT4(doc.dump(), "t4.json"); });
        QVERIFY2(why.find("/results/5/invalidity") != std::string::npos, why.c_str());
        doc = Json::parse(text);
        doc["schema_version"] = "3.1.0";
        why = inputErrorOf([&] { parseT4(doc.dump(), "t4.json"); });
        QVERIFY2(why.find("unknown T4 schema version \"3.1.0\"") != std::string::npos, why.c_str());
        why = inputErrorOf([&] { parseT4("[1, 2]", "t4.json"); });
        QVERIFY(!why.empty());
        why = inputErrorOf([&] { parseT4("{\"results\": [1, 2}", "t4.json"); });
        QVERIFY2(why.find("bad JSON") != std::string::npos, why.c_str());
    }

    void t4RoundTrip() {
        const SessionData original = syntheticSession(3, 4096, "NVIDIA H200", 1.0);
        const std::string text = writeT4(original);
        // The schema's required fields, in every result.
        const Json doc = Json::parse(text);
        QCOMPARE(doc["schema_version"].get<std::string>(), std::string("1.0.0"));
        QCOMPARE(doc["results"].size(), original.results.size());
        static const std::set<std::string> kInvalidity = {"timeout",     "compile",     "runtime",
                                                          "correctness", "constraints", "correct"};
        for (const Json& r : doc["results"]) {
            QVERIFY(r["configuration"].is_object());
            QVERIFY(r["times"].is_object());
            QVERIFY(r["times"]["compilation_time"].is_number());
            QVERIFY(kInvalidity.count(r["invalidity"].get<std::string>()));
            QVERIFY(r["correctness"].is_number());
            QVERIFY(r["objectives"].is_array());
            QVERIFY(r["measurements"].is_array());
            for (const Json& m : r["measurements"]) {
                QVERIFY(m["name"].is_string());
                QVERIFY(m["value"].is_number() || m["value"].is_null());
                QVERIFY(m["unit"].is_string());
            }
        }
        QCOMPARE(doc["results"][0]["invalidity"].get<std::string>(), std::string("correct"));
        QCOMPARE(doc["results"][2]["invalidity"].get<std::string>(), std::string("compile"));
        QCOMPARE(doc["results"][5]["invalidity"].get<std::string>(), std::string("correctness"));

        const SessionData back = parseT4(text, "back.json");
        compareResults(back.results, original.results);
        QCOMPARE(back.info.kernel, original.info.kernel);
        QVERIFY(back.info.shape == original.info.shape);
        QVERIFY(back.info.problemSize == original.info.problemSize);
        QVERIFY(back.info.parameters == original.info.parameters);
        QCOMPARE(back.info.deviceName, original.info.deviceName);
        QCOMPARE(back.info.arch, original.info.arch);
        QCOMPARE(back.info.objectiveName, original.info.objectiveName);
        QCOMPARE(back.info.strategy, original.info.strategy);
        QCOMPARE(back.info.seed, original.info.seed);
        QCOMPARE(back.info.spaceSize, original.info.spaceSize);
        QCOMPARE(back.info.provenanceJson, original.info.provenanceJson);
        const std::string again = writeT4(back);
        QCOMPARE(again.substr(again.find("\"results\"")), text.substr(text.find("\"results\"")));

        // Through a store and back out: the same again.
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(dir.filePath("r.db").toStdString());
        const std::int64_t id = importSession(store, back, "back.json");
        const SessionData stored = store.load(id);
        compareResults(stored.results, original.results);
        QCOMPARE(stored.info.state, SessionState::Imported);
        QVERIFY(stored.info.backend.find("import:back.json") == 0);
        compareResults(parseT4(writeT4(stored), "again.json").results, original.results);
    }

    void kernelTunerCacheRoundTrip() {
        const SessionData original = syntheticSession(4, 2048, "NVIDIA H200", 1.0);
        const std::string text = writeKernelTunerCache(original);
        // What Kernel Tuner's simulation mode reads: its header fields, and a closed file (its reader
        // checks the last characters for "}\n}").
        const Json doc = Json::parse(text);
        QCOMPARE(doc["device_name"].get<std::string>(), std::string("NVIDIA H200"));
        QCOMPARE(doc["kernel_name"].get<std::string>(), std::string("matmul"));
        QCOMPARE(doc["problem_size"].dump(), std::string("[1024,2048]"));
        QCOMPARE(doc["tune_params_keys"].dump(),
                 std::string("[\"BLOCK_M\",\"num_warps\",\"STAGES\",\"SPLIT\",\"LAYOUT\",\"RATIO\"]"));
        QCOMPARE(doc["tune_params"]["BLOCK_M"].dump(), std::string("[16,32,64,128]"));
        QCOMPARE(doc["tune_params"]["SPLIT"].dump(), std::string("[true,false]"));
        QCOMPARE(doc["tune_params"]["RATIO"].size(), std::size_t(12));
        QCOMPARE(doc["objective"].get<std::string>(), std::string("time"));
        QVERIFY(!doc.contains("schema_version")); // as Kernel Tuner 1.x writes them
        std::string end = text;
        while (!end.empty() && std::isspace(static_cast<unsigned char>(end.back())))
            end.pop_back();
        QCOMPARE(end.substr(end.size() - 3), std::string("}\n}"));
        // Keys as Kernel Tuner makes them: str() of each value in Python, joined by commas.
        const Json& cache = doc["cache"];
        QCOMPARE(cache.size(), original.results.size());
        QVERIFY(cache.contains("16,1,1,True,col\"umn,0.25"));
        QVERIFY(cache.contains("128,1,2,False,col\"umn,1.0"));
        QVERIFY(cache.contains("16,2,1,True,row,1.25"));
        for (auto it = cache.begin(); it != cache.end(); ++it) {
            const Json& e = it.value();
            for (const char* key : {"time", "compile_time", "verification_time", "benchmark_time", "strategy_time",
                                    "framework_time", "timestamp"})
                QVERIFY2(e.contains(key), (it.key() + ": " + key).c_str());
            QVERIFY(e["compile_time"].is_number());
        }
        const Json& ok = cache["16,1,1,True,col\"umn,0.25"];
        QVERIFY(ok["time"].is_number());
        QCOMPARE(ok["time"].get<double>(), original.results[0].timeMs());
        QVERIFY(ok["times"].is_array());
        QVERIFY(ok["TFLOP/s"].is_number());
        QVERIFY(ok["dram__bytes_read.sum"].is_number());
        QVERIFY(!ok.contains("__error__"));
        // Failed configs carry Kernel Tuner's markers.
        const auto markerOf = [&](std::size_t i) { // RATIO tells the configs apart
            for (auto e = cache.begin(); e != cache.end(); ++e)
                if (configValueFromJson(e.value()["RATIO"]) == original.results[i].config.at("RATIO"))
                    return e.value()["__error__"].get<std::string>() + "|" + e.value()["time"].get<std::string>();
            return std::string();
        };
        QCOMPARE(markerOf(2), std::string("CompilationFailedConfig|CompilationFailedConfig"));
        QCOMPARE(markerOf(4), std::string("RuntimeFailedConfig|RuntimeFailedConfig")); // crashed
        QCOMPARE(markerOf(5), std::string("RuntimeFailedConfig|RuntimeFailedConfig")); // wrong result
        QCOMPARE(markerOf(7), std::string("RuntimeFailedConfig|RuntimeFailedConfig")); // timeout
        QCOMPARE(markerOf(8), std::string("InvalidConfig|InvalidConfig"));             // pruned
        QCOMPARE(markerOf(9), std::string("RuntimeFailedConfig|RuntimeFailedConfig")); // launch error
        QCOMPARE(markerOf(11), std::string("InvalidConfig|InvalidConfig"));            // skipped

        // Our importer reads it back as it was: configs, times, statuses, the session.
        QCOMPARE(detectRecordingFormat(writeTemp(text)), RecordingFormat::KernelTunerCache);
        const SessionData back = parseKernelTunerCache(text, "back.json");
        compareResults(back.results, original.results);
        QCOMPARE(back.info.kernel, original.info.kernel);
        QVERIFY(back.info.shape == original.info.shape);
        QVERIFY(back.info.shapeIndex == original.info.shapeIndex);
        QVERIFY(back.info.problemSize == original.info.problemSize);
        QVERIFY(back.info.parameters == original.info.parameters);
        QCOMPARE(back.info.deviceName, original.info.deviceName);
        QCOMPARE(back.info.objectiveName, original.info.objectiveName);
        QCOMPARE(back.info.spaceSize, original.info.spaceSize);
        const std::string again = writeKernelTunerCache(back);
        QCOMPARE(again.substr(again.find("\"cache\"")), text.substr(text.find("\"cache\"")));

        // Without Tilescope's fields it is a plain Kernel Tuner cache: times and Kernel Tuner's
        // three kinds of failure.
        Json plain = doc;
        plain.erase("tilescope");
        for (auto it = plain["cache"].begin(); it != plain["cache"].end(); ++it)
            it.value().erase("tilescope");
        const SessionData bare = parseKernelTunerCache(plain.dump(), "plain.json");
        QCOMPARE(bare.results.size(), original.results.size());
        for (std::size_t i = 0; i < bare.results.size(); ++i) {
            const ResultRecord& a = bare.results[i];
            const ResultRecord& b = original.results[i];
            QCOMPARE(configJson(a.config), configJson(b.config));
            if (b.ok())
                QCOMPARE(a.timeMs(), b.timeMs());
            const ResultStatus want = b.ok() || b.status() == ResultStatus::CompileError ? b.status()
                                      : b.status() == ResultStatus::Pruned || b.status() == ResultStatus::Skipped
                                          ? ResultStatus::Pruned
                                          : ResultStatus::LaunchError;
            QCOMPARE(a.status(), want);
        }

        // Kernel Tuner 1.x itself marks failures with "__error__" alone and lists its objectives.
        Json written = plain;
        written["objective"] = Json::array({"time"});
        for (auto it = written["cache"].begin(); it != written["cache"].end(); ++it)
            if (it.value().contains("__error__"))
                it.value().erase("time");
        const SessionData fromKt = parseKernelTunerCache(written.dump(), "kt.json");
        for (std::size_t i = 0; i < fromKt.results.size(); ++i)
            QCOMPARE(fromKt.results[i].status(), bare.results[i].status());

        // Through the CLI's dispatch: one session only.
        QCOMPARE(exportResults({original}, {ExportFormat::KernelTunerCache, 8}), text);
        const std::string why = inputErrorOf([&] {
            exportResults({original, original}, {ExportFormat::KernelTunerCache, 8}, "r.db");
        });
        QVERIFY2(why.find("r.db: a Kernel Tuner cache holds one session, and 2 were given") == 0, why.c_str());
    }

    void bestConfigsJsonRoundTrips() {
        const std::vector<SessionData> sessions = {
            syntheticSession(1, 4096, "NVIDIA H200", 1.0), syntheticSession(2, 2048, "NVIDIA H200", 0.5),
            syntheticSession(3, 4096, "NVIDIA A100", 2.0), syntheticSession(4, 4096, "NVIDIA H200", 0.9)};
        const std::vector<BestConfig> best = bestConfigs(sessions);
        QCOMPARE(best.size(), std::size_t(3)); // (matmul, 4096, H200) spans sessions 1 and 4
        for (const BestConfig& b : best) {
            QCOMPARE(b.kernel, std::string("matmul"));
            QVERIFY(b.objective);
            if (b.device == "NVIDIA H200" && b.shape[0].second == 4096)
                QCOMPARE(b.sessionId, std::int64_t(4)); // 0.9x the times of session 1
        }
        const std::string text = writeBestConfigsJson(best);
        const std::vector<BestConfig> back = parseBestConfigsJson(text, "best.json");
        QVERIFY(back == best);
        // The winner's 95 % interval travels with it.
        QVERIFY(best[0].ciLowMs > 0 && best[0].ciLowMs < best[0].timeMs && best[0].timeMs < best[0].ciHighMs);
        QVERIFY(Json::parse(text)["entries"][0]["time_ci95_ms"].is_array());
        QCOMPARE(writeBestConfigsJson(back), text);
        QCOMPARE(Json::parse(text)["entries"][0]["key"].get<std::string>(),
                 std::string("matmul | M=4096 N=1024 | NVIDIA A100"));
        QVERIFY(!inputErrorOf([] { parseBestConfigsJson("{\"format\": \"other\"}", "x.json"); }).empty());
        QVERIFY(!inputErrorOf([] {
                     parseBestConfigsJson("{\"format\": \"tilescope-best-configs\", \"version\": 2}", "x.json");
                 }).empty());
    }

    void tritonSnippetParsesAsPython() {
        const std::vector<SessionData> sessions = {syntheticSession(1, 4096, "NVIDIA H200", 1.0),
                                                   syntheticSession(2, 2048, "NVIDIA H200", 0.5)};
        const std::string exported = writeTritonConfigs(sessions, 3);
        // Its metadata line holds the best config per shape, for `check`; the code is the rest.
        const std::vector<BestConfig> entries = parseTunedConfigs(exported, "configs.py");
        QCOMPARE(entries.size(), std::size_t(2));
        QCOMPARE(entries, bestConfigs(sessions));
        const std::size_t meta = exported.find("# tilescope-cache: ");
        QVERIFY(meta != std::string::npos);
        const std::string text = exported.substr(0, meta) + exported.substr(exported.find('\n', meta) + 1);
        QVERIFY(text.find("import triton") != std::string::npos);
        QVERIFY(text.find("matmul_configs = [") != std::string::npos);
        QVERIFY(text.find("num_warps=") != std::string::npos);     // from the parameter num_warps
        QVERIFY(text.find("num_stages=") != std::string::npos);    // from STAGES
        QVERIFY(text.find("\"num_warps\":") == std::string::npos); // not in the kwargs
        QVERIFY(text.find("\"STAGES\":") == std::string::npos);
        QVERIFY(text.find("\"SPLIT\": True") != std::string::npos ||
                text.find("\"SPLIT\": False") != std::string::npos);
        QVERIFY(text.find("\"RATIO\": ") != std::string::npos);
        if (!haveProgram("python3"))
            TILESCOPE_MISSING_PROGRAM("python3", "the Triton configs were not run through Python");
        // Parse it, and run it against a stand-in triton module: the lists hold 3 configs per shape.
        const QString check = "import ast, sys, types\n"
                              "src = sys.stdin.read()\n"
                              "ast.parse(src)\n"
                              "class Config:\n"
                              "    def __init__(self, kwargs, num_warps=4, num_stages=2):\n"
                              "        self.kwargs, self.num_warps, self.num_stages = kwargs, num_warps, num_stages\n"
                              "def autotune(configs, key):\n"
                              "    return (len(configs), key)\n"
                              "sys.modules['triton'] = types.SimpleNamespace(Config=Config, autotune=autotune)\n"
                              "ns = {}\n"
                              "exec(src, ns)\n"
                              "print(len(ns['configs']), ns['configs'][0].num_warps, ns['configs'][0].kwargs,\n"
                              "      ns.get('matmul_autotune'))\n";
        QString output;
        QCOMPARE(runProcess("python3", {"-c", check}, &output, QByteArray::fromStdString(text)), 0);
        // Both shapes rank the same configs first: the second shape's repeat them, as comments.
        QVERIFY2(output.startsWith("3 "), qPrintable(output));
        // The decorator, keyed on the dims the sessions were tuned at.
        QVERIFY2(output.contains("(3, ['M', 'N'])"), qPrintable(output));
        // Triton's other options are triton.Config's keyword arguments, not kwargs.
        ConfigValues options;
        options["BLOCK_SIZE_M"] = 128;
        options["num_warps"] = 8;
        options["num_ctas"] = 2;
        options["maxnreg"] = 128;
        const std::string expression = tritonConfigExpression(options);
        QVERIFY2(expression.find("num_ctas=2") != std::string::npos &&
                     expression.find("maxnreg=128") != std::string::npos &&
                     expression.find("\"num_ctas\"") == std::string::npos,
                 expression.c_str());

        // Two sessions of the same (shape, device) measured the same configs: each config is
        // listed once and the top 3 are 3 different configs.
        const std::string twice = writeTritonConfigs(
            {syntheticSession(1, 4096, "NVIDIA H200", 1.0), syntheticSession(4, 4096, "NVIDIA H200", 1.0)}, 3);
        QVERIFY2(twice.find("(listed above)") == std::string::npos, twice.c_str());
        std::size_t configs = 0;
        for (std::size_t at = twice.find("triton.Config("); at != std::string::npos;
             at = twice.find("triton.Config(", at + 1))
            ++configs;
        QCOMPARE(configs, std::size_t(3));
    }

    void cppHeaderCompilesAndLooksUp() {
        const std::vector<SessionData> sessions = {syntheticSession(1, 4096, "NVIDIA H200", 1.0),
                                                   syntheticSession(2, 2048, "NVIDIA H200", 0.5),
                                                   syntheticSession(3, 4096, "NVIDIA A100", 2.0)};
        const std::vector<BestConfig> best = bestConfigs(sessions);
        QTemporaryDir dir;
        writeFile(dir.filePath("tuned.h").toStdString(), writeCppHeader(best));
        // A program that checks every entry's lookup against the expected values.
        std::string main = "#include \"tuned.h\"\n#include <cstdio>\n#include <cstring>\nint main() {\n"
                           "    using namespace tilescope_tuned::matmul;\n    int bad = 0;\n";
        for (const BestConfig& b : best) {
            const std::string dims = std::to_string(b.shape[0].second) + ", " + std::to_string(b.shape[1].second);
            const std::string check = "c->BLOCK_M == " + b.config.at("BLOCK_M").json() +
                                      " && c->num_warps == " + b.config.at("num_warps").json() +
                                      " && c->STAGES == " + b.config.at("STAGES").json() +
                                      " && c->SPLIT == " + (b.config.at("SPLIT").asBool() ? "true" : "false") +
                                      " && c->RATIO == " + b.config.at("RATIO").json() + " && std::strcmp(c->LAYOUT, " +
                                      b.config.at("LAYOUT").json() + ") == 0";
            main += "    { const Config* c = lookupOn(\"" + b.device + "\", " + dims + "); if (!c || !(" + check +
                    ")) { std::puts(\"wrong: " + b.device + " " + dims + "\"); ++bad; } }\n";
        }
        main +=
            "    if (lookup(4096, 1024) == nullptr || lookup(2048, 1024) == nullptr) ++bad;\n"
            "    if (lookup(1234, 1024) != nullptr || lookupOn(\"NVIDIA A100\", 2048, 1024) != nullptr) ++bad;\n"
            "    static_assert(find(2048, 1024) >= 0 && find(1, 2) == -1, \"constexpr find\");\n"
            "    static_assert(kEntries[findOn(\"NVIDIA A100\", 4096, 1024)].config.BLOCK_M > 0, \"in constants\");\n"
            "    std::printf(\"%d entries checked, %d bad\\n\", int(sizeof kEntries / sizeof kEntries[0]), bad);\n"
            "    return bad;\n}\n";
        writeFile(dir.filePath("main.cpp").toStdString(), main);
        QString output;
        const int built = runProcess(cxxCompiler(),
                                     {"-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o",
                                      dir.filePath("lookup"), dir.filePath("main.cpp")},
                                     &output);
        QVERIFY2(built == 0, qPrintable(output));
        QCOMPARE(runProcess(dir.filePath("lookup"), {}, &output), 0);
        QVERIFY2(output.contains("3 entries checked, 0 bad"), qPrintable(output));
        // The header alone compiles too.
        QCOMPARE(
            runProcess(cxxCompiler(), {"-std=c++17", "-fsyntax-only", "-x", "c++", dir.filePath("tuned.h")}, &output),
            0);
    }

    void csvQuotesWhatItMust() {
        const SessionData s = syntheticSession(7, 4096, "NVIDIA H200", 1.0);
        const std::string csv = writeCsv({s});
        QVERIFY(csv.rfind("session,kernel,shape,device,BLOCK_M,num_warps,STAGES,SPLIT,LAYOUT,RATIO,status,time_ms,",
                          0) == 0);
        // Rows: the header plus one per result; quoted newlines do not end a row.
        int rows = 0;
        bool quoted = false;
        for (const char c : csv) {
            if (c == '"')
                quoted = !quoted;
            else if (c == '\n' && !quoted)
                ++rows;
        }
        QCOMPARE(rows, 13);
        QVERIFY(csv.find("\"col\"\"umn\"") != std::string::npos);
        QVERIFY(csv.find("\"failed, \"\"badly\"\"\nsee log\"") != std::string::npos);
        QVERIFY(csv.find(",compile_error,,,,,0,,") != std::string::npos); // untimed: empty cells
    }

    void recordingsAndImports() {
        QTemporaryDir dir;
        const std::string db = dir.filePath("r.db").toStdString();
        {
            ResultStore store = ResultStore::open(db);
            importSession(store, parseKernelTunerCache(readFile(kCache), kCache), "tiny_ktcache.json");
            importSession(store, syntheticSession(0, 4096, "NVIDIA H200", 1.0), "synthetic");
        }
        QCOMPARE(detectRecordingFormat(db), RecordingFormat::TilescopeDatabase);
        const auto sessions = readRecording(db);
        QCOMPARE(sessions.size(), std::size_t(2));
        QCOMPARE(sessions[0].results.size(), std::size_t(260));
        QCOMPARE(sessions[0].info.kernel, std::string("scale"));
        QCOMPARE(readRecording(kT4).size(), std::size_t(1));

        const std::string best = dir.filePath("best.json").toStdString();
        writeFile(best, writeBestConfigsJson(bestConfigs(sessions)));
        QCOMPARE(detectRecordingFormat(best), RecordingFormat::BestConfigs);
        QVERIFY(inputErrorOf([&] { readRecording(best); }).find("only winners") != std::string::npos);
        const std::string other = dir.filePath("other.json").toStdString();
        writeFile(other, "{\"hello\": 1}");
        QVERIFY(inputErrorOf([&] { readRecording(other); }).find("not a recording") != std::string::npos);
        QVERIFY(inputErrorOf([&] { readRecording(dir.filePath("none.json").toStdString()); }).find("no such file") !=
                std::string::npos);
    }

    // One rule tells every file Tilescope reads, problems too, from its first bytes (a recording
    // cut short is still a recording); and every results format reads as a database.
    void formatsAndResults() {
        QTemporaryDir dir;
        QCOMPARE(detectRecordingFormat(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json"),
                 RecordingFormat::TuningProblem);
        QVERIFY(!isRecording(RecordingFormat::TuningProblem));
        QVERIFY(isRecording(RecordingFormat::T4) && isRecording(RecordingFormat::KernelTunerCache) &&
                isRecording(RecordingFormat::TilescopeDatabase));
        QVERIFY(inputErrorOf([] {
                    readRecording(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
                }).find("a tuning problem (T1), not a recording") != std::string::npos);
        // A T4 file larger than the part read: its start decides (a Tilescope T4 holds its problem
        // in its metadata, and is no problem for that).
        std::string big = readFile(kT4);
        big.insert(big.find('{') + 1, "\"metadata\": {\"problem\": {\"ConfigurationSpace\": {}}},");
        big.insert(big.rfind('}'), ",\"padding\": \"" + std::string(std::size_t{2} << 20, 'x') + "\"");
        const std::string bigPath = dir.filePath("big.t4.json").toStdString();
        writeFile(bigPath, big);
        QCOMPARE(detectRecordingFormat(bigPath), RecordingFormat::T4);
        const std::string cut = dir.filePath("cut.json").toStdString();
        writeFile(cut, readFile(kCache).substr(0, 400));
        QCOMPARE(detectRecordingFormat(cut), RecordingFormat::KernelTunerCache);

        for (const std::string& file : {kT4, kCache}) {
            const ResultStore store = openResults(file);
            const auto sessions = store.sessions();
            QCOMPARE(sessions.size(), std::size_t(1));
            QCOMPARE(store.results(sessions.front().id).size(), readRecording(file).front().results.size());
            QVERIFY(sessions.front().backend.rfind("import:" + file, 0) == 0);
        }
        QVERIFY(inputErrorOf([&] { openResults(dir.filePath("none.db").toStdString()); }).find("no such database") !=
                std::string::npos);
    }

    void gzipRecordings() {
        // A gzip-compressed recording reads as the plain one; a cut or damaged one says so.
        QTemporaryDir dir;
        const std::string plain = readFile(kT4);
        const std::string gz = dir.filePath("rec.t4.json.gz").toStdString();
        gzFile out = gzopen(gz.c_str(), "wb9");
        QVERIFY(out);
        QCOMPARE(gzwrite(out, plain.data(), static_cast<unsigned>(plain.size())), static_cast<int>(plain.size()));
        QCOMPARE(gzclose(out), Z_OK);
        QCOMPARE(detectRecordingFormat(gz), RecordingFormat::T4);
        const auto a = readRecording(kT4);
        const auto b = readRecording(gz);
        QCOMPARE(b.size(), a.size());
        QCOMPARE(b[0].results.size(), a[0].results.size());
        QCOMPARE(configJson(b[0].results.back().config), configJson(a[0].results.back().config));
        QCOMPARE(b[0].results.back().measurement.time, a[0].results.back().measurement.time);

        const std::string bytes = readFile(gz);
        const std::string cut = dir.filePath("cut.gz").toStdString();
        writeFile(cut, bytes.substr(0, bytes.size() / 2));
        QVERIFY2(inputErrorOf([&] { readRecording(cut); }).find("truncated") != std::string::npos,
                 inputErrorOf([&] { readRecording(cut); }).c_str());
        std::string damaged = bytes;
        for (std::size_t i = 20; i < 60 && i < damaged.size(); ++i)
            damaged[i] = static_cast<char>(~damaged[i]);
        const std::string bad = dir.filePath("bad.gz").toStdString();
        writeFile(bad, damaged);
        QVERIFY2(inputErrorOf([&] { readRecording(bad); }).find("gzip") != std::string::npos,
                 inputErrorOf([&] { readRecording(bad); }).c_str());
    }

    void exportResultsDispatchesEveryFormat() {
        // The formats by name, as the CLI's --format and the workbench's export dialog name them.
        QCOMPARE(exportFormats().size(), std::size_t(6));
        QCOMPARE(parseExportFormat("kerneltuner"), std::optional<ExportFormat>(ExportFormat::KernelTunerCache));
        for (ExportFormat format : exportFormats())
            QCOMPARE(parseExportFormat(exportFormatName(format)), std::optional<ExportFormat>(format));
        QCOMPARE(parseExportFormat("yaml"), std::optional<ExportFormat>());

        const std::vector<SessionData> one = {syntheticSession(1, 2048, "NVIDIA H200", 1.0)};
        const std::vector<SessionData> two = {one.front(), syntheticSession(2, 4096, "NVIDIA A100", 2.0)};
        // Each format is its writer's text.
        QCOMPARE(exportResults(one, {ExportFormat::T4, 8}), writeT4(one.front()));
        QCOMPARE(exportResults(two, {ExportFormat::BestConfigsJson, 8}), writeBestConfigsJson(bestConfigs(two)));
        QCOMPARE(exportResults(two, {ExportFormat::Triton, 2}), writeTritonConfigs(two, 2));
        QCOMPARE(exportResults(two, {ExportFormat::CppHeader, 8}), writeCppHeader(bestConfigs(two)));
        QCOMPARE(exportResults(two, {ExportFormat::Csv, 8}), writeCsv(two));
        QCOMPARE(exportResults(one, {ExportFormat::KernelTunerCache, 8}), writeKernelTunerCache(one.front()));

        // What cannot be written says why, naming the source.
        std::string why = inputErrorOf([&] { exportResults(two, {ExportFormat::T4, 8}, "r.db"); });
        QVERIFY2(why.find("r.db: T4 holds one session, and 2 were given") == 0, why.c_str());
        why = inputErrorOf([&] { exportResults({}, {ExportFormat::Csv, 8}, "r.db"); });
        QVERIFY2(why.find("no sessions to export") != std::string::npos, why.c_str());
        std::vector<SessionData> failed = one;
        for (ResultRecord& r : failed.front().results)
            r.measurement.status = ResultStatus::CompileError;
        why = inputErrorOf([&] { exportResults(failed, {ExportFormat::CppHeader, 8}, "r.db"); });
        QVERIFY2(why.find("nothing to put in a header") != std::string::npos, why.c_str());
    }

    void kernelTunerMarkersKeepTheirMeaning() {
        // Kernel Tuner records a failed config with a marker in "time" (or "__error__" in 1.x):
        // the markers its read_cache knows import as the statuses they mean; only other strings are
        // refused. A failed result's time of 0 (no time) is no time to refuse.
        const Json doc = Json::parse(R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"],
            "cache": {"1": {"x": 1, "time": "InvalidConfig"},
                      "2": {"x": 2, "time": "CompilationFailedConfig"},
                      "3": {"x": 3, "time": "RuntimeFailedConfig"},
                      "4": {"x": 4, "time": "ErrorConfig"},
                      "5": {"x": 5, "__error__": "CompilationFailedConfig"},
                      "6": {"x": 6, "time": "RuntimeFailedConfig", "__error__": "RuntimeFailedConfig"},
                      "7": {"x": 7, "time": 0.5, "times": [0.5, 0.5]},
                      "8": {"x": 8, "time": "InvalidConfig", "tilescope": {"status": "pruned",
                            "time": {"median_ms": 0, "min_ms": 0, "max_ms": 0, "stdev_ms": 0, "samples": 0}}}}})");
        const SessionData d = parseKernelTunerCache(doc.dump(), "markers.json");
        const ResultStatus want[] = {ResultStatus::Pruned,      ResultStatus::CompileError, ResultStatus::LaunchError,
                                     ResultStatus::LaunchError, ResultStatus::CompileError, ResultStatus::LaunchError,
                                     ResultStatus::Ok,          ResultStatus::Pruned};
        QCOMPARE(d.results.size(), std::size_t(8));
        for (std::size_t i = 0; i < d.results.size(); ++i)
            QCOMPARE(statusName(d.results[i].status()), statusName(want[i]));
        QCOMPARE(d.results[6].timeMs(), 0.5);
        // T4: a compile error with a time of 0 imports too.
        const std::string t4 = R"({"schema_version": "1.0.0", "results": [{"configuration": {"x": 1}, "times": {},
            "invalidity": "compile", "correctness": 0, "measurements": [{"name": "time", "value": 0, "unit": "ms"}]}]})";
        QCOMPARE(parseT4(t4, "compile.json").results.at(0).status(), ResultStatus::CompileError);
    }

    void integersAtTheEdgesOfSixtyFourBits() {
        // The ends of a 64-bit integer are values; one past them is refused (not read as a double).
        const SessionData d = parseKernelTunerCache(R"({"device_name": "d", "kernel_name": "k",
            "tune_params_keys": ["x"], "cache": {"1": {"x": 9223372036854775807, "time": 1.0},
            "2": {"x": -9223372036854775808, "time": 1.0}, "3": {"x": 1e21, "time": 1.0}}})",
                                                    "edges.json");
        QCOMPARE(d.results.at(0).config.at("x").asInt(), std::int64_t(9223372036854775807));
        QVERIFY(d.results.at(1).config.at("x").isInt());
        QVERIFY(d.results.at(2).config.at("x").isFloat()); // a float as written: 1e21 is one
        const std::string why = inputErrorOf([&] {
            parseKernelTunerCache(R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"],
                "cache": {"1": {"x": -9223372036854775809, "time": 1.0}}})",
                                  "past.json");
        });
        QVERIFY2(why.find("past.json: /cache/1/x: the integer -9223372036854775809 does not fit 64 bits") == 0,
                 why.c_str());
    }

    // A session of the analysis backend: configs compiled and analysed, never run. Every format
    // carries them as data: T4 and a Kernel Tuner cache as configs not run (what their readers take)
    // that import back as analysed, CSV with their static columns, and the JSON cache, the C++
    // header and the Triton lists with the best by what compiling told (occupancy, or as asked).
    void analysedResultsTravel() {
        SessionData d = syntheticSession(5, 4096, "", 1.0);
        d.info.backend = "analysis:sm_90";
        d.info.objectiveName.clear();
        const auto analyse = [](ResultRecord& r, double occupancy, int registers, std::int64_t spills) {
            r.measurement = Measurement{};
            r.measurement.status = ResultStatus::Analysed;
            r.measurement.message = "not measured: static analysis for sm_90";
            r.measurement.compileSeconds = 0.2;
            StaticInfo info;
            info.registers = registers;
            info.barriers = 1;
            info.spillStores = spills;
            info.spillLoads = spills;
            info.stackFrame = spills;
            r.measurement.staticInfo = info;
            r.occupancy = occupancy;
            r.objective.reset();
            r.blockSize = 128;
            r.sharedDynamic = 0;
        };
        d.results.resize(5);
        analyse(d.results[0], 50, 96, 0);
        analyse(d.results[1], 100, 64, 48); // the highest occupancy, spilling
        analyse(d.results[2], 75, 40, 0);   // the fewest registers, no spills
        analyse(d.results[3], 25, 128, 0);
        d.results[4].measurement.status = ResultStatus::Pruned; // over the arch's limits
        const auto regsOf = [](const ConfigValues& c, const SessionData& s) {
            for (const ResultRecord& r : s.results)
                if (configJson(r.config) == configJson(c))
                    return r.measurement.staticInfo->registers;
            return -1;
        };

        // T4: "constraints", no time; our own readers get the status back from the "tilescope" object.
        const std::string t4 = exportResults({d}, {ExportFormat::T4, 8});
        const Json t4Doc = Json::parse(t4);
        const Json& first = t4Doc["results"][0];
        QCOMPARE(first["invalidity"].get<std::string>(), std::string("constraints"));
        QCOMPARE(first["correctness"].get<int>(), 0);
        for (const Json& m : first["measurements"])
            QVERIFY2(m["name"] != "time", first.dump().c_str());
        QCOMPARE(first["tilescope"]["status"].get<std::string>(), std::string("analysed"));
        compareResults(parseT4(t4, "a.t4.json").results, d.results);
        Json bare = t4Doc;
        for (Json& r : bare["results"])
            r.erase("tilescope");
        QCOMPARE(parseT4(bare.dump(), "bare.t4.json").results[0].status(), ResultStatus::Pruned);

        // A Kernel Tuner cache: Kernel Tuner's marker of a config not run, and back.
        const std::string kt = exportResults({d}, {ExportFormat::KernelTunerCache, 8});
        const Json ktDoc = Json::parse(kt);
        const Json& ktEntry = ktDoc["cache"].begin().value();
        QCOMPARE(ktEntry["time"].get<std::string>(), std::string("InvalidConfig"));
        QCOMPARE(ktEntry["__error__"].get<std::string>(), std::string("InvalidConfig"));
        compareResults(parseKernelTunerCache(kt, "a.json").results, d.results);

        // CSV: the status and what compiling told, no time.
        const std::string csv = exportResults({d}, {ExportFormat::Csv, 8});
        const std::string row = csv.substr(csv.find('\n') + 1, csv.find('\n', csv.find('\n') + 1) - csv.find('\n') - 1);
        QVERIFY2(row.find(",analysed,,,,,0,,") != std::string::npos, row.c_str());
        QVERIFY2(row.find(",96,0,0,0,") != std::string::npos, row.c_str());

        // The JSON cache: the best by occupancy, or by registers or spills as asked, no time.
        const std::string json = exportResults({d}, {ExportFormat::BestConfigsJson, 8});
        const Json entry = Json::parse(json)["entries"][0];
        QVERIFY(entry["time_ms"].is_null());
        QCOMPARE(entry["analysed"]["ranked_by"].get<std::string>(), std::string("occupancy"));
        QCOMPARE(entry["analysed"]["occupancy"].get<double>(), 100.0);
        QCOMPARE(entry["analysed"]["registers"].get<int>(), 64);
        QCOMPARE(entry["analysed"]["spill_stores"].get<int>(), 48);
        QCOMPARE(entry["arch"].get<std::string>(), std::string("sm_90"));
        const std::vector<BestConfig> back = parseBestConfigsJson(json, "best.json");
        QCOMPARE(back, bestConfigs({d}));
        QVERIFY(back[0].analysed);
        QCOMPARE(describeAnalysed(back[0]),
                 std::string("analysed for sm_90, not timed: occupancy 100 %, spills 48/48 B, 64 registers"));
        const std::vector<BestConfig> byRegisters = bestConfigs({d}, StaticRank::Registers);
        QCOMPARE(regsOf(byRegisters[0].config, d), 40);
        QCOMPARE(byRegisters[0].analysed->rankedBy, std::string("registers"));
        QCOMPARE(regsOf(bestConfigs({d}, StaticRank::Spills)[0].config, d), 40); // no spills, then occupancy 75
        QCOMPARE(Json::parse(exportResults({d}, {ExportFormat::BestConfigsJson, 8,
                                                 StaticRank::Registers}))["entries"][0]["analysed"]["registers"]
                     .get<int>(),
                 40);
        // Timed results of the same kernel and shape on a GPU are an entry of their own; two archs
        // analysed, one each.
        SessionData sm80 = d;
        sm80.info.id = 6;
        sm80.info.arch = "sm_80";
        const std::vector<BestConfig> several = bestConfigs({d, sm80, syntheticSession(1, 4096, "NVIDIA H200", 1.0)});
        QCOMPARE(several.size(), std::size_t(3));
        QCOMPARE(std::count_if(several.begin(), several.end(), [](const BestConfig& b) { return !b.analysed; }), 1);
        // Each entry its own key: a session of no device is keyed by its arch.
        std::set<std::string> keys;
        const Json severalDoc = Json::parse(writeBestConfigsJson(several));
        for (const Json& e : severalDoc["entries"])
            keys.insert(e["key"].get<std::string>());
        QCOMPARE(keys.size(), std::size_t(3));
        QVERIFY(keys.count(entry["kernel"].get<std::string>() + " | M=4096 N=1024 | sm_90"));

        // The C++ header: the entry with a time of 0 and a comment that says why; check reads it.
        const std::string header = exportResults({d}, {ExportFormat::CppHeader, 8});
        QVERIFY2(header.find("// M=4096 N=1024; analysed for sm_90, not timed: occupancy 100 %") != std::string::npos,
                 header.c_str());
        QCOMPARE(parseTunedConfigs(header, "tuned.h"), back);

        // Triton: the top configs in that order, each saying what compiling told.
        const std::string triton = exportResults({d}, {ExportFormat::Triton, 2});
        const std::size_t best = triton.find("analysed, not timed: occupancy 100 %");
        const std::size_t second = triton.find("analysed, not timed: occupancy 75 %");
        QVERIFY2(best != std::string::npos && second != std::string::npos && best < second, triton.c_str());
        QVERIFY2(triton.find("occupancy 50 %") == std::string::npos, triton.c_str()); // the top 2 only
        QVERIFY2(triton.find("# M=4096 N=1024 on sm_90") != std::string::npos, triton.c_str());
        const std::string bySpills = exportResults({d}, {ExportFormat::Triton, 1, StaticRank::Spills});
        QVERIFY2(bySpills.find("analysed, not timed: no spills, occupancy 75 %, 40 registers") != std::string::npos,
                 bySpills.c_str());
    }

    void recordedTimesOfZeroOrBelowNeverWin() {
        // Results held in memory (a database's, kept from before imports were checked) with an ok
        // time of -5 or 0: never the best, and refused by what exports or replays them, at the
        // result.
        std::vector<SessionData> sessions = {syntheticSession(1, 2048, "NVIDIA H200", 1.0)};
        SessionData& s = sessions.front();
        const ResultRecord real = *bestOf(s.results);
        for (const double bad : {-5.0, 0.0, -0.0}) {
            ResultRecord r = s.results.front();
            r.id = 0;
            r.measurement.status = ResultStatus::Ok;
            r.measurement.time = {bad, bad, bad, 0, 1};
            r.objective.reset();
            QVERIFY(!r.ranks());
            std::vector<ResultRecord> all = s.results;
            all.insert(all.begin(), r);
            QCOMPARE(bestOf(all)->id, real.id);
            QCOMPARE(ranked(all).front().id, real.id);
            QVERIFY(!bestOf({r}));
        }
        ResultRecord negative = s.results.front();
        negative.measurement.status = ResultStatus::Ok;
        negative.measurement.time = {-5.0, -5.0, -5.0, 0, 1};
        negative.objective.reset();
        s.info.objectiveName.clear(); // ranked by time alone
        s.results.push_back(negative);
        const std::string row = "results row " + std::to_string(negative.id) + ", column time_ms";
        for (ExportFormat format : exportFormats()) {
            const std::string why = inputErrorOf([&] { exportResults(sessions, {format, 8}, "r.db"); });
            QVERIFY2(why.find("r.db: " + row + ": the recorded time -5 ms is negative") == 0, why.c_str());
        }
        // An ok result at 0 ms, and one without an id (a session made in memory), are placed too.
        s.results.back().measurement.time = {};
        s.results.back().id = 0;
        const std::string why = inputErrorOf([&] { exportResults(sessions, {ExportFormat::BestConfigsJson, 8}, "m"); });
        QVERIFY2(why.find("m: session 1, result 13, column time_ms: an ok result with a time of 0 ms") == 0,
                 why.c_str());
        // The winners the exports would pick never include it.
        for (const BestConfig& b : bestConfigs(sessions))
            QVERIFY(b.timeMs > 0);
    }
};

QTEST_GUILESS_MAIN(TestExchange)
#include "tst_exchange.moc"
