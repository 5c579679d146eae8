#pragma once

// The objective of a tuning problem (Tilescope.Objective: Count / seconds / Scale, e.g. TFLOP/s)
// and what a strategy learns from a result: minus the objective when the problem has one, else
// the median time.

#include "model/measurement.h"
#include "search/strategy.h"
#include "spec/tuningproblem.h"
#include "space/configspace.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tilescope {

class TuningProblem;

/// The objective of `problem` for a config at shape `shapeIndex`: Count / seconds / Scale,
/// e.g. TFLOP/s. Compiled once, evaluated per result.
class ObjectiveEvaluator {
public:
    /// Throws InputError when the Count expression does not compile. Without an objective in the
    /// problem, value() is always nullopt.
    ObjectiveEvaluator(const TuningProblem& problem, std::size_t shapeIndex);
    ~ObjectiveEvaluator();
    bool enabled() const;
    const std::string& name() const;
    /// Whether value() needs each launch's energy (an objective per joule or per joule-second).
    bool needsEnergy() const;
    /// nullopt when disabled, the time is not positive, the expression fails for this config, or
    /// the objective needs the energy and `joules` (per launch) is not given or not positive.
    std::optional<double> value(const ConfigSpace& space, const Config& config, double timeMs,
                                std::optional<double> joules = std::nullopt) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// The energy of one launch a result measured (its "energy" metric, J); nullopt without one.
std::optional<double> energyOf(const std::vector<Metric>& metrics);

/// Whether the problem's objectives need each launch's energy (an objective per joule, or energy
/// or edp among Tilescope.Objectives): a session then measures it (`--metrics energy`).
bool objectivesNeedEnergy(const TuningProblem& problem);

/// The problem's objective turned to `what` (`tune --objective`): "time" leaves it as it is,
/// "energy" divides its count (1 without one: launches/J) by the joules of a launch, "edp" by
/// joules times seconds. Throws InputError for another word.
std::optional<Objective> objectiveFor(const std::string& what, const std::optional<Objective>& current);

/// A stored result as a strategy observes it (config `index` of the space; `prior`: recorded
/// before this run): its score is minus its objective when it has one (higher is better), else
/// its median time.
Observation observationOf(const ResultRecord& r, std::uint64_t index, bool prior);

} // namespace tilescope
