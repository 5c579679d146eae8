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

/// The best Ok config of one (kernel, shape, device).
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

    bool operator==(const BestConfig&) const = default;
};

/// One result of a session as an entry of the JSON cache or the C++ header: a config chosen by
/// hand (a trade-off of the time-energy front) rather than the best.
BestConfig bestConfigOf(const SessionInfo& session, const ResultRecord& result);
/// The best config per (kernel, shape, device) over `sessions`, ordered by kernel, device, shape.
std::vector<BestConfig> bestConfigs(const std::vector<SessionData>& sessions);
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
