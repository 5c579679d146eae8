// Tests of core/spec: reading, validating and writing T1 tuning problems.

#include "base/error.h"
#include "measure/metricnames.h"
#include "model/measurement.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <random>

using namespace tilescope;
using Json = nlohmann::ordered_json;

// Readable QCOMPARE failures for the standard types this suite compares.
namespace QTest {
template <>
char* toString(const std::string& s) {
    return toString(QString::fromStdString(s));
}
template <>
char* toString(const std::filesystem::path& p) {
    return toString(QString::fromStdString(p.string()));
}
template <>
char* toString(const std::vector<std::string>& v) {
    QStringList list;
    for (const auto& s : v)
        list << QString::fromStdString(s);
    return toString(list);
}
} // namespace QTest

namespace {

std::filesystem::path specData(const char* name) {
    return std::filesystem::path(TILESCOPE_TEST_DATA) / "spec" / name;
}

// A small valid problem; the malformed cases patch it (RFC 6902) into something broken.
const char* const kBase = R"json({
  "General": {"FormatVersion": 1},
  "ConfigurationSpace": {
    "TuningParameters": [
      {"Name": "BLOCK_M", "Type": "int", "Values": "[16, 32, 64]"},
      {"Name": "BLOCK_N", "Type": "int", "Values": "[16, 32, 64]"}
    ],
    "Conditions": [
      {"Parameters": ["BLOCK_M", "BLOCK_N"], "Expression": "BLOCK_M * BLOCK_N <= 2048"}
    ]
  },
  "KernelSpecification": {
    "Language": "CUDA",
    "KernelName": "gemm",
    "KernelFile": "gemm.cu",
    "GlobalSize": {"X": "ceil(N / BLOCK_N)", "Y": "ceil(M / BLOCK_M)"},
    "LocalSize": {"X": "128"},
    "ProblemSize": ["N", "M"],
    "Arguments": [
      {"Name": "C", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "M * N"},
      {"Name": "m", "Type": "int32", "MemoryType": "Scalar", "Value": "M"}
    ]
  },
  "Budget": [{"Type": "ConfigurationCount", "BudgetValue": 100}],
  "Tilescope": {
    "Shapes": [{"M": 1024, "N": 512}, {"M": 256, "N": 128}],
    "Objective": {"Name": "TFLOP/s", "Count": "2 * M * N", "Scale": 1e12}
  }
})json";

// Patch operations, to keep the rows of the malformed table short.
std::string replaceOp(const std::string& ptr, const std::string& value) {
    return R"({"op": "replace", "path": ")" + ptr + R"(", "value": )" + value + "}";
}
std::string addOp(const std::string& ptr, const std::string& value) {
    return R"({"op": "add", "path": ")" + ptr + R"(", "value": )" + value + "}";
}
std::string removeOp(const std::string& ptr) {
    return R"({"op": "remove", "path": ")" + ptr + R"("})";
}
std::string moveOp(const std::string& from, const std::string& to) {
    return R"({"op": "move", "from": ")" + from + R"(", "path": ")" + to + R"("})";
}
QByteArray patch(std::initializer_list<std::string> ops) {
    std::string out = "[";
    for (const auto& op : ops)
        out += (out.size() > 1 ? ", " : "") + op;
    return QByteArray::fromStdString(out + "]");
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    QCOMPARE(f.write(bytes), bytes.size());
}

std::vector<std::string> reprs(const std::vector<expr::Value>& values) {
    std::vector<std::string> out;
    for (const auto& v : values)
        out.push_back(expr::repr(v));
    return out;
}

/// Loads `text`, returning the error; fails the test if it loads or throws anything else.
struct Outcome {
    bool inputError = false;
    std::string file, location, message;
    std::string other; // what() of any other exception
};

Outcome tryParse(const std::string& text, const std::string& fileName = "p.json",
                 const std::filesystem::path& baseDir = {}) {
    Outcome o;
    try {
        TuningProblem::parse(text, fileName, baseDir);
    } catch (const InputError& e) {
        o.inputError = true;
        o.file = e.file();
        o.location = e.location();
        o.message = e.message();
    } catch (const std::exception& e) {
        o.other = std::string("unexpected exception: ") + e.what();
    } catch (...) {
        o.other = "unexpected non-standard exception";
    }
    return o;
}

/// Every JSON pointer in `j` (objects and arrays included), for the systematic corruption test.
void collectPointers(const Json& j, const std::string& ptr, std::vector<std::string>& out) {
    out.push_back(ptr);
    if (j.is_object()) {
        for (const auto& [key, value] : j.items()) {
            std::string token;
            for (char c : key)
                token += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
            collectPointers(value, ptr + "/" + token, out);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            collectPointers(j[i], ptr + "/" + std::to_string(i), out);
    }
}

} // namespace

class TestSpec : public QObject {
    Q_OBJECT

private slots:
    void richProblem();
    void metricSets();
    void roundTrip();
    void roundTripOfConstructedProblem();
    void tensorMapRoundTrip();
    void configListRoundTrip();
    void shapeGenerators();
    void writtenOrder();
    void rangesAndComprehensions();
    void valueLists_data();
    void valueLists();
    void scopeAndShapeSlots();
    void noShapes();
    void equality();
    void kernelPath();
    void malformed_data();
    void malformed();
    void loadErrors();
    void saveError();
    void neverCrashOnCorruptedFields();
    void neverCrashOnMangledText();
};

void TestSpec::richProblem() {
    const TuningProblem p = TuningProblem::load(specData("rich.json"));
    QCOMPARE(p.fileName, specData("rich.json").string());
    QCOMPARE(p.problemPath, specData("rich.json"));
    QCOMPARE(p.general.at("FormatVersion"), "1");
    QCOMPARE(p.general.at("BenchmarkName"), "\"sgemm\"");

    QCOMPARE(p.parameters.size(), std::size_t(6));
    QCOMPARE(p.parameterIndex("USE_TMA"), 4);
    QCOMPARE(p.parameterIndex("NOPE"), -1);
    QCOMPARE(reprs(p.parameters[0].values), (std::vector<std::string>{"32", "64", "128"}));
    QCOMPARE(reprs(p.parameters[1].values), (std::vector<std::string>{"32", "64", "96", "128"}));
    QCOMPARE(reprs(p.parameters[2].values), (std::vector<std::string>{"8", "16", "32"}));
    QCOMPARE(p.parameters[3].type, "float");
    QCOMPARE(reprs(p.parameters[3].values), (std::vector<std::string>{"0.5", "1.0", "2.5"}));
    QCOMPARE(reprs(p.parameters[4].values), (std::vector<std::string>{"True", "False"}));
    QCOMPARE(p.parameters[5].values.size(), std::size_t(2));
    QVERIFY(p.parameters[5].values[0].kind == expr::Kind::Str);
    QCOMPARE(*p.parameters[5].values[1].s, "col");

    QCOMPARE(p.conditions.size(), std::size_t(3));
    QCOMPARE(p.conditions[1].parameters, (std::vector<std::string>{"LAYOUT", "USE_TMA"}));
    QCOMPARE(p.conditions[2].expression, "M % BLOCK_M == 0");

    QCOMPARE(p.language, "CUDA");
    QCOMPARE(p.kernelName, "sgemm");
    QCOMPARE(p.kernelFile, "sgemm.cu");
    QCOMPARE(p.kernelPath(), std::filesystem::absolute(specData("sgemm.cu")).lexically_normal());
    QCOMPARE(p.compilerOptions, (std::vector<std::string>{"-std=c++17", "-O3"}));
    QCOMPARE(p.globalSizeType, "CUDA");
    QCOMPARE(p.globalSize, (ThreeD{"ceil(N / BLOCK_N)", "ceil(M / BLOCK_M)", "1"}));
    QCOMPARE(p.localSize.x, "BLOCK_N // 4");
    QCOMPARE(p.gridDivX, std::vector<std::string>{"BLOCK_N"});
    QVERIFY(p.gridDivZ.empty());
    QCOMPARE(p.problemSize, (std::vector<std::string>{"N", "M", "1"}));
    QCOMPARE(p.sharedMemory, "(BLOCK_M + BLOCK_N) * BLOCK_K * 4");
    QVERIFY(p.device.has_value());
    QCOMPARE(p.device->name, "NVIDIA H100");
    QCOMPARE(p.device->deviceId, std::optional<std::int64_t>(0));
    QCOMPARE(p.profiling, std::optional<bool>(false));
    QCOMPARE(p.simulationInput, "cache/sgemm_h100.json");

    QCOMPARE(p.arguments.size(), std::size_t(6));
    QCOMPARE(p.arguments[0].size, "M * N");
    QVERIFY(!p.arguments[0].sizeIsNumber);
    QCOMPARE(p.arguments[0].fillValue, std::optional<double>(0.0));
    QCOMPARE(p.arguments[1].randomSeed, std::optional<std::int64_t>(42));
    QCOMPARE(p.arguments[2].size, "4194304");
    QVERIFY(p.arguments[2].sizeIsNumber);
    QCOMPARE(p.arguments[2].typeSize, std::optional<std::int64_t>(2));
    QCOMPARE(p.arguments[2].dataSource, "data/b.bin");
    QCOMPARE(p.arguments[4].memoryType, "Scalar");
    QCOMPARE(p.arguments[4].value, "M");
    QCOMPARE(p.referenceArguments.size(), std::size_t(1));
    QCOMPARE(p.referenceArguments[0].validationThreshold, std::optional<double>(0.001));

    QCOMPARE(p.searchName, "random_sample");
    QCOMPARE(p.searchAttributes.size(), std::size_t(2));
    QCOMPARE(p.searchAttributes[1].value, "7");
    QVERIFY(!p.searchAttributes[1].valueIsJson);
    QCOMPARE(p.budget.size(), std::size_t(2));
    QCOMPARE(p.budget[0], (BudgetEntry{"TuningDuration", 600}));

    QCOMPARE(p.shapes.size(), std::size_t(2));
    QCOMPARE(p.shapes[1].label(), "M=1024 N=2048 K=512");
    QVERIFY(p.objective.has_value());
    QCOMPARE(p.objective->count, "2*M*N*K");
    QCOMPARE(p.objective->scale, 1e12);
    QCOMPARE(p.metrics, (std::vector<std::string>{"default", "l1tex__t_bytes.sum"}));

    // Unknown fields, keyed by the pointer of the object that held them.
    QCOMPARE(p.unknownFields.at(""), R"({"Provenance":{"Author":"tst_spec","Tags":["a","b"]}})");
    QCOMPARE(p.unknownFields.at("/ConfigurationSpace"), R"({"SearchSpaceHint":"dense"})");
    QCOMPARE(p.unknownFields.at("/ConfigurationSpace/TuningParameters/0"), R"({"Default":64})");
    QCOMPARE(p.unknownFields.at("/ConfigurationSpace/Conditions/0"),
             R"({"Note":"keeps the accumulators in registers"})");
    QCOMPARE(p.unknownFields.at("/KernelSpecification"), R"({"Stream":null})");
    QCOMPARE(p.unknownFields.at("/KernelSpecification/Device"), R"({"Vendor":"NVIDIA"})");
    QCOMPARE(p.unknownFields.at("/Search/Attributes/1"), R"({"Comment":"fixed"})");
    QCOMPARE(p.unknownFields.at("/Tilescope"), R"({"Strategy":"bayes_opt"})");
    QCOMPARE(p.unknownFields.at("/Tilescope/Objective"), R"({"Precision":"fp32"})");
    QCOMPARE(p.unknownFields.size(), std::size_t(9));
    // Kernel Tuner's Output flag is known: it says which buffers to verify.
    QCOMPARE(p.arguments[0].output, std::optional<bool>(true));
    QVERIFY(!p.arguments[1].output);
}

void TestSpec::roundTrip() {
    const TuningProblem original = TuningProblem::load(specData("rich.json"));
    const std::string text = original.toJson();

    // In memory.
    const TuningProblem reread = TuningProblem::parse(text, "reread.json", specData(""));
    QVERIFY(reread == original);
    QCOMPARE(reread.toJson(), text);

    // Through a file.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QFile::copy(QString::fromStdString(specData("sgemm.cu").string()), dir.filePath("sgemm.cu")));
    const std::filesystem::path path = dir.filePath("saved.json").toStdString();
    original.save(path);
    const TuningProblem loaded = TuningProblem::load(path);
    QVERIFY(loaded == original);
    QCOMPARE(loaded.problemPath, path);
    QCOMPARE(loaded.toJson(), text);
    QVERIFY(!std::filesystem::exists(dir.filePath("saved.json.tmp").toStdString()));

    // The unknown fields are back where they were.
    const Json j = Json::parse(text);
    QVERIFY(j["ConfigurationSpace"]["TuningParameters"][0]["Default"] == Json(64));
    QVERIFY(j["KernelSpecification"]["Stream"] == Json(nullptr));
    QVERIFY(j["KernelSpecification"]["Arguments"][0]["Output"] == Json(1));
    QVERIFY(j["Provenance"]["Tags"][1] == Json("b"));
    QVERIFY(j["Tilescope"]["Objective"]["Precision"] == Json("fp32"));
    // Integers stay integers, so the file stays valid T1.
    QVERIFY(j["KernelSpecification"]["ProblemSize"][2].is_number_integer());
    QVERIFY(j["KernelSpecification"]["Arguments"][2]["Size"].is_number_integer());
    QVERIFY(j["Budget"][1]["BudgetValue"] == Json(250));
}

void TestSpec::shapeGenerators() {
    // A dim may be a list or a string that makes one: the entry is the product, the first dim
    // slowest; listed shapes and generated ones follow each other in file order.
    Json j = Json::parse(kBase);
    j["Tilescope"]["Shapes"] = Json::parse(R"([{"M": "[2**i for i in range(0, 4)]", "N": [128, 512]},
                                                {"M": 3, "N": 7}])");
    const TuningProblem p = TuningProblem::parse(j.dump(), "gen.json", {});
    QCOMPARE(p.shapes.size(), std::size_t(9));
    QCOMPARE(p.shapes[0].label(), std::string("M=1 N=128"));
    QCOMPARE(p.shapes[1].label(), std::string("M=1 N=512"));
    QCOMPARE(p.shapes[2].label(), std::string("M=2 N=128"));
    QCOMPARE(p.shapes[7].label(), std::string("M=8 N=512"));
    QCOMPARE(p.shapes[8].label(), std::string("M=3 N=7"));
    // Written back as written, and read again equal.
    const Json written = Json::parse(p.toJson());
    QVERIFY(written["Tilescope"]["Shapes"][0]["M"] == Json("[2**i for i in range(0, 4)]"));
    QVERIFY(written["Tilescope"]["Shapes"][1]["N"] == Json(7));
    const TuningProblem again = TuningProblem::parse(p.toJson(), "gen.json", {});
    QVERIFY(again == p);
    // A problem without generators writes its shapes one by one, as before.
    const TuningProblem plain = TuningProblem::parse(kBase, "plain.json", {});
    QVERIFY(plain.shapesSource.empty());
    QVERIFY(!plain.roofline);

    // Tilescope.Roofline: the work of a launch, read, written back and read again equal.
    j["Tilescope"]["Roofline"] =
        Json::parse(R"({"Bytes": 4096, "Flops": "2 * M * N", "Compute": "bfloat16", "Note": 1})");
    const TuningProblem roof = TuningProblem::parse(j.dump(), "roof.json", {});
    QVERIFY(roof.roofline.has_value());
    QCOMPARE(roof.roofline->bytes, std::string("4096"));
    QCOMPARE(roof.roofline->flops, std::string("2 * M * N"));
    QCOMPARE(roof.roofline->compute, std::string("bfloat16"));
    QVERIFY(Json::parse(roof.toJson())["Tilescope"]["Roofline"]["Note"] == Json(1));
    QVERIFY(TuningProblem::parse(roof.toJson(), "roof.json", {}) == roof);
    QVERIFY(!(roof == p));
    j["Tilescope"]["Roofline"]["Compute"] = "float8"; // FP8 tensor cores
    QCOMPARE(TuningProblem::parse(j.dump(), "roof.json", {}).roofline->compute, std::string("float8"));
}

void TestSpec::tensorMapRoundTrip() {
    // A tensor map argument is read, written back as it was, and read again equal.
    const Json base = Json::parse(kBase);
    const Json withMap =
        base.patch(Json::parse(patch({addOp("/KernelSpecification/Arguments/-",
                                            R"({"Name": "mapC", "Type": "float", "MemoryType": "Scalar",
                                          "TensorMap": {"Tensor": "C", "Dims": ["N", "M"], "Box": [32, "8 * 2"],
                                                        "Swizzle": 128, "Note": "kept"}})")})
                                   .toStdString()));
    const TuningProblem p = TuningProblem::parse(withMap.dump(), "map.json", {});
    QCOMPARE(p.arguments.size(), std::size_t(3));
    QVERIFY(p.arguments[2].tensorMap.has_value());
    const TensorMapSpec& t = *p.arguments[2].tensorMap;
    QCOMPARE(t.tensor, std::string("C"));
    QCOMPARE(t.dims, (std::vector<std::string>{"N", "M"}));
    QCOMPARE(t.box, (std::vector<std::string>{"32", "8 * 2"}));
    QCOMPARE(t.swizzle, 128);
    const Json written = Json::parse(p.toJson());
    const Json& m = written["KernelSpecification"]["Arguments"][2]["TensorMap"];
    QVERIFY(m["Box"][0].is_number_integer());
    QVERIFY(m["Note"] == Json("kept"));
    const TuningProblem again = TuningProblem::parse(p.toJson(), "map.json", {});
    QVERIFY(again == p);
    QVERIFY(!p.arguments[0].tensorMap.has_value());
}

void TestSpec::configListRoundTrip() {
    // Tilescope.Configs: read as value indices (1.0 matches 1), written back as the values, read
    // again equal; left out of the spec hash.
    const Json base = Json::parse(kBase);
    const Json listed =
        base.patch(Json::parse(patch({addOp("/Tilescope/Configs", "[[64, 16], [16.0, 32]]")}).toStdString()));
    const TuningProblem p = TuningProblem::parse(listed.dump(), "list.json", {});
    QVERIFY(p.configList.has_value());
    QCOMPARE(*p.configList, (std::vector<Config>{{2, 0}, {0, 1}}));
    const Json written = Json::parse(p.toJson());
    QVERIFY(written["Tilescope"]["Configs"] == Json::parse("[[64, 16], [16, 32]]"));
    const TuningProblem again = TuningProblem::parse(p.toJson(), "list.json", {});
    QVERIFY(again == p);
    const TuningProblem plain = TuningProblem::parse(base.dump(), "plain.json", {});
    QVERIFY(!plain.configList.has_value());
    QVERIFY(!(plain == p));
    QCOMPARE(plain.specHash(), p.specHash());
}

void TestSpec::roundTripOfConstructedProblem() {
    // A problem made in memory: the writer must produce something the reader takes back equal.
    TuningProblem p;
    TuningParameter tp;
    tp.name = "TILE";
    tp.type = "int";
    tp.valuesText = "[1, 2, 4]";
    std::vector<std::unique_ptr<std::string>> strings;
    tp.values = expr::parseValueList(tp.valuesText, strings);
    tp.strings = std::make_shared<const std::vector<std::unique_ptr<std::string>>>(std::move(strings));
    p.parameters.push_back(tp);
    p.kernelName = "k";
    p.kernelFile = "k.cu";
    p.globalSize = {"1024 // TILE", "", ""};
    p.localSize = {"TILE", "1", ""};
    p.sharedMemory = "0";
    p.shapes.emplace_back();
    p.unknownFields["/KernelSpecification"] = R"({"Custom":[1,2]})";

    const TuningProblem q = TuningProblem::parse(p.toJson(), "mem.json", {});
    QVERIFY(q == p);
    QVERIFY(Json::parse(p.toJson())["KernelSpecification"]["SharedMemory"].is_number_integer());
}

void TestSpec::writtenOrder() {
    const TuningProblem p = TuningProblem::load(specData("rich.json"));
    const Json j = Json::parse(p.toJson());
    std::vector<std::string> top;
    for (const auto& [key, value] : j.items())
        top.push_back(key);
    QCOMPARE(top, (std::vector<std::string>{"General", "ConfigurationSpace", "KernelSpecification", "Search", "Budget",
                                            "Provenance", "Tilescope"}));
    std::vector<std::string> param;
    for (const auto& [key, value] : j["ConfigurationSpace"]["TuningParameters"][0].items())
        param.push_back(key);
    QCOMPARE(param, (std::vector<std::string>{"Name", "Type", "Values", "Default"}));
    // Two-space indent.
    QVERIFY(p.toJson().find("\n  \"General\": {\n    \"FormatVersion\": 1,") != std::string::npos);
}

void TestSpec::rangesAndComprehensions() {
    const TuningProblem p = TuningProblem::load(specData("ranges.json"));
    QCOMPARE(p.parameters.size(), std::size_t(8));
    QCOMPARE(reprs(p.parameters[0].values), (std::vector<std::string>{"0", "1", "2", "3"}));
    QCOMPARE(reprs(p.parameters[1].values), (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8"}));
    QCOMPARE(reprs(p.parameters[2].values), (std::vector<std::string>{"64", "48", "32", "16"}));
    QCOMPARE(reprs(p.parameters[3].values),
             (std::vector<std::string>{"16", "32", "48", "64", "80", "96", "112", "128"}));
    QCOMPARE(reprs(p.parameters[4].values), (std::vector<std::string>{"1", "2", "8"}));
    QCOMPARE(reprs(p.parameters[5].values), (std::vector<std::string>{"128", "256"}));
    QCOMPARE(reprs(p.parameters[6].values), (std::vector<std::string>{"0.5", "1.0", "1.5"}));
    QCOMPARE(reprs(p.parameters[7].values), (std::vector<std::string>{"'a'", "'b'"}));
    // The text is kept as written, for writing back.
    QCOMPARE(p.parameters[3].valuesText, "[16*i for i in range(1, 9)]");
    QCOMPARE(p.shapes.size(), std::size_t(1));
    QVERIFY(p.shapes[0].dims.empty());
    QVERIFY(TuningProblem::parse(p.toJson(), "again.json", {}) == p);
}

void TestSpec::valueLists_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("values");
    QTest::addColumn<QStringList>("expected");

    QTest::newRow("literal") << "int"
                             << "[16, 32, 64]" << QStringList{"16", "32", "64"};
    QTest::newRow("range stop") << "int"
                                << "range(3)" << QStringList{"0", "1", "2"};
    QTest::newRow("range start stop") << "uint"
                                      << "range(2, 5)" << QStringList{"2", "3", "4"};
    QTest::newRow("range step") << "int"
                                << "range(1, 10, 4)" << QStringList{"1", "5", "9"};
    QTest::newRow("list range") << "int"
                                << "list(range(1, 3))" << QStringList{"1", "2"};
    QTest::newRow("arithmetic") << "int"
                                << "[1024 // 4, 2**3, -1]" << QStringList{"256", "8", "-1"};
    QTest::newRow("comprehension") << "int"
                                   << "[16*i for i in range(1, 4)]" << QStringList{"16", "32", "48"};
    QTest::newRow("comprehension if") << "int"
                                      << "[i for i in range(6) if i % 2 == 0]" << QStringList{"0", "2", "4"};
    QTest::newRow("floats") << "float"
                            << "[0.25, 1, 1e3]" << QStringList{"0.25", "1", "1000.0"};
    QTest::newRow("bools") << "bool"
                           << "[False, True]" << QStringList{"False", "True"};
    QTest::newRow("strings") << "string"
                             << "['a', \"b c\"]" << QStringList{"'a'", "'b c'"};
    QTest::newRow("spaces") << "int"
                            << "  [ 1 ,2 ]  " << QStringList{"1", "2"};
}

void TestSpec::valueLists() {
    QFETCH(QString, type);
    QFETCH(QString, values);
    QFETCH(QStringList, expected);

    Json j = Json::parse(kBase);
    j["ConfigurationSpace"]["TuningParameters"][1]["Type"] = type.toStdString();
    j["ConfigurationSpace"]["TuningParameters"][1]["Values"] = values.toStdString();
    j["ConfigurationSpace"]["Conditions"] = Json::array();
    j["KernelSpecification"]["GlobalSize"]["X"] = "1";
    const TuningProblem p = TuningProblem::parse(j.dump(), "values.json", {});
    QCOMPARE(p.parameters[1].valuesText, values.toStdString());
    QStringList got;
    for (const auto& r : reprs(p.parameters[1].values))
        got << QString::fromStdString(r);
    QCOMPARE(got, expected);
}

void TestSpec::scopeAndShapeSlots() {
    const TuningProblem p = TuningProblem::load(specData("rich.json"));
    const expr::Scope scope = p.scope();
    QCOMPARE(scope.slotCount(), 6 + 3 + 1);
    QCOMPARE(scope.nameOf(0), "BLOCK_M");
    QCOMPARE(scope.nameOf(5), "LAYOUT");
    QCOMPARE(scope.nameOf(6), "M");
    QCOMPARE(scope.nameOf(7), "N");
    QCOMPARE(scope.nameOf(8), "K");
    QCOMPARE(scope.nameOf(9), "ProblemSize");
    QVERIFY(scope.findVariable("BLOCK_N")->hasValueList);
    QCOMPARE(scope.findVariable("BLOCK_N")->valueList.size(), std::size_t(4));

    expr::ValueList storage;
    std::vector<expr::Value> slotValues = p.shapeSlots(1, storage);
    QCOMPARE(slotValues.size(), std::size_t(10));
    QCOMPARE(slotValues[0].i, 0); // parameters are the caller's to set
    QCOMPARE(slotValues[6].i, 1024);
    QCOMPARE(slotValues[7].i, 2048);
    QCOMPARE(slotValues[8].i, 512);
    QCOMPARE(expr::repr(slotValues[9]), "[2048, 1024, 1]");

    // Expressions of the problem evaluate over these slotValues.
    slotValues[0] = expr::Value::ofInt(64);  // BLOCK_M
    slotValues[1] = expr::Value::ofInt(128); // BLOCK_N
    slotValues[2] = expr::Value::ofInt(16);  // BLOCK_K
    QCOMPARE(expr::Expression::compile(p.globalSize.x, scope).evaluateInt(slotValues.data()), 16);
    QCOMPARE(expr::Expression::compile(p.sharedMemory, scope).evaluateInt(slotValues.data()), (64 + 128) * 16 * 4);
    QCOMPARE(expr::Expression::compile(p.objective->count, scope).evaluateInt(slotValues.data()),
             std::int64_t(2) * 1024 * 2048 * 512);
    QCOMPARE(expr::Expression::compile("ProblemSize[0] + max(BLOCK_N)", scope).evaluateInt(slotValues.data()),
             2048 + 128);

    const std::vector<expr::Value> first = p.shapeSlots(0, storage);
    QCOMPARE(expr::repr(first[9]), "[4096, 4096, 1]");
}

void TestSpec::noShapes() {
    Json j = Json::parse(kBase);
    j.erase("Tilescope");
    j["KernelSpecification"]["GlobalSize"] = Json{{"X", "ProblemSize[0] // BLOCK_M"}};
    j["KernelSpecification"]["ProblemSize"] = Json::array({4096, "2 * 1024"});
    j["KernelSpecification"]["Arguments"] = Json::array();
    const TuningProblem p = TuningProblem::parse(j.dump(), "noshape.json", {});
    QCOMPARE(p.shapes.size(), std::size_t(1));
    QVERIFY(p.shapes[0].dims.empty());
    QCOMPARE(p.shapes[0].label(), "");
    QCOMPARE(p.scope().slotCount(), 3);
    expr::ValueList storage;
    const auto slotValues = p.shapeSlots(0, storage);
    QCOMPARE(expr::repr(slotValues[2]), "[4096, 2048]");
    // No Tilescope object is written for a problem without additions.
    QVERIFY(!Json::parse(p.toJson()).contains("Tilescope"));
}

void TestSpec::equality() {
    const TuningProblem a = TuningProblem::load(specData("rich.json"));
    TuningProblem b = a;
    QVERIFY(a == b);
    b.problemPath = "elsewhere.json"; // paths are not content
    b.fileName = "elsewhere.json";
    QVERIFY(a == b);
    b.shapes[1].dims[0].second = 1025;
    QVERIFY(!(a == b));
    b = a;
    b.unknownFields.erase("");
    QVERIFY(!(a == b));
    b = a;
    b.parameters[3].values[0] = expr::Value::ofFloat(0.75);
    QVERIFY(!(a == b));
    b = a;
    b.arguments[2].sizeIsNumber = false;
    QVERIFY(!(a == b));
}

void TestSpec::kernelPath() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath("sub/kernels"));
    writeFile(dir.filePath("sub/kernels/gemm.cu"), "// kernel\n");
    Json j = Json::parse(kBase);
    j["KernelSpecification"]["KernelFile"] = "kernels/gemm.cu";
    writeFile(dir.filePath("sub/p.json"), QByteArray::fromStdString(j.dump()));
    const TuningProblem p = TuningProblem::load(dir.filePath("sub/p.json").toStdString());
    QCOMPARE(p.kernelPath(), std::filesystem::path(dir.filePath("sub/kernels/gemm.cu").toStdString()));
    QVERIFY(std::filesystem::exists(p.kernelPath()));

    // An absolute KernelFile is taken as it is.
    j["KernelSpecification"]["KernelFile"] = dir.filePath("sub/kernels/gemm.cu").toStdString();
    const TuningProblem q = TuningProblem::parse(j.dump(), "abs.json", "/nonexistent");
    QCOMPARE(q.kernelPath(), std::filesystem::path(dir.filePath("sub/kernels/gemm.cu").toStdString()));
}

void TestSpec::malformed_data() {
    QTest::addColumn<QByteArray>("input"); // a patch of kBase (starts with '['), or the whole file
    QTest::addColumn<QString>("location");
    QTest::addColumn<QStringList>("phrases");

    const std::string tp = "/ConfigurationSpace/TuningParameters";
    const std::string ks = "/KernelSpecification";

    // Bad JSON: line and column.
    QTest::newRow("json: truncated") << QByteArray("{\"ConfigurationSpace\": {") << "line 1, column 25"
                                     << QStringList{"the JSON ends early"};
    QTest::newRow("json: bad literal") << QByteArray("{\n  \"a\": 1,\n  \"b\": tru\n}") << "line 3, column 11"
                                       << QStringList{"invalid literal"};
    QTest::newRow("json: trailing comma")
        << QByteArray("{\n  \"a\": [1, 2,]\n}") << "line 2, column 14" << QStringList{"unexpected ']'"};
    QTest::newRow("json: column counts characters")
        << QByteArray("{\"Größe\": x}") << "line 1, column 11" << QStringList{"invalid literal"};
    QTest::newRow("json: number overflow") << QByteArray("{\n  \"a\": [1, 1e400]\n}") << "line 2, column 12"
                                           << QStringList{"the number 1e400 is too large"};
    QTest::newRow("json: empty") << QByteArray("") << "" << QStringList{"the file is empty"};
    QTest::newRow("json: duplicate key")
        << QByteArray("{\"ConfigurationSpace\": {\"TuningParameters\": [], \"TuningParameters\": []}}")
        << "/ConfigurationSpace/TuningParameters" << QStringList{"duplicate key 'TuningParameters'"};
    QTest::newRow("json: too deep") << QByteArray(std::string(200, '[').c_str()) << "line 1, column 129"
                                    << QStringList{"nested more than 128 levels"};
    QTest::newRow("json: not an object") << QByteArray("[1, 2]") << ""
                                         << QStringList{"expected an object, got an array"};

    // Tilescope.Configs: each entry one value per parameter, each one of its parameter's values.
    QTest::newRow("configs: wrong length")
        << patch({addOp("/Tilescope/Configs", "[[16, 32], [16]]")}) << "/Tilescope/Configs/1"
        << QStringList{"a config of 1 values; the problem has 2 parameters"};
    QTest::newRow("configs: unknown value")
        << patch({addOp("/Tilescope/Configs", "[[16, 48]]")}) << "/Tilescope/Configs/0/1"
        << QStringList{"48 is not a value of parameter 'BLOCK_N'"};
    QTest::newRow("configs: not a list") << patch({addOp("/Tilescope/Configs", "{\"a\": 1}")}) << "/Tilescope/Configs"
                                         << QStringList{"expected an array"};

    // Missing required fields: the parent's pointer and the field.
    QTest::newRow("missing ConfigurationSpace")
        << patch({removeOp("/ConfigurationSpace")}) << "" << QStringList{"missing required field 'ConfigurationSpace'"};
    QTest::newRow("missing TuningParameters")
        << patch({removeOp("/ConfigurationSpace/TuningParameters")}) << "/ConfigurationSpace"
        << QStringList{"missing required field 'TuningParameters'"};
    QTest::newRow("missing Values") << patch({removeOp(tp + "/1/Values")}) << QString::fromStdString(tp + "/1")
                                    << QStringList{"missing required field 'Values'"};
    QTest::newRow("missing KernelName") << patch({removeOp(ks + "/KernelName")}) << QString::fromStdString(ks)
                                        << QStringList{"missing required field 'KernelName'"};
    QTest::newRow("missing GlobalSize X")
        << patch({removeOp(ks + "/GlobalSize/X")}) << QString::fromStdString(ks + "/GlobalSize")
        << QStringList{"missing required field 'X'"};
    QTest::newRow("missing condition Expression")
        << patch({removeOp("/ConfigurationSpace/Conditions/0/Expression")}) << "/ConfigurationSpace/Conditions/0"
        << QStringList{"missing required field 'Expression'"};
    QTest::newRow("missing MemoryType") << patch({removeOp(ks + "/Arguments/1/MemoryType")})
                                        << QString::fromStdString(ks + "/Arguments/1")
                                        << QStringList{"missing required field 'MemoryType'"};
    QTest::newRow("missing Size of a Vector")
        << patch({removeOp(ks + "/Arguments/0/Size")}) << QString::fromStdString(ks + "/Arguments/0")
        << QStringList{"missing required field 'Size'"};
    QTest::newRow("missing, other case") << patch({moveOp(ks + "/Language", ks + "/language")})
                                         << QString::fromStdString(ks)
                                         << QStringList{"missing required field 'Language'", "found 'language'"};

    // Wrong types.
    QTest::newRow("type: Name number") << patch({replaceOp(tp + "/0/Name", "5")})
                                       << QString::fromStdString(tp + "/0/Name")
                                       << QStringList{"expected a string, got a number"};
    QTest::newRow("type: Values array of objects")
        << patch({replaceOp(tp + "/0/Values", "[16, {}]")}) << QString::fromStdString(tp + "/0/Values/1")
        << QStringList{"expected a number, a string or a boolean"};
    QTest::newRow("Values: bad expression")
        << patch({replaceOp(tp + "/0/Values", "\"[2**i for i in range(0, 6\"")})
        << QString::fromStdString(tp + "/0/Values") << QStringList{"SyntaxError:", "column "};
    QTest::newRow("Values: runtime error")
        << patch({replaceOp(tp + "/0/Values", "\"[64 // i for i in range(0, 3)]\"")})
        << QString::fromStdString(tp + "/0/Values") << QStringList{"column 5: ZeroDivisionError:"};
    QTest::newRow("type: TuningParameters object")
        << patch({replaceOp("/ConfigurationSpace/TuningParameters", "{}")}) << QString::fromStdString(tp)
        << QStringList{"expected an array, got an object"};
    QTest::newRow("type: parameter null") << patch({replaceOp(tp + "/1", "null")}) << QString::fromStdString(tp + "/1")
                                          << QStringList{"expected an object, got null"};
    QTest::newRow("type: Profiling string")
        << patch({addOp(ks + "/Profiling", "\"yes\"")}) << QString::fromStdString(ks + "/Profiling")
        << QStringList{"expected true or false, got a string"};
    QTest::newRow("type: RandomSeed float")
        << patch({addOp(ks + "/Arguments/0/RandomSeed", "1.5")})
        << QString::fromStdString(ks + "/Arguments/0/RandomSeed") << QStringList{"expected an integer, got 1.5"};
    QTest::newRow("type: ProblemSize entry")
        << patch({replaceOp(ks + "/ProblemSize/1", "true")}) << QString::fromStdString(ks + "/ProblemSize/1")
        << QStringList{"expected an integer or a string, got a boolean"};
    QTest::newRow("type: BudgetValue string")
        << patch({replaceOp("/Budget/0/BudgetValue", "\"100\"")}) << "/Budget/0/BudgetValue"
        << QStringList{"expected a number, got a string"};
    QTest::newRow("type: CompilerOptions item")
        << patch({addOp(ks + "/CompilerOptions", "[\"-O3\", 3]")}) << QString::fromStdString(ks + "/CompilerOptions/1")
        << QStringList{"expected a string, got a number"};

    // Value lists.
    QTest::newRow("values: empty") << patch({replaceOp(tp + "/1/Values", "\"[]\"")})
                                   << QString::fromStdString(tp + "/1/Values") << QStringList{"empty value list"};
    QTest::newRow("values: empty range") << patch({replaceOp(tp + "/1/Values", "\"range(0)\"")})
                                         << QString::fromStdString(tp + "/1/Values") << QStringList{"empty value list"};
    QTest::newRow("values: syntax") << patch({replaceOp(tp + "/1/Values", "\"[16, 32\"")})
                                    << QString::fromStdString(tp + "/1/Values")
                                    << QStringList{"SyntaxError", "in '[16, 32'"};
    QTest::newRow("values: duplicate") << patch({replaceOp(tp + "/0/Values", "\"[16, 32, 16]\"")})
                                       << QString::fromStdString(tp + "/0/Values")
                                       << QStringList{"duplicate value 16", "indices 0 and 2"};
    QTest::newRow("values: duplicate int/float")
        << patch({replaceOp(tp + "/0/Type", "\"float\""), replaceOp(tp + "/0/Values", "\"[1, 2.5, 1.0]\"")})
        << QString::fromStdString(tp + "/0/Values") << QStringList{"duplicate value 1.0"};
    QTest::newRow("values: str for int") << patch({replaceOp(tp + "/0/Values", "\"[16, 'x']\"")})
                                         << QString::fromStdString(tp + "/0/Values")
                                         << QStringList{"value 'x' is a str, but Type is 'int'"};
    QTest::newRow("values: float for int")
        << patch({replaceOp(tp + "/0/Values", "\"[16, 0.5]\"")}) << QString::fromStdString(tp + "/0/Values")
        << QStringList{"value 0.5 is a float, but Type is 'int'"};
    QTest::newRow("values: int for bool")
        << patch({replaceOp(tp + "/0/Type", "\"bool\""), replaceOp(tp + "/0/Values", "\"[0, 1]\"")})
        << QString::fromStdString(tp + "/0/Values") << QStringList{"value 0 is an int, but Type is 'bool'"};
    QTest::newRow("values: negative uint")
        << patch({replaceOp(tp + "/0/Type", "\"uint\""), replaceOp(tp + "/0/Values", "\"[-1, 1]\"")})
        << QString::fromStdString(tp + "/0/Values") << QStringList{"value -1 is negative, but Type is 'uint'"};
    QTest::newRow("values: too many") << patch({replaceOp(tp + "/1/Values", "\"range(70000)\"")})
                                      << QString::fromStdString(tp + "/1/Values")
                                      << QStringList{"too many values (70000; at most 65535)"};
    QTest::newRow("values: not a list") << patch({replaceOp(tp + "/1/Values", "\"16\"")})
                                        << QString::fromStdString(tp + "/1/Values")
                                        << QStringList{"column 1: TypeError:", "in '16'"};
    QTest::newRow("values: infinite") << patch({replaceOp(tp + "/0/Type", "\"float\""),
                                                replaceOp(tp + "/0/Values", "\"[1.0, 1e308 * 10]\"")})
                                      << QString::fromStdString(tp + "/0/Values")
                                      << QStringList{"value inf is not a finite number"};
    QTest::newRow("values: a name") << patch({replaceOp(tp + "/0/Values", "\"[M, 2]\"")})
                                    << QString::fromStdString(tp + "/0/Values") << QStringList{"column 2:"};

    // Parameter names.
    QTest::newRow("name: duplicate") << patch({replaceOp(tp + "/1/Name", "\"BLOCK_M\"")})
                                     << QString::fromStdString(tp + "/1/Name")
                                     << QStringList{"duplicate parameter name 'BLOCK_M' (first at "
                                                    "/ConfigurationSpace/TuningParameters/0)"};
    QTest::newRow("name: not an identifier")
        << patch({replaceOp(tp + "/1/Name", "\"BLOCK-N\"")}) << QString::fromStdString(tp + "/1/Name")
        << QStringList{"'BLOCK-N' is not a valid identifier"};
    QTest::newRow("name: builtin") << patch({replaceOp(tp + "/1/Name", "\"max\"")})
                                   << QString::fromStdString(tp + "/1/Name")
                                   << QStringList{"'max' is reserved (a builtin function)"};
    QTest::newRow("name: keyword") << patch({replaceOp(tp + "/1/Name", "\"if\"")})
                                   << QString::fromStdString(tp + "/1/Name") << QStringList{"a Python keyword"};
    QTest::newRow("name: ProblemSize") << patch({replaceOp(tp + "/1/Name", "\"ProblemSize\"")})
                                       << QString::fromStdString(tp + "/1/Name") << QStringList{"is reserved"};
    QTest::newRow("name: shape clash") << patch({replaceOp(tp + "/1/Name", "\"N\"")})
                                       << QString::fromStdString(tp + "/1/Name")
                                       << QStringList{"parameter name 'N' is also a shape name"};

    // Expressions: compiled at load, errors at the field with the column.
    QTest::newRow("condition: unknown name")
        << patch({replaceOp("/ConfigurationSpace/Conditions/0/Expression", "\"BLOCK_Q * 2 <= BLOCK_M\"")})
        << "/ConfigurationSpace/Conditions/0/Expression"
        << QStringList{"column 1: NameError:", "'BLOCK_Q'", "in 'BLOCK_Q * 2 <= BLOCK_M'"};
    QTest::newRow("condition: unknown name later")
        << patch({replaceOp("/ConfigurationSpace/Conditions/0/Expression", "\"BLOCK_M <= BLOCK_Q\"")})
        << "/ConfigurationSpace/Conditions/0/Expression" << QStringList{"column 12: NameError:", "'BLOCK_Q'"};
    QTest::newRow("condition: syntax error")
        << patch({replaceOp("/ConfigurationSpace/Conditions/0/Expression", "\"BLOCK_M <= * 2\"")})
        << "/ConfigurationSpace/Conditions/0/Expression"
        << QStringList{"column 12: SyntaxError:", "in 'BLOCK_M <= * 2'"};
    QTest::newRow("condition: unclosed paren")
        << patch({replaceOp("/ConfigurationSpace/Conditions/0/Expression", "\"(BLOCK_M <= 2\"")})
        << "/ConfigurationSpace/Conditions/0/Expression" << QStringList{"SyntaxError:"};
    QTest::newRow("LocalSize: unknown name")
        << patch({replaceOp(ks + "/LocalSize/X", "\"THREADS\"")}) << QString::fromStdString(ks + "/LocalSize/X")
        << QStringList{"column 1: NameError:", "'THREADS'"};
    QTest::newRow("GridDivY: unknown name")
        << patch({addOp(ks + "/GridDivY", "[\"BLOCK_M\", \"WARPS\"]")}) << QString::fromStdString(ks + "/GridDivY/1")
        << QStringList{"NameError:", "'WARPS'"};
    QTest::newRow("SharedMemory: syntax")
        << patch({addOp(ks + "/SharedMemory", "\"BLOCK_M *\"")}) << QString::fromStdString(ks + "/SharedMemory")
        << QStringList{"SyntaxError:"};
    QTest::newRow("Size: unknown name") << patch({replaceOp(ks + "/Arguments/0/Size", "\"M * Q\"")})
                                        << QString::fromStdString(ks + "/Arguments/0/Size")
                                        << QStringList{"column 5: NameError:", "'Q'"};
    QTest::newRow("Value: unknown name") << patch({replaceOp(ks + "/Arguments/1/Value", "\"K\"")})
                                         << QString::fromStdString(ks + "/Arguments/1/Value")
                                         << QStringList{"NameError:", "'K'"};
    QTest::newRow("Count: unknown name") << patch({replaceOp("/Tilescope/Objective/Count", "\"2 * M * N * K\"")})
                                         << "/Tilescope/Objective/Count" << QStringList{"column 13: NameError:"};
    QTest::newRow("ProblemSize: parameter")
        << patch({replaceOp(ks + "/ProblemSize/0", "\"N // BLOCK_N\"")})
        << QString::fromStdString(ks + "/ProblemSize/0")
        << QStringList{"ProblemSize may use only the shape names (M, N)", "'BLOCK_N'"};
    QTest::newRow("ProblemSize: fails for a shape")
        << patch({replaceOp(ks + "/ProblemSize/0", "\"M // (N - 128)\"")})
        << QString::fromStdString(ks + "/ProblemSize/0") << QStringList{"ZeroDivisionError", "shape M=256 N=128"};
    // Sizes out of range: a number in the file and an expression's value get one message; the
    // expression's says for which shape (and parameter value) it is out of range.
    const QString size = QString::fromStdString(ks + "/Arguments/0/Size");
    QTest::newRow("Size: negative number") << patch({replaceOp(ks + "/Arguments/0/Size", "-1")}) << size
                                           << QStringList{"Size must not be negative, got -1"};
    QTest::newRow("Size: negative for a shape")
        << patch({replaceOp(ks + "/Arguments/0/Size", "\"M - 512\"")}) << size
        << QStringList{"Size must not be negative, got -256 (from 'M - 512' for shape M=256 N=128)"};
    QTest::newRow("Size: past 64 bits")
        << patch({replaceOp(ks + "/Arguments/0/Size", "\"10**20\"")}) << size
        << QStringList{"Size must be at most 281,474,976,710,656 elements of 4 bytes (2^50 bytes, more than any "
                       "device holds), got a number past 64 bits (from '10**20' for shape M=1024 N=512)"};
    QTest::newRow("Size: number past 2^50 bytes")
        << patch({replaceOp(ks + "/Arguments/0/Size", "281474976710657")}) << size
        << QStringList{"Size must be at most 281,474,976,710,656 elements of 4 bytes", "got 281474976710657"};
    QTest::newRow("Size: for a parameter's value")
        << patch({replaceOp(ks + "/Arguments/0/Size", "\"M * (BLOCK_M - 32)\"")}) << size
        << QStringList{"Size must not be negative, got -16384 (from 'M * (BLOCK_M - 32)' for shape M=1024 N=512 "
                       "and BLOCK_M=16)"};
    QTest::newRow("SharedMemory: negative for a shape")
        << patch({addOp(ks + "/SharedMemory", "\"M - 2048\"")}) << QString::fromStdString(ks + "/SharedMemory")
        << QStringList{"SharedMemory must not be negative, got -1024 (from 'M - 2048' for shape M=1024 N=512)"};
    QTest::newRow("SharedMemory: number past 2^31")
        << patch({addOp(ks + "/SharedMemory", "4294967296")}) << QString::fromStdString(ks + "/SharedMemory")
        << QStringList{"SharedMemory must be at most 2147483647 bytes (more than any device has), got 4294967296"};
    QTest::newRow("Value on a Vector") << patch({addOp(ks + "/Arguments/0/Value", "\"M\"")})
                                       << QString::fromStdString(ks + "/Arguments/0/Value")
                                       << QStringList{"Value is for Scalar arguments only"};

    // Enums.
    QTest::newRow("Language: not CUDA") << patch({replaceOp(ks + "/Language", "\"OpenCL\"")})
                                        << QString::fromStdString(ks + "/Language")
                                        << QStringList{"the kernel is OpenCL, and Tilescope compiles and runs CUDA "
                                                       "and Triton kernels only",
                                                       "'space' still counts"};
    QTest::newRow("enum: parameter Type")
        << patch({replaceOp(tp + "/0/Type", "\"integer\"")}) << QString::fromStdString(tp + "/0/Type")
        << QStringList{"unknown Type 'integer'", "int, uint, float, bool, string"};
    QTest::newRow("enum: MemoryType") << patch({replaceOp(ks + "/Arguments/0/MemoryType", "\"Global\"")})
                                      << QString::fromStdString(ks + "/Arguments/0/MemoryType")
                                      << QStringList{"unknown MemoryType 'Global'"};
    QTest::newRow("enum: argument Type") << patch({replaceOp(ks + "/Arguments/0/Type", "\"fp32\"")})
                                         << QString::fromStdString(ks + "/Arguments/0/Type")
                                         << QStringList{"unknown Type 'fp32'"};
    QTest::newRow("enum: GlobalSizeType")
        << patch({addOp(ks + "/GlobalSizeType", "\"HIP\"")}) << QString::fromStdString(ks + "/GlobalSizeType")
        << QStringList{"unknown GlobalSizeType 'HIP'"};
    QTest::newRow("enum: Budget Type") << patch({replaceOp("/Budget/0/Type", "\"Evaluations\"")}) << "/Budget/0/Type"
                                       << QStringList{"unknown Type 'Evaluations'", "ConfigurationCount"};
    QTest::newRow("enum: TimeUnit") << patch({addOp("/General/TimeUnit", "\"ms\"")}) << "/General/TimeUnit"
                                    << QStringList{"unknown TimeUnit 'ms'"};
    QTest::newRow("budget: fraction") << patch({replaceOp("/Budget/0", R"({"Type": "ConfigurationFraction",
                                                                          "BudgetValue": 1.5})")})
                                      << "/Budget/0/BudgetValue" << QStringList{"at most 1"};

    // Shapes.
    QTest::newRow("shapes: not an array") << patch({replaceOp("/Tilescope/Shapes", "{\"M\": 1}")})
                                          << "/Tilescope/Shapes" << QStringList{"expected an array, got an object"};
    QTest::newRow("shapes: empty") << patch({replaceOp("/Tilescope/Shapes", "[]")}) << "/Tilescope/Shapes"
                                   << QStringList{"empty shape list"};
    QTest::newRow("shapes: string value")
        << patch({replaceOp("/Tilescope/Shapes/1/N", "\"128\"")}) << "/Tilescope/Shapes/1/N"
        << QStringList{"expected an integer, got a string (\"128\"; a string here is a list of values"};
    QTest::newRow("shapes: float value") << patch({replaceOp("/Tilescope/Shapes/0/M", "1024.5")})
                                         << "/Tilescope/Shapes/0/M" << QStringList{"expected an integer, got 1024.5"};
    QTest::newRow("shapes: too large") << patch({replaceOp("/Tilescope/Shapes/0/M", "18446744073709551615")})
                                       << "/Tilescope/Shapes/0/M" << QStringList{"out of range"};
    QTest::newRow("shapes: missing key") << patch({removeOp("/Tilescope/Shapes/1/N")}) << "/Tilescope/Shapes/1"
                                         << QStringList{"missing N"};
    QTest::newRow("shapes: extra key") << patch({addOp("/Tilescope/Shapes/1/K", "64")}) << "/Tilescope/Shapes/1"
                                       << QStringList{"unexpected K"};
    QTest::newRow("shapes: bad name") << patch({replaceOp("/Tilescope/Shapes", R"([{"M-1": 3}])")})
                                      << "/Tilescope/Shapes/0/M-1" << QStringList{"not a valid identifier"};
    QTest::newRow("shapes: builtin name") << patch({replaceOp("/Tilescope/Shapes", R"([{"min": 3}])")})
                                          << "/Tilescope/Shapes/0/min" << QStringList{"reserved"};
    QTest::newRow("shapes: element not object")
        << patch({replaceOp("/Tilescope/Shapes/1", "[256, 128]")}) << "/Tilescope/Shapes/1"
        << QStringList{"expected an object, got an array"};
    QTest::newRow("shapes: generator of floats")
        << patch({replaceOp("/Tilescope/Shapes/1/N", "\"[0.5 * i for i in range(1, 3)]\"")}) << "/Tilescope/Shapes/1/N"
        << QStringList{"the list holds 0.5; a shape's dims are integers"};
    QTest::newRow("shapes: generator that fails")
        << patch({replaceOp("/Tilescope/Shapes/1/N", "\"[2**i for i in range(0, k)]\"")}) << "/Tilescope/Shapes/1/N"
        << QStringList{"NameError", "'k'"};
    QTest::newRow("shapes: empty list") << patch({replaceOp("/Tilescope/Shapes/1/N", "[]")}) << "/Tilescope/Shapes/1/N"
                                        << QStringList{"an empty list of values"};
    QTest::newRow("shapes: list of strings") << patch({replaceOp("/Tilescope/Shapes/1/N", "[\"64\"]")})
                                             << "/Tilescope/Shapes/1/N/0" << QStringList{"expected an integer"};
    QTest::newRow("shapes: too many")
        << patch({replaceOp("/Tilescope/Shapes/1", R"x({"M": "list(range(1, 1001))", "N": "list(range(1, 1001))"})x")})
        << "/Tilescope/Shapes/1" << QStringList{"more than 100000 shapes"};
    QTest::newRow("roofline: empty") << patch({addOp("/Tilescope/Roofline", "{}")}) << "/Tilescope/Roofline"
                                     << QStringList{"a Roofline needs Bytes, Flops or both"};
    QTest::newRow("roofline: flops without compute")
        << patch({addOp("/Tilescope/Roofline", R"({"Flops": "2 * M * N"})")}) << "/Tilescope/Roofline"
        << QStringList{"Flops needs Compute (float, tf32, half, bfloat16, float8 or int8)"};
    QTest::newRow("roofline: unknown compute")
        << patch({addOp("/Tilescope/Roofline", R"({"Flops": "2 * M * N", "Compute": "fp64"})")})
        << "/Tilescope/Roofline/Compute"
        << QStringList{"Compute 'fp64' is not one of float, tf32, half, bfloat16, float8, int8"};
    QTest::newRow("roofline: bad expression") << patch({addOp("/Tilescope/Roofline", R"({"Bytes": "4 * (M + "})")})
                                              << "/Tilescope/Roofline/Bytes" << QStringList{"4 * (M + "};
    QTest::newRow("roofline: unknown name") << patch({addOp("/Tilescope/Roofline", R"({"Bytes": "4 * Q"})")})
                                            << "/Tilescope/Roofline/Bytes" << QStringList{"'Q'"};
    QTest::newRow("objective: scale") << patch({replaceOp("/Tilescope/Objective/Scale", "0")})
                                      << "/Tilescope/Objective/Scale" << QStringList{"Scale must be positive"};

    // Cross references and files.
    QTest::newRow("reference: unknown target")
        << patch({addOp(ks + "/ReferenceArguments",
                        R"([{"Name": "C_ref", "TargetName": "D", "FillType": "Constant", "FillValue": 0}])")})
        << QString::fromStdString(ks + "/ReferenceArguments/0/TargetName")
        << QStringList{"TargetName 'D' is not the name of an argument (expected one of C, m)"};
    QTest::newRow("argument: duplicate name")
        << patch({replaceOp(ks + "/Arguments/1/Name", "\"C\"")}) << QString::fromStdString(ks + "/Arguments/1/Name")
        << QStringList{"duplicate argument name 'C'"};
    const std::string map = ks + "/Arguments/-";
    QTest::newRow("tensor map: on a Vector")
        << patch({addOp(ks + "/Arguments/0/TensorMap", R"({"Tensor": "C", "Dims": ["N"], "Box": [8]})")})
        << QString::fromStdString(ks + "/Arguments/0/TensorMap") << QStringList{"TensorMap is for Scalar arguments"};
    QTest::newRow("tensor map: unknown tensor")
        << patch({addOp(map, R"({"Name": "t", "Type": "float", "MemoryType": "Scalar",
                                 "TensorMap": {"Tensor": "D", "Dims": ["N"], "Box": [8]}})")})
        << QString::fromStdString(ks + "/Arguments/2/TensorMap/Tensor")
        << QStringList{"'D' is not the name of an argument"};
    QTest::newRow("tensor map: of a Scalar")
        << patch({addOp(map, R"({"Name": "t", "Type": "int32", "MemoryType": "Scalar",
                                 "TensorMap": {"Tensor": "m", "Dims": ["N"], "Box": [8]}})")})
        << QString::fromStdString(ks + "/Arguments/2/TensorMap/Tensor")
        << QStringList{"'m' is a Scalar argument; a tensor map maps a Vector argument's buffer"};
    QTest::newRow("tensor map: type differs")
        << patch({addOp(map, R"({"Name": "t", "Type": "half", "MemoryType": "Scalar",
                                 "TensorMap": {"Tensor": "C", "Dims": ["N"], "Box": [8]}})")})
        << QString::fromStdString(ks + "/Arguments/2/Type")
        << QStringList{"a tensor map's Type is its tensor's ('C' is float, this is half)"};
    QTest::newRow("tensor map: box and dims differ")
        << patch({addOp(map, R"({"Name": "t", "Type": "float", "MemoryType": "Scalar",
                                 "TensorMap": {"Tensor": "C", "Dims": ["N", "M"], "Box": [8]}})")})
        << QString::fromStdString(ks + "/Arguments/2/TensorMap/Box") << QStringList{"Box has 1 entries and Dims 2"};
    QTest::newRow("tensor map: six dimensions")
        << patch({addOp(map, R"({"Name": "t", "Type": "float", "MemoryType": "Scalar",
                                 "TensorMap": {"Tensor": "C", "Dims": [1, 1, 1, 1, 1, 1], "Box": [1]}})")})
        << QString::fromStdString(ks + "/Arguments/2/TensorMap/Dims") << QStringList{"1 to 5 entries"};
    QTest::newRow("tensor map: swizzle") << patch({addOp(map, R"({"Name": "t", "Type": "float", "MemoryType": "Scalar",
                                 "TensorMap": {"Tensor": "C", "Dims": ["N"], "Box": [8], "Swizzle": 100}})")})
                                         << QString::fromStdString(ks + "/Arguments/2/TensorMap/Swizzle")
                                         << QStringList{"Swizzle is 0, 32, 64 or 128 (bytes), got 100"};
    QTest::newRow("tensor map: unknown name in an extent")
        << patch({addOp(map, R"({"Name": "t", "Type": "float", "MemoryType": "Scalar",
                                 "TensorMap": {"Tensor": "C", "Dims": ["Q"], "Box": [8]}})")})
        << QString::fromStdString(ks + "/Arguments/2/TensorMap/Dims/0") << QStringList{"Q"};
    QTest::newRow("kernel file missing") << patch({replaceOp(ks + "/KernelFile", "\"sgemm.cu\"")})
                                         << QString::fromStdString(ks + "/KernelFile")
                                         << QStringList{"kernel file 'sgemm.cu' not found (looked in %DIR%)"};
    QTest::newRow("kernel file is a folder")
        << patch({replaceOp(ks + "/KernelFile", "\"sub\"")}) << QString::fromStdString(ks + "/KernelFile")
        << QStringList{"is not a regular file"};
    QTest::newRow("kernel file empty") << patch({replaceOp(ks + "/KernelFile", "\"\"")})
                                       << QString::fromStdString(ks + "/KernelFile") << QStringList{"empty KernelFile"};
}

void TestSpec::malformed() {
    QFETCH(QByteArray, input);
    QFETCH(QString, location);
    QFETCH(QStringList, phrases);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    writeFile(dir.filePath("gemm.cu"), "// kernel\n");
    QVERIFY(QDir(dir.path()).mkdir("sub"));

    QByteArray text = input;
    if (input.startsWith('[') && input.contains("\"op\"")) {
        // The base must load, or the row tests nothing.
        writeFile(dir.filePath("base.json"), kBase);
        TuningProblem::load(dir.filePath("base.json").toStdString());
        text = QByteArray::fromStdString(Json::parse(kBase).patch(Json::parse(input.toStdString())).dump(2));
    }
    const QString path = dir.filePath("problem.json");
    writeFile(path, text);

    // What only compiling or launching the kernel needs (its file, its language, the launch
    // expressions) loads, and stops requireLaunchable() instead.
    static const QRegularExpression launchField(
        "^/KernelSpecification/(KernelFile|Language|GlobalSize/.|LocalSize/.|GridDiv./\\d+|SharedMemory|"
        "Arguments/\\d+/(Size|Value|TensorMap/(Dims|Box)/\\d+))$");
    std::string what;
    try {
        const TuningProblem problem = TuningProblem::load(path.toStdString());
        if (!launchField.match(location).hasMatch())
            QFAIL(qPrintable("loaded without an error:\n" + QString::fromUtf8(text)));
        QVERIFY(!problem.launchBlockers.empty());
        problem.requireLaunchable();
        QFAIL("no launch blocker");
    } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.file()), path);
        QCOMPARE(QString::fromStdString(e.location()), location);
        const QString message = QString::fromStdString(e.message());
        for (QString phrase : phrases) {
            phrase.replace("%DIR%", dir.path());
            QVERIFY2(message.contains(phrase), qPrintable("'" + phrase + "' not in: " + message));
        }
        // what() has it all, for programs that print it.
        QVERIFY(QString::fromUtf8(e.what()).startsWith(path + ": "));
    }
}

void TestSpec::loadErrors() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string missing = dir.filePath("missing.json").toStdString();
    try {
        TuningProblem::load(missing);
        QFAIL("loaded a missing file");
    } catch (const InputError& e) {
        QCOMPARE(e.file(), missing);
        QCOMPARE(e.location(), "");
        QVERIFY2(e.message().find("cannot open the file") != std::string::npos, e.what());
    }
    try {
        TuningProblem::load(dir.path().toStdString());
        QFAIL("loaded a folder");
    } catch (const InputError& e) {
        QVERIFY2(e.message().find("folder") != std::string::npos, e.what());
    }
    // parse() names the file it was given.
    const Outcome o = tryParse("{", "given.json");
    QVERIFY(o.inputError);
    QCOMPARE(o.file, "given.json");
    QCOMPARE(o.location, "line 1, column 2");
}

void TestSpec::saveError() {
    const TuningProblem p = TuningProblem::load(specData("rich.json"));
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("no/such/folder/p.json").toStdString();
    try {
        p.save(path);
        QFAIL("saved into a missing folder");
    } catch (const InputError& e) {
        QCOMPARE(e.file(), path);
        QVERIFY2(e.message().find("cannot write") != std::string::npos, e.what());
    }
}

void TestSpec::neverCrashOnCorruptedFields() {
    // Every field of the rich problem, replaced by every kind of JSON value, removed, or given an
    // extra member: load either succeeds or throws InputError, nothing else.
    QFile f(QString::fromStdString(specData("rich.json").string()));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const Json rich = Json::parse(f.readAll().toStdString());
    std::vector<std::string> pointers;
    collectPointers(rich, "", pointers);
    const std::vector<Json> replacements = {Json(nullptr),
                                            Json(true),
                                            Json(0),
                                            Json(-1),
                                            Json(1e300),
                                            Json(std::uint64_t(1) << 63),
                                            Json(""),
                                            Json("[]"),
                                            Json("range(-5)"),
                                            Json("1/0"),
                                            Json("x" + std::string(300, '(')),
                                            Json::array(),
                                            Json::object(),
                                            Json::array({Json::object()})};
    int errors = 0, loaded = 0;
    for (const std::string& ptr : pointers) {
        std::vector<Json> variants;
        for (const Json& r : replacements) {
            Json v = rich;
            v[Json::json_pointer(ptr)] = r;
            variants.push_back(std::move(v));
        }
        if (!ptr.empty()) {
            Json v = rich;
            v.patch_inplace(Json::array({Json{{"op", "remove"}, {"path", ptr}}}));
            variants.push_back(std::move(v));
        }
        for (const Json& v : variants) {
            const Outcome o = tryParse(v.dump(), "corrupt.json", specData(""));
            QVERIFY2(o.other.empty(), qPrintable(QString::fromStdString(ptr + ": " + o.other)));
            if (o.inputError) {
                ++errors;
                QVERIFY2(!o.message.empty(), ptr.c_str());
            } else {
                ++loaded;
            }
        }
    }
    QVERIFY(errors > 500);
    QVERIFY(loaded > 10);
}

void TestSpec::neverCrashOnMangledText() {
    QFile f(QString::fromStdString(specData("rich.json").string()));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const std::string text = f.readAll().toStdString();
    // Every prefix short of the whole object, then random byte edits (fixed seed: a failure reproduces).
    const std::size_t objectEnd = text.rfind('}');
    for (std::size_t n = 0; n < objectEnd; n += 7) {
        const Outcome o = tryParse(text.substr(0, n), "prefix.json", specData(""));
        QVERIFY2(o.other.empty(), o.other.c_str());
        QVERIFY(o.inputError);
    }
    std::mt19937 rng(12345);
    const std::string alphabet = "{}[]\",:0123456789.eE-+ truefalsnul\\/\n\x80\xff";
    for (int round = 0; round < 3000; ++round) {
        std::string t = text;
        const int edits = 1 + static_cast<int>(rng() % 4);
        for (int e = 0; e < edits; ++e) {
            const std::size_t at = rng() % t.size();
            switch (rng() % 3) {
            case 0:
                t[at] = alphabet[rng() % alphabet.size()];
                break;
            case 1:
                t.erase(at, 1 + rng() % 8);
                break;
            default:
                t.insert(at, 1, alphabet[rng() % alphabet.size()]);
                break;
            }
        }
        const Outcome o = tryParse(t, "mangled.json", specData(""));
        QVERIFY2(o.other.empty(), qPrintable(QString::fromStdString(o.other + "\n" + t)));
    }
}

QTEST_GUILESS_MAIN(TestSpec)
// "default" and "bank-conflicts" stand for sets; names are kept once, in order; "none" alone is none.
void TestSpec::metricSets() {
    const std::vector<std::string> plain = expandMetricNames({"default"});
    QCOMPARE(plain, defaultMetricNames());
    QCOMPARE(plain.size(), std::size_t(7));
    const std::vector<std::string> both = expandMetricNames({"default", "bank-conflicts", "dram__bytes_read.sum"});
    QCOMPARE(both.size(), std::size_t(9));
    QCOMPARE(both[7], std::string("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"));
    QCOMPARE(both[8], std::string("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"));
    QCOMPARE(metricLabel(both[7]), std::string("shared load bank conflicts"));
    QCOMPARE(expandMetricNames({"bank-conflicts"}).size(), std::size_t(2));
    QVERIFY(expandMetricNames({"none"}).empty());
    QCOMPARE(expandMetricNames({"x.sum", "default"}).front(), std::string("x.sum"));
    // "all-configs" asks for every config's counters and names none: alone, the default set.
    QCOMPARE(expandMetricNames({"all-configs"}), defaultMetricNames());
    QCOMPARE(expandMetricNames({"bank-conflicts", "all-configs"}).size(), std::size_t(2));
    QVERIFY(wantsEveryConfigProfiled({"default", "all-configs"}));
    QVERIFY(!wantsEveryConfigProfiled({"default"}));
    QCOMPARE(cuptiMetricNames({"all-configs", "energy"}), std::vector<std::string>{});
    // The GPU's state is NVML's, read after the samples: never a CUPTI metric.
    QVERIFY(wantsGpuState({"default", "gpu-state"}));
    QVERIFY(!wantsGpuState({"default"}));
    QCOMPARE(cuptiMetricNames({"gpu-state", "energy", "x.sum"}), std::vector<std::string>{"x.sum"});
    std::vector<Metric> metrics{{"energy", 0.5}};
    appendGpuStateMetrics(DeviceState{1980, 2619, 41, 0, 0, 0}, metrics);
    QCOMPARE(metrics.size(), std::size_t(4));
    QCOMPARE(metrics[1], (Metric{kSmClockMetric, 1980}));
    QCOMPARE(metrics[3], (Metric{kTemperatureMetric, 41}));
    appendGpuStateMetrics(DeviceState{}, metrics); // NVML read nothing: nothing kept
    QCOMPARE(metrics.size(), std::size_t(4));
    QCOMPARE(metricLabel(kTemperatureMetric), std::string("temperature C"));
}

#include "tst_spec.moc"
