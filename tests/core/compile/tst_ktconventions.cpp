// Kernel Tuner's source conventions, compiled for real with NVRTC (no GPU needed): the defines'
// prefix (kernel_tuner, grid_size_x/y/z, block_size_x/y/z), loop_unroll_factor_* as constexpr int
// or no pragma at all, parameter names in the kernel name; and the warnings for tuning
// parameters that do not change the compiled kernel, from the source and from the binaries.

#include "analysis/inertcheck.h"
#include "analysis/launchcheck.h"
#include "analysis/staticanalysis.h"
#include "compile/compileservice.h"
#include "compile/kernelsource.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

using namespace tilescope;

namespace {

const std::filesystem::path kCorpus = TILESCOPE_TEST_DATA "/t1corpus";
const std::filesystem::path kCuda = TILESCOPE_TEST_DATA "/cuda";

} // namespace

class TestKtConventions : public QObject {
    Q_OBJECT
private slots:
    void redefinitions_data();
    void redefinitions();
    void parametersReachTheCode_data();
    void parametersReachTheCode();
    void redefinedParameterWarns();
    void redefinedParameterFromTheCli();
    void namedConfigsCompiledAlone();
    void nvrtcRedefinitionWarning();
    void compiledCheckBesideTheSweep();
};

void TestKtConventions::redefinitions_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QStringList>("expected"); // name:line
    QTest::newRow("unguarded") << "#define tile 4\n__global__ void k() {}\n" << QStringList{"tile:1"};
    QTest::newRow("guarded by kernel_tuner") << "#ifndef kernel_tuner\n#define tile 4\n#endif\n" << QStringList{};
    QTest::newRow("guarded by its own name") << "#ifndef tile\n#define tile 4\n#endif\n" << QStringList{};
    QTest::newRow("!defined(kernel_tuner)") << "#if !defined(kernel_tuner)\n#define tile 4\n#endif\n" << QStringList{};
    QTest::newRow("#else of a guard") << "#ifdef kernel_tuner\n#else\n#define tile 4\n#endif\n#undef block\n"
                                      << QStringList{"block:5"};
    QTest::newRow("#else of #ifndef kernel_tuner")
        << "#ifndef kernel_tuner\n#define x 1\n#else\n  #  define tile 8\n#endif\n"
        << QStringList{"tile:4"};
    QTest::newRow("a condition it cannot decide") << "#if tile > 2\n#define block 64\n#endif\n" << QStringList{};
    QTest::newRow("#if 0") << "#if 0\n#define tile 4\n#endif\n" << QStringList{};
    QTest::newRow("in comments") << "// #define tile 4\n/* \n#define tile 4\n*/\n" << QStringList{};
    QTest::newRow("a continued line keeps its number") << "int a = \\\n 1;\n#define tile \\\n 4\n#define block 2\n"
                                                       << QStringList{"tile:3", "block:5"};
    QTest::newRow("other names") << "#define tiles 4\n#define TILE 2\n" << QStringList{};
}

void TestKtConventions::redefinitions() {
    QFETCH(QString, source);
    QFETCH(QStringList, expected);
    QStringList found;
    for (const Redefinition& r : findRedefinitions(source.toStdString(), {"tile", "block"}, kernelTunerDefines()))
        found << QStringLiteral("%1:%2").arg(QString::fromStdString(r.name)).arg(r.line);
    QCOMPARE(found, expected);
}

void TestKtConventions::parametersReachTheCode_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("diffusion: #ifndef kernel_tuner, a constexpr unroll factor") << "kt_diffusion.json";
    QTest::newRow("row sums: grid_size_x, unroll factor 0") << "kt_rowsum.json";
}

// Every parameter of the corpus problems written in Kernel Tuner's style reaches the code: a
// config and its neighbour in each parameter compile to different binaries. Without the
// kernel_tuner define their own defaults win and every config is the same binary, which is what
// the check is for.
void TestKtConventions::parametersReachTheCode() {
    QFETCH(QString, file);
    const TuningProblem problem = TuningProblem::load(kCorpus / file.toStdString());
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    const StaticAnalyzer analyzer(problem, 0);
    CompileService service({0, nullptr});
    const std::vector<std::uint64_t> bases = space.sample(4, 3);

    const std::vector<InertParameter> inert = findInertParameters(analyzer, space, service, "sm_90", bases);
    for (const InertParameter& f : inert)
        qWarning("%s: %s (%s / %s) %s", qPrintable(file), f.name.c_str(), f.configA.c_str(), f.configB.c_str(),
                 f.cause.c_str());
    QVERIFY(inert.empty());

    // Sampled configs: every one compiles, and they compile to distinct binaries.
    std::vector<CompileRequest> requests;
    for (const std::uint64_t index : space.sample(6, 11))
        requests.push_back(analyzer.requests().request(space.at(index), "sm_90"));
    std::set<std::vector<char>> binaries;
    for (const CompileResult& r : service.compileAll(requests)) {
        QVERIFY2(r.ok(), (r.message + "\n" + r.log).c_str());
        binaries.insert(r.cubin);
    }
    QCOMPARE(binaries.size(), requests.size());

    // Without kernel_tuner (as before it was defined) the kernel's defaults replace the
    // parameters, and the same configs compile to one binary or fail.
    std::set<std::vector<char>> withoutGuard;
    for (CompileRequest request : requests) {
        std::erase_if(request.defines, [](const auto& d) { return d.first == "kernel_tuner"; });
        const CompileResult r = service.compile(request);
        if (r.ok())
            withoutGuard.insert(r.cubin);
    }
    QVERIFY(withoutGuard.size() <= 1);
}

void TestKtConventions::redefinedParameterWarns() {
    const TuningProblem problem = TuningProblem::load(kCuda / "redefined.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    // From the source, before any compile: the parameter, the file and the line.
    const std::vector<LaunchWarning> warnings = checkLaunch(problem, 0, space);
    const auto w = std::find_if(warnings.begin(), warnings.end(),
                                [](const LaunchWarning& x) { return x.name == "inert-parameter"; });
    QVERIFY(w != warnings.end());
    QVERIFY2(w->message.find("tile_size does not change the compiled kernel") != std::string::npos, w->message.c_str());
    QVERIFY2(w->message.find("redefined.cu:8 #define tile_size 4") != std::string::npos, w->message.c_str());
    QVERIFY2(w->message.find("block_size_x") == std::string::npos, w->message.c_str()); // guarded
    QCOMPARE(w->location, std::string("/ConfigurationSpace/TuningParameters/1"));

    // Silenced, it is gone.
    TuningProblem silenced = problem;
    silenced.silencedWarnings.push_back("inert-parameter");
    for (const LaunchWarning& x : checkLaunch(silenced, 0, space))
        QVERIFY(x.name != "inert-parameter");

    // The binaries agree: tile_size's neighbours compile to the base's binary. That parameter is
    // already named from the source, so the compiled check adds nothing of its own.
    const StaticAnalyzer analyzer(problem, 0);
    CompileService service({0, nullptr});
    const std::vector<std::uint64_t> bases = space.sample(3, 1);
    QVERIFY(findInertParameters(analyzer, space, service, "sm_90", bases).empty());
    Config a = space.at(bases.front());
    Config b = a;
    b[1] = static_cast<std::uint16_t>((a[1] + 1) % 4);
    const CompileResult ra = service.compile(analyzer.requests().request(a, "sm_90"));
    const CompileResult rb = service.compile(analyzer.requests().request(b, "sm_90"));
    QVERIFY(ra.ok() && rb.ok());
    QVERIFY(ra.cubin == rb.cubin);
}

void TestKtConventions::redefinedParameterFromTheCli() {
    QProcess cli;
    cli.start(QStringLiteral(TILESCOPE_CLI),
              {QStringLiteral("space"), QString::fromStdString((kCuda / "redefined.json").string()),
               QStringLiteral("--count")});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    const QString err = QString::fromUtf8(cli.readAllStandardError());
    QVERIFY2(err.contains(QStringLiteral("/ConfigurationSpace/TuningParameters/1: tile_size does not change the "
                                         "compiled kernel")),
             qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("redefined.cu:8")), qPrintable(err));
}

// A redefinition the source scan cannot decide (under a condition on a parameter's value) still
// reaches the user: NVRTC warns that the macro was redefined, and the compiled check names it.
namespace {
// A kernel that redefines tile_size under a condition on block_size_x, which every config meets.
void writeConditionalRedefinition(const std::filesystem::path& root) {
    std::ofstream cu(root / "cond.cu");
    cu << "#if block_size_x > 64\n#define tile_size 2\n#endif\n"
          "extern \"C\" __global__ void k(float* out) { out[threadIdx.x] = tile_size * block_size_x; }\n";
    std::ofstream json(root / "cond.json");
    json << R"({"ConfigurationSpace": {"TuningParameters": [
                  {"Name": "block_size_x", "Type": "int", "Values": "[128, 256]"},
                  {"Name": "tile_size", "Type": "int", "Values": "[1, 2, 4]"}]},
                "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "cond.cu",
                  "ProblemSize": [1024], "GridDivX": ["block_size_x"],
                  "Arguments": [{"Name": "out", "Type": "float", "MemoryType": "Vector",
                                 "AccessType": "WriteOnly", "Size": 1024}]}})";
}
} // namespace

void TestKtConventions::nvrtcRedefinitionWarning() {
    QTemporaryDir temp;
    QVERIFY(temp.isValid());
    const std::filesystem::path root = temp.path().toStdString();
    writeConditionalRedefinition(root);
    const TuningProblem problem = TuningProblem::load(root / "cond.json");
    const ConfigSpace space = ConfigSpace::build(problem, 0);
    for (const LaunchWarning& w : checkLaunch(problem, 0, space))
        QVERIFY2(w.name != "inert-parameter", w.message.c_str()); // the scan cannot tell
    const StaticAnalyzer analyzer(problem, 0);
    CompileService service({0, nullptr});
    std::vector<std::uint64_t> all(space.size());
    std::iota(all.begin(), all.end(), std::uint64_t(0));
    const std::vector<InertParameter> found = findInertParameters(analyzer, space, service, "sm_90", all);
    QCOMPARE(found.size(), std::size_t(1));
    QCOMPARE(found.front().name, std::string("tile_size"));
    QVERIFY2(found.front().cause.find("NVRTC") != std::string::npos, found.front().cause.c_str());
    const std::optional<LaunchWarning> w = inertWarning(problem, found);
    QVERIFY(w.has_value());
    QVERIFY2(w->message.find("tile_size") != std::string::npos, w->message.c_str());
    QVERIFY2(w->message.find("cond.cu(2)") != std::string::npos, w->message.c_str());
}

// analyze of configs named with --index compiles them alone (no neighbours for the inert check),
// and still reports the compiler's redefinition warning; a sample compiles the neighbours too.
void TestKtConventions::namedConfigsCompiledAlone() {
    QTemporaryDir temp;
    QVERIFY(temp.isValid());
    const std::filesystem::path root = temp.path().toStdString();
    writeConditionalRedefinition(root);
    auto analyze = [&](const QStringList& extra, const std::filesystem::path& cache) {
        QProcess cli;
        cli.setProcessChannelMode(QProcess::MergedChannels);
        cli.start(QStringLiteral(TILESCOPE_CLI),
                  QStringList{QStringLiteral("analyze"), QString::fromStdString((root / "cond.json").string()),
                              QStringLiteral("--arch"), QStringLiteral("sm_90"), QStringLiteral("--cache-dir"),
                              QString::fromStdString(cache.string())} +
                      extra);
        cli.waitForFinished(120000);
        std::size_t entries = 0;
        for (const auto& e : std::filesystem::recursive_directory_iterator(cache))
            entries += e.path().extension() == ".tsc" ? 1 : 0;
        return std::make_pair(QString::fromUtf8(cli.readAll()) + "\nexit " + QString::number(cli.exitCode()), entries);
    };
    const auto [alone, aloneEntries] = analyze({QStringLiteral("--index"), QStringLiteral("0")}, root / "c1");
    QVERIFY2(alone.endsWith(QStringLiteral("exit 0")), qPrintable(alone));
    QVERIFY2(alone.contains(QStringLiteral("cond.cu(2)")), qPrintable(alone)); // NVRTC's redefinition warning
    QCOMPARE(aloneEntries, std::size_t(1));
    const auto [sampled, sampledEntries] = analyze({QStringLiteral("--sample"), QStringLiteral("1")}, root / "c2");
    QVERIFY2(sampled.endsWith(QStringLiteral("exit 0")), qPrintable(sampled));
    QVERIFY2(sampled.contains(QStringLiteral("cond.cu(2)")), qPrintable(sampled));
    QVERIFY2(sampledEntries > 1, qPrintable(QString::number(sampledEntries)));
}

// In a session the check runs on the compile pool beside the sweep's first configs, and its
// warning still comes, once, before the summary.
void TestKtConventions::compiledCheckBesideTheSweep() {
    QTemporaryDir temp;
    QVERIFY(temp.isValid());
    const std::filesystem::path root = temp.path().toStdString();
    writeConditionalRedefinition(root);
    QProcess cli;
    cli.setProcessChannelMode(QProcess::MergedChannels);
    cli.start(QStringLiteral(TILESCOPE_CLI),
              {QStringLiteral("tune"), QString::fromStdString((root / "cond.json").string()),
               QStringLiteral("--backend"), QStringLiteral("analysis:sm_90"), QStringLiteral("--strategy"),
               QStringLiteral("exhaustive"), QStringLiteral("--jobs"), QStringLiteral("2"),
               QStringLiteral("--no-cache"), QStringLiteral("--db"), QString::fromStdString((root / "s.db").string())});
    QVERIFY(cli.waitForFinished(120000));
    const QString out = QString::fromUtf8(cli.readAll());
    QVERIFY2(cli.exitStatus() == QProcess::NormalExit && cli.exitCode() == 0, qPrintable(out));
    const QString warning = QStringLiteral("tile_size does not change the compiled kernel");
    QVERIFY2(out.count(warning) == 1, qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("cond.cu(2)")), qPrintable(out));
    QVERIFY2(out.indexOf(warning) < out.indexOf(QStringLiteral("Session 1 finished")), qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("6 of 6 configs")), qPrintable(out));
}

QTEST_GUILESS_MAIN(TestKtConventions)
#include "tst_ktconventions.moc"
