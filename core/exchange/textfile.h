#pragma once

// Files read whole as text, gzip inflated with a limit: what the readers of recordings and of
// other exchange files are given.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace tilescope::exchange {

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

} // namespace tilescope::exchange
