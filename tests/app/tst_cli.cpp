// tilescope-cli, run as a user runs it: the real executable, its output and exit status.

#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include "clirun.h"
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>

#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

using namespace tilescope;

namespace {

using Run = CliRun;

Run cli(const QStringList& args) {
    return runCli(args);
}

// JSON written with single quotes in this file (moc trips over raw strings); q() turns them into double quotes.
std::string q(std::string text) {
    std::replace(text.begin(), text.end(), '\'', '"');
    return text;
}

QString qs(const std::string& text) {
    return QString::fromStdString(q(text));
}

// 1234567 -> "1,234,567", as the CLI prints counts.
QString formatThousands(std::uint64_t n) {
    QString digits = QString::number(n);
    for (int at = digits.size() - 3; at > 0; at -= 3)
        digits.insert(at, ',');
    return digits;
}

const QString kSgemm = QStringLiteral(TILESCOPE_SOURCE_DIR "/kernels/sgemm/sgemm.json");

std::string readFile(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeFile(const QString& path, const std::string& text) {
    std::ofstream(path.toStdString(), std::ios::binary) << text;
}

// A problem file with the given parameters and conditions, and a kernel file beside it.
QString writeProblem(const QTemporaryDir& dir, const QString& name, const std::string& parameters,
                     const std::string& conditions) {
    QFile kernel(dir.filePath("k.cu"));
    kernel.open(QIODevice::WriteOnly);
    kernel.write("extern \"C\" __global__ void k() {}\n");
    const std::string text =
        q("{\n  'ConfigurationSpace': {'TuningParameters': [") + parameters + q("], 'Conditions': [") + conditions +
        q("]},\n  'KernelSpecification': {'Language': 'CUDA', 'KernelName': 'k', 'KernelFile': 'k.cu',\n               "
          "           'GlobalSize': {'X': '1'}, 'LocalSize': {'X': '32'}}\n}");
    QFile f(dir.filePath(name));
    f.open(QIODevice::WriteOnly);
    f.write(text.c_str());
    return f.fileName();
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void helpAndVersion() {
        const Run help = cli({"--help"});
        QCOMPARE(help.status, 0);
        QVERIFY(help.out.contains("space"));
        QVERIFY(help.out.contains("Exit status"));
        const Run spaceHelp = cli({"space", "--help"});
        QCOMPARE(spaceHelp.status, 0);
        QVERIFY(spaceHelp.out.contains("--sample"));
        QVERIFY(spaceHelp.out.contains("--seed"));
        const Run version = cli({"--version"});
        QCOMPARE(version.status, 0);
        QVERIFY(version.out.contains("tilescope-cli"));
    }

    // check: a cache exported from the H200 GEMV shape set, against the problem as shipped and
    // against each kind of change that makes entries stale; exit status 3 says stale, for CI.
    void compareTwoGpus() {
        // Real results of one Kernel Tuner problem on two GPUs: an H200 session of Tilescope's and
        // Kernel Tuner's own cache from an RTX 4000 Ada (which also has nvml_gr_clock, fixed).
        const QString dir = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/crossgpu/");
        QTemporaryDir tmp;
        const QString csv = tmp.filePath("compare.csv");
        const Run run = cli({"compare", dir + "vector_add-h200.db", dir + "rtx4000ada_vector_add_ktcache.json", "--top",
                             "3", "--csv", csv});
        QVERIFY2(run.status == 0, qPrintable(describe(run)));
        QVERIFY2(run.out.contains("A  NVIDIA H200"), qPrintable(run.out));
        QVERIFY2(run.out.contains("B  NVIDIA RTX 4000 Ada Generation"), qPrintable(run.out));
        QVERIFY2(run.out.contains("15 configs ran on both"), qPrintable(run.out));
        QVERIFY2(run.out.contains("left out: nvml_gr_clock (only B; always 1080)"), qPrintable(run.out));
        QVERIFY2(run.out.contains("rank correlation (Spearman)"), qPrintable(run.out));
        QVERIFY2(run.out.contains("A's winner (block_size_x=192)"), qPrintable(run.out));
        QVERIFY2(run.out.contains("B's winner (block_size_x=832)"), qPrintable(run.out));
        QVERIFY2(run.out.contains("The 3 fastest on A of 15"), qPrintable(run.out));
        const QStringList lines = QString::fromStdString(readFile(csv)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 16);
        QCOMPARE(lines.front(), QStringLiteral("block_size_x,time_a_ms,time_b_ms,ratio,rank_a,rank_b"));

        // Results of another kernel share no parameter: a clear error, exit 2.
        const Run other = cli({"compare", dir + "vector_add-h200.db",
                               QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/tuning/tiny_ktcache.json")});
        QCOMPARE(other.status, 2);
        QVERIFY2(other.err.contains("shares no tuning parameter"), qPrintable(describe(other)));
        // A session that is not there names those that are.
        const Run missing =
            cli({"compare", dir + "vector_add-h200.db", dir + "vector_add-h200.db", "--session-b", "7"});
        QCOMPARE(missing.status, 2);
        QVERIFY2(missing.err.contains("no session 7 (sessions: 1)"), qPrintable(describe(missing)));
    }

    void checkFindsStaleEntries() {
        QTemporaryDir dir;
        const QString db = QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv-bf16-h200-shapes.db");
        const QString cache = dir.filePath("gemv-cache.json");
        const Run exported = cli({"export", db, "--format", "json", "-o", cache});
        QVERIFY2(exported.status == 0, qPrintable(describe(exported)));
        const nlohmann::json doc = nlohmann::json::parse(readFile(cache));
        QCOMPARE(doc["entries"].size(), std::size_t(4));
        QCOMPARE(doc["entries"][0]["driver_version"].get<int>(), 13000);
        QCOMPARE(doc["entries"][0]["spec_hash"].get<std::string>().size(), std::size_t(64));
        // The problem and kernel, copied so that they can be changed.
        const QString problem = dir.filePath("gemv_bf16.json");
        const QString kernel = dir.filePath("gemv.cu");
        QVERIFY(QFile::copy(QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv/gemv_bf16.json"), problem));
        QVERIFY(QFile::copy(QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv/gemv.cu"), kernel));
        QFile::setPermissions(problem, QFile::ReadOwner | QFile::WriteOwner);
        QFile::setPermissions(kernel, QFile::ReadOwner | QFile::WriteOwner);
        const QStringList h200 = {"--device", "NVIDIA H200", "--arch", "sm_90", "--driver", "13000"};

        Run fresh = cli(QStringList{"check", cache, "--problem", problem} + h200);
        QVERIFY2(fresh.status == 0, qPrintable(describe(fresh)));
        QVERIFY2(fresh.out.contains("4 entries, 4 fresh, 0 stale"), qPrintable(fresh.out));

        // Another GPU, another arch, another driver major: every entry, each for its reason.
        Run other = cli(
            {"check", cache, "--problem", problem, "--device", "NVIDIA A100", "--arch", "sm_80", "--driver", "12040"});
        QCOMPARE(other.status, 3);
        QVERIFY2(other.out.contains("tuned on NVIDIA H200, this machine has NVIDIA A100"), qPrintable(other.out));
        QVERIFY(other.out.contains("tuned for sm_90, this machine is sm_80"));
        QVERIFY(other.out.contains("tuned with the CUDA 13.0 driver, this machine has 12.4"));
        QVERIFY(other.out.contains("missing  gemv | M=1 K=4096 N=16384: no entry for this shape on NVIDIA A100"));
        // A driver of the same major version is not a reason.
        QCOMPARE(cli(QStringList{"check", cache, "--problem", problem, "--device", "NVIDIA H200", "--driver", "13020"})
                     .status,
                 0);

        // The kernel source changed.
        {
            QFile f(kernel);
            QVERIFY(f.open(QIODevice::Append));
            f.write("\n// a comment is a change: the source's hash\n");
        }
        Run source = cli(QStringList{"check", cache, "--problem", problem} + h200);
        QCOMPARE(source.status, 3);
        QVERIFY2(source.out.contains("0 fresh, 4 stale") && source.out.contains("the kernel source changed (gemv.cu)"),
                 qPrintable(source.out));
        QVERIFY(QFile::remove(kernel));
        QVERIFY(QFile::copy(QStringLiteral(TILESCOPE_SOURCE_DIR "/tests/data/shapes/gemv/gemv.cu"), kernel));

        // The problem's kernel specification changed; a shape added, one taken away.
        nlohmann::ordered_json p = nlohmann::ordered_json::parse(readFile(problem));
        const nlohmann::ordered_json shipped = p;
        p["KernelSpecification"]["CompilerOptions"].push_back("-DGEMV_EXTRA=1");
        writeFile(problem, p.dump(4));
        Run spec = cli(QStringList{"check", cache, "--problem", problem} + h200);
        QCOMPARE(spec.status, 3);
        QVERIFY(spec.out.contains("the problem changed (its kernel specification, parameters or conditions)"));
        p = shipped;
        p["Tilescope"]["Shapes"].erase(3); // M = 16 is no longer a shape
        p["Tilescope"]["Shapes"].push_back({{"M", 2}, {"K", 4096}, {"N", 16384}});
        p["Tilescope"]["Metrics"] = nlohmann::ordered_json::array({"default"}); // not a reason
        writeFile(problem, p.dump(4));
        Run shapes = cli(QStringList{"check", cache, "--problem", problem} + h200);
        QCOMPARE(shapes.status, 3);
        QVERIFY2(shapes.out.contains("3 fresh, 1 stale, 1 shape not covered"), qPrintable(shapes.out));
        QVERIFY(shapes.out.contains("M=16 K=4096 N=16384 | NVIDIA H200: the problem no longer has this shape"));
        QVERIFY(shapes.out.contains("missing  gemv | M=2 K=4096 N=16384: no entry for this shape on NVIDIA H200"));

        // The C++ header and the Triton export carry the same entries on a metadata line: the same
        // verdicts; --only-stale rewrites JSON caches only.
        for (const char* format : {"cpp", "triton"}) {
            const QString out = dir.filePath(QStringLiteral("tuned.") + (QString(format) == "cpp" ? "h" : "py"));
            const Run exportedAs = cli({"export", db, "--format", format, "-o", out});
            QVERIFY2(exportedAs.status == 0, qPrintable(describe(exportedAs)));
            Run fromExport = cli(QStringList{"check", out, "--problem", problem} + h200);
            QCOMPARE(fromExport.status, 3);
            QVERIFY2(fromExport.out.contains("3 fresh, 1 stale, 1 shape not covered"), qPrintable(fromExport.out));
            Run elsewhere = cli(QStringList{"check", out, "--device", "NVIDIA A100", "--arch", "sm_80"});
            QCOMPARE(elsewhere.status, 3);
            QVERIFY(elsewhere.out.contains("tuned on NVIDIA H200, this machine has NVIDIA A100"));
            const Run rewrite = cli(
                {"tune", problem, "--backend", "replay:" + db, "--only-stale", out, "--db", dir.filePath("again.db")});
            QCOMPARE(rewrite.status, 2);
            QVERIFY2(rewrite.err.contains("rewrites JSON caches"), qPrintable(describe(rewrite)));
        }
        writeFile(dir.filePath("plain.h"), "// tuned by hand\nconstexpr int kBlock = 128;\n");
        const Run plain = cli({"check", dir.filePath("plain.h")});
        QCOMPARE(plain.status, 2);
        QVERIFY2(plain.err.contains("metadata line"), qPrintable(describe(plain)));

        // Without a problem only the machine is checked, and it says so; bad input is status 2.
        Run machineOnly = cli(QStringList{"check", cache} + h200);
        QCOMPARE(machineOnly.status, 0);
        QVERIFY(machineOnly.out.contains("entries of kernel gemv: no problem given for it"));
        writeFile(dir.filePath("bad.json"), "{\"format\": \"something else\"}");
        QCOMPARE(cli({"check", dir.filePath("bad.json")}).status, 2);

        // --here without a GPU: what to give instead (the machine's name, arch and driver), not
        // tune's advice to replay or analyse offline.
        if (!QFileInfo::exists(QStringLiteral("/proc/driver/nvidia/version"))) {
            const Run here = cli({"check", cache, "--problem", problem, "--here"});
            QCOMPARE(here.status, 2);
            QVERIFY2(here.err.contains("no NVIDIA driver"), qPrintable(describe(here)));
            QVERIFY2(here.err.contains("--here asks this machine's GPU; without one, name the GPU to check against: "
                                       "--device \"NVIDIA H200\", --arch sm_90, --driver 13000"),
                     qPrintable(describe(here)));
            QVERIFY2(!here.err.contains("analyse offline") && !here.err.contains("replay"), qPrintable(describe(here)));
        }
    }

    void dispatchTable() {
        // The fp32 softmax measured at three shapes on the H200: the table, its bound, its header.
        const QString data = QStringLiteral(TILESCOPE_TEST_DATA "/shapes/");
        const QStringList recordings = {data + "softmax-h200-8192x8192.t4.json.gz",
                                        data + "softmax-h200-32768x1024.t4.json.gz",
                                        data + "softmax-h200-4096x32768.t4.json.gz"};
        QTemporaryDir dir;
        const Run r = cli(QStringList{"table"} + recordings +
                          QStringList{"--max-regret", "3%", "--cpp", dir.filePath("softmax.h")});
        QCOMPARE(r.status, 0);
        QVERIFY2(r.out.contains("Dispatch table: kernel softmax, 3 shapes x 126 configs (265 of 378 cells measured)"),
                 qPrintable(r.out));
        QVERIFY(r.out.contains("within 3.00 % of its own best"));
        QVERIFY(r.out.contains("ROWS=32768 COLS=1024"));
        QVERIFY(QFile::exists(dir.filePath("softmax.h")));
        const Run one = cli(QStringList{"table"} + recordings + QStringList{"--entries", "1"});
        QCOMPARE(one.status, 0);
        QVERIFY2(one.out.contains("entries     1\n"), qPrintable(one.out));
        QVERIFY2(one.out.contains("worst 54.47 %"), qPrintable(one.out));
        const Run ambiguous = cli(QStringList{"table"} + recordings + QStringList{"--max-regret", "5"});
        QCOMPARE(ambiguous.status, 2);
        QVERIFY2(ambiguous.err.contains("'5' is ambiguous: write 5% or a fraction such as 0.03"),
                 qPrintable(ambiguous.err));
        const Run both = cli(QStringList{"table"} + recordings + QStringList{"--entries", "2", "--max-regret", "1%"});
        QCOMPARE(both.status, 2);
        QVERIFY(both.err.contains("give --max-regret or --entries, not both"));
    }

    void spaceText() {
        const Run r = cli({"space", kSgemm, "--sample", "5", "--seed", "3"});
        QCOMPARE(r.status, 0);
        QVERIFY2(r.out.contains("raw size      7,200"), qPrintable(r.out));
        QVERIFY(r.out.contains("Parameters (7)"));
        QVERIFY(r.out.contains("BLOCK_M"));
        QVERIFY(r.out.contains("enumeration"));
        QVERIFY(r.out.contains("Sample (5 of"));
        const Run count = cli({"space", kSgemm, "--count"});
        QCOMPARE(count.status, 0);
        QVERIFY2(count.out.contains("valid of 7,200 raw configs"), qPrintable(count.out));
    }

    void spaceJsonAgreesWithTheEngine() {
        const Run r = cli({"space", kSgemm, "--json", "--sample", "25", "--seed", "11"});
        QCOMPARE(r.status, 0);
        const auto doc = nlohmann::json::parse(r.out.toStdString());
        const TuningProblem problem = TuningProblem::load(kSgemm.toStdString());
        const ConfigSpace space = ConfigSpace::build(problem);
        QCOMPARE(doc["raw_size"].get<double>(), 7200.0);
        QCOMPARE(doc["valid_size"].get<std::uint64_t>(), space.size());
        QCOMPARE(doc["samples"].size(), std::size_t(25));
        std::set<std::string> distinct;
        for (const auto& sample : doc["samples"]) {
            Config config(problem.parameters.size());
            for (std::size_t p = 0; p < problem.parameters.size(); ++p) {
                const auto& values = problem.parameters[p].values;
                const auto v = sample[problem.parameters[p].name].get<std::int64_t>();
                const auto it = std::find_if(values.begin(), values.end(), [&](const auto& x) { return x.i == v; });
                QVERIFY(it != values.end());
                config[p] = static_cast<std::uint16_t>(it - values.begin());
            }
            QVERIFY2(space.isValid(config), sample.dump().c_str());
            distinct.insert(sample.dump());
        }
        QCOMPARE(distinct.size(), std::size_t(25)); // without replacement
        // the same seed gives the same sample, another seed another
        auto samplesOf = [](const Run& run) { return nlohmann::json::parse(run.out.toStdString())["samples"]; };
        QCOMPARE(samplesOf(cli({"space", kSgemm, "--json", "--sample", "25", "--seed", "11"})), doc["samples"]);
        QVERIFY(samplesOf(cli({"space", kSgemm, "--json", "--sample", "25", "--seed", "12"})) != doc["samples"]);
    }

    void badInput_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("missing file") << QStringList{"space", "no-such-problem.json"} << "no-such-problem.json";
        QTest::newRow("bad shape") << QStringList{"space", kSgemm, "--shape", "7"} << "shape 7 does not exist";
        QTest::newRow("no problem") << QStringList{"space"} << "problem is required";
        QTest::newRow("no command") << QStringList{} << "subcommand";
        QTest::newRow("unknown option") << QStringList{"space", kSgemm, "--bogus"} << "--bogus";
        QTest::newRow("bad number") << QStringList{"space", kSgemm, "--sample", "ten"} << "--sample";
    }

    void badInput() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = cli(args);
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains(message, Qt::CaseInsensitive), qPrintable(r.err));
    }

    void badProblemFiles_data() {
        QTest::addColumn<QString>("parameters");
        QTest::addColumn<QString>("conditions");
        QTest::addColumn<QString>("message");
        const QString ok = qs("{'Name': 'a', 'Type': 'int', 'Values': '[1, 2, 4]'}");
        QTest::newRow("unknown name") << ok << qs("{'Parameters': ['a'], 'Expression': 'a * b_q < 4'}")
                                      << "/ConfigurationSpace/Conditions/0/Expression: column 5: NameError";
        QTest::newRow("syntax error") << ok << qs("{'Parameters': ['a'], 'Expression': 'a <'}")
                                      << "/ConfigurationSpace/Conditions/0/Expression: column 4: SyntaxError";
        QTest::newRow("empty values") << qs("{'Name': 'a', 'Type': 'int', 'Values': '[]'}") << ""
                                      << "/ConfigurationSpace/TuningParameters/0/Values";
        QTest::newRow("duplicate") << ok + "," + ok << ""
                                   << "duplicate";
        QTest::newRow("wrong type") << qs("{'Name': 'a', 'Type': 'int', 'Values': 5}") << ""
                                    << "/ConfigurationSpace/TuningParameters/0/Values";
        QTest::newRow("bad value expression")
            << qs("{'Name': 'a', 'Type': 'int', 'Values': '[2**i for i in range(0, 6]'}") << ""
            << "/ConfigurationSpace/TuningParameters/0/Values: column 26: SyntaxError: ']' does not close the '(' at "
               "column 21";
        QTest::newRow("value expression fails")
            << qs("{'Name': 'a', 'Type': 'int', 'Values': '[64 // i for i in range(3)]'}") << ""
            << "/ConfigurationSpace/TuningParameters/0/Values: column 5: ZeroDivisionError";
    }

    void badProblemFiles() {
        QFETCH(QString, parameters);
        QFETCH(QString, conditions);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString path = writeProblem(dir, "p.json", parameters.toStdString(), conditions.toStdString());
        const Run r = cli({"space", path});
        QCOMPARE(r.status, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY2(r.err.contains("p.json"), qPrintable(r.err));
    }

    // Problems written for Kernel Tuner count as Python counts them (tests/data/t1corpus/counts.json).
    void kernelTunerProblemsCount_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        std::ifstream in(TILESCOPE_TEST_DATA "/t1corpus/counts.json");
        const auto counts = nlohmann::json::parse(in);
        for (const auto& [file, c] : counts.items()) {
            const QString valid = formatThousands(c["valid"].get<std::uint64_t>());
            const QString raw = formatThousands(static_cast<std::uint64_t>(c["raw"].get<double>()));
            QTest::newRow(file.c_str()) << QString::fromStdString(file) << valid + " valid of " + raw + " raw configs";
        }
    }

    void kernelTunerProblemsCount() {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        const Run r = cli({"space", QStringLiteral(TILESCOPE_TEST_DATA "/t1corpus/") + file, "--count"});
        QCOMPARE(r.status, 0);
        QVERIFY2(r.out.startsWith(expected), qPrintable(r.out + r.err));
    }

    // A problem whose kernel cannot be compiled here still counts; analyze and tune stop before
    // any work, with exit status 2 and the field at fault.
    void notLaunchable_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("location");
        QTest::newRow("missing kernel") << "missing_kernel.json"
                                        << "/KernelSpecification/KernelFile";
        QTest::newRow("OpenCL") << "opencl_matvec.json"
                                << "/KernelSpecification/Language";
    }

    void notLaunchable() {
        QFETCH(QString, file);
        QFETCH(QString, location);
        const QString path = QStringLiteral(TILESCOPE_TEST_DATA "/t1corpus/") + file;
        const Run space = cli({"space", path, "--count"});
        QCOMPARE(space.status, 0);
        QVERIFY2(space.err.contains("note: ") && space.err.contains(location), qPrintable(space.err));
        const Run json = cli({"space", path, "--json", "--sample", "1"});
        QCOMPARE(json.status, 0);
        const auto doc = nlohmann::json::parse(json.out.toStdString());
        QCOMPARE(doc["launch_blockers"].size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(doc["launch_blockers"][0]["location"].get<std::string>()), location);

        const Run analyze = cli({"analyze", path});
        QCOMPARE(analyze.status, 2);
        QVERIFY2(analyze.err.contains(file + ": " + location), qPrintable(analyze.err));
        QVERIFY2(analyze.err.contains("'space' still counts"), qPrintable(analyze.err));

        QTemporaryDir dir;
        const QString db = dir.filePath("r.db");
        const Run tune = cli({"tune", path, "--backend", "cuda", "--db", db});
        QCOMPARE(tune.status, 2);
        QVERIFY2(tune.err.contains(location), qPrintable(tune.err));
        QVERIFY(!QFile::exists(db)); // stopped before any work
    }

    void hugeSpace() {
        // 12 parameters of 10 values (10^12 raw), paired conditions: 55^6 valid, counted lazily
        std::string params, conditions;
        for (int p = 0; p < 12; ++p)
            params += std::string(p ? "," : "") + q("{'Name': 'p") + std::to_string(p) +
                      q("', 'Type': 'int', 'Values': 'range(10)'}");
        for (int p = 0; p < 12; p += 2)
            conditions += std::string(p ? "," : "") + q("{'Parameters': [], 'Expression': 'p") + std::to_string(p) +
                          " <= p" + std::to_string(p + 1) + q("'}");
        QTemporaryDir dir;
        const Run r = cli({"space", writeProblem(dir, "huge.json", params, conditions), "--json", "--sample", "3"});
        QCOMPARE(r.status, 0);
        const auto doc = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(doc["raw_size"].get<double>(), 1e12);
        QCOMPARE(doc["valid_size"].get<std::uint64_t>(), std::uint64_t(27680640625));
        QCOMPARE(doc["materialized"].get<bool>(), false);
        QCOMPARE(doc["samples"].size(), std::size_t(3));
    }

    void conditionErrorsAreReportedNotFatal() {
        QTemporaryDir dir;
        const QString path = writeProblem(dir, "div.json", q("{'Name': 'a', 'Type': 'int', 'Values': '[0, 1, 2]'}"),
                                          q("{'Parameters': ['a'], 'Expression': '4 // a >= 2'}"));
        const Run r = cli({"space", path, "--json"});
        QCOMPARE(r.status, 0);
        const auto doc = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(doc["valid_size"].get<int>(), 2);
        QCOMPARE(doc["condition_errors"].size(), std::size_t(1));
        QVERIFY(doc["condition_errors"][0]["first_error"].get<std::string>().find("ZeroDivisionError") !=
                std::string::npos);
        const Run text = cli({"space", path});
        QCOMPARE(text.status, 0);
        QVERIFY2(text.err.contains("warning: condition 1 raised"), qPrintable(text.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
