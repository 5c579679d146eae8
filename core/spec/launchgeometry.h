#pragma once

// The launch geometry of one config of a tuning problem at one shape: grid, block and dynamic
// shared memory from the T1 expressions, by Kernel Tuner's rules where it defines them. The one
// place they are computed: the worker launches with it, the static analysis and the session
// check and record it. No CUDA here.

#include "model/config.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tilescope {

class TuningProblem;

/// The launch of one config. Without LocalSize the block is Kernel Tuner's: block_size_x/y/z,
/// the tuning parameters of those names or 256, 1, 1.
struct LaunchGeometry {
    std::array<std::int64_t, 3> grid{1, 1, 1};  ///< blocks
    std::array<std::int64_t, 3> block{1, 1, 1}; ///< threads
    std::int64_t sharedDynamic = 0;             ///< bytes
    std::string error; ///< why the config cannot be launched: which expression, what went wrong ("" = fine)

    bool ok() const { return error.empty(); }
    std::int64_t threadsPerBlock() const { return block[0] * block[1] * block[2]; }
};

/// How the grid follows from the problem (Kernel Tuner's semantics).
enum class GridRule : std::uint8_t {
    /// GlobalSizeType "CUDA": GlobalSize is the grid, in blocks.
    GlobalSizeInBlocks,
    /// Kernel Tuner's rule, taken when ProblemSize is given with GridDiv, or without GlobalSize:
    /// grid_i = ceil(ProblemSize_i / product(GridDiv_i)); a dimension without GridDiv is divided
    /// by the tuning parameter block_size_x/y/z where there is one, else by 1; one without
    /// ProblemSize is 1.
    ProblemSizeOverGridDiv,
    /// Otherwise GlobalSize counts threads: grid_i = ceil(GlobalSize_i / LocalSize_i).
    GlobalSizeInThreads,
};

/// The names of the launch warnings (analysis/launchcheck.h), as Tilescope.Silence lists them:
/// "launch-coverage, global-size, launch-limits, varying-size, buffer-edge".
std::string_view launchWarningNames();
bool isLaunchWarningName(std::string_view name);

/// The range of SharedMemory, one rule for a number in the file and an expression's value: ""
/// when `bytes` of dynamic shared memory can be asked for, else why not ("SharedMemory must not
/// be negative, got -5"; past 2^31 - 1 bytes, more than any device has).
std::string sharedMemoryOutOfRange(double bytes);

/// "GlobalSize in blocks (GlobalSizeType CUDA)", ...: for messages and reports.
std::string_view gridRuleName(GridRule rule);

class GeometryPlanner {
public:
    /// Compiles the problem's geometry expressions (GlobalSize, LocalSize or the block_size
    /// names, GridDiv, SharedMemory) for shape `shapeIndex`; `problem` must outlive the planner.
    /// Throws InputError (naming the field by its JSON pointer) for a shape index out of range,
    /// an expression that does not compile or fails for the shape, and a problem without
    /// GlobalSize or ProblemSize.
    GeometryPlanner(const TuningProblem& problem, std::size_t shapeIndex);
    ~GeometryPlanner();
    GeometryPlanner(GeometryPlanner&&) noexcept;
    GeometryPlanner& operator=(GeometryPlanner&&) = delete;
    GeometryPlanner(const GeometryPlanner&) = delete;
    GeometryPlanner& operator=(const GeometryPlanner&) = delete;

    GridRule gridRule() const;

    /// The launch of `config` (value indices, one per parameter). Never throws: a config whose
    /// expressions fail or give an impossible geometry (a dimension below 1, negative shared
    /// memory, a value beyond 32 bits) comes back with `error` set.
    LaunchGeometry plan(const Config& config) const;

    /// The grid GlobalSize gives `config` by its GlobalSizeType (blocks with CUDA, else threads
    /// over `block`), whichever rule the launch follows: to compare a GlobalSize that is not read
    /// with the grid launched. nullopt without GlobalSize or when it fails for the config.
    std::optional<std::array<std::int64_t, 3>> globalSizeGrid(const Config& config,
                                                              const std::array<std::int64_t, 3>& block) const;

private:
    struct Expressions;
    const TuningProblem& m_problem;
    std::unique_ptr<Expressions> m_expressions;
};

} // namespace tilescope
