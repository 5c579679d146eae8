#pragma once

// Internal to core/exchange: JSON text in, with errors that point at the line and column.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>

namespace tilescope::exchange {

/// How deep a recording's JSON may nest. Parsing keeps its own stack, but copying, comparing and
/// dumping JSON recurse; no recording written by a tool comes near this.
constexpr int kMaxJsonDepth = 128;

/// Parses `text`; throws InputError(fileName, "line L, column C", ...) for bad JSON, saying
/// "truncated" when the text ends before the JSON does, naming NaN and Infinity (which JSON
/// lacks), a number too large for a double and nesting deeper than kMaxJsonDepth.
nlohmann::ordered_json parseJson(const std::string& text, const std::string& fileName);
/// The JSON of `text`, or a discarded value (is_discarded()) when it does not parse or nests
/// deeper than kMaxJsonDepth: for telling a format by, never by Json::parse, which builds any
/// depth (and an ordered_json object's growth copies its members recursively).
nlohmann::ordered_json tryParseJson(const std::string& text);
/// A whole file as text, inflated when it is gzip-compressed (recordings may be .gz): every
/// member of a multi-member file, as gzip -d reads them, refusing more inflated text than
/// gzipLimit() and any data after the last member other than zero padding. Throws InputError
/// when it cannot be read or inflated (truncated, damaged, too large), with the byte where.
/// With `maxBytes`, at most that much of the (inflated) text: enough to tell a format by.
std::string readText(const std::filesystem::path& path, std::size_t maxBytes = std::string::npos);
/// The most bytes a gzip-compressed file may inflate to: 1 GiB, or the environment variable
/// TILESCOPE_GZIP_LIMIT (bytes, or with a K, M, G or T suffix for powers of 1024: "4G").
/// Throws InputError for a value that is not such a size.
std::uint64_t gzipLimit();
/// A number as JSON writes it, but NaN and infinities as null.
nlohmann::ordered_json number(double v);

} // namespace tilescope::exchange
