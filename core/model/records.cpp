#include "model/records.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace tilescope {

namespace {
constexpr std::array<std::string_view, 5> kStateNames = {"running", "finished", "cancelled", "failed", "imported"};
} // namespace

std::string_view sessionStateName(SessionState state) {
    const auto i = static_cast<std::size_t>(state);
    return i < kStateNames.size() ? kStateNames[i] : std::string_view("unknown");
}

std::optional<SessionState> parseSessionState(std::string_view name) {
    for (std::size_t i = 0; i < kStateNames.size(); ++i)
        if (kStateNames[i] == name)
            return static_cast<SessionState>(i);
    return std::nullopt;
}

namespace {
// Appends a value as compact JSON; integers and plain strings without the serializer, which a
// bulk import would otherwise spend a fifth of its time in.
void appendJson(std::string& out, const nlohmann::ordered_json& v) {
    if (v.is_number_integer()) {
        char buf[24];
        const auto end = v.is_number_unsigned() ? std::to_chars(buf, buf + sizeof buf, v.get<std::uint64_t>()).ptr
                                                : std::to_chars(buf, buf + sizeof buf, v.get<std::int64_t>()).ptr;
        out.append(buf, end);
        return;
    }
    out += v.dump();
}

bool plainText(const std::string& s) {
    for (const char c : s)
        if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x80)
            return false;
    return true;
}
} // namespace

std::string configKey(const ConfigValues& config) {
    std::string key;
    key.reserve(8 * config.size());
    for (auto it = config.begin(); it != config.end(); ++it) {
        if (!key.empty())
            key += ',';
        appendJson(key, it.value());
    }
    return key;
}

std::string configJson(const ConfigValues& config) {
    if (!config.is_object())
        return config.dump();
    std::string out = "{";
    out.reserve(16 * config.size());
    for (auto it = config.begin(); it != config.end(); ++it) {
        if (out.size() > 1)
            out += ',';
        if (plainText(it.key()))
            out.append("\"").append(it.key()).append("\":");
        else
            out += nlohmann::ordered_json(it.key()).dump() + ':';
        appendJson(out, it.value());
    }
    return out + '}';
}

std::string describeConfig(const ConfigValues& config) {
    std::string text;
    for (auto it = config.begin(); it != config.end(); ++it) {
        if (!text.empty())
            text += ' ';
        text += it.key() + '=' + (it.value().is_string() ? it.value().get<std::string>() : it.value().dump());
    }
    return text;
}

std::string SessionInfo::shapeLabel() const {
    std::string text;
    if (!shape.empty()) {
        for (const auto& [name, value] : shape)
            text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
        return text;
    }
    if (!problemSize.empty()) {
        text = "problem_size=";
        for (std::size_t i = 0; i < problemSize.size(); ++i)
            text += (i ? "," : "") + std::to_string(problemSize[i]);
    }
    return text;
}

bool ranksBefore(const ResultRecord& a, const ResultRecord& b) {
    if (a.ok() != b.ok())
        return a.ok();
    if (a.ok()) {
        if (a.objective && b.objective && *a.objective != *b.objective)
            return *a.objective > *b.objective;
        if (a.timeMs() != b.timeMs())
            return a.timeMs() < b.timeMs();
        return a.id < b.id;
    }
    return false;
}

std::vector<ResultRecord> ranked(std::vector<ResultRecord> results) {
    std::stable_sort(results.begin(), results.end(), ranksBefore);
    return results;
}

std::optional<ResultRecord> bestOf(const std::vector<ResultRecord>& results) {
    const ResultRecord* best = nullptr;
    for (const ResultRecord& r : results)
        if (r.ok() && (!best || ranksBefore(r, *best)))
            best = &r;
    if (!best)
        return std::nullopt;
    return *best;
}

std::string nowIso8601() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    return buf;
}

} // namespace tilescope
