#pragma once

// Internal to core/exchange: JSON text in, with errors that point at the line and column.

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace tilescope::exchange {

/// Parses `text`; throws InputError(fileName, "line L, column C", ...) for bad JSON, saying
/// "truncated" when the text ends before the JSON does.
nlohmann::ordered_json parseJson(const std::string& text, const std::string& fileName);
/// A whole file as text, inflated when it is gzip-compressed (recordings may be .gz). Throws
/// InputError when it cannot be read or inflated.
/// With `maxBytes`, at most that much of the (inflated) text: enough to tell a format by.
std::string readText(const std::filesystem::path& path, std::size_t maxBytes = std::string::npos);
/// A number as JSON writes it, but NaN and infinities as null.
nlohmann::ordered_json number(double v);

} // namespace tilescope::exchange
