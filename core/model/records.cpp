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
constexpr std::array<std::string_view, std::size(kAllStaticRanks)> kStaticRankNames = {"occupancy", "registers",
                                                                                       "spills"};

// The quantities of an analysed result, each as "lower is better" so that one comparison orders
// them; a quantity it lacks is the worst value.
struct StaticKey {
    double occupancy;  // minus the percentage
    double spillBytes; // stores + loads per thread
    double registers;
};

StaticKey staticKeyOf(const ResultRecord& r) {
    constexpr double kWorst = 1e300;
    const std::optional<StaticInfo>& info = r.measurement.staticInfo;
    return {r.occupancy ? -*r.occupancy : kWorst,
            info ? static_cast<double>(info->spillStores + info->spillLoads) : kWorst,
            info && info->registers >= 0 ? static_cast<double>(info->registers) : kWorst};
}

// The keys of `r` in the order `by` compares them.
std::array<double, 3> orderedKey(const ResultRecord& r, StaticRank by) {
    const StaticKey k = staticKeyOf(r);
    switch (by) {
    case StaticRank::Registers:
        return {k.registers, k.spillBytes, k.occupancy};
    case StaticRank::Spills:
        return {k.spillBytes, k.occupancy, k.registers};
    case StaticRank::Occupancy:
        break;
    }
    return {k.occupancy, k.spillBytes, k.registers};
}
} // namespace

std::string_view staticRankName(StaticRank rank) {
    const auto i = static_cast<std::size_t>(rank);
    return i < kStaticRankNames.size() ? kStaticRankNames[i] : std::string_view("unknown");
}

std::optional<StaticRank> parseStaticRank(std::string_view name) {
    for (std::size_t i = 0; i < kStaticRankNames.size(); ++i)
        if (kStaticRankNames[i] == name)
            return static_cast<StaticRank>(i);
    return std::nullopt;
}

std::string_view problemFileRoleName(ProblemFile::Role role) {
    switch (role) {
    case ProblemFile::Role::Kernel:
        return "kernel";
    case ProblemFile::Role::Header:
        return "header";
    case ProblemFile::Role::Data:
        return "data";
    }
    return "kernel";
}

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

bool ranksBefore(const ResultRecord& a, const ResultRecord& b, StaticRank by) {
    if (a.ranks() != b.ranks())
        return a.ranks();
    if (a.ranks()) {
        if (a.objective && b.objective && *a.objective != *b.objective)
            return *a.objective > *b.objective;
        if (a.timeMs() != b.timeMs())
            return a.timeMs() < b.timeMs();
        return a.id < b.id;
    }
    if (a.ranksStatically() != b.ranksStatically())
        return a.ranksStatically();
    if (a.ranksStatically()) {
        const std::array<double, 3> ka = orderedKey(a, by);
        const std::array<double, 3> kb = orderedKey(b, by);
        if (ka != kb)
            return ka < kb;
        // Ties are common (configs that compile alike): the earlier config of the space, not the
        // earlier stored, which is the one whose compile finished first.
        if (a.spaceIndex && b.spaceIndex && *a.spaceIndex != *b.spaceIndex)
            return *a.spaceIndex < *b.spaceIndex;
        return a.id < b.id;
    }
    return false;
}

std::vector<ResultRecord> ranked(std::vector<ResultRecord> results, StaticRank by) {
    std::stable_sort(results.begin(), results.end(),
                     [by](const ResultRecord& a, const ResultRecord& b) { return ranksBefore(a, b, by); });
    return results;
}

std::optional<ResultRecord> bestOf(const std::vector<ResultRecord>& results, StaticRank by) {
    const ResultRecord* best = nullptr;
    for (const ResultRecord& r : results)
        if (r.mayWin() && (!best || ranksBefore(r, *best, by)))
            best = &r;
    if (!best)
        return std::nullopt;
    return *best;
}

std::string describeStatic(const ResultRecord& r, StaticRank by) {
    const std::optional<StaticInfo>& info = r.measurement.staticInfo;
    std::string occupancy, spills, registers;
    if (r.occupancy) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "occupancy %.0f %%", *r.occupancy);
        occupancy = buf;
    }
    if (info) {
        spills = info->spills()
                     ? "spills " + std::to_string(info->spillStores) + "/" + std::to_string(info->spillLoads) + " B"
                     : std::string("no spills");
        if (info->registers >= 0)
            registers = std::to_string(info->registers) + " registers";
    }
    std::array<const std::string*, 3> order = {&occupancy, &spills, &registers};
    if (by == StaticRank::Registers)
        order = {&registers, &spills, &occupancy};
    else if (by == StaticRank::Spills)
        order = {&spills, &occupancy, &registers};
    std::string text;
    for (const std::string* part : order)
        if (!part->empty())
            text += (text.empty() ? "" : ", ") + *part;
    return text;
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
