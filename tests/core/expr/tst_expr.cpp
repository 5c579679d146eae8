// The expression language against Python: tests/data/expr/cases.json holds expressions with
// the results (or exceptions) that Python itself computed (make_cases.py beside it).

#include "expr/expr.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>

using namespace tilescope::expr;

namespace {

// The variables of the case table as a Scope and its slot values.
struct Environment {
    Scope scope;
    std::vector<Value> slotValues;
    std::vector<std::unique_ptr<std::string>> strings;
    std::vector<std::unique_ptr<ValueList>> lists;

    Value toValue(const nlohmann::json& j) {
        if (j.is_boolean())
            return Value::ofBool(j.get<bool>());
        if (j.is_number_integer())
            return Value::ofInt(j.get<std::int64_t>());
        if (j.is_number_float())
            return Value::ofFloat(j.get<double>());
        if (j.is_string()) {
            strings.push_back(std::make_unique<std::string>(j.get<std::string>()));
            return Value::ofStr(strings.back().get());
        }
        auto list = std::make_unique<ValueList>();
        for (const auto& item : j)
            list->push_back(toValue(item));
        lists.push_back(std::move(list));
        return lists.back()->value();
    }

    explicit Environment(const nlohmann::json& doc) {
        for (const auto& [name, value] : doc["variables"].items()) {
            scope.addVariable(name);
            slotValues.push_back(toValue(value));
        }
        // A parameter's value list: min(name)/max(name) see the list. Python's environment binds the
        // name to the list itself, so the slot holds the list too.
        for (const auto& [name, values] : doc["lists"].items()) {
            std::vector<Value> items;
            for (const auto& v : values)
                items.push_back(toValue(v));
            scope.setValueList(name, items);
            slotValues.push_back(toValue(values));
        }
    }
};

nlohmann::json loadCases() {
    std::ifstream in(TILESCOPE_TEST_DATA "/expr/cases.json");
    return nlohmann::json::parse(in);
}

ErrorKind kindFromName(const std::string& name) {
    for (auto k : {ErrorKind::Syntax, ErrorKind::Name, ErrorKind::Type, ErrorKind::ZeroDivision, ErrorKind::Value,
                   ErrorKind::Overflow, ErrorKind::Index})
        if (name == errorKindName(k))
            return k;
    throw std::runtime_error("unknown error kind " + name);
}

} // namespace

class TestExpr : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        m_doc = loadCases();
        m_env = std::make_unique<Environment>(m_doc);
        QVERIFY(m_doc["cases"].size() >= 60);
    }

    void againstPython_data() {
        QTest::addColumn<int>("index");
        const auto& cases = m_doc["cases"];
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i]["expr"].get<std::string>().c_str()) << static_cast<int>(i);
    }

    void againstPython() {
        QFETCH(int, index);
        const auto& c = m_doc["cases"][static_cast<std::size_t>(index)];
        const std::string source = c["expr"];
        if (c.contains("error")) {
            const ErrorKind expected = kindFromName(c["error"]);
            const int column = c["column"];
            try {
                const Expression e = Expression::compile(source, m_env->scope);
                const Value v = e.evaluate(m_env->slotValues.data());
                QFAIL(qPrintable(
                    QString::fromStdString("expected " + c["error"].get<std::string>() + ", got " + repr(v))));
            } catch (const ExprError& err) {
                QCOMPARE(errorKindName(err.kind()), errorKindName(expected));
                QCOMPARE(err.column(), column);
                QCOMPARE(err.expression(), source);
                const std::string what = err.what();
                QVERIFY2(what.find("column " + std::to_string(column)) != std::string::npos, err.what());
                QVERIFY2(what.find(errorKindName(expected)) != std::string::npos, err.what());
            }
            return;
        }
        const Expression e = Expression::compile(source, m_env->scope);
        const Value v = e.evaluate(m_env->slotValues.data());
        QCOMPARE(QString::fromStdString(repr(v)), QString::fromStdString(c["repr"]));
        QCOMPARE(QString(typeName(v.kind)), QString::fromStdString(c["type"]));
    }

    void longExpressionQuotedAroundTheError() {
        // An expression of 300 characters is quoted in its error as the 60 characters either side
        // of the column, between "...".
        Scope scope;
        scope.addVariable("x");
        std::string source;
        while (source.size() < 150)
            source += "x + ";
        const std::size_t column = source.size() + 1; // where the unknown name starts
        source += "nope";
        while (source.size() < 300)
            source += " + x";
        try {
            Expression::compile(source, scope);
            QFAIL("compiled");
        } catch (const ExprError& e) {
            QCOMPARE(e.column(), static_cast<int>(column));
            const std::string expected = "..." + source.substr(column - 1 - 60, 120) + "...";
            QVERIFY2(std::string(e.what()).find("'" + expected + "'") != std::string::npos, e.what());
        }
        // At the first column: the first 60 characters, then "...".
        std::string atStart = "nope";
        while (atStart.size() < 300)
            atStart += " + x";
        try {
            Expression::compile(atStart, scope);
            QFAIL("compiled");
        } catch (const ExprError& e) {
            QCOMPARE(e.column(), 1);
            QVERIFY2(std::string(e.what()).find(", in '" + atStart.substr(0, 60) + "...'") != std::string::npos,
                     e.what());
        }
    }

    void concatenationNamedOnlyForLikeOperands() {
        Scope scope;
        const auto message = [&](const std::string& source) {
            try {
                Expression::compile(source, scope).evaluate(nullptr);
            } catch (const ExprError& e) {
                return e.kind() == ErrorKind::Type ? e.message() : std::string("not a TypeError");
            }
            return std::string("no error");
        };
        QVERIFY(message("'a' + 'b'").find("concatenation") != std::string::npos);
        QVERIFY(message("[1] + [2]").find("concatenation") == std::string::npos); // constant lists fold
        QVERIFY2(message("'a' + 1").find("unsupported operand") != std::string::npos, message("'a' + 1").c_str());
        QVERIFY2(message("'a' - 'b'").find("unsupported operand") != std::string::npos, message("'a' - 'b'").c_str());
        // What is left over after an expression: a comma reads as an attempted tuple.
        const auto syntax = [&](const std::string& source) {
            try {
                Expression::compile(source, scope);
            } catch (const ExprError& e) {
                return e.message();
            }
            return std::string("compiled");
        };
        QVERIFY2(syntax("1, 2").find("a tuple is not an expression here") != std::string::npos, syntax("1, 2").c_str());
        QVERIFY2(syntax("1 :").find("':' was not expected here") != std::string::npos, syntax("1 :").c_str());
        QVERIFY2(syntax("1 2").find("a number was not expected here") != std::string::npos, syntax("1 2").c_str());
        QVERIFY2(syntax("1 :").find("tuple") == std::string::npos, syntax("1 :").c_str());
        // A comprehension without a loop variable says what it found instead.
        QVERIFY2(syntax("[x for 3 in y]").find("after 'for', found a number") != std::string::npos,
                 syntax("[x for 3 in y]").c_str());
        // Subscripts of what is not a list say what it is.
        QVERIFY2(message("'abc'[0]").find("indexing strings is not supported") != std::string::npos,
                 message("'abc'[0]").c_str());
        QVERIFY2(message("3[0]").find("object is not subscriptable") != std::string::npos, message("3[0]").c_str());
    }

    void bytecodeUnlessATreeWalkIsNeeded() {
        // What compiles to bytecode (the fast path of every condition) and what is walked as a tree.
        Scope scope;
        scope.addVariable("x");
        scope.addVariable("y");
        for (const char* source : {"x > 1", "x in [y, 3]", "x not in [y, 3]", "max([x, y]) > 2", "min([x, y]) > 2",
                                   "abs(x) > 1", "max(x, y) > 2", "len([1, 2, 3]) == x",
                                   "x in [2 ** i for i in range(4)]", "len([i for i in range(3) if i > 0]) < x"})
            QVERIFY2(!Expression::compile(source, scope).walksTree(), source);
        for (const char* source : {"sum([x, y]) > 2", "len(range(x)) > 2", "sorted([x, y])[0] > 1",
                                   "len([i for i in range(3) if i < x]) > 1", "[x, y][1:][0] > 1", "[x, y] == [1, 2]"})
            QVERIFY2(Expression::compile(source, scope).walksTree(), source);
    }

    void integerValueOfAFloat() {
        Scope scope;
        QCOMPARE(Expression::compile("8 / 2", scope).evaluateInt(nullptr), 4);
        QCOMPARE(Expression::compile("-3.0", scope).evaluateInt(nullptr), -3);
        QVERIFY_THROWS_EXCEPTION(ExprError, Expression::compile("5 / 2", scope).evaluateInt(nullptr));
    }

    void parseOnceEvaluateMany() {
        Scope scope;
        const int a = scope.addVariable("BLOCK_M");
        const int b = scope.addVariable("BLOCK_N");
        const Expression e = Expression::compile("32 <= BLOCK_M * BLOCK_N // 64 <= 1024", scope);
        QCOMPARE(std::vector<int>(e.usedSlots().begin(), e.usedSlots().end()), (std::vector<int>{a, b}));
        Value values[2];
        int holds = 0;
        for (std::int64_t m = 1; m <= 512; m *= 2)
            for (std::int64_t n = 1; n <= 512; n *= 2) {
                values[a] = Value::ofInt(m);
                values[b] = Value::ofInt(n);
                const bool expected = 32 <= m * n / 64 && m * n / 64 <= 1024;
                QCOMPARE(e.test(values), expected);
                holds += expected;
            }
        QVERIFY(holds > 0 && holds < 100);
    }

    void shortCircuitSkipsErrors() {
        Scope scope;
        scope.addVariable("d");
        const Expression e = Expression::compile("d != 0 and 10 // d == 5 or d == 0", scope);
        Value zero = Value::ofInt(0), two = Value::ofInt(2), three = Value::ofInt(3);
        QVERIFY(e.test(&zero));
        QVERIFY(e.test(&two));
        QVERIFY(!e.test(&three));
        // a conditional expression evaluates only the chosen branch
        const Expression c = Expression::compile("10 // d if d else -1", scope);
        QCOMPARE(c.evaluate(&zero).i, -1);
        QCOMPARE(c.evaluate(&two).i, 5);
    }

    void constantFoldingKeepsRuntimeErrors() {
        const Scope scope;
        const Expression e = Expression::compile("1 + 1 // 0", scope);
        QVERIFY(e.isConstant());
        Value out;
        EvalStatus st;
        QVERIFY(!e.tryEvaluate(nullptr, out, st));
        QCOMPARE(st.kind, ErrorKind::ZeroDivision);
        QCOMPARE(st.column, 7);
        QVERIFY_THROWS_EXCEPTION(ExprError, e.evaluate(nullptr));
    }

    void constantsAndScope() {
        Scope scope;
        scope.addConstant("M", Value::ofInt(4096));
        scope.addVariable("BLOCK_M");
        const Expression e = Expression::compile("M % BLOCK_M == 0", scope);
        QCOMPARE(e.usedSlots().size(), std::size_t(1));
        Value v = Value::ofInt(48);
        QVERIFY(!e.test(&v));
        v = Value::ofInt(64);
        QVERIFY(e.test(&v));
        QCOMPARE(Expression::compile("M // 2", scope).evaluateInt(nullptr), 2048);
    }

    void nameErrorsSuggest() {
        Scope scope;
        scope.addVariable("BLOCK_M");
        try {
            Expression::compile("BLOCK_N * 2", scope);
            QFAIL("expected a NameError");
        } catch (const ExprError& e) {
            QCOMPARE(e.kind(), ErrorKind::Name);
            QVERIFY2(e.message().find("did you mean 'BLOCK_M'") != std::string::npos, e.what());
        }
        try {
            Expression::compile("mx(1, 2)", scope);
            QFAIL("expected a NameError");
        } catch (const ExprError& e) {
            QCOMPARE(e.kind(), ErrorKind::Name);
            QVERIFY2(e.message().find("did you mean 'max'") != std::string::npos, e.what());
        }
        // A typo in the first letter is one edit; a name far from every other gets no suggestion.
        auto messageOf = [&](const char* source) {
            try {
                Expression::compile(source, scope);
            } catch (const ExprError& e) {
                return e.message();
            }
            return std::string("compiled");
        };
        QVERIFY2(messageOf("xLOCK_M + 1").find("did you mean 'BLOCK_M'") != std::string::npos,
                 messageOf("xLOCK_M + 1").c_str());
        QVERIFY2(messageOf("QQQQQ_Z + 1").find("did you mean") == std::string::npos, messageOf("QQQQQ_Z + 1").c_str());
        QVERIFY_THROWS_EXCEPTION(ExprError, Expression::compile("BLOCK_M(3)", scope));
        QVERIFY2(messageOf("abs(1, 2)").find("abs() takes 1 argument (2 given)") != std::string::npos,
                 messageOf("abs(1, 2)").c_str());
        QVERIFY2(messageOf("range()").find("range() takes 1 to 3 arguments (0 given)") != std::string::npos,
                 messageOf("range()").c_str());

        // The distance counts each letter added, dropped or changed once; a suggestion is at most
        // a third of the name's letters away (at least one).
        Scope names;
        for (const char* n : {"tile_x", "BX", "t"})
            names.addVariable(n);
        auto suggestionFor = [&](const char* source) {
            try {
                Expression::compile(source, names);
            } catch (const ExprError& e) {
                const std::size_t at = e.message().find("did you mean '");
                return at == std::string::npos ? std::string()
                                               : e.message().substr(at + 14, e.message().find('\'', at + 14) - at - 14);
            }
            return std::string("compiled");
        };
        QCOMPARE(suggestionFor("tiilee_x"), std::string("tile_x")); // two letters dropped: the limit for eight
        QCOMPARE(suggestionFor("tiile_x"), std::string("tile_x"));
        QCOMPARE(suggestionFor("tle_x"), std::string("tile_x")); // one added
        QCOMPARE(suggestionFor("QQ"), std::string());            // two edits from BX and t: over the limit of one
        QCOMPARE(suggestionFor("xxxxt"), std::string());         // four letters from t
        QCOMPARE(suggestionFor("Bx"), std::string("BX"));        // case aside, the same name
    }

    // T1 value lists against Python's eval (Kernel Tuner evaluates Values so).
    void valueListsAgainstPython_data() {
        QTest::addColumn<int>("index");
        const auto& cases = m_doc["value_lists"];
        QVERIFY(cases.size() >= 40);
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(cases[i]["values"].get<std::string>().c_str()) << static_cast<int>(i);
    }

    void valueListsAgainstPython() {
        QFETCH(int, index);
        const auto& c = m_doc["value_lists"][static_cast<std::size_t>(index)];
        const std::string source = c["values"];
        std::vector<std::unique_ptr<std::string>> strings;
        if (c.contains("error")) {
            try {
                const std::vector<Value> values = parseValueList(source, strings);
                QFAIL(qPrintable(QString::fromStdString("expected " + c["error"].get<std::string>() + ", got " +
                                                        repr(ValueList(values).value()))));
            } catch (const ExprError& err) {
                QCOMPARE(errorKindName(err.kind()), c["error"].get<std::string>().c_str());
                QCOMPARE(err.column(), c["column"].get<int>());
            }
            return;
        }
        const std::vector<Value> values = parseValueList(source, strings);
        QCOMPARE(QString::fromStdString(repr(ValueList(values).value())), QString::fromStdString(c["repr"]));
    }

    // Values are evaluated once, when the problem loads: a runaway comprehension stops with an
    // error instead of hanging or exhausting memory.
    void valueListLimits_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<int>("column");
        QTest::newRow("long range") << "range(10**9)" << 1;
        QTest::newRow("long product") << "[a for a in range(5000) for b in range(5000)]" << 1;
        QTest::newRow("many steps") << "[1 for a in range(5000) for b in range(5000) if a < 0]" << 1;
        QTest::newRow("long repetition") << "[0] * 10**8" << 5;
    }

    void valueListLimits() {
        QFETCH(QString, source);
        QFETCH(int, column);
        std::vector<std::unique_ptr<std::string>> strings;
        try {
            parseValueList(source.toStdString(), strings);
            QFAIL("expected an error");
        } catch (const ExprError& e) {
            QCOMPARE(e.kind(), ErrorKind::Value);
            QCOMPARE(e.column(), column);
        }
    }

    void reprMatchesPython_data() {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("expected");
        // the expected texts are Python's repr() of the same doubles
        QTest::newRow("1e16") << 1e16 << "1e+16";
        QTest::newRow("1e15") << 1e15 << "1000000000000000.0";
        QTest::newRow("1e-4") << 1e-4 << "0.0001";
        QTest::newRow("1e-5") << 1e-5 << "1e-05";
        QTest::newRow("123.456") << 123.456 << "123.456";
        QTest::newRow("-0.0") << -0.0 << "-0.0";
        QTest::newRow("1.5e-7") << 1.5e-7 << "1.5e-07";
        QTest::newRow("2**70") << 1180591620717411303424.0 << "1.1805916207174113e+21";
        QTest::newRow("0.1+0.2") << 0.1 + 0.2 << "0.30000000000000004";
    }

    void reprMatchesPython() {
        QFETCH(double, value);
        QFETCH(QString, expected);
        QCOMPARE(QString::fromStdString(repr(Value::ofFloat(value))), expected);
    }

    void deepNesting() {
        // 200 nested parentheses and a long sum: no recursion trouble, more stack than inline
        std::string deep = std::string(200, '(') + "1" + std::string(200, ')');
        QCOMPARE(Expression::compile(deep, Scope{}).evaluateInt(nullptr), 1);
        Scope scope;
        scope.addVariable("x");
        std::string chain = "x";
        for (int i = 0; i < 100; ++i) // right-nested: the operand stack grows to ~100 values
            chain = "x * " + std::to_string(i) + " + (" + chain + ")";
        const Value x = Value::ofInt(1);
        std::int64_t expected = 1;
        for (int i = 0; i < 100; ++i)
            expected = i + expected;
        QCOMPARE(Expression::compile(chain, scope).evaluateInt(&x), expected);
    }

    void listOfVariablesIsNoValue() {
        // A list built from variables (evaluated on the tree) cannot be what an expression gives:
        // a failed status with its kind and column, and evaluate() throws the same.
        Scope scope;
        scope.addVariable("x");
        scope.addVariable("y");
        const Expression e = Expression::compile("[x, y * 2]", scope);
        const Value values[] = {Value::ofInt(3), Value::ofInt(4)};
        Value out;
        EvalStatus status;
        QVERIFY(!e.tryEvaluate(values, out, status));
        QVERIFY(!status.ok);
        QCOMPARE(status.kind, ErrorKind::Type);
        QCOMPARE(status.column, 1);
        QVERIFY(QString(status.message).contains("a list built from variables"));
        try {
            (void)e.evaluate(values);
            QFAIL("evaluate() returned a list built from variables");
        } catch (const ExprError& error) {
            QCOMPARE(error.kind(), ErrorKind::Type);
            QCOMPARE(error.column(), 1);
        }
        // Inside the expression it is fine.
        const Expression inside = Expression::compile("len([x, y * 2]) + max([x, y * 2])", scope);
        QCOMPARE(inside.evaluateInt(values), std::int64_t(10));
    }

    void valueLists() {
        // A list made empty is empty as a value; each push counts.
        const ValueList empty;
        QCOMPARE(empty.size(), std::size_t(0));
        QCOMPARE(empty.value().listSize(), std::size_t(0));
        QCOMPARE(repr(empty.value()), std::string("[]"));
        ValueList two;
        two.push_back(Value::ofInt(3));
        two.push_back(Value::ofFloat(0.5));
        QCOMPARE(two.value().listSize(), std::size_t(2));
        QCOMPARE(repr(two.value()), std::string("[3, 0.5]"));
    }

    void lexemesForColouring() {
        // Each piece as the parser reads it, with its byte offsets.
        const std::string text = "BLOCK_M * 2 <= min(K, 0x40) and not LAYOUT in ['row']";
        std::string classes;
        for (const Lexeme& l : lexemes(text)) {
            const char tag[] = {'N', 'S', 'n', 'b', 'k', 'o', '!'};
            classes += text.substr(l.start, l.length) + ":" + tag[static_cast<int>(l.kind)] + " ";
        }
        QCOMPARE(QString::fromStdString(classes),
                 QStringLiteral("BLOCK_M:n *:o 2:N <=:o min:b (:o K:n ,:o 0x40:N ):o and:k not:k LAYOUT:n in:k "
                                "[:o 'row':S ]:o "));
        // An expression that does not parse is still coloured; a lexical error makes the rest Invalid.
        const auto partial = lexemes("x + ");
        QCOMPARE(partial.size(), std::size_t(2));
        const auto broken = lexemes("a = 1");
        QCOMPARE(broken.size(), std::size_t(2));
        QCOMPARE(broken[1].kind, LexemeKind::Invalid);
        QCOMPARE(broken[1].start, std::size_t(2));
        QCOMPARE(broken[1].length, std::size_t(3));
        const auto unterminated = lexemes("x == 'ro");
        QCOMPARE(unterminated.back().kind, LexemeKind::Invalid);
        QCOMPARE(unterminated.back().start, std::size_t(5));
        QVERIFY(lexemes("").empty());
        QVERIFY(lexemes("   ").empty());
        // A lexical error before any token: all of it is Invalid, from its first character.
        const auto none = lexemes("$ab");
        QCOMPARE(none.size(), std::size_t(1));
        QCOMPARE(none[0].kind, LexemeKind::Invalid);
        QCOMPARE(none[0].start, std::size_t(0));
        QCOMPARE(none[0].length, std::size_t(3));
    }

    // Bounds on partial configs (mayHold): false only where no choice of the unbound variables
    // within their ranges makes the expression true. A table of the cases it must rule out, and
    // of their neighbours that it must not.
    void boundsRuleOutPartialConfigs_data() {
        QTest::addColumn<QString>("expression");
        QTest::addColumn<QString>("bound");   // "A=18 s='half'": the bound variables and their values
        QTest::addColumn<QString>("unbound"); // "B=0..999 C=0.5..8": ranges, ".." between; "D=?" any value
        QTest::addColumn<bool>("mayHold");
        const auto row = [](const char* expression, const char* bound, const char* unbound, bool may) {
            QTest::addRow("%s | %s | %s", expression, bound, unbound)
                << QString::fromUtf8(expression) << QString::fromUtf8(bound) << QString::fromUtf8(unbound) << may;
        };
        row("A + B + C == 17", "A=18", "B=0..999 C=0..999", false);
        row("A + B + C == 17", "A=17", "B=0..999 C=0..999", true);
        row("A + B + C == 17", "A=2 B=3", "C=0..11", false);
        row("A + B + C == 17", "A=2 B=3", "C=0..12", true);
        row("A + B + C <= 17", "A=10", "B=8..20 C=0..5", false);
        row("A - B >= 0", "A=3", "B=4..9", false);
        row("A * B <= 64", "A=128", "B=1..8", false);
        row("A * B <= 64", "A=-128", "B=1..8", true);
        row("A * B * C <= 1024", "A=64", "B=4..16 C=8..16", false);
        row("A // B >= 4", "A=4", "B=2..8", false);
        row("A // B >= 2", "A=4", "B=2..8", true);
        row("A % 8 == 9", "", "A=0..100", false);
        row("A % B == 0", "A=7", "B=8..16", false); // 7 % B is 7 for every B above 7
        row("A % B == 7", "A=7", "B=8..16", true);
        row("2 ** A <= 16", "", "A=5..10", false);
        row("2 ** A <= 32", "", "A=5..10", true);
        row("A / 2 > 10", "", "A=0.5..8", false);
        row("abs(A - B) >= 5", "A=3", "B=0..7", false);
        row("abs(A - B) >= 4", "A=3", "B=0..7", true);
        row("min(A, B) > 10", "A=5", "B=0..100", false);
        row("max(A, B) < 10", "A=5", "B=12..100", false);
        row("sum([A, B, C]) <= 2", "A=3", "B=0..4 C=0..4", false);
        row("min([A, B]) >= 1", "A=0", "B=0..4", false);
        row("x in [64, 128]", "", "x=1..32", false);
        row("x in [64, 128]", "", "x=1..64", true);
        row("x in [A, B]", "A=3", "x=4..9 B=10..20", false);
        row("x not in [64]", "", "x=64..64", false);
        row("A < B < C", "A=5", "B=0..5 C=0..100", false);
        row("A < B < C", "A=5", "B=0..6 C=0..100", true);
        row("A <= B and B <= 4", "A=5", "B=0..4", false);
        row("A <= B and B <= 4", "A=5", "B=0..9", true); // each part may hold, for different B
        row("A > 100 or B > 100", "A=5", "B=0..9", false);
        row("A > 100 or B > 100", "A=5", "B=0..101", true);
        row("not (A + B > 3)", "A=4", "B=0..9", false);
        row("(A if c else B) > 10", "A=5 c=1", "B=0..100", false);
        row("(A if c else B) > 10", "A=5", "B=0..100 c=0..1", true);
        row("s == 'float' and A > 3", "s='half'", "A=0..9", false);
        row("s == 'float' and A > 3", "s='float'", "A=0..9", true);
        row("s == 'float' and A > 3", "", "A=0..9 s=?", true);
        row("A + B == 1", "A=0", "B=0.25..0.75", false);
        row("A == 2.5", "", "A=0..9", false); // an int never equals 2.5
        row("A - B == 0", "", "A=0..4 B=5..9", false);
        row("A << B <= 64", "A=8", "B=4..9", false);
        row("A >> B >= 1", "A=8", "B=4..9", false);
        row("A & B > 8", "A=8", "B=0..100", false);
        row("A | B < 8", "A=8", "B=0..100", false);
        row("-A > 0", "", "A=0..9", false);
        row("ceil(A / 4) == 3", "", "A=0..8", false);
        row("ceil(A / 4) == 3", "", "A=0..9", true);
        row("floor(log2(A)) >= 4", "", "A=1..15", false);
        row("sqrt(A) > 3", "", "A=0..9", false);
        row("int(A) > 3", "", "A=0.5..3.5", false);
        row("A // B > 0", "A=1", "B=-3..3", true); // dividing by 0 raises; other divisors may hold
        row("len(L) > 2", "", "L=?", true);
    }

    void boundsRuleOutPartialConfigs() {
        QFETCH(QString, expression);
        QFETCH(QString, bound);
        QFETCH(QString, unbound);
        QFETCH(bool, mayHold);
        Scope scope;
        std::vector<Value> values;
        std::vector<SlotRange> ranges;
        std::vector<std::unique_ptr<std::string>> strings;
        const auto slotFor = [&](const QString& name) {
            const int slot = scope.addVariable(name.toStdString());
            values.resize(static_cast<std::size_t>(scope.slotCount()));
            ranges.resize(static_cast<std::size_t>(scope.slotCount()));
            return static_cast<std::size_t>(slot);
        };
        for (const QString& item : bound.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            const QStringList kv = item.split(QLatin1Char('='));
            const std::size_t slot = slotFor(kv[0]);
            if (kv[1].startsWith(QLatin1Char('\''))) {
                strings.push_back(std::make_unique<std::string>(kv[1].mid(1, kv[1].size() - 2).toStdString()));
                values[slot] = Value::ofStr(strings.back().get());
            } else {
                values[slot] = Value::ofInt(kv[1].toLongLong());
            }
        }
        for (const QString& item : unbound.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            const QStringList kv = item.split(QLatin1Char('='));
            const std::size_t slot = slotFor(kv[0]);
            SlotRange& r = ranges[slot];
            r.bound = false;
            if (kv[1] == QLatin1String("?"))
                continue;
            const QStringList ends = kv[1].split(QStringLiteral(".."));
            r.numeric = true;
            r.integral = !ends[0].contains(QLatin1Char('.')) && !ends[1].contains(QLatin1Char('.'));
            r.lo = ends[0].toDouble();
            r.hi = ends[1].toDouble();
        }
        for (const char* name : {"A", "B", "C", "c", "s", "x", "L"}) // every name the table uses
            slotFor(QString::fromLatin1(name));
        const Expression e = Expression::compile(expression.toStdString(), scope);
        QCOMPARE(e.mayHold(values.data(), ranges.data()), mayHold);
        // With everything bound, it is the expression's own truth.
        if (unbound.isEmpty()) {
            Value out;
            EvalStatus st;
            QCOMPARE(e.tryEvaluate(values.data(), out, st) && truthy(out), mayHold);
        }
    }

    // Soundness against Python's own cases: an expression true for the table's values may hold
    // whichever of its numeric variables are left unbound, within any range around their values.
    void boundsNeverRuleOutATrueCase() {
        std::mt19937_64 rng(52);
        const auto& cases = m_doc["cases"];
        int checked = 0;
        for (const auto& c : cases) {
            if (c.contains("error"))
                continue;
            const Expression e = Expression::compile(c["expr"].get<std::string>(), m_env->scope);
            Value out;
            EvalStatus st;
            if (!e.tryEvaluate(m_env->slotValues.data(), out, st) || !truthy(out))
                continue;
            ++checked;
            std::vector<SlotRange> ranges(m_env->slotValues.size());
            QVERIFY(e.mayHold(m_env->slotValues.data(), ranges.data()));
            for (int trial = 0; trial < 20; ++trial) {
                for (std::size_t slot = 0; slot < ranges.size(); ++slot) {
                    const Value& v = m_env->slotValues[slot];
                    SlotRange& r = ranges[slot];
                    r = SlotRange{};
                    if (rng() % 2 || !v.isNumber())
                        continue;
                    const double x = v.kind == Kind::Float ? v.f : static_cast<double>(v.i);
                    r.bound = false;
                    r.numeric = true;
                    r.integral = v.kind != Kind::Float;
                    r.lo = x - static_cast<double>(rng() % 3) * (rng() % 2 ? 1 : 100);
                    r.hi = x + static_cast<double>(rng() % 3) * (rng() % 2 ? 1 : 100);
                }
                QVERIFY2(e.mayHold(m_env->slotValues.data(), ranges.data()), c["expr"].get<std::string>().c_str());
            }
        }
        QVERIFY(checked >= 50);
    }

private:
    nlohmann::json m_doc;
    std::unique_ptr<Environment> m_env;
};

QTEST_GUILESS_MAIN(TestExpr)
#include "tst_expr.moc"
