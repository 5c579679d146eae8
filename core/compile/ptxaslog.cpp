// The ptxas -v report, one block per entry function:
//   ptxas info    : Compiling entry function 'sgemm' for 'sm_90'
//   ptxas info    : Function properties for sgemm
//       976 bytes stack frame, 3312 bytes spill stores, 3088 bytes spill loads
//   ptxas info    : Used 255 registers, used 1 barriers, 976 bytes cumulative stack size, 16640 bytes smem
// NVRTC prefixes the properties line with "ptxas         ."; nvcc indents it. "used N barriers",
// "smem", "cmem[0]" and the cumulative stack appear only when they apply (cmem[0] never for
// sm_90 with CUDA 13), and non-entry functions get their own "Function properties" blocks.

#include "compile/compiler.h"

#include <charconv>

namespace tilescope {

namespace {

std::string_view trimBlanks(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// The text between the first pair of single quotes at or after `from`; npos-safe.
std::string_view quoted(std::string_view line, std::size_t from, std::size_t* end = nullptr) {
    const std::size_t open = line.find('\'', from);
    if (open == std::string_view::npos)
        return {};
    const std::size_t close = line.find('\'', open + 1);
    if (close == std::string_view::npos)
        return {};
    if (end)
        *end = close + 1;
    return line.substr(open + 1, close - open - 1);
}

// "<number> <unit>" -> number when the piece is exactly that; "Used 12 registers" is handled by
// passing the prefix "Used ".
bool numberWithUnit(std::string_view piece, std::string_view prefix, std::string_view unit, std::int64_t* value) {
    if (piece.substr(0, prefix.size()) != prefix)
        return false;
    piece.remove_prefix(prefix.size());
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), v);
    if (ec != std::errc{})
        return false;
    std::string_view rest = piece.substr(static_cast<std::size_t>(ptr - piece.data()));
    if (rest.empty() || rest.front() != ' ')
        return false;
    rest.remove_prefix(1);
    if (rest != unit)
        return false;
    *value = v;
    return true;
}

// Calls f(piece) for each comma-separated, trimmed piece of `text`.
template <typename F>
void forEachPiece(std::string_view text, F&& f) {
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        f(trimBlanks(text.substr(0, comma)));
        if (comma == std::string_view::npos)
            break;
        text.remove_prefix(comma + 1);
    }
}

void parseUsedLine(std::string_view text, StaticInfo& info) {
    forEachPiece(text, [&](std::string_view piece) {
        std::int64_t v = 0;
        if (numberWithUnit(piece, "Used ", "registers", &v))
            info.registers = static_cast<int>(v);
        else if (numberWithUnit(piece, "used ", "barriers", &v))
            info.barriers = static_cast<int>(v);
        else if (numberWithUnit(piece, "", "bytes smem", &v))
            info.sharedStatic = v;
        else if (numberWithUnit(piece, "", "bytes cmem[0]", &v))
            info.constantBytes = v;
    });
}

void parsePropertiesLine(std::string_view text, StaticInfo& info) {
    forEachPiece(text, [&](std::string_view piece) {
        std::int64_t v = 0;
        if (numberWithUnit(piece, "", "bytes stack frame", &v))
            info.stackFrame = v;
        else if (numberWithUnit(piece, "", "bytes spill stores", &v))
            info.spillStores = v;
        else if (numberWithUnit(piece, "", "bytes spill loads", &v))
            info.spillLoads = v;
    });
}

} // namespace

std::vector<PtxasEntry> parsePtxasEntries(std::string_view log) {
    static constexpr std::string_view kEntry = "Compiling entry function ";
    static constexpr std::string_view kProperties = "Function properties for ";
    static constexpr std::string_view kUsed = "Used ";

    std::vector<PtxasEntry> entries;
    // Properties blocks name their function; only the current entry's block counts, so that
    // a non-inlined device function's frame is not taken for the kernel's.
    bool inEntryProperties = false;
    while (!log.empty()) {
        const std::size_t newline = log.find('\n');
        std::string_view line = log.substr(0, newline);
        log.remove_prefix(newline == std::string_view::npos ? log.size() : newline + 1);

        // Concurrent ptxas runs (nvcc with several -gencode) can glue two messages into one line:
        // the last "ptxas" message of the line is the one that counts for the state below.
        if (const std::size_t at = line.find(kEntry); at != std::string_view::npos) {
            std::size_t end = 0;
            PtxasEntry entry;
            entry.function = std::string(quoted(line, at + kEntry.size(), &end));
            entry.arch = std::string(quoted(line, end));
            entries.push_back(std::move(entry));
            inEntryProperties = false;
            line.remove_prefix(end);
        }
        if (const std::size_t at = line.find(kProperties); at != std::string_view::npos) {
            const std::string_view name = trimBlanks(line.substr(at + kProperties.size()));
            inEntryProperties = !entries.empty() && name == entries.back().function;
            continue;
        }
        if (line.find("bytes stack frame") != std::string_view::npos) {
            if (inEntryProperties) {
                const std::size_t at = line.find_first_of("0123456789");
                parsePropertiesLine(line.substr(at), entries.back().info);
            }
            continue;
        }
        if (const std::size_t at = line.find(kUsed); at != std::string_view::npos && !entries.empty()) {
            if (entries.back().info.registers < 0)
                parseUsedLine(line.substr(at), entries.back().info);
            inEntryProperties = false;
        }
    }
    return entries;
}

StaticInfo parsePtxasLog(std::string_view log, std::string_view kernelName, std::string_view arch) {
    for (PtxasEntry& entry : parsePtxasEntries(log)) {
        if (entry.function == kernelName && (arch.empty() || entry.arch == arch))
            return entry.info;
    }
    return {};
}

} // namespace tilescope
