#include "exchange/sessionfields.h"

#include "analysis/plausibility.h"
#include "exchange/recordcheck.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <utility>

namespace tilescope::exchange {

using Json = nlohmann::ordered_json;

Json jsonNumber(double v) {
    return std::isfinite(v) ? Json(v) : Json(nullptr);
}

double numberOr(const Json& object, const char* key, double fallback) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

std::vector<double> jsonNumbers(const Json& array) {
    std::vector<double> out;
    if (array.is_array())
        for (const auto& v : array)
            if (v.is_number())
                out.push_back(v.get<double>());
    return out;
}

TimingStats timingStatsOf(const std::vector<double>& runtimes) {
    TimingStats t;
    if (runtimes.empty())
        return t;
    std::vector<double> sorted = runtimes;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    t.medianMs = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    t.minMs = sorted.front();
    t.maxMs = sorted.back();
    if (n > 1) {
        const double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
        double ss = 0;
        for (double v : sorted)
            ss += (v - mean) * (v - mean);
        t.stdevMs = std::sqrt(ss / static_cast<double>(n - 1));
    }
    t.samples = static_cast<int>(n);
    return t;
}

Json sessionMetadata(const SessionInfo& info) {
    Json meta = Json::object();
    meta["session"] = info.id;
    meta["kernel"] = info.kernel;
    Json shape = Json::object();
    for (const auto& [name, value] : info.shape)
        shape[name] = value;
    meta["shape"] = shape;
    meta["problem_size"] = info.problemSize;
    if (info.shapeIndex)
        meta["shape_index"] = *info.shapeIndex;
    meta["parameters"] = info.parameters;
    meta["device"] = info.deviceName;
    meta["arch"] = info.arch;
    meta["backend"] = info.backend;
    meta["strategy"] = info.strategy;
    meta["seed"] = info.seed;
    meta["budget"] = info.budget;
    meta["objective"] = info.objectiveName;
    meta["space_size"] = info.spaceSize;
    meta["started_at"] = info.startedAt;
    meta["ended_at"] = info.endedAt;
    meta["state"] = std::string(sessionStateName(info.state));
    meta["problem_hash"] = info.problemHash;
    meta["source_hash"] = info.sourceHash;
    meta["tool_version"] = info.toolVersion;
    const Json provenance = tryParseJson(info.provenanceJson.empty() ? "{}" : info.provenanceJson);
    meta["provenance"] = provenance.is_object() ? provenance : Json::object();
    meta["problem_json"] = info.problemJson;
    return meta;
}

void readSessionMetadata(const JsonNode& node, SessionInfo& info) {
    const Json& meta = *node;
    static constexpr std::pair<const char*, std::string SessionInfo::*> kStrings[] = {
        {"kernel", &SessionInfo::kernel},
        {"problem_json", &SessionInfo::problemJson},
        {"problem_hash", &SessionInfo::problemHash},
        {"source_hash", &SessionInfo::sourceHash},
        {"backend", &SessionInfo::backend},
        {"strategy", &SessionInfo::strategy},
        {"budget", &SessionInfo::budget},
        {"device", &SessionInfo::deviceName},
        {"arch", &SessionInfo::arch},
        {"objective", &SessionInfo::objectiveName},
        {"started_at", &SessionInfo::startedAt},
        {"ended_at", &SessionInfo::endedAt},
        {"tool_version", &SessionInfo::toolVersion},
    };
    for (const auto& [key, field] : kStrings)
        if (const auto it = meta.find(key); it != meta.end() && it->is_string())
            info.*field = it->get<std::string>();
    if (const auto it = meta.find("seed"); it != meta.end() && it->is_number_unsigned())
        info.seed = it->get<std::uint64_t>();
    if (const auto v = node.integralMember("shape_index", 0, INT64_MAX))
        info.shapeIndex = *v;
    if (const auto it = meta.find("space_size"); it != meta.end() && it->is_number_unsigned())
        info.spaceSize = it->get<std::uint64_t>();
    if (const auto shape = node.member("shape"); shape && (*shape)->is_object())
        for (const auto& [name, value] : (*shape)->items())
            info.shape.emplace_back(name, shape->child(name, value).asIntegralIn(INT64_MIN, INT64_MAX));
    if (const auto sizes = node.member("problem_size"); sizes && (*sizes)->is_array())
        for (std::size_t i = 0; i < (*sizes)->size(); ++i)
            info.problemSize.push_back(sizes->item(i).asIntegralIn(INT64_MIN, INT64_MAX));
    if (const auto it = meta.find("parameters"); it != meta.end() && it->is_array())
        for (const auto& v : *it)
            if (v.is_string())
                info.parameters.push_back(v.get<std::string>());
    if (const auto it = meta.find("provenance"); it != meta.end() && it->is_object())
        info.provenanceJson = it->dump();
}

Json resultExtension(const ResultRecord& r, bool withMetrics) {
    const Measurement& m = r.measurement;
    Json ext = Json::object();
    ext["status"] = std::string(statusName(m.status));
    if (!m.message.empty())
        ext["message"] = m.message;
    if (!r.log.empty())
        ext["log"] = r.log;
    if (r.spaceIndex)
        ext["space_index"] = *r.spaceIndex;
    ext["time"] = Json{{"median_ms", m.time.medianMs},
                       {"min_ms", m.time.minMs},
                       {"max_ms", m.time.maxMs},
                       {"stdev_ms", m.time.stdevMs},
                       {"samples", m.time.samples}};
    if (m.time.hasInterval()) {
        ext["time"]["ci_low_ms"] = m.time.ciLowMs;
        ext["time"]["ci_high_ms"] = m.time.ciHighMs;
    }
    ext["compile_s"] = m.compileSeconds;
    ext["benchmark_s"] = m.benchmarkSeconds;
    if (m.verificationError)
        ext["verification_error"] = jsonNumber(*m.verificationError);
    if (m.device >= 0)
        ext["device"] = m.device;
    if (r.objective)
        ext["objective"] = jsonNumber(*r.objective);
    if (r.blockSize)
        ext["block_size"] = *r.blockSize;
    if (r.sharedDynamic)
        ext["shared_dynamic"] = *r.sharedDynamic;
    if (r.occupancy)
        ext["occupancy"] = jsonNumber(*r.occupancy);
    if (m.staticInfo) {
        const StaticInfo& i = *m.staticInfo;
        ext["static"] =
            Json{{"registers", i.registers},         {"barriers", i.barriers},      {"stack_frame", i.stackFrame},
                 {"spill_stores", i.spillStores},    {"spill_loads", i.spillLoads}, {"shared_static", i.sharedStatic},
                 {"constant_bytes", i.constantBytes}};
    }
    if (withMetrics && !m.metrics.empty()) {
        Json metrics = Json::object();
        for (const Metric& metric : m.metrics)
            metrics[metric.name] = jsonNumber(metric.value);
        ext["metrics"] = metrics;
    }
    return ext;
}

void readResultExtension(const JsonNode& node, ResultRecord& r, std::string* timeField) {
    const Json& ext = *node;
    Measurement& m = r.measurement;
    if (const auto status = node.member("status"))
        m.status = recordedStatus(*status);
    if (const auto it = ext.find("message"); it != ext.end() && it->is_string())
        m.message = it->get<std::string>();
    if (const auto it = ext.find("log"); it != ext.end() && it->is_string())
        r.log = it->get<std::string>();
    if (const auto it = ext.find("space_index"); it != ext.end() && it->is_number_unsigned())
        r.spaceIndex = it->get<std::uint64_t>();
    if (const auto time = node.member("time"); time && (*time)->is_object()) {
        // Each time as every recorded time is read (a value of another type, or null for NaN as
        // we write it, leaves what the format's own fields said).
        const auto read = [&](const char* key, double& field) {
            const auto v = time->member(key);
            if (!v || !(*v)->is_number())
                return;
            field = recordedTimeMs(*v);
            if (timeField && &field == &m.time.medianMs)
                *timeField = v->pointer();
        };
        read("median_ms", m.time.medianMs);
        read("min_ms", m.time.minMs);
        read("max_ms", m.time.maxMs);
        read("stdev_ms", m.time.stdevMs);
        read("ci_low_ms", m.time.ciLowMs);
        read("ci_high_ms", m.time.ciHighMs);
        if (const auto v = time->integralMember("samples", 0, INT_MAX))
            m.time.samples = static_cast<int>(*v);
    }
    m.compileSeconds = numberOr(ext, "compile_s", m.compileSeconds);
    m.benchmarkSeconds = numberOr(ext, "benchmark_s", m.benchmarkSeconds);
    if (const auto it = ext.find("verification_error"); it != ext.end() && it->is_number())
        m.verificationError = it->get<double>();
    if (const auto v = node.integralMember("device", -1, INT_MAX))
        m.device = static_cast<int>(*v);
    if (const auto it = ext.find("objective"); it != ext.end() && it->is_number())
        r.objective = it->get<double>();
    if (const auto v = node.integralMember("block_size", INT64_MIN, INT64_MAX))
        r.blockSize = *v;
    if (const auto v = node.integralMember("shared_dynamic", INT64_MIN, INT64_MAX))
        r.sharedDynamic = *v;
    if (const auto it = ext.find("occupancy"); it != ext.end() && it->is_number())
        r.occupancy = it->get<double>();
    if (const auto s = node.member("static"); s && (*s)->is_object()) {
        auto field = [&](const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
            return s->integralMember(key, lo, hi).value_or(fallback);
        };
        StaticInfo i;
        i.registers = static_cast<int>(field("registers", -1, -1, INT_MAX));
        i.barriers = static_cast<int>(field("barriers", 0, -1, INT_MAX));
        i.stackFrame = field("stack_frame", 0, -1, INT64_MAX);
        i.spillStores = field("spill_stores", 0, -1, INT64_MAX);
        i.spillLoads = field("spill_loads", 0, -1, INT64_MAX);
        i.sharedStatic = field("shared_static", 0, -1, INT64_MAX);
        i.constantBytes = field("constant_bytes", 0, -1, INT64_MAX);
        m.staticInfo = i;
    }
    if (const auto it = ext.find("metrics"); it != ext.end() && it->is_object()) {
        m.metrics.clear();
        for (auto mt = it->begin(); mt != it->end(); ++mt)
            m.metrics.push_back({mt.key(), mt.value().is_number() ? mt.value().get<double>() : NAN});
    }
}

SessionData finishRecording(SessionData data) {
    for (ResultRecord& r : data.results) {
        r.measurement.message = cleanMessage(r.measurement.message);
        r.log = cleanMessage(r.log);
    }
    const PlausibilityReport report = checkRecorded(data);
    if (!report.note.empty())
        data.info.message += (data.info.message.empty() ? "" : "; ") + report.note;
    return data;
}

} // namespace tilescope::exchange
