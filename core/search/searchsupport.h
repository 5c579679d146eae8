#pragma once

// Shared by the strategies of this folder (not a public interface): which configs were visited,
// a source of random unvisited configs that eventually yields every one of them, and the
// transformation of scores into a scale fit for models.

#include "search/strategy.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tilescope::search {

/// Whether a status gives a usable score.
inline bool isOk(ResultStatus s) {
    return s == ResultStatus::Ok;
}

/// Configs proposed or observed: a bit per config for spaces up to 2^28, a hash set beyond.
class VisitedSet {
public:
    explicit VisitedSet(std::uint64_t size);
    bool contains(std::uint64_t index) const;
    /// True when it was not visited before.
    bool insert(std::uint64_t index);
    std::uint64_t count() const { return m_count; }
    std::uint64_t size() const { return m_size; }
    bool full() const { return m_count >= m_size; }

private:
    std::uint64_t m_size;
    std::uint64_t m_count = 0;
    std::vector<bool> m_bits;
    std::unordered_set<std::uint64_t> m_set;
};

/// Random unvisited configs without repeats: a lazily drawn Fisher-Yates permutation of the space,
/// then the configs handed back (drawn but not used), in the order they were handed back. Every unvisited config comes
/// out before it runs dry, so a strategy that falls back on it can visit the whole space; memory grows with the draws,
/// not the space.
class FreshSource {
public:
    FreshSource(std::uint64_t size, std::uint64_t seed);
    /// The next config that is neither visited nor rejected by `skip`; nullopt when none is left.
    template <class Skip>
    std::optional<std::uint64_t> next(const VisitedSet& visited, Skip&& skip) {
        while (m_position < m_size) {
            const std::uint64_t v = draw();
            if (!visited.contains(v) && !skip(v))
                return v;
        }
        while (!m_returned.empty()) {
            const std::uint64_t v = m_returned.front();
            m_returned.pop_front();
            if (!visited.contains(v) && !skip(v))
                return v;
        }
        return std::nullopt;
    }
    std::optional<std::uint64_t> next(const VisitedSet& visited) {
        return next(visited, [](std::uint64_t) { return false; });
    }
    /// A config drawn but not used: it comes out again after the permutation.
    void giveBack(std::uint64_t index) { m_returned.push_back(index); }

private:
    std::uint64_t draw();

    std::uint64_t m_size;
    std::mt19937_64 m_rng;
    std::uint64_t m_position = 0;
    std::unordered_map<std::uint64_t, std::uint64_t> m_swapped;
    std::deque<std::uint64_t> m_returned; // first in, first out: each comes around again
};

/// Children of two parent configs for the evolutionary strategies: uniform crossover, mutation to
/// adjacent values (now and then any value), and repair of an invalid or visited child to a
/// valid unvisited neighbour (adjacent values first).
class Breeder {
public:
    Breeder(const ConfigSpace& space, std::mt19937_64& rng)
        : m_space(space)
        , m_rng(rng) {}
    /// A valid unvisited config bred from `a` and `b`; nullopt when neither the child nor a
    /// neighbour of it is one.
    std::optional<std::uint64_t> child(const Config& a, const Config& b, const VisitedSet& visited);

private:
    double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(m_rng); }
    void mutate(Config& child);
    std::optional<std::uint64_t> repair(const Config& child, const VisitedSet& visited);

    const ConfigSpace& m_space;
    std::mt19937_64& m_rng;
};

/// A monotone map of scores to a scale where differences are relative: log of the time when all
/// scores are positive, minus the log of the objective when all are negative, asinh otherwise.
class ScoreScale {
public:
    ScoreScale() = default;
    /// Fitted to the usable scores seen so far.
    explicit ScoreScale(std::span<const double> scores);
    double operator()(double score) const;

private:
    enum class Mode { Positive, Negative, Mixed } m_mode = Mode::Mixed;
    double m_scale = 1;
};

/// Inputs for models: one coordinate per parameter with more than one value, in [0, 1]: log2 of
/// the value when all values are positive numbers spanning a factor of 4 or more (block sizes),
/// the value's index otherwise.
class InputEncoding {
public:
    explicit InputEncoding(const ConfigSpace& space);
    int dimensions() const { return static_cast<int>(m_params.size()); }
    /// Appends the coordinates of a config to `out`.
    void encode(const Config& config, std::vector<double>& out) const;

private:
    std::vector<int> m_params;                // parameters that vary
    std::vector<std::vector<double>> m_table; // per parameter: coordinate of each value index
};

/// Relative change from `from` to `to` (positive: worse).
inline double relativeChange(double from, double to) {
    const double magnitude = std::max(std::abs(from), 1e-12);
    return (to - from) / magnitude;
}

} // namespace tilescope::search
