#pragma once

// The model-free and model-based strategies beyond exhaustive and random. Each follows the
// Strategy contract (strategy.h): proposals valid, new and deterministic for a seed; failures
// observed as bad results and never proposed again; prior observations respected; and, once its
// own method runs dry, random unvisited configs until the whole space is visited.

#include "search/strategy.h"

#include <memory>

namespace tilescope {

/// Simulated annealing over the space's neighbourhoods: a random unvisited neighbour of the
/// current config (adjacent values first), accepted by the Metropolis rule on the relative change
/// of the score under a temperature that cools over the budget (context.configLimit); failures are
/// never accepted. It restarts from a random unvisited config when the current one has no
/// unvisited neighbour left or nothing improved for a while. A batch is several neighbours of
/// the current config.
class AnnealingStrategy : public Strategy {
public:
    explicit AnnealingStrategy(const StrategyContext& context);
    ~AnnealingStrategy() override;
    std::string name() const override { return "annealing"; }
    std::vector<std::uint64_t> propose(std::size_t count) override;
    void observe(std::span<const Observation> observations) override;
    bool done() const override;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

/// A steady-state genetic algorithm: the population is the best configs observed so far (failures
/// rank last); parents are chosen by tournament, children made by uniform crossover and mutation
/// to adjacent values, repaired to a valid unvisited neighbour when they are invalid or seen, and
/// replaced by a random unvisited config when no repair works. The first generation is random.
class GeneticStrategy : public Strategy {
public:
    explicit GeneticStrategy(const StrategyContext& context);
    ~GeneticStrategy() override;
    std::string name() const override { return "genetic"; }
    std::vector<std::uint64_t> propose(std::size_t count) override;
    void observe(std::span<const Observation> observations) override;
    bool done() const override;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

/// NSGA-II for two objectives at once, the score (time) and the energy of a launch
/// (Observation::energy): a steady-state population ranked by non-dominated sorting and crowding
/// distance, parents by binary tournament, children as the genetic strategy makes them. It
/// spreads its measurements along the time-energy front instead of converging on one end of it.
/// Without energy it ranks by the score alone. The first generation is random.
class Nsga2Strategy : public Strategy {
public:
    explicit Nsga2Strategy(const StrategyContext& context);
    ~Nsga2Strategy() override;
    std::string name() const override { return "nsga2"; }
    std::vector<std::uint64_t> propose(std::size_t count) override;
    void observe(std::span<const Observation> observations) override;
    bool done() const override;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

/// Options of BayesStrategy (the defaults are the "bayes" and "bayes-prior" strategies).
struct BayesOptions {
    /// Use context.staticFeatures: registers, theoretical occupancy and spill bytes become extra
    /// model inputs, and configs predicted hopeless (not launchable, no features, or spilling more
    /// than `heavySpillBytes`) wait until nothing else is left. Each config that enters the
    /// candidate pool is compiled once (through the cached callback): the pool's size at the start,
    /// then a few dozen per proposal.
    bool staticPrior = false;
    std::size_t poolSize = 2000;       ///< candidates ranked per proposal (unvisited, cached predictions)
    std::size_t priorPoolSize = 500;   ///< the pool when staticPrior is set (each member costs a compile)
    std::size_t maxTraining = 600;     ///< observations in the model; beyond, the best half and a random rest
    std::size_t fitSubset = 100;       ///< observations used to fit hyperparameters
    std::int64_t heavySpillBytes = 64; ///< spill stores + loads per thread beyond which a config is hopeless
    double exploration = 0.01;         ///< the xi of expected improvement, in standardised units
};

/// Bayesian optimisation: a Gaussian process (Matérn 5/2, one length scale per parameter, noise)
/// over the parameters' value indices or log2 values scaled to [0, 1], on log-magnitude,
/// standardised scores; failures imputed worse than the worst seen. Hyperparameters maximise the
/// marginal likelihood, refitted as the observations grow by a fifth. Expected improvement is
/// maximised over a pool of unvisited configs: a random sample (a hundredth swapped for fresh
/// configs at every proposal; emptied at a refit and refilled a block at a time, so that no
/// proposal pays for re-solving thousands of candidates) plus the neighbours of the three best
/// observations. Beyond `maxTraining` observations, the model holds a subset. A batch takes several picks, each
/// believed at its predicted mean (the kriging believer) until its result arrives. The first configs, a tenth of
/// context.configLimit (4 to 20), are random.
class BayesStrategy : public Strategy {
public:
    explicit BayesStrategy(const StrategyContext& context, const BayesOptions& options = {});
    ~BayesStrategy() override;
    std::string name() const override;
    std::vector<std::uint64_t> propose(std::size_t count) override;
    void observe(std::span<const Observation> observations) override;
    bool done() const override;

private:
    struct State;
    std::unique_ptr<State> m_state;
};

} // namespace tilescope
