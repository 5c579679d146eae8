// tilescope-cli kt, run as a user runs it: scripts written for Kernel Tuner (tests/data/kt/) run
// unchanged with Tilescope's kernel_tuner package standing in, on the analysis backend (no GPU).
// The config counts are checked against counts computed here, the problems left beside the
// database against `space`, the results against what the scripts asked for (metrics, the cache
// in Kernel Tuner's layout, a second run that measures nothing), and what Tilescope cannot
// honour against its refusals.

#include "clirun.h"
#include "testprograms.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <QtTest>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

using Json = nlohmann::json;

// Two JSON values equal, both shown when not.
#define KT_COMPARE_JSON(actual, expected)                                                                              \
    QVERIFY2((actual) == (expected), (Json(actual).dump() + " != " + Json(expected).dump()).c_str())

namespace {

const QString kScripts = QStringLiteral(TILESCOPE_TEST_DATA "/kt");

std::string readFile(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The valid counts of the scripts' spaces, computed here from their tune_params and
/// restrictions (and Kernel Tuner's limit of 1024 threads per block).
int vectorAddCount() {
    int n = 0;
    for (int bx = 32; bx <= 1024; bx += 32)
        for (int tile : {1, 2, 4})
            n += bx * tile <= 1024 && (bx % 64 == 0 || tile == 1);
    return n;
}

int convolutionCount() {
    int n = 0;
    for (int bx : {16, 32, 64})
        for (int by : {2, 4, 8, 16})
            for (int tx : {1, 2})
                for (int ty : {1, 2, 4})
                    n += bx * by >= 64 && tx * ty <= 4 && bx * by <= 1024;
    return n;
}

int reductionCount() {
    int n = 0;
    for (int bx = 32; bx <= 1024; bx *= 2)
        for (int nb = 32; nb <= 1024; nb *= 2)
            for (int v : {1, 2, 4})
                n += nb * bx >= 2048 && bx * nb * v <= (1 << 16);
    return n;
}

int stencilCount() {
    int n = 0;
    for (int bx : {16, 32, 64})
        for (int by : {1, 2, 4, 8})
            for (bool square : {true, false})
                for (double factor : {0.5, 1.0})
                    for (bool fast : {false, true})
                        n += bx * by >= 32 && !(fast && factor == 0.5) && (square || factor == 1.0);
    return n;
}

} // namespace

class TestCliKt : public QObject {
    Q_OBJECT

    QString m_python;  // an interpreter with NumPy
    QString m_missing; // why there is none
    QTemporaryDir m_dir;

    /// Runs `tilescope-cli kt ARGS` in the test's folder, on the analysis backend.
    CliRun kt(const QStringList& args, const QString& db = QStringLiteral("kt.db")) {
        return runProgram(
            QStringLiteral(TILESCOPE_CLI),
            QStringList{"kt", "--backend", "analysis:sm_90", "--python", m_python, "--db", m_dir.filePath(db)} + args,
            180000, m_dir.path());
    }

    /// The JSON a test script prints after "KT-SUMMARY ".
    static Json summary(const CliRun& r) {
        const QRegularExpression re(QStringLiteral("^KT-SUMMARY (.*)$"), QRegularExpression::MultilineOption);
        const QRegularExpressionMatch m = re.match(r.out);
        if (!m.hasMatch())
            return Json();
        return Json::parse(m.captured(1).toStdString(), nullptr, false);
    }

    /// `space PROBLEM --count`: the valid count it prints, -1 when it fails.
    static long long spaceCount(const QString& problem) {
        const CliRun r = runCli({"space", problem, "--count"});
        if (r.status != 0) {
            qWarning("%s", qPrintable(describe(r)));
            return -1;
        }
        const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("([0-9,]+) valid")).match(r.out);
        return m.hasMatch() ? m.captured(1).remove(',').toLongLong() : -1;
    }

    void requirePython() {
        if (!m_python.isEmpty())
            return;
        const QByteArray message = m_missing.toUtf8();
        if (underCi())
            QFAIL(message.constData());
        QSKIP(message.constData());
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        // python3 on PATH first (what `kt` runs by default), then the system's.
        for (const QString& candidate : {QStringLiteral("python3"), QStringLiteral("/usr/bin/python3")}) {
            if (runProcess(candidate, {"-c", "import numpy"}) == 0) {
                m_python = candidate;
                break;
            }
        }
        if (m_python.isEmpty())
            m_missing = QStringLiteral("python3 with NumPy is not installed: the Kernel Tuner scripts cannot run "
                                       "(install python3 and python3-numpy; under CI this fails)");
        for (const QString& f : QDir(kScripts).entryList(QDir::Files))
            QVERIFY(QFile::copy(kScripts + "/" + f, m_dir.filePath(f)));
    }

    // Kernel Tuner's vector_add: a string restriction (a T1 Condition), metrics, the kernel inline.
    void vectorAdd() {
        requirePython();
        const CliRun r = kt({"vector_add.py"}, QStringLiteral("vector_add.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        const Json s = summary(r);
        QVERIFY2(s.is_object(), qPrintable(describe(r)));
        QCOMPARE(s["expected"].get<int>(), vectorAddCount());
        QCOMPARE(s["results"].get<int>(), vectorAddCount());
        QVERIFY(s["metrics"].get<bool>());
        QVERIFY(s["gbs"].get<bool>());
        QCOMPARE(s["device_name"].get<std::string>(), std::string("analysis:sm_90"));
        QVERIFY2(r.out.contains("BEST PERFORMING CONFIGURATION FOR OBJECTIVE time:"), qPrintable(r.out));
        // Nothing is timed on the analysis backend: each time is Kernel Tuner's marker of a config it
        // did not run, the metrics of the time cannot be computed (those of the parameters can), and
        // the best is the config that ranks first by occupancy (64 threads fill an SM; 32 do not).
        QVERIFY2(r.out.contains("block_size_x=32, tile=1, time=InvalidConfig, GB/s=InvalidConfig, bytes_per_thread=12"),
                 qPrintable(r.out));
        QVERIFY2(!r.out.contains("nanms"), qPrintable(r.out));
        QCOMPARE(s["best"]["block_size_x"].get<int>(), 64);
        QVERIFY2(r.err.contains("best_config is the config that ranks first by occupancy"), qPrintable(r.err));

        // The problem beside the database opens and counts the same without the script.
        const QString problem = QString::fromStdString(s["problem"].get<std::string>());
        QVERIFY2(problem.startsWith(m_dir.filePath("vector_add.kt/")), qPrintable(problem));
        QCOMPARE(spaceCount(problem), static_cast<long long>(vectorAddCount()));
        const Json t1 = Json::parse(readFile(problem));
        const Json& conditions = t1["ConfigurationSpace"]["Conditions"];
        QCOMPARE(conditions.size(), std::size_t(3)); // the two restrictions and the block limit
        QCOMPARE(conditions[0]["Expression"].get<std::string>(), std::string("block_size_x * tile <= 1024"));
        QCOMPARE(conditions[2]["Expression"].get<std::string>(), std::string("block_size_x <= 1024"));
        QVERIFY(!t1.contains("Tilescope"));
        const Json& args = t1["KernelSpecification"]["Arguments"];
        QCOMPARE(args.size(), std::size_t(4));
        QCOMPARE(args[0]["Name"].get<std::string>(), std::string("c"));
        QCOMPARE(args[0]["AccessType"].get<std::string>(), std::string("ReadWrite"));
        QCOMPARE(args[1]["AccessType"].get<std::string>(), std::string("ReadOnly")); // const float *a
        QCOMPARE(args[1]["FillType"].get<std::string>(), std::string("BinaryRaw"));
        const QString data =
            QFileInfo(QFileInfo(problem).dir(), QString::fromStdString(args[1]["DataSource"].get<std::string>()))
                .filePath();
        QCOMPARE(QFileInfo(data).size(), qint64(100000 * 4));
        // Written once per content: a hard link to vector_add.kt/data/<its SHA-256>.bin.
        QFile bytes(data);
        QVERIFY(bytes.open(QIODevice::ReadOnly));
        const QString hash =
            QString::fromLatin1(QCryptographicHash::hash(bytes.readAll(), QCryptographicHash::Sha256).toHex());
        const std::filesystem::path stored = m_dir.filePath("vector_add.kt/data/" + hash + ".bin").toStdString();
        QVERIFY2(std::filesystem::equivalent(stored, data.toStdString()), stored.c_str());
        QVERIFY(std::filesystem::hard_link_count(stored) >= 2);
        QCOMPARE(args[3]["MemoryType"].get<std::string>(), std::string("Scalar"));
        QCOMPARE(args[3]["Type"].get<std::string>(), std::string("int32"));
        QCOMPARE(args[3]["FillValue"].get<int>(), 100000);
        KT_COMPARE_JSON(t1["KernelSpecification"]["ProblemSize"], Json::array({100000}));
        KT_COMPARE_JSON(t1["KernelSpecification"]["GridDivX"], Json::array({"block_size_x"}));

        // The T4 files the script stored with kernel_tuner.file_utils: Tilescope reads the results. A
        // config not run is "constraints" there, as Kernel Tuner writes its InvalidConfig, and has no time.
        const CliRun t4 = runCli({"show", m_dir.filePath("vector_add_results.json"), "--json"});
        QVERIFY2(t4.status == 0, qPrintable(describe(t4)));
        QCOMPARE(Json::parse(t4.out.toStdString()).size(), std::size_t(vectorAddCount()));
        const Json t4Results = Json::parse(readFile(m_dir.filePath("vector_add_results.json")))["results"];
        QCOMPARE(t4Results[0]["invalidity"].get<std::string>(), std::string("constraints"));
        for (const Json& m : t4Results[0]["measurements"])
            QVERIFY2(m["name"] != "time" && m["name"] != "__error__", m.dump().c_str());
        const Json metadata = Json::parse(readFile(m_dir.filePath("vector_add_metadata.json")), nullptr, false);
        QVERIFY(!metadata.is_discarded());
        QCOMPARE(metadata["schema_version"].get<std::string>(), std::string("1.0.0"));

        // Every result is in the database, one session.
        const CliRun show = runCli({"show", m_dir.filePath("vector_add.db"), "--json"});
        QVERIFY2(show.status == 0, qPrintable(describe(show)));
        QCOMPARE(Json::parse(show.out.toStdString()).size(), std::size_t(vectorAddCount()));
    }

    // Kernel Tuner's convolution: grid divisor lists, the filter in constant memory, an answer.
    void convolution() {
        requirePython();
        const CliRun r = kt({"convolution.py"}, QStringLiteral("convolution.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        const Json s = summary(r);
        QVERIFY2(s.is_object(), qPrintable(describe(r)));
        QCOMPARE(s["expected"].get<int>(), convolutionCount());
        QCOMPARE(s["results"].get<int>(), convolutionCount());
        QVERIFY(s["metrics"].get<bool>());
        QVERIFY2(r.out.contains(QString("Searchspace has %1 configurations").arg(convolutionCount())),
                 qPrintable(r.out)); // verbose=True

        const QString problem = QString::fromStdString(s["problem"].get<std::string>());
        QCOMPARE(spaceCount(problem), static_cast<long long>(convolutionCount()));
        const Json t1 = Json::parse(readFile(problem));
        const Json& ks = t1["KernelSpecification"];
        QCOMPARE(ks["KernelFile"].get<std::string>(), std::string("convolution.cu"));
        KT_COMPARE_JSON(ks["ProblemSize"], Json::array({256, 128}));
        KT_COMPARE_JSON(ks["GridDivX"], Json::array({"block_size_x", "tile_size_x"}));
        KT_COMPARE_JSON(ks["GridDivY"], Json::array({"block_size_y", "tile_size_y"}));
        const Json& args = ks["Arguments"];
        QCOMPARE(args.size(), std::size_t(5));
        QCOMPARE(args[0]["Output"].get<bool>(), true);
        QVERIFY(!args[1].contains("Output"));
        // The filter is both the kernel's argument and the __constant__ variable d_filter.
        QCOMPARE(args[2]["Name"].get<std::string>(), std::string("d_filter"));
        QCOMPARE(args[2]["MemType"].get<std::string>(), std::string("Constant"));
        const Json& refs = ks["ReferenceArguments"];
        QCOMPARE(refs.size(), std::size_t(1));
        QCOMPARE(refs[0]["TargetName"].get<std::string>(), std::string("output"));
        QCOMPARE(refs[0]["ValidationMethod"].get<std::string>(), std::string("SideBySideComparison"));
        // atol (1e-3) plus numpy.allclose's relative 1e-5 of the largest expected value.
        QVERIFY(refs[0]["ValidationThreshold"].get<double>() > 1e-3);
        QVERIFY(refs[0]["ValidationThreshold"].get<double>() < 2e-3);
        QCOMPARE(QFileInfo(QFileInfo(problem).dir(), QString::fromStdString(refs[0]["DataSource"].get<std::string>()))
                     .size(),
                 qint64(256 * 128 * 4));
    }

    // Function restrictions go to Tilescope as the configs Python finds valid; the cache is
    // written in Kernel Tuner's layout, and a second run answers from it, measuring nothing.
    void reductionWithCache() {
        requirePython();
        const CliRun first = kt({"reduction.py", "red_cache"}, QStringLiteral("reduction.db"));
        QVERIFY2(first.status == 0, qPrintable(describe(first)));
        const Json s = summary(first);
        QVERIFY2(s.is_object(), qPrintable(describe(first)));
        QCOMPARE(s["expected"].get<int>(), reductionCount());
        QCOMPARE(s["results"].get<int>(), reductionCount());
        QCOMPARE(s["measured"].get<int>(), reductionCount());

        const QString problem = QString::fromStdString(s["problem"].get<std::string>());
        QCOMPARE(spaceCount(problem), static_cast<long long>(reductionCount()));
        const Json t1 = Json::parse(readFile(problem));
        QCOMPARE(t1["Tilescope"]["Configs"].size(), std::size_t(reductionCount()));
        QCOMPARE(t1["ConfigurationSpace"]["Conditions"].size(), std::size_t(0));
        // problem_size "num_blocks": the grid is the parameter itself.
        QCOMPARE(t1["KernelSpecification"]["GlobalSizeType"].get<std::string>(), std::string("CUDA"));
        QCOMPARE(t1["KernelSpecification"]["GlobalSize"]["X"].get<std::string>(), std::string("num_blocks"));
        // The untuned `#pragma unroll loop_unroll_factor_0` is left to the compiler, with a warning,
        // its line emptied so that the file's line numbers stay.
        QVERIFY2(first.err.contains("loop_unroll_factor_0 is not among tune_params"), qPrintable(describe(first)));
        const std::string kernel = readFile(QFileInfo(problem).dir().filePath(
            QString::fromStdString(t1["KernelSpecification"]["KernelFile"].get<std::string>())));
        QVERIFY2(kernel.find("loop_unroll_factor") == std::string::npos, kernel.c_str());
        QVERIFY2(kernel.find("float sum = 0.0f;\n\n    for (int i") != std::string::npos, kernel.c_str());

        const QString cacheFile = m_dir.filePath("red_cache.json");
        const Json cache = Json::parse(readFile(cacheFile), nullptr, false);
        QVERIFY2(!cache.is_discarded(), readFile(cacheFile).c_str());
        QCOMPARE(cache["device_name"].get<std::string>(), std::string("analysis:sm_90"));
        QCOMPARE(cache["kernel_name"].get<std::string>(), std::string("sum_floats"));
        QCOMPARE(cache["problem_size"].get<std::string>(), std::string("num_blocks"));
        KT_COMPARE_JSON(cache["tune_params_keys"], Json::array({"block_size_x", "num_blocks", "vector"}));
        KT_COMPARE_JSON(cache["tune_params"]["vector"], Json::array({1, 2, 4}));
        KT_COMPARE_JSON(cache["objective"], Json::array({"time"}));
        QCOMPARE(cache["cache"].size(), std::size_t(reductionCount()));
        const Json& entry = cache["cache"]["32,64,1"];
        QCOMPARE(entry["block_size_x"].get<int>(), 32);
        QCOMPARE(entry["num_blocks"].get<int>(), 64);
        QVERIFY(entry.contains("time"));
        QVERIFY(entry["compile_time"].get<double>() > 0);
        QVERIFY(entry.contains("timestamp"));
        QVERIFY(!cache["cache"].contains("32,32,1")); // fails the first restriction

        const CliRun second = kt({"reduction.py", "red_cache"}, QStringLiteral("reduction.db"));
        QVERIFY2(second.status == 0, qPrintable(describe(second)));
        const Json s2 = summary(second);
        QCOMPARE(s2["results"].get<int>(), reductionCount());
        QCOMPARE(s2["measured"].get<int>(), 0);
        QCOMPARE(Json::parse(readFile(cacheFile))["cache"].size(), std::size_t(reductionCount()));
        // One session in the database: the second run tuned nothing.
        const CliRun show = runCli({"show", m_dir.filePath("reduction.db"), "--session", "2"});
        QVERIFY2(show.status == 2 && show.err.contains("no session 2 (sessions: 1)"), qPrintable(describe(show)));
    }

    // Kernel Tuner's less common options: block_size_names, functions for the problem size, a
    // grid divisor and the shared memory, tuple and function restrictions, bool, float and
    // string parameters, a header in kernel_source's list.
    void lessCommonOptions() {
        requirePython();
        const CliRun r = kt({"stencil.py"}, QStringLiteral("stencil.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        const Json s = summary(r);
        QVERIFY2(s.is_object(), qPrintable(describe(r)));
        QCOMPARE(s["expected"].get<int>(), stencilCount());
        QCOMPARE(s["results"].get<int>(), stencilCount());
        QVERIFY(s["values"].get<bool>()); // the results carry the script's own bool, float and string values

        const QString problem = QString::fromStdString(s["problem"].get<std::string>());
        QCOMPARE(spaceCount(problem), static_cast<long long>(stencilCount()));
        QVERIFY(QFileInfo::exists(QFileInfo(problem).dir().filePath("stencil_helper.cuh")));
        const Json t1 = Json::parse(readFile(problem));
        const Json& ks = t1["KernelSpecification"];
        KT_COMPARE_JSON(ks["LocalSize"], (Json{{"X", "bx"}, {"Y", "by"}, {"Z", "1"}}));
        KT_COMPARE_JSON(ks["ProblemSize"], Json::array({300, 200})); // the function's value, the same for every config
        KT_COMPARE_JSON(ks["GridDivX"], Json::array({"bx"}));
        KT_COMPARE_JSON(ks["SharedMemory"], Json("bx * by * 4"));
        const Json& params = t1["ConfigurationSpace"]["TuningParameters"];
        QCOMPARE(params[2]["Type"].get<std::string>(), std::string("bool"));
        QCOMPARE(params[3]["Type"].get<std::string>(), std::string("float"));
        QCOMPARE(params[4]["Type"].get<std::string>(), std::string("string"));
        QCOMPARE(t1["Tilescope"]["Configs"].size(), std::size_t(stencilCount()));
    }

    // A code generator's configs: each config compiles its own code (one source, each config's code
    // under a preprocessor condition), the space as Kernel Tuner reads it.
    void codeGenerator() {
        requirePython();
        const CliRun r = kt({"codegen.py"}, QStringLiteral("codegen.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        const Json s = summary(r);
        // block_size_x in {64, 128, 256} x unroll in {1, 2, 4, 8}, block_size_x * unroll <= 1024: 11 configs.
        QCOMPARE(s["count"].get<int>(), 11);
        const QStringList problems =
            QDir(m_dir.filePath("codegen.kt")).entryList({"strided_sum-*"}, QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(problems.size(), 1);
        const QString folder = m_dir.filePath("codegen.kt/" + problems.front());
        QCOMPARE(spaceCount(folder + "/problem.json"), 11LL);
        QFile kernel(folder + "/strided_sum.cu");
        QVERIFY(kernel.open(QIODevice::ReadOnly));
        const QString code = QString::fromUtf8(kernel.readAll());
        QCOMPARE(code.count(QStringLiteral("__global__ void strided_sum")), 4); // one per value of unroll
        QVERIFY2(code.contains(QStringLiteral("#if (unroll == 1)")), qPrintable(code.left(400)));
        // Each config compiled its own code: the unroll depth shows in what the compiler made.
        const CliRun shown = runCli({"show", m_dir.filePath("codegen.db"), "--json"});
        QVERIFY2(shown.status == 0, qPrintable(describe(shown)));
        const Json rows = Json::parse(shown.out.toStdString());
        QCOMPARE(rows.size(), std::size_t(11));
        for (const Json& row : rows)
            QVERIFY2(row["status"] != "compile_error", row.dump().c_str());
    }

    // Kernel Tuner's strategy modules as the strategy (its vector_add_custom_strategy.py passes
    // kernel_tuner.strategies.minimize): each searches as its name does, with the options given.
    void strategyModule() {
        requirePython();
        const CliRun r = kt({"strategy_module.py"}, QStringLiteral("strategy_module.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        const Json s = summary(r);
        QVERIFY2(s.is_object(), qPrintable(describe(r)));
        QCOMPARE(s["sampled"].get<int>(), 4);   // random_sample, fraction 0.5 of 8 configs
        QCOMPARE(s["minimized"].get<int>(), 3); // minimize (Tilescope's auto), max_fevals 3
    }

    // What Tilescope cannot honour stops the script with a message that names the argument.
    // Kernels written for nvcc, as Kernel Tuner's expdist and reduction examples are: CUB's
    // <cub/cub.cuh> (include/cccl in CUDA 13), <stdio.h> for printf, a header found through the
    // script's -I. and a -D, and a template launched by its name with a tuning parameter in it.
    void cudaAsWritten() {
        requirePython();
        const CliRun r = kt({"cross_term.py"}, QStringLiteral("cross_term.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        const Json s = summary(r);
        QVERIFY2(s.is_object(), qPrintable(describe(r)));
        QCOMPARE(s["first"].get<int>(), 12);
        QCOMPARE(s["second"].get<int>(), 3);
        QVERIFY2(s["errors"].empty(), s.dump().c_str());
        // The -I folder is written as the script's working folder gave it, so the problem folder
        // compiles from anywhere.
        const QString first = QString::fromStdString(s["problems"][0].get<std::string>());
        const Json t1 = Json::parse(readFile(first));
        KT_COMPARE_JSON(t1["KernelSpecification"]["CompilerOptions"],
                        Json::array({"-I" + QDir(m_dir.path()).absolutePath().toStdString(), "-DTERM_SCALE=0.5"}));
        const CliRun analysed = runCli({"analyze", first, "--arch", "sm_90", "--index", "0", "--json", "--no-cache"});
        QVERIFY2(analysed.status == 0, qPrintable(describe(analysed)));
        const Json second = Json::parse(readFile(QString::fromStdString(s["problems"][1].get<std::string>())));
        QCOMPARE(second["KernelSpecification"]["KernelName"].get<std::string>(),
                 std::string("reduce_terms<block_size_x>"));
    }

    // A kernel written for CUDA before 9, as Kernel Tuner's spmv example is (__shfl_down): every
    // config fails to compile, and the error names the cause and its replacement.
    void removedIntrinsic() {
        requirePython();
        const CliRun r = kt({"warp_sum.py"}, QStringLiteral("warp_sum.db"));
        QVERIFY2(r.status != 0, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(QStringLiteral("every config failed the same way")), qPrintable(describe(r)));
        QVERIFY2(r.err.contains(QStringLiteral("__shfl_down was removed in CUDA 9; use __shfl_down_sync(0xffffffff, "
                                               "value, delta)")),
                 qPrintable(describe(r)));
    }

    // A script written for Kernel Tuner's early releases takes min(results, key=lambda x: x['time']), as
    // Kernel Tuner's expdist.py does: a config that did not compile has no 'time' in the results
    // (Kernel Tuner 1.5's way), so it fails with KeyError, and kt says what helps; with
    // --omit-failed the results leave it out and the script runs to its end.
    void failedConfigsOmitted() {
        requirePython();
        const CliRun r = kt({"failed_configs.py"}, QStringLiteral("failed.db"));
        QVERIFY2(r.status != 0, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(QStringLiteral("KeyError: 'time'")), qPrintable(describe(r)));
        QVERIFY2(r.err.contains(QStringLiteral("held 1 configs that did not compile or run")), qPrintable(describe(r)));
        QVERIFY2(r.err.contains(QStringLiteral("tilescope-cli kt --omit-failed")), qPrintable(describe(r)));

        const CliRun omitted = kt({"--omit-failed", "failed_configs.py"}, QStringLiteral("failed.db"));
        QVERIFY2(omitted.status == 0, qPrintable(describe(omitted)));
        const Json s = summary(omitted);
        QVERIFY2(s.is_object(), qPrintable(describe(omitted)));
        QCOMPARE(s["results"].get<int>(), 2);
    }

    void refusals_data() {
        QTest::addColumn<QString>("which");
        QTest::addColumn<QString>("message");
        QTest::newRow("texmem_args") << "texmem"
                                     << "Tilescope cannot take texmem_args";
        QTest::newRow("lang OpenCL") << "opencl"
                                     << "Tilescope cannot tune lang='OpenCL' kernels";
        QTest::newRow("an observer") << "observer"
                                     << "Tilescope cannot honour observers[0] (NVMLObserver) for gr_voltage";
        QTest::newRow("a strategy object") << "strategy"
                                           << "Tilescope cannot run strategy MyStrategy";
        QTest::newRow("a code generator") << "generator"
                                          << "Tilescope cannot take kernel_source as a code generator when its "
                                             "code differs with 'op'";
        QTest::newRow("PythonKernel without a GPU") << "pythonkernel"
                                                    << "Tilescope cannot build a PythonKernel on the backend "
                                                       "'analysis:sm_90'";
    }
    void refusals() {
        requirePython();
        QFETCH(QString, which);
        QFETCH(QString, message);
        const CliRun r = kt({"refusals.py", which}, QStringLiteral("refusals.db"));
        QVERIFY2(r.status != 0 && r.status != -1, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(message), qPrintable(describe(r)));
    }

    // An NVMLObserver of nvml_energy, nvml_power and temperature is honoured (Tilescope's energy
    // measurement and GPU state on a GPU); without one, its metric is Kernel Tuner's marker, as
    // every time-based one is.
    void nvmlEnergyObserved() {
        requirePython();
        const CliRun r = kt({"nvml_energy.py"}, QStringLiteral("nvml_energy.db"));
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QCOMPARE(r.out.count(QStringLiteral("energy ")), 3);
        QVERIFY2(r.out.contains(QStringLiteral("energy 128 None None None InvalidConfig")), qPrintable(describe(r)));
    }

    // run_kernel needs a kernel that runs: on the analysis backend it is refused.
    void runKernelWithoutGpu() {
        requirePython();
        const CliRun r = kt({"run_kernel.py"}, QStringLiteral("run_kernel.db"));
        QVERIFY2(r.status != 0 && r.status != -1, qPrintable(describe(r)));
        QVERIFY2(r.err.contains("Tilescope cannot run_kernel on the backend 'analysis:sm_90'"),
                 qPrintable(describe(r)));
    }

    // A large space is enumerated over NumPy arrays: the same configs, in the same order and of
    // the same types, as one config at a time, for every form of restriction it turns element-wise;
    // a restriction that divides by zero on some configs goes one by one (space_arrays.py).
    void spaceOverArrays() {
        requirePython();
        QProcess p;
        p.setWorkingDirectory(m_dir.path());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(TILESCOPE_SOURCE_DIR "/app/cli/kt"));
        p.setProcessEnvironment(env);
        p.start(m_python, {"space_arrays.py"});
        QVERIFY(p.waitForFinished(120000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QVERIFY2(p.exitCode() == 0, qPrintable(out + QString::fromUtf8(p.readAllStandardError())));
        QCOMPARE(out.count(QStringLiteral(" agree ")), 5);
        QCOMPARE(out.count(QStringLiteral("(arrays)")), 4);
        QVERIFY2(out.contains(QStringLiteral("case 2: agree 45312 (one by one)")), qPrintable(out));
    }

    // The package outside `tilescope-cli kt` says where it belongs.
    void outsideKt() {
        requirePython();
        QProcess p;
        p.setWorkingDirectory(m_dir.path());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("TILESCOPE_CLI"));
        env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(TILESCOPE_SOURCE_DIR "/app/cli/kt"));
        p.setProcessEnvironment(env);
        p.start(m_python, {"vector_add.py"});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY(p.exitCode() != 0);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("runs under `tilescope-cli kt SCRIPT.py`"), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestCliKt)
#include "tst_cli_kt.moc"
