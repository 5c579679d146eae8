#pragma once

// Words JSON does not have but other programs write into it: Python's json module writes NaN,
// Infinity and -Infinity. The readers name them where nlohmann's parser stops at one.

#include <cstddef>
#include <string_view>
#include <utility>

namespace tilescope {

/// "NaN", "Infinity", "-Infinity" (or "nan", "inf" and the like) around byte `at` of `text`,
/// with the byte where it starts; an empty word when the text there is none of them.
std::pair<std::size_t, std::string_view> nonFiniteWordAt(std::string_view text, std::size_t at);

} // namespace tilescope
