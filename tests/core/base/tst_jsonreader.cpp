// core/base's JSON reading (jsonreader.h, jsonwords.h): every error says where as an editor
// shows it (line and column, columns in characters) or as a JSON pointer, names what JSON lacks
// (NaN, Infinity) and what a file may not do (nest too deep, name a key twice), and a node's
// checks name the field and what it held.

#include "base/error.h"
#include "base/jsonreader.h"
#include "base/jsonwords.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>

using namespace tilescope;
using Json = nlohmann::ordered_json;

namespace {

// The InputError parseJson throws for `text`, as "location|message"; "" when it parses.
QString parseError(const std::string& text, JsonReadOptions options = {}) {
    try {
        parseJson(text, "f.json", options);
    } catch (const InputError& e) {
        if (e.file() != "f.json")
            return "wrong file: " + QString::fromStdString(e.file());
        return QString::fromStdString(e.location() + "|" + e.message());
    }
    return {};
}

// The InputError a node's check throws, as "pointer|message"; "" when it passes.
template <typename Check>
QString nodeError(Check check) {
    try {
        check();
    } catch (const InputError& e) {
        return QString::fromStdString(e.location() + "|" + e.message());
    }
    return {};
}

} // namespace

class TestJsonReader : public QObject {
    Q_OBJECT

private slots:
    void lineColumnCountsCharacters();
    void nonFiniteWords();
    void parsesWhatJsonHolds();
    void errorsSayWhere_data();
    void errorsSayWhere();
    void depthLimit();
    void duplicateKeys();
    void wideIntegers();
    void tryParseNeverThrows();
    void pointerTokens();
    void describeAndShow();
    void nodeChecksNameTheField();
    void integralReadings();
};

void TestJsonReader::lineColumnCountsCharacters() {
    QCOMPARE(lineColumnAt("abc", 0), std::string("line 1, column 1"));
    QCOMPARE(lineColumnAt("abc\ndef", 5), std::string("line 2, column 2"));
    // "é" is two bytes, one character: the byte after it is column 2.
    QCOMPARE(lineColumnAt("\xc3\xa9x", 2), std::string("line 1, column 2"));
    // Past the end: the end.
    QCOMPARE(lineColumnAt("a\n", 99), std::string("line 2, column 1"));
}

void TestJsonReader::nonFiniteWords() {
    const std::string text = R"({"a": -Infinity, "b": NaN, "c": nope})";
    const auto minus = nonFiniteWordAt(text, text.find("Infinity") + 3);
    QCOMPARE(std::string(minus.second), std::string("-Infinity"));
    QCOMPARE(minus.first, text.find("-Infinity"));
    QCOMPARE(std::string(nonFiniteWordAt(text, text.find("NaN")).second), std::string("NaN"));
    QVERIFY(nonFiniteWordAt(text, text.find("nope")).second.empty());
}

void TestJsonReader::parsesWhatJsonHolds() {
    const Json j = parseJson(R"({"b": [1, 2.5, "x", null, true], "a": {"c": -3}})", "f.json");
    QCOMPARE(j.begin().key(), std::string("b")); // keys keep the file's order
    QCOMPARE(j["b"].size(), std::size_t(5));
    QCOMPARE(j["a"]["c"].get<int>(), -3);
}

void TestJsonReader::errorsSayWhere_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected"); // "location|start of the message"
    QTest::newRow("empty") << "" << "|the file is empty";
    QTest::newRow("white space") << " \n\t" << "|the file holds only white space";
    QTest::newRow("NaN") << "{\n  \"a\": NaN\n}" << "line 2, column 8|NaN is not JSON";
    QTest::newRow("-Infinity") << "[1, -Infinity]" << "line 1, column 5|-Infinity is not JSON";
    QTest::newRow("huge number") << "{\"a\":\n 1e400}" << "line 2, column 2|the number 1e400 is too large";
    QTest::newRow("truncated") << "{\"a\": [1, 2" << "|the JSON ends early";
    QTest::newRow("bad token") << "{\"a\": 1,\n \"b\": tru }" << "line 2, column";
    QTest::newRow("trailing comma") << "[1, 2,]" << "line 1, column 7|bad JSON";
}

void TestJsonReader::errorsSayWhere() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const QString error = parseError(text.toStdString());
    QVERIFY2(!error.isEmpty(), "parsed");
    const QString location = expected.section('|', 0, 0);
    const QString message = expected.section('|', 1);
    QVERIFY2(error.startsWith(location), qPrintable(error));
    QVERIFY2(error.section('|', 1).startsWith(message), qPrintable(error));
}

void TestJsonReader::depthLimit() {
    const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
    QVERIFY(parseJson(nested(kMaxJsonDepth), "f.json").is_array());
    const QString error = parseError(nested(kMaxJsonDepth + 1));
    QVERIFY2(error.contains("nested more than 128 levels"), qPrintable(error));
    // Where the first level too deep opens.
    QVERIFY2(error.startsWith("line 1, column 129|"), qPrintable(error));
    // A million levels: refused without exhausting the stack.
    QVERIFY(parseError(nested(1000000)).contains("nested more than"));
}

void TestJsonReader::duplicateKeys() {
    const std::string text = R"({"a": {"k": 1, "k": 2}})";
    // Recordings that tools append to keep the last.
    QCOMPARE(parseJson(text, "f.json")["a"]["k"].get<int>(), 2);
    // Files people write refuse it, naming the second by its pointer.
    const QString error = parseError(text, JsonReadOptions{.rejectDuplicateKeys = true});
    QVERIFY2(error.startsWith("/a/k|duplicate key 'k'"), qPrintable(error));
    QVERIFY(parseError(R"({"a": 1, "b": {"a": 2}})", JsonReadOptions{.rejectDuplicateKeys = true}).isEmpty());
}

void TestJsonReader::wideIntegers() {
    // An integer past 64 bits reads as the nearest double unless refused (recordings refuse it,
    // naming it by its pointer); the ends of 64 bits, and floats of any size, are values.
    const std::string text = R"({"cache": {"1,2": {"x": [1, 1180591620717411303424]}}})";
    QCOMPARE(parseJson(text, "f.json")["cache"]["1,2"]["x"][1].get<double>(), 1180591620717411303424.0);
    const JsonReadOptions refuse{.rejectWideIntegers = true};
    QString error = parseError(text, refuse);
    QVERIFY2(error.startsWith("/cache/1,2/x/1|the integer 1180591620717411303424 does not fit 64 bits"),
             qPrintable(error));
    error = parseError("-9223372036854775809", refuse);
    QVERIFY2(error.startsWith("|the integer -9223372036854775809 does not fit 64 bits"), qPrintable(error));
    error = parseError(R"({"a": 1, "b": )" + std::string(60, '9') + "}", refuse);
    QVERIFY2(error.startsWith("/b|the integer 9999999999999999999999999999999999999... does not fit"),
             qPrintable(error));
    for (const char* fine :
         {"18446744073709551615", "-9223372036854775808", "1e21", "1180591620717411303424.0", R"({"a": 1, "a": 2})"})
        QVERIFY2(parseError(fine, refuse).isEmpty(), fine);
}

void TestJsonReader::tryParseNeverThrows() {
    QVERIFY(tryParseJson("{\"a\": 1}").is_object());
    QVERIFY(tryParseJson("{\"a\": ").is_discarded());
    QVERIFY(tryParseJson("").is_discarded());
    QVERIFY(tryParseJson(std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']')).is_discarded());
}

void TestJsonReader::pointerTokens() {
    QCOMPARE(escapePointerToken("a/b~c"), std::string("a~1b~0c"));
    const Json doc = parseJson(R"({"x/y": [{"~": 1}]})", "f.json");
    const JsonNode leaf = JsonNode(doc, "f.json").required("x/y").item(0).required("~");
    QCOMPARE(leaf.pointer(), std::string("/x~1y/0/~0"));
    QCOMPARE(leaf.asInt(), std::int64_t(1));
}

void TestJsonReader::describeAndShow() {
    QCOMPARE(std::string(describeJson(Json())), std::string("null"));
    QCOMPARE(std::string(describeJson(Json::array())), std::string("an array"));
    QCOMPARE(std::string(describeJson(Json(1.5))), std::string("a number"));
    QCOMPARE(showJson(Json("short")), std::string("\"short\""));
    QCOMPARE(showJson(Json::object()), std::string("an object"));
    const std::string shown = showJson(Json(std::string(100, 'x')));
    QCOMPARE(shown.size(), std::size_t(40));
    QVERIFY(shown.ends_with("..."));
}

void TestJsonReader::nodeChecksNameTheField() {
    const std::string file = "f.json";
    const Json doc = parseJson(R"({"Name": "k", "list": [1, "two"], "kind": "odd", "flag": 1})", file);
    const JsonNode root(doc, file);
    QCOMPARE(nodeError([&] { root.required("name"); }),
             QString("|missing required field 'name' (found 'Name'; field names are case-sensitive)"));
    QCOMPARE(nodeError([&] { root.required("absent"); }), QString("|missing required field 'absent'"));
    QCOMPARE(nodeError([&] { root.required("list").asStringArray(); }),
             QString("/list/0|expected a string, got a number"));
    static constexpr std::array<const char*, 2> kKinds = {"even", "prime"};
    QCOMPARE(nodeError([&] { root.required("kind").asEnum("Kind", kKinds); }),
             QString("/kind|unknown Kind 'odd' (expected one of even, prime)"));
    QCOMPARE(nodeError([&] { root.required("flag").asBool(); }), QString("/flag|expected true or false, got a number"));
    QCOMPARE(nodeError([&] { root.required("list").expectObject(); }), QString("/list|expected an object, got an array"));
    QVERIFY(!root.member("absent").has_value());
    QCOMPARE(root.member("Name")->asString(), std::string("k"));
    QCOMPARE(root.member("Name")->fileName(), file);
}

void TestJsonReader::integralReadings() {
    const std::string file = "f.json";
    const Json doc = parseJson(
        R"({"count": 1e3, "half": 1.5, "big": 18446744073709551615, "neg": -4, "none": null, "huge": 1e19})", file);
    const JsonNode root(doc, file);
    // Python tools may write counts as 1e3 or 1000.0.
    QCOMPARE(root.required("count").asIntegralIn(0, 10000), std::int64_t(1000));
    QCOMPARE(nodeError([&] { root.required("count").asIntegralIn(0, 999); }),
             QString("/count|expected an integer from 0 to 999, got 1000.0"));
    QCOMPARE(nodeError([&] { root.required("half").asIntegralIn(0, INT64_MAX); }),
             QString("/half|expected an integer of at least 0, got 1.5"));
    QCOMPARE(nodeError([&] { root.required("huge").asIntegralIn(INT64_MIN, INT64_MAX); }),
             QString("/huge|expected a 64-bit integer, got 1e+19"));
    QCOMPARE(nodeError([&] { root.required("half").asInt(); }), QString("/half|expected an integer, got 1.5"));
    QCOMPARE(nodeError([&] { root.required("big").asInt(); }),
             QString("/big|integer 18446744073709551615 is out of range (more than 64 bits)"));
    QCOMPARE(root.required("neg").asInt(), std::int64_t(-4));
    QVERIFY(!root.integralMember("none", 0, 10).has_value());
    QVERIFY(!root.integralMember("absent", 0, 10).has_value());
    QCOMPARE(root.integralMember("neg", -10, 10), std::optional<std::int64_t>(-4));
}

QTEST_GUILESS_MAIN(TestJsonReader)
#include "tst_jsonreader.moc"
