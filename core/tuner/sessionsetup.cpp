#include "tuner/sessionsetup.h"

#include "base/error.h"
#include "base/textformat.h"
#include "spec/tuningproblem.h"

#include <charconv>

namespace tilescope {

std::string chooseStrategy(const std::optional<std::string>& requested, const TuningProblem& problem,
                           const Budget& budget, const std::function<void(const std::string&)>& note,
                           const std::string& field) {
    std::string strategy;
    if (requested) {
        strategy = *requested;
    } else {
        std::string unknown;
        strategy = defaultStrategy(problem.searchName, budget, &unknown);
        if (!unknown.empty() && note)
            note("the problem's Search.Name '" + unknown + "' is no strategy this version has; tuning with " +
                 strategy + " (--strategy picks one)");
    }
    if (canonicalStrategyName(strategy).empty()) {
        throw InputError("", field, "unknown strategy '" + strategy + "' (known: " + joined(strategyNames()) + ")");
    }
    return strategy;
}

SweepPart parseSweepPart(std::string_view text, const std::string& field) {
    const std::size_t slash = text.find('/');
    SweepPart part;
    const char* begin = text.data();
    const char* end = begin + text.size();
    const auto a = std::from_chars(begin, slash == std::string_view::npos ? end : begin + slash, part.index);
    const auto b = slash == std::string_view::npos ? std::from_chars_result{begin, std::errc::invalid_argument}
                                                   : std::from_chars(begin + slash + 1, end, part.count);
    if (a.ec != std::errc() || b.ec != std::errc() || a.ptr != begin + slash || b.ptr != end || part.count < 1 ||
        part.index < 1 || part.index > part.count)
        throw InputError("", field, "'" + std::string(text) + "' is not I/N with 1 <= I <= N (e.g. 2/4)");
    --part.index;
    return part;
}

} // namespace tilescope
