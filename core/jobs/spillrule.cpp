#include "jobs/spillrule.h"

#include "analysis/staticanalysis.h"
#include "base/textformat.h"
#include "expr/expr.h"
#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <set>

namespace tilescope {

namespace {

// The parameters a condition names, in the problem's order (T1 Conditions list them).
std::vector<std::string> conditionParameters(const TuningProblem& problem, const std::string& condition) {
    std::vector<std::string> names;
    const expr::Expression e = expr::Expression::compile(condition, problem.scope());
    for (int slot : e.usedSlots()) {
        if (slot < static_cast<int>(problem.parameters.size()))
            names.push_back(problem.parameters[static_cast<std::size_t>(slot)].name);
    }
    return names;
}

// What the rule prunes over the whole space, when it is small enough to walk.
void countOverSpace(const TuningProblem& problem, std::size_t shapeIndex, const SpillRuleOptions& options,
                    SpillRule& rule) {
    try {
        std::optional<ConfigSpace> built;
        const ConfigSpace* space = options.space;
        if (!space) {
            SpaceLimits limits;
            limits.cancel = options.cancel;
            built.emplace(ConfigSpace::build(problem, shapeIndex, limits));
            space = &*built;
        }
        rule.spaceSize = space->size();
        if (space->size() > options.maxSpace)
            return;
        rule.prunedInSpace = countPrunedInSpace(problem, *space, shapeIndex, rule.best.condition);
        if (rule.catchAll && options.countCatchAll)
            rule.catchAllPrunedInSpace = countPrunedInSpace(problem, *space, shapeIndex, rule.catchAll->condition);
    } catch (const std::exception&) {
        // Too large or cancelled: the count over the space stays unknown.
    }
}

} // namespace

SpillRule learnSpillRule(const TuningProblem& problem, std::size_t shapeIndex, std::vector<SpillSample> samples,
                         const SpillRuleOptions& options) {
    SpillRule rule;
    std::vector<RuleSample> ruleSamples;
    std::vector<RuleSample> heavySamples;
    std::set<Config> seen;
    for (SpillSample& s : samples) {
        if (!seen.insert(s.config).second)
            continue;
        rule.spilling += s.info.spills() ? 1 : 0;
        heavySamples.push_back({s.config, classifySpill(s.info) == SpillClass::Heavy});
        ruleSamples.push_back({std::move(s.config), s.info.spills()});
    }
    rule.learntFrom = ruleSamples.size();
    if (ruleSamples.empty()) {
        rule.reason = "no config compiled with a report of its registers and spills";
        return rule;
    }
    if (rule.spilling == 0) {
        rule.reason = "none of the " + formatCount(static_cast<double>(rule.learntFrom)) +
                      (rule.learntFrom == 1 ? " config compiled spills" : " configs compiled spills");
        return rule;
    }
    if (options.cancel && options.cancel->load())
        return rule;
    const RuleSuggestion suggestion = suggestRule(problem, shapeIndex, ruleSamples);
    if (!suggestion.found) {
        rule.reason = suggestion.reason;
        return rule;
    }
    rule.found = true;
    rule.best = suggestion.best;
    rule.catchAll = suggestion.catchAll;
    rule.parameters = conditionParameters(problem, rule.best.condition);
    rule.heavy = evaluateRule(problem, shapeIndex, rule.best.condition, heavySamples);
    if (options.maxSpace > 0 && !(options.cancel && options.cancel->load()))
        countOverSpace(problem, shapeIndex, options, rule);
    return rule;
}

std::vector<SpillSample> spillSamples(const std::vector<ConfigAnalysis>& analyses, const std::string& arch) {
    std::vector<SpillSample> samples;
    for (const ConfigAnalysis& a : analyses) {
        if (a.arch == arch && a.compiled())
            samples.push_back({a.config, a.info});
    }
    return samples;
}

bool rulePrunes(const TuningProblem& problem, std::size_t shapeIndex, const std::string& condition,
                const Config& config) {
    return evaluateRule(problem, shapeIndex, condition, {RuleSample{config, false}}).pruned > 0;
}

} // namespace tilescope
