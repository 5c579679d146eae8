// tilescope-cli analyze, run as a user runs it: its table and JSON on a kernel that fails to
// compile for some configs, and bad input refused with a message and status 2.

#include "clirun.h"
#include "tritontest.h"

#include "compile/compiler.h"
#include "compile/sass.h"

#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QStringList>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <string>

namespace {

const char* const kBrokenProblem = TILESCOPE_SOURCE_DIR "/kernels/broken/broken.json";
const QString kCli = QStringLiteral(TILESCOPE_CLI);

// analyze compiles every config with NVRTC: give it the time a loaded machine needs.
CliRun runAnalyze(const QStringList& args) {
    return runCli(args, kCli, 300000);
}

const QString kTritonData = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/triton");
const QString kCudaCpp = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/cudacpp");

// The CLI with `env` added to this process's environment.
CliRun runWithEnv(const QStringList& args, const QList<QPair<QString, QString>>& env, int timeoutMs = 300000) {
    QProcess p;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const auto& [k, v] : env)
        environment.insert(k, v);
    p.setProcessEnvironment(environment);
    p.start(kCli, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {};
    }
    CliRun r;
    r.status = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// A copy of tests/data/triton/add.json in `dir` (beside a copy of add.py), changed by `edit`.
template <typename Edit>
QString tritonProblemIn(const QTemporaryDir& dir, Edit edit) {
    QFile::copy(kTritonData + "/add.py", dir.filePath(QStringLiteral("add.py")));
    QFile in(kTritonData + "/add.json");
    in.open(QIODevice::ReadOnly);
    nlohmann::json problem = nlohmann::json::parse(in.readAll().toStdString());
    edit(problem);
    const QString path = dir.filePath(QStringLiteral("problem.json"));
    QFile out(path);
    out.open(QIODevice::WriteOnly);
    out.write(QByteArray::fromStdString(problem.dump(2)));
    return path;
}

} // namespace

class TestCliAnalyze : public QObject {
    Q_OBJECT

private slots:
    void cliAnalyze();
    void cliBadInput_data();
    void cliBadInput();
    void linesWithoutNvdisasm();
    void linesBySourceLine();
    void indexAnalysesThoseConfigs();
    void linesOfTheSpillingOnly();
    void executedNeedsLinesAndAGpu();
    void tritonWithoutTriton();
    void tritonBadInput_data();
    void tritonBadInput();
    void tritonRefusedConfigIsACompileError();
    void tritonLinesBySourceLine();
    void tritonMatmulOffline();
    void cudaAsWritten_data();
    void cudaAsWritten();
    void cudaAsWrittenBadInput_data();
    void cudaAsWrittenBadInput();
    void nvrtcHelpersCompileTheSame();
    void nvrtcHelperThatDiesIsACompileError();
};

// Triton's matmul tutorial kernel (kernels/triton) without a GPU, as CI runs it: its space, the
// registers, spills and occupancy of 20 sampled configs of the widened space for sm_90 (each
// block Triton's num_warps x 32 threads, its tiles in dynamic shared memory), and a session of
// the tutorial's configs with the analysis backend.
void TestCliAnalyze::tritonMatmulOffline() {
    const QString kernels = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/triton");
    const CliRun space = runAnalyze({QStringLiteral("space"), kernels + "/matmul.json"});
    QVERIFY2(space.status == 0, qPrintable(describe(space)));
    QVERIFY2(space.out.contains(QStringLiteral("valid size    8")), qPrintable(space.out));
    QVERIFY2(space.out.contains(QStringLiteral("BLOCK_SIZE_M")) && space.out.contains(QStringLiteral("num_warps")),
             qPrintable(space.out));
    TILESCOPE_NEED_TRITON();

    QTemporaryDir dir;
    const QString cache = dir.filePath(QStringLiteral("cache"));
    const CliRun analyzed =
        runAnalyze({QStringLiteral("analyze"), kernels + "/matmul_wide.json", QStringLiteral("--arch"),
                    QStringLiteral("sm_90"), QStringLiteral("--sample"), QStringLiteral("20"), QStringLiteral("--json"),
                    QStringLiteral("--cache-dir"), cache});
    QVERIFY2(analyzed.status == 0, qPrintable(describe(analyzed)));
    QVERIFY2(analyzed.err.contains(QStringLiteral("20 of 108 valid configs")), qPrintable(analyzed.err));
    const auto records = nlohmann::json::parse(analyzed.out.toStdString());
    QCOMPARE(records.size(), std::size_t(20));
    int launchable = 0;
    for (const auto& r : records) {
        QVERIFY2(r["status"] == "ok", r.dump().c_str());
        QVERIFY(r["registers"].get<int>() > 0 && r["registers"].get<int>() <= 255);
        QVERIFY(r["spill_stores"].get<int>() >= 0 && r["spill_loads"].get<int>() >= 0);
        QCOMPARE(r["block_size"].get<int>(), 32 * r["config"]["num_warps"].get<int>());
        // The A and B tiles of each stage, in shared memory Triton allocates.
        const int tiles = (r["config"]["BLOCK_SIZE_M"].get<int>() + r["config"]["BLOCK_SIZE_N"].get<int>()) *
                          r["config"]["BLOCK_SIZE_K"].get<int>() * 2;
        QVERIFY2(r["shared_dynamic"].get<int>() >= tiles, r.dump().c_str());
        if (!r["occupancy"].is_null() && r["occupancy"].get<double>() > 0) {
            ++launchable;
            QVERIFY(!r["limiter"].is_null());
        }
    }
    QVERIFY(launchable >= 10);
    QVERIFY2(analyzed.err.contains(QStringLiteral("Summary")), qPrintable(analyzed.err));

    const QString db = dir.filePath(QStringLiteral("matmul.db"));
    const CliRun tuned = runAnalyze({QStringLiteral("tune"), kernels + "/matmul.json", QStringLiteral("--backend"),
                                     QStringLiteral("analysis:sm_90"), QStringLiteral("--db"), db,
                                     QStringLiteral("--cache-dir"), cache});
    QVERIFY2(tuned.status == 0, qPrintable(describe(tuned)));
    QVERIFY2(tuned.out.contains(QStringLiteral("8 of 8 configs")), qPrintable(describe(tuned)));
    const CliRun shown = runAnalyze({QStringLiteral("show"), db, QStringLiteral("--json")});
    QVERIFY2(shown.status == 0, qPrintable(describe(shown)));
    const auto results = nlohmann::json::parse(shown.out.toStdString());
    QCOMPARE(results.size(), std::size_t(8));
    for (const auto& r : results) {
        QVERIFY2(r.dump().find("not measured: static analysis for sm_90") != std::string::npos, r.dump().c_str());
        QVERIFY2(r.dump().find("\"registers\"") != std::string::npos, r.dump().c_str());
    }
    const CliRun sessions = runAnalyze({QStringLiteral("show"), db});
    QVERIFY2(sessions.out.contains(QStringLiteral("Triton ")), qPrintable(sessions.out));
}

// --lines on a Triton config that spills (tests/data/triton/spill.py, squeezed by maxnreg 32)
// names the lines of the .py file, with their text, read with the toolkit's nvdisasm or the one
// Triton's wheel ships; the config that does not spill has less local memory, and no spills.
void TestCliAnalyze::tritonLinesBySourceLine() {
    TILESCOPE_NEED_TRITON();
    std::string why;
    if (tilescope::findNvdisasm(&why, true).empty())
        QSKIP(why.c_str());
    const QString problem = kTritonData + "/spill.json";
    const CliRun text =
        runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--lines"), QStringLiteral("--no-cache")});
    QVERIFY2(text.status == 0, qPrintable(describe(text)));
    QVERIFY2(text.err.contains(QStringLiteral("Triton ")), qPrintable(text.err));
    const QString lines = text.out.mid(text.out.indexOf(QStringLiteral("Local memory by source line")));
    QVERIFY2(lines.contains(QStringLiteral("spill.py:19")), qPrintable(lines));
    QVERIFY2(lines.contains(QStringLiteral("acc = acc * tile + tl.sin(acc + step)")), qPrintable(lines));

    const CliRun json =
        runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--lines"), QStringLiteral("--json")});
    QVERIFY2(json.status == 0, qPrintable(describe(json)));
    const auto records = nlohmann::json::parse(json.out.toStdString());
    QCOMPARE(records.size(), std::size_t(2));
    // Local stores and loads by line: the spilling config's, and the other's (Triton 3.6 gives it
    // a small stack frame of its own, not spills).
    int squeezed = 0, roomy = 0;
    for (const auto& r : records) {
        const auto& l = r["lines"];
        QVERIFY2(!l.contains("error"), l.dump().c_str());
        if (r["config"]["maxnreg"].get<int>() == 128) {
            QCOMPARE(r["spill_stores"].get<int>(), 0);
            roomy = l["local_stores"].get<int>() + l["local_loads"].get<int>() + l["spill_stores"].get<int>() +
                    l["spill_loads"].get<int>();
            continue;
        }
        squeezed = l["local_stores"].get<int>() + l["local_loads"].get<int>() + l["spill_stores"].get<int>() +
                   l["spill_loads"].get<int>();
        QVERIFY(r["spill_stores"].get<int>() > 0);
        QVERIFY(!l["local_lines"].empty());
        int local = 0;
        for (const auto& line : l["local_lines"]) {
            QCOMPARE(line["file"].get<std::string>(), std::string("spill.py"));
            QVERIFY(line["line"].get<int>() >= 7 && line["line"].get<int>() <= 21);
            local += line["spill_stores"].get<int>() + line["local_stores"].get<int>();
        }
        QVERIFY(local > 0);
        // The loop's line holds the most.
        QCOMPARE(l["local_lines"][0]["line"].get<int>(), 19);
        QCOMPARE(l["local_lines"][0]["text"].get<std::string>(), std::string("acc = acc * tile + tl.sin(acc + step)"));
    }
    QVERIFY2(squeezed > roomy, qPrintable(QStringLiteral("%1 against %2").arg(squeezed).arg(roomy)));
}

// Without Triton (no such Python, or a Python without the triton module), a Triton problem is
// refused by every command that compiles, saying how to install it; counting needs no Triton, and
// CUDA problems compile as before.
void TestCliAnalyze::tritonWithoutTriton() {
    QTemporaryDir dir;
    const QString problem = kTritonData + "/add.json";
    const QString db = dir.filePath(QStringLiteral("r.db"));
    QList<QPair<QString, QString>> pythons{
        {QStringLiteral("TILESCOPE_PYTHON"), QStringLiteral("/nonexistent/python3")}};
    if (haveProgram("python3")) {
        // python3 without its site packages: no triton, wherever one is installed.
        const QString wrapper = dir.filePath(QStringLiteral("bare-python"));
        QFile script(wrapper);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("#!/bin/sh\nexec python3 -S \"$@\"\n");
        script.close();
        script.setPermissions(script.permissions() | QFileDevice::ExeOwner);
        pythons.append({QStringLiteral("TILESCOPE_PYTHON"), wrapper});
    }
    for (const auto& python : pythons) {
        const QList<QPair<QString, QString>> env{python};
        const CliRun space = runWithEnv({QStringLiteral("space"), problem, QStringLiteral("--count")}, env);
        QVERIFY2(space.status == 0, qPrintable(describe(space)));
        for (const QStringList& args : {QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--no-cache")},
                                        QStringList{QStringLiteral("tune"), problem, QStringLiteral("--backend"),
                                                    QStringLiteral("analysis:sm_90"), QStringLiteral("--db"), db}}) {
            const CliRun r = runWithEnv(args, env);
            QVERIFY2(r.status == 2, qPrintable(describe(r)));
            QVERIFY2(r.err.contains(QStringLiteral("pip install triton")) &&
                         r.err.contains(QStringLiteral("TILESCOPE_PYTHON")),
                     qPrintable(describe(r)));
            QVERIFY2(r.err.contains(python.second == QStringLiteral("/nonexistent/python3")
                                        ? QStringLiteral("cannot start /nonexistent/python3")
                                        : QStringLiteral("cannot import triton")),
                     qPrintable(describe(r)));
        }
        QVERIFY(!QFile::exists(db));
        const CliRun cuda = runWithEnv({QStringLiteral("analyze"), QString::fromLatin1(kBrokenProblem),
                                        QStringLiteral("--sample"), QStringLiteral("1"), QStringLiteral("--no-cache")},
                                       env);
        QVERIFY2(cuda.status == 0, qPrintable(describe(cuda)));
    }
}

// A Triton problem that does not fit its kernel: status 2, the field, the name and why, before
// anything compiles (so without Triton too).
void TestCliAnalyze::tritonBadInput_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing function") << "KernelName"
                                      << "add"
                                      << "/KernelSpecification/KernelName: no function 'add' at the top level of the "
                                         "kernel file add.py (its @triton.jit functions: add_kernel)";
    QTest::newRow("non-constexpr parameter")
        << "Parameter"
        << "n"
        << "/ConfigurationSpace/TuningParameters/2/Name: tuning parameter 'n' is a parameter of add_kernel that is not "
           "tl.constexpr (add.py line 9)";
    QTest::newRow("neither parameter nor option")
        << "Parameter"
        << "BLOCK_SIZE"
        << "tuning parameter 'BLOCK_SIZE' is neither a tl.constexpr parameter of add_kernel (add.py line 7) nor one of "
           "Triton's compile options";
    QTest::newRow("an argument missing") << "Arguments"
                                         << "4"
                                         << "/KernelSpecification/Arguments: the Triton kernel add_kernel (add.py line "
                                            "7) takes 5 arguments that are not tl.constexpr (x_ptr, y_ptr, out_ptr, n, "
                                            "scale), and Arguments has 4";
}

void TestCliAnalyze::tritonBadInput() {
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString problem = tritonProblemIn(dir, [&](nlohmann::json& p) {
        if (field == QStringLiteral("KernelName"))
            p["KernelSpecification"]["KernelName"] = value.toStdString();
        else if (field == QStringLiteral("Parameter"))
            p["ConfigurationSpace"]["TuningParameters"].push_back(
                {{"Name", value.toStdString()}, {"Type", "int"}, {"Values", "[16, 32]"}});
        else
            p["KernelSpecification"]["Arguments"].erase(value.toInt());
        p["ConfigurationSpace"]["Conditions"] = nlohmann::json::array();
    });
    for (const QStringList& args :
         {QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--no-cache")},
          QStringList{QStringLiteral("tune"), problem, QStringLiteral("--backend"), QStringLiteral("analysis:sm_90"),
                      QStringLiteral("--db"), dir.filePath(QStringLiteral("r.db"))}}) {
        const CliRun r = runAnalyze(args);
        QVERIFY2(r.status == 2 && r.err.contains(message), qPrintable(message + "\n" + describe(r)));
        QVERIFY(r.out.isEmpty());
    }
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("r.db"))));
    // Counting needs no kernel: space counts, and says why the kernel cannot be compiled.
    const CliRun space = runAnalyze({QStringLiteral("space"), problem});
    QVERIFY2(space.status == 0 && space.err.contains(message), qPrintable(describe(space)));
}

// A config Triton refuses is that config's compile_error, with Triton's message, and the others
// compile: in analyze and in a session.
void TestCliAnalyze::tritonRefusedConfigIsACompileError() {
    TILESCOPE_NEED_TRITON();
    QTemporaryDir dir;
    const QString problem = tritonProblemIn(dir, [](nlohmann::json& p) {
        p["ConfigurationSpace"]["TuningParameters"][0]["Values"] = "[256, 300]";
        p["ConfigurationSpace"]["TuningParameters"][1]["Values"] = "[4]";
        p["ConfigurationSpace"]["Conditions"] = nlohmann::json::array();
    });
    const QString cache = dir.filePath(QStringLiteral("cache"));
    const CliRun analyzed = runAnalyze(
        {QStringLiteral("analyze"), problem, QStringLiteral("--cache-dir"), cache, QStringLiteral("--json")});
    QVERIFY2(analyzed.status == 0, qPrintable(describe(analyzed)));
    const auto records = nlohmann::json::parse(analyzed.out.toStdString());
    QCOMPARE(records.size(), std::size_t(2));
    for (const auto& r : records) {
        const bool refused = r["config"]["BLOCK"].get<int>() == 300;
        QCOMPARE(QString::fromStdString(r["status"].get<std::string>()),
                 refused ? QStringLiteral("compile_error") : QStringLiteral("ok"));
        if (refused)
            QVERIFY2(r["message"].get<std::string>().find("add.py:14:29: arange's range must be a power of 2") !=
                         std::string::npos,
                     r.dump().c_str());
        else
            QCOMPARE(r["block_size"].get<int>(), 128);
    }
    const QString db = dir.filePath(QStringLiteral("r.db"));
    const CliRun tuned =
        runAnalyze({QStringLiteral("tune"), problem, QStringLiteral("--backend"), QStringLiteral("analysis:sm_90"),
                    QStringLiteral("--db"), db, QStringLiteral("--cache-dir"), cache});
    QVERIFY2(tuned.status == 0, qPrintable(describe(tuned)));
    const CliRun shown = runAnalyze({QStringLiteral("show"), db, QStringLiteral("--json")});
    QVERIFY2(shown.status == 0, qPrintable(describe(shown)));
    const auto results = nlohmann::json::parse(shown.out.toStdString());
    bool sawError = false;
    for (const auto& r : results) {
        if (r["config"]["BLOCK"].get<int>() != 300)
            continue;
        sawError = true;
        QCOMPARE(r["status"].get<std::string>(), std::string("compile_error"));
        QVERIFY2(r.dump().find("arange's range must be a power of 2") != std::string::npos, r.dump().c_str());
    }
    QVERIFY(sawError);
}

// --executed runs the configs on this machine's GPU: it needs --lines, and without a GPU it is a
// clear exit 2 (the counts themselves are checked on the GPU, tests/gpu/tst_cudabackend).
void TestCliAnalyze::executedNeedsLinesAndAGpu() {
    const QString problem = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/sass/spill.json");
    const CliRun alone = runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--executed")});
    QCOMPARE(alone.status, 2);
    QVERIFY2(alone.err.contains(QStringLiteral("--lines")), qPrintable(alone.err));

    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("TILESCOPE_NVDISASM"), QStringLiteral("/bin/true")); // found; the GPU is what is missing
    p.setProcessEnvironment(env);
    p.start(kCli, {QStringLiteral("analyze"), problem, QStringLiteral("--lines"), QStringLiteral("--executed"),
                   QStringLiteral("--no-cache")});
    QVERIFY(p.waitForFinished(120000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    if (p.exitCode() == 0)
        QSKIP("a GPU is here: tests/gpu/tst_cudabackend checks the executed counts");
    QCOMPARE(p.exitCode(), 2);
    QVERIFY2(err.contains(QStringLiteral("NVIDIA driver")), qPrintable(err));
    // What fits without a GPU: the same analysis without --executed (it is offline already).
    QVERIFY2(err.contains(QStringLiteral("--executed runs each config on this machine's GPU; without one, leave it "
                                         "out: --lines alone counts")),
             qPrintable(err));
    QVERIFY2(!err.contains(QStringLiteral("analyse offline")) && !err.contains(QStringLiteral("replay")),
             qPrintable(err));
    QVERIFY(p.readAllStandardOutput().isEmpty());
}

// --lines needs nvdisasm: without one (TILESCOPE_NVDISASM naming nothing), exit 2 before any
// compile, naming the option and what to set.
void TestCliAnalyze::linesWithoutNvdisasm() {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("TILESCOPE_NVDISASM"), QStringLiteral("/nonexistent/nvdisasm"));
    p.setProcessEnvironment(env);
    p.start(kCli, {QStringLiteral("analyze"), QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/sass/spill.json"),
                   QStringLiteral("--lines"), QStringLiteral("--no-cache")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains(QStringLiteral("--lines: TILESCOPE_NVDISASM names /nonexistent/nvdisasm")), qPrintable(err));
    QVERIFY(p.readAllStandardOutput().isEmpty());
}

// Where nvdisasm is installed: the spilling fixture's lines, most first, with their text, and the
// same counts in --json (tests/data/sass/spill.sass pins what NVRTC 13.0 and nvdisasm make of it).
void TestCliAnalyze::linesBySourceLine() {
    const CliRun probe =
        runProgram(QStringLiteral("/bin/sh"),
                   {QStringLiteral("-c"), QStringLiteral("command -v nvdisasm || test -x \"$TILESCOPE_NVDISASM\"")});
    if (probe.status != 0)
        QSKIP("nvdisasm is not installed (on PATH or as $TILESCOPE_NVDISASM)");
    const QString problem = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/sass/spill.json");
    const CliRun text =
        runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--lines"), QStringLiteral("--no-cache")});
    QVERIFY2(text.status == 0, qPrintable(describe(text)));
    const qsizetype section = text.out.indexOf(QStringLiteral("Local memory by source line"));
    QVERIFY2(section >= 0, qPrintable(text.out));
    const QString lines = text.out.mid(section);
    QVERIFY2(lines.contains(QStringLiteral("98 spill stores and 102 spill loads, 4 local stores and 1 local loads")),
             qPrintable(lines));
    const qsizetype first = lines.indexOf(QStringLiteral("spill.cu:15"));
    QVERIFY2(first > 0 && first < lines.indexOf(QStringLiteral("spill.cu:17")), qPrintable(lines));
    QVERIFY(lines.contains(QStringLiteral("acc[j] = acc[j] * acc[(j + 5) % 48] + in[t * n + j];")));
    const CliRun json =
        runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--lines"), QStringLiteral("--json")});
    QVERIFY2(json.status == 0, qPrintable(describe(json)));
    const auto records = nlohmann::json::parse(json.out.toStdString());
    QCOMPARE(records.size(), std::size_t(2));
    for (const auto& r : records) {
        const auto& l = r["lines"];
        QCOMPARE(l["spill_stores"].get<int>(), 98);
        QCOMPARE(l["local_stores"].get<int>(), 4);
        int stores = 0;
        for (const auto& line : l["local_lines"])
            stores += line["spill_stores"].get<int>();
        QCOMPARE(stores, 98);
        QCOMPARE(l["local_lines"][0]["line"].get<int>(), 15);
        QCOMPARE(l["local_lines"][0]["file"].get<std::string>(), std::string("spill.cu"));
    }
}

// A problem in `dir` of two configs of one kernel: WIDE=0 a copy without local memory, WIDE=1 the
// spilling fixture's body (tests/data/sass/spill.cu: 48 accumulators under --maxrregcount=32).
static QString mixedSpillProblem(const QTemporaryDir& dir) {
    QFile source(QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/sass/spill.cu"));
    source.open(QIODevice::ReadOnly);
    QString body = QString::fromUtf8(source.readAll());
    body.replace(QStringLiteral("extern \"C\" __global__ void spill(float *out, const float *in, int n, int k) {"),
                 QStringLiteral("extern \"C\" __global__ void spill(float *out, const float *in, int n, int k) {\n"
                                "#if !WIDE\n    out[blockIdx.x * blockDim.x + threadIdx.x] = 2.0f * in[threadIdx.x];\n"
                                "    return;\n#else"));
    body.replace(QStringLiteral("    out[i] = s;\n}"), QStringLiteral("    out[i] = s;\n#endif\n}"));
    QFile kernel(dir.filePath(QStringLiteral("mixed.cu")));
    kernel.open(QIODevice::WriteOnly);
    kernel.write(body.toUtf8());
    QFile in(QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/sass/spill.json"));
    in.open(QIODevice::ReadOnly);
    nlohmann::json problem = nlohmann::json::parse(in.readAll().toStdString());
    problem["KernelSpecification"]["KernelFile"] = "mixed.cu";
    problem["ConfigurationSpace"]["TuningParameters"] =
        nlohmann::json::array({{{"Name", "WIDE"}, {"Type", "int"}, {"Values", "[0, 1]"}},
                               {{"Name", "block_size_x"}, {"Type", "int"}, {"Values", "[64]"}}});
    const QString path = dir.filePath(QStringLiteral("mixed.json"));
    QFile out(path);
    out.open(QIODevice::WriteOnly);
    out.write(QByteArray::fromStdString(problem.dump(2)));
    return path;
}

// --index I,J analyses those configs of the space, in index order, once each; an index past the
// space is bad input naming the space's size, and --index goes with neither --all nor --sample.
void TestCliAnalyze::indexAnalysesThoseConfigs() {
    QTemporaryDir dir;
    const QString problem = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");
    const QString cache = dir.filePath(QStringLiteral("cache"));
    const CliRun json =
        runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--index"), QStringLiteral("1217,54,54"),
                    QStringLiteral("--json"), QStringLiteral("--cache-dir"), cache});
    QVERIFY2(json.status == 0, qPrintable(describe(json)));
    const auto records = nlohmann::json::parse(json.out.toStdString());
    QCOMPARE(records.size(), std::size_t(2));
    QCOMPARE(records[0]["index"].get<int>(), 54);
    QCOMPARE(records[1]["index"].get<int>(), 1217);
    QCOMPARE(records[1]["config"]["BLOCK_M"].get<int>(), 64);
    QVERIFY2(json.err.contains(QStringLiteral("Analysing 2 configs 54, 1217 of 2,761 valid configs")),
             qPrintable(json.err));
    const CliRun text = runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--index"), QStringLiteral("54"),
                                    QStringLiteral("--cache-dir"), cache});
    QVERIFY2(text.status == 0 && text.err.contains(QStringLiteral("Analysing config 54 of 2,761 valid configs")),
             qPrintable(describe(text)));
    QVERIFY2(text.out.contains(QRegularExpression(QStringLiteral("\n +54 +32 +64 +32 "))), qPrintable(text.out));
    const CliRun past =
        runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--index"), QStringLiteral("2761")});
    QCOMPARE(past.status, 2);
    QVERIFY2(past.err.contains(
                 QStringLiteral("--index: no config 2761: the space has 2,761 valid configs (index 0 to 2760)")),
             qPrintable(describe(past)));
    for (const QString& other : {QStringLiteral("--all"), QStringLiteral("--sample=3")}) {
        const CliRun both =
            runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--index"), QStringLiteral("1"), other});
        QCOMPARE(both.status, 2);
        QVERIFY2(both.err.contains(QStringLiteral("excludes")), qPrintable(describe(both)));
    }
    const CliRun negative =
        runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--index"), QStringLiteral("1,-2")});
    QCOMPARE(negative.status, 2);
}

// --lines --spilling reads with nvdisasm only the configs with spills or local memory, and lists
// only those: nvdisasm runs once per config shown (counted through a wrapper), the others are
// counted in a line. --spilling needs --lines.
void TestCliAnalyze::linesOfTheSpillingOnly() {
    QTemporaryDir dir;
    const QString problem = mixedSpillProblem(dir);
    const CliRun alone = runAnalyze({QStringLiteral("analyze"), problem, QStringLiteral("--spilling")});
    QCOMPARE(alone.status, 2);
    QVERIFY2(alone.err.contains(QStringLiteral("--spilling requires --lines")), qPrintable(describe(alone)));

    const CliRun probe =
        runProgram(QStringLiteral("/bin/sh"),
                   {QStringLiteral("-c"), QStringLiteral("test -x \"$TILESCOPE_NVDISASM\" && echo "
                                                         "\"$TILESCOPE_NVDISASM\" || command -v nvdisasm")});
    if (probe.status != 0)
        QSKIP("nvdisasm is not installed (on PATH or as $TILESCOPE_NVDISASM)");
    const QString nvdisasm = probe.out.trimmed();
    const QString calls = dir.filePath(QStringLiteral("calls"));
    const QString wrapper = dir.filePath(QStringLiteral("nvdisasm"));
    QFile script(wrapper);
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write(QStringLiteral("#!/bin/sh\necho run >> '%1'\nexec '%2' \"$@\"\n").arg(calls, nvdisasm).toUtf8());
    script.close();
    script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    const QList<QPair<QString, QString>> env = {{QStringLiteral("TILESCOPE_NVDISASM"), wrapper}};
    const auto callCount = [&] {
        QFile f(calls);
        const int n = f.open(QIODevice::ReadOnly) ? static_cast<int>(f.readAll().count('\n')) : 0;
        QFile::remove(calls);
        return n;
    };

    const CliRun text = runWithEnv({QStringLiteral("analyze"), problem, QStringLiteral("--lines"),
                                    QStringLiteral("--spilling"), QStringLiteral("--no-cache")},
                                   env);
    QVERIFY2(text.status == 0, qPrintable(describe(text)));
    QCOMPARE(callCount(), 1);
    const QString lines = text.out.mid(text.out.indexOf(QStringLiteral("Local memory by source line")));
    QVERIFY2(!lines.contains(QStringLiteral("index 0 on sm_90")) &&
                 lines.contains(QStringLiteral("index 1 on sm_90  WIDE=1")),
             qPrintable(lines));
    QVERIFY2(lines.contains(QStringLiteral("1 config without spills or local memory not read (--spilling)")),
             qPrintable(lines));
    QVERIFY2(lines.contains(QStringLiteral("mixed.cu:")), qPrintable(lines));

    const CliRun json = runWithEnv({QStringLiteral("analyze"), problem, QStringLiteral("--lines"),
                                    QStringLiteral("--spilling"), QStringLiteral("--json")},
                                   env);
    QVERIFY2(json.status == 0, qPrintable(describe(json)));
    QCOMPARE(callCount(), 1);
    const auto records = nlohmann::json::parse(json.out.toStdString());
    QCOMPARE(records.size(), std::size_t(2));
    QVERIFY2(!records[0].contains("lines"), records[0].dump().c_str());
    QVERIFY2(records[1]["lines"]["local_stores"].get<int>() + records[1]["lines"]["spill_stores"].get<int>() > 0,
             records[1].dump().c_str());

    // Without --spilling every compiled config is read; with --index only those asked for.
    QVERIFY(runWithEnv({QStringLiteral("analyze"), problem, QStringLiteral("--lines")}, env).status == 0);
    QCOMPARE(callCount(), 2);
    const CliRun one = runWithEnv(
        {QStringLiteral("analyze"), problem, QStringLiteral("--lines"), QStringLiteral("--index"), QStringLiteral("0")},
        env);
    QVERIFY2(one.status == 0 && one.out.contains(QStringLiteral("no spills and no local memory")),
             qPrintable(describe(one)));
    QCOMPARE(callCount(), 1);
}

void TestCliAnalyze::cliAnalyze() {
    QVERIFY2(QFile::exists(kCli), qPrintable(kCli + QStringLiteral(" is missing: the tests build it")));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString csv = dir.filePath(QStringLiteral("out.csv"));
    const QStringList args = {QStringLiteral("analyze"),
                              QString::fromLatin1(kBrokenProblem),
                              QStringLiteral("--arch"),
                              QStringLiteral("sm_90,sm_80"),
                              QStringLiteral("--sample"),
                              QStringLiteral("6"),
                              QStringLiteral("--seed"),
                              QStringLiteral("3"),
                              QStringLiteral("--cache-dir"),
                              dir.filePath(QStringLiteral("cache")),
                              QStringLiteral("--json"),
                              QStringLiteral("--csv"),
                              csv};
    const CliRun first = runAnalyze(args);
    QVERIFY2(first.status == 0, qPrintable(first.err));
    const nlohmann::json records = nlohmann::json::parse(first.out.toStdString());
    QVERIFY(records.is_array());
    QCOMPARE(records.size(), std::size_t(12));
    std::size_t errors = 0;
    for (const auto& record : records) {
        for (const char* key : {"config", "arch", "registers", "spill_stores", "spill_loads", "stack_frame",
                                "shared_bytes", "occupancy", "limiter"})
            QVERIFY2(record.contains(key), key);
        QVERIFY(record["config"].contains("BLOCK") && record["config"].contains("ITEMS"));
        // UNROLL=3 is the broken variant: those, and only those, do not compile.
        const bool broken = record["config"]["UNROLL"].get<int>() == 3;
        QCOMPARE(QString::fromStdString(record["status"].get<std::string>()),
                 QString::fromLatin1(broken ? "compile_error" : "ok"));
        if (record["status"] == "compile_error") {
            ++errors;
            QVERIFY(record["registers"].is_null());
            QVERIFY(record["log"].get<std::string>().find("deliberate syntax error") != std::string::npos);
        } else {
            QCOMPARE(record["status"].get<std::string>(), std::string("ok"));
            QVERIFY(record["registers"].get<int>() > 0);
            QVERIFY(record["occupancy"].get<double>() > 0);
            QCOMPARE(record["shared_bytes"].get<std::int64_t>(), 4 * record["config"]["BLOCK"].get<std::int64_t>());
        }
    }
    QCOMPARE(errors, std::size_t(6)); // the sample of seed 3 holds three UNROLL=3 configs, each for two archs
    QVERIFY(first.err.contains(QStringLiteral("Summary")));
    QVERIFY2(first.err.contains(QStringLiteral("compiled 12/12")), qPrintable(first.err));

    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csvFile.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 13);
    QVERIFY(lines[0].startsWith(QStringLiteral("index,BLOCK,ITEMS,UNROLL,arch,status,registers")));

    // Again: everything from the cache, the same records bar the cached flag; the text table.
    QStringList textArgs = args.mid(0, 10);
    const CliRun second = runAnalyze(textArgs);
    QVERIFY2(second.status == 0, qPrintable(second.err));
    QVERIFY2(second.err.contains(QStringLiteral("12 from the cache")), qPrintable(second.err));
    QVERIFY(second.out.contains(QStringLiteral("occ %")));
    QVERIFY(second.out.contains(QStringLiteral("Summary")));
    QVERIFY2(second.out.contains(QStringLiteral("Compile errors")), qPrintable(second.out));
    QVERIFY2(second.out.contains(QStringLiteral("deliberate syntax error")), qPrintable(second.out));
}

void TestCliAnalyze::cliBadInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("inMessage");
    const QString problem = QString::fromLatin1(kBrokenProblem);
    QTest::newRow("unknown arch") << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--arch"),
                                                 QStringLiteral("sm_91")}
                                  << "sm_91";
    QTest::newRow("arch without a table")
        << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--arch"), QStringLiteral("sm_88")}
        << "occupancy limits";
    QTest::newRow("shape out of range") << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--shape"),
                                                       QStringLiteral("4")}
                                        << "shape 4";
    QTest::newRow("missing problem") << QStringList{QStringLiteral("analyze"), QStringLiteral("/no/such/problem.json")}
                                     << "no/such/problem.json";
    QTest::newRow("all and sample") << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--all"),
                                                   QStringLiteral("--sample"), QStringLiteral("3")}
                                    << "exclude";
    QTest::newRow("cache-dir and no-cache")
        << QStringList{QStringLiteral("analyze"), problem, QStringLiteral("--no-cache"), QStringLiteral("--cache-dir"),
                       QStringLiteral("/tmp")}
        << "exclude";
}

void TestCliAnalyze::cliBadInput() {
    QFETCH(QStringList, args);
    QFETCH(QString, inMessage);
    QVERIFY2(QFile::exists(kCli), qPrintable(kCli + QStringLiteral(" is missing: the tests build it")));
    const CliRun run = runAnalyze(args);
    QCOMPARE(run.status, 2);
    QVERIFY2(run.err.contains(inMessage, Qt::CaseInsensitive), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
}

// CUDA C++ written for nvcc (tests/data/cudacpp): the toolkit's headers, the C headers NVRTC
// lacks and a templated kernel name, each analysed for sm_90 with registers and occupancy.
void TestCliAnalyze::cudaAsWritten_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<int>("configs");
    QTest::newRow("<cub/cub.cuh> block reduce, templated name") << "cub_block.json" << 2;
    QTest::newRow("<cooperative_groups.h>") << "coop_groups.json" << 4;
    QTest::newRow("<cuda/std/array>, <cuda_fp16.h>") << "std_array.json" << 4;
    QTest::newRow("<stdio.h> printf, <math.h>, <stdint.h>") << "printf.json" << 2;
}

void TestCliAnalyze::cudaAsWritten() {
    QFETCH(QString, problem);
    QFETCH(int, configs);
    const CliRun r = runAnalyze({"analyze", kCudaCpp + "/" + problem, "--arch", "sm_90", "--all", "--json"});
    QVERIFY2(r.status == 0, qPrintable(r.err));
    const nlohmann::json records = nlohmann::json::parse(r.out.toStdString());
    QCOMPARE(records.size(), std::size_t(configs));
    for (const nlohmann::json& record : records) {
        QVERIFY2(record["status"] == "ok", record.dump().c_str());
        QVERIFY2(record["registers"].get<int>() > 0, record.dump().c_str());
        QVERIFY2(record["occupancy"].get<double>() > 0, record.dump().c_str());
    }
    if (problem == "cub_block.json") // CUB's temporary storage
        QVERIFY2(records[0]["shared_static"].get<int>() > 0, records[0].dump().c_str());
}

void TestCliAnalyze::cudaAsWrittenBadInput_data() {
    QTest::addColumn<QString>("problem");
    QTest::addColumn<QString>("kernelName"); // replaces the problem's, when given
    QTest::addColumn<QStringList>("expected");
    const QString toolkitCccl = QStringLiteral("/include/cccl");
    QTest::newRow("a header no folder has")
        << "missing_header.json" << QString()
        << QStringList{"missing_header.cu(3)", "\"kernel_helpers/not_shipped.cuh\" is in none of the folders searched",
                       kCudaCpp, toolkitCccl};
    QTest::newRow("a template name that does not instantiate")
        << "cub_block.json"
        << "block_share<block_size_x, no_such_type>"
        << QStringList{"no __global__ function 'block_share<128, no_such_type>'"};
}

void TestCliAnalyze::cudaAsWrittenBadInput() {
    QFETCH(QString, problem);
    QFETCH(QString, kernelName);
    QFETCH(QStringList, expected);
    QString path = kCudaCpp + "/" + problem;
    QTemporaryDir dir;
    if (!kernelName.isEmpty()) {
        QFile in(path);
        QVERIFY(in.open(QIODevice::ReadOnly));
        nlohmann::json doc = nlohmann::json::parse(in.readAll().toStdString());
        doc["KernelSpecification"]["KernelName"] = kernelName.toStdString();
        doc["KernelSpecification"]["KernelFile"] =
            (kCudaCpp + "/" + doc["KernelSpecification"]["KernelFile"].get<std::string>().c_str()).toStdString();
        path = dir.filePath(QStringLiteral("problem.json"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QByteArray::fromStdString(doc.dump(2)));
    }
    const CliRun r = runAnalyze({"analyze", path, "--arch", "sm_90", "--all"});
    QVERIFY2(r.status == 2, qPrintable(QString::number(r.status) + r.err));
    QVERIFY2(r.err.contains(QStringLiteral("every config analysed failed to compile with the same error")),
             qPrintable(r.err));
    for (const QString& part : expected)
        QVERIFY2(r.err.contains(part), qPrintable(part + " not in: " + r.err));
}

// NVRTC compiles in helper processes (tilescope-worker --compile, one per compile thread) where
// the worker is beside the CLI, as here; in the CLI itself with TILESCOPE_NVRTC_HELPERS=off. A
// kernel that includes CUB's headers (whose front end NVRTC runs one at a time in a process)
// analyses the same either way.
void TestCliAnalyze::nvrtcHelpersCompileTheSame() {
    QTemporaryDir dir; // a compile cache of each run's own: both compile
    const QStringList args{"analyze", kCudaCpp + "/cub_block.json", "--arch", "sm_90", "--all", "--json"};
    const CliRun helped = runAnalyze(args + QStringList{"--cache-dir", dir.filePath(QStringLiteral("helped"))});
    QVERIFY2(helped.status == 0, qPrintable(helped.err));
    const CliRun here = runWithEnv(args + QStringList{"--cache-dir", dir.filePath(QStringLiteral("here"))},
                                   {{QStringLiteral("TILESCOPE_NVRTC_HELPERS"), QStringLiteral("off")}});
    QVERIFY2(here.status == 0, qPrintable(here.err));
    const nlohmann::json a = nlohmann::json::parse(helped.out.toStdString());
    const nlohmann::json b = nlohmann::json::parse(here.out.toStdString());
    QCOMPARE(a.size(), std::size_t(2));
    QCOMPARE(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        QVERIFY2(a[i]["status"] == "ok", a[i].dump().c_str());
        for (const char* field : {"config", "registers", "shared_static", "spill_stores", "stack_frame", "occupancy"})
            QVERIFY2(a[i][field] == b[i][field], (a[i].dump() + "\n" + b[i].dump()).c_str());
    }
}

// A helper that dies during a compile (NVRTC crashing on a config) takes that compile down, not
// the program: the config is a compile error that says so, and the others go on. The worker here
// is a script that answers as a helper does, then kills itself at the first request.
void TestCliAnalyze::nvrtcHelperThatDiesIsACompileError() {
    QTemporaryDir dir;
    const QString script = dir.filePath(QStringLiteral("dying-worker"));
    {
        QFile f(script);
        QVERIFY(f.open(QIODevice::WriteOnly));
        const std::string hello = nlohmann::json{{"nvrtc", tilescope::nvrtcVersionString()}}.dump();
        QVERIFY(hello.size() < 64);
        // the hello: its header's size (u32) and its blob's (u64), little-endian, then the header
        std::string sizes = "\\" + QString::number(hello.size(), 8).rightJustified(3, '0').toStdString();
        for (int i = 0; i < 11; ++i)
            sizes += "\\000";
        f.write(("#!/bin/sh\nprintf '" + sizes + "%s' '" + hello + "'\nhead -c 1 > /dev/null\nkill -9 $$\n").c_str());
    }
    QVERIFY(QFile::setPermissions(script, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
    const CliRun r = runWithEnv({"analyze", kCudaCpp + "/std_array.json", "--arch", "sm_90", "--all", "--json",
                                 "--cache-dir", dir.filePath(QStringLiteral("cache"))},
                                {{QStringLiteral("TILESCOPE_WORKER"), script}});
    // every config fails alike: said as the cause, status 2
    QVERIFY2(r.status == 2, qPrintable(r.err + r.out));
    QVERIFY2(r.err.contains(QStringLiteral("its compile helper was killed by signal 9")), qPrintable(r.err));
    const nlohmann::json records = nlohmann::json::parse(r.out.toStdString());
    QVERIFY(!records.empty());
    for (const nlohmann::json& record : records) {
        QVERIFY2(record["status"] == "compile_error" && !record.value("cached", false), record.dump().c_str());
        const std::string message = record["message"].get<std::string>();
        QVERIFY2(message.find("its compile helper was killed by signal 9") != std::string::npos, message.c_str());
    }
}

QTEST_GUILESS_MAIN(TestCliAnalyze)
#include "tst_cli_analyze.moc"
