// Fuzzes the expression language: compiling a condition (and evaluating it over a few values
// of its names, where bounds on partial configs must not rule out a value that holds),
// colouring it (lexemes), and parsing a parameter's value list.

#include "fuzzing.h"

#include <array>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    fuzz::refuseCleanly("expression", [&] {
        expr::Scope scope;
        scope.addVariable("BLOCK_M");
        scope.addVariable("x");
        scope.setValueList("x", {expr::Value::ofInt(1), expr::Value::ofInt(8)});
        scope.addConstant("K", expr::Value::ofInt(4096));
        const expr::Expression e = expr::Expression::compile(text, scope);
        for (const std::int64_t v : {std::int64_t(-1), std::int64_t(0), std::int64_t(1), std::int64_t(7),
                                     std::int64_t(64), std::int64_t(1) << 40}) {
            const expr::Value slots[] = {expr::Value::ofInt(v), expr::Value::ofInt(v / 2)};
            expr::Value out;
            expr::EvalStatus status;
            if (!e.tryEvaluate(slots, out, status)) {
                (void)e.errorFor(status).what();
                continue;
            }
            // Bounds on partial configs never rule out a true case: bound, or unbound within any
            // range around the values it holds.
            if (!expr::truthy(out))
                continue;
            const auto d = static_cast<double>(v);
            const expr::SlotRange bound;
            const expr::SlotRange around{false, true, true, d - 3, d + 5};
            const expr::SlotRange half{false, true, true, static_cast<double>(v / 2) - 1, static_cast<double>(v / 2)};
            const expr::SlotRange anything{false, false, false, 0, 0};
            for (const auto& ranges : {std::array{bound, bound}, std::array{around, bound}, std::array{bound, half},
                                       std::array{around, half}, std::array{anything, anything}})
                if (!e.mayHold(slots, ranges.data()))
                    std::abort(); // a bound ruled out a value that holds
        }
    });
    const auto lexemes = expr::lexemes(text);
    for (const expr::Lexeme& l : lexemes)
        if (l.start + l.length > text.size())
            std::abort(); // a lexeme past the text
    fuzz::refuseCleanly("value list", [&] {
        std::vector<std::unique_ptr<std::string>> strings;
        (void)expr::parseValueList(text, strings);
    });
    return 0;
}
