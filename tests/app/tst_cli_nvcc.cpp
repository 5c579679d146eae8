// The nvcc path (Tilescope.Compiler "nvcc"): a kernel NVRTC cannot compile, compiled by nvcc
// through the real compile service and cache and analysed by the real CLI; nvcc's errors located;
// no nvcc, an unset variable and a header folder that is not there refused with status 2; the
// CUTLASS GEMM of kernels/cutlass_gemm counted, and one config analysed where CUTLASS_DIR is set.

#include "clirun.h"

#include "compile/compilecache.h"
#include "compile/compileservice.h"
#include "compile/nvcc.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace tilescope;

namespace {

const QString kCli = QStringLiteral(TILESCOPE_CLI);
const char* const kScaleProblem = TILESCOPE_TEST_DATA "/nvcc/scale.json";
const char* const kCutlassProblem = TILESCOPE_SOURCE_DIR "/kernels/cutlass_gemm/cutlass_gemm.json";

#define NEED_NVCC()                                                                                                    \
    do {                                                                                                               \
        if (!nvccSetup().ok)                                                                                           \
            QSKIP(qPrintable("no nvcc on this machine: " + QString::fromStdString(nvccSetup().error)));                \
    } while (0)

// The CLI with `env` set (an empty value unsets the variable).
CliRun runWithEnv(const QStringList& args, const QList<QPair<QString, QString>>& env, int timeoutMs = 600000) {
    QProcess p;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    for (const auto& [k, v] : env) {
        if (v.isEmpty())
            environment.remove(k);
        else
            environment.insert(k, v);
    }
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

std::string readText(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// tests/data/nvcc copied to `dir`, the kernel's text changed by `edit`.
QString scaleProblemIn(const QTemporaryDir& dir, const std::function<std::string(std::string)>& edit = {}) {
    const QString data = QStringLiteral(TILESCOPE_TEST_DATA "/nvcc");
    QFile::copy(data + "/scale.json", dir.filePath(QStringLiteral("scale.json")));
    std::string source = readText(data + "/scale.cu");
    if (edit)
        source = edit(source);
    std::ofstream(dir.filePath(QStringLiteral("scale.cu")).toStdString(), std::ios::binary) << source;
    return dir.filePath(QStringLiteral("scale.json"));
}

} // namespace

class TestCliNvcc : public QObject {
    Q_OBJECT

private slots:
    void compilerFieldReadAndWritten();
    void expandsEnvironment();
    void compilesThroughTheService();
    void errorsAreLocated();
    void analyzedByTheCli();
    void sessionNamesNvcc();
    void withoutNvccRefused();
    void nvccAbsentFromEveryFolder();
    void cutlassProblemCounted();
    void cutlassWithoutCutlassRefused();
    void cutlassConfigAnalysed();
};

void TestCliNvcc::compilerFieldReadAndWritten() {
    const TuningProblem problem = TuningProblem::load(kScaleProblem);
    QCOMPARE(problem.compiler, std::string("nvcc"));
    QVERIFY(problem.usesNvcc());
    const TuningProblem again = TuningProblem::parse(problem.toJson(), "again.json", problem.baseDir);
    QVERIFY(again == problem);
    QVERIFY(problem.toJson().find("\"Compiler\": \"nvcc\"") != std::string::npos);

    nlohmann::json bad = nlohmann::json::parse(problem.toJson());
    bad["Tilescope"]["Compiler"] = "clang";
    try {
        TuningProblem::parse(bad.dump(), "bad.json", problem.baseDir);
        QFAIL("a compiler Tilescope does not know was accepted");
    } catch (const InputError& e) {
        QVERIFY2(std::string(e.what()).find("/Tilescope/Compiler") != std::string::npos, e.what());
        QVERIFY2(std::string(e.what()).find("nvrtc or nvcc") != std::string::npos, e.what());
    }
}

void TestCliNvcc::expandsEnvironment() {
    ::setenv("TILESCOPE_TEST_FOLDER", "/opt/x", 1);
    std::string error;
    QCOMPARE(expandEnvironment("-I${TILESCOPE_TEST_FOLDER}/include", &error), std::string("-I/opt/x/include"));
    QCOMPARE(expandEnvironment("-I$TILESCOPE_TEST_FOLDER/a$$b", &error), std::string("-I/opt/x/a$b"));
    QVERIFY(error.empty());
    ::unsetenv("TILESCOPE_TEST_FOLDER");
    QCOMPARE(expandEnvironment("-I${TILESCOPE_TEST_FOLDER}/include", &error), std::string());
    QVERIFY2(error.find("TILESCOPE_TEST_FOLDER, which is not set") != std::string::npos, error.c_str());
}

// The kernel NVRTC cannot compile (host code with std::vector beside a template kernel), compiled
// by nvcc through the compile service and its cache: the entry found by its C++ name, the static
// info from ptxas' report, the second compile served from the cache under a key of its own.
void TestCliNvcc::compilesThroughTheService() {
    NEED_NVCC();
    const TuningProblem problem = TuningProblem::load(kScaleProblem);
    const RequestBuilder builder(problem);
    const CompileRequest request = builder.request(Config{1}, "sm_90");
    QCOMPARE(request.compiler, CudaCompiler::Nvcc);
    QCOMPARE(request.kernelName, std::string("scale<float, 128>"));

    QTemporaryDir dir;
    auto cache = std::make_shared<CompileCache>(CompileCacheOptions{dir.filePath("cache").toStdString()});
    CompileService service({1, cache});
    const CompileResult first = service.compile(request);
    QVERIFY2(first.ok(), (first.message + "\n" + first.log).c_str());
    QCOMPARE(first.entryName, std::string("_Z5scaleIfLi128EEvPT_S0_i"));
    QVERIFY(first.info.registers > 0 && first.info.registers <= 255);
    QCOMPARE(first.info.spillStores, 0);
    QVERIFY(!first.cubin.empty() && std::string(first.cubin.data(), 4) == "\x7f"
                                                                          "ELF");
    QVERIFY2(first.nvrtcVersion.rfind("nvcc ", 0) == 0, first.nvrtcVersion.c_str());
    QVERIFY(!first.cached);
    const CompileResult second = service.compile(request);
    QVERIFY(second.cached);
    QCOMPARE(second.entryName, first.entryName);
    QCOMPARE(service.stats().compiles, std::uint64_t(1));

    // The same request for NVRTC is another binary (and NVRTC has no <vector>).
    CompileRequest nvrtc = request;
    nvrtc.compiler = CudaCompiler::Nvrtc;
    QVERIFY(compileCacheKey(nvrtc) != compileCacheKey(request));
    const CompileResult refused = compileKernel(nvrtc);
    QCOMPARE(refused.status, CompileStatus::CompileError);

    // What nvcc runs: the cubin for the arch, the ptxas report, the kernel's folder.
    const std::vector<std::string> options = nvccOptions(request);
    QVERIFY(std::find(options.begin(), options.end(), "-cubin") != options.end());
    QVERIFY(std::find(options.begin(), options.end(), "--gpu-architecture=sm_90") != options.end());
    QVERIFY(std::find(options.begin(), options.end(), "--ptxas-options=-v") != options.end());
}

void TestCliNvcc::errorsAreLocated() {
    NEED_NVCC();
    QTemporaryDir dir;
    const QString path = scaleProblemIn(dir, [](std::string s) {
        const std::size_t at = s.find("x[i] *= factor;");
        return s.replace(at, 15, "x[i] *= factr;");
    });
    const TuningProblem problem = TuningProblem::load(path.toStdString());
    const RequestBuilder builder(problem);
    const CompileResult bad = compileKernel(builder.request(Config{0}, "sm_90"));
    QCOMPARE(bad.status, CompileStatus::CompileError);
    // The kernel file's own name and line, as NVRTC's diagnostics give them.
    QVERIFY2(bad.message.rfind("scale.cu(11): error: identifier \"factr\" is undefined", 0) == 0, bad.message.c_str());
    QVERIFY2(bad.log.find(dir.path().toStdString()) == std::string::npos, bad.log.c_str());
    QVERIFY(!bad.transient);

    // A KernelName the source does not have.
    CompileRequest missing = builder.request(Config{0}, "sm_90");
    missing.kernelName = "scal<float, 64>";
    const CompileResult none = compileKernel(missing);
    QCOMPARE(none.status, CompileStatus::NoKernel);
    QVERIFY2(none.message.find("no __global__ function 'scal<float, 64>' in scale.cu") != std::string::npos,
             none.message.c_str());
}

void TestCliNvcc::analyzedByTheCli() {
    NEED_NVCC();
    QTemporaryDir dir;
    const CliRun run = runCli({QStringLiteral("analyze"), QString::fromUtf8(kScaleProblem), QStringLiteral("--arch"),
                               QStringLiteral("sm_90"), QStringLiteral("--json"), QStringLiteral("--cache-dir"),
                               dir.filePath(QStringLiteral("cache"))},
                              kCli, 300000);
    QVERIFY2(run.status == 0, qPrintable(describe(run)));
    QVERIFY2(run.err.contains(QStringLiteral("nvcc 13.")) || run.err.contains(QStringLiteral("nvcc ")),
             qPrintable(run.err));
    const auto records = nlohmann::json::parse(run.out.toStdString());
    QCOMPARE(records.size(), std::size_t(3));
    for (const auto& r : records) {
        QVERIFY2(r["status"] == "ok", r.dump().c_str());
        QVERIFY(r["registers"].get<int>() > 0);
        QVERIFY(r["occupancy"].get<double>() > 0);
    }
}

// A session of a problem compiled by nvcc says so where it says how its configs were compiled:
// its provenance names nvcc's release (not NVRTC's version), and so does `show`.
void TestCliNvcc::sessionNamesNvcc() {
    NEED_NVCC();
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("scale.db"));
    const CliRun tuned = runCli({QStringLiteral("tune"), QString::fromUtf8(kScaleProblem), QStringLiteral("--backend"),
                                 QStringLiteral("analysis:sm_90"), QStringLiteral("--db"), db,
                                 QStringLiteral("--cache-dir"), dir.filePath(QStringLiteral("cache"))},
                                kCli, 300000);
    QVERIFY2(tuned.status == 0, qPrintable(describe(tuned)));
    {
        const ResultStore store = ResultStore::open(db.toStdString(), StoreMode::ReadOnly);
        const std::vector<SessionInfo> sessions = store.sessions();
        QCOMPARE(sessions.size(), std::size_t(1));
        const auto provenance = nlohmann::json::parse(sessions.front().provenanceJson);
        QVERIFY2(provenance.value("nvcc_version", std::string()) == nvccSetup().release, provenance.dump().c_str());
        QVERIFY2(!provenance.contains("nvrtc_version"), provenance.dump().c_str());
    }
    const CliRun shown = runCli({QStringLiteral("show"), db}, kCli);
    QVERIFY2(shown.status == 0, qPrintable(describe(shown)));
    QVERIFY2(shown.out.contains(QRegularExpression(
                 QStringLiteral("provenance +nvcc %1, Tilescope ").arg(QString::fromStdString(nvccSetup().release)))),
             qPrintable(shown.out));
    QVERIFY2(!shown.out.contains(QStringLiteral("NVRTC")), qPrintable(shown.out));
}

// Without nvcc a problem that asks for it stops before any compile, saying so (status 2).
void TestCliNvcc::withoutNvccRefused() {
    QTemporaryDir empty;
    const CliRun run = runWithEnv({QStringLiteral("analyze"), QString::fromUtf8(kScaleProblem),
                                   QStringLiteral("--arch"), QStringLiteral("sm_90")},
                                  {{QStringLiteral("TILESCOPE_NVCC"), empty.path()}});
    QCOMPARE(run.status, 2);
    QVERIFY2(run.err.contains(QStringLiteral("/Tilescope/Compiler: the problem asks for nvcc, and nvcc is not on "
                                             "this machine")),
             qPrintable(run.err));
    QVERIFY2(run.err.contains(empty.path()), qPrintable(run.err));
}

// The search itself, with nothing on PATH or in the toolkit variables and an empty toolkit folder.
void TestCliNvcc::nvccAbsentFromEveryFolder() {
    QTemporaryDir empty;
    const QByteArray path = qgetenv("PATH");
    const QByteArray home = qgetenv("CUDA_HOME");
    qputenv("PATH", empty.path().toUtf8());
    qunsetenv("CUDA_HOME");
    qunsetenv("TILESCOPE_NVCC");
    const NvccSetup setup = findNvcc({empty.path().toStdString()});
    qputenv("PATH", path);
    if (!home.isEmpty())
        qputenv("CUDA_HOME", home);
    QVERIFY(!setup.ok);
    QVERIFY2(setup.error.find("nvcc is not on this machine (looked on PATH") != std::string::npos, setup.error.c_str());
    QVERIFY2(setup.error.find((empty.path() + "/bin").toStdString()) != std::string::npos, setup.error.c_str());
}

void TestCliNvcc::cutlassProblemCounted() {
    const CliRun run = runCli({QStringLiteral("space"), QString::fromUtf8(kCutlassProblem)}, kCli);
    QVERIFY2(run.status == 0, qPrintable(describe(run)));
    QVERIFY2(run.out.contains(QStringLiteral("valid size    3,072")), qPrintable(run.out));
    QVERIFY2(run.out.contains(QStringLiteral("SCHEDULE")) && run.out.contains(QStringLiteral("CLUSTER_N")),
             qPrintable(run.out));
}

// A CUTLASS_DIR that is unset, or that holds no CUTLASS: status 2 naming it and where it looked.
void TestCliNvcc::cutlassWithoutCutlassRefused() {
    NEED_NVCC();
    const QStringList args{QStringLiteral("analyze"), QString::fromUtf8(kCutlassProblem), QStringLiteral("--arch"),
                           QStringLiteral("sm_90a"),  QStringLiteral("--index"),          QStringLiteral("0")};
    const CliRun unset = runWithEnv(args, {{QStringLiteral("CUTLASS_DIR"), QString()}});
    QCOMPARE(unset.status, 2);
    QVERIFY2(unset.err.contains(QStringLiteral("/KernelSpecification/CompilerOptions/4: '-I${CUTLASS_DIR}/include' "
                                               "names the environment variable CUTLASS_DIR, which is not set")),
             qPrintable(unset.err));

    QTemporaryDir notCutlass;
    QDir(notCutlass.path()).mkdir(QStringLiteral("include"));
    const CliRun wrong = runWithEnv(args, {{QStringLiteral("CUTLASS_DIR"), notCutlass.path()}});
    QCOMPARE(wrong.status, 2);
    QVERIFY2(wrong.err.contains(QStringLiteral("cutlass_gemm.cu line ")) &&
                 wrong.err.contains(QStringLiteral("includes <cute/tensor.hpp>, which is in none of the folders "
                                                   "searched (")) &&
                 wrong.err.contains(notCutlass.path() + "/include"),
             qPrintable(wrong.err));

    const CliRun noFolder = runWithEnv(args, {{QStringLiteral("CUTLASS_DIR"), notCutlass.filePath("nothing")}});
    QCOMPARE(noFolder.status, 2);
    QVERIFY2(noFolder.err.contains(QStringLiteral("is not a folder")), qPrintable(noFolder.err));
}

// One config of the CUTLASS GEMM compiled by nvcc for sm_90a (tens of seconds), where CUTLASS is
// here: CUTLASS_DIR names the folder that holds its include/ (a clone, or the nvidia-cutlass wheel's
// cutlass_library/source).
void TestCliNvcc::cutlassConfigAnalysed() {
    NEED_NVCC();
    if (qEnvironmentVariableIsEmpty("CUTLASS_DIR"))
        QSKIP("CUTLASS_DIR is not set: set it to a CUTLASS 3.x or 4.x folder (with include/cutlass and include/cute) "
              "to compile a config of kernels/cutlass_gemm");
    QTemporaryDir dir;
    const CliRun run =
        runCli({QStringLiteral("analyze"), QString::fromUtf8(kCutlassProblem), QStringLiteral("--arch"),
                QStringLiteral("sm_90a"), QStringLiteral("--index"), QStringLiteral("700"), QStringLiteral("--json"),
                QStringLiteral("--cache-dir"), dir.filePath(QStringLiteral("cache"))},
               kCli, 900000);
    QVERIFY2(run.status == 0, qPrintable(describe(run)));
    const auto records = nlohmann::json::parse(run.out.toStdString());
    QCOMPARE(records.size(), std::size_t(1));
    const auto& r = records[0];
    QVERIFY2(r["status"] == "ok", r.dump().c_str());
    // Three warp groups (a producer, two consumers), the registers their launch bounds leave.
    QCOMPARE(r["block_size"].get<int>(), 384);
    QVERIFY2(r["registers"].get<int>() > 0 && r["registers"].get<int>() <= 168, r.dump().c_str());
    QCOMPARE(r["spill_stores"].get<int>(), 0);
    QCOMPARE(r["active_blocks"].get<int>(), 1);
}

QTEST_GUILESS_MAIN(TestCliNvcc)
#include "tst_cli_nvcc.moc"
