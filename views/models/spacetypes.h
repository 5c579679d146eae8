#pragma once

// What the space controller (problem/spacecontroller.h) delivers and the parameter, condition
// and sample models show: the space of one shape with its statistics, a sample of its configs,
// and what each condition removes. Immutable once delivered; shared between threads.

#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QString>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace tilescope::views {

/// The space of one (problem, shape): its statistics, or why it could not be built.
struct SpaceResult {
    std::shared_ptr<const TuningProblem> problem;
    std::size_t shapeIndex = 0;
    std::shared_ptr<const ConfigSpace> space; ///< null when the build failed
    SpaceStats stats;                         ///< empty when the build failed
    QString errorLocation;                    ///< JSON pointer of the failing field, when it failed
    QString errorMessage;                     ///< "" when it succeeded

    bool ok() const { return space != nullptr; }
};

/// A uniform sample of valid configs of one space.
struct SampleSet {
    std::shared_ptr<const ConfigSpace> space;
    std::uint64_t seed = 0;
    std::vector<std::uint64_t> indices; ///< indices into the space, in sampled order
    std::vector<Config> configs;        ///< configs[i] = space->at(indices[i])
};

/// What one condition does to the space of one shape.
struct ConditionImpact {
    /// Raw combinations that fail this condition on its own (nullopt: not computable).
    std::optional<double> rejected;
    /// Valid configs that only this condition rejects: the valid size gained by dropping it.
    std::optional<std::uint64_t> removed;
};

struct ConditionImpactSet {
    std::shared_ptr<const ConfigSpace> space;
    double rawSize = 0;
    std::vector<ConditionImpact> conditions; ///< one per condition of the problem
    /// For each parameter, for each of its values: how many valid configs keep it (a value kept
    /// by none is dead). Exact up to kExactValueCounts valid configs (see countValues in
    /// problem/spacecontroller.h), else estimated from a uniform sample and scaled to the space's
    /// size (`valueCountsEstimated`).
    std::vector<std::vector<double>> valueCounts;
    bool valueCountsEstimated = false;
    /// The valid count at every shape of the problem, in order (nullopt: too large to count
    /// within the limits); empty for a problem of one shape.
    std::vector<std::optional<std::uint64_t>> validPerShape;
};

} // namespace tilescope::views
