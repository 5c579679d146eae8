#pragma once

// Offline static analysis of a tuning problem's configs: compile each (config, arch) with NVRTC
// through the compile service, then take registers, spills, stack and shared memory from ptxas,
// the launch geometry from GeometryPlanner (the one the worker launches with), and the
// theoretical occupancy and its limiter from the arch's table. No GPU needed.

#include "analysis/gpuarch.h"
#include "analysis/occupancy.h"
#include "analysis/rulesuggest.h"
#include "compile/compileservice.h"
#include "compile/requestbuilder.h"
#include "space/configspace.h"
#include "spec/launchgeometry.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

class TuningProblem;

/// How badly a config spills, by spill bytes (stores + loads) per thread.
enum class SpillClass : std::uint8_t {
    None,  ///< no spill stores or loads (a stack frame of local arrays may remain)
    Light, ///< a few registers' worth: usually cheap, served by L1
    Heavy, ///< the working set lives in local memory: expect a large slowdown
};

/// Spill bytes per thread (stores + loads) from which a spill counts as heavy: 32 four-byte
/// values each way, beyond what ptxas spills around a cold call or a launch-bounds squeeze.
inline constexpr std::int64_t kHeavySpillBytes = 256;

SpillClass classifySpill(const StaticInfo& info, std::int64_t heavyBytes = kHeavySpillBytes);
/// "none", "light", "heavy".
std::string_view spillClassName(SpillClass spill);

/// One (config, arch).
struct ConfigAnalysis {
    std::uint64_t index = 0; ///< in the ConfigSpace
    Config config;
    std::string arch;
    CompileStatus status = CompileStatus::CompileError;
    std::string message; ///< the compile error's first line, or a geometry error; "" when fine
    std::string log;     ///< NVRTC's full log when the compile failed ("" when it succeeded)
    StaticInfo info;
    /// The launch: GeometryPlanner's, with the threads and dynamic shared memory of a binary
    /// that decides them itself (CompileResult::launch, a Triton kernel's; a LocalSize that
    /// disagrees with its threads is a geometry error).
    LaunchGeometry geometry;
    Occupancy occupancy; ///< computed when the compile and the geometry succeeded
    SpillClass spill = SpillClass::None;
    double compileSeconds = 0;
    bool cached = false;

    bool compiled() const { return status == CompileStatus::Ok; }
    bool spills() const { return compiled() && info.spills(); }
    /// Shared memory per block: static (ptxas) + dynamic (the launch).
    std::int64_t sharedBytes() const { return info.sharedStatic + geometry.sharedDynamic; }
};

using AnalysisProgress = CompileProgress;

class StaticAnalyzer {
public:
    /// Reads the kernel file and compiles the geometry expressions; `problem` must outlive the
    /// analyzer. Throws InputError (the problem's first launch blocker, an unreadable kernel file,
    /// and what GeometryPlanner's constructor throws).
    StaticAnalyzer(const TuningProblem& problem, std::size_t shapeIndex = 0);
    ~StaticAnalyzer();
    StaticAnalyzer(const StaticAnalyzer&) = delete;
    StaticAnalyzer& operator=(const StaticAnalyzer&) = delete;

    /// Throws InputError unless `arch` has an occupancy table entry and NVRTC compiles for it;
    /// the message lists the archs that work.
    static void checkArch(const std::string& arch);
    /// The archs both NVRTC and the occupancy table know, ascending.
    static std::vector<std::string> analysableArchs();

    const TuningProblem& problem() const { return m_problem; }
    std::size_t shapeIndex() const { return m_shapeIndex; }
    const RequestBuilder& requests() const { return m_requests; }

    /// The launch geometry of `config` at the analyzer's shape (GeometryPlanner::plan).
    LaunchGeometry geometry(const Config& config) const { return m_geometry.plan(config); }
    /// The analysis of `config` on `arch` from its compile result (for callers that compile
    /// themselves, such as a tuning session).
    ConfigAnalysis analyze(std::uint64_t index, const Config& config, const std::string& arch,
                           const CompileResult& result) const;
    /// Compiles every (config, arch) on the service's pool and analyses it. Results are ordered
    /// config-major: element c * archs.size() + a is indices[c] on archs[a]. Compile errors are
    /// results; nothing a config causes makes this throw.
    std::vector<ConfigAnalysis> run(const ConfigSpace& space, std::span<const std::uint64_t> indices,
                                    const std::vector<std::string>& archs, CompileService& service,
                                    const AnalysisProgress& progress = {},
                                    const std::atomic<bool>* cancel = nullptr) const;

private:
    const TuningProblem& m_problem;
    std::size_t m_shapeIndex;
    RequestBuilder m_requests;
    GeometryPlanner m_geometry;
};

/// Per-arch totals of an analysis.
struct ArchSummary {
    std::string arch;
    std::size_t configs = 0;
    std::size_t compiled = 0;
    std::size_t failed = 0; ///< compile errors (and other non-Ok statuses)
    std::size_t spilling = 0;
    std::size_t lightSpills = 0;
    std::size_t heavySpills = 0;
    std::size_t localOnly = 0;    ///< a stack frame without spills (local arrays)
    std::size_t unlaunchable = 0; ///< compiled, but a block does not fit an SM
    double minOccupancy = 0;      ///< percent, over launchable configs
    double medianOccupancy = 0;
    double maxOccupancy = 0;
    std::array<std::size_t, 6> limiters{}; ///< launchable configs per Limiter
};

std::vector<ArchSummary> summarizeByArch(const std::vector<ConfigAnalysis>& results,
                                         const std::vector<std::string>& archs);

/// Configs that spill on one arch and compile without spilling on another.
struct SpillDifference {
    std::string spillsOn;
    std::string cleanOn;
    std::vector<std::uint64_t> indices; ///< space indices, ascending
};

/// For every ordered pair of archs with a difference.
std::vector<SpillDifference> spillDifferences(const std::vector<ConfigAnalysis>& results,
                                              const std::vector<std::string>& archs);

/// The register-pressure rule for `arch`, learnt from the configs that compiled on it: positive
/// = spills at least as badly as `minimum` (Light: any spill; Heavy: heavy spills only, which
/// cost the most and which simple bounds separate better than the few-byte spills ptxas' heuristics
/// scatter over a space).
RuleSuggestion suggestSpillRule(const TuningProblem& problem, std::size_t shapeIndex,
                                const std::vector<ConfigAnalysis>& results, const std::string& arch,
                                const RuleSearchOptions& options = {}, SpillClass minimum = SpillClass::Light);

} // namespace tilescope
