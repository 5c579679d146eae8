#include "base/textformat.h"

#include <cmath>
#include <cstdio>

namespace tilescope {

std::string formatDuration(double seconds) {
    char buf[64];
    if (seconds < 1e-3)
        std::snprintf(buf, sizeof buf, "%.0f us", seconds * 1e6);
    else if (seconds < 1)
        std::snprintf(buf, sizeof buf, "%.3g ms", seconds * 1e3);
    else if (seconds < 60)
        std::snprintf(buf, sizeof buf, "%.1f s", seconds);
    else if (seconds < 3600)
        std::snprintf(buf, sizeof buf, "%d min %02d s", static_cast<int>(seconds / 60), static_cast<int>(seconds) % 60);
    else
        std::snprintf(buf, sizeof buf, "%d h %02d min", static_cast<int>(seconds / 3600),
                      static_cast<int>(seconds / 60) % 60);
    return buf;
}

std::string formatDouble(const char* format, double value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, value);
    return buf;
}

std::string formatFinite(const char* format, double value) {
    return std::isfinite(value) ? formatDouble(format, value) : "-";
}

std::string formatPercent(double fraction, int decimals) {
    if (decimals < 0)
        decimals = fraction >= 0.1 ? 0 : 1;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f %%", decimals, 100.0 * fraction);
    return buf;
}

std::string formatShare(double part, double whole) {
    const double percent = whole > 0 ? 100.0 * part / whole : 0;
    return formatDouble(percent >= 0.1 || percent == 0 ? "%.1f %%" : "%.2g %%", percent);
}

std::string formatCount(double n) {
    if (!(n < 1e18)) { // huge raw sizes: scientific
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3g", n);
        return buf;
    }
    std::string digits = std::to_string(static_cast<unsigned long long>(std::llround(n)));
    std::string out;
    const int lead = static_cast<int>(digits.size()) % 3;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (static_cast<int>(i) - lead) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string formatBytes(std::uint64_t bytes) {
    static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " B";
    double value = static_cast<double>(bytes);
    int unit = -1;
    while (value >= 1024 && unit < 3) {
        value /= 1024;
        ++unit;
    }
    char text[32];
    std::snprintf(text, sizeof text, value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f", value);
    std::string number = text;
    if (number.find('.') != std::string::npos) {
        while (number.back() == '0')
            number.pop_back();
        if (number.back() == '.')
            number.pop_back();
    }
    return number + " " + kUnits[unit];
}

} // namespace tilescope
