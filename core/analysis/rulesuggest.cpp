#include "analysis/rulesuggest.h"

#include "base/error.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <unordered_set>

namespace tilescope {

namespace {

struct Feature {
    std::string text;                 // an expression over the parameters
    int complexity = 1;               // 1 parameter, 2 a product or the block size, 3 a product per thread
    std::vector<double> values;       // per sample
    std::vector<std::uint32_t> order; // samples by ascending value
    bool integral = true;
};

struct Term {
    int feature = -1;
    bool upper = true; // feature <= threshold; else feature >= threshold
    double threshold = 0;
};

struct Candidate {
    std::vector<Term> terms; // sorted by feature index
    RuleCounts counts;
    int complexity = 0;
    std::string text;
    std::uint64_t maskHash = 0;
};

// Is the expression text a single name or number (no parentheses needed around it)?
bool isAtom(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    });
}

std::string parenthesized(const std::string& text) {
    return isAtom(text) ? text : "(" + text + ")";
}

std::string numberText(double v, bool integral) {
    if (integral)
        return std::to_string(static_cast<std::int64_t>(v));
    return expr::repr(expr::Value::ofFloat(v));
}

// Slot values of every sample: the shape's, with the parameter slots set from the config.
struct SampleSlots {
    expr::ValueList storage;
    std::vector<expr::Value> base;
    std::vector<std::vector<expr::Value>> rows;
};

void fillSlots(const TuningProblem& problem, std::size_t shapeIndex, const std::vector<RuleSample>& samples,
               SampleSlots& out) {
    out.base = problem.shapeSlots(shapeIndex, out.storage);
    out.rows.assign(samples.size(), out.base);
    for (std::size_t s = 0; s < samples.size(); ++s) {
        const Config& config = samples[s].config;
        for (std::size_t p = 0; p < problem.parameters.size() && p < config.size(); ++p)
            out.rows[s][p] = problem.parameters[p].values.at(config[p]);
    }
}

bool evaluateFeature(const expr::Expression& e, const SampleSlots& slots, std::vector<double>& values, bool& integral) {
    values.resize(slots.rows.size());
    integral = true;
    for (std::size_t s = 0; s < slots.rows.size(); ++s) {
        expr::Value v;
        expr::EvalStatus status;
        if (!e.tryEvaluate(slots.rows[s].data(), v, status))
            return false;
        if (v.kind == expr::Kind::Int || v.kind == expr::Kind::Bool) {
            values[s] = static_cast<double>(v.i);
        } else if (v.kind == expr::Kind::Float && std::isfinite(v.f)) {
            values[s] = v.f;
            integral = integral && v.f == std::floor(v.f) && std::fabs(v.f) < 9.0e15;
        } else {
            return false;
        }
    }
    return true;
}

std::vector<Feature> buildFeatures(const TuningProblem& problem, const SampleSlots& slots) {
    const expr::Scope scope = problem.scope();
    std::vector<std::string> numeric;
    for (const TuningParameter& parameter : problem.parameters) {
        const bool isNumber = !parameter.values.empty() &&
                              std::all_of(parameter.values.begin(), parameter.values.end(), [](const expr::Value& v) {
                                  return v.kind == expr::Kind::Int || v.kind == expr::Kind::Float;
                              });
        if (isNumber)
            numeric.push_back(parameter.name);
    }

    std::vector<std::pair<std::string, int>> texts; // (expression, complexity), simplest first
    for (const std::string& p : numeric)
        texts.emplace_back(p, 1);
    for (std::size_t i = 0; i < numeric.size(); ++i)
        for (std::size_t j = i + 1; j < numeric.size(); ++j)
            texts.emplace_back(numeric[i] + " * " + numeric[j], 2);

    // Threads per block, when the LocalSize depends on the config.
    // A part that is fixed enters as its number: the rule must read in Kernel Tuner too, where
    // an untuned block_size_y (Kernel Tuner's default block names) is no name at all.
    std::vector<std::string> parts;
    const ThreeD block = problem.blockExpressions();
    for (const std::string* part : {&block.x, &block.y, &block.z}) {
        if (part->empty())
            continue;
        try {
            const expr::Expression e = expr::Expression::compile(*part, scope);
            if (!e.isConstant()) {
                parts.push_back(*part);
            } else if (const std::int64_t n = e.evaluateInt(nullptr); n != 1) {
                parts.push_back(std::to_string(n));
            }
        } catch (const expr::ExprError&) {
            parts.push_back(*part); // reported where it is compiled below
        }
    }
    std::string threads = parts.size() == 1 ? parts[0] : std::string();
    if (parts.size() > 1) {
        for (const std::string& part : parts)
            threads += (threads.empty() ? "" : " * ") + parenthesized(part);
    }
    if (!threads.empty()) {
        try {
            const expr::Expression e = expr::Expression::compile(threads, scope);
            const bool usesParameters = std::any_of(e.usedSlots().begin(), e.usedSlots().end(), [&](int slot) {
                return slot < static_cast<int>(problem.parameters.size());
            });
            if (!usesParameters)
                threads.clear();
        } catch (const expr::ExprError&) {
            threads.clear();
        }
    }
    if (!threads.empty()) {
        texts.emplace_back(threads, 2);
        const std::string perThread = " // " + parenthesized(threads);
        for (std::size_t i = 0; i < numeric.size(); ++i)
            for (std::size_t j = i + 1; j < numeric.size(); ++j)
                texts.emplace_back(numeric[i] + " * " + numeric[j] + perThread, 3);
    }

    std::vector<Feature> features;
    std::vector<std::vector<double>> seen;
    for (const auto& [text, complexity] : texts) {
        Feature f;
        f.text = text;
        f.complexity = complexity;
        try {
            const expr::Expression e = expr::Expression::compile(text, scope);
            if (!evaluateFeature(e, slots, f.values, f.integral))
                continue;
        } catch (const expr::ExprError&) {
            continue;
        }
        if (f.values.empty() ||
            std::all_of(f.values.begin(), f.values.end(), [&](double v) { return v == f.values[0]; }))
            continue;
        // Equal on every sample to a simpler feature: it could only tie with it.
        if (std::find(seen.begin(), seen.end(), f.values) != seen.end())
            continue;
        seen.push_back(f.values);
        f.order.resize(f.values.size());
        std::iota(f.order.begin(), f.order.end(), 0u);
        std::stable_sort(f.order.begin(), f.order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return f.values[a] < f.values[b]; });
        features.push_back(std::move(f));
    }
    return features;
}

std::string renderTerm(const Feature& f, const Term& t) {
    return f.text + (t.upper ? " <= " : " >= ") + numberText(t.threshold, f.integral);
}

std::string renderRule(const std::vector<Feature>& features, const std::vector<Term>& terms) {
    std::string text;
    for (const Term& t : terms)
        text += (text.empty() ? "" : " and ") + renderTerm(features[static_cast<std::size_t>(t.feature)], t);
    return text;
}

// A's order: fewest errors; then fewer terms, fewer wrongly removed, simpler, shorter, alphabetical.
bool fewestErrors(const Candidate& a, const Candidate& b) {
    if (a.counts.errors() != b.counts.errors())
        return a.counts.errors() < b.counts.errors();
    if (a.terms.size() != b.terms.size())
        return a.terms.size() < b.terms.size();
    if (a.counts.prunedNegatives != b.counts.prunedNegatives)
        return a.counts.prunedNegatives < b.counts.prunedNegatives;
    if (a.complexity != b.complexity)
        return a.complexity < b.complexity;
    if (a.text.size() != b.text.size())
        return a.text.size() < b.text.size();
    return a.text < b.text;
}

// B's order: fewest missed first (catch every spilling config), then as A.
bool fewestMissed(const Candidate& a, const Candidate& b) {
    if (a.counts.missed() != b.counts.missed())
        return a.counts.missed() < b.counts.missed();
    return fewestErrors(a, b);
}

using Order = std::function<bool(const Candidate&, const Candidate&)>;

class Search {
public:
    Search(const std::vector<Feature>& features, const std::vector<RuleSample>& samples)
        : m_features(features)
        , m_samples(samples) {
        for (const RuleSample& s : samples)
            m_positives += s.positive ? 1 : 0;
    }

    std::vector<bool> keptMask(const std::vector<Term>& terms) const {
        std::vector<bool> kept(m_samples.size(), true);
        for (const Term& t : terms) {
            const Feature& f = m_features[static_cast<std::size_t>(t.feature)];
            for (std::size_t s = 0; s < kept.size(); ++s) {
                if (kept[s])
                    kept[s] = t.upper ? f.values[s] <= t.threshold : f.values[s] >= t.threshold;
            }
        }
        return kept;
    }

    // Every rule that adds one term to `base`, with its counts.
    void extend(const std::vector<Term>& base, std::vector<Candidate>& out) const {
        const std::vector<bool> kept = keptMask(base);
        const std::size_t keptCount = static_cast<std::size_t>(std::count(kept.begin(), kept.end(), true));
        const std::size_t negatives = m_samples.size() - m_positives;
        for (std::size_t fi = 0; fi < m_features.size(); ++fi) {
            const bool used =
                std::any_of(base.begin(), base.end(), [&](const Term& t) { return t.feature == static_cast<int>(fi); });
            if (used)
                continue;
            const Feature& f = m_features[fi];
            for (const bool upper : {true, false}) {
                // Sweep thresholds in the direction that grows the kept set.
                std::size_t keptPositives = 0;
                std::size_t keptNegatives = 0;
                const std::size_t n = f.order.size();
                for (std::size_t k = 0; k < n;) {
                    const double value = f.values[f.order[upper ? k : n - 1 - k]];
                    while (k < n && f.values[f.order[upper ? k : n - 1 - k]] == value) {
                        const std::uint32_t s = f.order[upper ? k : n - 1 - k];
                        if (kept[s])
                            (m_samples[s].positive ? keptPositives : keptNegatives) += 1;
                        ++k;
                    }
                    const std::size_t nowKept = keptPositives + keptNegatives;
                    if (nowKept == 0)
                        continue; // prunes everything
                    if (nowKept == keptCount)
                        break; // the term prunes nothing more, nor will larger thresholds
                    Candidate c;
                    c.terms = base;
                    c.terms.push_back({static_cast<int>(fi), upper, value});
                    std::sort(c.terms.begin(), c.terms.end(),
                              [](const Term& a, const Term& b) { return a.feature < b.feature; });
                    c.counts.total = m_samples.size();
                    c.counts.positives = m_positives;
                    c.counts.prunedPositives = m_positives - keptPositives;
                    c.counts.prunedNegatives = negatives - keptNegatives;
                    c.counts.pruned = c.counts.prunedPositives + c.counts.prunedNegatives;
                    for (const Term& t : c.terms)
                        c.complexity += m_features[static_cast<std::size_t>(t.feature)].complexity;
                    c.text = renderRule(m_features, c.terms);
                    out.push_back(std::move(c));
                }
            }
        }
    }

    std::uint64_t hashMask(const std::vector<Term>& terms) const {
        const std::vector<bool> kept = keptMask(terms);
        std::uint64_t h = 1469598103934665603ull;
        for (std::size_t s = 0; s < kept.size(); ++s) {
            h ^= kept[s] ? (s + 1) * 0x9e3779b97f4a7c15ull : 0x632be59bd9b4e019ull;
            h *= 1099511628211ull;
        }
        return h;
    }

    // Beam search under `order`; returns every candidate seen (deduplicated by what they keep).
    std::vector<Candidate> run(const Order& order, const RuleSearchOptions& options) const {
        std::vector<Candidate> all;
        std::vector<std::vector<Term>> beam = {{}};
        for (int level = 0; level < options.maxTerms && !beam.empty(); ++level) {
            std::vector<Candidate> next;
            for (const std::vector<Term>& base : beam)
                extend(base, next);
            std::sort(next.begin(), next.end(), order);
            beam.clear();
            // The best few of each level are enough for the final choice and the alternatives.
            const std::size_t keep = options.beamWidth + options.alternatives + 1;
            std::size_t kept = 0;
            std::unordered_set<std::uint64_t> masks;
            for (Candidate& c : next) {
                if (kept >= keep)
                    break;
                c.maskHash = hashMask(c.terms);
                if (!masks.insert(c.maskHash).second)
                    continue;
                if (beam.size() < options.beamWidth)
                    beam.push_back(c.terms);
                all.push_back(std::move(c));
                ++kept;
            }
        }
        return all;
    }

private:
    const std::vector<Feature>& m_features;
    const std::vector<RuleSample>& m_samples;
    std::size_t m_positives = 0;
};

SuggestedRule toRule(const Candidate& c) {
    SuggestedRule rule;
    rule.condition = c.text;
    rule.counts = c.counts;
    rule.terms = static_cast<int>(c.terms.size());
    return rule;
}

} // namespace

RuleCounts evaluateRule(const TuningProblem& problem, std::size_t shapeIndex, std::string_view condition,
                        const std::vector<RuleSample>& samples) {
    expr::Expression e;
    try {
        e = expr::Expression::compile(condition, problem.scope());
    } catch (const expr::ExprError& error) {
        throw InputError(problem.fileName, "rule", error.what());
    }
    SampleSlots slots;
    fillSlots(problem, shapeIndex, samples, slots);
    RuleCounts counts;
    counts.total = samples.size();
    for (std::size_t s = 0; s < samples.size(); ++s) {
        counts.positives += samples[s].positive ? 1 : 0;
        expr::Value v;
        expr::EvalStatus status;
        const bool keep = e.tryEvaluate(slots.rows[s].data(), v, status) && expr::truthy(v);
        if (!keep) {
            ++counts.pruned;
            (samples[s].positive ? counts.prunedPositives : counts.prunedNegatives) += 1;
        }
    }
    return counts;
}

std::uint64_t countPrunedInSpace(const TuningProblem& problem, const ConfigSpace& space, std::size_t shapeIndex,
                                 std::string_view condition) {
    expr::Expression e;
    try {
        e = expr::Expression::compile(condition, problem.scope());
    } catch (const expr::ExprError& error) {
        throw InputError(problem.fileName, "rule", error.what());
    }
    expr::ValueList storage;
    std::vector<expr::Value> slots = problem.shapeSlots(shapeIndex, storage);
    std::uint64_t pruned = 0;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
        const Config config = space.at(i);
        for (std::size_t p = 0; p < problem.parameters.size() && p < config.size(); ++p)
            slots[p] = problem.parameters[p].values.at(config[p]);
        expr::Value v;
        expr::EvalStatus status;
        if (!(e.tryEvaluate(slots.data(), v, status) && expr::truthy(v)))
            ++pruned;
    }
    return pruned;
}

RuleSuggestion suggestRule(const TuningProblem& problem, std::size_t shapeIndex, const std::vector<RuleSample>& samples,
                           const RuleSearchOptions& options) {
    RuleSuggestion suggestion;
    const std::size_t positives = static_cast<std::size_t>(
        std::count_if(samples.begin(), samples.end(), [](const RuleSample& s) { return s.positive; }));
    if (samples.empty()) {
        suggestion.reason = "no configs to learn from";
        return suggestion;
    }
    if (positives == 0) {
        suggestion.reason = "no config spills";
        return suggestion;
    }
    if (positives == samples.size()) {
        suggestion.reason = "every config spills: a rule would prune them all";
        return suggestion;
    }

    SampleSlots slots;
    fillSlots(problem, shapeIndex, samples, slots);
    const std::vector<Feature> features = buildFeatures(problem, slots);
    if (features.empty()) {
        suggestion.reason = "no numeric parameter varies among the analysed configs";
        return suggestion;
    }

    const Search search(features, samples);
    std::vector<Candidate> byErrors = search.run(fewestErrors, options);
    std::vector<Candidate> byMissed = search.run(fewestMissed, options);
    byErrors.insert(byErrors.end(), std::make_move_iterator(byMissed.begin()), std::make_move_iterator(byMissed.end()));
    std::vector<Candidate>& pool = byErrors;
    if (pool.empty()) {
        suggestion.reason = "no bound on the parameters separates spilling configs from the others";
        return suggestion;
    }

    // Only rules whose text reproduces their counts are offered (a guard against a feature or
    // threshold that does not print back to what was searched).
    auto verified = [&](const Candidate& c) { return evaluateRule(problem, shapeIndex, c.text, samples) == c.counts; };

    std::sort(pool.begin(), pool.end(), fewestErrors);
    std::unordered_set<std::uint64_t> masks;
    for (const Candidate& c : pool) {
        if (!masks.insert(c.maskHash).second || !verified(c))
            continue;
        if (!suggestion.found) {
            suggestion.best = toRule(c);
            suggestion.found = true;
        } else if (suggestion.alternatives.size() < options.alternatives) {
            suggestion.alternatives.push_back(toRule(c));
        } else {
            break;
        }
    }
    if (!suggestion.found) {
        suggestion.reason = "internal: no candidate rule reproduced its counts";
        return suggestion;
    }
    if (suggestion.best.counts.missed() > 0) {
        std::sort(pool.begin(), pool.end(), fewestMissed);
        for (const Candidate& c : pool) {
            if (c.counts.missed() > 0)
                break;
            if (verified(c)) {
                suggestion.catchAll = toRule(c);
                break;
            }
        }
    }
    return suggestion;
}

} // namespace tilescope
