#include "measure/cuda/memorycheck.h"

#include "base/textformat.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <regex>
#include <system_error>

namespace tilescope {

namespace {

constexpr std::uint64_t kMaxGuard = 256ull << 20;

std::uint64_t roundUp(std::uint64_t value, std::uint64_t step) {
    return (value + step - 1) / step * step;
}

// 1048576 as "1,048,576".
std::string withCommas(std::uint64_t n) {
    const std::string digits = std::to_string(n);
    std::string out;
    out.reserve(digits.size() + digits.size() / 3);
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string hex(std::uint64_t v) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
    return text;
}

std::optional<std::uint64_t> parseNumber(std::string text, int base) {
    text.erase(std::remove(text.begin(), text.end(), ','), text.end());
    if (text.empty())
        return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text.c_str(), &end, base);
    if (errno != 0 || !end || *end != '\0')
        return std::nullopt;
    return v;
}

std::string trim(std::string_view s) {
    const std::size_t first = s.find_first_not_of(" \t\r");
    if (first == std::string_view::npos)
        return {};
    const std::size_t last = s.find_last_not_of(" \t\r");
    return std::string(s.substr(first, last - first + 1));
}

// A log line without memcheck's "=========" prefix: its text and how far it is indented (a
// report's first line by one space, its details by more).
struct LogLine {
    std::string text;
    std::size_t indent = 0;
};

LogLine logLine(std::string_view raw) {
    std::size_t i = 0;
    while (i < raw.size() && raw[i] == '=')
        ++i;
    std::size_t spaces = 0;
    while (i + spaces < raw.size() && (raw[i + spaces] == ' ' || raw[i + spaces] == '\t'))
        ++spaces;
    return {trim(raw.substr(i)), spaces};
}

bool isHeadline(const LogLine& line) {
    if (line.text.empty() || line.indent > 1)
        return false;
    for (const char* skip : {"COMPUTE-SANITIZER", "CUDA-MEMCHECK", "ERROR SUMMARY", "LEAK SUMMARY",
                             "Target application returned", "Saved host backtrace", "Host Frame", "Device Frame"}) {
        if (line.text.rfind(skip, 0) == 0)
            return false;
    }
    return true;
}

// "FILE:LINE" as "name.cu:LINE" (the file name alone); "" when it is not a location.
std::string locationOf(const std::string& text) {
    static const std::regex kFileLine(R"(^(.+):(\d+)$)");
    std::smatch m;
    const std::string t = trim(text);
    if (!std::regex_match(t, m, kFileLine))
        return {};
    return std::filesystem::path(m[1].str()).filename().string() + ":" + m[2].str();
}

} // namespace

GuardedLayout guardedLayout(std::uint64_t bytes, std::uint64_t granularity, std::uint64_t alignment) {
    granularity = std::max<std::uint64_t>(granularity, 1);
    alignment = std::max<std::uint64_t>(alignment, 1);
    bytes = std::max<std::uint64_t>(bytes, 1);
    GuardedLayout layout;
    layout.mapped = roundUp(bytes, granularity);
    layout.guard = std::max(granularity, roundUp(std::min(layout.mapped, kMaxGuard), granularity));
    layout.reserved = layout.mapped + layout.guard;
    // As late as the alignment allows: the end then lies within `alignment` bytes of the guard.
    layout.offset = (layout.mapped - bytes) / alignment * alignment;
    layout.slack = layout.mapped - layout.offset - bytes;
    return layout;
}

std::string sizeText(std::int64_t elements, std::int64_t bytes) {
    return withCommas(static_cast<std::uint64_t>(std::max<std::int64_t>(elements, 0))) +
           (elements == 1 ? " element (" : " elements (") + formatBytes(static_cast<std::uint64_t>(bytes)) + ")";
}

std::string bufferText(const worker::BufferExtent& buffer) {
    const std::string name =
        buffer.name.empty() ? "argument " + std::to_string(buffer.argument) : "'" + buffer.name + "'";
    return name + " " + sizeText(buffer.elements, buffer.bytes);
}

std::string guardedFaultMessage(const std::vector<worker::BufferExtent>& buffers) {
    std::string text = "illegal memory access in a guarded run: the kernel read or wrote past the end of a buffer";
    std::string list;
    for (const worker::BufferExtent& b : buffers)
        list += (list.empty() ? "" : ", ") + bufferText(b);
    if (!list.empty())
        text += "; arguments: " + list;
    return text +
           " (is one declared smaller than the kernel indexes it? tune --sanitize names the line and the buffer)";
}

std::string addressText(std::uint64_t address, const std::vector<worker::BufferExtent>& buffers,
                        std::optional<std::uint64_t> allocation) {
    const worker::BufferExtent* owner = nullptr;
    if (allocation) {
        for (const worker::BufferExtent& b : buffers) {
            if (b.address == *allocation)
                owner = &b;
        }
    }
    // Else the buffer that holds the address; else the one it is past the end of, nearest first
    // (kernels index upwards from a buffer's start); else the one it is just before.
    for (int pass = 0; pass < 3 && !owner; ++pass) {
        std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
        for (const worker::BufferExtent& b : buffers) {
            const std::uint64_t end = b.address + static_cast<std::uint64_t>(b.bytes);
            std::optional<std::uint64_t> distance;
            if (pass == 0 && address >= b.address && address < end)
                distance = 0;
            else if (pass == 1 && address >= end)
                distance = address - end;
            else if (pass == 2 && address < b.address)
                distance = b.address - address;
            if (distance && *distance < best) {
                best = *distance;
                owner = &b;
            }
        }
    }
    if (!owner)
        return {};
    const std::uint64_t end = owner->address + static_cast<std::uint64_t>(owner->bytes);
    const std::int64_t elementBytes =
        owner->elements > 0 ? std::max<std::int64_t>(owner->bytes / owner->elements, 1) : 1;
    const std::string what = bufferText(*owner);
    if (address < owner->address)
        return withCommas(owner->address - address) + " bytes before the start of " + what;
    const std::string element =
        "at its element " + withCommas((address - owner->address) / static_cast<std::uint64_t>(elementBytes));
    if (address >= end)
        return withCommas(address - end) + " bytes past the end of " + what + ", " + element;
    return "inside " + what + ", " + element;
}

std::optional<SanitizerReport> firstSanitizerReport(std::string_view log) {
    std::vector<LogLine> lines;
    while (!log.empty()) {
        const std::size_t newline = log.find('\n');
        lines.push_back(logLine(log.substr(0, newline)));
        log.remove_prefix(newline == std::string_view::npos ? log.size() : newline + 1);
    }
    // Memory errors first: an API error ("Program hit ...") is what the fault caused.
    std::optional<std::size_t> start;
    for (std::size_t i = 0; i < lines.size() && !start; ++i) {
        if (isHeadline(lines[i]) && lines[i].text.rfind("Program hit", 0) != 0)
            start = i;
    }
    for (std::size_t i = 0; i < lines.size() && !start; ++i) {
        if (isHeadline(lines[i]))
            start = i;
    }
    if (!start)
        return std::nullopt;

    static const std::regex kAtNew(R"(^at (.*)\+0x[0-9a-fA-F]+(?: in (.+))?$)");
    static const std::regex kAtOld(R"(^at 0x[0-9a-fA-F]+ in (.+)$)");
    static const std::regex kThread(R"(^by (thread .*)$)");
    static const std::regex kAddress(R"(^(?:Address|Access to|Access at)\s+(0x[0-9a-fA-F]+)\s*(.*)$)");
    static const std::regex kNearest(
        R"(^and is ([\d,]+) bytes (after|before) the nearest allocation at (0x[0-9a-fA-F]+) of size ([\d,]+) bytes)");

    SanitizerReport report;
    report.headline = lines[*start].text;
    report.lines.push_back(report.headline);
    bool afterAt = false;
    for (std::size_t i = *start + 1; i < lines.size(); ++i) {
        const std::string& t = lines[i].text;
        if (t.empty())
            continue;
        if (lines[i].indent <= 1)
            break; // the next report, or the summary

        report.lines.push_back(t);
        std::smatch m;
        if (report.function.empty() && std::regex_match(t, m, kAtOld)) {
            // Before CUDA 12: "at 0x70 in /path/k.cu:17:kernel(float*)" or "at 0x70 in kernel".
            static const std::regex kFileLineFunction(R"(^(.+?):(\d+):(.+)$)");
            std::smatch f;
            const std::string rest = m[1].str();
            if (std::regex_match(rest, f, kFileLineFunction)) {
                report.location = std::filesystem::path(f[1].str()).filename().string() + ":" + f[2].str();
                report.function = trim(f[3].str());
            } else {
                report.function = trim(rest);
            }
            afterAt = false;
        } else if (report.function.empty() && std::regex_match(t, m, kAtNew)) {
            report.function = trim(m[1].str());
            if (m[2].matched)
                report.location = locationOf(m[2].str());
            afterAt = !m[2].matched;
        } else if (afterAt && t.rfind("in ", 0) == 0) {
            // Newer versions put the location on a line of its own.
            report.location = locationOf(t.substr(3));
            afterAt = false;
        } else if (report.thread.empty() && std::regex_match(t, m, kThread)) {
            report.thread = m[1].str();
            afterAt = false;
        } else if (!report.address && std::regex_match(t, m, kAddress)) {
            report.address = parseNumber(m[1].str(), 16);
            report.addressProblem = trim(m[2].str());
            afterAt = false;
        } else if (!report.nearest && std::regex_search(t, m, kNearest)) {
            report.nearest = parseNumber(m[3].str(), 16);
            report.nearestBytes = parseNumber(m[4].str(), 10);
            afterAt = false;
        } else {
            afterAt = false;
        }
    }
    return report;
}

std::string sanitizerMessage(const SanitizerReport& report, const std::vector<worker::BufferExtent>& buffers) {
    std::string text = "compute-sanitizer (memcheck): " + report.headline;
    if (!report.location.empty())
        text += " at " + report.location;
    if (!report.function.empty())
        text += " in " + report.function;
    if (!report.thread.empty())
        text += " by " + report.thread;
    if (report.address) {
        const std::string where = addressText(*report.address, buffers, report.nearest);
        if (!where.empty()) {
            text += "; the address is " + where;
        } else {
            text += "; address " + hex(*report.address) + " " + report.addressProblem;
            if (report.nearest && report.nearestBytes)
                text += ", near an allocation at " + hex(*report.nearest) + " of " + withCommas(*report.nearestBytes) +
                        " bytes";
        }
    }
    if (report.location.empty())
        text += " (no line: the kernel was compiled without line information)";
    return text;
}

std::filesystem::path findComputeSanitizer(std::string* error, const std::vector<std::filesystem::path>& cudaDirs) {
    std::string searched;
    const std::filesystem::path found =
        findCudaTool("compute-sanitizer", "TILESCOPE_COMPUTE_SANITIZER", &searched, cudaDirs, {"compute-sanitizer"});
    if (found.empty() && error)
        *error = std::getenv("TILESCOPE_COMPUTE_SANITIZER") && *std::getenv("TILESCOPE_COMPUTE_SANITIZER")
                     ? searched
                     : "--sanitize needs compute-sanitizer: " + searched +
                           ". It is part of the CUDA toolkit: install the toolkit's compute-sanitizer (from NVIDIA's "
                           "package repository: cuda-sanitizer-13-0, or the whole toolkit), or set "
                           "TILESCOPE_COMPUTE_SANITIZER to its path";
    return found;
}

std::vector<std::string> sanitizerCommand(const std::filesystem::path& sanitizer,
                                          const std::filesystem::path& logFile) {
    return {sanitizer.string(), "--tool", "memcheck", "--log-file", logFile.string(), "--print-limit", "10",
            "--show-backtrace", "no", "--report-api-errors", "no",
            // A padding buffer after every allocation: a kernel that runs past one buffer's end
            // would otherwise land in the next allocation, where memcheck sees a valid address.
            "--padding", std::to_string(kSanitizerPadding)};
}

} // namespace tilescope
