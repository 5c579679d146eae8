// Writing results: T4, the best-config JSON cache, triton.Config lists, a C++ header, CSV.

#include "exchange/exchange.h"
#include "exchange/jsontext.h"

#include "base/error.h"
#include "exchange/configcodec.h"
#include "model/configjson.h"
#include "spec/tuningproblem.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace tilescope {

using Json = nlohmann::ordered_json;
using exchange::number;

namespace {

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
    const Json provenance = exchange::tryParseJson(info.provenanceJson.empty() ? "{}" : info.provenanceJson);
    meta["provenance"] = provenance.is_object() ? provenance : Json::object();
    meta["problem_json"] = info.problemJson;
    return meta;
}

std::pair<const char*, int> invalidityOf(ResultStatus s) {
    switch (s) {
    case ResultStatus::Ok:
        return {"correct", 1};
    case ResultStatus::CompileError:
        return {"compile", 0};
    case ResultStatus::LaunchError:
    case ResultStatus::Crashed:
        return {"runtime", 0};
    case ResultStatus::WrongResult:
    case ResultStatus::Implausible: // ran, but could not have done its work
        return {"correctness", 0};
    case ResultStatus::Timeout:
        return {"timeout", 0};
    case ResultStatus::Pruned:
    case ResultStatus::Skipped:
        break;
    }
    return {"constraints", 0};
}

Json measurementOf(const std::string& name, double value, const char* unit) {
    return Json{{"name", name}, {"value", number(value)}, {"unit", unit}};
}

// Exact values and what the format has no field for, so that the file imports back to the same
// results. `withMetrics`: also the metrics (formats that have no place of their own for them).
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
        ext["verification_error"] = number(*m.verificationError);
    if (m.device >= 0)
        ext["device"] = m.device;
    if (r.objective)
        ext["objective"] = number(*r.objective);
    if (r.blockSize)
        ext["block_size"] = *r.blockSize;
    if (r.sharedDynamic)
        ext["shared_dynamic"] = *r.sharedDynamic;
    if (r.occupancy)
        ext["occupancy"] = number(*r.occupancy);
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
            metrics[metric.name] = number(metric.value);
        ext["metrics"] = metrics;
    }
    return ext;
}

Json resultToT4(const SessionInfo& info, const ResultRecord& r) {
    const Measurement& m = r.measurement;
    Json out = Json::object();
    out["timestamp"] = r.recordedAt;
    out["configuration"] = toJson(r.config);
    out["objectives"] = Json::array({info.objectiveName.empty() ? "time" : info.objectiveName});
    out["times"] = Json{{"compilation_time", m.compileSeconds * 1e3},
                        {"benchmark", m.benchmarkSeconds * 1e3},
                        {"framework", 0},
                        {"search_algorithm", 0},
                        {"validation", 0}};
    const auto [invalidity, correctness] = invalidityOf(m.status);
    out["invalidity"] = invalidity;
    out["correctness"] = correctness;
    Json measurements = Json::array();
    const bool timed = m.time.samples > 0 || m.time.medianMs > 0;
    if (timed) {
        measurements.push_back(measurementOf("time", m.time.medianMs, "ms"));
        measurements.push_back(measurementOf("time_min", m.time.minMs, "ms"));
        measurements.push_back(measurementOf("time_max", m.time.maxMs, "ms"));
        measurements.push_back(measurementOf("time_stdev", m.time.stdevMs, "ms"));
        measurements.push_back(measurementOf("samples", m.time.samples, ""));
    }
    if (r.objective && !info.objectiveName.empty())
        measurements.push_back(measurementOf(info.objectiveName, *r.objective, ""));
    for (const Metric& metric : m.metrics)
        measurements.push_back(measurementOf(metric.name, metric.value, ""));
    out["measurements"] = measurements;

    out["tilescope"] = resultExtension(r, true);
    return out;
}

std::string shapeKey(const SessionInfo& info) {
    return info.shapeLabel();
}

} // namespace

std::string writeT4(const SessionData& session) {
    // Indented, but one result a line: readable, and a quarter of the size of indenting them too.
    Json head = Json::object();
    head["schema_version"] = "1.0.0";
    head["metadata"] = Json{{"timeunit", "milliseconds"}, {"tilescope", sessionMetadata(session.info)}};
    std::string text = head.dump(2);
    text.resize(text.size() - 2); // the closing "\n}"
    text += ",\n  \"results\": [";
    for (std::size_t i = 0; i < session.results.size(); ++i)
        text += (i ? ",\n    " : "\n    ") + resultToT4(session.info, session.results[i]).dump();
    text += session.results.empty() ? "]\n}\n" : "\n  ]\n}\n";
    return text;
}

// Kernel Tuner cache

namespace {

// A double as Python's repr() writes it ("1.0", "0.0001", "1e-05", "1.5e+16"): Kernel Tuner keys
// its cache with str() of the values.
std::string pythonFloat(double v) {
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    if (ec != std::errc())
        return Json(v).dump();
    const std::string text(buf, end); // shortest round trip: "-1.2345e+17", "1e-05"
    const std::size_t e = text.find('e');
    std::string mantissa = text.substr(0, e);
    const int exponent = std::stoi(text.substr(e + 1));
    const bool negative = !mantissa.empty() && mantissa[0] == '-';
    if (negative)
        mantissa.erase(0, 1);
    std::string digits;
    for (const char c : mantissa)
        if (c != '.')
            digits += c;
    std::string out;
    if (exponent < -4 || exponent >= 16) {
        out = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
        const std::string mag = std::to_string(std::abs(exponent));
        out += std::string(exponent < 0 ? "e-" : "e+") + (mag.size() < 2 ? "0" : "") + mag;
    } else if (exponent < 0) {
        out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    } else {
        const auto point = static_cast<std::size_t>(exponent) + 1;
        if (digits.size() <= point)
            out = digits + std::string(point - digits.size(), '0') + ".0";
        else
            out = digits.substr(0, point) + "." + digits.substr(point);
    }
    return negative ? "-" + out : out;
}

// str() of a parameter value in Python, as Kernel Tuner joins them into a cache key.
std::string pythonStr(const Json& v) {
    if (v.is_boolean())
        return v.get<bool>() ? "True" : "False";
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_number_float())
        return pythonFloat(v.get<double>());
    if (v.is_null())
        return "None";
    if (v.is_array()) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i)
            out += (i ? ", " : "") + (v[i].is_string() ? "'" + v[i].get<std::string>() + "'" : pythonStr(v[i]));
        return out + "]";
    }
    return v.dump();
}

// Kernel Tuner's marker of a config that has no time: its ErrorConfig class names.
const char* kernelTunerError(ResultStatus s) {
    switch (s) {
    case ResultStatus::Ok:
        return nullptr;
    case ResultStatus::CompileError:
        return "CompilationFailedConfig";
    case ResultStatus::LaunchError:
    case ResultStatus::WrongResult:
    case ResultStatus::Crashed:
    case ResultStatus::Timeout:
    case ResultStatus::Implausible:
        return "RuntimeFailedConfig";
    case ResultStatus::Pruned:
    case ResultStatus::Skipped:
        break;
    }
    return "InvalidConfig";
}

// Every value of each parameter: the problem's value lists when the session carries its problem,
// else the values its results took (numbers ascending, the rest in order of appearance).
Json tuneParamsOf(const SessionData& session) {
    Json params = Json::object();
    if (!session.info.problemJson.empty()) {
        try {
            const TuningProblem problem = TuningProblem::parse(session.info.problemJson, "problem", {});
            for (const TuningParameter& p : problem.parameters) {
                Json values = Json::array();
                for (const expr::Value& v : p.values)
                    values.push_back(toJson(recordedValue(v)));
                params[p.name] = values;
            }
            const bool same = std::all_of(session.info.parameters.begin(), session.info.parameters.end(),
                                          [&](const std::string& name) { return params.contains(name); }) &&
                              params.size() == session.info.parameters.size();
            if (same) {
                Json ordered = Json::object(); // in the session's order, which the cache keys follow
                for (const std::string& name : session.info.parameters)
                    ordered[name] = params[name];
                return ordered;
            }
        } catch (const std::exception&) {
            // a problem of an older version, or one this build cannot read: fall back to the results
        }
        params = Json::object();
    }
    for (const std::string& name : session.info.parameters) {
        std::vector<Json> values;
        for (const ResultRecord& r : session.results)
            if (const ConfigValue* v = r.config.find(name))
                if (const Json value = toJson(*v); std::find(values.begin(), values.end(), value) == values.end())
                    values.push_back(value);
        if (std::all_of(values.begin(), values.end(), [](const Json& v) { return v.is_number(); }))
            std::sort(values.begin(), values.end(),
                      [](const Json& a, const Json& b) { return a.get<double>() < b.get<double>(); });
        params[name] = values;
    }
    return params;
}

} // namespace

std::string writeKernelTunerCache(const SessionData& session) {
    const SessionInfo& info = session.info;
    std::vector<std::string> keys = info.parameters;
    if (keys.empty() && !session.results.empty())
        for (const auto& [name, value] : session.results.front().config)
            keys.push_back(name);
    SessionData withKeys;
    const SessionData* s = &session;
    if (keys != info.parameters) {
        withKeys = session;
        withKeys.info.parameters = keys;
        s = &withKeys;
    }

    Json head = Json::object();
    head["device_name"] = info.deviceName.empty() ? "unknown" : info.deviceName;
    head["kernel_name"] = info.kernel.empty() ? "kernel" : info.kernel;
    Json problemSize = Json::array();
    if (!info.problemSize.empty())
        problemSize = info.problemSize;
    else
        for (const auto& [name, value] : info.shape)
            problemSize.push_back(value);
    head["problem_size"] = problemSize;
    head["tune_params_keys"] = keys;
    head["tune_params"] = tuneParamsOf(*s);
    head["objective"] = "time";
    head["tilescope"] = sessionMetadata(info);

    // Laid out as Kernel Tuner writes its caches: the header, then one entry a line, closed by "}\n}".
    std::string text = head.dump(2);
    text.resize(text.size() - 2); // the closing "\n}"
    text += ",\n  \"cache\": {";
    std::set<std::string> seen;
    bool first = true;
    for (const ResultRecord& r : session.results) {
        std::string key;
        Json entry = Json::object();
        for (const std::string& name : keys) {
            const ConfigValue* found = r.config.find(name);
            const Json value = found ? toJson(*found) : Json();
            key += (key.empty() ? "" : ",") + pythonStr(value);
            entry[name] = value;
        }
        if (!seen.insert(key).second)
            continue; // Kernel Tuner keeps the first result of a config
        const Measurement& m = r.measurement;
        if (const char* error = kernelTunerError(m.status)) {
            entry["time"] = error; // older Kernel Tuner reads the marker here, 1.x from "__error__"
            entry["__error__"] = error;
        } else {
            entry["time"] = number(m.time.medianMs);
            entry["times"] = Json::array({number(m.time.medianMs)});
        }
        entry["compile_time"] = m.compileSeconds * 1e3;
        entry["verification_time"] = 0;
        entry["benchmark_time"] = m.benchmarkSeconds * 1e3;
        entry["strategy_time"] = 0;
        entry["framework_time"] = 0;
        entry["timestamp"] = r.recordedAt;
        if (r.objective && !info.objectiveName.empty() && m.status == ResultStatus::Ok)
            entry[info.objectiveName] = number(*r.objective);
        for (const Metric& metric : m.metrics)
            if (!entry.contains(metric.name))
                entry[metric.name] = number(metric.value);
        entry["tilescope"] = resultExtension(r, false);
        text += (first ? "\n    " : ",\n    ") + Json(key).dump() + ": " + entry.dump();
        first = false;
    }
    text += "\n  }\n}\n";
    return text;
}

// Best configs

std::vector<BestConfig> bestConfigs(const std::vector<SessionData>& sessions) {
    using Key = std::tuple<std::string, std::string, std::string>; // kernel, device, shape
    std::map<Key, std::pair<const SessionInfo*, const ResultRecord*>> best;
    for (const SessionData& s : sessions) {
        for (const ResultRecord& r : s.results) {
            if (!r.ok())
                continue;
            const Key key{s.info.kernel, s.info.deviceName, shapeKey(s.info)};
            auto it = best.find(key);
            if (it == best.end())
                best.emplace(key, std::make_pair(&s.info, &r));
            else if (ranksBefore(r, *it->second.second))
                it->second = {&s.info, &r};
        }
    }
    std::vector<BestConfig> out;
    for (const auto& [key, value] : best) {
        const auto& [info, r] = value;
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
        b.sessionId = info->id;
        b.sourceHash = info->sourceHash;
        if (!info->problemJson.empty()) {
            try {
                b.specHash = TuningProblem::parse(info->problemJson, info->kernel + ".json", {}).specHash();
            } catch (const InputError&) {
                // a recorded problem this version cannot read: its hash stays unknown
            }
        }
        const Json provenance = exchange::tryParseJson(info->provenanceJson.empty() ? "{}" : info->provenanceJson);
        if (const auto d = provenance.find("devices");
            provenance.is_object() && d != provenance.end() && d->is_array() && !d->empty() && d->front().is_object())
            if (const auto v = d->front().find("driver_version"); v != d->front().end() && v->is_number_integer())
                b.driverVersion = v->get<int>();
        out.push_back(std::move(b));
    }
    return out;
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
        e["key"] = b.kernel + " | " + shape + " | " + b.device;
        e["kernel"] = b.kernel;
        e["shape"] = shapeJson;
        e["problem_size"] = b.problemSize;
        e["device"] = b.device;
        e["arch"] = b.arch;
        e["config"] = toJson(b.config);
        e["time_ms"] = number(b.timeMs);
        if (b.ciHighMs > 0)
            e["time_ci95_ms"] = Json::array({number(b.ciLowMs), number(b.ciHighMs)});
        if (b.objective)
            e["objective"] = Json{{"name", b.objectiveName}, {"value", number(*b.objective)}};
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
    const Json doc = exchange::parseJson(text, fileName);
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

// Identifiers and literals for generated code

namespace {

std::string identifier(const std::string& name, const std::string& fallback) {
    std::string out;
    for (const char c : name)
        out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (out.empty())
        out = fallback;
    if (std::isdigit(static_cast<unsigned char>(out[0])))
        out = "k" + out;
    static const std::set<std::string> kReserved = {
        "and",      "bool",     "break",    "case",      "char",       "class",        "const",    "continue",
        "default",  "delete",   "do",       "double",    "else",       "enum",         "false",    "float",
        "for",      "if",       "in",       "int",       "is",         "long",         "not",      "or",
        "return",   "short",    "signed",   "sizeof",    "static",     "struct",       "switch",   "true",
        "typedef",  "union",    "unsigned", "void",      "while",      "None",         "True",     "False",
        "def",      "import",   "from",     "lambda",    "pass",       "with",         "yield",    "global",
        "template", "this",     "new",      "auto",      "namespace",  "operator",     "private",  "public",
        "using",    "virtual",  "device",   "lookup",    "Config",     "Entry",        "kEntries", "detail",
        "time_ms",  "lookupOn", "config",   "e",         "find",       "findOn",       "i",        "dispatch",
        "nearest",  "kShapes",  "kDims",    "kDimNames", "TunedShape", "dims",         "entry",    "regret",
        "s",        "d",        "a",        "b",         "best",       "bestDistance", "distance"};
    if (kReserved.count(out))
        out += '_';
    return out;
}

std::string pythonLiteral(const Json& v) {
    if (v.is_boolean())
        return v.get<bool>() ? "True" : "False";
    if (v.is_null())
        return "None";
    if (v.is_array()) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i)
            out += (i ? ", " : "") + pythonLiteral(v[i]);
        return out + "]";
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isnan(d))
            return "float('nan')";
        if (std::isinf(d))
            return d > 0 ? "float('inf')" : "float('-inf')";
    }
    return v.dump(); // ints, floats (shortest round-trip form), strings (JSON escapes are Python's too)
}

std::string lower(std::string s) {
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool isWarpsName(const std::string& name) {
    const std::string l = lower(name);
    return l == "num_warps" || l == "warps" || l == "nwarps" || l == "n_warps";
}

bool isStagesName(const std::string& name) {
    const std::string l = lower(name);
    return l == "num_stages" || l == "stages" || l == "nstages" || l == "n_stages";
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

} // namespace

std::string tritonConfigExpression(const ConfigValues& config) {
    std::string kwargs, extra;
    for (const auto& [name, value] : config) {
        if (isWarpsName(name))
            extra += ", num_warps=" + pythonLiteral(toJson(value));
        else if (isStagesName(name))
            extra += ", num_stages=" + pythonLiteral(toJson(value));
        else
            kwargs += (kwargs.empty() ? "" : ", ") + jsonString(name) + ": " + pythonLiteral(toJson(value));
    }
    return "triton.Config({" + kwargs + "}" + extra + ")";
}

std::string pythonValue(const ConfigValue& value) {
    return pythonLiteral(toJson(value));
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

std::string writeTritonConfigs(const std::vector<SessionData>& sessions, std::size_t topK) {
    // kernel -> (shape, device) -> results of every session of that key
    std::map<std::string, std::map<std::pair<std::string, std::string>, std::vector<const ResultRecord*>>> groups;
    std::map<std::string, std::string> objectiveOf;
    for (const SessionData& s : sessions) {
        auto& group = groups[s.info.kernel][{shapeKey(s.info), s.info.deviceName}];
        for (const ResultRecord& r : s.results)
            if (r.ok())
                group.push_back(&r);
        if (!s.info.objectiveName.empty())
            objectiveOf[s.info.kernel] = s.info.objectiveName;
    }
    std::string out;
    out += "# Tuned configs for triton.autotune, exported by Tilescope " + std::string(TILESCOPE_VERSION) + ".\n";
    out += "# Per kernel: the " + std::to_string(topK) +
           " best configs of every (shape, device), best first, without repeats.\n";
    out += "# The line below is for `tilescope-cli check`: where and from what each best config was tuned.\n";
    out += bestConfigsMetadataLine(bestConfigs(sessions), "#");
    out += "import triton\n";
    std::vector<std::string> names;
    for (auto& [kernel, byKey] : groups) {
        const std::string var = identifier(kernel, "kernel") + "_configs";
        names.push_back(var);
        out += "\n" + var + " = [\n";
        std::set<std::string> seen;
        for (auto& [key, results] : byKey) {
            std::stable_sort(results.begin(), results.end(),
                             [](const ResultRecord* a, const ResultRecord* b) { return ranksBefore(*a, *b); });
            const std::string where = (key.first.empty() ? std::string("one shape") : key.first) +
                                      (key.second.empty() ? "" : " on " + key.second);
            out += "    # " + where + "\n";
            std::size_t taken = 0;
            // Several sessions of one (shape, device) measure the same config more than once:
            // its best-ranked result stands for it and the others take no place in the top k.
            std::set<std::string> inKey;
            for (const ResultRecord* r : results) {
                if (taken == topK)
                    break;
                const std::string id = configKey(r->config);
                if (!inKey.insert(id).second)
                    continue;
                ++taken;
                std::string note = fixed(r->timeMs(), 4) + " ms";
                if (r->measurement.time.hasInterval())
                    note += " (95 %: " + fixed(r->measurement.time.ciLowMs, 4) + "-" +
                            fixed(r->measurement.time.ciHighMs, 4) + ")";
                if (r->objective && objectiveOf.count(kernel))
                    note += ", " + fixed(*r->objective, 2) + " " + objectiveOf[kernel];
                if (!seen.insert(id).second) {
                    out += "    # (listed above) " + describeConfig(r->config) + ": " + note + "\n";
                    continue;
                }
                out += "    " + tritonConfigExpression(r->config) + ",  # " + note + "\n";
            }
        }
        out += "]\n";
    }
    if (names.size() == 1)
        out += "\nconfigs = " + names.front() + "\n";
    return out;
}

namespace {

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

std::string cppNumber(double v) {
    if (!std::isfinite(v))
        return std::string("0.0");
    std::string text = Json(v).dump();
    if (text.find_first_of(".eE") == std::string::npos)
        text += ".0";
    return text;
}

} // namespace

std::string cppIdentifier(const std::string& name, const std::string& fallback) {
    return identifier(name, fallback);
}

CppConfigLayout::CppConfigLayout(const std::vector<const ConfigValues*>& configs) {
    // Parameters in the first config's order, then any the others add.
    for (const ConfigValues* c : configs)
        for (const auto& [name, value] : *c)
            if (std::find(m_params.begin(), m_params.end(), name) == m_params.end())
                m_params.push_back(name);
    // A C++ type per parameter from the values it takes.
    for (const std::string& p : m_params) {
        bool allInt = true, allBool = true, anyString = false;
        for (const ConfigValues* c : configs) {
            const ConfigValue* it = c->find(p);
            if (!it)
                continue;
            allInt = allInt && it->isInt();
            allBool = allBool && it->isBool();
            anyString = anyString || !(it->isNumber() || it->isBool());
        }
        m_types.push_back(anyString ? "const char*" : allBool ? "bool" : allInt ? "long long" : "double");
        m_ids.push_back(identifier(p, "param"));
    }
}

std::string CppConfigLayout::structDefinition() const {
    std::string out = "struct Config {\n";
    for (std::size_t p = 0; p < m_params.size(); ++p)
        out += "    " + m_types[p] + " " + m_ids[p] + ";\n";
    if (m_params.empty())
        out += "    int unused;\n";
    return out + "};\n";
}

std::string CppConfigLayout::initializer(const ConfigValues& config) const {
    std::string out = "{";
    for (std::size_t p = 0; p < m_params.size(); ++p) {
        const ConfigValue* it = config.find(m_params[p]);
        const std::string& type = m_types[p];
        std::string v;
        if (!it)
            v = type == "const char*" ? "\"\"" : type == "bool" ? "false" : "0";
        else if (type == "const char*")
            v = quote(it->plain());
        else if (type == "bool")
            v = it->asBool() ? "true" : "false";
        else if (type == "long long")
            v = it->json() + "LL";
        else
            v = cppNumber(it->asNumber());
        out += (p ? ", " : "") + v;
    }
    if (m_params.empty())
        out += "0";
    return out + "}";
}

std::string writeCppHeader(const std::vector<BestConfig>& best, const std::string& guardName) {
    std::map<std::string, std::vector<const BestConfig*>> byKernel;
    for (const BestConfig& b : best)
        byKernel[b.kernel].push_back(&b);
    std::string out;
    out += "// Tuned configs exported by Tilescope " + std::string(TILESCOPE_VERSION) +
           ": the best config per (shape, device).\n";
    out += "// Self-contained C++17. Per kernel: lookup(shape...) gives the best config of the first device\n";
    out += "// tuned for that shape, lookupOn(device, shape...) that of one device; nullptr when not tuned.\n";
    out += "// find() and findOn() give the index in kEntries (-1: not tuned) and work at compile time.\n";
    out += "// The line below is for `tilescope-cli check`: where and from what each entry was tuned.\n";
    out += bestConfigsMetadataLine(best, "//");
    out += "#pragma once\n\n#include <cstdint>\n\n";
    const std::string ns = identifier(guardName, "tilescope_tuned");
    out += "namespace " + ns + " {\n\n";
    out += "namespace detail {\n";
    out += "constexpr bool sameText(const char* a, const char* b) {\n";
    out += "    while (*a != '\\0' && *a == *b) {\n        ++a;\n        ++b;\n    }\n    return *a == *b;\n}\n";
    out += "} // namespace detail\n";

    for (const auto& [kernel, entries] : byKernel) {
        std::vector<const ConfigValues*> configs;
        for (const BestConfig* b : entries)
            configs.push_back(&b->config);
        const CppConfigLayout layout(configs);
        std::vector<std::string> dims;
        for (const BestConfig* b : entries) {
            for (const auto& [name, value] : b->shape)
                if (std::find(dims.begin(), dims.end(), name) == dims.end())
                    dims.push_back(name);
        }
        std::size_t sizeDims = 0;
        for (const BestConfig* b : entries)
            if (b->shape.empty())
                sizeDims = std::max(sizeDims, b->problemSize.size());
        if (dims.empty())
            for (std::size_t i = 0; i < sizeDims; ++i)
                dims.push_back("problem_size_" + std::to_string(i));

        std::vector<std::string> dimIds;
        for (const std::string& d : dims)
            dimIds.push_back(identifier(d, "dim"));

        out += "\nnamespace " + identifier(kernel, "kernel") + " {\n\n";
        out += layout.structDefinition() + "\n";
        out += "struct Entry {\n";
        for (const std::string& d : dimIds)
            out += "    std::int64_t " + d + ";\n";
        out += "    const char* device;\n    Config config;\n    double time_ms;\n};\n\n";
        out += "inline constexpr Entry kEntries[] = {\n";
        for (const BestConfig* b : entries) {
            std::string row = "    {";
            for (std::size_t d = 0; d < dims.size(); ++d) {
                std::int64_t v = 0;
                if (!b->shape.empty()) {
                    for (const auto& [name, value] : b->shape)
                        if (name == dims[d])
                            v = value;
                } else if (d < b->problemSize.size()) {
                    v = b->problemSize[d];
                }
                row += std::to_string(v) + ", ";
            }
            row += quote(b->device) + ", " + layout.initializer(b->config) + ", " + cppNumber(b->timeMs) + "},";
            std::string label;
            for (const auto& [name, value] : b->shape)
                label += (label.empty() ? "" : " ") + name + "=" + std::to_string(value);
            if (b->ciHighMs > 0) // the winner's 95 % interval, as measured (metadata for people)
                label += (label.empty() ? "" : "; ") + std::string("95 %: ") + fixed(b->ciLowMs, 4) + "-" +
                         fixed(b->ciHighMs, 4) + " ms";
            out += row + (label.empty() ? "" : "  // " + label) + "\n";
        }
        out += "};\n\n";

        std::string args, match, names;
        for (std::size_t d = 0; d < dimIds.size(); ++d) {
            args += (d ? ", " : "") + std::string("std::int64_t ") + dimIds[d];
            names += (d ? ", " : "") + dimIds[d];
            match += "kEntries[i]." + dimIds[d] + " == " + dimIds[d] + " && ";
        }
        // find() is constexpr for compile-time use; lookup() returns a pointer and is not, because
        // GCC's -Waddress warns about comparing a constant-folded table address with nullptr.
        const std::string count = "int(sizeof kEntries / sizeof kEntries[0])";
        out += "/// The index in kEntries of the best config for this shape on `device`, or -1.\n";
        out += "constexpr int findOn(const char* device" + (args.empty() ? "" : ", " + args) + ") {\n";
        out += "    for (int i = 0; i < " + count + "; ++i)\n";
        out += "        if (" + match + "detail::sameText(kEntries[i].device, device))\n";
        out += "            return i;\n    return -1;\n}\n\n";
        out += "/// The index in kEntries of the best config for this shape (the first device tuned for it), or -1.\n";
        out += "constexpr int find(" + args + ") {\n";
        if (match.empty()) {
            out += "    return 0;\n}\n\n"; // no shape: the first entry (there is at least one)
        } else {
            out += "    for (int i = 0; i < " + count + "; ++i)\n";
            out += "        if (" + match.substr(0, match.size() - 4) + ")\n            return i;\n";
            out += "    return -1;\n}\n\n";
        }
        out += "/// The best config for this shape on `device`, or nullptr when that was not tuned.\n";
        out += "inline const Config* lookupOn(const char* device" + (args.empty() ? "" : ", " + args) + ") {\n";
        out += "    const int i = findOn(device" + (names.empty() ? "" : ", " + names) + ");\n";
        out += "    return i < 0 ? nullptr : &kEntries[i].config;\n}\n\n";
        out += "/// The best config for this shape (of the first device tuned for it), or nullptr.\n";
        out += "inline const Config* lookup(" + args + ") {\n";
        out += "    const int i = find(" + names + ");\n";
        out += "    return i < 0 ? nullptr : &kEntries[i].config;\n}\n\n";
        out += "} // namespace " + identifier(kernel, "kernel") + "\n";
    }
    out += "\n} // namespace " + ns + "\n";
    return out;
}

std::string writeCsv(const std::vector<SessionData>& sessions) {
    auto field = [](const std::string& text) {
        if (text.find_first_of(",\"\n\r") == std::string::npos)
            return text;
        std::string out = "\"";
        for (const char c : text) {
            if (c == '"')
                out += '"';
            out += c;
        }
        return out + "\"";
    };
    auto num = [](double v) { return std::isfinite(v) ? Json(v).dump() : std::string(); };
    std::vector<std::string> params;
    for (const SessionData& s : sessions) {
        for (const std::string& p : s.info.parameters)
            if (std::find(params.begin(), params.end(), p) == params.end())
                params.push_back(p);
        for (const ResultRecord& r : s.results)
            for (const auto& [name, value] : r.config)
                if (std::find(params.begin(), params.end(), name) == params.end())
                    params.push_back(name);
    }
    std::string out = "session,kernel,shape,device";
    for (const std::string& p : params)
        out += "," + field(p);
    out += ",status,time_ms,time_min_ms,time_max_ms,time_stdev_ms,samples,objective,compile_s,benchmark_s,registers,"
           "spill_stores,spill_loads,stack_frame,shared_static,block_size,occupancy,verification_error,message\n";
    for (const SessionData& s : sessions) {
        const std::string prefix = std::to_string(s.info.id) + "," + field(s.info.kernel) + "," +
                                   field(s.info.shapeLabel()) + "," + field(s.info.deviceName);
        for (const ResultRecord& r : s.results) {
            const Measurement& m = r.measurement;
            std::string row = prefix;
            for (const std::string& p : params) {
                const ConfigValue* it = r.config.find(p);
                row += ",";
                if (it)
                    row += field(it->plain());
            }
            const bool timed = m.time.samples > 0 || m.time.medianMs > 0;
            row += "," + std::string(statusName(m.status));
            row += "," + (timed ? num(m.time.medianMs) : "") + "," + (timed ? num(m.time.minMs) : "") + "," +
                   (timed ? num(m.time.maxMs) : "") + "," + (timed ? num(m.time.stdevMs) : "");
            row += "," + std::to_string(m.time.samples);
            row += "," + (r.objective ? num(*r.objective) : "");
            row += "," + num(m.compileSeconds) + "," + num(m.benchmarkSeconds);
            if (m.staticInfo) {
                const StaticInfo& i = *m.staticInfo;
                row += "," + (i.registers >= 0 ? std::to_string(i.registers) : "") + "," +
                       std::to_string(i.spillStores) + "," + std::to_string(i.spillLoads) + "," +
                       std::to_string(i.stackFrame) + "," + std::to_string(i.sharedStatic);
            } else {
                row += ",,,,,";
            }
            row += "," + (r.blockSize ? std::to_string(*r.blockSize) : "");
            row += "," + (r.occupancy ? num(*r.occupancy) : "");
            row += "," + (m.verificationError ? num(*m.verificationError) : "");
            row += "," + field(m.message);
            out += row + "\n";
        }
    }
    return out;
}

const std::vector<ExportFormat>& exportFormats() {
    static const std::vector<ExportFormat> formats = {ExportFormat::T4,     ExportFormat::BestConfigsJson,
                                                      ExportFormat::Triton, ExportFormat::CppHeader,
                                                      ExportFormat::Csv,    ExportFormat::KernelTunerCache};
    return formats;
}

std::string exportFormatName(ExportFormat format) {
    switch (format) {
    case ExportFormat::T4:
        return "t4";
    case ExportFormat::KernelTunerCache:
        return "kerneltuner";
    case ExportFormat::BestConfigsJson:
        return "json";
    case ExportFormat::Triton:
        return "triton";
    case ExportFormat::CppHeader:
        return "cpp";
    case ExportFormat::Csv:
        return "csv";
    }
    return "t4";
}

std::optional<ExportFormat> parseExportFormat(std::string_view name) {
    for (ExportFormat format : exportFormats())
        if (exportFormatName(format) == name)
            return format;
    return std::nullopt;
}

std::string exportResults(const std::vector<SessionData>& sessions, const ExportOptions& options,
                          const std::string& source) {
    if (sessions.empty())
        throw InputError(source, "", "there are no sessions to export");
    switch (options.format) {
    case ExportFormat::T4:
        if (sessions.size() != 1)
            throw InputError(source, "",
                             "T4 holds one session, and " + std::to_string(sessions.size()) + " were given: pick one");
        return writeT4(sessions.front());
    case ExportFormat::KernelTunerCache:
        if (sessions.size() != 1)
            throw InputError(source, "",
                             "a Kernel Tuner cache holds one session, and " + std::to_string(sessions.size()) +
                                 " were given: pick one");
        return writeKernelTunerCache(sessions.front());
    case ExportFormat::BestConfigsJson:
        return writeBestConfigsJson(bestConfigs(sessions));
    case ExportFormat::Triton:
        return writeTritonConfigs(sessions, std::max<std::size_t>(options.topK, 1));
    case ExportFormat::CppHeader: {
        const std::vector<BestConfig> best = bestConfigs(sessions);
        if (best.empty())
            throw InputError(source, "", "no config ran correctly: there is nothing to put in a header");
        return writeCppHeader(best);
    }
    case ExportFormat::Csv:
        return writeCsv(sessions);
    }
    throw InputError(source, "", "unknown export format");
}

} // namespace tilescope
