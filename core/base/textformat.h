#pragma once

// Numbers, durations and lists written for people, the same in every report of the engine and
// the CLI.

#include <cstdint>
#include <string>
#include <string_view>

namespace tilescope {

/// A duration for people: "850 ms", "12.3 s", "4 min 05 s", "2 h 10 min".
std::string formatDuration(double seconds);
/// `value` written by a printf `format` with one double ("%.4g ms").
std::string formatDouble(const char* format, double value);
/// The same for a table cell: "-" when `value` is not finite (no number to show).
std::string formatFinite(const char* format, double value);
/// A fraction as a percentage with `decimals` decimals: formatPercent(0.1234, 1) == "12.3 %".
/// Without `decimals`, whole percents from 10 % up and one decimal below: "12 %", "4.5 %".
std::string formatPercent(double fraction, int decimals = -1);
/// part / whole as a percentage, "7.7 %", with two significant digits below 0.1 % so that a tiny
/// share never shows as zero ("0.0012 %"); "0.0 %" when whole is not positive.
std::string formatShare(double part, double whole);

/// The texts of `items` (strings, string views or C strings) joined by `separator`:
/// joined(names) == "BLOCK, ITEMS, NUM_WARPS"; "" when there are none.
template <typename Range>
std::string joined(const Range& items, std::string_view separator = ", ") {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty())
            out += separator;
        out += item;
    }
    return out;
}
/// A count with thousands separators: 27,680,640,625 (counts past 1e18 in scientific notation).
std::string formatCount(double n);
/// A size in bytes for people, to three digits: "4 B", "1.5 KiB", "4 MiB", "1.25 GiB".
std::string formatBytes(std::uint64_t bytes);

} // namespace tilescope
