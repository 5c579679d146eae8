#pragma once

// From a tuning problem's config to a compile request, Kernel Tuner's way (prepare_kernel_string,
// compile/kernelsource.h): the defines are grid_size_x/y/z (the config's grid at the shape),
// block_size_x/y/z (its block), then every tuning parameter not among those, in the problem's
// order, then kernel_tuner 1; tuning parameter names in the kernel name and in string values are
// replaced by their values. The problem's CompilerOptions follow, and the kernel file's folder is
// the include dir. Shape names (M, N, K) are not defined: kernels take them as arguments (sgemm's
// M, N, K would collide). Defines of names that the kernel never mentions are left out of the
// compile cache's key, so a compile that does not depend on the shape, or on a launch-only
// parameter, is shared through the cache.

#include "compile/compiler.h"
#include "space/configspace.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

class GeometryPlanner;
class TuningProblem;

/// What compiles the problem's kernel, with its version: "NVRTC 13.0", "nvcc 13.0" for a problem
/// that asks for nvcc, or for a Triton kernel "Triton 3.6.0" (or "Triton" where it is not installed).
std::string compilerLabel(const TuningProblem& problem);

/// The text of a parameter value in a -D option: ints in decimal, floats as Python's repr
/// (0.5, 1e-05), bools as 1 and 0 (C has no True), strings as they are.
std::string defineValue(const expr::Value& value);

class RequestBuilder {
public:
    /// Reads the problem's kernel file; grid_size_x/y/z are those of shape `shapeIndex`. Throws
    /// InputError naming KernelFile when it cannot read the kernel. `problem` must outlive it.
    /// A Triton problem's kernel is checked against it (checkTritonKernel), its scalar arguments
    /// taken at the shape; without Triton here it is refused (InputError saying how to install it).
    explicit RequestBuilder(const TuningProblem& problem, std::size_t shapeIndex = 0);
    ~RequestBuilder();
    RequestBuilder(RequestBuilder&&) noexcept;
    RequestBuilder& operator=(RequestBuilder&&) = delete;
    RequestBuilder(const RequestBuilder&) = delete;
    RequestBuilder& operator=(const RequestBuilder&) = delete;

    /// The request for `config` (value indices in the problem's parameter order) and `arch`.
    CompileRequest request(const Config& config, const std::string& arch) const;
    /// The defines of `config` in Kernel Tuner's order (above). Where the config's launch cannot
    /// be planned, the grid is left out and the block is block_size_x/y/z or 256, 1, 1. For a
    /// Triton kernel: the call's keywords (the tuning parameters' values as JSON, then the
    /// tl.constexpr values a shape dim gives).
    Defines defines(const Config& config) const;
    /// The tuning parameters' texts for `config`, in parameter order (their -D values; JSON for
    /// a Triton kernel).
    Defines parameterValues(const Config& config) const;
    /// The source Kernel Tuner would compile for `config`: prepareKernelSource of the kernel
    /// file with defines(config).
    std::string preparedSource(const Config& config) const;
    /// The kernel name with tuning parameter names replaced by `config`'s values.
    std::string kernelName(const Config& config) const;
    /// `identifier` occurs in `source` as a whole word.
    static bool mentions(std::string_view source, std::string_view identifier);

    const std::string& source() const { return m_base.source; }

private:
    // A Triton kernel's requests: the call's arguments at the shape, its keywords per config.
    void buildTriton(const TuningProblem& problem, std::size_t shapeIndex);
    // A problem that asks for nvcc: refused without nvcc; its options' $VARIABLES expanded.
    void useNvcc(const TuningProblem& problem, const std::filesystem::path& kernel);

    bool m_triton = false;
    Defines m_shapeKeywords;                       // Triton: tl.constexpr values from the shape
    CompileRequest m_base;                         // everything but defines and arch
    std::vector<std::string> m_names;              // parameter names
    std::vector<std::vector<std::string>> m_texts; // [parameter][value index] -> define text
    std::vector<std::vector<bool>> m_isText;       // [parameter][value index] -> a string value
    std::unique_ptr<GeometryPlanner> m_geometry;   // null: the launch cannot be planned
    std::array<int, 3> m_blockParameter{-1, -1, -1}; // the parameter that is block_size_x/y/z, or -1
    std::array<std::int64_t, 3> m_implicitBlock{0, 0, 0}; // Kernel Tuner's default where not tuned (0: a shape name)
};

} // namespace tilescope
