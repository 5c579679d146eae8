#pragma once

// Times that cannot be right. A config whose median is below what its outputs take to write, or
// below the problem's roofline, did not do its work: a kernel that returns early, or one whose
// parameters never reached the code, looks like this. A launch with more registers than a thread
// block may hold could not have run at all, whatever time a tool recorded for it. Such results
// are `implausible`: never a winner, never exported as a best config.
//
// The floor is conservative, so that a correct kernel is never flagged: L2 is flushed (written
// back) before every sample, so the bytes a kernel writes cost DRAM bandwidth, but a kernel that
// only writes can run faster than a copy's (read + written) / time figure. The floor is therefore
// half the time the outputs take at that figure (kFloorFraction), and likewise half the roofline.

#include "model/records.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tilescope {

class TuningProblem;

/// The share of the write time (and of the roofline) that a config's median must reach.
inline constexpr double kFloorFraction = 0.5;
/// Registers a thread block may hold, on every arch since sm_50 (CUDA's maxRegistersPerBlock).
inline constexpr std::int64_t kRegistersPerBlock = 65536;

/// A memory bandwidth to judge times by, and what it is.
struct BandwidthFigure {
    double gbps = 0;    ///< 0: none known
    std::string source; ///< "the measured copy bandwidth", "the NVIDIA H200's peak memory bandwidth (...)"
};

/// Peak DRAM bandwidth in GB/s of a few data-centre GPUs by name (B200, H200 and GH200, H100,
/// A100, V100, L40S, L4; the largest of each family's variants, so that no variant's floor comes
/// out too high), nullopt for any other name.
std::optional<double> peakMemoryBandwidth(std::string_view deviceName);

/// The copy bandwidth a session's provenance records (devices[].copy_gbps; the largest when there
/// are several), else the peak of `deviceName` from peakMemoryBandwidth(), else none (gbps 0).
BandwidthFigure bandwidthFigure(const std::string& provenanceJson, const std::string& deviceName);

/// Why a launch with `registersPerThread` x `threadsPerBlock` could not have run (more than
/// kRegistersPerBlock), or "" when it could or either is not known (<= 0).
std::string registerFileVerdict(std::int64_t registersPerThread, std::int64_t threadsPerBlock);

/// The least time a config of a problem at one shape can take on one device.
struct TimeFloor {
    double ms = 0;   ///< the floor: kFloorFraction of the larger of the two below that is known
    std::string how; ///< "half the time its outputs take to write at the measured copy bandwidth: 64 MiB in 'out' at
                     ///< 4,200 GB/s"
};

/// Judges medians against the floor of a problem at one shape on one device.
class PlausibilityCheck {
public:
    /// `provenanceJson` and `deviceName` give the bandwidth (bandwidthFigure), the provenance also
    /// the SM count and clock of the roofline's compute roof, `arch` its arch when the provenance
    /// has none. Never throws: what cannot be computed is left out, and note() says why.
    PlausibilityCheck(const TuningProblem& problem, std::size_t shapeIndex, const std::string& provenanceJson,
                      const std::string& deviceName, std::string_view arch);
    ~PlausibilityCheck();
    PlausibilityCheck(PlausibilityCheck&&) noexcept;
    PlausibilityCheck& operator=(PlausibilityCheck&&) noexcept;

    /// Whether any floor can be known (a bandwidth and outputs, or the roofline).
    bool active() const;
    /// Why there is no floor, or what it leaves out ("" when nothing is left out).
    const std::string& note() const;
    /// The floor of `config` (its values by parameter name; the roofline may use them).
    std::optional<TimeFloor> floor(const ConfigValues& config) const;
    /// The message of an implausible result ("0.0069 ms is below 0.0080 ms, half the time its
    /// outputs take to write ...; a kernel that returns early or writes nothing looks like this"),
    /// or "" when `medianMs` is at or above the floor, not positive, or no floor is known.
    std::string verdict(const ConfigValues& config, double medianMs) const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// What checkRecorded() did.
struct PlausibilityReport {
    std::size_t implausible = 0; ///< Ok results it made Implausible
    std::string note;            ///< for people: what was checked and against what, or why not
};

/// Checks the Ok results of a recording (an import) and makes the impossible ones Implausible:
/// a launch whose registers (the result's static info, or Kernel Tuner's `num_regs` metric) times
/// its threads per block (the result's block size, else block_size_x * block_size_y *
/// block_size_z of its config) exceed kRegistersPerBlock; and, where the problem's sizes are
/// known (`problem`, else the problem the recording carries, at the recording's shape or the
/// shape its ProblemSize matches), a median below the floor at the recording's bandwidth
/// (bandwidthFigure of its provenance and device name; without either the floor is not checked,
/// and the note says so).
PlausibilityReport checkRecorded(SessionData& data, const TuningProblem* problem = nullptr);

} // namespace tilescope
