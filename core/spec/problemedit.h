#pragma once

// Edits of a tuning problem, as an editor makes them: each takes a problem and returns a new one
// with the change, read back through the T1 reader, so an edited problem is checked exactly as a
// loaded file is (expressions compiled, names resolved) and keeps the fields this version does
// not know. A bad edit throws InputError naming the field (and, for an expression, the column);
// the problem given is never changed.

#include "spec/tuningproblem.h"

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope::spec {

/// The value of a plain decimal integer literal ("-12", "4096") that fits 64 bits, else nullopt.
/// Integers in the file (ProblemSize entries, SharedMemory) are kept as such text and written
/// back as JSON integers, so the file stays valid T1; an editor writes them so too.
std::optional<std::int64_t> parseIntegerLiteral(std::string_view text);

} // namespace tilescope::spec

namespace tilescope::edit {

/// Condition `index` becomes `expression` (index == the number of conditions: a new one at the
/// end). Its T1 Parameters list is made from the parameters the expression names.
TuningProblem setCondition(const TuningProblem& problem, std::size_t index, const std::string& expression);
TuningProblem removeCondition(const TuningProblem& problem, std::size_t index);

/// Parameter `index` gets `name` and the values `valuesText` (a list or a list expression:
/// "[16, 32, 64]", "range(1, 9)", "[2**i for i in range(5)]"); index == the number of parameters
/// adds one at the end, its T1 Type taken from the values (int, float, bool or string). Renaming
/// does not rewrite the expressions that use the old name: they fail, naming it.
TuningProblem setParameter(const TuningProblem& problem, std::size_t index, const std::string& name,
                           const std::string& valuesText);
TuningProblem removeParameter(const TuningProblem& problem, std::size_t index);
/// Moves parameter `from` to position `to` (configs index parameters in this order).
TuningProblem moveParameter(const TuningProblem& problem, std::size_t from, std::size_t to);

/// Sets the fields at the given JSON pointers ("/KernelSpecification/CompilerOptions",
/// "/Tilescope/Objective/Count", ...) to the given JSON values, all in one edit; a null value
/// removes the field, and an object left empty by that goes too. For the fields a form edits.
/// Fields that change nothing return `problem` as it is.
TuningProblem setFields(const TuningProblem& problem,
                        const std::vector<std::pair<std::string, nlohmann::ordered_json>>& fields);

/// The names of `problem`'s parameters that `expression` uses, in the problem's order.
std::vector<std::string> parametersUsed(const TuningProblem& problem, const std::string& expression);

} // namespace tilescope::edit
