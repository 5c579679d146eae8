#pragma once

// What the JSON readers (T1 problems, recordings) say about a place in the text: where it is as
// an editor shows it, and the words JSON does not have but other programs write into it
// (Python's json module writes NaN, Infinity and -Infinity).

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace tilescope {

/// "NaN", "Infinity", "-Infinity" (or "nan", "inf" and the like) around byte `at` of `text`,
/// with the byte where it starts; an empty word when the text there is none of them.
std::pair<std::size_t, std::string_view> nonFiniteWordAt(std::string_view text, std::size_t at);

/// "line L, column C" of byte `at` (0-based) of `text`, as editors show it: columns count
/// characters (UTF-8 code points).
std::string lineColumnAt(std::string_view text, std::size_t at);

} // namespace tilescope
