#pragma once

// The valid configurations of a tuning problem for one shape: enumerated by constraint
// propagation (each condition is checked as soon as the parameters it names are bound, and
// bounded by interval arithmetic on the partial configs before that; the parameters ordered to
// prune early), counted, indexed (a bijection between 0..size()-1
// and the valid configs), sampled without replacement, and walked through neighbours.

#include "base/error.h"
#include "expr/expr.h"
#include "model/config.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tilescope {

class TuningProblem;

/// A failure of a condition while enumerating (for the report; the config counts as invalid).
struct ConditionFailure {
    int condition = -1;      ///< index into the problem's conditions
    std::uint64_t count = 0; ///< how many partial configs made it raise
    std::string firstError;  ///< the first error's text, e.g. "ZeroDivisionError: ... at column 5"
    Config firstConfig;      ///< a (partial) config that raised it; unbound parameters are 0
};

struct SpaceStats {
    double rawSize = 0; ///< product of the value counts (may exceed 2^64)
    std::uint64_t validSize = 0;
    double enumerationSeconds = 0;
    std::uint64_t conditionEvaluations = 0; ///< exact ones and bounds on partial configs
    bool materialized = false;              ///< the valid configs are held in memory
    std::vector<ConditionFailure> failures;
    std::vector<int> searchOrder; ///< parameter indices in the order they were bound
};

struct SpaceLimits {
    /// Hold the valid configs in memory while they take at most this many bytes; beyond it,
    /// the space is counted and indexed lazily through memoised counts.
    std::uint64_t maxMaterializedBytes = std::uint64_t(512) << 20;
    /// Entries of the memo used for lazy counting; beyond it the space is refused with a clear error.
    std::uint64_t maxMemoEntries = std::uint64_t(16) << 20;
    /// Evaluations of the conditions (exact, or bounds on partial configs) that a pass over the
    /// space may take (counting; enumerating directly when the memo overflows); beyond it
    /// build() throws UncountableSpace. A few seconds' work: a space whose conditions cannot be
    /// checked before nearly all of their parameters are chosen would otherwise run for hours.
    std::uint64_t maxEvaluations = std::uint64_t(1) << 28;
    /// When set and it turns true, build() stops soon and throws Cancelled (a GUI's stale request).
    const std::atomic<bool>* cancel = nullptr;
};

/// A space that could not be counted within SpaceLimits::maxEvaluations. The message says which
/// condition defeats the search and how many valid configs were found before it stopped.
class UncountableSpace : public InputError {
public:
    UncountableSpace(std::string file, std::string location, std::string message, std::uint64_t atLeast)
        : InputError(std::move(file), std::move(location), std::move(message))
        , m_atLeast(atLeast) {}
    /// Valid configs found before counting stopped: the space has at least this many.
    std::uint64_t atLeast() const { return m_atLeast; }

private:
    std::uint64_t m_atLeast;
};

class ConfigSpace {
public:
    /// Builds the space of `problem` for shape `shapeIndex`. Throws InputError when it cannot
    /// (a condition that fails to compile; a space beyond the limits, saying which limit;
    /// UncountableSpace past limits.maxEvaluations), and Cancelled when limits.cancel turned true.
    static ConfigSpace build(const TuningProblem& problem, std::size_t shapeIndex = 0, const SpaceLimits& limits = {});

    ConfigSpace(ConfigSpace&&) noexcept;
    ConfigSpace& operator=(ConfigSpace&&) noexcept;
    ~ConfigSpace();

    std::uint64_t size() const; ///< the number of valid configs
    double rawSize() const;     ///< the product of the value counts
    const SpaceStats& stats() const;
    int parameterCount() const;
    const std::string& parameterName(int p) const;
    const std::vector<expr::Value>& parameterValues(int p) const;

    /// The config at `index` (0 <= index < size()).
    Config at(std::uint64_t index) const;
    /// The index of a valid config; nullopt if the config is not valid (or malformed).
    std::optional<std::uint64_t> indexOf(const Config& config) const;
    /// Whether all conditions hold (a condition that raises counts as not holding).
    bool isValid(const Config& config) const;

    /// Up to `n` distinct valid configs, uniformly at random, deterministic for `seed`.
    std::vector<std::uint64_t> sample(std::uint64_t n, std::uint64_t seed) const;

    enum class NeighbourKind {
        Adjacent, ///< one parameter moved to the next lower or higher value
        AnyValue, ///< one parameter moved to any other value
    };
    /// Valid configs that differ from `config` in exactly one parameter.
    std::vector<Config> neighbours(const Config& config, NeighbourKind kind) const;

    /// The value of parameter p in a config.
    const expr::Value& value(const Config& config, int p) const;
    /// "BLOCK_M=64 BLOCK_N=128 ...".
    std::string describe(const Config& config) const;

    struct Impl;

private:
    explicit ConfigSpace(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/// Uniform integers in [0, n) from a 64-bit generator, the same on every platform.
std::uint64_t uniformBelow(std::mt19937_64& rng, std::uint64_t n);

} // namespace tilescope
