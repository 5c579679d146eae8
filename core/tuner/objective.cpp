#include "tuner/objective.h"

#include "base/error.h"
#include "spec/tuningproblem.h"

#include <algorithm>

namespace tilescope {

struct ObjectiveEvaluator::Impl {
    bool enabled = false;
    std::string name;
    expr::Expression count;
    double scale = 1;
    bool energy = false;
    bool energyDelay = false;
    expr::ValueList storage;
    std::vector<expr::Value> slots;
    std::size_t parameters = 0;
};

ObjectiveEvaluator::ObjectiveEvaluator(const TuningProblem& problem, std::size_t shapeIndex)
    : m_impl(std::make_unique<Impl>()) {
    if (!problem.objective || problem.objective->count.empty())
        return;
    Impl& d = *m_impl;
    d.name = problem.objective->name.empty() ? "objective" : problem.objective->name;
    d.scale = problem.objective->scale > 0 ? problem.objective->scale : 1;
    d.energy = problem.objective->needsEnergy();
    d.energyDelay = problem.objective->per == "joule-second";
    try {
        d.count = expr::Expression::compile(problem.objective->count, problem.scope());
    } catch (const expr::ExprError& e) {
        throw InputError(problem.fileName, "/Tilescope/Objective/Count", e.what());
    }
    d.slots = problem.shapeSlots(shapeIndex, d.storage);
    d.parameters = problem.parameters.size();
    d.enabled = true;
}

ObjectiveEvaluator::~ObjectiveEvaluator() = default;
bool ObjectiveEvaluator::enabled() const {
    return m_impl->enabled;
}
const std::string& ObjectiveEvaluator::name() const {
    return m_impl->name;
}

bool ObjectiveEvaluator::needsEnergy() const {
    return m_impl->enabled && m_impl->energy;
}

std::optional<double> ObjectiveEvaluator::value(const ConfigSpace& space, const Config& config, double timeMs,
                                                std::optional<double> joules) const {
    const Impl& d = *m_impl;
    if (!d.enabled || !(timeMs > 0))
        return std::nullopt;
    if (d.energy && !(joules && *joules > 0))
        return std::nullopt;
    std::vector<expr::Value> slots = d.slots;
    for (std::size_t p = 0; p < d.parameters && p < config.size(); ++p)
        slots[p] = space.value(config, static_cast<int>(p));
    expr::Value out;
    expr::EvalStatus status;
    if (!d.count.tryEvaluate(slots.data(), out, status) || !out.isNumber())
        return std::nullopt;
    const double count = out.kind == expr::Kind::Float ? out.f : static_cast<double>(out.i);
    if (d.energyDelay)
        return count / (*joules * timeMs * 1e-3) / d.scale;
    if (d.energy)
        return count / *joules / d.scale;
    return count / (timeMs * 1e-3) / d.scale;
}

std::optional<double> energyOf(const std::vector<Metric>& metrics) {
    for (const Metric& m : metrics)
        if (m.name == kEnergyMetric)
            return m.value;
    return std::nullopt;
}

bool objectivesNeedEnergy(const TuningProblem& problem) {
    if (problem.objective && problem.objective->needsEnergy())
        return true;
    return std::any_of(problem.objectives.begin(), problem.objectives.end(),
                       [](const std::string& o) { return o != "time"; });
}

std::optional<Objective> objectiveFor(const std::string& what, const std::optional<Objective>& current) {
    if (what == "time")
        return current;
    if (what != "energy" && what != "edp")
        throw InputError("", "--objective", "'" + what + "' is no objective: time, energy or edp");
    Objective o;
    if (current && current->per == "second") {
        o = *current;
    } else {
        o.name = "launches";
        o.count = "1";
    }
    // "TFLOP/s" -> "TFLOP/J" or "TFLOP/(J*s)"; a name without "/s" gets the unit after it.
    std::string base = o.name;
    if (base.size() > 2 && base.compare(base.size() - 2, 2, "/s") == 0)
        base.resize(base.size() - 2);
    o.per = what == "energy" ? "joule" : "joule-second";
    o.name = base + (what == "energy" ? "/J" : "/(J*s)");
    return o;
}

Observation observationOf(const ResultRecord& r, std::uint64_t index, bool prior) {
    Observation o;
    o.index = index;
    o.status = r.status();
    o.score = r.objective ? -*r.objective : r.timeMs();
    o.prior = prior;
    o.energy = energyOf(r.measurement.metrics);
    o.features = staticFeaturesOf(r);
    return o;
}

} // namespace tilescope
