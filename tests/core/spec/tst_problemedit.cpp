// Edits of a tuning problem (spec/problemedit.h): each gives a problem read back through the
// T1 reader, a bad one a located error, and fields this version does not know survive.

#include "base/error.h"
#include "space/configspace.h"
#include "spec/problemedit.h"

#include <QtTest>

#include <nlohmann/json.hpp>

using namespace tilescope;

namespace {

const char* const kConvolution = TILESCOPE_TEST_DATA "/t1corpus/kt_convolution.json";

std::uint64_t validCount(const TuningProblem& p) {
    return ConfigSpace::build(p).stats().validSize;
}

} // namespace

class TestProblemEdit : public QObject {
    Q_OBJECT

private slots:
    void conditions() {
        const TuningProblem original = TuningProblem::load(kConvolution);
        const std::uint64_t before = validCount(original);
        QCOMPARE(before, std::uint64_t(220)); // Python's count (python_counts.py)

        const TuningProblem tighter = edit::setCondition(original, 1, "tile_size_x * tile_size_y <= 4");
        QCOMPARE(tighter.conditions[1].expression, std::string("tile_size_x * tile_size_y <= 4"));
        QCOMPARE(tighter.conditions[1].parameters, (std::vector<std::string>{"tile_size_x", "tile_size_y"}));
        QVERIFY(validCount(tighter) < before);
        QCOMPARE(original.conditions[1].expression, std::string("tile_size_x * tile_size_y <= 8")); // untouched

        const TuningProblem added = edit::setCondition(original, original.conditions.size(), "block_size_y == 2");
        QCOMPARE(added.conditions.size(), original.conditions.size() + 1);
        QCOMPARE(added.conditions.back().parameters, std::vector<std::string>{"block_size_y"});
        QVERIFY(validCount(added) < before);

        const TuningProblem removed = edit::removeCondition(added, added.conditions.size() - 1);
        QCOMPARE(removed.conditions, original.conditions);
        QCOMPARE(validCount(removed), before);
        QCOMPARE(removed.toJson(), original.toJson());
    }

    void badEditsAreLocated() {
        const TuningProblem original = TuningProblem::load(kConvolution);
        try {
            edit::setCondition(original, 1, "tile_size_x * tile_sise_y <= 8");
            QFAIL("an unknown name was accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.location(), std::string("/ConfigurationSpace/Conditions/1/Expression"));
            QVERIFY2(e.message().find("column 15") != std::string::npos, e.message().c_str());
            QVERIFY2(e.message().find("tile_sise_y") != std::string::npos, e.message().c_str());
        }
        try {
            edit::setCondition(original, 0, "block_size_x * (2 <= 8");
            QFAIL("a syntax error was accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.location(), std::string("/ConfigurationSpace/Conditions/0/Expression"));
            QVERIFY2(e.message().find("column") != std::string::npos, e.message().c_str());
        }
        QVERIFY_THROWS_EXCEPTION(InputError, edit::setCondition(original, 9, "True"));
        QVERIFY_THROWS_EXCEPTION(InputError, edit::removeCondition(original, 3));
        // A rename leaves the conditions that use the old name failing, and says which.
        try {
            edit::setParameter(original, 0, "filter_w", original.parameters[0].valuesText);
            QFAIL("a rename that breaks a condition was accepted");
        } catch (const InputError& e) {
            QVERIFY2(e.message().find("filter_width") != std::string::npos, e.message().c_str());
        }
    }

    void parameters() {
        const TuningProblem original = TuningProblem::load(kConvolution);
        const std::size_t n = original.parameters.size();
        const TuningProblem more = edit::setParameter(original, n, "unroll", "[2**i for i in range(3)]");
        QCOMPARE(more.parameters.size(), n + 1);
        QCOMPARE(more.parameters.back().type, std::string("int"));
        QCOMPARE(more.parameters.back().values.size(), std::size_t(3));
        QCOMPARE(more.parameters.back().values[2].i, std::int64_t(4));
        QCOMPARE(validCount(more), 3 * validCount(original));
        QCOMPARE(edit::setParameter(original, n, "scale", "[0.5, 1.0]").parameters.back().type, std::string("float"));
        QCOMPARE(edit::setParameter(original, n, "mode", "['a', 'b']").parameters.back().type, std::string("string"));

        const std::size_t tile = static_cast<std::size_t>(original.parameterIndex("tile_size_x"));
        const TuningProblem fewer = edit::setParameter(original, tile, "tile_size_x", "[1, 2]");
        QCOMPARE(fewer.parameters[tile].values.size(), std::size_t(2));
        QCOMPARE(fewer.parameters[tile].type, original.parameters[tile].type);
        QVERIFY(validCount(fewer) < validCount(original));
        QVERIFY_THROWS_EXCEPTION(InputError, edit::setParameter(original, tile, "tile_size_x", "[1, 2"));
        // Typed by mistake into the editor: a list too long to hold is refused at once, located.
        try {
            edit::setParameter(original, tile, "tile_size_x", "range(10**12)");
            QFAIL("a list of 10^12 values was accepted");
        } catch (const InputError& e) {
            QVERIFY2(e.location().find("/TuningParameters/") != std::string::npos, e.location().c_str());
        }
        QVERIFY_THROWS_EXCEPTION(InputError, edit::setParameter(original, tile, "", "[1, 2]"));
        QVERIFY_THROWS_EXCEPTION(InputError, edit::setParameter(original, tile, "block_size_x", "[1, 2]")); // taken

        const TuningProblem moved = edit::moveParameter(original, 0, n - 1);
        QCOMPARE(moved.parameters.back().name, original.parameters.front().name);
        QCOMPARE(validCount(moved), validCount(original));
        QCOMPARE(edit::moveParameter(moved, n - 1, 0).toJson(), original.toJson());

        const TuningProblem dropped = edit::removeParameter(more, n);
        QCOMPARE(dropped.toJson(), original.toJson());
    }

    void fields() {
        const TuningProblem original = TuningProblem::load(kConvolution);
        using J = nlohmann::ordered_json;
        const TuningProblem edited =
            edit::setFields(original, {{"/KernelSpecification/CompilerOptions", J::array({"-use_fast_math"})},
                                       {"/Tilescope/Objective/Name", "GB/s"},
                                       {"/Tilescope/Objective/Count", "4 * 2048 * 2048 * 2"},
                                       {"/Tilescope/Objective/Scale", 1e9}});
        QCOMPARE(edited.compilerOptions, std::vector<std::string>{"-use_fast_math"});
        QVERIFY(edited.objective);
        QCOMPARE(edited.objective->name, std::string("GB/s"));
        QCOMPARE(edited.objective->scale, 1e9);
        // Removing every field of the objective removes it; the result equals the original.
        const TuningProblem back = edit::setFields(edited, {{"/KernelSpecification/CompilerOptions", J(nullptr)},
                                                            {"/Tilescope/Objective/Name", J(nullptr)},
                                                            {"/Tilescope/Objective/Count", J(nullptr)},
                                                            {"/Tilescope/Objective/Scale", J(nullptr)}});
        QVERIFY(!back.objective);
        QCOMPARE(back.toJson(), original.toJson());
        try {
            edit::setFields(original, {{"/KernelSpecification/LocalSize/X", "block_size_x *"}});
            QFAIL("a bad expression was accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.location(), std::string("/KernelSpecification/LocalSize/X"));
        }
    }

    void unknownFieldsSurvive() {
        TuningProblem original = TuningProblem::load(kConvolution);
        nlohmann::ordered_json j = nlohmann::ordered_json::parse(original.toJson());
        j["ConfigurationSpace"]["Conditions"][2]["Comment"] = "kept";
        j["ConfigurationSpace"]["TuningParameters"][1]["Unit"] = "px";
        j["Extra"] = {{"owner", "someone else"}};
        original = TuningProblem::parse(j.dump(), original.fileName, original.baseDir);
        const TuningProblem edited = edit::removeCondition(edit::setCondition(original, 0, "block_size_x >= 32"), 1);
        const auto out = nlohmann::ordered_json::parse(edited.toJson());
        QCOMPARE(out["ConfigurationSpace"]["Conditions"][1]["Comment"], nlohmann::ordered_json("kept"));
        QCOMPARE(out["ConfigurationSpace"]["TuningParameters"][1]["Unit"], nlohmann::ordered_json("px"));
        QCOMPARE(out["Extra"]["owner"], nlohmann::ordered_json("someone else"));
        QCOMPARE(edited.baseDir, original.baseDir);
    }
};

QTEST_GUILESS_MAIN(TestProblemEdit)
#include "tst_problemedit.moc"
