#include "spec/t1common.h"

#include <algorithm>
#include <cstdio>

#include <charconv>

namespace tilescope::spec {

std::optional<std::int64_t> parseIntegerLiteral(std::string_view text) {
    if (text.empty())
        return std::nullopt;
    // from_chars accepts a leading '-' but not '+', leading spaces or a trailing rest: exactly
    // the literals we write back as JSON integers.
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end)
        return std::nullopt;
    // "007" or "-0" would not come back as the same text; keep those as expressions.
    if (std::to_string(value) != text)
        return std::nullopt;
    return value;
}

namespace {
// The expression as a message quotes it: whole when short, else the part around the column (as
// ExprError::what() does), so that a hostile one does not make a message of its size.
std::string quoted(const expr::ExprError& e) {
    constexpr std::size_t kWhole = 200, kSide = 60;
    const std::string& text = e.expression();
    if (text.size() <= kWhole)
        return text;
    const std::size_t at = std::min(text.size(), static_cast<std::size_t>(std::max(e.column(), 1) - 1));
    const std::size_t from = at > kSide ? at - kSide : 0;
    const std::size_t to = std::min(text.size(), at + kSide);
    return (from > 0 ? "..." : "") + text.substr(from, to - from) + (to < text.size() ? "..." : "");
}
} // namespace

std::string describeExprErrorInline(const expr::ExprError& e) {
    return std::string(expr::errorKindName(e.kind())) + ": " + e.message() + " in '" + quoted(e) + "' at column " +
           std::to_string(e.column());
}

std::string exactNumber(double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", v);
    return text;
}

std::string describeExprError(const expr::ExprError& e) {
    return "column " + std::to_string(e.column()) + ": " + expr::errorKindName(e.kind()) + ": " + e.message() +
           " in '" + quoted(e) + "'";
}

} // namespace tilescope::spec
