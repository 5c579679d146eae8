#include "search/gaussianprocess.h"
#include "search/searchsupport.h"
#include "search/strategies.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>
#include <unordered_set>

namespace tilescope {

using search::FreshSource;
using search::VisitedSet;

namespace {

constexpr std::uint64_t kBayesSeedSalt = 0x94d049bb133111ebULL;
constexpr int kStaticInputs = 3;            // registers, occupancy, spill bytes
constexpr std::size_t kBestExpanded = 3;    // the best observations whose neighbours join the pool
constexpr std::size_t kRotationShare = 100; // a 1/100 of the pool is swapped for fresh configs per proposal
constexpr double kRefillWork = 2e7;         // multiply-adds of solves per proposal for new pool members

double expectedImprovement(double mean, double variance, double best, double xi) {
    const double gain = best - mean - xi;
    const double sd = std::sqrt(variance);
    if (sd < 1e-12)
        return std::max(gain, 0.0);
    const double z = gain / sd;
    const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
    const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * 3.14159265358979323846);
    return gain * cdf + sd * pdf;
}

} // namespace

struct BayesStrategy::State {
    StrategyContext context;
    BayesOptions options;
    const ConfigSpace* space = nullptr;
    VisitedSet visited;
    FreshSource fresh;
    std::mt19937_64 rng;
    search::InputEncoding encoding;
    bool staticPrior = false;
    int dimensions = 0;
    std::size_t poolSize = 0;
    std::size_t initialDesign = 0;

    struct Record {
        std::uint64_t index;
        bool ok;
        double score;
    };
    std::vector<Record> records; // real observations, in arrival order
    std::unordered_map<std::uint64_t, std::size_t> recordOf;
    std::size_t okCount = 0;

    // The model's training points (observed, or proposed and believed at their predicted mean).
    struct Point {
        std::uint64_t index;
        double belief; // on the score scale, while the result is pending
    };
    GaussianProcess gp;
    bool built = false;
    std::size_t nextFit = 0;
    std::vector<Point> points;
    std::unordered_map<std::uint64_t, std::size_t> pointOf;
    std::vector<std::uint64_t> waiting;          // observed, not yet in the model
    std::vector<std::uint64_t> pendingProposals; // proposed before the model existed, unobserved
    double mean = 0, spread = 1;                 // standardisation of the transformed scores
    search::ScoreScale scale;
    double imputed = 0;    // the transformed score of a failure
    double bestTarget = 0; // the best standardised target

    std::vector<std::uint64_t> pool; // candidate slot -> space index
    std::vector<double> incoming;    // inputs of members queued for the model
    std::unordered_set<std::uint64_t> inPool;
    std::vector<std::uint64_t> deferred; // predicted hopeless: proposed when nothing else is left
    std::unordered_set<std::uint64_t> isDeferred;

    std::unordered_map<std::uint64_t, std::optional<StaticFeatures>> featureCache;

    State(const StrategyContext& c, const BayesOptions& o)
        : context(c)
        , options(o)
        , space(c.space)
        , visited(c.space->size())
        , fresh(c.space->size(), c.seed ^ kBayesSeedSalt)
        , rng(c.seed)
        , encoding(*c.space)
        , staticPrior(o.staticPrior && static_cast<bool>(c.staticFeatures))
        , dimensions(encoding.dimensions() + (staticPrior ? kStaticInputs : 0))
        , poolSize(std::max<std::size_t>(1, staticPrior ? o.priorPoolSize : o.poolSize))
        , gp(dimensions) {
        const std::uint64_t limit = c.configLimit ? c.configLimit : c.space->size();
        initialDesign = static_cast<std::size_t>(std::clamp<std::uint64_t>(limit / 10, 4, 20));
    }

    // ---------------------------------------------------------------- static features

    const std::optional<StaticFeatures>& features(std::uint64_t index) {
        auto it = featureCache.find(index);
        if (it == featureCache.end())
            it = featureCache.emplace(index, context.staticFeatures(index)).first;
        return it->second;
    }

    // Fetches the features of many configs in one call: a session compiles them in parallel.
    void prefetch(std::span<const std::uint64_t> indices) {
        if (!staticPrior || !context.staticFeaturesMany)
            return;
        std::vector<std::uint64_t> missing;
        for (const std::uint64_t index : indices)
            if (!featureCache.count(index))
                missing.push_back(index);
        if (missing.empty())
            return;
        std::vector<std::optional<StaticFeatures>> got = context.staticFeaturesMany(missing);
        for (std::size_t i = 0; i < missing.size(); ++i)
            featureCache.emplace(missing[i], i < got.size() ? std::move(got[i]) : std::nullopt);
    }

    bool hopeless(std::uint64_t index) {
        if (!staticPrior)
            return false;
        const auto& f = features(index);
        if (!f)
            return true;
        return !f->launchable || f->info.spillStores + f->info.spillLoads > options.heavySpillBytes;
    }

    std::vector<double> input(std::uint64_t index) {
        std::vector<double> x;
        x.reserve(static_cast<std::size_t>(dimensions));
        encoding.encode(space->at(index), x);
        if (staticPrior) {
            const auto& f = features(index);
            if (!f) {
                x.insert(x.end(), {1.0, 0.0, 1.0});
            } else {
                const int regs = f->info.registers;
                x.push_back(regs < 0 ? 0.5 : std::min(1.0, regs / 255.0));
                x.push_back(std::clamp(f->occupancy / 100.0, 0.0, 1.0));
                const double spill = static_cast<double>(f->info.spillStores + f->info.spillLoads);
                x.push_back(std::min(1.0, std::log2(1.0 + std::max(0.0, spill)) / 12.0));
            }
        }
        return x;
    }

    // ---------------------------------------------------------------- targets

    double transformed(const Record& r) const { return r.ok ? scale(r.score) : imputed; }

    // Rescales every score: the scale and the imputed failure move as results arrive.
    void computeScale() {
        std::vector<double> ok;
        for (const Record& r : records)
            if (r.ok)
                ok.push_back(r.score);
        scale = search::ScoreScale(ok);
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (double s : ok) {
            const double t = scale(s);
            lo = std::min(lo, t);
            hi = std::max(hi, t);
        }
        if (ok.empty())
            lo = hi = 0;
        imputed = hi + std::max(0.5 * (hi - lo), 0.5);
        double sum = 0, sumSq = 0;
        for (const Record& r : records) {
            const double t = transformed(r);
            sum += t;
            sumSq += t * t;
        }
        const auto n = static_cast<double>(std::max<std::size_t>(1, records.size()));
        mean = sum / n;
        const double variance = sumSq / n - mean * mean;
        spread = variance > 1e-18 ? std::sqrt(variance) : 1.0;
        bestTarget = (lo - mean) / spread;
    }

    // Hands the model its standardised targets.
    void updateTargets() {
        computeScale();
        if (built) {
            std::vector<double> y;
            y.reserve(points.size());
            for (const Point& p : points)
                y.push_back(target(p));
            gp.setTargets(y);
        }
    }

    double target(const Point& p) const {
        const auto it = recordOf.find(p.index);
        const double t = it != recordOf.end() ? transformed(records[it->second]) : p.belief;
        return (t - mean) / spread;
    }

    // ---------------------------------------------------------------- the model

    // The key that ranks observations, best first (failures last).
    double key(const Record& r) const { return r.ok ? r.score : std::numeric_limits<double>::infinity(); }

    void rebuild() {
        computeScale();
        // The training set: every observation while they are few; beyond, the best half and a
        // random rest (failures among them, so the model keeps learning where configs fail).
        std::vector<std::size_t> order(records.size());
        std::iota(order.begin(), order.end(), std::size_t(0));
        std::vector<std::size_t> chosen;
        if (records.size() <= options.maxTraining) {
            chosen = order;
        } else {
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t a, std::size_t b) { return key(records[a]) < key(records[b]); });
            const std::size_t half = options.maxTraining / 2;
            chosen.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(half));
            std::vector<std::size_t> rest(order.begin() + static_cast<std::ptrdiff_t>(half), order.end());
            for (std::size_t i = 0; i < options.maxTraining - half; ++i) {
                const std::size_t j = i + static_cast<std::size_t>(uniformBelow(rng, rest.size() - i));
                std::swap(rest[i], rest[j]);
                chosen.push_back(rest[i]);
            }
        }
        points.clear();
        pointOf.clear();
        for (std::size_t r : chosen)
            points.push_back({records[r].index, 0});
        // Proposals in flight stay believed at their predicted mean (or the mean of all, for those
        // made before the model existed).
        for (const Point& p : pendingPoints)
            points.push_back(p);
        for (std::uint64_t index : pendingProposals)
            if (!recordOf.count(index))
                points.push_back({index, mean});
        pendingProposals.clear();
        pendingPoints.clear();
        waiting.clear();
        for (std::size_t i = 0; i < points.size(); ++i)
            pointOf[points[i].index] = i;

        std::vector<double> x, y;
        x.reserve(points.size() * static_cast<std::size_t>(dimensions));
        for (const Point& p : points) {
            const auto in = input(p.index);
            x.insert(x.end(), in.begin(), in.end());
            y.push_back(target(p));
        }
        // Hyperparameters from a subsample of the observations: the best third and a random rest.
        const std::size_t real = chosen.size();
        std::vector<std::size_t> fitRows(real);
        std::iota(fitRows.begin(), fitRows.end(), std::size_t(0));
        if (real > options.fitSubset) {
            std::stable_sort(fitRows.begin(), fitRows.end(), [&](std::size_t a, std::size_t b) { return y[a] < y[b]; });
            const std::size_t third = options.fitSubset / 3;
            for (std::size_t i = third; i < options.fitSubset; ++i) {
                const std::size_t j = i + static_cast<std::size_t>(uniformBelow(rng, real - i));
                std::swap(fitRows[i], fitRows[j]);
            }
            fitRows.resize(options.fitSubset);
        }
        std::vector<double> fx, fy;
        for (std::size_t r : fitRows) {
            const auto first = x.begin() + static_cast<std::ptrdiff_t>(r * static_cast<std::size_t>(dimensions));
            fx.insert(fx.end(), first, first + dimensions);
            fy.push_back(y[r]);
        }
        const auto hyper = GaussianProcess::fit(dimensions, fx, fy);
        // The pool goes back to the fresh configs and refills over the next proposals, a block at
        // a time: re-solving thousands of candidates against the new factor at once would make
        // this proposal hundreds of times slower than the others.
        for (std::uint64_t index : pool)
            fresh.giveBack(index);
        pool.clear();
        inPool.clear();
        gp.clearCandidates();
        gp.setData(x, y, hyper);
        built = true;
        nextFit = records.size() + std::max<std::size_t>(5, records.size() / 5);
    }

    // Pending points once the model exists: the believed ones, which rebuild() keeps.
    std::vector<Point> pendingPoints;

    void syncModel() {
        const std::size_t cap = options.maxTraining + options.maxTraining / 2;
        if (!built || records.size() >= nextFit || points.size() + waiting.size() > cap) {
            // Keep the beliefs of proposals still in flight across the rebuild.
            pendingPoints.clear();
            for (const Point& p : points)
                if (!recordOf.count(p.index))
                    pendingPoints.push_back(p);
            rebuild();
            return;
        }
        for (std::uint64_t index : waiting) {
            if (pointOf.count(index))
                continue;
            pointOf[index] = points.size();
            points.push_back({index, 0});
            gp.add(input(index), 0); // its target comes with updateTargets()
        }
        waiting.clear();
        updateTargets();
    }

    // ---------------------------------------------------------------- the pool

    // Members join in blocks (one blocked solve each): addToPool queues, flushPool adds.
    void addToPool(std::uint64_t index) {
        const auto x = input(index);
        incoming.insert(incoming.end(), x.begin(), x.end());
        pool.push_back(index);
        inPool.insert(index);
    }

    void flushPool() {
        if (!incoming.empty())
            gp.addCandidates(incoming);
        incoming.clear();
    }

    void removeFromPool(std::size_t slot) {
        inPool.erase(pool[slot]);
        gp.removeCandidate(slot);
        pool[slot] = pool.back();
        pool.pop_back();
    }

    bool takeable(std::uint64_t index) const {
        return !visited.contains(index) && !inPool.count(index) && !isDeferred.count(index);
    }

    // A config for the pool, or deferred when hopeless; false when it was deferred.
    bool admit(std::uint64_t index) {
        if (hopeless(index)) {
            if (isDeferred.insert(index).second)
                deferred.push_back(index);
            return false;
        }
        addToPool(index);
        return true;
    }

    void refreshPool() {
        for (std::size_t slot = pool.size(); slot-- > 0;)
            if (visited.contains(pool[slot]))
                removeFromPool(slot);
        // Swap a few members for fresh configs, so that the sample keeps moving over the space.
        const std::size_t rotation = std::min(pool.size(), std::max<std::size_t>(4, poolSize / kRotationShare));
        if (pool.size() >= poolSize) {
            for (std::size_t i = 0; i < rotation; ++i) {
                const auto slot = static_cast<std::size_t>(uniformBelow(rng, pool.size()));
                fresh.giveBack(pool[slot]);
                removeFromPool(slot);
            }
        }
        // Each new member costs O(n^2) (and a compile, with the static prior): bound them per
        // proposal, so that refilling after a refit spreads over a few proposals.
        const double size = static_cast<double>(std::max<std::size_t>(1, points.size()));
        const auto refill =
            static_cast<std::size_t>(std::max(static_cast<double>(rotation) + 4, kRefillWork / (size * size)));
        const std::size_t target = std::min(poolSize, pool.size() + refill);
        std::size_t attempts = 0;
        const std::size_t maxAttempts = refill + 64;
        if (staticPrior && context.staticFeaturesMany) {
            // Drawn in blocks, their features fetched together (compiled in parallel), then admitted
            // or deferred.
            bool exhausted = false;
            while (pool.size() < target && attempts < maxAttempts && !exhausted) {
                std::vector<std::uint64_t> drawn;
                while (drawn.size() < target - pool.size() && attempts++ < maxAttempts) {
                    const auto index = fresh.next(visited, [this](std::uint64_t i) { return !takeable(i); });
                    if (!index) {
                        exhausted = true;
                        break;
                    }
                    drawn.push_back(*index);
                }
                prefetch(drawn);
                for (const std::uint64_t index : drawn)
                    admit(index);
            }
        }
        while (pool.size() < target && attempts++ < maxAttempts) {
            const auto index = fresh.next(visited, [this](std::uint64_t i) { return !takeable(i); });
            if (!index)
                break;
            admit(*index);
        }
        // The neighbours of the best observations, always in the pool: where the optimum most
        // likely is.
        std::vector<std::size_t> best;
        for (std::size_t r = 0; r < records.size(); ++r)
            if (records[r].ok)
                best.push_back(r);
        const std::size_t k = std::min(kBestExpanded, best.size());
        std::partial_sort(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(k), best.end(),
                          [&](std::size_t a, std::size_t b) { return records[a].score < records[b].score; });
        std::vector<std::uint64_t> near;
        for (std::size_t i = 0; i < k; ++i) {
            const std::uint64_t centre = records[best[i]].index;
            for (const Config& n : space->neighbours(space->at(centre), ConfigSpace::NeighbourKind::AnyValue)) {
                const auto index = space->indexOf(n);
                if (index && takeable(*index) && std::find(near.begin(), near.end(), *index) == near.end())
                    near.push_back(*index);
            }
        }
        prefetch(near);
        for (const std::uint64_t index : near)
            if (takeable(index))
                admit(index);
        // Nothing promising left: the hopeless ones, in the order they were found.
        if (pool.empty()) {
            for (std::uint64_t index : deferred)
                if (!visited.contains(index) && pool.size() < poolSize)
                    addToPool(index);
            std::erase_if(deferred, [this](std::uint64_t i) { return visited.contains(i) || inPool.count(i); });
            isDeferred.clear();
            isDeferred.insert(deferred.begin(), deferred.end());
        }
        flushPool();
    }

    // ---------------------------------------------------------------- proposing

    std::optional<std::uint64_t> randomProposal() {
        std::size_t attempts = 0;
        while (true) {
            const auto index = fresh.next(visited, [this](std::uint64_t i) { return inPool.count(i) > 0; });
            if (!index)
                break;
            if (!staticPrior || attempts++ >= 64 || !hopeless(*index))
                return index;
            if (isDeferred.insert(*index).second)
                deferred.push_back(*index);
        }
        // Only the deferred and the pooled are left.
        for (std::uint64_t index : deferred)
            if (!visited.contains(index))
                return index;
        for (std::uint64_t index : pool)
            if (!visited.contains(index))
                return index;
        return std::nullopt;
    }

    bool modelReady() const { return okCount >= 2 && records.size() >= initialDesign; }

    std::vector<std::uint64_t> propose(std::size_t count) {
        std::vector<std::uint64_t> out;
        if (count == 0 || visited.full())
            return out;
        if (!modelReady()) {
            while (out.size() < count && !visited.full()) {
                const auto index = randomProposal();
                if (!index)
                    break;
                visited.insert(*index);
                out.push_back(*index);
                pendingProposals.push_back(*index);
            }
            return out;
        }
        syncModel();
        refreshPool();
        std::vector<double> means, variances;
        while (out.size() < count && !visited.full()) {
            if (pool.empty()) {
                refreshPool();
                if (pool.empty()) {
                    const auto index = randomProposal();
                    if (!index)
                        break;
                    visited.insert(*index);
                    out.push_back(*index);
                    continue;
                }
            }
            gp.predictCandidates(means, variances);
            std::size_t pick = 0;
            double bestValue = -1;
            for (std::size_t j = 0; j < means.size(); ++j) {
                const double value = expectedImprovement(means[j], variances[j], bestTarget, options.exploration);
                if (value > bestValue) {
                    bestValue = value;
                    pick = j;
                }
            }
            const std::uint64_t index = pool[pick];
            const double believed = means[pick];
            removeFromPool(pick);
            visited.insert(index);
            out.push_back(index);
            // Believe the prediction until the result comes: the next pick of the batch looks elsewhere.
            if (!pointOf.count(index)) {
                pointOf[index] = points.size();
                points.push_back({index, mean + spread * believed});
                gp.add(input(index), believed);
            }
        }
        return out;
    }

    void observe(std::span<const Observation> observations) {
        for (const Observation& o : observations) {
            if (o.index >= visited.size() || recordOf.count(o.index))
                continue;
            visited.insert(o.index);
            const bool ok = search::isOk(o.status) && std::isfinite(o.score);
            recordOf[o.index] = records.size();
            records.push_back({o.index, ok, o.score});
            okCount += ok;
            if (o.features && staticPrior)
                featureCache.try_emplace(o.index, o.features);
            if (!pointOf.count(o.index))
                waiting.push_back(o.index);
        }
        if (built)
            updateTargets();
    }
};

BayesStrategy::BayesStrategy(const StrategyContext& context, const BayesOptions& options)
    : m_state(std::make_unique<State>(context, options)) {}

BayesStrategy::~BayesStrategy() = default;

std::string BayesStrategy::name() const {
    return m_state->staticPrior || m_state->options.staticPrior ? "bayes-prior" : "bayes";
}

std::vector<std::uint64_t> BayesStrategy::propose(std::size_t count) {
    return m_state->propose(count);
}

void BayesStrategy::observe(std::span<const Observation> observations) {
    m_state->observe(observations);
}

bool BayesStrategy::done() const {
    return m_state->visited.full();
}

} // namespace tilescope
