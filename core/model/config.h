#pragma once

// A point of a config space, as the space, the strategies, the sessions and the views pass it.

#include <cstdint>
#include <vector>

namespace tilescope {

/// A configuration: for each parameter (in the problem's order), the index of its value.
using Config = std::vector<std::uint16_t>;

} // namespace tilescope
