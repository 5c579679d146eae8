// tilescope-cli tune / show / export / import, run as a user runs them: the real executable, a
// recording the test makes, a run killed with SIGKILL and resumed, exports put to use (the C++
// compiler that built the tests, python3), and bad input answered with a clear message and exit
// status 2.

#include "base/sha256.h"
#include "exchange/bestconfigs.h"
#include "exchange/recording.h"
#include "expr/expr.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"
#include "tuner/objective.h"

#include "clirun.h"
#include "ktconvolution.h"
#include "testprograms.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <QtTest>

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <csignal>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

using namespace tilescope;
using Json = nlohmann::ordered_json;

namespace {

using Run = CliRun;

Run cli(const QStringList& args) {
    return runCli(args);
}

const QString kSgemm = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
const QString kTiny = QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny.json");
const QString kTinyCache = QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny_ktcache.json");
const QString kTinyT4 = QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny_t4.json");

void writeFile(const QString& path, const std::string& text) {
    std::ofstream(path.toStdString(), std::ios::binary) << text;
}

std::string readFile(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A Kernel Tuner cache of sgemm at one shape, every valid config, with synthetic but plausible
// times (a register-blocked SGEMM near 50 TFLOP/s at best on an H200) and some failures.
// Returns the cache's text and the best config's values and time.
struct Recording {
    std::string text;
    Json bestConfig;
    double bestMs = 0;
    std::size_t configs = 0;
};

Recording sgemmRecording(std::size_t shapeIndex) {
    const TuningProblem problem = TuningProblem::load(kSgemm.toStdString());
    const ConfigSpace space = ConfigSpace::build(problem, shapeIndex);
    const auto& dims = problem.shapes[shapeIndex].dims;
    const double m = double(dims[0].second), n = double(dims[1].second), k = double(dims[2].second);
    Json doc = Json::object();
    doc["schema_version"] = "1.1.0";
    doc["device_name"] = "NVIDIA H200";
    doc["kernel_name"] = "sgemm";
    doc["problem_size"] = {std::int64_t(n), std::int64_t(m)}; // sgemm's ProblemSize is [N, M]
    Json keys = Json::array(), params = Json::object();
    for (int p = 0; p < space.parameterCount(); ++p) {
        keys.push_back(space.parameterName(p));
        Json values = Json::array();
        for (const auto& v : space.parameterValues(p))
            values.push_back(v.i);
        params[space.parameterName(p)] = values;
    }
    doc["tune_params_keys"] = keys;
    doc["tune_params"] = params;
    doc["objective"] = "time";
    Json cache = Json::object();
    Recording rec;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
        const Config c = space.at(i);
        Json entry = Json::object();
        std::string key;
        std::map<std::string, double> v;
        for (int p = 0; p < space.parameterCount(); ++p) {
            const std::int64_t value = space.value(c, p).i;
            entry[space.parameterName(p)] = value;
            key += (key.empty() ? "" : ",") + std::to_string(value);
            v[space.parameterName(p)] = double(value);
        }
        const double tile = std::log2(v["BLOCK_M"] * v["BLOCK_N"] / (128.0 * 128.0));
        const double perThread = std::log2(v["THREAD_M"] * v["THREAD_N"] / 64.0);
        double eff = std::exp(-0.1 * tile * tile) * std::exp(-0.15 * perThread * perThread);
        eff *= (v["VEC"] == 4 ? 1.0 : v["VEC"] == 2 ? 0.93 : 0.85) * (v["STAGES"] == 2 ? 1.0 : 0.92);
        eff *= 1.0 + 1e-5 * double((i * 7919) % 10007); // distinct times
        const double ms = 2 * m * n * k / (50e12 * eff) * 1e3;
        if (v["THREAD_M"] * v["THREAD_N"] >= 256) {
            entry["time"] = "CompilationFailedConfig";
        } else if (i % 97 == 5) {
            entry["time"] = "RuntimeFailedConfig";
        } else {
            entry["time"] = ms;
            entry["times"] = {ms * 0.999, ms, ms * 1.001};
            if (rec.bestConfig.is_null() || ms < rec.bestMs) {
                rec.bestMs = ms;
                rec.bestConfig = Json::object();
                for (int p = 0; p < space.parameterCount(); ++p)
                    rec.bestConfig[space.parameterName(p)] = space.value(c, p).i;
            }
        }
        entry["compile_time"] = 300.0 + double(i % 200);
        entry["verification_time"] = 0;
        entry["benchmark_time"] = 25.0 + ms * 30;
        entry["strategy_time"] = 0;
        entry["framework_time"] = 0.4;
        entry["timestamp"] = "2026-11-20 12:00:00.000000+00:00";
        cache[key] = entry;
    }
    doc["cache"] = cache;
    rec.text = doc.dump();
    rec.configs = space.size();
    return rec;
}

Json showJson(const QString& db, const QStringList& extra = {}) {
    const Run r = cli(QStringList{"show", db, "--json"} + extra);
    if (r.status != 0)
        qWarning("%s", qPrintable(describe(r)));
    return Json::parse(r.out.toStdString(), nullptr, false);
}

// The space indices of a session's results in the order they were stored (read directly).
/// The process of rank `rank` of an MPI job whose command line names `marker` (0: none).
qint64 mpiRankProcess(int rank, const QString& marker) {
    const QByteArray wanted = "OMPI_COMM_WORLD_RANK=" + QByteArray::number(rank);
    for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        bool number = false;
        const qint64 pid = entry.toLongLong(&number);
        if (!number)
            continue;
        QFile cmdline("/proc/" + entry + "/cmdline");
        QFile environ("/proc/" + entry + "/environ");
        if (!cmdline.open(QIODevice::ReadOnly) || !environ.open(QIODevice::ReadOnly))
            continue;
        if (!cmdline.readAll().split('\0').contains(marker.toUtf8()))
            continue;
        if (environ.readAll().split('\0').contains(wanted))
            return pid;
    }
    return 0;
}

/// mpirun for the MPI tests; "" with the reason in `why` when the CLI has no MPI or there is no mpirun.
QString mpirunForTests(const char** why) {
#ifndef TILESCOPE_HAVE_MPI
    *why = "tilescope-cli is built without MPI (libopenmpi-dev)";
    return {};
#else
    const QString mpirun = QStandardPaths::findExecutable(QStringLiteral("mpirun"));
    if (mpirun.isEmpty())
        *why = "no mpirun (Debian: openmpi-bin)";
    return mpirun;
#endif
}

/// Lets mpirun start ranks as root (a container's user).
void allowRootRanks(QProcess& job) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
    job.setProcessEnvironment(env);
}

/// Waits until the newest session of `db` holds `count` results (committed), `process` ended or
/// `ms` passed; returns how many it holds.
std::uint64_t waitForResults(const QString& db, std::uint64_t count, const QProcess& process, int ms) {
    QElapsedTimer clock;
    clock.start();
    std::uint64_t seen = 0;
    while (seen < count && clock.elapsed() < ms && process.state() == QProcess::Running) {
        QTest::qWait(20);
        try {
            const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
            const auto sessions = store.sessions();
            if (!sessions.empty())
                seen = store.resultCount(sessions.back().id);
        } catch (const std::exception&) {
            // not created yet
        }
    }
    return seen;
}

/// Waits up to `ms` for `job` to end: "" when it did; else it is stopped (SIGTERM, which mpirun
/// passes on to its ranks, then SIGKILL) and the message says what it printed.
QString unfinished(QProcess& job, int ms) {
    if (job.waitForFinished(ms))
        return {};
    job.terminate();
    if (!job.waitForFinished(10000)) {
        job.kill();
        job.waitForFinished(5000);
    }
    return QStringLiteral("still running after %1 s; it printed:\n").arg(ms / 1000) +
           QString::fromUtf8(job.readAllStandardOutput() + job.readAllStandardError());
}

/// What a session stored, per config: status, time and message.
std::map<std::string, std::string> resultsByConfig(const QString& db) {
    const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
    std::map<std::string, std::string> byConfig;
    for (const ResultRecord& r : store.results(store.sessions().back().id))
        byConfig[configKey(r.config)] = std::string(statusName(r.status())) + " " + std::to_string(r.timeMs());
    return byConfig;
}

std::vector<std::uint64_t> storedOrder(const QString& db) {
    const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
    std::vector<std::uint64_t> out;
    for (const ResultRecord& r : store.results(store.sessions().back().id))
        out.push_back(r.spaceIndex.value_or(~std::uint64_t(0)));
    return out;
}

} // namespace

class TestCliTune : public QObject {
    Q_OBJECT

private slots:
    void launchWarningBeforeTuning() {
        // Kernel Tuner's convolution with a GlobalSize 64 times its grid in each dimension, read as
        // blocks: the launch follows ProblemSize over the block size as Kernel Tuner's does, and
        // space, analyze and tune say that GlobalSize disagrees before any work.
        QTemporaryDir dir;
        const QString path = writeConvolutionWithGlobalSize(dir.filePath(QStringLiteral("conv64.json")), 64);
        const QString expected =
            QStringLiteral("/KernelSpecification/GlobalSize: GlobalSize gives 4,096 times more blocks");
        const Run space = cli({"space", path, "--count"});
        QCOMPARE(space.status, 0);
        QVERIFY2(space.err.contains(expected), qPrintable(space.err));
        const Run tune = cli({"tune", path, "--backend", "analysis:sm_90", "--budget", "1", "--db",
                              dir.filePath(QStringLiteral("c.db"))});
        QVERIFY2(tune.err.contains(expected), qPrintable(tune.err));
        QVERIFY2(tune.err.startsWith(QStringLiteral("warning: ")), qPrintable(tune.err)); // before any work
        QCOMPARE(tune.status, 0);                                                         // a warning, not an error
        // As Kernel Tuner reads the file, GlobalSize aside, it warns of nothing.
        writeConvolutionWithGlobalSize(path, 1);
        const Run fixed = cli({"space", path, "--count"});
        QVERIFY2(!fixed.err.contains(QStringLiteral("warning")), qPrintable(fixed.err));
    }

    void help() {
        const Run top = cli({"--help"});
        for (const char* command : {"tune", "show", "export", "import"})
            QVERIFY2(top.out.contains(command), qPrintable(top.out));
        const Run tune = cli({"tune", "--help"});
        QCOMPARE(tune.status, 0);
        for (const char* flag : {"--backend", "--strategy", "--budget", "--fraction", "--max-time", "--seed", "--db",
                                 "--resume", "--shape", "--devices", "--metrics", "--config-timeout"})
            QVERIFY2(tune.out.contains(flag), flag);
        QVERIFY(!tune.out.contains("replay-delay")); // a testing aid, hidden
        const Run exp = cli({"export", "--help"});
        QVERIFY(exp.out.contains("t4") && exp.out.contains("triton") && exp.out.contains("cpp"));
    }

    void showSaysWhyCountersAreMissing() {
        // Counters go to the configs that rank when measured: a listed config without them is
        // named in a note, with the option that profiles every config.
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("leaders.db"));
        const Run tuned =
            cli({"tune", kSgemm, "--shape", "1", "--backend",
                 "replay:" + QStringLiteral(TILESCOPE_SOURCE_DIR "/resources/demo/sgemm-h200-2048.t4.json.gz"),
                 "--strategy", "random", "--seed", "3", "--budget", "12", "--db", db});
        QVERIFY2(tuned.status == 0, qPrintable(describe(tuned)));
        const Run whole = cli({"show", db, "--top", "12"});
        QVERIFY2(!whole.out.contains(QStringLiteral("without counters")), qPrintable(whole.out));
        {
            ResultStore store = ResultStore::open(db.toStdString());
            const std::vector<ResultRecord> results = store.results(store.sessions().front().id);
            int cleared = 0;
            for (const ResultRecord& r : results) {
                if (!r.ok() || r.measurement.metrics.empty() || cleared == 3)
                    continue;
                Measurement m = r.measurement;
                m.metrics.clear();
                store.updateVerdict(r.id, m, r.objective, 0);
                ++cleared;
            }
            QCOMPARE(cleared, 3);
        }
        const Run partial = cli({"show", db, "--top", "12"});
        QCOMPARE(partial.status, 0);
        QVERIFY2(partial.out.contains(QStringLiteral("note: 3 configs listed without counters")) &&
                     partial.out.contains(QStringLiteral("all-configs")),
                 qPrintable(partial.out));
    }

    void showFitsOneHundredTwentyColumns() {
        // Long values as users meet them: a recording's absolute path as the backend, parameter
        // values of 60 characters, a failed session's message. show's text keeps every line within
        // 120 columns (shortening in the middle, wrapping sentences, tables continued below), and
        // --json has each value whole.
        QTemporaryDir dir;
        const QString folder = dir.filePath(QStringLiteral("recordings-of-the-h200-runs/from-the-laboratory-machine"));
        QVERIFY(QDir().mkpath(folder));
        const QString recording = folder + QStringLiteral("/sgemm-h200-2048.t4.json.gz");
        QVERIFY(
            QFile::copy(QStringLiteral(TILESCOPE_SOURCE_DIR "/resources/demo/sgemm-h200-2048.t4.json.gz"), recording));
        const QString db = dir.filePath(QStringLiteral("wide.db"));
        const Run tuned = cli({"tune", kSgemm, "--shape", "1", "--backend", "replay:" + recording, "--strategy",
                               "random", "--seed", "7", "--budget", "20", "--db", db});
        QVERIFY2(tuned.status == 0, qPrintable(describe(tuned)));

        // A Kernel Tuner cache whose second parameter names a variant in 60 characters.
        const std::string variant = "row_major_tiles_padded_by_one_element_with_double_buffering";
        Json cache = Json::parse(readFile(kTinyCache));
        Json longer = Json::object();
        for (auto& [key, entry] : cache["cache"].items()) {
            Json e = Json::object();
            e["BLOCK"] = entry["BLOCK"];
            e["LAYOUT"] =
                variant + (entry["ITEMS"].get<int>() == 1 ? "" : "_v" + std::to_string(entry["ITEMS"].get<int>()));
            for (const char* field : {"time", "times", "compile_time", "verification_time", "benchmark_time",
                                      "strategy_time", "framework_time", "timestamp"})
                if (entry.contains(field))
                    e[field] = entry[field];
            longer[e["BLOCK"].dump() + "," + e["LAYOUT"].get<std::string>()] = e;
        }
        cache["tune_params_keys"] = {"BLOCK", "LAYOUT"};
        Json layouts = Json::array();
        for (const int items : {1, 2, 4, 8})
            layouts.push_back(variant + (items == 1 ? "" : "_v" + std::to_string(items)));
        cache["tune_params"] = Json{{"BLOCK", cache["tune_params"]["BLOCK"]}, {"LAYOUT", layouts}};
        cache["cache"] = longer;
        const QString longCache = dir.filePath(QStringLiteral("layouts_ktcache.json"));
        writeFile(longCache, cache.dump());
        const Run imported = cli({"import", longCache, "--db", db});
        QVERIFY2(imported.status == 0, qPrintable(describe(imported)));

        // A failed session: a kernel that never compiles, analysed for sm_90, stops with its reason.
        writeFile(dir.filePath(QStringLiteral("typo.cu")), "extern \"C\" __global__ void typo(float* out) {\n"
                                                           "    out[threadIdx.x] = weight[BLOCK % 3];\n"
                                                           "}\n");
        writeFile(dir.filePath(QStringLiteral("typo.json")),
                  R"({"ConfigurationSpace": {"TuningParameters": [
                        {"Name": "BLOCK", "Type": "int", "Values": "[32, 64, 128, 256]"},
                        {"Name": "UNROLL", "Type": "int", "Values": "[1, 2, 4]"}]},
                      "KernelSpecification": {"Language": "CUDA", "KernelName": "typo", "KernelFile": "typo.cu",
                        "GlobalSize": {"X": "1"}, "LocalSize": {"X": "BLOCK"}}})");
        const Run failed =
            cli({"tune", dir.filePath(QStringLiteral("typo.json")), "--backend", "analysis:sm_90", "--db", db});
        QCOMPARE(failed.status, 2);

        const auto checkWidth = [](const Run& r) {
            QVERIFY2(r.status == 0, qPrintable(describe(r)));
            for (const QString& line : r.out.split(QLatin1Char('\n')))
                QVERIFY2(line.size() <= 120, qPrintable(QStringLiteral("%1 columns: %2").arg(line.size()).arg(line)));
        };
        // The replay (session 1): the path shortened in the table and, past a line, in its own
        // header line from the front (the folders nearest the file and its name stay), the
        // metrics in a block of their own below the first, led by the rank again.
        const Run replay = cli({"show", db, "--session", "1"});
        checkWidth(replay);
        QVERIFY2(replay.out.contains(QStringLiteral("replay:...")), qPrintable(replay.out));
        QVERIFY2(replay.out.contains(QStringLiteral("  backend     replay:.../recordings-of-the-h200-runs/"
                                                    "from-the-laboratory-machine/sgemm-h200-2048.t4.json.gz\n")),
                 qPrintable(replay.out));
        QVERIFY2(replay.out.contains(QStringLiteral("\n  rank  ")), qPrintable(replay.out));
        QVERIFY2(replay.out.count(QStringLiteral("  rank  ")) >= 2, qPrintable(replay.out));
        QVERIFY2(replay.out.contains(QStringLiteral("DRAM bytes read")), qPrintable(replay.out));
        QVERIFY2(replay.out.contains(QStringLiteral("note: ... marks values shortened to fit 120 columns")),
                 qPrintable(replay.out));

        // The layouts (session 2): the values shortened in their column, whole in --json.
        const Run layoutsText = cli({"show", db, "--session", "2"});
        checkWidth(layoutsText);
        QVERIFY2(layoutsText.out.contains(QRegularExpression(QStringLiteral("row_major_\\S+\\.\\.\\.\\S+_v4  ok"))),
                 qPrintable(layoutsText.out));
        const Run layoutsJson = cli({"show", db, "--session", "2", "--json"});
        QCOMPARE(layoutsJson.status, 0);
        std::set<std::string> values;
        for (const Json& r : Json::parse(layoutsJson.out.toStdString()))
            values.insert(r["config"]["LAYOUT"].get<std::string>());
        QVERIFY(values.count(variant) == 1 && values.count(variant + "_v8") == 1);

        // The failed session (the newest): its message wrapped, every word of it there.
        const Run failedText = cli({"show", db});
        checkWidth(failedText);
        QVERIFY2(failedText.out.contains(QStringLiteral("  state       failed: ")), qPrintable(failedText.out));
        QString flowing = failedText.out;
        flowing.replace(QRegularExpression(QStringLiteral("\n {14}")), QStringLiteral(" "));
        QVERIFY2(flowing.contains(QStringLiteral("every config failed the same way, whatever its parameters, so the "
                                                 "problem or its kernel is at fault")),
                 qPrintable(failedText.out));
        QVERIFY2(flowing.contains(QStringLiteral("identifier \"weight\" is undefined")), qPrintable(failedText.out));

        // The sessions alone, and in JSON with the whole backend, state and message.
        const Run sessions = cli({"show", db, "--sessions"});
        checkWidth(sessions);
        QVERIFY2(sessions.out.startsWith(QStringLiteral("Sessions (3)\n")), qPrintable(sessions.out));
        QVERIFY(!sessions.out.contains(QStringLiteral("Top ")));
        const Run sessionsJson = cli({"show", db, "--sessions", "--json"});
        QCOMPARE(sessionsJson.status, 0);
        const Json list = Json::parse(sessionsJson.out.toStdString());
        QCOMPARE(list.size(), std::size_t(3));
        QCOMPARE(list[0]["backend"].get<std::string>(), "replay:" + recording.toStdString());
        QCOMPARE(list[0]["results"].get<int>(), 20);
        QCOMPARE(list[2]["state"].get<std::string>(), std::string("failed"));
        QVERIFY(list[2]["message"].get<std::string>().find("every config failed the same way") != std::string::npos);
        QCOMPARE(list[0]["provenance"]["devices"][0]["arch"].get<std::string>(), std::string("sm_90"));

        // The Pareto front's table fits too.
        const Run front = cli({"show", db, "--session", "1", "--pareto", "time,registers"});
        checkWidth(front);
    }

    void cudaBackendWithoutADriver() {
        // This machine (and CI) has no NVIDIA driver: the CUDA backend says so and points at what
        // works without one; nothing is stored. With a driver, the worker would measure instead.
        if (QFileInfo::exists(QStringLiteral("/proc/driver/nvidia/version")))
            QSKIP("an NVIDIA driver is installed here");
        QTemporaryDir dir;
        const QString db = dir.filePath("cuda.db");
        const Run run = cli({"tune", kSgemm, "--backend", "cuda", "--db", db});
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("no NVIDIA driver"), qPrintable(describe(run)));
        QVERIFY2(!QFileInfo::exists(db), "a run that stored nothing left its new database behind");
        QVERIFY2(run.err.contains("--backend replay:FILE") && run.err.contains("tilescope-cli analyze"),
                 qPrintable(describe(run)));
        const Run bad = cli({"tune", kSgemm, "--backend", "cuda", "--devices", "0,x", "--db", db});
        QCOMPARE(bad.status, 2);
        QVERIFY2(bad.err.contains("'x' is not a device number"), qPrintable(describe(bad)));
    }

    // show --pareto on the H200 recording: the front of time and registers, and of time and the
    // TFLOP/s objective, equals a brute-force front computed here from every result show --json
    // gives; a quantity the session lacks is exit 2 naming what it has.
    void paretoFrontOfARecording() {
        const QString demo = QStringLiteral(TILESCOPE_SOURCE_DIR "/resources/demo/sgemm-h200-2048.t4.json.gz");
        const Run all = cli({"show", demo, "--json"});
        QVERIFY2(all.status == 0, qPrintable(describe(all)));
        const Json results = Json::parse(all.out.toStdString());
        for (const auto& [pair, objective] :
             {std::pair{QStringLiteral("time,registers"), false}, std::pair{QStringLiteral("time,TFLOP/s"), true}}) {
            std::vector<std::pair<double, double>> points;
            std::vector<std::string> configs;
            for (const Json& r : results) {
                if (r["status"] != "ok")
                    continue;
                const double second = objective ? -r["objective"]["value"].get<double>() : r["registers"].get<double>();
                points.push_back({r["time_ms"].get<double>(), second});
                configs.push_back(r["config"].dump());
            }
            std::set<std::string> expected;
            for (std::size_t i = 0; i < points.size(); ++i) {
                bool dominated = false;
                for (std::size_t j = 0; j < points.size() && !dominated; ++j)
                    dominated = points[j].first <= points[i].first && points[j].second <= points[i].second &&
                                (points[j].first < points[i].first || points[j].second < points[i].second);
                if (!dominated)
                    expected.insert(configs[i]);
            }
            const Run front = cli({"show", demo, "--pareto", pair, "--json"});
            QVERIFY2(front.status == 0, qPrintable(describe(front)));
            std::set<std::string> got;
            double lastTime = 0;
            for (const Json& r : Json::parse(front.out.toStdString())) {
                got.insert(r["config"].dump());
                QVERIFY(r["time_ms"].get<double>() >= lastTime); // by time, the fastest first
                lastTime = r["time_ms"].get<double>();
            }
            // TFLOP/s is the same work over the time: one config is fastest and highest at once.
            QVERIFY2(objective ? expected.size() == 1 : expected.size() > 2, qPrintable(pair));
            QVERIFY2(got == expected, qPrintable(pair + QStringLiteral(": ") + QString::number(got.size()) +
                                                 QStringLiteral(" vs ") + QString::number(expected.size())));
        }
        const Run text = cli({"show", demo, "--pareto", "time,registers"});
        QVERIFY2(text.status == 0 && text.out.contains("the Pareto front of time and registers"),
                 qPrintable(describe(text)));
        const Run energy = cli({"show", demo, "--pareto", "time,energy"});
        QCOMPARE(energy.status, 2);
        QVERIFY2(energy.err.contains("has 'energy' (it has: time, TFLOP/s, registers"), qPrintable(energy.err));
        const Run one = cli({"show", demo, "--pareto", "time"});
        QCOMPARE(one.status, 2);
        QVERIFY2(one.err.contains("give two quantities"), qPrintable(one.err));
    }

    void importMergesTasksOnce() {
        // Four tasks of a job array, each with its own database (here: replays of two seeds, two
        // of them the same task run twice), merged into one: each distinct session once, with its
        // provenance and results as they were.
        QTemporaryDir dir;
        QStringList tasks;
        for (int task = 0; task < 4; ++task) {
            const QString db = dir.filePath(QStringLiteral("task%1.db").arg(task));
            const Run run = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--strategy", "random", "--seed",
                                 QString::number(task % 2), "--budget", "20", "--db", db});
            QVERIFY2(run.status == 0, qPrintable(describe(run)));
            tasks << db;
        }
        const QString merged = dir.filePath("merged.db");
        const Run first = cli(QStringList{"import"} + tasks + QStringList{"--db", merged});
        QVERIFY2(first.status == 0, qPrintable(describe(first)));
        QVERIFY2(first.out.contains("2 sessions imported, 2 already there"), qPrintable(first.out));
        const Run again = cli({"import", tasks[1], "--db", merged});
        QVERIFY2(again.out.contains("the same as session 2 of"), qPrintable(again.out));
        const Run forced = cli({"import", tasks[1], "--db", merged, "--keep-duplicates"});
        QVERIFY2(forced.out.contains("as session 3"), qPrintable(forced.out));

        ResultStore out = ResultStore::open(merged.toStdString(), StoreMode::ReadOnly);
        const std::vector<SessionInfo> sessions = out.sessions();
        QCOMPARE(sessions.size(), std::size_t(3));
        for (int task = 0; task < 2; ++task) {
            ResultStore in = ResultStore::open(tasks[task].toStdString(), StoreMode::ReadOnly);
            const SessionInfo source = in.sessions().front();
            const SessionInfo& copy = sessions[static_cast<std::size_t>(task)];
            QCOMPARE(copy.provenanceJson, source.provenanceJson);
            QCOMPARE(copy.seed, source.seed);
            QCOMPARE(copy.startedAt, source.startedAt);
            const auto a = in.results(source.id, true);
            const auto b = out.results(copy.id, true);
            QCOMPARE(a.size(), b.size());
            for (std::size_t i = 0; i < a.size(); ++i) {
                QCOMPARE(b[i].config, a[i].config);
                QCOMPARE(b[i].measurement.time, a[i].measurement.time);
            }
        }
    }

    void eachBinaryCompiledOnce() {
        // tests/data/tuning/tiny.cu never mentions NUM_WARPS: configs that differ only in it are one
        // binary, compiled once even when their compiles are submitted together; BLOCK, ITEMS and
        // NUM_STAGES reach the code, so each triple is a binary of its own. The summary says how
        // many binaries were compiled; a second session on the same cache compiles none.
        QTemporaryDir dir;
        const QString cache = dir.filePath("cache");
        const Run cold = cli({"tune", kTiny, "--backend", "analysis:sm_90", "--shape", "1", "--cache-dir", cache,
                              "--db", dir.filePath("cold.db")});
        QVERIFY2(cold.status == 0, qPrintable(describe(cold)));
        const QRegularExpression line("compiled (\\d+) binar(?:y|ies) for (\\d+) configs");
        const QRegularExpressionMatch m = line.match(cold.out);
        QVERIFY2(m.hasMatch(), qPrintable(cold.out));
        ResultStore store = ResultStore::open(dir.filePath("cold.db").toStdString(), StoreMode::ReadOnly);
        std::set<std::tuple<double, double, double>> binaries;
        std::size_t configs = 0;
        for (const ResultRecord& r : store.results(store.sessions().front().id)) {
            ++configs;
            // Compiled (configs over the device's limits are pruned before any compile).
            if (r.status() != ResultStatus::CompileError && r.measurement.staticInfo)
                binaries.insert({r.config.at("BLOCK").asNumber(), r.config.at("ITEMS").asNumber(),
                                 r.config.at("NUM_STAGES").asNumber()});
        }
        QCOMPARE(m.captured(2).toULongLong(), static_cast<unsigned long long>(configs));
        // Every distinct binary compiled exactly once (the session's NVRTC compiles, the check for
        // parameters that do not change the code included), each one entry of the cache.
        QCOMPARE(m.captured(1).toULongLong(), static_cast<unsigned long long>(binaries.size()));
        QVERIFY(binaries.size() < configs);
        std::size_t entries = 0;
        for (const auto& e : std::filesystem::recursive_directory_iterator(cache.toStdString()))
            entries += e.is_regular_file() ? 1 : 0;
        QCOMPARE(entries, binaries.size());
        const Run warm = cli({"tune", kTiny, "--backend", "analysis:sm_90", "--shape", "1", "--cache-dir", cache,
                              "--db", dir.filePath("warm.db")});
        QVERIFY2(warm.out.contains("compiled 0 binaries for " + m.captured(2) + " configs"), qPrintable(warm.out));

        // Parts of a sweep on the analysis backend (CPU nodes of a job array) warm a shared cache:
        // the whole sweep afterwards compiles nothing.
        const QString shared = dir.filePath("shared");
        for (const char* part : {"1/2", "2/2"}) {
            const Run r = cli({"tune", kTiny, "--backend", "analysis:sm_90", "--shape", "1", "--part", part,
                               "--cache-dir", shared, "--db", dir.filePath(QStringLiteral("part%1.db").arg(part[0]))});
            QVERIFY2(r.status == 0, qPrintable(describe(r)));
        }
        const Run after = cli({"tune", kTiny, "--backend", "analysis:sm_90", "--shape", "1", "--cache-dir", shared,
                               "--db", dir.filePath("after.db")});
        QVERIFY2(after.out.contains("compiled 0 binaries for " + m.captured(2) + " configs"), qPrintable(after.out));

        // A budget of 12: the check for parameters that do not change the code compiles configs the
        // session never evaluates. The line counts the binaries of the 12 apart from those, and the
        // two together are every entry the cold cache got.
        const QString some = dir.filePath("some");
        const Run budget = cli({"tune", kTiny, "--backend", "analysis:sm_90", "--shape", "1", "--strategy", "random",
                                "--budget", "12", "--seed", "1", "--cache-dir", some, "--db", dir.filePath("some.db")});
        QVERIFY2(budget.status == 0, qPrintable(describe(budget)));
        const QRegularExpressionMatch split =
            QRegularExpression(
                "compiled (\\d+) binar(?:y|ies) for 12 configs \\(the rest from the cache\\), (\\d+) more "
                "for configs inspected, not evaluated;")
                .match(budget.out);
        QVERIFY2(split.hasMatch(), qPrintable(budget.out));
        ResultStore someStore = ResultStore::open(dir.filePath("some.db").toStdString(), StoreMode::ReadOnly);
        std::set<std::tuple<double, double, double>> ofTheTwelve;
        for (const ResultRecord& r : someStore.results(someStore.sessions().front().id))
            ofTheTwelve.insert({r.config.at("BLOCK").asNumber(), r.config.at("ITEMS").asNumber(),
                                r.config.at("NUM_STAGES").asNumber()});
        QCOMPARE(split.captured(1).toULongLong(), static_cast<unsigned long long>(ofTheTwelve.size()));
        QVERIFY(split.captured(2).toULongLong() > 0);
        std::size_t someEntries = 0;
        for (const auto& e : std::filesystem::recursive_directory_iterator(some.toStdString()))
            someEntries += e.is_regular_file() ? 1 : 0;
        QCOMPARE(static_cast<unsigned long long>(someEntries),
                 split.captured(1).toULongLong() + split.captured(2).toULongLong());
    }

    void energyObjective() {
        // A Kernel Tuner cache with nvml_energy (power growing with NUM_WARPS, so the fastest config
        // is not the most frugal): --objective energy ranks by the problem's work per joule (GB/J).
        QTemporaryDir dir;
        nlohmann::json cache = nlohmann::json::parse(readFile(kTinyCache));
        for (auto& [key, entry] : cache["cache"].items())
            if (entry["time"].is_number())
                entry["nvml_energy"] =
                    entry["time"].get<double>() * 1e-3 * (100.0 + 150.0 * entry["NUM_WARPS"].get<int>());
        const QString recording = dir.filePath("energy.json");
        writeFile(recording, cache.dump());
        const QString db = dir.filePath("e.db");
        const Run run = cli({"tune", kTiny, "--backend", "replay:" + recording, "--objective", "energy", "--db", db});
        QVERIFY2(run.status == 0, qPrintable(describe(run)));
        QVERIFY2(run.out.contains("GB/J") || run.err.contains("GB/J"), qPrintable(describe(run)));
        ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        const std::int64_t session = store.sessions().front().id;
        const std::optional<ResultRecord> best = store.best(session);
        QVERIFY(best && best->objective);
        double leastEnergy = 1e300, fastest = 1e300, bestEnergy = 0, work = 0;
        for (const ResultRecord& r : store.results(session)) {
            if (!r.ok())
                continue;
            const double e = *energyOf(r.measurement.metrics);
            leastEnergy = std::min(leastEnergy, e);
            fastest = std::min(fastest, r.timeMs());
            // The same work (bytes, GB) in every config: objective x energy is that work.
            if (work == 0)
                work = *r.objective * e;
            QVERIFY(std::abs(*r.objective * e - work) < 1e-9 * work);
        }
        bestEnergy = *energyOf(best->measurement.metrics);
        QCOMPARE(bestEnergy, leastEnergy);
        QVERIFY2(best->timeMs() > fastest, "the energy ranking should differ from the time ranking here");

        // Two objectives: nsga2 searches (a budget that may end early), and the summary gives the front.
        const Run both = cli({"tune", kTiny, "--backend", "replay:" + recording, "--objective", "time,energy",
                              "--budget", "60", "--db", dir.filePath("both.db")});
        QVERIFY2(both.status == 0, qPrintable(describe(both)));
        QVERIFY2(both.err.contains("strategy nsga2"), qPrintable(describe(both)));
        QVERIFY2(both.out.contains(QRegularExpression("front +\\d+ of \\d+ configs trade time for energy")),
                 qPrintable(describe(both)));
        const Run twice = cli({"tune", kTiny, "--backend", "replay:" + recording, "--objective", "energy,energy",
                               "--db", dir.filePath("twice.db")});
        QCOMPARE(twice.status, 2);

        // Energy that cannot be had is bad input, before any work: a recording without it, or no GPU.
        const Run none = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--objective", "energy", "--db",
                              dir.filePath("none.db")});
        QCOMPARE(none.status, 2);
        QVERIFY2(none.err.contains("--objective") && none.err.contains("has none"), qPrintable(none.err));
        const Run analysis = cli(
            {"tune", kTiny, "--backend", "analysis:sm_90", "--objective", "edp", "--db", dir.filePath("analysis.db")});
        QCOMPARE(analysis.status, 2);
        QVERIFY2(analysis.err.contains("only compiles"), qPrintable(analysis.err));
        QVERIFY(!QFile::exists(dir.filePath("analysis.db")));
        const Run bad = cli({"tune", kTiny, "--backend", "replay:" + recording, "--objective", "joules", "--db",
                             dir.filePath("bad.db")});
        QCOMPARE(bad.status, 2);
        QVERIFY2(bad.err.contains("time, energy or edp"), qPrintable(bad.err));
    }

    void remoteWorkersThroughSsh() {
        // ssh://USER@HOST/DEVICES starts each worker through ssh, speaking over its stdin and
        // stdout. A stand-in for ssh that runs the command here (tests/data/remote/fake-ssh) shows
        // the command line and that the worker's hello crosses the connection: without a driver
        // its reason, with one a real session.
        QTemporaryDir dir;
        const QString log = dir.filePath("ssh.log");
        const QString worker = QFileInfo(QStringLiteral(TILESCOPE_CLI)).absolutePath() + "/tilescope-worker";
        qputenv("TILESCOPE_SSH", QByteArray(TILESCOPE_SOURCE_DIR "/tests/data/remote/fake-ssh"));
        qputenv("FAKE_SSH_LOG", log.toUtf8());
        const QString groups = dir.filePath("groups.log");
        qputenv("FAKE_SSH_GROUPS", groups.toUtf8());
        const QString db = dir.filePath("remote.db");
        const Run run = cli({"tune", kTiny, "--backend", "ssh://tuner@gpu-box:2222/0", "--remote-worker", worker,
                             "--budget", "3", "--strategy", "random", "--metrics", "none", "--db", db});
        qunsetenv("TILESCOPE_SSH");
        qunsetenv("FAKE_SSH_LOG");
        qunsetenv("FAKE_SSH_GROUPS");
        const QString calls = QString::fromStdString(readFile(log));
        QVERIFY2(calls.startsWith("-T -o BatchMode=yes -p 2222 tuner@gpu-box " + worker + " --device 0 --stdio"),
                 qPrintable(calls));
        // ssh runs in a process group of its own: Ctrl-C in the terminal interrupts the engine,
        // which stops after the results in hand, and not the connection to a config being measured.
        const QStringList group = QString::fromStdString(readFile(groups)).split(' ');
        QVERIFY2(group.size() == 3, qPrintable(group.join(' ')));
        QCOMPARE(group[1], group[0]);
        QVERIFY2(group[2].trimmed() != group[1], qPrintable(group.join(' ')));
        if (QFileInfo::exists(QStringLiteral("/proc/driver/nvidia/version"))) {
            QVERIFY2(run.status == 0, qPrintable(describe(run)));
            QVERIFY2(run.out.contains("backend     ssh://tuner@gpu-box:2222/0"), qPrintable(run.out));
        } else {
            QCOMPARE(run.status, 2);
            QVERIFY2(run.err.contains("device 0: no NVIDIA driver"), qPrintable(describe(run)));
        }

        // No worker on the far side: the shell's words and what to do.
        qputenv("TILESCOPE_SSH", QByteArray(TILESCOPE_SOURCE_DIR "/tests/data/remote/fake-ssh"));
        const Run noWorker = cli({"tune", kTiny, "--backend", "ssh://tuner@gpu-box/0", "--remote-worker",
                                  dir.filePath("no-such-worker"), "--db", db});
        qunsetenv("TILESCOPE_SSH");
        QCOMPARE(noWorker.status, 2);
        QVERIFY2(noWorker.err.contains("give its path there with --remote-worker"), qPrintable(describe(noWorker)));

        // An unreachable host is the launcher's own message; a bad spec is refused before anything runs.
        qputenv("TILESCOPE_SSH", "false");
        const Run unreachable = cli({"tune", kTiny, "--backend", "ssh://tuner@gpu-box/0", "--db", db});
        qunsetenv("TILESCOPE_SSH");
        QCOMPARE(unreachable.status, 2);
        QVERIFY2(unreachable.err.contains("before its hello"), qPrintable(describe(unreachable)));
        for (const char* bad :
             {"ssh://", "ssh://tuner@/0", "ssh://host:99999/0", "ssh://-oProxyCommand=x/0", "ssh://host/0,0"}) {
            const Run refused = cli({"tune", kTiny, "--backend", bad, "--db", db});
            QCOMPARE(refused.status, 2);
            QVERIFY2(refused.err.contains("--backend"), qPrintable(describe(refused)));
        }
        const Run both = cli({"tune", kTiny, "--backend", "ssh://host/0", "--launcher", "srun", "--db", db});
        QCOMPARE(both.status, 2);
        QVERIFY2(both.err.contains("give one way to reach the GPUs"), qPrintable(describe(both)));
    }

    // Every backend the parser knows, the CLI runs: analysis:ARCH compiles each config for the arch
    // and records its static info, measuring nothing (no GPU needed).
    void analysisBackend() {
        QTemporaryDir dir;
        const QString db = dir.filePath("static.db");
        const Run run = cli({"tune", kSgemm, "--backend", "analysis:sm_90", "--budget", "3", "--strategy", "random",
                             "--db", db, "--shape", "1"});
        QVERIFY2(run.status == 0, qPrintable(describe(run)));
        QVERIFY2(run.out.contains("analysis:sm_90"), qPrintable(run.out));
        const Json results = showJson(db);
        QCOMPARE(results.size(), std::size_t(3));
        for (const auto& r : results)
            QVERIFY2(r["registers"].get<int>() > 0, r.dump().c_str());
        // The devices go with cuda only, and once.
        const Run devices = cli({"tune", kSgemm, "--backend", "analysis:sm_90", "--devices", "1", "--db", db});
        QCOMPARE(devices.status, 2);
        QVERIFY2(devices.err.contains("--devices"), qPrintable(describe(devices)));
        const Run unknown = cli({"tune", kSgemm, "--backend", "opencl", "--db", db});
        QCOMPARE(unknown.status, 2);
        QVERIFY2(unknown.err.contains("analysis:ARCH"), qPrintable(describe(unknown)));
    }

    // A session on the analysis backend is a session of data: its configs are analysed, never
    // pruned; the summary names the best by occupancy (or the quantity asked for), show ranks them
    // so, and export writes them.
    void analysisSessionIsData() {
        QTemporaryDir dir;
        const QString db = dir.filePath("static.db");
        const Run run = cli({"tune", kSgemm, "--backend", "analysis:sm_90", "--budget", "12", "--strategy", "random",
                             "--db", db, "--shape", "1"});
        QVERIFY2(run.status == 0, qPrintable(describe(run)));
        QVERIFY2(run.out.contains("results     12 of 12 configs: analysed 12"), qPrintable(run.out));
        QVERIFY2(!run.out.contains("no config ran correctly"), qPrintable(run.out));
        QVERIFY2(run.err.contains("nothing was timed: the analysed configs rank by occupancy"), qPrintable(run.err));
        const Json results = showJson(db);
        QCOMPARE(results.size(), std::size_t(12));
        for (const auto& r : results) {
            QCOMPARE(r["status"].get<std::string>(), std::string("analysed"));
            QVERIFY2(r["time_ms"].is_null(), r.dump().c_str());
        }
        // show --json lists the best first: the highest occupancy, then the fewest spilled bytes.
        for (std::size_t i = 1; i < results.size(); ++i) {
            const double a = results[i - 1]["occupancy"].get<double>(), b = results[i]["occupancy"].get<double>();
            const auto spills = [](const Json& r) {
                return r["spill_stores"].get<long long>() + r["spill_loads"].get<long long>();
            };
            QVERIFY2(a > b || (a == b && spills(results[i - 1]) <= spills(results[i])), results.dump().c_str());
        }
        const QRegularExpression best(
            QStringLiteral("best        occupancy (\\d+) %.*\\(by occupancy; not timed\\)  BLOCK_M="));
        const QRegularExpressionMatch found = best.match(run.out);
        QVERIFY2(found.hasMatch(), qPrintable(run.out));
        QCOMPARE(found.captured(1).toDouble(), results[0]["occupancy"].get<double>());

        // Another order for show, and for the summary of another session.
        const Json byRegisters = showJson(db, {"--rank-by", "registers"});
        for (std::size_t i = 1; i < byRegisters.size(); ++i)
            QVERIFY(byRegisters[i - 1]["registers"].get<int>() <= byRegisters[i]["registers"].get<int>());
        const Run shown = cli({"show", db, "--top", "3", "--rank-by", "spills"});
        QVERIFY2(shown.status == 0 && shown.out.contains("Top 3 of 12, best first (analysed, not timed: by spills)"),
                 qPrintable(describe(shown)));
        const Run again = cli({"tune", kSgemm, "--backend", "analysis:sm_90", "--budget", "12", "--strategy", "random",
                               "--db", db, "--shape", "1", "--rank-by", "registers", "--seed", "1"});
        QVERIFY2(again.status == 0 && again.out.contains("registers, ") &&
                     again.out.contains("(by registers; not timed)"),
                 qPrintable(describe(again)));
        const Run badRank = cli({"show", db, "--rank-by", "time"});
        QCOMPARE(badRank.status, 2);
        QVERIFY2(badRank.err.contains("--rank-by"), qPrintable(describe(badRank)));

        // The exports write them: the JSON cache its best, by occupancy (or as asked), without a time.
        const Run json = cli({"export", db, "--session", "1", "--format", "json"});
        QVERIFY2(json.status == 0, qPrintable(describe(json)));
        const Json entries = Json::parse(json.out.toStdString())["entries"];
        QCOMPARE(entries.size(), std::size_t(1));
        QCOMPARE(entries[0]["config"], results[0]["config"]);
        QVERIFY(entries[0]["time_ms"].is_null());
        QCOMPARE(entries[0]["analysed"]["ranked_by"].get<std::string>(), std::string("occupancy"));
        const Run jsonByRegisters = cli({"export", db, "--session", "1", "--format", "json", "--rank-by", "registers"});
        QCOMPARE(Json::parse(jsonByRegisters.out.toStdString())["entries"][0]["config"], byRegisters[0]["config"]);
        const Run csv = cli({"export", db, "--session", "1", "--format", "csv"});
        QVERIFY2(csv.status == 0 && csv.out.count(QStringLiteral(",analysed,")) == 12, qPrintable(describe(csv)));
        const Run header = cli({"export", db, "--session", "1", "--format", "cpp"});
        QVERIFY2(header.status == 0 && header.out.contains("analysed for sm_90, not timed"),
                 qPrintable(describe(header)));
    }

    // Every command that reads results reads every results format: show and export take a T4 file
    // or a Kernel Tuner cache as they take a database; a problem file is refused with a reason.
    void resultsInEveryFormat() {
        const QString demo = QStringLiteral(TILESCOPE_SOURCE_DIR "/resources/demo/sgemm-h200-2048.t4.json.gz");
        for (const QString& recording : {kTinyT4, kTinyCache, demo}) {
            const Run shown = cli({"show", recording, "--top", "2"});
            QVERIFY2(shown.status == 0 && shown.out.contains("Top 2 of"), qPrintable(describe(shown)));
            const Run csv = cli({"export", recording, "--format", "csv"});
            QVERIFY2(csv.status == 0 && csv.out.startsWith("session,"), qPrintable(describe(csv)));
        }
        const Run problem = cli({"show", kSgemm});
        QCOMPARE(problem.status, 2);
        QVERIFY2(problem.err.contains("a tuning problem (T1), not a recording"), qPrintable(describe(problem)));
    }

    void importThenReplayExhaustively() {
        QTemporaryDir dir;
        const Recording rec = sgemmRecording(0);
        const QString cache = dir.filePath("sgemm_cache.json");
        writeFile(cache, rec.text);
        const QString recDb = dir.filePath("recording.db");
        const Run imported = cli({"import", cache, "--db", recDb});
        QVERIFY2(imported.status == 0 && imported.out.contains("imported 2,761 results") &&
                     imported.out.contains("Kernel Tuner cache") && imported.out.contains("as session 1"),
                 qPrintable(describe(imported)));

        // Replay the imported session (a Tilescope database), exhaustively.
        const QString runDb = dir.filePath("run.db");
        const Run tuned = cli({"tune", kSgemm, "--backend", "replay:" + recDb, "--db", runDb});
        QVERIFY2(tuned.status == 0, qPrintable(describe(tuned)));
        QVERIFY2(tuned.out.contains("Session 1 finished: every config of the space is done"), qPrintable(tuned.out));
        QVERIFY2(tuned.out.contains("2,761 of 2,761 configs"), qPrintable(tuned.out));
        QVERIFY(tuned.out.contains("best ") && tuned.out.contains("TFLOP/s"));
        QVERIFY(tuned.out.contains("recorded compile + benchmark time"));
        // The progress line (stderr is no terminal here: only its final state).
        QVERIFY2(tuned.err.contains("tuned 2,761/2,761") && tuned.err.contains("/s") && tuned.err.contains("best "),
                 qPrintable(tuned.err));

        // The best equals the recording's best.
        const Json results = showJson(runDb);
        QCOMPARE(results.size(), rec.configs);
        QCOMPARE(results[0]["config"].dump(), rec.bestConfig.dump());
        QCOMPARE(results[0]["status"].get<std::string>(), std::string("ok"));
        QCOMPARE(results[0]["time_ms"].get<double>(), rec.bestMs);
        QCOMPARE(results[0]["rank"].get<int>(), 1);
        for (std::size_t i = 1; i < results.size(); ++i)
            if (results[i]["status"] == "ok")
                QVERIFY(results[i]["objective"]["value"].get<double>() <=
                        results[i - 1]["objective"]["value"].get<double>());
        QCOMPARE(showJson(runDb, {"--top", "3"}).size(), std::size_t(3));

        // Replaying the cache file itself gives the same.
        const QString direct = dir.filePath("direct.db");
        QCOMPARE(cli({"tune", kSgemm, "--backend", "replay:" + cache, "--db", direct}).status, 0);
        QCOMPARE(showJson(direct, {"--top", "1"})[0]["config"].dump(), rec.bestConfig.dump());

        // The text view.
        const Run shown = cli({"show", runDb});
        QVERIFY2(shown.status == 0 && shown.out.contains("Top 10 of 2,761") && shown.out.contains("BLOCK_M") &&
                     shown.out.contains("TFLOP/s"),
                 qPrintable(describe(shown)));
    }

    // --stop-early on a replay of the bf16 GEMV's decode shape recorded on the H200 (its provenance
    // keeps the worker's copy bandwidth): a quarter of the space is within the noise of the best,
    // so a random search stops once 24 configs say so, with a winner within the noise.
    void implausibleAndUnverifiableSaySo() {
        // A recording of the tiny problem on an H200 in which two configs claim 0.2 us, less than
        // half the time its 4 MiB output takes to write at the H200's peak: `tune` replays them as
        // implausible, never the best, and says why; `show` lists them with the floor.
        QTemporaryDir dir;
        Json cache = Json::parse(readFile(kTinyCache));
        int faked = 0;
        for (auto it = cache["cache"].begin(); it != cache["cache"].end() && faked < 2; ++it)
            if (it.value()["time"].is_number()) {
                it.value()["time"] = 0.0002;
                it.value()["times"] = {0.0002, 0.0002, 0.0002};
                ++faked;
            }
        const QString fast = dir.filePath("fast.json");
        writeFile(fast, cache.dump());
        const QString db = dir.filePath("r.db");
        const Run tune = cli({"tune", kTiny, "--backend", "replay:" + fast, "--db", db});
        QVERIFY2(tune.status == 0, qPrintable(describe(tune)));
        QVERIFY2(tune.out.contains(QRegularExpression("  results .*: ok \\d+.*, implausible 2")), qPrintable(tune.out));
        QVERIFY2(
            tune.out.contains("  implausible 2 configs ran faster than physics allows and never rank (the fastest, "),
            qPrintable(tune.out));
        QVERIFY2(tune.out.contains("half the time its outputs take to write at the NVIDIA H200's peak memory bandwidth "
                                   "4,800 GB/s (from a table: no copy was measured): 4 MiB in 'y'"),
                 qPrintable(tune.out));
        QVERIFY(!tune.out.contains(QRegularExpression("  best +0.0002")));
        const Run show = cli({"show", db});
        QVERIFY2(show.status == 0, qPrintable(describe(show)));
        QVERIFY2(show.out.contains("  implausible 2 configs never rank: their times cannot be right"),
                 qPrintable(show.out));
        QVERIFY2(show.out.contains(": 0.0002 ms is below 0.0004369 ms, half the time its outputs take to write"),
                 qPrintable(show.out));
        int listed = 0;
        for (const auto& r : showJson(db))
            if (r["status"] == "implausible") {
                ++listed;
                QVERIFY(r["message"].get<std::string>().find("4 MiB in 'y'") != std::string::npos);
            }
        QCOMPARE(listed, 2);

        // A Kernel Tuner cache with a launch no block could hold: imported as implausible.
        const QString conv = dir.filePath("conv.json");
        writeFile(conv, R"({"schema_version": "1.1.0", "device_name": "NVIDIA H200", "kernel_name": "conv",
            "problem_size": [4096], "tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": [256, 448]},
            "objective": "time", "cache": {
              "448": {"block_size_x": 448, "time": 0.0071, "times": [0.0071], "num_regs": 255},
              "256": {"block_size_x": 256, "time": 0.284, "times": [0.284], "num_regs": 200}}})");
        const QString imported = dir.filePath("imported.db");
        const Run import = cli({"import", conv, "--db", imported});
        QVERIFY2(import.status == 0, qPrintable(describe(import)));
        QVERIFY2(import.out.contains("  1 implausible: a time that cannot be right"), qPrintable(import.out));
        const Run showImport = cli({"show", imported});
        QVERIFY2(showImport.out.contains("block_size_x=448: 255 registers x 448 threads = 114,240 registers"),
                 qPrintable(showImport.out));
        QVERIFY2(showImport.out.contains("times are not checked against a floor: the problem's sizes are not known"),
                 qPrintable(showImport.out));

        // A recording where every config with BLOCK = 32 matches the reference and every other does
        // not: the summary says the outputs may depend on BLOCK and how to verify within its
        // groups (a replay cannot measure them again), never to turn verification off.
        Json t4 = Json::parse(readFile(kTinyT4));
        for (Json& r : t4["results"])
            if (r["invalidity"] == "correct" && r["configuration"]["BLOCK"] != 32) {
                r["invalidity"] = "correctness";
                r["correctness"] = 0;
            }
        const QString split = dir.filePath("split.json");
        writeFile(split, t4.dump());
        const QString splitDb = dir.filePath("split.db");
        const Run verify = cli({"tune", kTiny, "--backend", "replay:" + split, "--db", splitDb});
        QVERIFY2(verify.status == 0, qPrintable(describe(verify)));
        const QString says = "every config with BLOCK = 32 matches, every other does not; the outputs may depend on "
                             "BLOCK";
        QVERIFY2(verify.out.contains("  verify      ") && verify.out.contains(says) &&
                     verify.out.contains("ReferenceArguments") &&
                     verify.out.contains(R"("Tilescope": {"VerifyWithin": ["BLOCK"]})") &&
                     !verify.out.contains("--no-verify"),
                 qPrintable(verify.out));
        // show says it too, wrapped under its label within 120 columns.
        QString shown = cli({"show", splitDb}).out;
        shown.replace(QRegularExpression(QStringLiteral("\n {14}")), QStringLiteral(" "));
        QVERIFY2(shown.contains(says), qPrintable(shown));
    }

    void stopsEarlyWhenFlat() {
        QTemporaryDir dir;
        const QString recording = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv-bf16-h200-shapes.db");
        const QString gemv = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv/gemv_bf16.json");
        const QString db = dir.filePath("early.db");
        const Run early = cli({"tune", gemv, "--backend", "replay:" + recording, "--shape", "0", "--strategy", "random",
                               "--seed", "2", "--stop-early", "--db", db});
        QVERIFY2(early.status == 0, qPrintable(describe(early)));
        QVERIFY2(early.out.contains("stopped early: flat:") && early.out.contains("further search cannot pay"),
                 qPrintable(early.out));
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        const SessionInfo session = store.sessions().back();
        const std::vector<ResultRecord> results = store.results(session.id);
        QVERIFY2(results.size() >= 24 && results.size() < 110, qPrintable(QString::number(results.size())));
        // The recorded whole space's best, against the early winner.
        double spaceBest = 1e9;
        for (const SessionData& s : readRecording(recording.toStdString()))
            if (s.info.shapeIndex == 0)
                for (const ResultRecord& r : s.results)
                    if (r.ok())
                        spaceBest = std::min(spaceBest, r.timeMs());
        const double found = bestOf(results)->timeMs();
        QVERIFY2(found <= spaceBest * 1.04, qPrintable(QString("%1 against %2").arg(found).arg(spaceBest)));
        // Without the flag the search goes on through the space.
        const Run whole = cli({"tune", gemv, "--backend", "replay:" + recording, "--shape", "0", "--strategy", "random",
                               "--seed", "2", "--db", dir.filePath("whole.db")});
        QVERIFY2(whole.status == 0, qPrintable(describe(whole)));
        QVERIFY(!whole.out.contains("stopped early"));
    }

    // --only-stale re-tunes only the shapes whose cache entry is stale or missing, and rewrites
    // the cache: the other entries stay exactly as they were.
    void onlyStaleTouchesOnlyStaleEntries() {
        QTemporaryDir dir;
        const QString recording = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv-bf16-h200-shapes.db");
        const QString gemv = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv/gemv_bf16.json");
        const QString cache = dir.filePath("cache.json");
        QCOMPARE(cli({"export", recording, "--format", "json", "-o", cache}).status, 0);
        auto readJson = [](const QString& path) {
            std::ifstream in(path.toStdString());
            return nlohmann::json::parse(in);
        };
        // Nothing stale: nothing tuned, no database made.
        const QString db = dir.filePath("retune.db");
        const Run nothing = cli({"tune", gemv, "--backend", "replay:" + recording, "--only-stale", cache, "--db", db});
        QVERIFY2(nothing.status == 0 && nothing.out.contains("nothing is stale for kernel gemv on NVIDIA H200"),
                 qPrintable(describe(nothing)));
        QVERIFY(!QFile::exists(db));
        // The entry of M = 4 lost: that shape alone is tuned, and only its entry is new.
        nlohmann::json doc = readJson(cache);
        nlohmann::json kept = nlohmann::json::array();
        for (const auto& e : doc["entries"])
            if (e["shape"]["M"] != 4)
                kept.push_back(e);
        QCOMPARE(kept.size(), std::size_t(3));
        doc["entries"] = kept;
        std::ofstream(cache.toStdString()) << doc.dump(2);
        const Run retune = cli({"tune", gemv, "--backend", "replay:" + recording, "--only-stale", cache, "--strategy",
                                "random", "--budget", "12", "--db", db});
        QVERIFY2(retune.status == 0, qPrintable(describe(retune)));
        QVERIFY2(retune.out.contains("re-tuning 1 of 4 shapes"), qPrintable(retune.out));
        QVERIFY2(retune.out.contains("rewrote") && retune.out.contains("3 entries kept, 1 from this run"),
                 qPrintable(retune.out));
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        QCOMPARE(store.sessions().size(), std::size_t(1));
        QCOMPARE(store.sessions().front().shapeLabel(), std::string("M=4 K=4096 N=16384"));
        const nlohmann::json after = readJson(cache);
        QCOMPARE(after["entries"].size(), std::size_t(4));
        for (std::size_t i = 0; i < 3; ++i) {
            // Untouched (the key is written again from the shape, in the order this cache lists its dims).
            nlohmann::json a = after["entries"][i];
            nlohmann::json k = kept[i];
            a.erase("key");
            k.erase("key");
            QVERIFY2(a == k, (a.dump() + " against " + k.dump()).c_str());
        }
        QCOMPARE(after["entries"][3]["shape"]["M"].get<int>(), 4);
        QCOMPARE(after["entries"][3]["session"].get<int>(), static_cast<int>(store.sessions().front().id));
    }

    void shapeSetInOneDatabase() {
        // The fp32 softmax recorded at its three shapes on the H200, replayed as a shape set.
        QTemporaryDir dir;
        const QString recDb = dir.filePath("recording.db");
        for (const char* name : {"softmax-h200-8192x8192", "softmax-h200-32768x1024", "softmax-h200-4096x32768"})
            QCOMPARE(
                cli({"import", QStringLiteral(TILESCOPE_TEST_DATA "/shapes/") + name + ".t4.json.gz", "--db", recDb})
                    .status,
                0);
        const QString softmax = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/softmax/softmax.json");
        const QString db = dir.filePath("set.db");
        const Run tuned = cli({"tune", softmax, "--backend", "replay:" + recDb, "--shapes", "all", "--strategy",
                               "random", "--budget", "12", "--cross-eval", "4", "--db", db});
        QVERIFY2(tuned.status == 0, qPrintable(describe(tuned)));
        QVERIFY2(tuned.out.contains("Shape 2 of 3: the search starts from 3 winners"), qPrintable(tuned.out));
        QVERIFY(tuned.out.contains("Shape set: 3 shapes in"));
        // Per shape what tuning gained against the noise, and the table at 3 %.
        QVERIFY2(tuned.out.contains("ROWS=32768 COLS=1024  the best gains"), qPrintable(tuned.out));
        QVERIFY2(tuned.out.contains("configs run every shape within 3 % of its best"), qPrintable(tuned.out));

        // One session per shape, then the cross-evaluations; shape 1's search opened with shape 0's best.
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        const std::vector<SessionInfo> sessions = store.sessions();
        QVERIFY(sessions.size() >= 3);
        std::set<std::int64_t> shapes;
        for (std::size_t i = 0; i < 3; ++i)
            shapes.insert(sessions[i].shapeIndex.value_or(-1));
        QCOMPARE(shapes, (std::set<std::int64_t>{0, 1, 2}));
        const std::vector<ResultRecord> first = ranked(store.results(sessions[0].id));
        const std::vector<ResultRecord> second = store.results(sessions[1].id);
        QCOMPARE(second.size(), std::size_t(12));
        QCOMPARE(configJson(second.front().config), configJson(first.front().config));
        // Cross-evaluation measured configs not yet measured at their shape, and nothing twice.
        for (std::size_t i = 3; i < sessions.size(); ++i) {
            const std::int64_t shape = sessions[i].shapeIndex.value_or(-1);
            std::set<std::string> before;
            for (std::size_t j = 0; j < 3; ++j)
                if (sessions[j].shapeIndex == shape)
                    for (const ResultRecord& r : store.results(sessions[j].id))
                        before.insert(configJson(r.config));
            for (const ResultRecord& r : store.results(sessions[i].id))
                QVERIFY2(!before.count(configJson(r.config)), configJson(r.config).c_str());
        }
        // The dispatch table reads the set.
        const Run table = cli({"table", db});
        QVERIFY2(table.status == 0 && table.out.contains("3 shapes x"), qPrintable(describe(table)));

        // Bad shape lists.
        const Run missing = cli({"tune", softmax, "--backend", "replay:" + recDb, "--shapes", "0,7", "--db", db});
        QCOMPARE(missing.status, 2);
        QVERIFY2(missing.err.contains("shape 7 does not exist (the problem has 3 shapes: 0 to 2)"),
                 qPrintable(missing.err));
        const Run both =
            cli({"tune", softmax, "--backend", "replay:" + recDb, "--shape", "1", "--shapes", "all", "--db", db});
        QCOMPARE(both.status, 2);
        QVERIFY(both.err.contains("give --shape or --shapes, not both"));
    }

    void randomWithASeedIsReproducible() {
        QTemporaryDir dir;
        auto run = [&](const QString& name, const QString& seed) {
            const QString db = dir.filePath(name);
            const Run r = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--strategy", "random", "--seed",
                               seed, "--budget", "50", "--db", db});
            if (r.status != 0)
                qWarning("%s", qPrintable(describe(r)));
            return storedOrder(db);
        };
        const auto a = run("a.db", "7");
        const auto b = run("b.db", "7");
        const auto c = run("c.db", "8");
        // 50 configs evaluated; a config the recording lacks is skipped and does not count.
        QVERIFY(a.size() >= 50 && a.size() <= 54);
        QVERIFY(a == b);
        QVERIFY(a != c);
    }

    void mpiSessionOutlivesALostRank() {
        // One session across 4 ranks of an MPI job on this machine, each replaying the recording
        // as if it were a node's GPU; rank 1 is killed midway. Rank 0 notices, hands its configs
        // to the others, and the session completes with every config once and the results of a
        // session that ran alone.
        const char* why = nullptr;
        const QString mpirun = mpirunForTests(&why);
        if (mpirun.isEmpty())
            QSKIP(why);
        QTemporaryDir dir;
        const QString db = dir.filePath("mpi.db");
        QProcess job;
        allowRootRanks(job);
        job.start(mpirun, {"--enable-recovery", "--oversubscribe", "-n", "4", QStringLiteral(TILESCOPE_CLI), "tune",
                           kTiny, "--backend", "replay:" + kTinyCache, "--mpi", "--db", db, "--replay-delay-ms", "25",
                           "--mpi-silence", "4"});
        QVERIFY(job.waitForStarted());
        const std::uint64_t seen = waitForResults(db, 40, job, 60000);
        QVERIFY2(seen >= 40, qPrintable("the job did not get going: " + job.readAllStandardError()));
        const qint64 rank1 = mpiRankProcess(1, db);
        QVERIFY2(rank1 > 0, "rank 1 not found");
        const std::map<std::string, std::string> before = resultsByConfig(db);
        QVERIFY2(before.size() < 200, "the session got too far before rank 1 was killed");
        QCOMPARE(::kill(pid_t(rank1), SIGKILL), 0);
        const QString late = unfinished(job, 120000);
        QVERIFY2(late.isEmpty(), qPrintable(late));
        const QString out = QString::fromUtf8(job.readAllStandardOutput());
        const QString err = QString::fromUtf8(job.readAllStandardError());
        QVERIFY2(out.contains("every config of the space is done"), qPrintable(out + err));
        QVERIFY2(err.contains(QRegularExpression("rank 1 \\(.*\\) stopped answering")), qPrintable(err));

        // Nothing committed before the kill was lost or changed, and the whole session is what a
        // session alone stores.
        const std::map<std::string, std::string> after = resultsByConfig(db);
        for (const auto& [config, result] : before)
            QCOMPARE(after.at(config), result);
        const QString alone = dir.filePath("alone.db");
        const Run single = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", alone});
        QVERIFY2(single.status == 0, qPrintable(describe(single)));
        QCOMPARE(after.size(), std::size_t(264));
        QVERIFY(after == resultsByConfig(alone));

        // Every rank measured (rank 1 until it died); each result names its slot, whose rank the
        // provenance gives.
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        const SessionInfo info = store.sessions().back();
        QCOMPARE(info.state, SessionState::Finished);
        QCOMPARE(info.backend, "mpi:replay:" + std::filesystem::weakly_canonical(kTinyCache.toStdString()).string());
        const Json provenance = Json::parse(info.provenanceJson);
        QCOMPARE(provenance["mpi"]["ranks"].get<int>(), 4);
        const Json& devices = provenance["devices"];
        QCOMPARE(devices.size(), std::size_t(4));
        std::map<int, int> byRank;
        for (const ResultRecord& r : store.results(info.id))
            if (r.measurement.device >= 0)
                ++byRank[devices.at(std::size_t(r.measurement.device))["rank"].get<int>()];
        QCOMPARE(byRank.size(), std::size_t(4));
        for (int rank : {0, 2, 3})
            QVERIFY2(byRank[1] < byRank[rank], "rank 1 measured as much as a rank that lived");
    }

    void mpiCoordinatorMeasuresNothing() {
        // --mpi-coordinator: rank 0 runs the session and measures nothing; ranks 1 and 2 measure.
        const char* why = nullptr;
        const QString mpirun = mpirunForTests(&why);
        if (mpirun.isEmpty())
            QSKIP(why);
        QTemporaryDir dir;
        const QString db = dir.filePath("c.db");
        QProcess job;
        allowRootRanks(job);
        job.start(mpirun, {"--oversubscribe", "-n", "3", QStringLiteral(TILESCOPE_CLI), "tune", kTiny, "--backend",
                           "replay:" + kTinyCache, "--mpi", "--mpi-coordinator", "--db", db});
        const QString late = unfinished(job, 120000);
        QVERIFY2(late.isEmpty(), qPrintable(late));
        QVERIFY2(job.exitCode() == 0, qPrintable(job.readAllStandardError()));
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        const SessionInfo info = store.sessions().back();
        const Json devices = Json::parse(info.provenanceJson)["devices"];
        QCOMPARE(devices.size(), std::size_t(2));
        std::set<int> ranks;
        for (const ResultRecord& r : store.results(info.id))
            if (r.measurement.device >= 0)
                ranks.insert(devices.at(std::size_t(r.measurement.device))["rank"].get<int>());
        QVERIFY(ranks == (std::set<int>{1, 2}));
        QCOMPARE(resultsByConfig(db).size(), std::size_t(264));
    }

    void mpiRanksLeaveWhenRank0Dies() {
        // Rank 0 killed midway: the other ranks notice its silence within seconds and leave, the
        // job ends, what rank 0 committed stays, and --resume (a job of one rank) completes it.
        const char* why = nullptr;
        const QString mpirun = mpirunForTests(&why);
        if (mpirun.isEmpty())
            QSKIP(why);
        QTemporaryDir dir;
        const QString db = dir.filePath("r0.db");
        const QStringList tune = {"tune", kTiny, "--backend", "replay:" + kTinyCache, "--mpi", "--db", db};
        QProcess job;
        allowRootRanks(job);
        job.start(mpirun,
                  QStringList{"--enable-recovery", "--oversubscribe", "-n", "3", QStringLiteral(TILESCOPE_CLI)} + tune +
                      QStringList{"--replay-delay-ms", "25", "--mpi-silence", "4"});
        QVERIFY(job.waitForStarted());
        QVERIFY2(waitForResults(db, 40, job, 60000) >= 40, qPrintable(job.readAllStandardError()));
        const qint64 rank0 = mpiRankProcess(0, db);
        QVERIFY2(rank0 > 0, "rank 0 not found");
        const std::map<std::string, std::string> before = resultsByConfig(db);
        QCOMPARE(::kill(pid_t(rank0), SIGKILL), 0);
        const QString late = unfinished(job, 60000);
        QVERIFY2(late.isEmpty(), qPrintable("the ranks did not leave: " + late));
        const QString err = QString::fromUtf8(job.readAllStandardError());
        QCOMPARE(err.count("rank 0 has been silent for 4 s: it is gone"), 2);

        const std::map<std::string, std::string> stored = resultsByConfig(db);
        QVERIFY(stored.size() >= before.size() && stored.size() < 264);
        const Run resumed = cli(tune + QStringList{"--resume"});
        QVERIFY2(resumed.status == 0, qPrintable(describe(resumed)));
        QVERIFY2(resumed.out.contains("resumed"), qPrintable(resumed.out));
        const std::map<std::string, std::string> after = resultsByConfig(db);
        QCOMPARE(after.size(), std::size_t(264));
        for (const auto& [config, result] : stored)
            if (result.rfind("skipped", 0) != 0)
                QCOMPARE(after.at(config), result);
    }

    void mpiRanksCompileWhatTheyMeasure() {
        // With --mpi the ranks that measure compile, here on the analysis backend (a rank per CPU
        // node compiling for sm_90). Rank 0 only coordinates: NVRTC runs on ranks 1 and 2 alone,
        // each binary once between them through the shared cache, and rank 0 still prunes and
        // analyses every config from the compiles the ranks send back, as a session alone does.
        const char* why = nullptr;
        const QString mpirun = mpirunForTests(&why);
        if (mpirun.isEmpty())
            QSKIP(why);
        QTemporaryDir dir;
        auto runJob = [&](int ranks, const QStringList& extra, const QString& cache, const QString& db) {
            QProcess job;
            allowRootRanks(job);
            job.start(mpirun, QStringList{"--oversubscribe", "-n", QString::number(ranks),
                                          QStringLiteral(TILESCOPE_CLI), "tune", kTiny, "--backend", "analysis:sm_90",
                                          "--shape", "1", "--mpi", "--cache-dir", cache, "--db", db} +
                                  extra);
            const bool finished = job.waitForFinished(180000);
            const QString out = QString::fromUtf8(job.readAllStandardOutput());
            const QString err = QString::fromUtf8(job.readAllStandardError());
            if (!finished || job.exitCode() != 0)
                qWarning("%s", qPrintable(out + err));
            return std::make_pair(finished && job.exitCode() == 0, out);
        };
        auto pipelineOf = [](const QString& db) {
            const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
            return Json::parse(store.sessions().back().provenanceJson)["pipeline"];
        };
        auto entriesIn = [](const QString& folder) {
            std::uint64_t entries = 0;
            for (const auto& e : std::filesystem::recursive_directory_iterator(folder.toStdString()))
                entries += e.is_regular_file() ? 1 : 0;
            return entries;
        };

        const QString cache = dir.filePath("cache");
        const QString db = dir.filePath("ranks.db");
        const auto [ok, out] = runJob(3, {"--mpi-coordinator"}, cache, db);
        QVERIFY(ok);
        const Json pipeline = pipelineOf(db);
        const Json& on = pipeline["compiled_on"];
        QVERIFY2(!on.contains("rank 0"), pipeline.dump().c_str());
        QVERIFY2(on.value("rank 1", 0) > 0 && on.value("rank 2", 0) > 0, pipeline.dump().c_str());
        const std::uint64_t binaries = pipeline["binaries_compiled"].get<std::uint64_t>();
        QCOMPARE(on["rank 1"].get<std::uint64_t>() + on["rank 2"].get<std::uint64_t>(), binaries);
        QCOMPARE(pipeline["nvrtc_compiles"].get<std::uint64_t>(), binaries);
        QCOMPARE(entriesIn(cache), binaries);
        QVERIFY2(out.contains(QRegularExpression("NVRTC ran on rank 1: \\d+, rank 2: \\d+;")), qPrintable(out));

        // What rank 0 made of the ranks' compiles is what a session alone makes of its own.
        const QString alone = dir.filePath("alone.db");
        const Run single = cli({"tune", kTiny, "--backend", "analysis:sm_90", "--shape", "1", "--cache-dir",
                                dir.filePath("alone-cache"), "--db", alone});
        QVERIFY2(single.status == 0, qPrintable(describe(single)));
        auto analysed = [](const QString& file) {
            const ResultStore store = ResultStore::open(file.toStdString(), StoreMode::ReadOnly);
            std::map<std::string, std::string> byConfig;
            for (const ResultRecord& r : store.results(store.sessions().back().id))
                byConfig[configKey(r.config)] =
                    std::string(statusName(r.status())) + " " + r.measurement.message + " " +
                    std::to_string(r.measurement.staticInfo ? r.measurement.staticInfo->registers : -1) + " " +
                    std::to_string(r.occupancy.value_or(-1));
            return byConfig;
        };
        const std::map<std::string, std::string> fromRanks = analysed(db);
        QCOMPARE(fromRanks.size(), std::size_t(228));
        QVERIFY(fromRanks == analysed(alone));

        // Rank 0 measures too without --mpi-coordinator, and then compiles its share.
        const QString both = dir.filePath("both.db");
        QVERIFY(runJob(2, {}, dir.filePath("cache2"), both).first);
        const Json shared = pipelineOf(both)["compiled_on"];
        QVERIFY2(shared.value("rank 0", 0) > 0 && shared.value("rank 1", 0) > 0, shared.dump().c_str());
    }

    void mpiSlotsDoNotWaitForTheSlowest() {
        // The first config of an exhaustive sweep takes 2 s, every other 3 ms (a recording replayed
        // at its recorded pace on two measuring ranks). The rank that is not busy with the slow
        // config goes on with the rest meanwhile: most results are stored before the slow one.
        // Measured in batches (32 configs here) each waiting for its slowest, at most 31 were. The
        // budget holds while configs are handed out during the measurement.
        const char* why = nullptr;
        const QString mpirun = mpirunForTests(&why);
        if (mpirun.isEmpty())
            QSKIP(why);
        QTemporaryDir dir;
        const TuningProblem problem = TuningProblem::load(kTiny.toStdString());
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        std::string first;
        const Config config = space.at(0);
        for (std::size_t p = 0; p < config.size(); ++p)
            first += (p ? "," : "") + expr::repr(problem.parameters[p].values.at(config[p]));
        Json cache = Json::parse(readFile(kTinyCache));
        QVERIFY2(cache["cache"].contains(first), first.c_str());
        for (auto& [key, entry] : cache["cache"].items())
            entry["benchmark_time"] = key == first ? 2000.0 : 3.0;
        const QString paced = dir.filePath("paced.json");
        writeFile(paced, cache.dump());

        const QString db = dir.filePath("s.db");
        QProcess job;
        allowRootRanks(job);
        job.start(mpirun, {"--oversubscribe", "-n", "3", QStringLiteral(TILESCOPE_CLI), "tune", kTiny, "--backend",
                           "replay:" + paced, "--replay-pace", "1", "--mpi", "--mpi-coordinator", "--strategy",
                           "exhaustive", "--budget", "200", "--db", db});
        const QString late = unfinished(job, 120000);
        QVERIFY2(late.isEmpty(), qPrintable(late));
        QVERIFY2(job.exitCode() == 0, qPrintable(job.readAllStandardError()));
        const std::vector<std::uint64_t> order = storedOrder(db);
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        const std::vector<ResultRecord> results = store.results(store.sessions().back().id);
        const auto evaluated = std::count_if(results.begin(), results.end(), [](const ResultRecord& r) {
            return r.status() != ResultStatus::Skipped; // configs absent from the recording are not
        });
        QCOMPARE(evaluated, std::ptrdiff_t(200));
        const auto slow = std::find(order.begin(), order.end(), std::uint64_t(0));
        QVERIFY(slow != order.end());
        const auto before = std::distance(order.begin(), slow);
        qInfo("%lld of the %zu other results were stored before the slow one", static_cast<long long>(before),
              order.size() - 1);
        QVERIFY2(before >= 100, qPrintable(QString::number(before)));
    }

    void mpiRefusesWhatItCannotRun() {
        QTemporaryDir dir;
        const QString db = dir.filePath("x.db");
        const Run ssh = cli({"tune", kTiny, "--backend", "ssh://me@gpu-box/0", "--mpi", "--db", db});
        QCOMPARE(ssh.status, 2);
        QVERIFY2(ssh.err.contains("drive their own node's GPUs: no ssh:// or --launcher"), qPrintable(ssh.err));
        QVERIFY(!QFile::exists(db));
    }

    void slurmPartsJoinIntoOneSession() {
        // An exhaustive sweep split over the 4 tasks of a job array (tune --part I/4, one database
        // each), merged with import in any order: one session, whose results are those of the
        // sweep run as one session.
        QTemporaryDir dir;
        QStringList tasks;
        for (int i = 1; i <= 4; ++i) {
            const QString db = dir.filePath(QStringLiteral("task-%1.db").arg(i));
            const Run task = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--part",
                                  QStringLiteral("%1/4").arg(i), "--db", db});
            QVERIFY2(task.status == 0, qPrintable(describe(task)));
            QVERIFY2(task.out.contains(QStringLiteral("every config of part %1 of 4 is done").arg(i)),
                     qPrintable(task.out));
            tasks << db;
        }
        const QString merged = dir.filePath("merged.db");
        const Run import = cli({"import", tasks[3], tasks[1], tasks[0], tasks[2], "--db", merged});
        QVERIFY2(import.status == 0, qPrintable(describe(import)));
        QVERIFY2(import.out.contains("joined from 4 of 4 parts"), qPrintable(import.out));
        const QString alone = dir.filePath("alone.db");
        QCOMPARE(cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", alone}).status, 0);
        {
            const ResultStore store = ResultStore::open(merged.toStdString(), StoreMode::ReadOnly);
            QCOMPARE(store.sessions().size(), std::size_t(1));
            const Json provenance = Json::parse(store.sessions().front().provenanceJson);
            QCOMPARE(provenance["parts"].size(), std::size_t(4));
            QVERIFY(!provenance.contains("part"));
        }
        const std::map<std::string, std::string> joined = resultsByConfig(merged);
        QCOMPARE(joined.size(), std::size_t(264));
        QVERIFY(joined == resultsByConfig(alone));
        // Importing the tasks again adds nothing; three parts say which one is missing.
        const Run again = cli({"import", tasks[0], tasks[1], tasks[2], tasks[3], "--db", merged});
        QVERIFY2(again.out.contains("0 sessions imported, 1 already there"), qPrintable(again.out));
        const Run three = cli({"import", tasks[0], tasks[1], tasks[2], "--db", dir.filePath("three.db")});
        QVERIFY2(three.out.contains("joined from 3 of 4 parts (missing: 4)"), qPrintable(three.out));
        // Only an exhaustive sweep splits.
        const Run random = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--part", "1/4", "--strategy",
                                "random", "--db", dir.filePath("r.db")});
        QCOMPARE(random.status, 2);
        QVERIFY2(random.err.contains("only an exhaustive sweep splits into parts"), qPrintable(random.err));
        const Run bad =
            cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--part", "0/4", "--db", dir.filePath("b.db")});
        QCOMPARE(bad.status, 2);
        QVERIFY2(bad.err.contains("--part: '0/4' is not I/N"), qPrintable(bad.err));
    }

    void resumeWithNothingToContinueSaysSo() {
        // --resume where the database holds no session of the same tuning: the run starts a new
        // session (a job script may pass --resume every time) and says so before any work, naming
        // how the newest session of the problem and shape differs; exit status 0.
        QTemporaryDir dir;
        const QString db = dir.filePath("r.db");
        const QStringList tune = {"tune",     kTiny,  "--backend", "replay:" + kTinyCache, "--strategy", "random",
                                  "--resume", "--db", db};
        const Run first = cli(tune + QStringList{"--seed", "3", "--budget", "5"});
        QVERIFY2(first.status == 0, qPrintable(describe(first)));
        QVERIFY2(first.err.startsWith("note: --resume: " + db +
                                      " holds no session of this tuning to continue (the same problem, shape, backend, "
                                      "strategy and seed); this run starts session 1\n"),
                 qPrintable(first.err));
        const Run other = cli(tune + QStringList{"--seed", "4", "--budget", "5"});
        QVERIFY2(other.status == 0, qPrintable(describe(other)));
        QVERIFY2(other.err.contains("; session 1, the newest of this problem and shape, differs in its seed (3, not "
                                    "4); this run starts session 2\n"),
                 qPrintable(other.err));
        // The same tuning again continues its session, and says nothing of the kind.
        const Run again = cli(tune + QStringList{"--seed", "4", "--budget", "10"});
        QVERIFY2(again.status == 0, qPrintable(describe(again)));
        QVERIFY2(!again.err.contains("--resume:"), qPrintable(again.err));
        QVERIFY2(again.out.contains("Session 2 ") && again.out.contains("(resumed; this run 5)"),
                 qPrintable(again.out));
        QCOMPARE(ResultStore::open(db.toStdString(), StoreMode::ReadOnly).sessions().size(), std::size_t(2));
    }

    void fromTheDatabaseAlone() {
        // A session keeps its problem's files: with the problem's folder deleted, `space DB` shows
        // its parameters, conditions and valid count, and `tune DB --resume` continues it (its
        // kernel and the header it includes compiled from the database's copies) in that database.
        QTemporaryDir dir;
        const QString folder = dir.filePath("problem");
        QVERIFY(QDir().mkpath(folder));
        QVERIFY(QFile::copy(kTiny, folder + "/tiny.json"));
        writeFile(folder + "/tiny_scale.h", "#define TINY_SCALE 1.0f\n");
        writeFile(folder + "/tiny.cu",
                  "#include \"tiny_scale.h\"\n" + readFile(QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny.cu")));
        const QString db = dir.filePath("tiny.db");
        const QString cache = dir.filePath("cache");
        const Run first =
            cli({"tune", folder + "/tiny.json", "--backend", "analysis:sm_90", "--shape", "1", "--strategy", "random",
                 "--seed", "2", "--budget", "3", "--cache-dir", cache, "--db", db});
        QVERIFY2(first.status == 0, qPrintable(describe(first)));
        QVERIFY(QDir(folder).removeRecursively());

        const TuningProblem tiny = TuningProblem::load(kTiny.toStdString());
        const std::uint64_t valid = ConfigSpace::build(tiny, 1).size();
        const Run space = cli({"space", db, "--sample", "2"});
        QVERIFY2(space.status == 0, qPrintable(describe(space)));
        for (const QString& line :
             {"Problem      " + db + ", session 1  (kernel scale in tiny.cu)",
              QString("Shape        N=4096  (shape 1;"), QString("NUM_STAGES  int       3  1, 2, 3"),
              QString("Conditions (2)"), QString("   1  BLOCK >= 32 * NUM_WARPS"),
              QString("   2  N % (BLOCK * ITEMS) == 0"), "valid size    " + QString::number(valid) + "  ("})
            QVERIFY2(space.out.contains(line), qPrintable(line + "\n" + space.out));
        QVERIFY2(!space.err.contains("note:"), qPrintable(space.err)); // nothing blocks its kernel
        const Run json = cli({"space", db, "--json", "--sample", "0"});
        QVERIFY2(json.status == 0, qPrintable(describe(json)));
        const Json doc = Json::parse(json.out.toStdString());
        QCOMPARE(doc["session"].get<int>(), 1);
        QCOMPARE(doc["valid_size"].get<std::uint64_t>(), valid);
        QCOMPARE(doc["conditions"].size(), std::size_t(2));
        QCOMPARE(doc["launch_blockers"].size(), std::size_t(0));

        // Its backend, strategy, seed and shape are the session's; the results go to its database.
        const Run resumed = cli({"tune", db, "--resume", "--budget", "6", "--cache-dir", cache});
        QVERIFY2(resumed.status == 0, qPrintable(describe(resumed)));
        QVERIFY2(!resumed.err.contains("--resume:"), qPrintable(resumed.err));
        QVERIFY2(resumed.out.contains("Session 1 ") && resumed.out.contains("(resumed; this run 3)") &&
                     resumed.out.contains("shape 1: N=4096") && resumed.out.contains("random, seed 2"),
                 qPrintable(resumed.out));
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        QCOMPARE(store.sessions().size(), std::size_t(1));
        QCOMPARE(store.resultCount(1), std::uint64_t(6));
        QVERIFY(store.statusCounts(1).of(ResultStatus::Analysed) > 0);

        // What cannot be: a session the database does not hold, --session with a problem file, a
        // run from a problem file without --backend or --db.
        const Run none = cli({"space", db, "--session", "7"});
        QCOMPARE(none.status, 2);
        QVERIFY2(none.err.contains("--session: there is no session 7 (its sessions: 1)"), qPrintable(none.err));
        const Run file = cli({"space", kTiny, "--session", "1"});
        QCOMPARE(file.status, 2);
        QVERIFY2(file.err.contains("--session is for a results database"), qPrintable(file.err));
        const Run noBackend = cli({"tune", kTiny, "--db", db});
        QCOMPARE(noBackend.status, 2);
        QVERIFY2(noBackend.err.contains("--backend is required"), qPrintable(noBackend.err));
    }

    void resumeNamesAChangedKernel() {
        // The same problem file with its kernel changed since: the session tuned with the old one
        // is not continued as if nothing changed; the run says which file changed and starts anew.
        QTemporaryDir dir;
        QVERIFY(QFile::copy(kTiny, dir.filePath("tiny.json")));
        QVERIFY(QFile::copy(QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny.cu"), dir.filePath("tiny.cu")));
        QFile::setPermissions(dir.filePath("tiny.cu"), QFile::permissions(dir.filePath("tiny.cu")) | QFile::WriteOwner);
        const QString db = dir.filePath("r.db");
        const QStringList tune = {"tune",
                                  dir.filePath("tiny.json"),
                                  "--backend",
                                  "replay:" + kTinyCache,
                                  "--strategy",
                                  "random",
                                  "--resume",
                                  "--db",
                                  db};
        const Run first = cli(tune + QStringList{"--budget", "4"});
        QVERIFY2(first.status == 0, qPrintable(describe(first)));
        const std::string before = readFile(dir.filePath("tiny.cu"));
        writeFile(dir.filePath("tiny.cu"), before + "// changed\n");
        const Run again = cli(tune + QStringList{"--budget", "8"});
        QVERIFY2(again.status == 0, qPrintable(describe(again)));
        const QString sha = [](const std::string& text) {
            return QString::fromStdString(Sha256::hex(Sha256::hash(text)).substr(0, 12));
        }(before);
        QVERIFY2(again.err.startsWith("note: --resume: " + db +
                                      ": session 1 of this tuning was tuned with other files, which it does not "
                                      "continue: tiny.cu changed (SHA-256 " +
                                      sha + " then, "),
                 qPrintable(again.err));
        QVERIFY2(again.err.contains("; this run starts session 2\n"), qPrintable(again.err));
        // The kernel as it was comes back: its session goes on, session 2 (of the changed one) as it was.
        writeFile(dir.filePath("tiny.cu"), before);
        const Run back = cli(tune + QStringList{"--budget", "8"});
        QVERIFY2(back.status == 0, qPrintable(describe(back)));
        QVERIFY2(!back.err.contains("--resume:"), qPrintable(back.err));
        QVERIFY2(back.out.contains("Session 1 ") && back.out.contains("(resumed; this run 4)"), qPrintable(back.out));
    }

    void killedMidRunThenResumed() {
        QTemporaryDir dir;
        const QString db = dir.filePath("k.db");
        const QStringList args = {"tune", kTiny,  "--backend", "replay:" + kTinyCache, "--strategy", "random", "--seed",
                                  "3",    "--db", db};
        QProcess slow;
        slow.start(QStringLiteral(TILESCOPE_CLI), args + QStringList{"--replay-delay-ms", "10"});
        QVERIFY(slow.waitForStarted());
        // Wait until results are committed, then kill it without warning.
        const std::uint64_t seen = waitForResults(db, 40, slow, 30000);
        QVERIFY2(seen >= 40, "the run did not get going");
        slow.kill(); // SIGKILL
        QVERIFY(slow.waitForFinished());
        QCOMPARE(slow.exitStatus(), QProcess::CrashExit);

        std::map<std::string, std::pair<std::int64_t, std::string>> before; // config -> (result id, what it said)
        std::int64_t sessionId = 0;
        {
            const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
            sessionId = store.sessions().back().id;
            QCOMPARE(store.session(sessionId)->state, SessionState::Running); // it never got to say otherwise
            for (const ResultRecord& r : store.results(sessionId))
                before[configKey(r.config)] = {r.id, std::string(statusName(r.status())) + " " +
                                                         std::to_string(r.timeMs()) + " " + r.measurement.message};
        }
        QVERIFY(before.size() >= 40);
        QVERIFY2(before.size() < 264, "the run finished before it was killed");

        const Run resumed = cli(args + QStringList{"--resume"});
        QVERIFY2(resumed.status == 0, qPrintable(describe(resumed)));
        QVERIFY2(resumed.out.contains("resumed"), qPrintable(resumed.out));
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        QCOMPARE(store.sessions().size(), std::size_t(1)); // the same session, continued
        QCOMPARE(store.session(sessionId)->state, SessionState::Finished);
        const auto results = store.results(sessionId);
        // Every config exactly once ...
        QCOMPARE(results.size(), std::size_t(264));
        std::set<std::string> keys;
        for (const ResultRecord& r : results)
            keys.insert(configKey(r.config));
        QCOMPARE(keys.size(), std::size_t(264));
        // ... and nothing committed before the kill lost or changed (a skipped config, absent from
        // the recording, is a placeholder that the resumed run replaces with the same verdict).
        std::map<std::string, std::pair<std::int64_t, std::string>> after;
        for (const ResultRecord& r : results)
            after[configKey(r.config)] = {r.id, std::string(statusName(r.status())) + " " + std::to_string(r.timeMs()) +
                                                    " " + r.measurement.message};
        for (const auto& [key, was] : before) {
            QVERIFY(after.count(key));
            QCOMPARE(after[key].second, was.second);
            if (was.second.rfind("skipped", 0) != 0)
                QCOMPARE(after[key].first, was.first);
        }
        // The same results as a run never interrupted.
        const QString clean = dir.filePath("clean.db");
        QCOMPARE(cli(args.mid(0, args.size() - 1) + QStringList{clean}).status, 0);
        QCOMPARE(showJson(clean)[0]["config"].dump(), showJson(db)[0]["config"].dump());
        auto sorted = [](std::vector<std::uint64_t> v) {
            std::sort(v.begin(), v.end());
            return v;
        };
        QVERIFY(sorted(storedOrder(clean)) == sorted(storedOrder(db)));
    }

    void exportsAreUsable() {
        QTemporaryDir dir;
        const QString db = dir.filePath("run.db");
        // Two shapes of sgemm, each replayed from its own recording.
        Json bestOf[2];
        for (std::size_t shape = 0; shape < 2; ++shape) {
            const Recording rec = sgemmRecording(shape);
            const QString cache = dir.filePath(QString("cache%1.json").arg(shape));
            writeFile(cache, rec.text);
            const Run r =
                cli({"tune", kSgemm, "--backend", "replay:" + cache, "--shape", QString::number(shape), "--db", db});
            QVERIFY2(r.status == 0, qPrintable(describe(r)));
            bestOf[shape] = rec.bestConfig;
        }

        // T4: the schema's required fields, and it imports back to the same results.
        const QString t4 = dir.filePath("run.t4.json");
        const Run exported = cli({"export", db, "--format", "t4", "-o", t4});
        QVERIFY2(exported.status == 0, qPrintable(describe(exported)));
        const Json doc = Json::parse(readFile(t4));
        QCOMPARE(doc["schema_version"].get<std::string>(), std::string("1.0.0"));
        for (const Json& r : doc["results"])
            for (const char* field : {"configuration", "times", "invalidity", "correctness"})
                QVERIFY2(r.contains(field), field);
        const QString back = dir.filePath("back.db");
        QCOMPARE(cli({"import", t4, "--db", back}).status, 0);
        const Json original = showJson(db, {"--session", "2"});
        const Json reimported = showJson(back);
        QCOMPARE(reimported.size(), original.size());
        for (std::size_t i = 0; i < original.size(); ++i) {
            QCOMPARE(reimported[i]["config"].dump(), original[i]["config"].dump());
            QCOMPARE(reimported[i]["status"], original[i]["status"]);
            QCOMPARE(reimported[i]["time_ms"].dump(), original[i]["time_ms"].dump());
            QCOMPARE(reimported[i]["objective"].dump(), original[i]["objective"].dump());
        }

        // JSON: the best config per (kernel, shape, device), and it round-trips.
        const QString json = dir.filePath("best.json");
        QCOMPARE(cli({"export", db, "--format", "json", "-o", json}).status, 0);
        const auto best = parseBestConfigsJson(readFile(json), "best.json");
        QVERIFY(best == bestConfigs(readRecording(db.toStdString())));
        QCOMPARE(best.size(), std::size_t(2));
        QCOMPARE(writeBestConfigsJson(best), readFile(json));

        // C++: compiles on its own (with the compiler that built the tests) and looks up the right
        // config per shape.
        {
            const QString header = dir.filePath("sgemm_tuned.h");
            QCOMPARE(cli({"export", db, "--format", "cpp", "-o", header}).status, 0);
            std::string main = "#include \"sgemm_tuned.h\"\n#include <cstdio>\nint main() {\n"
                               "    using namespace tilescope_tuned::sgemm;\n    int bad = 0;\n";
            const char* dims[2] = {"4096, 4096, 4096", "2048, 2048, 2048"};
            for (int s = 0; s < 2; ++s) {
                std::string check;
                for (auto it = bestOf[s].begin(); it != bestOf[s].end(); ++it)
                    check += std::string(check.empty() ? "" : " && ") + "c->" + it.key() + " == " + it.value().dump();
                main += "    { const Config* c = lookup(" + std::string(dims[s]) + "); if (!c || !(" + check +
                        ")) ++bad; }\n";
            }
            main += "    if (lookup(1, 2, 3) != nullptr) ++bad;\n"
                    "    if (lookupOn(\"NVIDIA H200\", 2048, 2048, 2048) != lookup(2048, 2048, 2048)) ++bad;\n"
                    "    std::printf(\"bad %d\\n\", bad);\n    return bad;\n}\n";
            writeFile(dir.filePath("main.cpp"), main);
            QProcess gxx;
            gxx.setProcessChannelMode(QProcess::MergedChannels);
            gxx.start(cxxCompiler(), {"-std=c++17", "-Wall", "-Wextra", "-Werror", "-o", dir.filePath("lookup"),
                                      dir.filePath("main.cpp")});
            QVERIFY(gxx.waitForFinished(120000));
            QVERIFY2(gxx.exitCode() == 0, gxx.readAll().constData());
            QProcess lookup;
            lookup.start(dir.filePath("lookup"), {});
            QVERIFY(lookup.waitForFinished());
            QVERIFY2(lookup.exitCode() == 0, lookup.readAllStandardOutput().constData());
        }

        // Triton: parses as Python, STAGES became num_stages.
        const Run triton = cli({"export", db, "--format", "triton", "--top", "4"});
        QCOMPARE(triton.status, 0);
        QVERIFY(triton.out.contains("sgemm_configs = [") && triton.out.contains("num_stages="));
        QVERIFY(triton.out.contains("# tilescope-cache: {")); // the metadata line, for `check`
        QString code = triton.out;
        code.remove(QRegularExpression(QStringLiteral("# tilescope-cache: [^\n]*\n")));
        QVERIFY(!code.contains("\"STAGES\""));
        const bool python3 = haveProgram("python3");
        if (python3) {
            QProcess python;
            python.start("python3", {"-c", "import ast, sys; ast.parse(sys.stdin.read()); print('parsed')"});
            python.write(triton.out.toUtf8());
            python.closeWriteChannel();
            QVERIFY(python.waitForFinished());
            QVERIFY2(python.exitCode() == 0 && python.readAllStandardOutput().contains("parsed"),
                     python.readAllStandardError().constData());
        }

        // CSV: every result of every session, and a header.
        const Run csv = cli({"export", db, "--format", "csv"});
        QCOMPARE(csv.status, 0);
        QCOMPARE(csv.out.count('\n'), 2 * 2761 + 1);
        QVERIFY(csv.out.startsWith("session,kernel,shape,device,BLOCK_M,"));

        // Last, once every other export was checked: the Triton export not parsed is said.
        if (!python3)
            TILESCOPE_MISSING_PROGRAM("python3", "the Triton export was not parsed as Python");
    }

    void maxTimeReplaysDeterministically() {
        QTemporaryDir dir;
        auto count = [&](const QString& name) {
            const QString db = dir.filePath(name);
            const Run r = cli({"tune", kTiny, "--backend", "replay:" + kTinyT4, "--max-time", "15", "--db", db});
            if (r.status != 0 || !r.out.contains("time budget"))
                qWarning("%s", qPrintable(describe(r)));
            return storedOrder(db).size();
        };
        const std::size_t a = count("a.db");
        QVERIFY(a > 10 && a < 264);
        QCOMPARE(count("b.db"), a);
    }

    void badInput_data() {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("expected");
        QTest::newRow("truncated T4") << "truncated-t4"
                                      << "truncated";
        QTest::newRow("cache of an unknown schema version") << "cache-version"
                                                            << "schema version \"9.0.0\"";
        QTest::newRow("database of a newer schema") << "newer-db"
                                                    << "newer than this Tilescope reads";
        QTest::newRow("missing database") << "missing-db"
                                          << "no such database";
        QTest::newRow("database in a missing folder") << "missing-folder"
                                                      << "does not exist";
        QTest::newRow("database in a read-only place") << "read-only"
                                                       << "/proc/tilescope-tune-test.db";
        QTest::newRow("recording of another problem") << "mismatch"
                                                      << "does not match the problem";
        QTest::newRow("recording at another shape") << "other-shape"
                                                    << "--shape";
        QTest::newRow("cuda backend") << "cuda"
                                      << "--backend replay:FILE";
        QTest::newRow("--sanitize with a replay") << "sanitize-replay"
                                                  << "--sanitize is for --backend cuda";
        QTest::newRow("--guard with analysis") << "guard-analysis"
                                               << "--guard is for --backend cuda";
        QTest::newRow("--sanitize without compute-sanitizer") << "sanitize-missing"
                                                              << "TILESCOPE_COMPUTE_SANITIZER names";
        QTest::newRow("two budgets") << "two-budgets"
                                     << "excludes";
        QTest::newRow("unknown strategy") << "strategy"
                                          << "unknown strategy 'simplex'";
        QTest::newRow("unknown export format") << "format"
                                               << "--format";
        QTest::newRow("unknown session") << "session"
                                         << "no session 99";
    }

    void badInput() {
        QFETCH(QString, what);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        // A database with one session in it, which no failure below may change.
        const QString db = dir.filePath("r.db");
        QCOMPARE(cli({"import", kTinyCache, "--db", db}).status, 0);
        Run r;
        if (what == "truncated-t4") {
            const std::string text = readFile(kTinyT4);
            writeFile(dir.filePath("cut.json"), text.substr(0, text.size() / 2));
            r = cli({"import", dir.filePath("cut.json"), "--db", db});
        } else if (what == "cache-version") {
            Json doc = Json::parse(readFile(kTinyCache));
            doc["schema_version"] = "9.0.0";
            writeFile(dir.filePath("v9.json"), doc.dump());
            r = cli({"import", dir.filePath("v9.json"), "--db", db});
        } else if (what == "newer-db") {
            const QString newer = dir.filePath("newer.db");
            QCOMPARE(cli({"import", kTinyCache, "--db", newer}).status, 0);
            sqlite3* handle = nullptr;
            sqlite3_open(newer.toUtf8().constData(), &handle);
            sqlite3_exec(handle, "INSERT INTO schema_version VALUES (99, 'later', '9.9')", nullptr, nullptr, nullptr);
            sqlite3_close(handle);
            r = cli({"show", newer});
            const Run tune = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", newer});
            QCOMPARE(tune.status, 2);
            QVERIFY2(tune.err.contains(expected), qPrintable(describe(tune)));
        } else if (what == "missing-db") {
            r = cli({"show", dir.filePath("none.db")});
            QVERIFY(!QFile::exists(dir.filePath("none.db")));
        } else if (what == "missing-folder") {
            r = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", dir.filePath("no/such/r.db")});
        } else if (what == "read-only") {
            r = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", "/proc/tilescope-tune-test.db"});
        } else if (what == "mismatch") {
            r = cli({"tune", kSgemm, "--backend", "replay:" + kTinyCache, "--db", db});
        } else if (what == "other-shape") {
            r = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--shape", "1", "--db", db});
        } else if (what == "cuda") {
            if (QFileInfo::exists(QStringLiteral("/proc/driver/nvidia/version")))
                QSKIP("an NVIDIA driver is installed here: the CUDA backend would measure");
            r = cli({"tune", kTiny, "--backend", "cuda", "--db", db});
        } else if (what == "sanitize-replay") {
            r = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--sanitize", "--db", db});
        } else if (what == "guard-analysis") {
            r = cli({"tune", kTiny, "--backend", "analysis:sm_90", "--guard", "--db", db});
        } else if (what == "sanitize-missing") {
            // Said before any worker starts, whether or not this machine has a GPU.
            qputenv("TILESCOPE_COMPUTE_SANITIZER", dir.filePath("no/compute-sanitizer").toUtf8());
            r = cli({"tune", kTiny, "--backend", "cuda", "--sanitize", "--db", db});
            qunsetenv("TILESCOPE_COMPUTE_SANITIZER");
        } else if (what == "two-budgets") {
            r = cli(
                {"tune", kTiny, "--backend", "replay:" + kTinyCache, "--budget", "5", "--fraction", "0.5", "--db", db});
        } else if (what == "strategy") {
            r = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--strategy", "simplex", "--db", db});
        } else if (what == "format") {
            r = cli({"export", db, "--format", "yaml"});
        } else if (what == "session") {
            r = cli({"show", db, "--session", "99"});
        }
        QVERIFY2(r.status == 2, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(expected), qPrintable(describe(r)));
        QVERIFY2(!r.err.contains("internal error"), qPrintable(describe(r)));
        // Nothing lost: the database still holds its one session, whole.
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        QCOMPARE(store.sessions().size(), std::size_t(1));
        QCOMPARE(store.resultCount(store.sessions()[0].id), std::uint64_t(260));
    }
};

QTEST_GUILESS_MAIN(TestCliTune)
#include "tst_cli_tune.moc"
