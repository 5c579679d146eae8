#pragma once

// Search strategies: which configs of a space to evaluate, in which order. A strategy proposes
// batches of space indices and observes their results (failures included); it never proposes an
// invalid config or one it proposed or observed before, and it is deterministic for a seed.
// Budgets (how many configs, how long) are the session's business: a strategy only learns the
// budget to plan (a model-based strategy sizes its initial design from it).

#include "compile/compiler.h"
#include "model/measurement.h"
#include "model/records.h"
#include "space/configspace.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace tilescope {

class TuningProblem;

/// How much to tune: any combination of limits; the first reached ends the session.
struct Budget {
    std::optional<std::uint64_t> configs; ///< T1 ConfigurationCount: at most this many evaluations
    std::optional<double> fraction;       ///< T1 ConfigurationFraction: of the valid space, in (0, 1]
    std::optional<double> seconds;        ///< T1 TuningDuration: of tuning time (see TuningSession)

    /// The budget a problem's T1 "Budget" entries give. Throws InputError for an unknown type or a
    /// value out of range.
    static Budget fromProblem(const TuningProblem& problem);
    /// The most evaluations in a space of `spaceSize` valid configs: the smaller of the count and
    /// ceil(fraction * spaceSize); spaceSize when neither is set.
    std::uint64_t configLimit(std::uint64_t spaceSize) const;
    /// For people: "100 configs, 60 s" or "" when unlimited.
    std::string describe() const;
    bool unlimited() const { return !configs && !fraction && !seconds; }
    /// The session may end before the whole space is done (a count, a fraction below 1, a time).
    bool mayEndEarly() const { return configs || seconds || (fraction && *fraction < 1); }
};

/// What compiling a config tells before any device time is spent.
struct StaticFeatures {
    StaticInfo info;              ///< registers, spills, stack, static shared memory
    std::int64_t blockSize = 0;   ///< threads per block
    std::int64_t sharedBytes = 0; ///< static + dynamic shared memory per block
    double occupancy = 0;         ///< theoretical occupancy, percent (0 when unknown)
    bool launchable = true;       ///< within the device's limits
};

/// The static features a stored result carries (its static info, block size, shared memory,
/// occupancy); nullopt when it has no static info.
std::optional<StaticFeatures> staticFeaturesOf(const ResultRecord& r);

/// One evaluated config, as a strategy sees it.
struct Observation {
    std::uint64_t index = 0; ///< in the space
    ResultStatus status = ResultStatus::Ok;
    /// Lower is better: the median time in ms, or minus the objective (e.g. -TFLOP/s) when the
    /// problem has one. Meaningful only when status == Ok.
    double score = 0;
    std::optional<StaticFeatures> features; ///< when the session compiled it (or a recording had them)
    bool prior = false; ///< recorded before this run (a resumed session): not proposed by this strategy
    /// The second objective of a multi-objective search: the energy of one launch in joules (lower
    /// is better), when the session measures it (`--metrics energy`) or the recording has it.
    std::optional<double> energy;
};

/// What a strategy is made with.
struct StrategyContext {
    const ConfigSpace* space = nullptr; ///< outlives the strategy
    std::uint64_t seed = 0;
    Budget budget;
    std::uint64_t configLimit = 0; ///< budget.configLimit(space->size())
    /// One part of a sweep split across tasks (a Slurm job array): the exhaustive strategy visits
    /// only the indices i with i % partCount == partIndex. Others ignore it (the session refuses them).
    std::uint64_t partIndex = 0;
    std::uint64_t partCount = 1;
    /// Static features of any config of the space, compiling it when needed (cached); empty when
    /// the session does not compile. For strategies that rank candidates before measuring them.
    std::function<std::optional<StaticFeatures>(std::uint64_t index)> staticFeatures;
    /// The same for many configs at once, compiled in parallel (a session sets it beside
    /// staticFeatures; when empty, strategies call staticFeatures per config).
    std::function<std::vector<std::optional<StaticFeatures>>(std::span<const std::uint64_t> indices)>
        staticFeaturesMany;
};

class Strategy {
public:
    virtual ~Strategy() = default;
    virtual std::string name() const = 0;
    /// Up to `count` configs (space indices) to evaluate next, each valid and never proposed or
    /// observed before. Fewer, or none, when the strategy waits for results of configs in flight
    /// (then done() is false) or has nothing left (done() is true).
    virtual std::vector<std::uint64_t> propose(std::size_t count) = 0;
    /// Results in any order: of proposed configs, or of prior ones (a resumed session passes
    /// those, with `prior` set, before its first propose()).
    virtual void observe(std::span<const Observation> observations) = 0;
    /// Nothing more to propose, ever.
    virtual bool done() const = 0;
};

/// Visits every config in index order (of its part, when the sweep is split).
class ExhaustiveStrategy : public Strategy {
public:
    explicit ExhaustiveStrategy(const StrategyContext& context);
    std::string name() const override { return "exhaustive"; }
    std::vector<std::uint64_t> propose(std::size_t count) override;
    void observe(std::span<const Observation> observations) override;
    bool done() const override;

private:
    std::uint64_t m_size;
    std::uint64_t m_step = 1; // the part's stride (StrategyContext::partCount)
    std::uint64_t m_part = 0; // its first index
    std::uint64_t m_next = 0;
    std::unordered_set<std::uint64_t> m_seen; // observed before their turn (resume)
};

/// Uniformly random order without replacement: a Fisher-Yates shuffle drawn lazily (memory grows
/// with the configs drawn, not the space), deterministic for the seed on every platform.
class RandomStrategy : public Strategy {
public:
    explicit RandomStrategy(const StrategyContext& context);
    ~RandomStrategy() override;
    std::string name() const override { return "random"; }
    std::vector<std::uint64_t> propose(std::size_t count) override;
    void observe(std::span<const Observation> observations) override;
    bool done() const override;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

/// The strategies makeStrategy() knows: "exhaustive", "random", "annealing", "genetic", "bayes",
/// "bayes-prior" (search/strategies.h describes the last four).
std::vector<std::string> strategyNames();
/// The strategy "auto" stands for (chosen from the lab's evidence).
std::string autoStrategyName();
/// The canonical name of a strategy name or alias; "" when unknown. Aliases: T1/Kernel Tuner's
/// "brute_force" (exhaustive), "random_sample" (random), "simulated_annealing" (annealing),
/// "genetic_algorithm" (genetic), "bayes_opt" (bayes); "auto" is autoStrategyName().
std::string canonicalStrategyName(std::string_view name);
/// The strategy a session takes when none is named, for the CLI and the workbench alike: the
/// problem's T1 Search.Name where it is one this version knows, else "auto" when `budget` may end
/// the session early (it finds good configs first) and "exhaustive" when the whole space is done.
/// `unknownSearchName` gets a Search.Name that was passed over ("" otherwise).
std::string defaultStrategy(std::string_view searchName, const Budget& budget,
                            std::string* unknownSearchName = nullptr);
/// Makes a strategy by name or alias. Throws InputError for an unknown name, listing the known ones.
std::unique_ptr<Strategy> makeStrategy(std::string_view name, const StrategyContext& context);

/// `inner`, after `first` (space indices, repeats and ones out of the space dropped): those are
/// proposed first, in order, and their results reach `inner` as prior observations, so it learns
/// from them and never proposes them (it starts once they are all back). For seeding a shape's search with the winners
/// of the shapes tuned before it.
std::unique_ptr<Strategy> seededStrategy(std::unique_ptr<Strategy> inner, std::vector<std::uint64_t> first,
                                         std::uint64_t spaceSize);

} // namespace tilescope
