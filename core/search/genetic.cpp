#include "search/searchsupport.h"
#include "search/strategies.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_set>

namespace tilescope {

using search::FreshSource;
using search::VisitedSet;

namespace {
constexpr std::uint64_t kGeneticSeedSalt = 0xd1b54a32d192ed03ULL;
constexpr int kTournament = 3;
constexpr int kChildAttempts = 8;
} // namespace

struct GeneticStrategy::State {
    const ConfigSpace* space = nullptr;
    VisitedSet visited;
    FreshSource fresh;
    std::mt19937_64 rng;
    std::size_t populationSize = 20;

    struct Member {
        double key; // the score; +infinity for a failure
        std::uint64_t order;
        std::uint64_t index;
    };
    std::vector<Member> observed;
    std::unordered_set<std::uint64_t> recorded;

    State(const StrategyContext& c)
        : space(c.space)
        , visited(c.space->size())
        , fresh(c.space->size(), c.seed ^ kGeneticSeedSalt)
        , rng(c.seed) {
        populationSize = static_cast<std::size_t>(std::clamp<std::uint64_t>(c.configLimit / 6, 6, 20));
    }

    double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng); }

    // The best `populationSize` observed, best first.
    std::vector<Member> population() const {
        std::vector<Member> p = observed;
        const auto better = [](const Member& a, const Member& b) {
            return a.key != b.key ? a.key < b.key : a.order < b.order;
        };
        const std::size_t k = std::min(populationSize, p.size());
        std::partial_sort(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(k), p.end(), better);
        p.resize(k);
        return p;
    }

    const Member& tournament(const std::vector<Member>& population) {
        std::size_t winner = population.size();
        for (int i = 0; i < kTournament; ++i)
            winner = std::min(winner, static_cast<std::size_t>(uniformBelow(rng, population.size())));
        return population[winner];
    }

    std::optional<std::uint64_t> child(const std::vector<Member>& population) {
        search::Breeder breeder(*space, rng);
        for (int attempt = 0; attempt < kChildAttempts; ++attempt) {
            const Config a = space->at(tournament(population).index);
            const Config b = space->at(tournament(population).index);
            if (const auto index = breeder.child(a, b, visited))
                return index;
        }
        return std::nullopt;
    }

    static double keyOf(const Observation& o) {
        if (search::isOk(o.status) && std::isfinite(o.score))
            return o.score;
        return std::numeric_limits<double>::infinity();
    }
};

GeneticStrategy::GeneticStrategy(const StrategyContext& context)
    : m_state(std::make_unique<State>(context)) {}

GeneticStrategy::~GeneticStrategy() = default;

std::vector<std::uint64_t> GeneticStrategy::propose(std::size_t count) {
    State& s = *m_state;
    std::vector<std::uint64_t> out;
    // Parents come from what was observed before this call: a batch is one generation's children.
    const std::vector<State::Member> population = s.population();
    const bool breed = population.size() >= s.populationSize && std::isfinite(population.front().key);
    while (out.size() < count && !s.visited.full()) {
        std::optional<std::uint64_t> index;
        if (breed)
            index = s.child(population);
        if (!index)
            index = s.fresh.next(s.visited);
        if (!index)
            break;
        s.visited.insert(*index);
        out.push_back(*index);
    }
    return out;
}

void GeneticStrategy::observe(std::span<const Observation> observations) {
    State& s = *m_state;
    for (const Observation& o : observations) {
        if (o.index >= s.visited.size() || !s.recorded.insert(o.index).second)
            continue;
        s.visited.insert(o.index);
        s.observed.push_back({s.keyOf(o), s.observed.size(), o.index});
    }
}

bool GeneticStrategy::done() const {
    return m_state->visited.full();
}

} // namespace tilescope
