#pragma once

// Energy per launch from NVML's energy counter, as arithmetic without CUDA: the worker
// (device/energy.cpp) launches the kernel back to back and notes, at every step of the counter,
// the time, the counter and the launches completed so far; this turns those checkpoints into
// joules per launch and mean power, each with an interval. Tested with numbers.
//
// The counter (nvmlDeviceGetTotalEnergyConsumption, mJ) steps at its own period, not at every
// read: a window measured between two of its steps is exact up to the time it takes to see a
// step (a poll), whatever the period.

#include <cstdint>
#include <optional>
#include <vector>

namespace tilescope::worker {

/// A step of the energy counter as the worker saw it.
struct EnergyCheckpoint {
    double seconds = 0;           ///< since the loop began
    double millijoules = 0;       ///< the counter
    std::uint64_t launches = 0;   ///< launches completed by then
};

struct EnergyEstimate {
    double joulesPerLaunch = 0;       ///< over the whole window
    double joulesLow = 0, joulesHigh = 0; ///< 95 % interval from the sub-windows' spread
    double watts = 0;                 ///< mean power over the window
    double wattsLow = 0, wattsHigh = 0;
    int windows = 0;                  ///< sub-windows the interval comes from
    double seconds = 0;               ///< the window's length
    std::uint64_t launches = 0;       ///< launches in the window
};

/// The estimate from the checkpoints of one window (in time order; the first and last are its
/// edges), its interval from up to `windows` sub-windows between checkpoints (Student's t on
/// their per-launch energies and powers). nullopt with fewer than two checkpoints, no launch or
/// no time between the edges.
std::optional<EnergyEstimate> estimateEnergy(const std::vector<EnergyCheckpoint>& checkpoints, int windows = 5);

/// The counter's update period: the median time between its steps (seconds; 0 with fewer than
/// two steps).
double counterPeriod(const std::vector<double>& stepSeconds);

} // namespace tilescope::worker
