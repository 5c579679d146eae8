// Problems written the way Kernel Tuner users write them (tests/data/t1corpus): each one opens,
// counts exactly as Python counts it (counts.json, made by python_counts.py beside the files:
// Kernel Tuner's own reading, eval() of the Values and of the Conditions), reads its parameter
// values as Python evaluates them, and survives load -> save -> load with the sections Tilescope
// does not know unchanged. Problems that cannot be compiled here (a missing kernel, OpenCL) still
// count, and say why they cannot be launched.

#include "base/error.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using namespace tilescope;
using Json = nlohmann::ordered_json;

namespace {

const std::filesystem::path kCorpus = TILESCOPE_TEST_DATA "/t1corpus";

Json readJson(const std::filesystem::path& path) {
    std::ifstream in(path);
    return Json::parse(in);
}

const Json& counts() {
    static const Json doc = readJson(kCorpus / "counts.json");
    return doc;
}

// Python's value (from counts.json) as Tilescope's repr prints it.
std::string pythonRepr(const Json& v) {
    if (v.is_boolean())
        return v.get<bool>() ? "True" : "False";
    if (v.is_string())
        return "'" + v.get<std::string>() + "'";
    if (v.is_number_integer())
        return std::to_string(v.get<std::int64_t>());
    return expr::repr(expr::Value::ofFloat(v.get<double>()));
}

} // namespace

class TestKtProblems : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        // The corpus is what the issue asks for: at least ten problems, each style present.
        QVERIFY(counts().size() >= 10);
        QVERIFY(counts().contains("big_comprehensions.json"));
        QVERIFY(counts().contains("missing_kernel.json"));
        QVERIFY(counts().contains("opencl_matvec.json"));
    }

    // The committed counts are Python's for the files as they are now (python_counts.py --check
    // recomputes them with eval(), Kernel Tuner's reading).
    void countsAreCurrent() {
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        if (python.isEmpty())
            QSKIP("python3 is not installed: the committed counts are checked, not recomputed");
        QProcess p;
        p.start(python, {QString::fromStdString((kCorpus / "python_counts.py").string()), QStringLiteral("--check")});
        QVERIFY(p.waitForFinished(300000));
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0,
                 qPrintable(p.readAllStandardOutput() + p.readAllStandardError()));
    }

    void countsAgreeWithPython_data() {
        QTest::addColumn<QString>("file");
        for (const auto& [file, expected] : counts().items())
            QTest::newRow(file.c_str()) << QString::fromStdString(file);
    }

    void countsAgreeWithPython() {
        QFETCH(QString, file);
        const Json& expected = counts().at(file.toStdString());
        const TuningProblem problem = TuningProblem::load(kCorpus / file.toStdString());
        const ConfigSpace space = ConfigSpace::build(problem, 0);
        QCOMPARE(space.stats().rawSize, expected.at("raw").get<double>());
        QCOMPARE(space.size(), expected.at("valid").get<std::uint64_t>());
        QVERIFY(space.stats().failures.empty());

        // Every parameter's values, as Python evaluated them, in Python's order.
        const Json& parameters = expected.at("parameters");
        QCOMPARE(problem.parameters.size(), parameters.size());
        for (const TuningParameter& p : problem.parameters) {
            const Json& python = parameters.at(p.name);
            QCOMPARE(p.values.size(), python.size());
            for (std::size_t i = 0; i < p.values.size(); ++i)
                QCOMPARE(QString::fromStdString(expr::repr(p.values[i])),
                         QString::fromStdString(pythonRepr(python[i])));
        }
    }

    void roundTrip_data() { countsAgreeWithPython_data(); }

    // load -> save -> load gives the same problem, and what Tilescope does not know (BenchmarkConfig,
    // a parameter's Default, Stream, ...) comes back unchanged, where it was.
    void roundTrip() {
        QFETCH(QString, file);
        const std::filesystem::path path = kCorpus / file.toStdString();
        const TuningProblem original = TuningProblem::load(path);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path saved = dir.filePath("saved.json").toStdString();
        original.save(saved);
        TuningProblem reread = TuningProblem::parse(original.toJson(), "saved.json", kCorpus);
        QVERIFY(reread == original);

        const Json before = readJson(path);
        const Json after = readJson(saved);
        static const std::set<std::string> known = {"General", "ConfigurationSpace", "KernelSpecification", "Search",
                                                    "Budget",  "Tilescope"};
        for (const auto& [key, value] : before.items()) {
            if (!known.count(key)) {
                QVERIFY2(after.contains(key), key.c_str());
                QVERIFY2(after.at(key) == value, key.c_str());
            }
        }
        // Known sections keep their unknown members too.
        static const std::set<std::string> knownKernelFields = {
            "Language",  "CompilerOptions", "KernelName",      "KernelFile", "GlobalSizeType",    "GlobalSize",
            "LocalSize", "GridDivX",        "GridDivY",        "GridDivZ",   "ProblemSize",       "SharedMemory",
            "Device",    "Profiling",       "SimulationInput", "Arguments",  "ReferenceArguments"};
        for (const auto& [key, value] : before.at("KernelSpecification").items()) {
            if (!knownKernelFields.count(key))
                QVERIFY2(after.at("KernelSpecification").contains(key) &&
                             after.at("KernelSpecification").at(key) == value,
                         key.c_str());
        }
        if (before.contains("General")) {
            for (const auto& [key, value] : before.at("General").items())
                QVERIFY2(after.at("General").contains(key) && after.at("General").at(key) == value, key.c_str());
        }
        const auto& paramsBefore = before.at("ConfigurationSpace").at("TuningParameters");
        const auto& paramsAfter = after.at("ConfigurationSpace").at("TuningParameters");
        for (std::size_t i = 0; i < paramsBefore.size(); ++i) {
            for (const auto& [key, value] : paramsBefore[i].items())
                QVERIFY2(paramsAfter[i].contains(key) && paramsAfter[i].at(key) == value, key.c_str());
        }
    }

    // What only compiling the kernel needs does not stop counting; it stops a launch, with the
    // field that is at fault.
    void notLaunchableButCountable_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("missing kernel") << "missing_kernel.json"
                                        << "/KernelSpecification/KernelFile"
                                        << "kernel file 'kernels_not_shipped/spmv_csr.cu' not found";
        QTest::newRow("OpenCL") << "opencl_matvec.json"
                                << "/KernelSpecification/Language"
                                << "the kernel is OpenCL";
    }

    void notLaunchableButCountable() {
        QFETCH(QString, file);
        QFETCH(QString, location);
        QFETCH(QString, phrase);
        const TuningProblem problem = TuningProblem::load(kCorpus / file.toStdString());
        QVERIFY(!problem.launchBlockers.empty());
        QVERIFY(ConfigSpace::build(problem, 0).size() > 0);
        try {
            problem.requireLaunchable();
            QFAIL("expected a launch blocker");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.location()), location);
            QVERIFY2(e.message().find(phrase.toStdString()) != std::string::npos, e.what());
        }
    }

    // Every other CUDA problem of the corpus can be launched: its kernel is there and its launch
    // expressions compile.
    void cudaProblemsAreLaunchable() {
        int launchable = 0;
        for (const auto& [file, expected] : counts().items()) {
            const TuningProblem problem = TuningProblem::load(kCorpus / file);
            if (file == "missing_kernel.json" || file == "opencl_matvec.json")
                continue;
            QVERIFY2(
                problem.launchBlockers.empty(),
                (file + ": " + (problem.launchBlockers.empty() ? "" : problem.launchBlockers.front().what())).c_str());
            ++launchable;
        }
        QVERIFY(launchable >= 10);
    }
};

QTEST_GUILESS_MAIN(TestKtProblems)
#include "tst_ktproblems.moc"
