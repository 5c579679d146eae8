#pragma once

// Helpers shared by the T1 reader, the writer and TuningProblem's own functions. Internal to
// core/spec/.

#include "expr/expr.h"
#include "spec/problemedit.h" // parseIntegerLiteral

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tilescope::spec {

// ordered_json keeps the members in file order, so unknown fields go back where the user expects.
using Json = nlohmann::ordered_json;

/// "column 5: NameError: unknown name 'BLOCK_Q' in 'BLOCK_Q * 2'": the whole story of an
/// expression error in one line, for an InputError whose location is the field.
std::string describeExprError(const expr::ExprError& e);
/// "NameError: unknown name 'BLOCK_Q' in 'BLOCK_Q * 2' at column 1": the same story for a
/// message that names the field itself (launch geometry, arguments).
std::string describeExprErrorInline(const expr::ExprError& e);
/// A double with every digit it needs to round-trip ("%.17g"), for messages about values.
std::string exactNumber(double v);

} // namespace tilescope::spec
