// Hostile input for the parsers: expressions nested past any stack, T1 problems, T4 results and
// Kernel Tuner caches with wrong types, numbers out of range, NaN and Infinity tokens and deep
// nesting, and gzip files that are bombs, multi-member, empty, truncated or damaged. Each must
// end in an InputError that names the file and the place (a JSON pointer, a line and column, a
// byte, an expression's column), and the CLI must print it and exit with status 2 without
// writing anything: never a crash, undefined behaviour, a hang or an "internal error".
//
// The hostile files are made here, in temporary folders; none is kept in the repository.

#include "base/error.h"
#include "exchange/detection.h"
#include "exchange/kerneltunercache.h"
#include "exchange/recording.h"
#include "exchange/t4.h"
#include "exchange/textfile.h"
#include "expr/expr.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"

#include "clirun.h"

#include <QElapsedTimer>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

using namespace tilescope;

namespace {

std::string repeat(const std::string& piece, int times) {
    std::string out;
    out.reserve(piece.size() * static_cast<std::size_t>(times));
    for (int i = 0; i < times; ++i)
        out += piece;
    return out;
}

void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// One gzip member of `text`.
std::string gzipped(const std::string& text) {
    z_stream s{};
    if (deflateInit2(&s, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        return {};
    std::string out(deflateBound(&s, static_cast<uLong>(text.size())), '\0');
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    s.avail_in = static_cast<uInt>(text.size());
    s.next_out = reinterpret_cast<Bytef*>(out.data());
    s.avail_out = static_cast<uInt>(out.size());
    deflate(&s, Z_FINISH);
    out.resize(s.total_out);
    deflateEnd(&s);
    return out;
}

template <typename F>
std::optional<InputError> inputErrorOf(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e;
    }
    return std::nullopt;
}

// ---- T1 ----

// A small valid problem; `overrides` replace its raw JSON pieces by name.
std::string t1Problem(const std::map<std::string, std::string>& overrides = {}) {
    std::map<std::string, std::string> piece = {
        {"VALUES", R"("[1, 2, 4]")"},
        {"CONDITION", R"("x > 1")"},
        {"M", "64"},
        {"SIZE", "1024"},
        {"FILL", "1.5"},
        {"BUDGET_TYPE", R"("ConfigurationCount")"},
        {"BUDGET", "10"},
        {"PARAMETERS", R"([{"Name": "x", "Type": "int", "Values": @VALUES@}])"},
    };
    for (const auto& [key, value] : overrides)
        piece[key] = value;
    std::string text = R"({"ConfigurationSpace": {"TuningParameters": @PARAMETERS@,
  "Conditions": [{"Parameters": ["x"], "Expression": @CONDITION@}]},
 "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
  "Arguments": [{"Name": "a", "Type": "float", "MemoryType": "Vector", "Size": @SIZE@, "FillType": "Constant",
                 "FillValue": @FILL@}]},
 "Budget": [{"Type": @BUDGET_TYPE@, "BudgetValue": @BUDGET@}],
 "Tilescope": {"Shapes": [{"M": @M@}]}}
)";
    for (int round = 0; round < 2; ++round) // PARAMETERS holds @VALUES@
        for (const auto& [key, value] : piece)
            for (std::size_t at; (at = text.find("@" + key + "@")) != std::string::npos;)
                text.replace(at, key.size() + 2, value);
    return text;
}

std::string quotedJson(const std::string& s) {
    return nlohmann::json(s).dump();
}

// ---- T4 and Kernel Tuner caches ----

std::string t4(const std::string& configuration = R"({"x": 1})", const std::string& resultExtra = "",
               const std::string& topExtra = "") {
    return R"({"schema_version": "1.0.0", "results": [{"configuration": )" + configuration +
           R"(, "times": {"runtimes": [1.0, 1.5]}, "invalidity": "correct", "correctness": 1)" + resultExtra + "}]" +
           topExtra + "}\n";
}

std::string ktCache(const std::string& entry = R"({"x": 1, "time": 1.25})", const std::string& problemSize = "[1024]",
                    const std::string& extra = "") {
    return R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"], "problem_size": )" + problemSize +
           extra + R"(, "cache": {"1": )" + entry + "}}\n";
}

} // namespace

class TestHostileParsers : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    std::string path(const std::string& name) const {
        return m_dir.filePath(QString::fromStdString(name)).toStdString();
    }

    // The CLI refuses `file` with status 2, naming it and `location`, writing nothing to stdout.
    void expectCliRefuses(const QStringList& args, const std::string& file, const std::string& location,
                          const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(TILESCOPE_CLI), args);
        QVERIFY2(p.waitForFinished(120000), "the CLI hung");
        const QString err = QString::fromUtf8(p.readAllStandardError());
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        const QString what = args.join(' ') + "\nstderr: " + err.left(2000);
        QVERIFY2(p.exitStatus() == QProcess::NormalExit, qPrintable("crashed: " + what));
        QVERIFY2(p.exitCode() == 2, qPrintable("status " + QString::number(p.exitCode()) + ": " + what));
        // As InputError composes it: "FILE: LOCATION: message", each part when there is one.
        const QString prefix = "error: " + (file.empty() ? QString() : QString::fromStdString(file) + ": ") +
                               QString::fromStdString(location);
        QVERIFY2(err.startsWith(prefix), qPrintable("expected it to start with " + prefix + "\n" + what));
        QVERIFY2(!err.contains("internal error"), qPrintable(what));
        QVERIFY2(err.size() < 2000, qPrintable("a message of " + QString::number(err.size()) + " characters"));
        QVERIFY2(out.isEmpty(), qPrintable("stdout: " + out.left(500)));
    }

    // `show` and `import` refuse the recording; `import` creates no database.
    void expectRecordingRefused(const std::string& file, const std::string& location,
                                const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
        expectCliRefuses({"show", QString::fromStdString(file)}, file, location, env);
        const std::string db = path("refused.db");
        std::filesystem::remove(db);
        expectCliRefuses({"import", QString::fromStdString(file), "--db", QString::fromStdString(db)}, file, location,
                         env);
        QVERIFY2(!std::filesystem::exists(db), "import created the database for a file it refused");
        const std::string csv = path("refused.csv");
        std::filesystem::remove(csv);
        expectCliRefuses({"export", QString::fromStdString(file), "--format", "csv", "-o", QString::fromStdString(csv)},
                         file, location, env);
        QVERIFY2(!std::filesystem::exists(csv), "export wrote a file for a recording it refused");
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    // ---- expressions ----

    void expressionNesting_data() {
        QTest::addColumn<QByteArray>("source");
        QTest::addColumn<QString>("message");
        QTest::addColumn<int>("column");
        const int n = 100000;
        const QString nested = QStringLiteral("too deeply nested");
        const QString deep = QStringLiteral("expression too deep");
        QTest::newRow("parentheses") << QByteArray::fromStdString(repeat("(", n) + "x" + repeat(")", n)) << nested
                                     << 257;
        QTest::newRow("unary minus") << QByteArray::fromStdString(repeat("-", n) + "x") << nested << 256;
        QTest::newRow("unary plus and invert") << QByteArray::fromStdString(repeat("+~", n) + "x") << nested << 256;
        QTest::newRow("not") << QByteArray::fromStdString(repeat("not ", n) + "x") << nested << 1021;
        QTest::newRow("list brackets") << QByteArray::fromStdString("x in " + repeat("[", n) + "1" + repeat("]", n))
                                       << nested << 262;
        QTest::newRow("power chain") << QByteArray::fromStdString("x" + repeat("**x", n)) << nested << 767;
        QTest::newRow("conditional chain")
            << QByteArray::fromStdString(repeat("x if x else ", n) + "x") << nested << 3073;
        QTest::newRow("call arguments") << QByteArray::fromStdString(repeat("abs(", n) + "x" + repeat(")", n)) << nested
                                        << 1025;
        QTest::newRow("subscript indices")
            << QByteArray::fromStdString(repeat("[1][", n) + "0" + repeat("]", n)) << nested << -1;
        // Chains the parser reads in a loop, whose trees the compiler and evaluator walk.
        QTest::newRow("sum chain") << QByteArray::fromStdString("x" + repeat(" + x", n) + " > 0") << deep << -1;
        QTest::newRow("comparison of products")
            << QByteArray::fromStdString("x" + repeat("*x", n) + " < x") << deep << -1;
        QTest::newRow("subscript chain") << QByteArray::fromStdString("[1]" + repeat("[0]", n) + " + x") << deep << -1;
        QTest::newRow("comprehension clauses")
            << QByteArray::fromStdString("len([1 " + repeat("for a in [x] ", n) + "])") << deep << -1;
        QTest::newRow("comprehension ifs")
            << QByteArray::fromStdString("len([1 for a in [x] " + repeat("if a ", n) + "])") << deep << -1;
    }

    void expressionNesting() {
        QFETCH(QByteArray, source);
        QFETCH(QString, message);
        QFETCH(int, column);
        expr::Scope scope;
        scope.addVariable("x");
        try {
            expr::Expression::compile(source.toStdString(), scope);
            QFAIL("compiled");
        } catch (const expr::ExprError& e) {
            QCOMPARE(e.kind(), expr::ErrorKind::Syntax);
            QVERIFY2(QString::fromStdString(e.message()).contains(message), e.message().c_str());
            if (column > 0)
                QCOMPARE(e.column(), column);
            QVERIFY(e.column() >= 1 && e.column() <= source.size());
            // The message quotes the place, not 200,000 characters.
            QVERIFY2(std::string(e.what()).size() < 600, e.message().c_str());
        }
        // The editor colours what it is given, whatever its depth.
        QVERIFY(!expr::lexemes(source.toStdString()).empty());
    }

    void expressionNestingWithinLimits() {
        // Deep but legal: every recursion (parser, folding, code generation, the tree walk,
        // destruction) goes there and back.
        expr::Scope scope;
        scope.addVariable("x");
        const expr::Value x = expr::Value::ofInt(1);
        const auto value = [&](const std::string& source) {
            return expr::Expression::compile(source, scope).evaluateInt(&x);
        };
        QCOMPARE(value(repeat("(", 250) + "x" + repeat(")", 250)), 1);
        QCOMPARE(value(repeat("-", 250) + "x"), 1);
        QCOMPARE(value(repeat("-", 251) + "x"), -1);
        QCOMPARE(value(repeat("not ", 250) + "x"), 1);
        QCOMPARE(value("x" + repeat(" + x", 1000)), 1001);
        // A chain is as long as the height allows, to the operation: 1023 additions make a tree
        // 1024 high, the limit; one more is refused.
        QCOMPARE(value("x" + repeat(" + x", 1023)), 1024);
        QVERIFY_THROWS_EXCEPTION(expr::ExprError, value("x" + repeat(" + x", 1024)));
        QCOMPARE(value(repeat("x if x else ", 250) + "x"), 1);
        QCOMPARE(value(repeat("abs(", 250) + "x" + repeat(")", 250)), 1);
        QCOMPARE(value("x in " + repeat("[", 250) + "1" + repeat("]", 250)), 0);
        // A comprehension over a variable is walked as a tree at each evaluation.
        QCOMPARE(value("len([t for t in (x, x) if t" + repeat(" + t", 1000) + " > 0])"), 2);
        QCOMPARE(value("len([1 " + repeat("for a in [x] ", 1000) + "])"), 1);
        // A comprehension's clauses are counted as they are read: the 1025th is refused at its own
        // column, before the tree is built (1024 are read, then refused as a whole for the height).
        const auto refusedAt = [&](int clauses) {
            try {
                value("len([1 " + repeat("for a in [x] ", clauses) + "])");
            } catch (const expr::ExprError& e) {
                return e.column();
            }
            return 0;
        };
        QCOMPARE(refusedAt(1025), static_cast<int>(std::string("len([1 ").size() + 1024 * 13 + 1));
        QCOMPARE(refusedAt(1024), 5);
        // Folded at compile time: the constants' tree is as deep.
        QCOMPARE(value(repeat("(", 250) + "1" + repeat(" + 1", 1000) + repeat(")", 250)), 1001);
        // A value list nested as deep as allowed is refused for being a list of lists, not for its depth.
        std::vector<std::unique_ptr<std::string>> strings;
        try {
            expr::parseValueList(repeat("[", 250) + "1" + repeat("]", 250), strings);
            QFAIL("a nested list was read as values");
        } catch (const expr::ExprError& e) {
            QCOMPARE(e.kind(), expr::ErrorKind::Type);
            QVERIFY2(std::string(e.what()).size() < 600, e.what());
        }
    }

    void valueListNesting() {
        std::vector<std::unique_ptr<std::string>> strings;
        for (const std::string& source : {repeat("[", 100000) + repeat("]", 100000), "[" + repeat("-", 100000) + "1]",
                                          "[x for x in " + repeat("(", 100000) + "[1]" + repeat(")", 100000) + "]"}) {
            try {
                expr::parseValueList(source, strings);
                QFAIL("parsed");
            } catch (const expr::ExprError& e) {
                QCOMPARE(e.kind(), expr::ErrorKind::Syntax);
                QVERIFY2(e.message().find("too deeply nested") != std::string::npos, e.message().c_str());
            }
        }
    }

    // ---- T1 ----

    void t1Hostile_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const std::string& text, const char* location, const char* message) {
            QTest::newRow(name) << QByteArray::fromStdString(text) << QString(location) << QString(message);
        };
        const int n = 100000;
        // Nesting
        row("condition of 100000 parentheses",
            t1Problem({{"CONDITION", quotedJson(repeat("(", n) + "x" + repeat(")", n) + " > 1")}}),
            "/ConfigurationSpace/Conditions/0/Expression", "column 257: SyntaxError: too deeply nested");
        row("condition of 100000 nots", t1Problem({{"CONDITION", quotedJson(repeat("not ", n) + "x")}}),
            "/ConfigurationSpace/Conditions/0/Expression", "SyntaxError: too deeply nested");
        row("condition chain of 100000 sums", t1Problem({{"CONDITION", quotedJson("x" + repeat(" + x", n) + " > 1")}}),
            "/ConfigurationSpace/Conditions/0/Expression", "SyntaxError: expression too deep");
        row("values nested 100000 deep", t1Problem({{"VALUES", quotedJson(repeat("[", n) + "1" + repeat("]", n))}}),
            "/ConfigurationSpace/TuningParameters/0/Values", "too deeply nested");
        row("size expression nested", t1Problem({{"SIZE", quotedJson(repeat("(", n) + "1" + repeat(")", n))}}), "", "");
        row("JSON nested 100000 deep", t1Problem({{"M", repeat("[", n) + repeat("]", n)}}), "line ",
            "nested more than 128 levels deep");
        row("JSON objects nested 100000 deep", t1Problem({{"FILL", repeat(R"({"a":)", n) + "1" + repeat("}", n)}}),
            "line ", "nested more than 128 levels deep");
        // Wrong types
        row("Values a number", t1Problem({{"VALUES", "5"}}), "/ConfigurationSpace/TuningParameters/0/Values",
            "expected a string, got a number");
        row("TuningParameters an object", t1Problem({{"PARAMETERS", "{}"}}), "/ConfigurationSpace/TuningParameters",
            "expected an array, got an object");
        row("shape dimension a string", t1Problem({{"M", R"("64")"}}), "/Tilescope/Shapes/0/M",
            "expected an integer, got a string");
        row("budget value a string", t1Problem({{"BUDGET", R"("10")"}}), "/Budget/0/BudgetValue",
            "expected a number, got a string");
        row("size an array", t1Problem({{"SIZE", "[1]"}}), "/KernelSpecification/Arguments/0/Size",
            "expected an integer or a string, got an array");
        // Huge numbers
        row("shape dimension 1e300", t1Problem({{"M", "1e300"}}), "/Tilescope/Shapes/0/M",
            "expected an integer, got 1e+300");
        row("shape dimension 2^63", t1Problem({{"M", "9223372036854775808"}}), "/Tilescope/Shapes/0/M", "out of range");
        row("shape dimension 2^64", t1Problem({{"M", "18446744073709551616"}}), "/Tilescope/Shapes/0/M",
            "expected an integer");
        row("size 1e30", t1Problem({{"SIZE", "1e30"}}), "/KernelSpecification/Arguments/0/Size",
            "Size must be at most 281,474,976,710,656 elements of 4 bytes (2^50 bytes, more than any device holds), "
            "got 1e+30");
        row("size 2^64", t1Problem({{"SIZE", "18446744073709551615"}}), "/KernelSpecification/Arguments/0/Size",
            "Size must be at most 281,474,976,710,656 elements");
        row("size 2.5", t1Problem({{"SIZE", "2.5"}}), "/KernelSpecification/Arguments/0/Size",
            "expected an integer or a string, got a number");
        // Sizes as expressions: the range of a number in the file, for the shape (and the values
        // of a parameter the size reads).
        row("size -1 as a number", t1Problem({{"SIZE", "-1"}}), "/KernelSpecification/Arguments/0/Size",
            "Size must not be negative, got -1");
        row("size -1 as an expression", t1Problem({{"SIZE", quotedJson("-1")}}),
            "/KernelSpecification/Arguments/0/Size", "Size must not be negative, got -1 (from '-1' for shape M=64)");
        row("size of the shape negative", t1Problem({{"SIZE", quotedJson("1000 - 16 * M")}}),
            "/KernelSpecification/Arguments/0/Size",
            "Size must not be negative, got -24 (from '1000 - 16 * M' for shape M=64)");
        row("size 10**20 as an expression", t1Problem({{"SIZE", quotedJson("10**20")}}),
            "/KernelSpecification/Arguments/0/Size",
            "Size must be at most 281,474,976,710,656 elements of 4 bytes (2^50 bytes, more than any device holds), "
            "got a number past 64 bits (from '10**20' for shape M=64)");
        row("size 2**60 as an expression", t1Problem({{"SIZE", quotedJson("2**60")}}),
            "/KernelSpecification/Arguments/0/Size", "got 1152921504606846976 (from '2**60' for shape M=64)");
        row("size 1e30 as an expression", t1Problem({{"SIZE", quotedJson("1e30")}}),
            "/KernelSpecification/Arguments/0/Size", "got 1e+30 (from '1e30' for shape M=64)");
        row("size of a parameter negative", t1Problem({{"SIZE", quotedJson("1024 * (x - 2)")}}),
            "/KernelSpecification/Arguments/0/Size",
            "Size must not be negative, got -1024 (from '1024 * (x - 2)' for shape M=64 and x=1)");
        row("size of max(parameter) too large", t1Problem({{"SIZE", quotedJson("max(x) * 2**50")}}),
            "/KernelSpecification/Arguments/0/Size", "got 4503599627370496 (from 'max(x) * 2**50' for shape M=64)");
        row("fill value 1e400", t1Problem({{"FILL", "1e400"}}), "line 5, column 31", "the number 1e400 is too large");
        row("configuration count 1e300", t1Problem({{"BUDGET", "1e300"}}), "/Budget/0/BudgetValue",
            "ConfigurationCount is too large");
        row("configuration count 2^64", t1Problem({{"BUDGET", "18446744073709551616"}}), "/Budget/0/BudgetValue",
            "ConfigurationCount is too large");
        row("tuning duration 1e300", t1Problem({{"BUDGET_TYPE", R"("TuningDuration")"}, {"BUDGET", "1e300"}}),
            "/Budget/0/BudgetValue", "TuningDuration is too large");
        row("integer literal past 64 bits", t1Problem({{"CONDITION", quotedJson("x < 99999999999999999999")}}),
            "/ConfigurationSpace/Conditions/0/Expression", "OverflowError");
        // NaN and Infinity
        row("NaN", t1Problem({{"FILL", "NaN"}}), "line 5, column 31", "NaN is not JSON");
        row("Infinity", t1Problem({{"M", "Infinity"}}), "line 7, column 33", "Infinity is not JSON");
        row("-Infinity", t1Problem({{"BUDGET", "-Infinity"}}), "line 6, column 59", "-Infinity is not JSON");
    }

    void t1Hostile() {
        QFETCH(QByteArray, text);
        QFETCH(QString, location);
        QFETCH(QString, message);
        const std::string name = std::string(QTest::currentDataTag()) + ".json";
        const auto error = inputErrorOf([&] { TuningProblem::parse(text.toStdString(), name, {}); });
        if (location.isEmpty() && message.isEmpty()) {
            // A Launch expression: the problem reads, what blocks launching it says why.
            QVERIFY(!error);
            const TuningProblem problem = TuningProblem::parse(text.toStdString(), name, {});
            QVERIFY(!problem.launchBlockers.empty());
            QVERIFY2(std::string(problem.launchBlockers.front().what()).find("too deeply nested") != std::string::npos,
                     problem.launchBlockers.front().what());
            QVERIFY(std::string(problem.launchBlockers.front().what()).size() < 600);
            return;
        }
        QVERIFY2(error, "read without an error");
        QCOMPARE(error->file(), name);
        QVERIFY2(QString::fromStdString(error->location()).startsWith(location), error->what());
        QVERIFY2(QString::fromStdString(error->message()).contains(message), error->what());
        QVERIFY2(std::string(error->what()).size() < 600, "a long message");

        // As a user meets it.
        const std::string file = path(name);
        writeFile(file, text.toStdString());
        expectCliRefuses({"space", "--count", QString::fromStdString(file)}, file, location.toStdString());
    }

    // The issue's sizes, as `space` and `tune --backend analysis` meet them: refused, as the same
    // sizes written as JSON numbers are (exit 2, the field named, nothing written).
    void sizeExpressionsOutOfRange() {
        const std::map<std::string, std::string> sizes = {
            {"minus-one", quotedJson("-1")}, {"ten-to-the-20", quotedJson("10**20")}, {"number", "-1"}};
        for (const auto& [name, size] : sizes) {
            const std::string file = path("size-" + name + ".json");
            writeFile(file, t1Problem({{"SIZE", size}}));
            expectCliRefuses({"space", "--count", QString::fromStdString(file)}, file,
                             "/KernelSpecification/Arguments/0/Size");
            const std::string db = path("size-" + name + ".db");
            expectCliRefuses({"tune", QString::fromStdString(file), "--backend", "analysis:sm_80", "--db",
                              QString::fromStdString(db)},
                             file, "/KernelSpecification/Arguments/0/Size");
            QVERIFY2(!std::filesystem::exists(db), "tune created a database for a problem it refused");
        }
    }

    // The issue's hard count: five parameters of range(1000), one condition over all of them. It
    // ends in seconds with the exact count (bounds on the partial sums cut every prefix past 17).
    void countOverManyParametersEnds() {
        nlohmann::json parameters = nlohmann::json::array();
        for (int p = 0; p < 5; ++p)
            parameters.push_back({{"Name", "P" + std::to_string(p)}, {"Type", "int"}, {"Values", "list(range(1000))"}});
        const std::string file = path("hard-count.json");
        writeFile(file,
                  t1Problem({{"PARAMETERS", parameters.dump()}, {"CONDITION", quotedJson("P0+P1+P2+P3+P4 == 17")}}));
        QProcess p;
        QElapsedTimer timer;
        timer.start();
        p.start(QStringLiteral(TILESCOPE_CLI), {"space", "--count", QString::fromStdString(file)});
        QVERIFY2(p.waitForFinished(60000), "the count did not end");
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(out.startsWith("5,985 valid of 1,000,000,000,000,000 raw configs"), qPrintable(out));
        QVERIFY2(timer.elapsed() < 30000, qPrintable(QString::number(timer.elapsed()) + " ms"));
    }

    // A KernelFile that is no CUDA source never reaches NVRTC (whose log the results keep): the
    // compiling commands refuse it, naming the file and why, and write nothing.
    void kernelFileThatIsNoSource() {
        const std::string dir = path("kernel-file");
        std::filesystem::create_directories(dir);
        std::filesystem::copy_file(TILESCOPE_TEST_DATA "/t1corpus/pnpoly.json", dir + "/problem.json",
                                   std::filesystem::copy_options::overwrite_existing);
        writeFile(dir + "/pnpoly.cu", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/bin/sh\n");
        const std::string file = dir + "/problem.json";
        const std::string db = dir + "/results.db";
        expectCliRefuses({"tune", QString::fromStdString(file), "--backend", "analysis:sm_80", "--db",
                          QString::fromStdString(db), "--budget", "2"},
                         file, "/KernelSpecification/KernelFile");
        QVERIFY(!std::filesystem::exists(db));
        expectCliRefuses({"analyze", QString::fromStdString(file), "--arch", "sm_80"}, file,
                         "/KernelSpecification/KernelFile");
        QProcess p;
        p.start(QStringLiteral(TILESCOPE_CLI), {"analyze", QString::fromStdString(file), "--arch", "sm_80"});
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("has no __global__ function"), qPrintable(err));
        QVERIFY2(!err.contains("root:x"), qPrintable(err));
    }

    // ---- T4 ----

    void t4Hostile_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const std::string& text, const char* location, const char* message) {
            QTest::newRow(name) << QByteArray::fromStdString(text) << QString(location) << QString(message);
        };
        const int n = 100000;
        const char* tooDeep = "nested more than 128 levels deep";
        // Nesting: nlohmann parses any depth, but copying, comparing and dumping recurse.
        row("configuration value nested 100000 deep", t4(R"({"x": )" + repeat("[", n) + repeat("]", n) + "}"),
            "line 1, column 189", tooDeep);
        row("schema_version nested 100000 deep",
            R"({"schema_version": )" + repeat("[", n) + repeat("]", n) + R"(, "results": []})", "line 1, column 147",
            tooDeep);
        row("metadata nested 100000 deep",
            t4(R"({"x": 1})", "", R"(, "metadata": )" + repeat(R"({"a": )", n) + "1" + repeat("}", n)),
            "line 1, column ", tooDeep);
        row("unclosed and nested 100000 deep", R"({"schema_version": "1.0.0", "results": [)" + repeat("[", n),
            "line 1, column ", tooDeep);
        // Wrong types
        row("results an object", R"({"schema_version": "1.0.0", "results": {"a": 1}})", "/results",
            "expected an array of results");
        row("result a number", R"({"schema_version": "1.0.0", "results": [1]})", "/results/0", "expected an object");
        row("configuration an array", t4("[1]"), "/results/0/configuration", "expected an object");
        row("correctness a string",
            t4(R"({"x": 1})").replace(t4().find(R"("correctness": 1)"), 16, R"("correctness": "1")"),
            "/results/0/correctness", "expected a number");
        row("schema_version a number", R"({"schema_version": 1, "results": []})", "/schema_version",
            "unknown T4 schema version 1");
        row("samples a string", t4(R"({"x": 1})", R"(, "tilescope": {"time": {"samples": "many"}})"),
            "/results/0/tilescope/time/samples", "expected an integer from 0 to 2147483647, got \"many\"");
        row("registers a fraction", t4(R"({"x": 1})", R"(, "tilescope": {"static": {"registers": 1.5}})"),
            "/results/0/tilescope/static/registers", "got 1.5");
        row("shape dimension a string", t4(R"({"x": 1})", "", R"(, "metadata": {"tilescope": {"shape": {"M": "x"}}})"),
            "/metadata/tilescope/shape/M", "expected a 64-bit integer, got \"x\"");
        // Huge numbers: each was a conversion from double to int out of range.
        row("samples 1e300", t4(R"({"x": 1})", R"(, "tilescope": {"time": {"samples": 1e300}})"),
            "/results/0/tilescope/time/samples", "got 1e+300");
        row("samples -1", t4(R"({"x": 1})", R"(, "tilescope": {"time": {"samples": -1}})"),
            "/results/0/tilescope/time/samples", "got -1");
        row("stack frame -1e300", t4(R"({"x": 1})", R"(, "tilescope": {"static": {"stack_frame": -1e300}})"),
            "/results/0/tilescope/static/stack_frame", "got -1e+300");
        row("spill stores 2^64",
            t4(R"({"x": 1})", R"(, "tilescope": {"static": {"spill_stores": 18446744073709551615}})"),
            "/results/0/tilescope/static/spill_stores", "got 18446744073709551615");
        row("device 1e10", t4(R"({"x": 1})", R"(, "tilescope": {"device": 10000000000})"),
            "/results/0/tilescope/device", "expected an integer from -1 to 2147483647");
        row("measured samples 1e300",
            t4(R"({"x": 1})", R"(, "measurements": [{"name": "samples", "value": 1e300, "unit": ""}])"),
            "/results/0/measurements/0/value", "got 1e+300");
        row("shape index 2^64",
            t4(R"({"x": 1})", "", R"(, "metadata": {"tilescope": {"shape_index": 18446744073709551615}})"),
            "/metadata/tilescope/shape_index", "expected an integer of at least 0");
        row("number 1e400", t4(R"({"x": 1e400})"), "line 1, column 65", "the number 1e400 is too large");
        row("number -1e400", t4(R"({"x": 1})", R"(, "tilescope": {"objective": -1e400})"), "line 1, column ",
            "the number -1e400 is too large");
        // NaN and Infinity, which Python's json module writes and JSON lacks.
        row("NaN", t4(R"({"x": NaN})"), "line 1, column 65", "NaN is not JSON");
        row("Infinity", t4(R"({"x": 1})", R"(, "tilescope": {"objective": Infinity})"), "line 1, column 174",
            "Infinity is not JSON");
        row("-Infinity", t4(R"({"x": -Infinity})"), "line 1, column 65", "-Infinity is not JSON");
        row("nan", t4(R"({"x": nan})"), "line 1, column 65", "nan is not JSON");
        // Nothing there
        row("empty", "", "", "the file is empty");
        row("white space", "  \n\t \n", "", "the file holds only white space");
        // Values no result can have: each was read, a time of -5 or 0 crowned the winner, an
        // unknown status became ok, an empty configuration a result of no config, 2**70 another
        // number.
        const auto entry = [](const std::string& result) {
            return R"({"schema_version": "1.0.0", "results": [)" + result + "]}\n";
        };
        const std::string correct = R"("invalidity": "correct", "correctness": 1)";
        row("time -5", t4(R"({"x": 1})", R"(, "measurements": [{"name": "time", "value": -5.0, "unit": "ms"}])"),
            "/results/0/measurements/0/value", "the recorded time -5.0 is negative");
        row("time 0", t4(R"({"x": 1})", R"(, "measurements": [{"name": "time", "value": 0, "unit": "ms"}])"),
            "/results/0/measurements/0/value", "an ok result with a time of 0 ms");
        row("time past a double in ms",
            t4(R"({"x": 1})", R"(, "measurements": [{"name": "time", "value": 1e306, "unit": "s"}])"),
            "/results/0/measurements/0/value", "is not a finite number");
        row("time_min -1", t4(R"({"x": 1})", R"(, "measurements": [{"name": "time_min", "value": -1, "unit": "ms"}])"),
            "/results/0/measurements/0/value", "is negative");
        row("runtime -1", entry(R"({"configuration": {"x": 1}, "times": {"runtimes": [1.0, -1.0]}, )" + correct + "}"),
            "/results/0/times/runtimes/1", "the recorded time -1.0 is negative");
        row("runtimes 0", entry(R"({"configuration": {"x": 1}, "times": {"runtimes": [0, 0, 0]}, )" + correct + "}"),
            "/results/0/times/runtimes", "an ok result with a time of 0 ms");
        row("correct without a time", entry(R"({"configuration": {"x": 1}, "times": {}, )" + correct + "}"),
            "/results/0/measurements", "an ok result with a time of 0 ms");
        row("tilescope median -5", t4(R"({"x": 1})", R"(, "tilescope": {"time": {"median_ms": -5}})"),
            "/results/0/tilescope/time/median_ms", "is negative");
        row("tilescope median 0", t4(R"({"x": 1})", R"(, "tilescope": {"status": "ok", "time": {"median_ms": 0}})"),
            "/results/0/tilescope/time/median_ms", "an ok result with a time of 0 ms");
        row("tilescope stdev -1", t4(R"({"x": 1})", R"(, "tilescope": {"time": {"stdev_ms": -1}})"),
            "/results/0/tilescope/time/stdev_ms", "is negative");
        row("tilescope status bogus", t4(R"({"x": 1})", R"(, "tilescope": {"status": "bogus"})"),
            "/results/0/tilescope/status", "unknown status \"bogus\"");
        row("tilescope status a number", t4(R"({"x": 1})", R"(, "tilescope": {"status": 0})"),
            "/results/0/tilescope/status", "unknown status 0");
        row("configuration empty", t4("{}"), "/results/0/configuration", "the configuration names no parameter");
        row("parameter 2**70", t4(R"({"x": 1180591620717411303424})"), "/results/0/configuration/x",
            "the integer 1180591620717411303424 does not fit 64 bits");
        row("parameter -2**70", t4(R"({"x": -1180591620717411303424})"), "/results/0/configuration/x",
            "does not fit 64 bits");
        row("parameter 2**63", t4(R"({"x": 9223372036854775808})"), "/results/0/configuration/x",
            "the integer 9223372036854775808 is out of range");
    }

    void t4Hostile() {
        QFETCH(QByteArray, text);
        QFETCH(QString, location);
        QFETCH(QString, message);
        const std::string name = std::string(QTest::currentDataTag()) + ".json";
        const auto error = inputErrorOf([&] { parseT4(text.toStdString(), name); });
        QVERIFY2(error, "read without an error");
        QCOMPARE(error->file(), name);
        QVERIFY2(QString::fromStdString(error->location()).startsWith(location), error->what());
        QVERIFY2(QString::fromStdString(error->message()).contains(message), error->what());

        const std::string file = path(name);
        writeFile(file, text.toStdString());
        // The whole way in: a T4 file is told by its content first.
        const auto read = inputErrorOf([&] { readRecording(file); });
        QVERIFY2(read, "readRecording read it");
        QCOMPARE(read->location(), error->location());
        QCOMPARE(read->message(), error->message());
        expectRecordingRefused(file, location.toStdString());
    }

    void t4OddButReadable() {
        // A measurement's unit of another type, or a "format" that is a number: these threw a
        // JSON type_error (an "internal error") and are read now.
        const std::string unit = t4(R"({"x": 1})", R"(, "measurements": [{"name": "time", "value": 2, "unit": 5}])");
        const SessionData data = parseT4(unit, "unit.json");
        QCOMPARE(data.results.size(), std::size_t(1));
        QCOMPARE(data.results[0].measurement.time.medianMs, 2.0);
        const std::string file = path("format.json");
        writeFile(file, R"({"format": 5, "entries": []})");
        const auto error = inputErrorOf([&] { readRecording(file); });
        QVERIFY(error);
        QVERIFY2(error->message().find("not a recording") != std::string::npos, error->what());
        QCOMPARE(detectRecordingFormat(file), RecordingFormat::Unknown);
        // Integral numbers written as floats, and numbers at the ends of their ranges, are values.
        const SessionData edge = parseT4(
            t4(R"({"x": 1})",
               R"(, "tilescope": {"time": {"samples": 7.0}, "device": -1, "static": {"registers": 2147483647, "stack_frame": 9223372036854775807}})"),
            "edge.json");
        QCOMPARE(edge.results[0].measurement.time.samples, 7);
        QCOMPARE(edge.results[0].measurement.device, -1);
        QVERIFY(edge.results[0].measurement.staticInfo);
        QCOMPARE(edge.results[0].measurement.staticInfo->registers, 2147483647);
        QCOMPARE(edge.results[0].measurement.staticInfo->stackFrame, std::int64_t(9223372036854775807));
    }

    // ---- Kernel Tuner caches ----

    void kernelTunerHostile_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const std::string& text, const char* location, const char* message) {
            QTest::newRow(name) << QByteArray::fromStdString(text) << QString(location) << QString(message);
        };
        const int n = 100000;
        // Out of range: std::stoll threw std::out_of_range, reported as "internal error: stoll".
        row("problem size text past 64 bits", ktCache(R"({"x": 1, "time": 1.25})", R"("99999999999999999999999x2")"),
            "/problem_size", "too large for 64 bits");
        row("problem size 1e300", ktCache(R"({"x": 1, "time": 1.25})", "1e300"), "/problem_size",
            "expected a 64-bit integer, got 1e+300");
        row("problem size 2^64", ktCache(R"({"x": 1, "time": 1.25})", "[18446744073709551615]"), "/problem_size/0",
            "expected a 64-bit integer");
        row("problem size a fraction", ktCache(R"({"x": 1, "time": 1.25})", "[1024, 1.5]"), "/problem_size/1",
            "got 1.5");
        row("samples -1e300", ktCache(R"({"x": 1, "time": 1.25, "tilescope": {"time": {"samples": -1e300}}})"),
            "/cache/1/tilescope/time/samples", "got -1e+300");
        row("shape index a string",
            ktCache(R"({"x": 1, "time": 1.25})", "[1]", R"(, "tilescope": {"shape_index": "0"})"),
            "/tilescope/shape_index", "expected an integer of at least 0");
        // Wrong types
        row("cache an array", R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"], "cache": []})",
            "/cache", "expected an object of entries");
        row("keys a string", R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": "x", "cache": {}})",
            "/tune_params_keys", "expected an array");
        row("key a number", R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": [1], "cache": {}})",
            "/tune_params_keys", "expected parameter names");
        row("entry a number", ktCache("5"), "/cache/1", "expected an object");
        row("time an array", ktCache(R"({"x": 1, "time": [1]})"), "/cache/1/time", "expected a number (ms)");
        row("parameter missing", ktCache(R"({"time": 1})"), "/cache/1", "missing the value of parameter 'x'");
        row("schema version a number",
            R"({"schema_version": 1, "device_name": "d", "kernel_name": "k", "tune_params_keys": [], "cache": {}})",
            "/schema_version", "unknown Kernel Tuner cache schema version 1");
        // Numbers JSON cannot hold
        row("time NaN", ktCache(R"({"x": 1, "time": NaN})"), "line 1, column 125", "NaN is not JSON");
        row("time Infinity", ktCache(R"({"x": 1, "time": Infinity})"), "line 1, column 125", "Infinity is not JSON");
        row("metric -Infinity", ktCache(R"({"x": 1, "time": 1, "GFLOP/s": -Infinity})"), "line 1, column 139",
            "-Infinity is not JSON");
        row("time 1e400", ktCache(R"({"x": 1, "time": 1e400})"), "line 1, column 125", "the number 1e400 is too large");
        // Nesting
        row("value nested 100000 deep", ktCache(R"({"x": )" + repeat(R"({"a": )", n) + "1" + repeat("}", n) + "}"),
            "line 1, column ", "nested more than 128 levels deep");
        // Kernel Tuner leaves a stopped run's cache open; closing it must not lift the limit.
        row("unclosed and nested 100000 deep",
            R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"], "cache": {"1": {"x": )" +
                repeat("[", n) + repeat("]", n) + "},\n",
            "line 1, column ", "nested more than 128 levels deep");
        // Values no result can have: each was read, a time of -5 or 0 crowned the winner, "fast"
        // became a launch error, 2**70 became 1.18e21.
        row("time -5", ktCache(R"({"x": 1, "time": -5.0})"), "/cache/1/time", "the recorded time -5.0 is negative");
        row("time 0", ktCache(R"({"x": 1, "time": 0})"), "/cache/1/time", "an ok result with a time of 0 ms");
        row("time -0.0", ktCache(R"({"x": 1, "time": -0.0})"), "/cache/1/time", "an ok result with a time of -0 ms");
        row("time fast", ktCache(R"({"x": 1, "time": "fast"})"), "/cache/1/time",
            "unknown Kernel Tuner failure \"fast\"");
        row("error marker fast", ktCache(R"({"x": 1, "__error__": "fast"})"), "/cache/1/__error__",
            "unknown Kernel Tuner failure \"fast\"");
        row("times with -1", ktCache(R"({"x": 1, "time": 1.0, "times": [1.0, -1.0]})"), "/cache/1/times/1",
            "the recorded time -1.0 is negative");
        row("tilescope median -5", ktCache(R"({"x": 1, "time": 1.0, "tilescope": {"time": {"median_ms": -5}}})"),
            "/cache/1/tilescope/time/median_ms", "is negative");
        row("tilescope ok at 0",
            ktCache(R"({"x": 1, "time": "InvalidConfig", "tilescope": {"status": "ok", "time": {"median_ms": 0}}})"),
            "/cache/1/tilescope/time/median_ms", "an ok result with a time of 0 ms");
        row("tilescope status bogus", ktCache(R"({"x": 1, "time": 1.0, "tilescope": {"status": "bogus"}})"),
            "/cache/1/tilescope/status", "unknown status \"bogus\"");
        row("parameter 2**70", ktCache(R"({"x": 1180591620717411303424, "time": 1.0})"), "/cache/1/x",
            "the integer 1180591620717411303424 does not fit 64 bits");
        row("parameter 2**63", ktCache(R"({"x": 9223372036854775808, "time": 1.0})"), "/cache/1/x",
            "the integer 9223372036854775808 is out of range");
        row("no parameters",
            R"({"device_name": "d", "kernel_name": "k", "tune_params_keys": [], "cache": {"": {"time": 1.0}}})",
            "/tune_params_keys", "the configuration names no parameter");
    }

    void kernelTunerHostile() {
        QFETCH(QByteArray, text);
        QFETCH(QString, location);
        QFETCH(QString, message);
        const std::string name = std::string(QTest::currentDataTag()) + ".json";
        const auto error = inputErrorOf([&] { parseKernelTunerCache(text.toStdString(), name); });
        QVERIFY2(error, "read without an error");
        QCOMPARE(error->file(), name);
        QVERIFY2(QString::fromStdString(error->location()).startsWith(location), error->what());
        QVERIFY2(QString::fromStdString(error->message()).contains(message), error->what());

        const std::string file = path(name);
        writeFile(file, text.toStdString());
        QCOMPARE(detectRecordingFormat(file), RecordingFormat::KernelTunerCache);
        const auto read = inputErrorOf([&] { readRecording(file); });
        QVERIFY2(read, "readRecording read it");
        QCOMPARE(read->location(), error->location());
        QCOMPARE(read->message(), error->message());
        expectRecordingRefused(file, location.toStdString());
        // As a replay: the strategy lab reads it the same way.
        writeFile(path("lab.json"), t1Problem());
        expectCliRefuses({"lab", QString::fromStdString(path("lab.json")), "--replay", QString::fromStdString(file)},
                         file, location.toStdString());
    }

    // ---- what a database kept ----

    void databaseTimeOfZeroOrBelowNeverWins() {
        // A database written before imports were checked (or edited by hand) may hold an ok result
        // at -5 ms: it must not be the best of show, and what reads the database as a recording
        // (import, replay, the lab, the exports) refuses it at its row, as an import refuses it.
        const std::string db = path("negative.db");
        std::filesystem::remove(db);
        {
            ResultStore store = ResultStore::open(db);
            SessionInfo info;
            info.kernel = "k";
            info.parameters = {"x"};
            info.shape = {{"M", 64}};
            info.backend = "import:old.json";
            info.startedAt = "2026-11-29T10:00:00.000Z";
            const std::int64_t id = store.createSession(info);
            std::vector<ResultRecord> results(2);
            results[0].config["x"] = 2;
            results[0].measurement.status = ResultStatus::Ok;
            results[0].measurement.time = {2.0, 2.0, 2.0, 0, 1};
            results[1].config["x"] = 4;
            results[1].measurement.status = ResultStatus::Ok;
            results[1].measurement.time = {-5.0, -5.0, -5.0, 0, 1};
            store.appendMany(id, results);
            QCOMPARE(store.best(id)->timeMs(), 2.0);
            QCOMPARE(store.results(id, true).front().timeMs(), 2.0);
        }
        // show ranks it last, not first.
        QProcess show;
        show.start(QStringLiteral(TILESCOPE_CLI), {"show", QString::fromStdString(db), "--json"});
        QVERIFY(show.waitForFinished(120000));
        QCOMPARE(show.exitCode(), 0);
        const auto list = nlohmann::json::parse(show.readAllStandardOutput().toStdString());
        QCOMPARE(list.size(), std::size_t(2));
        QCOMPARE(list[0]["time_ms"].get<double>(), 2.0);
        QCOMPARE(list[0]["config"]["x"].get<int>(), 2);

        const std::string row = "results row 2, column time_ms";
        const QString file = QString::fromStdString(db);
        for (const char* format : {"json", "cpp", "triton", "t4", "kerneltuner", "csv"})
            expectCliRefuses({"export", file, "--format", format}, db, row);
        const std::string copy = path("copy.db");
        std::filesystem::remove(copy);
        expectCliRefuses({"import", file, "--db", QString::fromStdString(copy)}, db, row);
        QVERIFY(!std::filesystem::exists(copy));
        writeFile(path("lab.json"), t1Problem());
        expectCliRefuses({"lab", QString::fromStdString(path("lab.json")), "--replay", file}, db, row);
        expectCliRefuses({"tune", QString::fromStdString(path("lab.json")), "--backend", "replay:" + file, "--db",
                          QString::fromStdString(path("replayed.db"))},
                         db, row);
        const auto error = inputErrorOf([&] { readRecording(db); });
        QVERIFY(error);
        QVERIFY2(error->message().find("the recorded time -5 ms is negative (x=4)") != std::string::npos,
                 error->what());
    }

    // ---- gzip ----

    void gzipMultiMember() {
        // gzip -d reads every member of a file (cat a.gz b.gz > c.gz); so must we.
        const std::string text = t4(R"({"x": 1})", R"(, "tilescope": {"time": {"samples": 2}})");
        const std::string file = path("multi.json.gz");
        writeFile(file,
                  gzipped(text.substr(0, 10)) + gzipped(text.substr(10, 30)) + gzipped("") + gzipped(text.substr(40)));
        QCOMPARE(exchange::readText(file), text);
        const std::vector<SessionData> sessions = readRecording(file);
        QCOMPARE(sessions.size(), std::size_t(1));
        QCOMPARE(sessions[0].results.size(), std::size_t(1));
        QCOMPARE(sessions[0].results[0].measurement.time.samples, 2);
        // Zero padding after the last member is ignored, as gzip does.
        const std::string padded = path("padded.json.gz");
        writeFile(padded, gzipped(text) + std::string(100000, '\0'));
        QCOMPARE(exchange::readText(padded), text);
        const CliRun r = runCli({"show", QString::fromStdString(file)});
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        // The format is told from the head of the text: across members too.
        QCOMPARE(detectRecordingFormat(file), RecordingFormat::T4);
    }

    void gzipLimitSetting() {
        qunsetenv("TILESCOPE_GZIP_LIMIT");
        QCOMPARE(exchange::gzipLimit(), std::uint64_t(1) << 30);
        const std::pair<const char*, std::uint64_t> sizes[] = {
            {"1000", 1000},    {"4G", std::uint64_t(4) << 30},   {"512M", std::uint64_t(512) << 20},
            {"64k", 64 << 10}, {"2GiB", std::uint64_t(2) << 30}, {"1T", std::uint64_t(1) << 40}};
        for (const auto& [text, bytes] : sizes) {
            qputenv("TILESCOPE_GZIP_LIMIT", text);
            QCOMPARE(exchange::gzipLimit(), bytes);
        }
        for (const char* bad : {"abc", "0", "-1", "1.5G", "4X", "99999999999999999999", "20000000T", " 4G"}) {
            qputenv("TILESCOPE_GZIP_LIMIT", bad);
            const auto error = inputErrorOf([] { exchange::gzipLimit(); });
            QVERIFY2(error, bad);
            QCOMPARE(error->location(), std::string("TILESCOPE_GZIP_LIMIT"));
            QVERIFY2(error->message().find(bad) != std::string::npos, error->what());
        }
        qunsetenv("TILESCOPE_GZIP_LIMIT");
    }

    void gzipBomb() {
        // 16 MiB of text in a few KiB: refused past the limit (1 MiB here, 1 GiB by default),
        // read below it.
        const std::string text = t4() + std::string(std::size_t(16) << 20, ' ');
        const std::string file = path("bomb.json.gz");
        writeFile(file, gzipped(text));
        QVERIFY(std::filesystem::file_size(file) < 100000);
        qputenv("TILESCOPE_GZIP_LIMIT", "1M");
        const auto error = inputErrorOf([&] { readRecording(file); });
        qunsetenv("TILESCOPE_GZIP_LIMIT");
        QVERIFY2(error, "a bomb was inflated");
        QCOMPARE(error->file(), file);
        QVERIFY2(error->message().find("inflates to more than 1 MiB") != std::string::npos, error->what());
        QVERIFY2(error->message().find("TILESCOPE_GZIP_LIMIT") != std::string::npos, error->what());
        // Telling the format reads only the head: no limit is reached there.
        qputenv("TILESCOPE_GZIP_LIMIT", "1M");
        QCOMPARE(detectRecordingFormat(file), RecordingFormat::T4);
        qputenv("TILESCOPE_GZIP_LIMIT", "32M");
        QCOMPARE(readRecording(file).size(), std::size_t(1));
        qunsetenv("TILESCOPE_GZIP_LIMIT");
        QCOMPARE(readRecording(file).size(), std::size_t(1)); // 16 MiB is well under 1 GiB

        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("TILESCOPE_GZIP_LIMIT", "1M");
        expectRecordingRefused(file, "", env);
        env.insert("TILESCOPE_GZIP_LIMIT", "lots");
        expectCliRefuses({"show", QString::fromStdString(file)}, "", "TILESCOPE_GZIP_LIMIT", env);
    }

    void gzipDamaged_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("location");
        QTest::addColumn<QString>("message");
        const std::string text = t4();
        const std::string whole = gzipped(text);
        const auto row = [](const char* name, const std::string& bytes, const QString& location, const char* message) {
            QTest::newRow(name) << QByteArray::fromStdString(bytes) << location << QString(message);
        };
        const QString end = "byte " + QString::number(whole.size());
        row("empty file", "", "", "the file is empty");
        row("magic only", whole.substr(0, 2), "byte 2", "the gzip data ends early: the file is truncated");
        row("header only", whole.substr(0, 10), "byte 10", "the file is truncated");
        row("half", whole.substr(0, whole.size() / 2), "byte " + QString::number(whole.size() / 2),
            "the file is truncated");
        row("trailer cut", whole.substr(0, whole.size() - 1), "byte " + QString::number(whole.size() - 1),
            "the file is truncated");
        row("second member truncated", whole + whole.substr(0, 12), "byte " + QString::number(whole.size() + 12),
            "the file is truncated (in member 2)");
        std::string badCrc = whole;
        badCrc[badCrc.size() - 8] = static_cast<char>(badCrc[badCrc.size() - 8] ^ 0x55);
        row("wrong checksum", badCrc, "byte ", "the gzip data is damaged (incorrect data check)");
        std::string badLength = whole;
        badLength[badLength.size() - 1] = static_cast<char>(badLength[badLength.size() - 1] ^ 0x01);
        row("wrong length", badLength, "byte ", "the gzip data is damaged (incorrect length check)");
        std::string badBlock = whole;
        badBlock[10] = static_cast<char>(0xff); // block type 3: reserved
        row("bad block", badBlock, "byte ", "the gzip data is damaged (invalid block type)");
        row("trailing garbage", whole + "garbage", end, "data that is not gzip after the end of the gzip data");
        row("garbage after padding", whole + std::string(10, '\0') + "x", "byte " + QString::number(whole.size() + 10),
            "data that is not gzip");
        std::string badMethod = whole;
        badMethod[2] = 7; // compression method other than deflate
        row("unknown method", badMethod, "byte ", "the gzip data is damaged (unknown compression method)");
    }

    void gzipDamaged() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, location);
        QFETCH(QString, message);
        const std::string file = path(std::string(QTest::currentDataTag()) + ".json.gz");
        writeFile(file, bytes.toStdString());
        const auto error = inputErrorOf([&] { readRecording(file); });
        QVERIFY2(error, "read without an error");
        QCOMPARE(error->file(), file);
        QVERIFY2(QString::fromStdString(error->location()).startsWith(location), error->what());
        QVERIFY2(QString::fromStdString(error->message()).contains(message), error->what());
        expectRecordingRefused(file, location.toStdString());
    }
};

QTEST_GUILESS_MAIN(TestHostileParsers)
#include "tst_hostile_parsers.moc"
