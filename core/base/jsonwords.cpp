#include "base/jsonwords.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace tilescope {

std::pair<std::size_t, std::string_view> nonFiniteWordAt(std::string_view text, std::size_t at) {
    auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
    at = std::min(at, text.size());
    std::size_t start = at;
    while (start > 0 && letter(text[start - 1]))
        --start;
    if (start > 0 && (text[start - 1] == '-' || text[start - 1] == '+'))
        --start;
    std::size_t end = start;
    if (end < text.size() && (text[end] == '-' || text[end] == '+'))
        ++end;
    while (end < text.size() && letter(text[end]))
        ++end;
    const std::string_view word = text.substr(start, end - start);
    static constexpr std::array kWords = {"NaN", "Infinity", "-Infinity", "+Infinity", "nan", "inf", "-inf", "+inf"};
    if (std::none_of(kWords.begin(), kWords.end(), [&](const char* w) { return word == w; }))
        return {start, {}};
    return {start, word};
}

} // namespace tilescope
