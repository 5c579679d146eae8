#pragma once

// Tuning parameters that do not change the compiled kernel. A config and its neighbours that
// differ from it in one parameter each are compiled; where a neighbour's binary is the base's
// own byte for byte, that parameter's value never reached the code. Where the kernel names the
// parameter (or the parameter changes nothing of the launch either), that is a problem: every
// value measures the same code, as when a kernel written for Kernel Tuner keeps its defaults
// without the "#ifndef kernel_tuner" guard. The cause is named where it can be found: a #define
// of the parameter in the kernel file, or NVRTC's warning that a macro was redefined (which for a
// tuning parameter is always reported, whether or not the binaries agree). A parameter the kernel
// never names that changes the launch (a block size read through blockDim) is as it should be.

#include "analysis/launchcheck.h"
#include "compile/compileservice.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope {

class ConfigSpace;
class StaticAnalyzer;
class TuningProblem;

struct InertParameter {
    std::string name;
    bool namedInKernel = false; ///< the kernel file or its headers name it
    bool sameBinary = false;    ///< a config and its neighbour in this parameter compiled to one binary
    std::string configA;        ///< the two configs (described), when sameBinary
    std::string configB;
    std::string cause; ///< "kernel.cu:3 #define tile 4", NVRTC's redefinition warning, or ""
};

/// Compiles the first config of `bases` that compiles, and its neighbours in each parameter with
/// several values (the next valid value; a second base confirms what the first finds), for
/// `arch` on `service`; returns the parameters found inert or redefined, in parameter order.
/// Without `compareNeighbours`, only `bases` are compiled (all of them: configs already compiled come
/// from the cache) and only the compiler's redefinition warnings are findings. Compile errors are
/// not findings. Never throws for what a config causes.
std::vector<InertParameter> findInertParameters(const StaticAnalyzer& analyzer, const ConfigSpace& space,
                                                CompileService& service, const std::string& arch,
                                                std::span<const std::uint64_t> bases,
                                                const std::atomic<bool>* cancel = nullptr,
                                                bool compareNeighbours = true);

/// The warning ("inert-parameter", at the first parameter's field) for `found`, or nullopt when
/// nothing was found or the problem silences it.
std::optional<LaunchWarning> inertWarning(const TuningProblem& problem, const std::vector<InertParameter>& found);

/// The names NVRTC's log says were redefined ("incompatible redefinition of macro"), with the
/// log's line for each, in log order.
std::vector<std::pair<std::string, std::string>> redefinedMacros(std::string_view log);

} // namespace tilescope
