#pragma once

// The register-pressure rule learnt from what compiling told of configs: one function that the
// CLI's analyze, the workbench's compile check and its config details all call. A sample is a
// config with ptxas' report; it spills (a positive) when it has spill stores or loads. The rule
// is the keep-condition of analysis/rulesuggest.h, with its counts over the samples, over the
// heavy spills, and (when asked) over the whole space.

#include "analysis/rulesuggest.h"
#include "model/staticinfo.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

class ConfigSpace;
class TuningProblem;
struct ConfigAnalysis;

/// One config and what ptxas reported for it.
struct SpillSample {
    Config config;
    StaticInfo info;
};

struct SpillRuleOptions {
    /// Count what the rule prunes over the whole space when it has at most this many valid
    /// configs (0: never count).
    std::uint64_t maxSpace = 0;
    /// The space to count over; built from the problem (and cancellable) when null.
    const ConfigSpace* space = nullptr;
    /// Count the catch-all rule over the space too.
    bool countCatchAll = false;
    const std::atomic<bool>* cancel = nullptr;
};

struct SpillRule {
    bool found = false;
    std::string reason;                    ///< when not found: why ("none of the 12 configs compiled spills", ...)
    std::size_t learntFrom = 0;            ///< distinct configs with a report
    std::size_t spilling = 0;              ///< of those, the ones that spill
    SuggestedRule best;                    ///< fewest errors (missed + wrongly removed)
    std::optional<SuggestedRule> catchAll; ///< prunes every spilling config, when `best` misses some
    /// Over the heavy spills (>= kHeavySpillBytes per thread): the positives are the heavy ones.
    RuleCounts heavy;
    std::vector<std::string> parameters;                ///< the parameters `best` names, in the problem's order
    std::uint64_t spaceSize = 0;                        ///< valid configs (0: the space was not built)
    std::optional<std::uint64_t> prunedInSpace;         ///< valid configs `best` prunes, when counted
    std::optional<std::uint64_t> catchAllPrunedInSpace; ///< likewise for `catchAll`
};

/// Learns the rule for `problem` at `shapeIndex` from `samples` (a config given twice counts
/// once). Deterministic; slow for many samples or a large space: call it off a GUI thread.
/// Returns an empty rule (not found, no reason) when cancelled.
SpillRule learnSpillRule(const TuningProblem& problem, std::size_t shapeIndex, std::vector<SpillSample> samples,
                         const SpillRuleOptions& options = {});

/// The samples of the analyses of `arch` that compiled.
std::vector<SpillSample> spillSamples(const std::vector<ConfigAnalysis>& analyses, const std::string& arch);

/// Whether `condition` (a rule's) prunes `config`: false, or raising, for it. Throws InputError
/// when it does not compile.
bool rulePrunes(const TuningProblem& problem, std::size_t shapeIndex, const std::string& condition,
                const Config& config);

} // namespace tilescope
