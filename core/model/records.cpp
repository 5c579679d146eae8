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
    if (a.ranks() != b.ranks())
        return a.ranks();
    if (a.ranks()) {
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
        if (r.ranks() && (!best || ranksBefore(r, *best)))
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
