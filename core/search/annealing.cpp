#include "search/searchsupport.h"
#include "search/strategies.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_map>

namespace tilescope {

using search::FreshSource;
using search::VisitedSet;

namespace {
constexpr double kStartTemperature = 0.2; // a 20 % worse config is accepted with odds 1/e at first
constexpr double kEndTemperature = 0.002;
constexpr std::uint64_t kAnnealingSeedSalt = 0x9e3779b97f4a7c15ULL;
} // namespace

struct AnnealingStrategy::State {
    const ConfigSpace* space = nullptr;
    VisitedSet visited;
    FreshSource fresh;
    std::mt19937_64 rng;
    double temperature = kStartTemperature;
    double cooling = 1;
    std::uint64_t stallLimit = 30;

    std::optional<std::uint64_t> current; // the accepted config
    double currentScore = 0;
    std::optional<std::uint64_t> restart; // proposed to restart from, awaiting its result
    std::optional<std::uint64_t> anchor;  // whose neighbours `moves` holds
    std::vector<std::uint64_t> moves;     // unvisited neighbours of the anchor, next last
    std::optional<double> best;
    std::uint64_t sinceImprovement = 0;

    State(const StrategyContext& c)
        : space(c.space)
        , visited(c.space->size())
        , fresh(c.space->size(), c.seed ^ kAnnealingSeedSalt)
        , rng(c.seed) {
        const double steps = static_cast<double>(std::max<std::uint64_t>(c.configLimit, 20));
        cooling = std::pow(kEndTemperature / kStartTemperature, 1.0 / steps);
    }

    // Neighbours of `from`, adjacent values first, each group shuffled; stored reversed to pop.
    void loadMoves(std::uint64_t from) {
        anchor = from;
        moves.clear();
        const Config config = space->at(from);
        std::vector<std::uint64_t> adjacent, other;
        for (const Config& n : space->neighbours(config, ConfigSpace::NeighbourKind::AnyValue)) {
            const auto index = space->indexOf(n);
            if (!index || visited.contains(*index))
                continue;
            bool isAdjacent = false;
            for (std::size_t p = 0; p < n.size(); ++p)
                if (n[p] != config[p])
                    isAdjacent = (n[p] + 1 == config[p]) || (config[p] + 1 == n[p]);
            (isAdjacent ? adjacent : other).push_back(*index);
        }
        shuffle(adjacent);
        shuffle(other);
        moves.assign(other.rbegin(), other.rend());
        moves.insert(moves.end(), adjacent.rbegin(), adjacent.rend());
        stallLimit = std::max<std::uint64_t>(30, 2 * (adjacent.size() + other.size()));
    }

    void shuffle(std::vector<std::uint64_t>& v) {
        for (std::size_t i = v.size(); i > 1; --i)
            std::swap(v[i - 1], v[static_cast<std::size_t>(uniformBelow(rng, i))]);
    }

    std::optional<std::uint64_t> nextMove() {
        const std::optional<std::uint64_t> from = current ? current : restart;
        if (!from)
            return std::nullopt;
        if (anchor != from)
            loadMoves(*from);
        while (!moves.empty()) {
            const std::uint64_t m = moves.back();
            moves.pop_back();
            if (!visited.contains(m))
                return m;
        }
        return std::nullopt;
    }

    std::optional<std::uint64_t> next() {
        const bool stalled = current && sinceImprovement > stallLimit;
        if (!stalled) {
            if (auto m = nextMove())
                return m;
        }
        // Stuck or stalled (or nothing observed yet): restart from a random unvisited config.
        auto r = fresh.next(visited);
        if (r && !restart) {
            restart = r;
            sinceImprovement = 0;
        }
        return r;
    }

    void accept(std::uint64_t index, double score) {
        current = index;
        currentScore = score;
    }
};

AnnealingStrategy::AnnealingStrategy(const StrategyContext& context)
    : m_state(std::make_unique<State>(context)) {}

AnnealingStrategy::~AnnealingStrategy() = default;

std::vector<std::uint64_t> AnnealingStrategy::propose(std::size_t count) {
    State& s = *m_state;
    std::vector<std::uint64_t> out;
    while (out.size() < count && !s.visited.full()) {
        const auto index = s.next();
        if (!index)
            break;
        s.visited.insert(*index);
        out.push_back(*index);
    }
    return out;
}

void AnnealingStrategy::observe(std::span<const Observation> observations) {
    State& s = *m_state;
    for (const Observation& o : observations) {
        if (o.index >= s.visited.size())
            continue;
        s.visited.insert(o.index);
        const bool ok = search::isOk(o.status) && std::isfinite(o.score);
        if (ok && (!s.best || o.score < *s.best)) {
            s.best = o.score;
            s.sinceImprovement = 0;
        } else {
            ++s.sinceImprovement;
        }
        if (o.prior) {
            // A resumed session starts from the best config it had.
            if (ok && (!s.current || o.score < s.currentScore))
                s.accept(o.index, o.score);
            continue;
        }
        if (s.restart && *s.restart == o.index) {
            s.restart.reset();
            if (ok) {
                s.accept(o.index, o.score);
                s.temperature = std::max(s.temperature, 0.5 * kStartTemperature);
            }
            continue;
        }
        if (ok) {
            if (!s.current) {
                s.accept(o.index, o.score);
            } else {
                const double delta = search::relativeChange(s.currentScore, o.score);
                if (delta <= 0) {
                    s.accept(o.index, o.score);
                } else {
                    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(s.rng);
                    if (u < std::exp(-delta / s.temperature))
                        s.accept(o.index, o.score);
                }
            }
        }
        s.temperature = std::max(kEndTemperature, s.temperature * s.cooling);
    }
}

bool AnnealingStrategy::done() const {
    return m_state->visited.full();
}

} // namespace tilescope
