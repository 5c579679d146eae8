#pragma once

// Tilescope's JSON cache of tuned configs: the best config per (kernel, shape, device), with
// where and from what it was tuned, so that `check` can tell when it went stale. The C++ header
// and the Triton export carry the same entries on one comment line.

#include "model/records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope {

/// The best config of one (kernel, shape, device): the fastest that ran correctly, or, of a
/// session that timed nothing (the analysis backend), the best by what compiling told.
struct BestConfig {
    std::string kernel;
    std::vector<std::pair<std::string, std::int64_t>> shape; ///< may be empty
    std::vector<std::int64_t> problemSize;                   ///< when the shape has no names
    std::string device;                                      ///< "" unknown
    std::string arch;                                        ///< "" unknown
    ConfigValues config;
    double timeMs = 0;
    double ciLowMs = 0; ///< the median's 95 % interval (0, 0: not known)
    double ciHighMs = 0;
    std::string objectiveName;       ///< "" = none
    std::optional<double> objective; ///< its value
    std::optional<double> energyJ;   ///< the energy of one launch, when measured (`--metrics energy`)
    std::int64_t sessionId = 0;
    int driverVersion = 0;  ///< the CUDA driver it was tuned with (13000 for 13.0; 0 unknown)
    std::string specHash;   ///< TuningProblem::specHash() of the problem it was tuned for ("" unknown)
    std::string sourceHash; ///< SHA-256 of the kernel source ("" unknown)

    /// What compiling told of a config that was analysed, never timed (ResultStatus::Analysed),
    /// and by which quantity it was chosen.
    struct Analysed {
        std::string rankedBy;            ///< staticRankName(): "occupancy", "registers", "spills"
        std::optional<double> occupancy; ///< theoretical, percent
        int registers = -1;              ///< -1: unknown
        std::int64_t spillStores = 0;    ///< bytes per thread
        std::int64_t spillLoads = 0;

        bool operator==(const Analysed&) const = default;
    };
    /// Set when the config was analysed, not timed: timeMs is 0 and there is no objective.
    std::optional<Analysed> analysed;

    bool operator==(const BestConfig&) const = default;
};

/// One result of a session as an entry of the JSON cache or the C++ header: a config chosen by
/// hand (a trade-off of the time-energy front) rather than the best. An analysed result's entry
/// says it was chosen by `by`.
BestConfig bestConfigOf(const SessionInfo& session, const ResultRecord& result, StaticRank by = StaticRank::Occupancy);
/// The best config (bestOf, analysed results ranked by `by`) per (kernel, shape, device) over
/// `sessions`, ordered by kernel, device, shape; sessions without a device name (the analysis
/// backend's) are told apart by their arch.
std::vector<BestConfig> bestConfigs(const std::vector<SessionData>& sessions, StaticRank by = StaticRank::Occupancy);
/// For people: "analysed for sm_90, not timed: occupancy 100 %, no spills, 32 registers" (the
/// quantities in the order they ranked); "" for a timed entry.
std::string describeAnalysed(const BestConfig& best);
/// Tilescope's JSON cache: {"format": "tilescope-best-configs", "version": 1, "entries": [...]}.
std::string writeBestConfigsJson(const std::vector<BestConfig>& best);
/// Reads it back. Throws InputError for bad JSON or another format or version.
std::vector<BestConfig> parseBestConfigsJson(const std::string& text, const std::string& fileName);
/// The entries of writeBestConfigsJson() on one comment line ("// tilescope-cache: {...}"), which
/// the C++ header and the Triton export carry so that `check` can tell when they went stale.
std::string bestConfigsMetadataLine(const std::vector<BestConfig>& best, const std::string& commentPrefix);
/// The best configs a file of tuned configs holds: a JSON cache, or the metadata line of a C++
/// header or Triton export. Throws InputError for anything else (and for a malformed cache).
std::vector<BestConfig> parseTunedConfigs(const std::string& text, const std::string& fileName);

} // namespace tilescope
