#pragma once

// CUPTI metric names the way users give them: "default" stands for Tilescope's default set,
// which fits in one pass on GH100 (resources/docs/guide/measuring.md); "bank-conflicts"
// for the shared-memory bank conflicts that tensor-core kernels are tuned against.

#include <string>
#include <vector>

namespace tilescope {

/// The default set: duration, achieved occupancy, local-memory (spill) load and store sectors,
/// DRAM bytes read and written, tensor-pipe activity (mma.sync and wgmma alike).
const std::vector<std::string>& defaultMetricNames();

/// Expands "default" (anywhere in the list) into the default set and "bank-conflicts" into the
/// shared-memory bank conflicts of loads and stores (with the default set, two passes on GH100),
/// and drops duplicates, keeping
/// the first occurrence's order; "none" alone gives an empty list. Names are otherwise kept as
/// given (CUPTI checks them).
std::vector<std::string> expandMetricNames(const std::vector<std::string>& names);

/// Short labels for tables: "sm__warps_active.avg.pct_of_peak_sustained_active" -> "achieved occupancy %".
/// Unknown names come back unchanged.
std::string metricLabel(const std::string& name);

} // namespace tilescope
