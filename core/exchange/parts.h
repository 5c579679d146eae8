#pragma once

// Sweeps split across tasks (tune --part I/N) joined back into one session.

#include "model/records.h"

#include <cstddef>
#include <vector>

namespace tilescope {

/// Sessions that are parts of one sweep split across tasks (tune --part I/N: the same problem,
/// shape, device, backend but for its part suffix, strategy, seed and N) joined into one session
/// each, in the place of its first part: its results are the parts' results, its info the first
/// part's (the backend without the part, the earliest start and latest end), its provenance the
/// first part's with every part's under "parts"; its message names the parts missing, if any.
/// Other sessions pass unchanged, in order. `from` gives, per session returned, the indices of
/// the input sessions it holds.
std::vector<SessionData> joinParts(std::vector<SessionData> sessions, std::vector<std::vector<std::size_t>>* from);

} // namespace tilescope
