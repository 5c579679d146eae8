// NSGA-II (Deb et al., 2002) on a config space, for two objectives: the score (time, or minus
// the objective) and the energy of a launch. Steady state, as the genetic strategy: the
// population is the best observed configs by non-dominated rank and, within the last rank
// taken, by crowding distance; parents by binary tournament on (rank, crowding); children by the
// genetic strategy's crossover, mutation and repair.

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
constexpr std::uint64_t kNsgaSeedSalt = 0x9e3779b97f4a7c15ULL;
constexpr int kNsgaChildAttempts = 8;
constexpr double kNsgaInf = std::numeric_limits<double>::infinity();
} // namespace

struct Nsga2Strategy::State {
    const ConfigSpace* space = nullptr;
    VisitedSet visited;
    FreshSource fresh;
    std::mt19937_64 rng;
    std::size_t populationSize = 20;

    struct Member {
        double a = kNsgaInf; // the score; +infinity for a failure
        double b = kNsgaInf; // the energy; +infinity for a failure or where it is not known
        std::uint64_t order = 0;
        std::uint64_t index = 0;
        int rank = 0;
        double crowding = 0;
    };
    std::vector<Member> observed;
    std::unordered_set<std::uint64_t> recorded;

    explicit State(const StrategyContext& c)
        : space(c.space)
        , visited(c.space->size())
        , fresh(c.space->size(), c.seed ^ kNsgaSeedSalt)
        , rng(c.seed) {
        populationSize = static_cast<std::size_t>(std::clamp<std::uint64_t>(c.configLimit / 6, 6, 24));
    }

    static bool dominates(const Member& x, const Member& y) {
        return x.a <= y.a && x.b <= y.b && (x.a < y.a || x.b < y.b);
    }

    // The population: fronts by non-dominated sorting, the last one cut by crowding distance.
    std::vector<Member> population() const {
        std::vector<Member> all = observed;
        const std::size_t n = all.size();
        std::vector<std::vector<std::size_t>> beats(n);
        std::vector<int> beatenBy(n, 0);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i + 1; j < n; ++j) {
                if (dominates(all[i], all[j])) {
                    beats[i].push_back(j);
                    ++beatenBy[j];
                } else if (dominates(all[j], all[i])) {
                    beats[j].push_back(i);
                    ++beatenBy[i];
                }
            }
        std::vector<Member> out;
        std::vector<std::size_t> front;
        for (std::size_t i = 0; i < n; ++i)
            if (beatenBy[i] == 0)
                front.push_back(i);
        for (int rank = 0; !front.empty() && out.size() < populationSize; ++rank) {
            std::vector<Member> members;
            for (std::size_t i : front) {
                all[i].rank = rank;
                members.push_back(all[i]);
            }
            crowd(members);
            std::sort(members.begin(), members.end(), [](const Member& x, const Member& y) {
                return x.crowding != y.crowding ? x.crowding > y.crowding : x.order < y.order;
            });
            for (const Member& m : members) {
                if (out.size() == populationSize)
                    break;
                out.push_back(m);
            }
            std::vector<std::size_t> next;
            for (std::size_t i : front)
                for (std::size_t j : beats[i])
                    if (--beatenBy[j] == 0)
                        next.push_back(j);
            std::sort(next.begin(), next.end());
            front = std::move(next);
        }
        return out;
    }

    // Crowding distance within one front: the normalised gap around each member on each
    // objective; the ends of each are kept (infinite).
    static void crowd(std::vector<Member>& front) {
        for (Member& m : front)
            m.crowding = 0;
        for (int objective = 0; objective < 2; ++objective) {
            auto value = [objective](const Member& m) { return objective == 0 ? m.a : m.b; };
            std::vector<std::size_t> order(front.size());
            for (std::size_t i = 0; i < order.size(); ++i)
                order[i] = i;
            std::sort(order.begin(), order.end(),
                      [&](std::size_t x, std::size_t y) { return value(front[x]) < value(front[y]); });
            const double lo = value(front[order.front()]);
            const double hi = value(front[order.back()]);
            front[order.front()].crowding = kNsgaInf;
            front[order.back()].crowding = kNsgaInf;
            if (!(hi > lo) || !std::isfinite(hi - lo))
                continue;
            for (std::size_t k = 1; k + 1 < order.size(); ++k)
                front[order[k]].crowding += (value(front[order[k + 1]]) - value(front[order[k - 1]])) / (hi - lo);
        }
    }

    const Member& tournament(const std::vector<Member>& population) {
        const Member& x = population[static_cast<std::size_t>(uniformBelow(rng, population.size()))];
        const Member& y = population[static_cast<std::size_t>(uniformBelow(rng, population.size()))];
        if (x.rank != y.rank)
            return x.rank < y.rank ? x : y;
        return x.crowding >= y.crowding ? x : y;
    }

    std::optional<std::uint64_t> child(const std::vector<Member>& population) {
        search::Breeder breeder(*space, rng);
        for (int attempt = 0; attempt < kNsgaChildAttempts; ++attempt) {
            const Config a = space->at(tournament(population).index);
            const Config b = space->at(tournament(population).index);
            if (const auto index = breeder.child(a, b, visited))
                return index;
        }
        return std::nullopt;
    }
};

Nsga2Strategy::Nsga2Strategy(const StrategyContext& context)
    : m_state(std::make_unique<State>(context)) {}

Nsga2Strategy::~Nsga2Strategy() = default;

std::vector<std::uint64_t> Nsga2Strategy::propose(std::size_t count) {
    State& s = *m_state;
    std::vector<std::uint64_t> out;
    // Parents come from what was observed before this call: a batch is one generation's children.
    const std::vector<State::Member> population = s.population();
    const bool breed = population.size() >= s.populationSize && std::isfinite(population.front().a);
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

void Nsga2Strategy::observe(std::span<const Observation> observations) {
    State& s = *m_state;
    for (const Observation& o : observations) {
        if (o.index >= s.visited.size() || !s.recorded.insert(o.index).second)
            continue;
        s.visited.insert(o.index);
        State::Member m;
        m.order = s.observed.size();
        m.index = o.index;
        if (search::isOk(o.status) && std::isfinite(o.score)) {
            m.a = o.score;
            m.b = o.energy && std::isfinite(*o.energy) ? *o.energy : kNsgaInf;
        }
        s.observed.push_back(m);
    }
}

bool Nsga2Strategy::done() const {
    return m_state->visited.full();
}

} // namespace tilescope
