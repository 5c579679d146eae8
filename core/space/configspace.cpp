// Enumeration by constraint propagation with memoised counting.
//
// Parameters are bound one at a time in a search order chosen so that conditions can be
// checked early. A condition is checked at the level where the last of its parameters is
// bound. The number of valid completions below a level depends only on the values of the
// "frontier": the parameters bound above it that conditions further down still read. Those
// counts are memoised per (level, frontier values), which makes counting, ranking and
// unranking cheap for the usual spaces (conditions over few parameters each), and lets spaces
// too large to hold (10^12 raw) be counted, indexed and sampled without enumerating them.
//
// A condition over many parameters is checked only once all of them are bound, so on its own it
// prunes nothing above that level: "P0 + P1 + P2 + P3 + P4 == 17" over range(1000) each would
// be evaluated 10^15 times. So on the levels above, each such condition is bounded on the
// partial config (Expression::mayHold: interval arithmetic with the unbound parameters' value
// ranges), and a partial config no completion can satisfy is cut there (P0 = 18 here). That
// is sound, so counts do not change; only work does. A bound that never prunes stops being
// tried. What still needs more than SpaceLimits::maxEvaluations is refused, saying which
// condition and how many valid configs were found by then.

#include "space/configspace.h"

#include "base/error.h"
#include "base/textformat.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace tilescope {

using expr::Value;

__extension__ typedef unsigned __int128 Uint128; // GCC and Clang; -Wpedantic knows no 128-bit type

std::uint64_t uniformBelow(std::mt19937_64& rng, std::uint64_t n) {
    // Lemire's multiply-shift with rejection: unbiased and the same everywhere.
    if (n <= 1)
        return 0;
    Uint128 m = static_cast<Uint128>(rng()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
        const std::uint64_t threshold = (0 - n) % n;
        while (low < threshold) {
            m = static_cast<Uint128>(rng()) * n;
            low = static_cast<std::uint64_t>(m);
        }
    }
    return static_cast<std::uint64_t>(m >> 64);
}

namespace {

struct TooLarge {
    std::string what;
};

// Counting ran past SpaceLimits::maxEvaluations.
struct OutOfWork {};

// A bound on a condition tried at a level above the one that checks it; it stops being tried
// when it rarely prunes (a bound costs several exact evaluations, and cuts nothing then).
struct Probe {
    int condition = -1;
    std::uint64_t tries = 0;
    std::uint64_t prunes = 0;
    bool off = false;
};

struct Level {
    int param = -1;
    std::vector<int> conditions; // checked when this level's parameter is bound
    std::vector<int> frontier;   // parameters bound above that conditions at this level or below read
    std::vector<int> shifts;     // bit offset of each frontier parameter in the packed key
    bool packable = true;        // the frontier fits in 64 bits
    bool freeBelow = false;      // no condition at this level or below: every completion is valid
    std::vector<int> bounded;    // conditions checked further down that read this level's parameter
};

int bitsFor(std::size_t n) {
    int b = 0;
    while ((std::size_t(1) << b) < n)
        ++b;
    return std::max(b, 1);
}

std::uint64_t checkedAdd(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r;
    if (__builtin_add_overflow(a, b, &r))
        throw TooLarge{"the space has more than 2^64 valid configs"};
    return r;
}

} // namespace

struct ConfigSpace::Impl {
    // definition
    std::vector<std::string> names;
    std::vector<std::vector<Value>> values;
    std::vector<expr::Expression> conditions;
    std::vector<std::vector<int>> conditionParams; // parameters each condition reads
    std::vector<Value> baseSlots;                  // the shape's slots; parameter slots are overwritten
    expr::ValueList problemSizeStorage;
    std::shared_ptr<const void> keepAlive; // string storage of the parameter values
    SpaceLimits limits;

    // structure
    std::vector<Level> levels;
    std::vector<int> levelOf; // parameter -> level
    bool constantFalse = false;

    // results
    SpaceStats stats;
    std::uint64_t count = 0;
    std::vector<std::unordered_map<std::uint64_t, std::uint64_t>> memo;   // per level, packed keys
    std::vector<std::unordered_map<std::string, std::uint64_t>> wideMemo; // per level, when keys are wider
    std::uint64_t memoEntries = 0;
    std::vector<std::uint16_t> flat; // materialised configs in search order, each in parameter order
    // An explicit config list (Tilescope.Configs): per level k, the listed configs' values at
    // levels 0..k (two bytes each, in level order); a partial config off every listed one is
    // pruned there. listedFull holds the whole configs in parameter order.
    bool listed = false;
    std::vector<Config> list;
    std::vector<std::unordered_set<std::string>> listedPrefixes;
    std::unordered_set<std::string> listedFull;
    std::uint64_t visits = 0; // for polling the cancel flag now and then
    // Bounds on partial configs: per level, the slots' ranges with the parameters of the levels
    // below it unbound, and the probes of its bounded conditions.
    std::vector<std::vector<expr::SlotRange>> levelRanges;
    std::vector<std::vector<Probe>> probes;
    std::uint64_t validFound = 0;        // valid configs reached one by one while counting (a lower bound)
    std::uint64_t evaluationsBefore = 0; // conditionEvaluations when this pass over the space began

    int paramCount() const { return static_cast<int>(names.size()); }

    // ---------------------------------------------------------------- setup

    void chooseOrder() {
        const int P = paramCount();
        const int C = static_cast<int>(conditions.size());
        std::vector<bool> bound(static_cast<std::size_t>(P), false);
        std::vector<int> missing(static_cast<std::size_t>(C));
        std::vector<int> uses(static_cast<std::size_t>(P), 0);
        for (int c = 0; c < C; ++c) {
            missing[static_cast<std::size_t>(c)] =
                static_cast<int>(conditionParams[static_cast<std::size_t>(c)].size());
            for (int p : conditionParams[static_cast<std::size_t>(c)])
                ++uses[static_cast<std::size_t>(p)];
        }
        std::vector<int> order;
        for (int step = 0; step < P; ++step) {
            // Prefer the parameter that completes the most conditions (they prune now), then the one
            // that brings the most conditions closer to completion, then the one with fewer values
            // (a narrower tree near the root), then declaration order.
            int best = -1;
            double bestScore = -std::numeric_limits<double>::infinity();
            for (int p = 0; p < P; ++p) {
                if (bound[static_cast<std::size_t>(p)])
                    continue;
                double completes = 0, advances = 0;
                for (int c = 0; c < C; ++c) {
                    const auto& ps = conditionParams[static_cast<std::size_t>(c)];
                    if (std::find(ps.begin(), ps.end(), p) == ps.end())
                        continue;
                    const int m = missing[static_cast<std::size_t>(c)];
                    if (m == 1)
                        completes += 1;
                    else
                        advances += 1.0 / m;
                }
                const double score =
                    completes * 1e6 + advances * 1e3 + (uses[static_cast<std::size_t>(p)] > 0 ? 100 : 0) -
                    std::min<double>(99, static_cast<double>(values[static_cast<std::size_t>(p)].size()));
                if (score > bestScore) {
                    bestScore = score;
                    best = p;
                }
            }
            bound[static_cast<std::size_t>(best)] = true;
            order.push_back(best);
            for (int c = 0; c < C; ++c) {
                const auto& ps = conditionParams[static_cast<std::size_t>(c)];
                if (std::find(ps.begin(), ps.end(), best) != ps.end())
                    --missing[static_cast<std::size_t>(c)];
            }
        }

        levels.assign(static_cast<std::size_t>(P), Level{});
        levelOf.assign(static_cast<std::size_t>(P), -1);
        for (int k = 0; k < P; ++k) {
            levels[static_cast<std::size_t>(k)].param = order[static_cast<std::size_t>(k)];
            levelOf[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] = k;
        }
        std::vector<int> checkedAt(static_cast<std::size_t>(C), -1);
        for (int c = 0; c < C; ++c) {
            int at = -1;
            for (int p : conditionParams[static_cast<std::size_t>(c)])
                at = std::max(at, levelOf[static_cast<std::size_t>(p)]);
            checkedAt[static_cast<std::size_t>(c)] = at;
            if (at >= 0)
                levels[static_cast<std::size_t>(at)].conditions.push_back(c);
            for (int p : conditionParams[static_cast<std::size_t>(c)]) {
                const int k = levelOf[static_cast<std::size_t>(p)];
                if (k < at)
                    levels[static_cast<std::size_t>(k)].bounded.push_back(c);
            }
        }
        setUpBounds();
        for (int k = 0; k < P; ++k) {
            Level& level = levels[static_cast<std::size_t>(k)];
            std::vector<bool> inFrontier(static_cast<std::size_t>(P), false);
            bool anyBelow = false;
            for (int c = 0; c < C; ++c) {
                if (checkedAt[static_cast<std::size_t>(c)] < k)
                    continue;
                anyBelow = true;
                for (int p : conditionParams[static_cast<std::size_t>(c)])
                    if (levelOf[static_cast<std::size_t>(p)] < k)
                        inFrontier[static_cast<std::size_t>(p)] = true;
            }
            if (listed) { // the list's check at every level reads all the parameters bound so far
                anyBelow = true;
                for (int j = 0; j < k; ++j)
                    inFrontier[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])] = true;
            }
            level.freeBelow = !anyBelow;
            int shift = 0;
            for (int j = 0; j < k; ++j) { // frontier in level order
                const int p = order[static_cast<std::size_t>(j)];
                if (!inFrontier[static_cast<std::size_t>(p)])
                    continue;
                level.frontier.push_back(p);
                level.shifts.push_back(shift);
                shift += bitsFor(values[static_cast<std::size_t>(p)].size());
            }
            level.packable = shift <= 64;
        }
        stats.searchOrder = order;
    }

    // The ranges of the parameters' values, for bounding conditions on partial configs: a
    // parameter with a non-number among its values (or an int beyond 2^52, where doubles round)
    // is left unbounded.
    void setUpBounds() {
        const int P = paramCount();
        std::vector<expr::SlotRange> unbound(static_cast<std::size_t>(P));
        for (int p = 0; p < P; ++p) {
            expr::SlotRange& r = unbound[static_cast<std::size_t>(p)];
            r.bound = false;
            r.numeric = true;
            r.integral = true;
            r.lo = std::numeric_limits<double>::infinity();
            r.hi = -r.lo;
            for (const Value& v : values[static_cast<std::size_t>(p)]) {
                double d = 0;
                if (v.kind == expr::Kind::Int || v.kind == expr::Kind::Bool) {
                    d = static_cast<double>(v.i);
                    if (std::fabs(d) > 4503599627370496.0)
                        r.numeric = false;
                } else if (v.kind == expr::Kind::Float && std::isfinite(v.f)) {
                    d = v.f;
                    r.integral = false;
                } else {
                    r.numeric = false;
                }
                r.lo = std::min(r.lo, d);
                r.hi = std::max(r.hi, d);
            }
            if (!r.numeric || values[static_cast<std::size_t>(p)].empty())
                r = expr::SlotRange{false, false, false, 0, 0};
        }
        levelRanges.assign(levels.size(), {});
        probes.assign(levels.size(), {});
        for (std::size_t k = 0; k < levels.size(); ++k) {
            std::vector<expr::SlotRange>& ranges = levelRanges[k];
            ranges.assign(baseSlots.size(), expr::SlotRange{});
            for (std::size_t j = k + 1; j < levels.size(); ++j) {
                const auto p = static_cast<std::size_t>(levels[j].param);
                if (p < ranges.size())
                    ranges[p] = unbound[p];
            }
            for (int c : levels[k].bounded) {
                Probe probe;
                probe.condition = c;
                probes[k].push_back(probe);
            }
        }
    }

    // ---------------------------------------------------------------- evaluation state

    struct State {
        std::vector<Value> slots;
        std::vector<std::uint16_t> idx; // per parameter
    };

    State freshState() const {
        State s;
        s.slots = baseSlots;
        s.idx.assign(static_cast<std::size_t>(paramCount()), 0);
        return s;
    }

    void bind(State& s, int p, std::uint16_t v) const {
        s.idx[static_cast<std::size_t>(p)] = v;
        s.slots[static_cast<std::size_t>(p)] = values[static_cast<std::size_t>(p)][v];
    }

    // Conditions of one level; a condition that raises counts as failing (and is recorded when
    // `record` is set, which only the build does).
    static void appendIndex(std::string& key, std::uint16_t v) {
        key.push_back(static_cast<char>(v & 0xff));
        key.push_back(static_cast<char>(v >> 8));
    }

    // Whether the values bound at levels 0..k begin a listed config (always, without a list).
    bool listAllows(const State& s, const Level& level) const {
        if (!listed)
            return true;
        const int k = levelOf[static_cast<std::size_t>(level.param)];
        std::string key;
        for (int j = 0; j <= k; ++j)
            appendIndex(key, s.idx[static_cast<std::size_t>(levels[static_cast<std::size_t>(j)].param)]);
        return listedPrefixes[static_cast<std::size_t>(k)].count(key) > 0;
    }

    void indexList() {
        listedPrefixes.assign(levels.size(), {});
        for (const Config& c : list) {
            if (static_cast<int>(c.size()) != paramCount())
                continue;
            std::string key;
            for (std::size_t k = 0; k < levels.size(); ++k) {
                appendIndex(key, c[static_cast<std::size_t>(levels[k].param)]);
                listedPrefixes[k].insert(key);
            }
            std::string full;
            for (std::uint16_t v : c)
                appendIndex(full, v);
            listedFull.insert(std::move(full));
        }
    }

    bool passes(const State& s, const Level& level, bool record) {
        if ((++visits & 0xfff) == 0) {
            if (limits.cancel && limits.cancel->load(std::memory_order_relaxed))
                throw Cancelled();
            if (stats.conditionEvaluations - evaluationsBefore > limits.maxEvaluations)
                throw OutOfWork{};
        }
        if (!listAllows(s, level))
            return false;
        for (int c : level.conditions) {
            Value out;
            expr::EvalStatus st;
            ++stats.conditionEvaluations;
            if (!conditions[static_cast<std::size_t>(c)].tryEvaluate(s.slots.data(), out, st)) {
                if (record)
                    recordFailure(c, s, st);
                return false;
            }
            if (!expr::truthy(out))
                return false;
        }
        return boundsAllow(s, levelOf[static_cast<std::size_t>(level.param)]);
    }

    bool passesConst(const State& s, const Level& level) const {
        if (!listAllows(s, level))
            return false;
        for (int c : level.conditions) {
            Value out;
            expr::EvalStatus st;
            if (!conditions[static_cast<std::size_t>(c)].tryEvaluate(s.slots.data(), out, st) || !expr::truthy(out))
                return false;
        }
        return true;
    }

    // Whether a partial config bound up to `level` may still satisfy the conditions checked
    // below it; counts each bound as an evaluation.
    bool boundsAllow(const State& s, int k) {
        for (Probe& probe : probes[static_cast<std::size_t>(k)]) {
            if (probe.off)
                continue;
            ++stats.conditionEvaluations;
            ++probe.tries;
            if (!conditions[static_cast<std::size_t>(probe.condition)].mayHold(
                    s.slots.data(), levelRanges[static_cast<std::size_t>(k)].data())) {
                ++probe.prunes;
                return false;
            }
            // Reviewed at every power of two from 1024 tries: one prune in 64 tries at least.
            if (probe.tries >= 1024 && (probe.tries & (probe.tries - 1)) == 0 && probe.prunes * 64 < probe.tries)
                probe.off = true;
        }
        return true;
    }

    void recordFailure(int c, const State& s, const expr::EvalStatus& st) {
        auto it = std::find_if(stats.failures.begin(), stats.failures.end(),
                               [c](const ConditionFailure& f) { return f.condition == c; });
        if (it == stats.failures.end()) {
            ConditionFailure f;
            f.condition = c;
            f.firstError = conditions[static_cast<std::size_t>(c)].errorFor(st).what();
            f.firstConfig = Config(s.idx.begin(), s.idx.end());
            stats.failures.push_back(std::move(f));
            it = stats.failures.end() - 1;
        }
        ++it->count;
    }

    // ---------------------------------------------------------------- memoised counting

    std::uint64_t packKey(const State& s, const Level& level) const {
        std::uint64_t key = 0;
        for (std::size_t j = 0; j < level.frontier.size(); ++j)
            key |= static_cast<std::uint64_t>(s.idx[static_cast<std::size_t>(level.frontier[j])]) << level.shifts[j];
        return key;
    }

    std::string wideKey(const State& s, const Level& level) const {
        std::string key;
        for (int p : level.frontier) {
            const std::uint16_t v = s.idx[static_cast<std::size_t>(p)];
            key.push_back(static_cast<char>(v & 0xff));
            key.push_back(static_cast<char>(v >> 8));
        }
        return key;
    }

    const std::uint64_t* lookup(const State& s, int k) const {
        const Level& level = levels[static_cast<std::size_t>(k)];
        if (level.packable) {
            const auto& m = memo[static_cast<std::size_t>(k)];
            auto it = m.find(packKey(s, level));
            return it == m.end() ? nullptr : &it->second;
        }
        const auto& m = wideMemo[static_cast<std::size_t>(k)];
        auto it = m.find(wideKey(s, level));
        return it == m.end() ? nullptr : &it->second;
    }

    void store(const State& s, int k, std::uint64_t c) {
        const Level& level = levels[static_cast<std::size_t>(k)];
        if (++memoEntries > limits.maxMemoEntries)
            throw TooLarge{"counting it needs more than " + std::to_string(limits.maxMemoEntries) +
                           " partial configs in memory"};
        if (level.packable)
            memo[static_cast<std::size_t>(k)].emplace(packKey(s, level), c);
        else
            wideMemo[static_cast<std::size_t>(k)].emplace(wideKey(s, level), c);
    }

    std::uint64_t freeProduct(int k) const {
        std::uint64_t product = 1;
        for (std::size_t j = static_cast<std::size_t>(k); j < levels.size(); ++j) {
            if (__builtin_mul_overflow(product, values[static_cast<std::size_t>(levels[j].param)].size(), &product))
                throw TooLarge{"the space has more than 2^64 valid configs"};
        }
        return product;
    }

    // Valid completions of levels k.. given the bound values in `s`.
    std::uint64_t countFrom(State& s, int k) {
        if (k == paramCount()) {
            ++validFound;
            return 1;
        }
        const Level& level = levels[static_cast<std::size_t>(k)];
        if (level.freeBelow)
            return freeProduct(k);
        if (const std::uint64_t* known = lookup(s, k))
            return *known;
        std::uint64_t total = 0;
        const auto n = static_cast<std::uint16_t>(values[static_cast<std::size_t>(level.param)].size());
        for (std::uint16_t v = 0; v < n; ++v) {
            bind(s, level.param, v);
            if (passes(s, level, true))
                total = checkedAdd(total, countFrom(s, k + 1));
        }
        store(s, k, total);
        return total;
    }

    // Count of completions below level k (after binding level k-1); the memo has every reachable entry.
    std::uint64_t completions(const State& s, int k) const {
        if (k == paramCount())
            return 1;
        const Level& level = levels[static_cast<std::size_t>(k)];
        if (level.freeBelow)
            return freeProduct(k);
        const std::uint64_t* known = lookup(s, k);
        return known ? *known : 0;
    }

    // ---------------------------------------------------------------- materialising

    void enumerate(State& s, int k) {
        if (k == paramCount()) {
            flat.insert(flat.end(), s.idx.begin(), s.idx.end());
            return;
        }
        const Level& level = levels[static_cast<std::size_t>(k)];
        const auto n = static_cast<std::uint16_t>(values[static_cast<std::size_t>(level.param)].size());
        for (std::uint16_t v = 0; v < n; ++v) {
            bind(s, level.param, v);
            if (!level.freeBelow && !passesConst(s, level))
                continue;
            if (completions(s, k + 1) == 0)
                continue;
            enumerate(s, k + 1);
        }
    }

    // Plain DFS that materialises without counting first (used when the memo overflows).
    void enumerateUncounted(State& s, int k, std::uint64_t maxConfigs) {
        if (k == paramCount()) {
            if (flat.size() / static_cast<std::size_t>(std::max(1, paramCount())) >= maxConfigs)
                throw TooLarge{"it has more than " + std::to_string(maxConfigs) + " valid configs"};
            flat.insert(flat.end(), s.idx.begin(), s.idx.end());
            ++validFound;
            return;
        }
        const Level& level = levels[static_cast<std::size_t>(k)];
        const auto n = static_cast<std::uint16_t>(values[static_cast<std::size_t>(level.param)].size());
        for (std::uint16_t v = 0; v < n; ++v) {
            bind(s, level.param, v);
            if (passes(s, level, true))
                enumerateUncounted(s, k + 1, maxConfigs);
        }
    }

    std::size_t stride() const { return static_cast<std::size_t>(std::max(1, paramCount())); }

    // ---------------------------------------------------------------- ranking

    Config unrank(std::uint64_t index) const {
        if (!flat.empty() || (count > 0 && paramCount() == 0)) {
            const std::size_t at = static_cast<std::size_t>(index) * stride();
            return Config(flat.begin() + static_cast<std::ptrdiff_t>(at),
                          flat.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(paramCount())));
        }
        State s = freshState();
        for (int k = 0; k < paramCount(); ++k) {
            const Level& level = levels[static_cast<std::size_t>(k)];
            const auto n = static_cast<std::uint16_t>(values[static_cast<std::size_t>(level.param)].size());
            bool found = false;
            for (std::uint16_t v = 0; v < n; ++v) {
                bind(s, level.param, v);
                if (!level.freeBelow && !passesConst(s, level))
                    continue;
                const std::uint64_t c = completions(s, k + 1);
                if (index < c) {
                    found = true;
                    break;
                }
                index -= c;
            }
            if (!found)
                return {};
        }
        return Config(s.idx.begin(), s.idx.end());
    }

    bool lessInSearchOrder(const std::uint16_t* a, const Config& b) const {
        for (const Level& level : levels) {
            const auto p = static_cast<std::size_t>(level.param);
            if (a[p] != b[p])
                return a[p] < b[p];
        }
        return false;
    }

    std::optional<std::uint64_t> rank(const Config& config) const {
        if (static_cast<int>(config.size()) != paramCount())
            return std::nullopt;
        for (int p = 0; p < paramCount(); ++p)
            if (config[static_cast<std::size_t>(p)] >= values[static_cast<std::size_t>(p)].size())
                return std::nullopt;
        if (!flat.empty()) {
            const std::size_t n = flat.size() / stride();
            std::size_t lo = 0, hi = n;
            while (lo < hi) {
                const std::size_t mid = (lo + hi) / 2;
                if (lessInSearchOrder(flat.data() + mid * stride(), config))
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < n &&
                std::equal(config.begin(), config.end(), flat.begin() + static_cast<std::ptrdiff_t>(lo * stride())))
                return lo;
            return std::nullopt;
        }
        if (count == 0)
            return std::nullopt;
        State s = freshState();
        std::uint64_t index = 0;
        for (int k = 0; k < paramCount(); ++k) {
            const Level& level = levels[static_cast<std::size_t>(k)];
            const std::uint16_t target = config[static_cast<std::size_t>(level.param)];
            for (std::uint16_t v = 0; v < target; ++v) {
                bind(s, level.param, v);
                if (!level.freeBelow && !passesConst(s, level))
                    continue;
                index += completions(s, k + 1);
            }
            bind(s, level.param, target);
            if (!level.freeBelow && !passesConst(s, level))
                return std::nullopt;
            if (completions(s, k + 1) == 0)
                return std::nullopt;
        }
        return index;
    }

    bool valid(const Config& config) const {
        if (static_cast<int>(config.size()) != paramCount() || constantFalse)
            return false;
        State s = freshState();
        for (int p = 0; p < paramCount(); ++p) {
            if (config[static_cast<std::size_t>(p)] >= values[static_cast<std::size_t>(p)].size())
                return false;
            bind(s, p, config[static_cast<std::size_t>(p)]);
        }
        if (listed) {
            std::string full;
            for (std::uint16_t v : config)
                appendIndex(full, v);
            if (!listedFull.count(full))
                return false;
        }
        for (const auto& c : conditions) {
            Value out;
            expr::EvalStatus st;
            if (!c.tryEvaluate(s.slots.data(), out, st) || !expr::truthy(out))
                return false;
        }
        return true;
    }

    // ---------------------------------------------------------------- build

    // Why counting ran out of work: the condition over the most combinations of values, which
    // is checked only once all of its parameters are chosen.
    UncountableSpace uncountable(const TuningProblem& problem) const {
        int worst = -1;
        double worstCombinations = 0;
        for (std::size_t c = 0; c < conditions.size(); ++c) {
            double combinations = 1;
            for (int p : conditionParams[c])
                combinations *= static_cast<double>(values[static_cast<std::size_t>(p)].size());
            if (conditionParams[c].size() >= 2 && combinations > worstCombinations) {
                worst = static_cast<int>(c);
                worstCombinations = combinations;
            }
        }
        std::string message = "the config space cannot be counted exactly: counting stopped after " +
                              formatCount(static_cast<double>(limits.maxEvaluations)) +
                              " evaluations of the conditions, with at least " +
                              formatCount(static_cast<double>(validFound)) + " valid configs found by then";
        std::string location = "/ConfigurationSpace";
        if (worst >= 0) {
            const auto c = static_cast<std::size_t>(worst);
            std::vector<std::string> read;
            for (int p : conditionParams[c])
                read.push_back(names[static_cast<std::size_t>(p)]);
            location += "/Conditions/" + std::to_string(worst) + "/Expression";
            message += ". The condition '" + conditions[c].source() + "' reads " + std::to_string(read.size()) +
                       " parameters (" + joined(read) + ") with " + formatCount(worstCombinations) +
                       " combinations of values and is known only once all of them are chosen; neither constraint "
                       "propagation nor bounds on the partial configs rule out enough of those, so nearly every "
                       "combination would be checked one by one. Narrow these parameters' values, or write the "
                       "condition as several conditions over fewer parameters each";
        } else {
            message += ". Add conditions or remove values";
        }
        return UncountableSpace(problem.fileName, location, message + ".", validFound);
    }

    void build() {
        const auto start = std::chrono::steady_clock::now();
        stats.rawSize = 1;
        for (const auto& v : values)
            stats.rawSize *= static_cast<double>(v.size());

        // Conditions that read no parameter (only the shape) hold for all configs or none.
        State s = freshState();
        for (std::size_t c = 0; c < conditions.size(); ++c) {
            if (!conditionParams[c].empty())
                continue;
            Value out;
            expr::EvalStatus st;
            ++stats.conditionEvaluations;
            if (!conditions[c].tryEvaluate(s.slots.data(), out, st)) {
                recordFailure(static_cast<int>(c), s, st);
                constantFalse = true;
            } else if (!expr::truthy(out)) {
                constantFalse = true;
            }
        }
        chooseOrder();
        if (listed)
            indexList();
        memo.assign(levels.size(), {});
        wideMemo.assign(levels.size(), {});

        const std::uint64_t bytesPerConfig = stride() * sizeof(std::uint16_t);
        const std::uint64_t maxConfigs = std::max<std::uint64_t>(1, limits.maxMaterializedBytes / bytesPerConfig);
        if (constantFalse) {
            count = 0;
        } else {
            bool counted = true;
            try {
                count = countFrom(s, 0);
            } catch (const TooLarge&) {
                counted = false; // too little structure to memoise: enumerate directly, within the limit
                memo.assign(levels.size(), {});
                wideMemo.assign(levels.size(), {});
                memoEntries = 0;
                stats.failures.clear();
                validFound = 0;
                evaluationsBefore = stats.conditionEvaluations; // the direct pass has a budget of its own
            }
            if (counted) {
                if (count <= maxConfigs && paramCount() > 0) {
                    flat.reserve(static_cast<std::size_t>(count) * stride());
                    State e = freshState();
                    enumerate(e, 0);
                    stats.materialized = true;
                }
            } else {
                State e = freshState();
                try {
                    enumerateUncounted(e, 0, maxConfigs);
                } catch (const TooLarge& t) {
                    throw TooLarge{"it has too little structure to count lazily (" + std::string("more than ") +
                                   std::to_string(limits.maxMemoEntries) + " partial configs) and " + t.what};
                }
                count = flat.size() / stride();
                stats.materialized = true;
            }
        }
        stats.validSize = count;
        stats.enumerationSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
};

// -------------------------------------------------------------------- public API

ConfigSpace::ConfigSpace(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl)) {}
ConfigSpace::ConfigSpace(ConfigSpace&&) noexcept = default;
ConfigSpace& ConfigSpace::operator=(ConfigSpace&&) noexcept = default;
ConfigSpace::~ConfigSpace() = default;

ConfigSpace ConfigSpace::build(const TuningProblem& problem, std::size_t shapeIndex, const SpaceLimits& limits) {
    auto impl = std::make_unique<Impl>();
    impl->limits = limits;
    const expr::Scope scope = problem.scope();
    const int P = static_cast<int>(problem.parameters.size());
    for (const auto& p : problem.parameters) {
        if (p.values.size() > 65535)
            throw InputError(problem.fileName, "/ConfigurationSpace/TuningParameters",
                             "parameter '" + p.name + "' has " + std::to_string(p.values.size()) +
                                 " values; at most 65535 are supported");
        impl->names.push_back(p.name);
        impl->values.push_back(p.values);
    }
    if (problem.configList) {
        impl->listed = true;
        impl->list = *problem.configList;
    }
    impl->keepAlive = std::make_shared<std::vector<TuningParameter>>(problem.parameters); // owns the strings
    impl->baseSlots = problem.shapeSlots(shapeIndex, impl->problemSizeStorage);
    for (std::size_t c = 0; c < problem.conditions.size(); ++c) {
        const std::string pointer = "/ConfigurationSpace/Conditions/" + std::to_string(c) + "/Expression";
        try {
            impl->conditions.push_back(expr::Expression::compile(problem.conditions[c].expression, scope));
        } catch (const expr::ExprError& e) {
            throw InputError(problem.fileName, pointer, e.what());
        }
        std::vector<int> params;
        for (int slot : impl->conditions.back().usedSlots())
            if (slot < P)
                params.push_back(slot);
        impl->conditionParams.push_back(std::move(params));
    }
    try {
        impl->build();
    } catch (const OutOfWork&) {
        throw impl->uncountable(problem);
    } catch (const TooLarge& t) {
        throw InputError(problem.fileName, "/ConfigurationSpace",
                         "the config space is too large to enumerate: " + t.what +
                             ". Add conditions or remove values, or raise the limits.");
    }
    return ConfigSpace(std::move(impl));
}

std::uint64_t ConfigSpace::size() const {
    return m_impl->count;
}
double ConfigSpace::rawSize() const {
    return m_impl->stats.rawSize;
}
const SpaceStats& ConfigSpace::stats() const {
    return m_impl->stats;
}
int ConfigSpace::parameterCount() const {
    return m_impl->paramCount();
}
const std::string& ConfigSpace::parameterName(int p) const {
    return m_impl->names.at(static_cast<std::size_t>(p));
}
const std::vector<Value>& ConfigSpace::parameterValues(int p) const {
    return m_impl->values.at(static_cast<std::size_t>(p));
}

Config ConfigSpace::at(std::uint64_t index) const {
    if (index >= size())
        throw std::out_of_range("config index " + std::to_string(index) + " out of range (the space has " +
                                std::to_string(size()) + " configs)");
    return m_impl->unrank(index);
}

std::optional<std::uint64_t> ConfigSpace::indexOf(const Config& config) const {
    return m_impl->rank(config);
}

bool ConfigSpace::isValid(const Config& config) const {
    return m_impl->valid(config);
}

std::vector<std::uint64_t> ConfigSpace::sample(std::uint64_t n, std::uint64_t seed) const {
    const std::uint64_t N = size();
    n = std::min(n, N);
    std::mt19937_64 rng(seed);
    std::vector<std::uint64_t> out;
    out.reserve(static_cast<std::size_t>(n));
    if (n == 0)
        return out;
    if (n * 4 >= N && N <= (std::uint64_t(1) << 22)) {
        // A large share: shuffle all indices (Fisher-Yates) and take the first n.
        std::vector<std::uint64_t> all(static_cast<std::size_t>(N));
        std::iota(all.begin(), all.end(), std::uint64_t(0));
        for (std::uint64_t i = 0; i < n; ++i) {
            const std::uint64_t j = i + uniformBelow(rng, N - i);
            std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(j)]);
        }
        all.resize(static_cast<std::size_t>(n));
        return all;
    }
    // A small share: Floyd's algorithm draws n distinct indices with n draws, then shuffle them.
    std::unordered_set<std::uint64_t> chosen;
    chosen.reserve(static_cast<std::size_t>(n) * 2);
    for (std::uint64_t j = N - n; j < N; ++j) {
        const std::uint64_t t = uniformBelow(rng, j + 1);
        if (chosen.insert(t).second)
            out.push_back(t);
        else {
            chosen.insert(j);
            out.push_back(j);
        }
    }
    for (std::uint64_t i = n - 1; i > 0; --i)
        std::swap(out[static_cast<std::size_t>(i)], out[static_cast<std::size_t>(uniformBelow(rng, i + 1))]);
    return out;
}

std::vector<Config> ConfigSpace::neighbours(const Config& config, NeighbourKind kind) const {
    std::vector<Config> out;
    if (static_cast<int>(config.size()) != parameterCount())
        return out;
    for (int p = 0; p < parameterCount(); ++p) {
        const auto n = static_cast<int>(m_impl->values[static_cast<std::size_t>(p)].size());
        const int current = config[static_cast<std::size_t>(p)];
        auto consider = [&](int v) {
            if (v < 0 || v >= n || v == current)
                return;
            Config c = config;
            c[static_cast<std::size_t>(p)] = static_cast<std::uint16_t>(v);
            if (isValid(c))
                out.push_back(std::move(c));
        };
        if (kind == NeighbourKind::Adjacent) {
            consider(current - 1);
            consider(current + 1);
        } else {
            for (int v = 0; v < n; ++v)
                consider(v);
        }
    }
    return out;
}

const Value& ConfigSpace::value(const Config& config, int p) const {
    return m_impl->values.at(static_cast<std::size_t>(p)).at(config.at(static_cast<std::size_t>(p)));
}

std::string ConfigSpace::describe(const Config& config) const {
    std::string out;
    for (int p = 0; p < parameterCount() && p < static_cast<int>(config.size()); ++p) {
        if (!out.empty())
            out += ' ';
        out += parameterName(p) + "=" + expr::repr(value(config, p));
    }
    return out;
}

} // namespace tilescope
