// Results that cannot be right, and saying why: the floor a config's median must reach (its
// outputs' bytes at the copy bandwidth, or the roofline), the register file a launch must fit,
// the peak bandwidth of devices known by name, the parameter whose values split the configs that
// match the reference from those that do not, and messages without NUL or control bytes.

#include "analysis/plausibility.h"
#include "analysis/verificationsplit.h"
#include "spec/tuningproblem.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <string>

using namespace tilescope;
using Json = nlohmann::ordered_json;

namespace {

// A problem of one shape (N) whose kernel takes `arguments` (T1 Arguments, as JSON text), with a
// parameter P of the values 1, 2, 4 and the given Tilescope extras (a Roofline).
TuningProblem problemWith(const std::string& arguments, const std::string& tilescope = "{}") {
    Json t1 = Json::parse(R"({
        "General": {"FormatVersion": 1},
        "ConfigurationSpace": {"TuningParameters": [{"Name": "P", "Type": "int", "Values": "[1, 2, 4]"}],
                               "Conditions": []},
        "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
                                "GlobalSizeType": "CUDA", "GlobalSize": {"X": "4096"},
                                "LocalSize": {"X": "256"}, "ProblemSize": ["N"]}
    })");
    t1["KernelSpecification"]["Arguments"] = Json::parse(arguments);
    Json extras = Json::parse(tilescope);
    extras["Shapes"] = Json::array({Json{{"N", 1048576}}});
    t1["Tilescope"] = extras;
    return TuningProblem::parse(t1.dump(), "p.json", {});
}

const char* kY = R"({"Name": "y", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N"})";
const char* kX = R"({"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "N"})";
const char* kCopy4000 = R"({"devices": [{"name": "NVIDIA H200", "copy_gbps": 4000}]})";

// 4 MiB (N floats) at 4,000 GB/s, halved.
constexpr double kFloorY = 0.5 * 4194304.0 / 4000e9 * 1e3;

ResultRecord result(int p, std::string q, ResultStatus status) {
    ResultRecord r;
    r.config = ConfigValues{};
    r.config["P"] = p;
    r.config["Q"] = q;
    r.measurement.status = status;
    r.measurement.time.medianMs = 1.0;
    return r;
}

} // namespace

class TestPlausibility : public QObject {
    Q_OBJECT

private slots:
    void floorOfOutputs_data() {
        QTest::addColumn<QString>("arguments");
        QTest::addColumn<QString>("tilescope");
        QTest::addColumn<QString>("provenance");
        QTest::addColumn<QString>("device");
        QTest::addColumn<double>("floorMs"); // 0: none
        QTest::addColumn<QString>("how");    // in the floor's words, or in the note without a floor

        const QString y = kY, x = kX;
        const QString copy = kCopy4000;
        QTest::newRow("write-only output at the copy bandwidth")
            << "[" + x + ", " + y + "]"
            << "{}" << copy << "NVIDIA H200" << kFloorY
            << "half the time its outputs take to write at the measured copy bandwidth 4,000 GB/s: 4 MiB in 'y'";
        QTest::newRow("the fastest of several devices") << "[" + y + "]"
                                                        << "{}"
                                                        << R"({"devices": [{"copy_gbps": 3000}, {"copy_gbps": 4000}]})"
                                                        << "" << kFloorY << "4,000 GB/s: 4 MiB in 'y'";
        QTest::newRow("write-only and read-write outputs")
            << R"([{"Name": "y", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N"},
                   {"Name": "z", "Type": "double", "MemoryType": "Vector", "AccessType": "ReadWrite", "Size": "N"}])"
            << "{}" << copy << "" << 3 * kFloorY << "12 MiB in 'y' and 'z'";
        QTest::newRow("the flagged outputs alone")
            << R"([{"Name": "y", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "N",
                    "Output": 1},
                   {"Name": "z", "Type": "double", "MemoryType": "Vector", "AccessType": "ReadWrite", "Size": "N"}])"
            << "{}" << copy << "" << kFloorY << "4 MiB in 'y'";
        QTest::newRow("no output at all")
            << "[" + x + "]"
            << "{}" << copy << "" << 0.0
            << "times are not checked against a floor: the problem names no output buffer and no roofline";
        QTest::newRow("a buffer without AccessType may be an input")
            << R"([{"Name": "v", "Type": "float", "MemoryType": "Vector", "Size": "N"}])"
            << "{}" << copy << "" << 0.0 << "1 output buffer(s) left out";
        QTest::newRow("a size that uses a parameter may be written in part")
            << R"j([{"Name": "partial", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
                    "Size": "N * max(P)"}, )j" +
                   y + "]"
            << "{}" << copy << "" << kFloorY << "4 MiB in 'y'";
        QTest::newRow("no copy measured: the H200's peak")
            << "[" + y + "]"
            << "{}"
            << "{}"
            << "NVIDIA H200" << 0.5 * 4194304.0 / 4800e9 * 1e3
            << "the NVIDIA H200's peak memory bandwidth 4,800 GB/s (from a table: no copy was measured): 4 MiB in 'y'";
        QTest::newRow("no copy measured, a device not in the table")
            << "[" + y + "]"
            << "{}"
            << "{}"
            << "Fake GPU" << 0.0
            << "times are not checked against a floor: no copy bandwidth was measured and the device 'Fake GPU' is not "
               "in the table of peaks";
        QTest::newRow("the roofline, when it is higher")
            << "[" + x + ", " + y + "]"
            << R"({"Roofline": {"Bytes": "16 * N"}})" << copy << "" << 4 * kFloorY
            << "half the problem's roofline: 16 MiB (Tilescope.Roofline Bytes) at the measured copy bandwidth";
        QTest::newRow("the outputs, when the roofline is lower")
            << "[" + x + ", " + y + "]"
            << R"({"Roofline": {"Bytes": "N"}})" << copy << "" << kFloorY << "4 MiB in 'y'";
        QTest::newRow("a roofline that uses the config") << "[" + x + ", " + y + "]"
                                                         << R"({"Roofline": {"Bytes": "16 * N * P"}})" << copy << ""
                                                         << 8 * kFloorY << "32 MiB (Tilescope.Roofline Bytes)";
    }

    void floorOfOutputs() {
        QFETCH(QString, arguments);
        QFETCH(QString, tilescope);
        QFETCH(QString, provenance);
        QFETCH(QString, device);
        QFETCH(double, floorMs);
        QFETCH(QString, how);
        const TuningProblem problem = problemWith(arguments.toStdString(), tilescope.toStdString());
        const PlausibilityCheck check(problem, 0, provenance.toStdString(), device.toStdString(), "sm_90");
        const ConfigValues config = {{"P", 2}};
        const auto floor = check.floor(config);
        QCOMPARE(check.active(), floorMs > 0);
        if (floorMs == 0) {
            QVERIFY(!floor);
            QVERIFY2(check.note().find(how.toStdString()) != std::string::npos, check.note().c_str());
            QVERIFY(check.verdict(config, 1e-9).empty());
            return;
        }
        QVERIFY(floor);
        QVERIFY2(std::abs(floor->ms / floorMs - 1) < 1e-9, std::to_string(floor->ms).c_str());
        QVERIFY2(floor->how.find(how.toStdString()) != std::string::npos, floor->how.c_str());
        // Below the floor: implausible, with the floor and how it was found; at it: plausible.
        const std::string verdict = check.verdict(config, 0.5 * floorMs);
        QVERIFY2(verdict.find(" is below ") != std::string::npos && verdict.find(floor->how) != std::string::npos &&
                     verdict.find("a kernel that returns early or writes nothing looks like this") != std::string::npos,
                 verdict.c_str());
        QVERIFY(check.verdict(config, floorMs).empty());
        QVERIFY(check.verdict(config, 0).empty()); // no time, no verdict
    }

    void theVerdictInFull() {
        const TuningProblem problem = problemWith(std::string("[") + kX + ", " + kY + "]");
        const PlausibilityCheck check(problem, 0, kCopy4000, "NVIDIA H200", "sm_90");
        QCOMPARE(check.verdict({{"P", 1}}, 0.0001),
                 std::string("0.0001 ms is below 0.0005243 ms, half the time its outputs take to write at the measured "
                             "copy bandwidth 4,000 GB/s: 4 MiB in 'y'; a kernel that returns early or writes nothing "
                             "looks like this"));
        QCOMPARE(check.note(), std::string());
    }

    void registerFile_data() {
        QTest::addColumn<int>("registers");
        QTest::addColumn<int>("threads");
        QTest::addColumn<QString>("verdict"); // "" plausible
        QTest::newRow("Kernel Tuner's impossible launch")
            << 255 << 448
            << "255 registers x 448 threads = 114,240 registers, more than the 65,536 a thread block may hold: the "
               "launch could not have run, whatever time was recorded";
        QTest::newRow("just fits") << 255 << 256 << "";
        QTest::newRow("exactly the register file") << 64 << 1024 << "";
        QTest::newRow("one register too many") << 65 << 1024 << "65 registers x 1024 threads = 66,560 registers";
        QTest::newRow("registers not known") << 0 << 1024 << "";
        QTest::newRow("threads not known") << 255 << 0 << "";
    }

    void registerFile() {
        QFETCH(int, registers);
        QFETCH(int, threads);
        QFETCH(QString, verdict);
        const std::string got = registerFileVerdict(registers, threads);
        if (verdict.isEmpty())
            QCOMPARE(got, std::string());
        else
            QVERIFY2(got.rfind(verdict.toStdString(), 0) == 0, got.c_str());
    }

    void peakBandwidthByName_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<double>("gbps"); // 0: not known
        QTest::newRow("H200") << "NVIDIA H200" << 4800.0;
        QTest::newRow("GH200") << "NVIDIA GH200 480GB" << 4900.0;
        QTest::newRow("H100") << "NVIDIA H100 80GB HBM3" << 3900.0;
        QTest::newRow("A100") << "NVIDIA A100-SXM4-80GB" << 2039.0;
        QTest::newRow("L4") << "NVIDIA L4" << 300.0;
        QTest::newRow("L40S") << "NVIDIA L40S" << 864.0;
        QTest::newRow("A10 is no A100") << "NVIDIA A10" << 0.0;
        QTest::newRow("a GeForce") << "NVIDIA GeForce RTX 4090" << 0.0;
        QTest::newRow("unknown") << "Fake GPU" << 0.0;
        QTest::newRow("empty") << "" << 0.0;
    }

    void peakBandwidthByName() {
        QFETCH(QString, name);
        QFETCH(double, gbps);
        QCOMPARE(peakMemoryBandwidth(name.toStdString()).value_or(0.0), gbps);
    }

    void recordedResultsAreChecked() {
        // A recording that carries its problem (a Tilescope T4 or cache): the floor at its shape,
        // at its copy bandwidth; the register file from its static info or Kernel Tuner's num_regs.
        const TuningProblem problem = problemWith(std::string("[") + kX + ", " + kY + "]");
        SessionData data;
        data.info.problemJson = problem.toJson();
        data.info.shapeIndex = 0;
        data.info.shape = {{"N", 1048576}};
        data.info.deviceName = "NVIDIA H200";
        data.info.provenanceJson = kCopy4000;
        const double times[] = {0.0001, 0.5, 0.3, 0.4};
        for (int i = 0; i < 4; ++i) {
            ResultRecord r = result(1 << (i % 3), "a", ResultStatus::Ok);
            r.measurement.time.medianMs = times[i];
            r.objective = 1.0;
            data.results.push_back(r);
        }
        data.results[2].config["block_size_x"] = 448;
        data.results[2].measurement.metrics = {{"num_regs", 255}};
        data.results[3].blockSize = 1024;
        data.results[3].measurement.staticInfo = StaticInfo{};
        data.results[3].measurement.staticInfo->registers = 128;
        const PlausibilityReport report = checkRecorded(data);
        QCOMPARE(report.implausible, std::size_t(3));
        QCOMPARE(data.results[0].status(), ResultStatus::Implausible);
        QVERIFY(!data.results[0].objective);
        QVERIFY2(data.results[0].measurement.message.find("4 MiB in 'y'") != std::string::npos,
                 data.results[0].measurement.message.c_str());
        QCOMPARE(data.results[1].status(), ResultStatus::Ok);
        QVERIFY(data.results[2].measurement.message.rfind("255 registers x 448 threads", 0) == 0);
        QVERIFY(data.results[3].measurement.message.rfind("128 registers x 1024 threads", 0) == 0);
        QVERIFY2(report.note.rfind("3 of 4 timed results are implausible (the first: P=1 Q=a: 0.0001 ms", 0) == 0,
                 report.note.c_str());
        // Without the problem, only the register file is checked, and the note says so.
        SessionData bare = data;
        bare.info.problemJson.clear();
        for (ResultRecord& r : bare.results)
            r.measurement.status = ResultStatus::Ok;
        const PlausibilityReport without = checkRecorded(bare);
        QCOMPARE(without.implausible, std::size_t(2));
        QCOMPARE(bare.results[0].status(), ResultStatus::Ok);
        QVERIFY2(without.note.find("times are not checked against a floor: the problem's sizes are not known") !=
                     std::string::npos,
                 without.note.c_str());
        // A problem given for a recording of a shape it does not have: not checked, saying so.
        SessionData other = bare;
        other.info.shapeIndex.reset();
        other.info.shape = {{"N", 4096}};
        const PlausibilityReport otherReport = checkRecorded(other, &problem);
        QCOMPARE(otherReport.implausible, std::size_t(0));
        QCOMPARE(other.results[0].status(), ResultStatus::Ok);
        QVERIFY2(otherReport.note.find("the recording's shape is none of the problem's") != std::string::npos,
                 otherReport.note.c_str());
        // The shape found by ProblemSize, as Kernel Tuner records it.
        SessionData kt = bare;
        kt.info.shapeIndex.reset();
        kt.info.shape.clear();
        kt.info.problemSize = {1048576};
        QCOMPARE(checkRecorded(kt, &problem).implausible, std::size_t(1));
        QCOMPARE(kt.results[0].status(), ResultStatus::Implausible);
    }

    void splitsByAParameter_data() {
        QTest::addColumn<QString>("rows");       // "P Q status; ..." (o: ok, w: wrong_result, c: compile_error)
        QTest::addColumn<QString>("parameters"); // the splitting parameters, comma-separated
        QTest::addColumn<QString>("values");     // the first one's matching values
        QTest::newRow("P = 1 matches, every other P differs")
            << "1 a o; 1 b o; 1 c o; 2 a w; 2 b w; 2 c w; 4 a w; 4 b w"
            << "P"
            << "1";
        QTest::newRow("two values match") << "1 a o; 2 b o; 1 c o; 4 a w; 4 b w; 4 c w"
                                          << "P"
                                          << "1 or 2";
        QTest::newRow("one exception: no split") << "1 a o; 1 b o; 1 c w; 2 a w; 2 b w; 2 c w"
                                                 << ""
                                                 << "";
        QTest::newRow("too few match") << "1 a o; 1 b o; 2 a w; 2 b w; 2 c w"
                                       << ""
                                       << "";
        QTest::newRow("nothing differs") << "1 a o; 2 b o; 4 c o; 1 b o"
                                         << ""
                                         << "";
        QTest::newRow("other statuses take no side") << "1 a o; 1 b o; 1 c o; 2 a w; 2 b w; 2 c w; 1 a c; 2 b c"
                                                     << "P"
                                                     << "1";
        QTest::newRow("two parameters split alike") << "1 a o; 1 a o; 1 a o; 2 b w; 2 b w; 2 b w"
                                                    << "P,Q"
                                                    << "1";
    }

    void splitsByAParameter() {
        QFETCH(QString, rows);
        QFETCH(QString, parameters);
        QFETCH(QString, values);
        std::vector<ResultRecord> results;
        for (const QString& row : rows.split(';')) {
            const QStringList f = row.trimmed().split(' ');
            const ResultStatus s = f[2] == "o"   ? ResultStatus::Ok
                                   : f[2] == "w" ? ResultStatus::WrongResult
                                                 : ResultStatus::CompileError;
            results.push_back(result(f[0].toInt(), f[1].toStdString(), s));
        }
        const std::vector<VerificationSplit> splits = tilescope::verificationSplits(results);
        QStringList names;
        for (const VerificationSplit& s : splits)
            names << QString::fromStdString(s.parameter);
        QCOMPARE(names.join(','), parameters);
        const std::string sentence = describeVerification(results, splits);
        const bool anyWrong = rows.contains(" w");
        if (splits.empty()) {
            // Wrong results no parameter explains: what is wrong with them, nothing else.
            QCOMPARE(sentence.empty(), !anyWrong);
            if (anyWrong)
                QVERIFY2(sentence.find("differ from the reference config's outputs beyond the tolerance") !=
                             std::string::npos,
                         sentence.c_str());
            return;
        }
        const std::string p = splits.front().parameter;
        const std::string want =
            "every config with " + p + " = " + values.toStdString() + " matches, every other does not";
        QVERIFY2(sentence.find(want) != std::string::npos, sentence.c_str());
        // Not yet verified within the groups of P: how to, and never to turn verification off.
        QVERIFY2(sentence.find("the outputs may depend on " + p) != std::string::npos, sentence.c_str());
        QVERIFY2(sentence.find("\"VerifyWithin\": [\"" + p + "\"]") != std::string::npos, sentence.c_str());
        QVERIFY2(sentence.find("--no-verify") == std::string::npos, sentence.c_str());
    }

    void splitExplanationOnlyWhereItCanHold_data() {
        QTest::addColumn<QString>("metric"); // what the configs that differ show ("" nothing)
        QTest::addColumn<int>("verified");   // configs verified again within the groups (-1: not done)
        QTest::addColumn<int>("agree");
        QTest::addColumn<QString>("want");
        QTest::addColumn<QString>("never");
        QTest::newRow("unwritten elements: wrong, not different")
            << QString(kVerifyUnwritten) << -1 << 0 << "leave elements unwritten that the reference config writes"
            << "depend on";
        QTest::newRow("NaN where the reference is finite")
            << QString(kVerifyNonFinite) << -1 << 0 << "hold NaN or Inf where the reference config's outputs are finite"
            << "depend on";
        QTest::newRow("agree within their groups: the outputs may depend on P")
            << "" << 5 << 5 << "all 5 agree with their group: either the kernel's outputs depend on P"
            << "so they are ok";
        QTest::newRow("some disagree within their groups")
            << "" << 5 << 3 << "2 of 5 still differ (P=4, Q=b: argument 'out': element 3 is 1, expected 2)"
            << "depend on P (";
    }

    void splitExplanationOnlyWhereItCanHold() {
        QFETCH(QString, metric);
        QFETCH(int, verified);
        QFETCH(int, agree);
        QFETCH(QString, want);
        QFETCH(QString, never);
        std::vector<ResultRecord> results;
        for (const char* q : {"a", "b", "c"})
            results.push_back(result(1, q, ResultStatus::Ok));
        for (int p : {2, 4})
            for (const char* q : {"a", "b", "c"}) {
                ResultRecord r = result(p, q, ResultStatus::WrongResult);
                r.measurement.message = "argument 'out': 16,384 of 65,536 elements never written, the first at 0";
                if (!metric.isEmpty())
                    r.measurement.metrics.push_back({metric.toStdString(), 16384});
                results.push_back(r);
            }
        const std::vector<VerificationSplit> splits = tilescope::verificationSplits(results);
        QCOMPARE(splits.size(), std::size_t(1)); // P: Q has configs on both sides
        WithinGroupsCheck within;
        within.parameter = "P";
        within.verified = verified < 0 ? 0 : static_cast<std::size_t>(verified);
        within.agree = static_cast<std::size_t>(agree);
        within.firstDiffering = "P=4, Q=b: argument 'out': element 3 is 1, expected 2";
        const std::string sentence = describeVerification(results, splits, verified < 0 ? nullptr : &within);
        QVERIFY2(sentence.find(want.toStdString()) != std::string::npos, sentence.c_str());
        QVERIFY2(sentence.find(never.toStdString()) == std::string::npos, sentence.c_str());
        QVERIFY2(sentence.find("--no-verify") == std::string::npos, sentence.c_str());
    }

    void recordedVerdicts() {
        QCOMPARE(recordedVerdict(R"({"verification": "3 configs computed wrong results", "x": 1})", "verification"),
                 std::string("3 configs computed wrong results"));
        QCOMPARE(recordedVerdict(R"({"verification": 3})", "verification"), std::string());
        QCOMPARE(recordedVerdict("not json", "second_inputs"), std::string());
    }

    void messagesCarryNoControlBytes_data() {
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QString>("clean");
        QTest::newRow("a compile error that began with NUL")
            << QByteArray(1, '\0') +
                   "ptxas error   : Entry function 'k' uses too much shared data (0x12000 bytes, 0xc000 max)" +
                   QByteArray(1, '\0')
            << "ptxas error   : Entry function 'k' uses too much shared data (0x12000 bytes, 0xc000 max)";
        QTest::newRow("control bytes become spaces, tab and newline stay") << QByteArray("a\x01"
                                                                                         "b\x1b[0mc\x7f"
                                                                                         "d\te\nf")
                                                                           << "a b [0mc d\te\nf";
        QTest::newRow("line ends") << QByteArray("one\r\ntwo\rthree\n") << "one\ntwo\nthree";
        QTest::newRow("UTF-8 stays") << QByteArray("0.5 \xc2\xb5s, 4\xe2\x80\xaf"
                                                   "MiB")
                                     << QString::fromUtf8("0.5 µs, 4\u202fMiB");
        QTest::newRow("only control bytes") << QByteArray(1, '\0') + "\x02\r\n"
                                            << "";
        QTest::newRow("nothing to clean")
            << QByteArray("launch failed: too many resources") << "launch failed: too many resources";
    }

    void messagesCarryNoControlBytes() {
        QFETCH(QByteArray, raw);
        QFETCH(QString, clean);
        const std::string got = cleanMessage(std::string_view(raw.constData(), static_cast<std::size_t>(raw.size())));
        QCOMPARE(QString::fromStdString(got), clean);
        for (const char c : got)
            QVERIFY(c == '\n' || c == '\t' || static_cast<unsigned char>(c) >= 0x20);
    }
};

QTEST_GUILESS_MAIN(TestPlausibility)
#include "tst_plausibility.moc"
