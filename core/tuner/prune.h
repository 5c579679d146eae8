#pragma once

// What stops a compiled config before it reaches the device: its compile failed, its launch
// geometry does not work out, it is over the device's limits (threads, shared memory, registers
// per block), or, when asked, it spills heavily. Such configs are recorded without measuring.

#include "analysis/gpuarch.h"
#include "analysis/staticanalysis.h"
#include "compile/compiler.h"
#include "model/measurement.h"

#include <optional>
#include <string>

namespace tilescope {

/// A config's result decided before measuring.
struct PruneVerdict {
    ResultStatus status = ResultStatus::Pruned;
    std::string message;
    std::string log; ///< the compile log of a compile error
};

/// The message a failed compile is recorded with: its own, else its status's name.
std::string compileFailure(const CompileResult& cr);

/// The verdict on a config compiled as `cr` and analysed as `a` (against `limits` when the
/// device's are known): CompileError, LaunchError (the geometry's error), Pruned (over the
/// limits, or spilling heavily when `pruneHeavySpills`); nullopt when it goes to the device.
std::optional<PruneVerdict> verdictBeforeMeasuring(const CompileResult& cr, const ConfigAnalysis& a,
                                                   const std::optional<ArchLimits>& limits, bool pruneHeavySpills);

} // namespace tilescope
