#include "tuner/prune.h"

#include "analysis/occupancy.h"

namespace tilescope {

std::string compileFailure(const CompileResult& cr) {
    return cr.message.empty() ? std::string(compileStatusName(cr.status)) : cr.message;
}

std::optional<PruneVerdict> verdictBeforeMeasuring(const CompileResult& cr, const ConfigAnalysis& a,
                                                   const std::optional<ArchLimits>& limits, bool pruneHeavySpills) {
    if (!cr.ok())
        return PruneVerdict{ResultStatus::CompileError, compileFailure(cr), cr.log};
    if (!a.geometry.error.empty())
        return PruneVerdict{ResultStatus::LaunchError, a.geometry.error, {}};
    if (limits) {
        const Occupancy occ = theoreticalOccupancy(
            *limits, KernelResources::of(cr.info, a.geometry.threadsPerBlock(), a.geometry.sharedDynamic));
        if (!occ.launchable)
            return PruneVerdict{ResultStatus::Pruned, "over the device's limits: " + occ.reason, {}};
    }
    if (pruneHeavySpills && a.spill == SpillClass::Heavy)
        return PruneVerdict{ResultStatus::Pruned,
                            "heavy register spilling: " + std::to_string(cr.info.spillStores) + " bytes stored, " +
                                std::to_string(cr.info.spillLoads) + " loaded per thread",
                            {}};
    return std::nullopt;
}

} // namespace tilescope
