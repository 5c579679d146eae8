#pragma once

// The CSV export: every result, a row each.

#include "model/records.h"

#include <string>
#include <vector>

namespace tilescope {

/// CSV (RFC 4180) of every result of every session: one row per result, the union of the
/// sessions' parameters as columns.
std::string writeCsv(const std::vector<SessionData>& sessions);

} // namespace tilescope
