#include "exchange/parts.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace tilescope {

using Json = nlohmann::ordered_json;

namespace {

/// The part a session is of a split sweep ({index from 1, count}), from its provenance.
std::optional<std::pair<std::uint64_t, std::uint64_t>> partOf(const SessionInfo& info) {
    const Json p = Json::parse(info.provenanceJson, nullptr, false);
    if (!p.is_object() || !p.contains("part") || !p["part"].is_object())
        return std::nullopt;
    const Json& part = p["part"];
    const std::uint64_t index = part.value("index", std::uint64_t{0});
    const std::uint64_t count = part.value("count", std::uint64_t{0});
    if (count < 2 || index < 1 || index > count)
        return std::nullopt;
    return std::make_pair(index, count);
}

/// "cuda:0 (part 2/4)" -> "cuda:0".
std::string withoutPart(const std::string& backend) {
    const std::size_t at = backend.rfind(" (part ");
    return at == std::string::npos ? backend : backend.substr(0, at);
}

} // namespace

std::vector<SessionData> joinParts(std::vector<SessionData> sessions, std::vector<std::vector<std::size_t>>* from) {
    std::vector<SessionData> out;
    std::vector<std::vector<std::size_t>> sources;
    struct Group {
        std::size_t at = 0;            // its place in `out`
        std::set<std::uint64_t> parts; // the parts it holds
    };
    std::map<std::string, Group> groups; // the sweep's identity -> its joined session
    for (std::size_t i = 0; i < sessions.size(); ++i) {
        const auto part = partOf(sessions[i].info);
        const SessionInfo& s = sessions[i].info;
        const std::string key = !part ? std::string()
                                      : s.problemHash + "|" + std::to_string(s.shapeIndex.value_or(-1)) + "|" +
                                            withoutPart(s.backend) + "|" + s.deviceName + "|" + s.strategy + "|" +
                                            std::to_string(s.seed) + "|" + std::to_string(part->second);
        const auto it = part ? groups.find(key) : groups.end();
        if (!part || (it != groups.end() && it->second.parts.count(part->first))) {
            // Not a part, or the same part twice (import's fingerprint skips a true duplicate).
            out.push_back(std::move(sessions[i]));
            sources.push_back({i});
            continue;
        }
        if (it == groups.end()) {
            groups[key] = Group{out.size(), {part->first}};
            out.push_back(std::move(sessions[i]));
            sources.push_back({i});
            SessionInfo& info = out.back().info;
            info.backend = withoutPart(info.backend);
            Json p = Json::parse(info.provenanceJson);
            const Json first = p;
            p.erase("part");
            p["parts"] = Json::array({first});
            info.provenanceJson = p.dump();
            continue;
        }
        Group& group = it->second;
        group.parts.insert(part->first);
        SessionData& joined = out[group.at];
        SessionData& next = sessions[i];
        SessionInfo& info = joined.info;
        if (!next.info.startedAt.empty() && (info.startedAt.empty() || next.info.startedAt < info.startedAt))
            info.startedAt = next.info.startedAt;
        if (next.info.endedAt > info.endedAt)
            info.endedAt = next.info.endedAt;
        Json p = Json::parse(info.provenanceJson);
        p["parts"].push_back(Json::parse(next.info.provenanceJson));
        info.provenanceJson = p.dump();
        for (ResultRecord& r : next.results)
            joined.results.push_back(std::move(r));
        sources[group.at].push_back(i);
    }
    // What each joined sweep lacks.
    for (SessionData& d : out) {
        const Json p = Json::parse(d.info.provenanceJson, nullptr, false);
        if (!p.is_object() || !p.contains("parts"))
            continue;
        std::set<std::uint64_t> have;
        std::uint64_t count = 0;
        for (const Json& part : p["parts"])
            if (part.is_object() && part.contains("part")) {
                have.insert(part["part"].value("index", std::uint64_t{0}));
                count = part["part"].value("count", std::uint64_t{0});
            }
        std::string missing;
        for (std::uint64_t k = 1; k <= count; ++k)
            if (!have.count(k))
                missing += (missing.empty() ? "" : ", ") + std::to_string(k);
        d.info.message = "joined from " + std::to_string(have.size()) + " of " + std::to_string(count) + " parts" +
                         (missing.empty() ? "" : " (missing: " + missing + ")");
    }
    if (from)
        *from = std::move(sources);
    return out;
}

} // namespace tilescope
