// The kernels Tilescope ships (kernels/*/, all but kernels/broken, which is broken on purpose) and
// the GPU test suite's problems (tests/data/cuda/): each loads, has valid configs for every one
// of its shapes, and compiles for sm_90 with the real NVRTC (no GPU needed) for a few configs
// that between them use every value of every parameter; the Triton kernels (kernels/triton/)
// with Triton, where it is installed (tests/support/tritontest.h).

#include "base/error.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"
#include "tritontest.h"

#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

using namespace tilescope;
namespace fs = std::filesystem;

namespace {

const char* const kArch = "sm_90";

// The problem files: every *.json one folder down in kernels/ (bar broken/) and in tests/data/cuda/.
std::vector<fs::path> problemFiles() {
    std::vector<fs::path> files;
    auto addJson = [&](const fs::path& dir) {
        for (const fs::directory_entry& entry : fs::directory_iterator(dir))
            if (entry.is_regular_file() && entry.path().extension() == ".json")
                files.push_back(entry.path());
    };
    for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(TILESCOPE_SOURCE_DIR) / "kernels"))
        if (entry.is_directory() && entry.path().filename() != "broken")
            addJson(entry.path());
    addJson(fs::path(TILESCOPE_TEST_DATA) / "cuda");
    std::sort(files.begin(), files.end());
    return files;
}

void addProblemRows() {
    QTest::addColumn<QString>("path");
    const fs::path root(TILESCOPE_SOURCE_DIR);
    for (const fs::path& file : problemFiles())
        QTest::newRow(file.lexically_relative(root).generic_string().c_str()) << QString::fromStdString(file.string());
}

// A few valid configs that between them use every value any valid config of any shape uses: up
// to 4096 configs of each shape's space (all of a small one) are walked in a seeded random order,
// and a config is kept when it brings a (parameter, value) pair no kept config has. Compiles do
// not depend on the shape (shape names reach kernels as arguments), so one list serves them all.
std::vector<Config> coveringConfigs(const TuningProblem& problem) {
    std::vector<Config> kept;
    std::set<std::pair<int, std::uint16_t>> covered;
    for (std::size_t shape = 0; shape < problem.shapes.size(); ++shape) {
        const ConfigSpace space = ConfigSpace::build(problem, shape);
        for (std::uint64_t index : space.sample(std::min<std::uint64_t>(space.size(), 4096), 1)) {
            const Config config = space.at(index);
            bool adds = false;
            for (int p = 0; p < static_cast<int>(config.size()); ++p)
                adds = covered.insert({p, config[p]}).second || adds;
            if (adds)
                kept.push_back(config);
        }
    }
    return kept;
}

} // namespace

class TestKernels : public QObject {
    Q_OBJECT

private slots:
    void found();
    void spaces_data();
    void spaces();
    void compiles_data();
    void compiles();
};

void TestKernels::found() {
    // The glob must not come up empty or lose a folder unnoticed.
    const std::vector<fs::path> files = problemFiles();
    for (const char* name : {"sgemm.json", "copy.json", "softmax.json", "faults.json", "matmul.json"})
        QVERIFY2(std::any_of(files.begin(), files.end(), [&](const fs::path& f) { return f.filename() == name; }),
                 name);
    QVERIFY(std::none_of(files.begin(), files.end(), [](const fs::path& f) { return f.filename() == "broken.json"; }));
}

void TestKernels::spaces_data() {
    addProblemRows();
}

void TestKernels::spaces() {
    QFETCH(QString, path);
    try {
        const TuningProblem problem = TuningProblem::load(path.toStdString());
        QVERIFY(!problem.shapes.empty());
        QVERIFY2(problem.objective.has_value(), "every shipped problem says what it optimises");
        for (std::size_t shape = 0; shape < problem.shapes.size(); ++shape) {
            const ConfigSpace space = ConfigSpace::build(problem, shape);
            const std::string what = "shape " + std::to_string(shape) + " (" + problem.shapes[shape].label() + ")";
            QVERIFY2(space.size() > 0, ("no valid config for " + what).c_str());
            QVERIFY2(space.stats().failures.empty(), ("a condition raises for " + what).c_str());
        }
    } catch (const std::exception& error) {
        QFAIL(error.what());
    }
}

void TestKernels::compiles_data() {
    addProblemRows();
}

void TestKernels::compiles() {
    QFETCH(QString, path);
    // The CUTLASS GEMM's headers come from the user's CUTLASS (never the repository's); its
    // compiles (tens of seconds each) are tst_cli_nvcc's and tst_cutlassgemm's where it is set.
    if (path.contains(QStringLiteral("cutlass_gemm")) && qEnvironmentVariableIsEmpty("CUTLASS_DIR"))
        QSKIP("CUTLASS_DIR is not set: the CUTLASS GEMM compiles with CUTLASS's headers from there");
    try {
        const TuningProblem problem = TuningProblem::load(path.toStdString());
        if (problem.isTriton())
            TILESCOPE_NEED_TRITON();
        QVERIFY2(problem.launchBlockers.empty(),
                 problem.launchBlockers.empty() ? "" : problem.launchBlockers[0].what());
        const std::vector<Config> configs = coveringConfigs(problem);
        QVERIFY(!configs.empty());
        const ConfigSpace names = ConfigSpace::build(problem, 0); // for describing configs of any shape
        const RequestBuilder builder(problem);
        std::vector<CompileRequest> requests;
        for (const Config& config : configs)
            requests.push_back(builder.request(config, kArch));

        CompileService service; // one thread per core, no cache: the compiles are real
        const std::vector<CompileResult> results = service.compileAll(requests);
        QCOMPARE(results.size(), configs.size());
        for (std::size_t i = 0; i < results.size(); ++i) {
            const std::string what = names.describe(configs[i]) + " on " + kArch + ": ";
            QVERIFY2(results[i].ok(), (what + results[i].message + "\n" + results[i].log).c_str());
            QVERIFY2(results[i].info.registers > 0, (what + "no register count in the ptxas report").c_str());
        }
        qInfo("%zu configs compiled", configs.size());
    } catch (const std::exception& error) {
        QFAIL(error.what());
    }
}

QTEST_GUILESS_MAIN(TestKernels)
#include "tst_kernels.moc"
