#include "exchange/bestconfigs.h"

#include "base/error.h"
#include "base/jsonreader.h"
#include "exchange/sessionfields.h"
#include "model/configjson.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string_view>
#include <tuple>

namespace tilescope {

using Json = nlohmann::ordered_json;
using exchange::jsonNumber;

BestConfig bestConfigOf(const SessionInfo& session, const ResultRecord& result, StaticRank by) {
    const SessionInfo* info = &session;
    const ResultRecord* r = &result;
    BestConfig b;
    b.kernel = info->kernel;
    b.shape = info->shape;
    b.problemSize = info->shape.empty() ? info->problemSize : std::vector<std::int64_t>{};
    b.device = info->deviceName;
    b.arch = info->arch;
    b.config = r->config;
    b.timeMs = r->timeMs();
    if (r->measurement.time.hasInterval()) {
        b.ciLowMs = r->measurement.time.ciLowMs;
        b.ciHighMs = r->measurement.time.ciHighMs;
    }
    if (r->objective && !info->objectiveName.empty()) {
        b.objectiveName = info->objectiveName;
        b.objective = r->objective;
    }
    for (const Metric& m : r->measurement.metrics)
        if (m.name == kEnergyMetric)
            b.energyJ = m.value;
    if (r->ranksStatically()) {
        BestConfig::Analysed a;
        a.rankedBy = std::string(staticRankName(by));
        a.occupancy = r->occupancy;
        if (const std::optional<StaticInfo>& i = r->measurement.staticInfo) {
            a.registers = i->registers;
            a.spillStores = i->spillStores;
            a.spillLoads = i->spillLoads;
        }
        b.analysed = a;
        b.timeMs = 0;
        b.ciLowMs = b.ciHighMs = 0;
        b.objectiveName.clear();
        b.objective.reset();
    }
    b.sessionId = info->id;
    b.sourceHash = info->sourceHash;
    if (!info->problemJson.empty()) {
        try {
            b.specHash = TuningProblem::parse(info->problemJson, info->kernel + ".json", {}).specHash();
        } catch (const InputError&) {
            // a recorded problem this version cannot read: its hash stays unknown
        }
    }
    const Json provenance = tryParseJson(info->provenanceJson.empty() ? "{}" : info->provenanceJson);
    if (const auto d = provenance.find("devices");
        provenance.is_object() && d != provenance.end() && d->is_array() && !d->empty() && d->front().is_object())
        if (const auto v = d->front().find("driver_version"); v != d->front().end() && v->is_number_integer())
            b.driverVersion = v->get<int>();
    return b;
}

std::vector<BestConfig> bestConfigs(const std::vector<SessionData>& sessions, StaticRank by) {
    // kernel, device, arch (which tells apart sessions of no device, analysed for several), shape
    using Key = std::tuple<std::string, std::string, std::string, std::string>;
    std::map<Key, std::pair<const SessionInfo*, const ResultRecord*>> best;
    for (const SessionData& s : sessions) {
        for (const ResultRecord& r : s.results) {
            if (!r.mayWin())
                continue;
            const Key key{s.info.kernel, s.info.deviceName, s.info.deviceName.empty() ? s.info.arch : std::string(),
                          s.info.shapeLabel()};
            auto it = best.find(key);
            if (it == best.end())
                best.emplace(key, std::make_pair(&s.info, &r));
            else if (ranksBefore(r, *it->second.second, by))
                it->second = {&s.info, &r};
        }
    }
    std::vector<BestConfig> out;
    for (const auto& [key, value] : best)
        out.push_back(bestConfigOf(*value.first, *value.second, by));
    return out;
}

std::string describeAnalysed(const BestConfig& best) {
    if (!best.analysed)
        return {};
    const BestConfig::Analysed& a = *best.analysed;
    ResultRecord r;
    r.measurement.status = ResultStatus::Analysed;
    r.occupancy = a.occupancy;
    if (a.registers >= 0 || a.spillStores > 0 || a.spillLoads > 0) {
        StaticInfo info;
        info.registers = a.registers;
        info.spillStores = a.spillStores;
        info.spillLoads = a.spillLoads;
        r.measurement.staticInfo = info;
    }
    const std::string quantities = describeStatic(r, parseStaticRank(a.rankedBy).value_or(StaticRank::Occupancy));
    return "analysed" + (best.arch.empty() ? std::string() : " for " + best.arch) + ", not timed" +
           (quantities.empty() ? std::string() : ": " + quantities);
}

std::string writeBestConfigsJson(const std::vector<BestConfig>& best) {
    Json doc = Json::object();
    doc["format"] = "tilescope-best-configs";
    doc["version"] = 1;
    doc["generated_by"] = std::string("tilescope ") + TILESCOPE_VERSION;
    Json entries = Json::array();
    for (const BestConfig& b : best) {
        Json e = Json::object();
        std::string shape;
        Json shapeJson = Json::object();
        for (const auto& [name, value] : b.shape) {
            shapeJson[name] = value;
            shape += (shape.empty() ? "" : " ") + name + "=" + std::to_string(value);
        }
        if (b.shape.empty() && !b.problemSize.empty()) {
            shape = "problem_size=";
            for (std::size_t i = 0; i < b.problemSize.size(); ++i)
                shape += (i ? "," : "") + std::to_string(b.problemSize[i]);
        }
        // An entry of no device (analysed offline) is keyed by its arch: entries for sm_80 and
        // sm_90 of one kernel and shape are two keys, as they are two entries.
        e["key"] = b.kernel + " | " + shape + " | " + (b.device.empty() ? b.arch : b.device);
        e["kernel"] = b.kernel;
        e["shape"] = shapeJson;
        e["problem_size"] = b.problemSize;
        e["device"] = b.device;
        e["arch"] = b.arch;
        e["config"] = toJson(b.config);
        e["time_ms"] = b.analysed ? Json() : jsonNumber(b.timeMs); // null: not timed
        if (b.ciHighMs > 0)
            e["time_ci95_ms"] = Json::array({jsonNumber(b.ciLowMs), jsonNumber(b.ciHighMs)});
        if (b.objective)
            e["objective"] = Json{{"name", b.objectiveName}, {"value", jsonNumber(*b.objective)}};
        if (b.energyJ)
            e["energy_j"] = jsonNumber(*b.energyJ);
        if (b.analysed) {
            const BestConfig::Analysed& a = *b.analysed;
            Json analysed = Json::object();
            analysed["ranked_by"] = a.rankedBy;
            analysed["occupancy"] = a.occupancy ? jsonNumber(*a.occupancy) : Json();
            analysed["registers"] = a.registers >= 0 ? Json(a.registers) : Json();
            analysed["spill_stores"] = a.spillStores;
            analysed["spill_loads"] = a.spillLoads;
            e["analysed"] = analysed;
        }
        e["session"] = b.sessionId;
        if (b.driverVersion > 0)
            e["driver_version"] = b.driverVersion;
        if (!b.specHash.empty())
            e["spec_hash"] = b.specHash;
        if (!b.sourceHash.empty())
            e["source_hash"] = b.sourceHash;
        entries.push_back(e);
    }
    doc["entries"] = entries;
    return doc.dump(2) + "\n";
}

std::vector<BestConfig> parseBestConfigsJson(const std::string& text, const std::string& fileName) {
    const Json doc = parseJson(text, fileName);
    // Members of the wrong type read as absent (Json::value() would throw a type_error).
    const auto str = [](const Json& object, const char* key) {
        const auto it = object.find(key);
        return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (!doc.is_object() || str(doc, "format") != "tilescope-best-configs")
        throw InputError(fileName, "/format",
                         "not a Tilescope best-config JSON (\"format\": \"tilescope-best-configs\")");
    if (const auto version = doc.find("version"); version == doc.end() || *version != 1)
        throw InputError(fileName, "/version",
                         "unknown version " + (version == doc.end() ? std::string("(none)") : version->dump()) +
                             " (this version reads 1)");
    const auto entries = doc.find("entries");
    if (entries == doc.end() || !entries->is_array())
        throw InputError(fileName, "/entries", "expected an array");
    std::vector<BestConfig> out;
    std::size_t i = 0;
    for (const Json& e : *entries) {
        const std::string where = "/entries/" + std::to_string(i++);
        if (!e.is_object() || !e.contains("config") || !e["config"].is_object())
            throw InputError(fileName, where, "expected an object with a \"config\" object");
        BestConfig b;
        b.kernel = str(e, "kernel");
        if (const auto s = e.find("shape"); s != e.end() && s->is_object())
            for (auto d = s->begin(); d != s->end(); ++d)
                if (d.value().is_number_integer())
                    b.shape.emplace_back(d.key(), d.value().get<std::int64_t>());
        if (const auto p = e.find("problem_size"); p != e.end() && p->is_array())
            for (const auto& v : *p)
                if (v.is_number_integer())
                    b.problemSize.push_back(v.get<std::int64_t>());
        b.device = str(e, "device");
        b.arch = str(e, "arch");
        b.config = configFromJson(e["config"]);
        if (const auto t = e.find("time_ms"); t != e.end() && t->is_number())
            b.timeMs = t->get<double>();
        if (const auto j = e.find("energy_j"); j != e.end() && j->is_number())
            b.energyJ = j->get<double>();
        if (const auto ci = e.find("time_ci95_ms");
            ci != e.end() && ci->is_array() && ci->size() == 2 && (*ci)[0].is_number() && (*ci)[1].is_number()) {
            b.ciLowMs = (*ci)[0].get<double>();
            b.ciHighMs = (*ci)[1].get<double>();
        }
        if (const auto o = e.find("objective"); o != e.end() && o->is_object()) {
            b.objectiveName = str(*o, "name");
            if (const auto v = o->find("value"); v != o->end() && v->is_number())
                b.objective = v->get<double>();
        }
        if (const auto a = e.find("analysed"); a != e.end() && a->is_object()) {
            BestConfig::Analysed analysed;
            analysed.rankedBy = str(*a, "ranked_by");
            if (const auto v = a->find("occupancy"); v != a->end() && v->is_number())
                analysed.occupancy = v->get<double>();
            if (const auto v = a->find("registers"); v != a->end() && v->is_number_integer())
                analysed.registers = v->get<int>();
            if (const auto v = a->find("spill_stores"); v != a->end() && v->is_number_integer())
                analysed.spillStores = v->get<std::int64_t>();
            if (const auto v = a->find("spill_loads"); v != a->end() && v->is_number_integer())
                analysed.spillLoads = v->get<std::int64_t>();
            b.analysed = analysed;
        }
        if (const auto id = e.find("session"); id != e.end() && id->is_number_integer())
            b.sessionId = id->get<std::int64_t>();
        if (const auto v = e.find("driver_version"); v != e.end() && v->is_number_integer())
            b.driverVersion = v->get<int>();
        b.specHash = str(e, "spec_hash");
        b.sourceHash = str(e, "source_hash");
        out.push_back(std::move(b));
    }
    return out;
}

namespace {
constexpr std::string_view kMetadataKey = "tilescope-cache: ";
} // namespace

std::string bestConfigsMetadataLine(const std::vector<BestConfig>& best, const std::string& commentPrefix) {
    return commentPrefix + " " + std::string(kMetadataKey) + Json::parse(writeBestConfigsJson(best)).dump() + "\n";
}

std::vector<BestConfig> parseTunedConfigs(const std::string& text, const std::string& fileName) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{')
        return parseBestConfigsJson(text, fileName);
    std::size_t lineStart = 0;
    int line = 1;
    while (lineStart < text.size()) {
        std::size_t lineEnd = text.find('\n', lineStart);
        if (lineEnd == std::string::npos)
            lineEnd = text.size();
        const std::string_view l(text.data() + lineStart, lineEnd - lineStart);
        const std::size_t at = l.find(kMetadataKey);
        const std::string_view before = at == std::string_view::npos ? l : l.substr(0, at);
        if (at != std::string_view::npos && (before == "// " || before == "# "))
            return parseBestConfigsJson(std::string(l.substr(at + kMetadataKey.size())),
                                        fileName + ":" + std::to_string(line));
        lineStart = lineEnd + 1;
        ++line;
    }
    throw InputError(fileName, {},
                     "is neither a JSON cache of tuned configs nor a C++ header or Triton export with Tilescope's "
                     "metadata line (\"// tilescope-cache: ...\"); export it again with `tilescope-cli export "
                     "--format json|cpp|triton`");
}

} // namespace tilescope
