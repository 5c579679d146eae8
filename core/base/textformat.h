#pragma once

// Numbers and durations written for people, the same in every report of the engine and the CLI.

#include <cstdint>
#include <string>

namespace tilescope {

/// A duration for people: "850 ms", "12.3 s", "4 min 05 s", "2 h 10 min".
std::string formatDuration(double seconds);
/// `value` written by a printf `format` with one double ("%.4g ms").
std::string formatDouble(const char* format, double value);
/// A count with thousands separators: 27,680,640,625 (counts past 1e18 in scientific notation).
std::string formatCount(double n);
/// A size in bytes for people, to three digits: "4 B", "1.5 KiB", "4 MiB", "1.25 GiB".
std::string formatBytes(std::uint64_t bytes);

} // namespace tilescope
