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

std::string lineColumnAt(std::string_view text, std::size_t at) {
    at = std::min(at, text.size());
    std::size_t line = 1;
    std::size_t lineStart = 0;
    for (std::size_t i = 0; i < at; ++i) {
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    }
    std::size_t column = 1;
    for (std::size_t i = lineStart; i < at; ++i)
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80)
            ++column;
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

} // namespace tilescope
