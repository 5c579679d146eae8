#include "tuner/objective.h"

#include "base/error.h"
#include "spec/tuningproblem.h"

namespace tilescope {

struct ObjectiveEvaluator::Impl {
    bool enabled = false;
    std::string name;
    expr::Expression count;
    double scale = 1;
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

std::optional<double> ObjectiveEvaluator::value(const ConfigSpace& space, const Config& config, double timeMs) const {
    const Impl& d = *m_impl;
    if (!d.enabled || !(timeMs > 0))
        return std::nullopt;
    std::vector<expr::Value> slots = d.slots;
    for (std::size_t p = 0; p < d.parameters && p < config.size(); ++p)
        slots[p] = space.value(config, static_cast<int>(p));
    expr::Value out;
    expr::EvalStatus status;
    if (!d.count.tryEvaluate(slots.data(), out, status) || !out.isNumber())
        return std::nullopt;
    const double count = out.kind == expr::Kind::Float ? out.f : static_cast<double>(out.i);
    return count / (timeMs * 1e-3) / d.scale;
}

Observation observationOf(const ResultRecord& r, std::uint64_t index, bool prior) {
    Observation o;
    o.index = index;
    o.status = r.status();
    o.score = r.objective ? -*r.objective : r.timeMs();
    o.prior = prior;
    o.features = staticFeaturesOf(r);
    return o;
}

} // namespace tilescope
