#pragma once

// Triton kernels read from their Python source without running Python: the top-level functions
// decorated with @triton.jit (or @triton.jit(...), @jit, under @triton.autotune and the like),
// their parameters in order, which are tl.constexpr and which have defaults; and the rules a
// Triton problem (KernelSpecification.Language "Triton") keeps with its kernel. A reader of
// Python's lexical structure (logical lines, brackets, strings, comments, continued lines), not
// a Python parser: enough for a def's signature however it is laid out.

#include "base/error.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

class TuningProblem;

struct TritonParameter {
    std::string name;
    std::string annotation;                 ///< as written ("tl.constexpr"); "" without one
    std::optional<std::string> defaultText; ///< the default as written; nullopt without one
    /// Triton's rule (KernelParam.is_constexpr): "constexpr" is in the annotation.
    bool isConstexpr = false;
    int line = 0; ///< 1-based, of its name
};

struct TritonFunction {
    std::string name;
    int line = 0;                        ///< 1-based, of `def`
    std::vector<std::string> decorators; ///< as written, without '@' ("triton.jit", "triton.autotune(...)")
    bool jit = false;                    ///< one of them is triton.jit (or jit, X.jit), with or without arguments
    std::vector<TritonParameter> parameters;
    /// Why the signature cannot be a kernel's ("*args" or "**kwargs"); "" when it can.
    std::string unsupported;

    /// The parameters a call passes positionally and the kernel receives: those not tl.constexpr.
    std::vector<const TritonParameter*> runtimeParameters() const;
    const TritonParameter* parameter(std::string_view wanted) const;
};

/// Every function defined at the top level of `source` (a module's text), decorated or not, in
/// order; a function defined twice appears twice (Python keeps the last).
std::vector<TritonFunction> scanPythonFunctions(std::string_view source);

/// Triton's compile options that a tuning parameter may name, those triton.Config takes:
/// num_warps, num_stages, num_ctas, maxnreg.
const std::vector<std::string>& tritonCompileOptions();
bool isTritonCompileOption(std::string_view name);
/// Triton's default warps per program (triton.Config and the JIT): 4, so 128 threads a block.
inline constexpr int kTritonDefaultWarps = 4;

/// The kernel of a Triton problem, checked against the problem: the top-level @triton.jit
/// function KernelName in `source` (the kernel file's text), each tuning parameter a tl.constexpr
/// parameter of it or a compile option, one T1 Argument per parameter that is not tl.constexpr,
/// a value for every tl.constexpr parameter (a tuning parameter, a shape name or its default).
/// Throws InputError naming the field and the name at fault.
TritonFunction checkTritonKernel(const TuningProblem& problem, std::string_view source);

} // namespace tilescope
