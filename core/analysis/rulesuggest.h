#pragma once

// Register-pressure rule suggestion: a T1 condition over a problem's parameters that keeps the
// configs that do not spill and prunes those that do. Candidates are bounds on simple features
// (a parameter, a product of two, the block size, a product per thread such as
// BLOCK_M * BLOCK_N // threads) and conjunctions of a few; a beam search picks the one that
// misclassifies fewest configs, preferring fewer terms and fewer wrongly removed configs.

#include "space/configspace.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

class TuningProblem;

/// One analysed config and whether a rule should prune it (it spills).
struct RuleSample {
    Config config;
    bool positive = false;
};

/// What a keep-condition does to a set of samples. Pruned = the condition is false.
struct RuleCounts {
    std::size_t total = 0;
    std::size_t positives = 0;       ///< samples that should go (spilling)
    std::size_t pruned = 0;          ///< samples the condition removes
    std::size_t prunedPositives = 0; ///< spilling samples it removes (caught)
    std::size_t prunedNegatives = 0; ///< non-spilling samples it removes (wrongly)

    std::size_t missed() const { return positives - prunedPositives; } ///< spilling samples it keeps
    std::size_t errors() const { return missed() + prunedNegatives; }
    bool operator==(const RuleCounts&) const = default;
};

struct SuggestedRule {
    std::string condition; ///< a T1 condition (Python syntax), true for configs to keep
    RuleCounts counts;     ///< over the samples, recounted from `condition` itself
    int terms = 0;         ///< conjuncts
};

struct RuleSuggestion {
    bool found = false;
    std::string reason; ///< when not found: why ("no config spills", ...)
    SuggestedRule best; ///< fewest errors (missed + wrongly removed)
    /// The rule that prunes every spilling sample with the fewest non-spilling ones removed,
    /// when `best` misses some (absent otherwise, or when no candidate catches them all).
    std::optional<SuggestedRule> catchAll;
    std::vector<SuggestedRule> alternatives; ///< the next best distinct rules, best first
};

struct RuleSearchOptions {
    int maxTerms = 3;           ///< conjuncts at most
    std::size_t beamWidth = 24; ///< partial rules kept per step
    std::size_t alternatives = 3;
};

/// Searches a keep-condition separating the positive samples from the others, over the
/// parameters of `problem` (shape `shapeIndex` gives the values of shape names the block size
/// may use). Deterministic. Every rule it returns compiles against problem.scope() and
/// reproduces its counts when evaluated (checked before it is returned).
RuleSuggestion suggestRule(const TuningProblem& problem, std::size_t shapeIndex, const std::vector<RuleSample>& samples,
                           const RuleSearchOptions& options = {});

/// Counts what `condition` prunes among `samples` (a condition that raises for a config counts
/// as false, as in ConfigSpace). Throws InputError when it does not compile.
RuleCounts evaluateRule(const TuningProblem& problem, std::size_t shapeIndex, std::string_view condition,
                        const std::vector<RuleSample>& samples);

/// How many valid configs of `space` the condition prunes (false or raising).
std::uint64_t countPrunedInSpace(const TuningProblem& problem, const ConfigSpace& space, std::size_t shapeIndex,
                                 std::string_view condition);

} // namespace tilescope
