#pragma once

// The regime of a problem at one shape: how close its best config runs to the roofline (the
// memory roof a measured copy gives, the compute roof of the arch's peak for the arithmetic) and
// how its measured configs spread against their measurement noise. From the two: whether tuning
// helps there ("memory-bound and flat: any of these configs is as good", the decode case) or how
// much the best gains over a typical config, and whether a search can stop early.

#include "model/records.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope {

class TuningProblem;

/// How much tuning can gain at one shape, from its measured configs against their noise.
struct ShapeSpread {
    std::size_t configs = 0; ///< configs measured correctly
    double bestMs = 0;
    double medianMs = 0;       ///< the median config's time
    double noise = 0;          ///< the median of the results' relative spread (stdev / median time)
    std::size_t asGood = 0;    ///< configs within twice the noise of the best
    double gainOverMedian = 0; ///< median / best - 1: what tuning gains over a typical config
    /// A quarter of the measured configs or more (two at least) are within twice the noise of the
    /// best: tuning does not help here, any of those `asGood` configs is as good (a short random
    /// search finds one). In a decode step many configs meet the memory bound this way.
    bool flat = false;
};

/// The spread of configs given as (median ms, relative spread) each; a relative spread of 0 or
/// less counts as 0.5 %. Empty input: configs 0, not flat.
ShapeSpread spreadOf(const std::vector<std::pair<double, double>>& timesAndNoise);

/// Dense operations per clock per SM of `arch` ("sm_90"; "sm_90a" counts as sm_90) for
/// `compute` ("float": FP32 FMA on CUDA cores; "tf32", "half", "bfloat16", "float8" (e4m3 or
/// e5m2), "int8": tensor cores with FP32 (INT32) accumulation), from NVIDIA's architecture
/// whitepapers; nullopt for an arch or kind not in the table (sm_80, sm_90, sm_100) and for FP8 on
/// sm_80, which has none.
std::optional<double> opsPerClockPerSm(std::string_view arch, std::string_view compute);

/// The roofline of one launch on one device.
struct Roofline {
    double bytes = 0;         ///< moved per launch (0: not known)
    double flops = 0;         ///< per launch (0: not known)
    std::string compute;      ///< the arithmetic of the compute roof ("bfloat16")
    double bandwidthGBps = 0; ///< the device's measured copy (0: not measured)
    double peakTflops = 0;    ///< the compute roof (0: not known)

    enum class Bound { Unknown, Memory, Compute };

    std::optional<double> memoryMs() const;  ///< bytes at the copy's bandwidth
    std::optional<double> computeMs() const; ///< flops at the peak
    /// The larger of the two that are known: no config runs faster (nullopt: neither known).
    std::optional<double> floorMs() const;
    /// Which roof is the lower bound, when both are known.
    Bound bound() const;
    /// floorMs / `timeMs`: how close a config of that time runs to the roofline (1 = on it).
    std::optional<double> fraction(double timeMs) const;
};

/// The roofline of `problem` at `shapeIndex` for `config` (the best; Bytes and Flops may use
/// parameters) on the device a session's provenance records (its first device's copy_gbps,
/// sm_count, sm_clock_khz and arch; `arch` when the provenance has none). The work comes from
/// Tilescope.Roofline, else from the Objective when its name says what it counts ("GB/s",
/// "TB/s": bytes; "TFLOP/s", "GFLOP/s": flops). Unknown parts stay 0; nothing throws for them.
Roofline rooflineOf(const TuningProblem& problem, std::size_t shapeIndex, const ConfigValues& config,
                    const std::string& provenanceJson, std::string_view arch);

/// One sentence on what tuning does at a shape: "memory-bound: the best runs at 88 % of the
/// copy bandwidth (3995 GB/s); flat: tuning does not help here, any of these 37 configs is as
/// good (...)", or "compute-bound: ...; the best gains 35.2 % over the median config (noise
/// 0.40 %)".
std::string regimeVerdict(const ShapeSpread& spread, const Roofline& roofline);

/// When a search may stop: the best is within `rooflineFraction` of the roofline (nothing much
/// is left to gain), or at least `flatAfter` configs are measured and they are flat.
struct EarlyStop {
    double rooflineFraction = 0.95; ///< 0: never on the roofline's account
    std::size_t flatAfter = 24;     ///< 0: never on the spread's account
};

/// Why the search can stop now, or "" when it cannot.
std::string earlyStopReason(const EarlyStop& rule, const ShapeSpread& spread, const Roofline& roofline);

} // namespace tilescope
