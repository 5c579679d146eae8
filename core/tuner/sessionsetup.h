#pragma once

// What a front end asks of a session, checked and completed the one way: the strategy when none
// is named, and one part of a sweep split across tasks.

#include "search/strategy.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tilescope {

class TuningProblem;

/// The strategy a session takes: `requested` when given, else the problem's Search.Name, else the
/// default for `budget` (defaultStrategy). `note` hears when the problem names a strategy this
/// version does not have. Throws InputError (location `field`) when the name is no strategy,
/// listing the known ones.
std::string chooseStrategy(const std::optional<std::string>& requested, const TuningProblem& problem,
                           const Budget& budget, const std::function<void(const std::string&)>& note = {},
                           const std::string& field = "--strategy");

/// One part of an exhaustive sweep split across tasks (SessionOptions::partIndex, partCount).
struct SweepPart {
    std::uint64_t index = 0; ///< 0-based
    std::uint64_t count = 1;
};

/// "I/N" with 1 <= I <= N ("2/4": the second of four parts). Throws InputError (location `field`).
SweepPart parseSweepPart(std::string_view text, const std::string& field = "--part");

} // namespace tilescope
