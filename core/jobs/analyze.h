#pragma once

// The analyse use case: a problem's configs compiled offline for one or more archs (registers,
// spills, stack, shared memory, theoretical occupancy and its limiter per config), the
// register-pressure rule learnt per arch, and with `lines` where each config's local memory is by
// source line (nvdisasm), with `executed` each such config run once on this machine's GPU with
// CUPTI's counts. The CLI's analyze and the workbench's compile check both run it: each maps its
// options or widgets onto an AnalyzeRequest and shows the AnalyzeOutcome.

#include "analysis/launchcheck.h"
#include "analysis/sourcelines.h"
#include "analysis/staticanalysis.h"
#include "jobs/spillrule.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

class ConfigSpace;
class TuningProblem;

inline constexpr std::uint64_t kDefaultAnalysisSample = 64; ///< configs sampled when none are asked for
inline constexpr std::size_t kLinesHint = 16; ///< compiled configs past which reading all their lines earns a note

struct AnalyzeRequest {
    std::string problemPath; ///< read when `problem` is null; named in messages either way
    std::shared_ptr<const TuningProblem> problem;
    std::shared_ptr<const ConfigSpace> space; ///< the problem's space at `shape`, when built already
    std::size_t shape = 0;
    std::vector<std::string> archs; ///< empty: sm_90, or the GPU's with `executed`
    bool all = false;               ///< every valid config
    std::uint64_t sample = 0;       ///< configs drawn at random (0: kDefaultAnalysisSample, or all when fewer)
    std::uint64_t seed = 0;
    std::vector<std::uint64_t> indices; ///< these configs of the space rather than a sample
    unsigned jobs = 0;                  ///< compile threads (0: one per hardware thread)
    std::string cacheDir;               ///< "" the default folder
    bool noCache = false;
    std::string csvPath; ///< also write the records there as CSV
    bool lines = false;
    bool spilling = false; ///< with `lines`: only the configs with spills or local memory
    bool executed = false; ///< with `lines`: run the configs once on this machine's GPU
    bool inertCheck = true;
    std::uint64_t ruleSpaceLimit = 20'000'000; ///< the rules are counted over spaces of at most this many configs
    const std::atomic<bool>* cancel = nullptr;
};

/// What the analysis is about to do, once every input was checked.
struct AnalyzeStart {
    std::string selection; ///< "64 of 2,761 valid configs, sampled with seed 0 (the default; ...)"
    std::vector<std::string> archs;
    std::string compiler; ///< "NVRTC 13.0", ...
    unsigned threads = 0;
    std::string cacheDir; ///< "" without a cache
};

/// Reports as the analysis goes. Each may be left empty.
struct AnalyzeEvents {
    std::function<void(const TuningProblem&, const ConfigSpace&)> spaceBuilt; ///< before any check of the space
    std::function<void(const AnalyzeStart&)> started;
    std::function<void(const std::string& verb, std::uint64_t total)>
        stageStarted; ///< "compiled", "read lines of", "ran"
    std::function<void(std::uint64_t done)> stageProgress;
    std::function<void(const std::string& summary)> stageFinished;
    std::function<void(const std::string& text)> note;
    std::function<void(const LaunchWarning&)> warning;
};

/// Where one analysed config's local memory is, by source line.
struct LineReport {
    bool read = false; ///< its lines were asked for (`spilling` leaves out the configs without local memory)
    LineCounts counts;
    std::string error;             ///< why the lines could not be read ("" when they were)
    std::string executedError;     ///< why `executed` has no counts for this config ("" when it has, or was not asked)
    std::vector<SourceLine> local; ///< the lines with local memory, most first (localLines)
    std::vector<std::string> localText; ///< their source text, trimmed ("" where the file was not found)
};

struct AnalyzeOutcome {
    std::string problemPath;
    std::shared_ptr<const TuningProblem> problem;
    std::shared_ptr<const ConfigSpace> space;
    std::vector<std::string> archs;
    std::vector<ConfigAnalysis> results; ///< by config, then arch
    std::vector<LineReport> lines;       ///< one per result with `lines`; empty otherwise
    std::vector<SpillRule> rules;        ///< one per arch
    std::string partOf;                  ///< what the configs are when not the whole space ("a sample"), else ""
    std::size_t failed = 0;              ///< results that did not compile
    std::size_t cached = 0;              ///< results from the compile cache
    /// The compile error every config failed with, when none compiled and all failed alike (a
    /// header not found; a kernel name that names no kernel): the kernel or the problem is at
    /// fault, not a parameter. "" otherwise.
    std::string commonFailure;
};

/// The compiles that failed with one message: a parameter value that breaks the kernel breaks
/// it the same way in every config that has it.
struct CompileFailureGroup {
    std::string message;
    std::vector<const ConfigAnalysis*> members; ///< in the order of the results
    std::vector<std::uint64_t> indices;         ///< the configs, each once
    std::vector<std::string> archs;             ///< each once, in the order met
};

/// The failed compiles of `results` grouped by message, in the order each message first comes.
std::vector<CompileFailureGroup> compileFailureGroups(const std::vector<ConfigAnalysis>& results);

/// Runs the analysis. Throws InputError (before any compile) for a problem that cannot be read,
/// an arch that cannot be analysed, no valid config, an index past the space, no nvdisasm with
/// `lines`, or no usable GPU with `executed`; Cancelled when `cancel` turns true.
AnalyzeOutcome runAnalysis(const AnalyzeRequest& request, const AnalyzeEvents& events = {});

/// The records as the CLI's --json gives them: a list, one object per (config, arch), with
/// "lines" for those whose lines were read; indented by 2.
std::string analysisJson(const AnalyzeOutcome& outcome);

/// The records as CSV, written to `path` atomically.
void writeAnalysisCsv(const std::string& path, const std::vector<ConfigAnalysis>& results, const ConfigSpace& space);

/// The first `shown` of `indices` for people: "3, 17, 40, ..." (", ..." when there are more).
std::string indexList(const std::vector<std::uint64_t>& indices, std::size_t shown);

} // namespace tilescope
