#include "exchange/kerneltunercache.h"

#include "base/error.h"
#include "base/jsonreader.h"
#include "exchange/configcodec.h"
#include "exchange/recordcheck.h"
#include "exchange/sessionfields.h"
#include "expr/expr.h"
#include "model/configjson.h"
#include "spec/tuningproblem.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <optional>
#include <set>

namespace tilescope {

using Json = nlohmann::ordered_json;
using namespace exchange;

namespace {

// str() of a parameter value in Python, as Kernel Tuner joins them into a cache key.
std::string pythonStr(const Json& v) {
    if (v.is_boolean())
        return v.get<bool>() ? "True" : "False";
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_number_float())
        return expr::repr(expr::Value::ofFloat(v.get<double>())); // Python's repr(), as str() writes it
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

// Kernel Tuner's names of energy and power (its NVML observer's) against Tilescope's.
constexpr std::pair<const char*, const char*> kMetricNames[] = {{"nvml_energy", kEnergyMetric},
                                                                {"nvml_power", kPowerMetric}};

std::string tilescopeMetricName(const std::string& kernelTuner) {
    for (const auto& [kt, ours] : kMetricNames)
        if (kernelTuner == kt)
            return ours;
    return kernelTuner;
}

std::string kernelTunerMetricName(const std::string& ours) {
    for (const auto& [kt, name] : kMetricNames)
        if (ours == name)
            return kt;
    return ours;
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
    // Never run: InvalidConfig is the marker Kernel Tuner gives a config it did not run (its
    // simulation mode, too); the "tilescope" object keeps the status for our readers.
    case ResultStatus::Analysed:
        break;
    }
    return "InvalidConfig";
}

// The status of a config that Kernel Tuner marks as failed, by the marker (its ErrorConfig class
// names, as its read_cache knows them); nullopt for any other string.
std::optional<ResultStatus> kernelTunerStatus(const std::string& marker) {
    if (marker == "InvalidConfig")
        return ResultStatus::Pruned;
    if (marker == "CompilationFailedConfig")
        return ResultStatus::CompileError;
    if (marker == "RuntimeFailedConfig" || marker == "ErrorConfig") // ErrorConfig: their base class
        return ResultStatus::LaunchError;
    return std::nullopt;
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
            entry["time"] = jsonNumber(m.time.medianMs);
            entry["times"] = Json::array({jsonNumber(m.time.medianMs)});
        }
        entry["compile_time"] = m.compileSeconds * 1e3;
        entry["verification_time"] = 0;
        entry["benchmark_time"] = m.benchmarkSeconds * 1e3;
        entry["strategy_time"] = 0;
        entry["framework_time"] = 0;
        entry["timestamp"] = r.recordedAt;
        if (r.objective && !info.objectiveName.empty() && m.status == ResultStatus::Ok)
            entry[info.objectiveName] = jsonNumber(*r.objective);
        for (const Metric& metric : m.metrics)
            if (!entry.contains(kernelTunerMetricName(metric.name)))
                entry[kernelTunerMetricName(metric.name)] = jsonNumber(metric.value);
        entry["tilescope"] = resultExtension(r, false);
        text += (first ? "\n    " : ",\n    ") + Json(key).dump() + ": " + entry.dump();
        first = false;
    }
    text += "\n  }\n}\n";
    return text;
}

SessionData parseKernelTunerCache(const std::string& text, const std::string& fileName) {
    Json parsed;
    try {
        parsed = parseJson(text, fileName, recordingJsonOptions());
    } catch (const InputError& first) {
        // Kernel Tuner appends entries as it goes and closes the file at the end: a run that was
        // stopped leaves it open. Close it as Kernel Tuner's reader does; if that does not parse
        // either, the file is damaged and the first error is the one to report.
        std::string closed = text;
        while (!closed.empty() && std::isspace(static_cast<unsigned char>(closed.back())))
            closed.pop_back();
        if (!closed.empty() && closed.back() == ',')
            closed.pop_back();
        closed += "}\n}";
        try {
            parsed = parseJson(closed, fileName, recordingJsonOptions()); // with the same limits
        } catch (const InputError&) {
            throw first;
        }
    }
    const JsonNode doc(parsed, fileName);
    if (!parsed.is_object())
        doc.fail("not a Kernel Tuner cache: expected a JSON object");
    static const char* kVersions[] = {"1.0.0", "1.0.1", "1.1.0"};
    const auto version = doc.member("schema_version");
    if (version &&
        (!(*version)->is_string() || std::none_of(std::begin(kVersions), std::end(kVersions),
                                                  [&](const char* v) { return (*version)->get<std::string>() == v; })))
        version->fail("unknown Kernel Tuner cache schema version " + (*version)->dump() +
                      " (this version reads 1.0.0, 1.0.1, 1.1.0 and unversioned caches)");
    const bool versioned = version.has_value();
    // Unversioned caches (before 1.0.0) may lack the objective; Kernel Tuner assumes time.
    const Json& device = *doc.required("device_name");
    const Json& kernel = *doc.required("kernel_name");
    const JsonNode keysJson = doc.required("tune_params_keys");
    const JsonNode cache = doc.required("cache");
    if (versioned) {
        doc.required("problem_size");
        doc.required("tune_params");
        doc.required("objective");
    }
    if (!cache->is_object())
        cache.fail("expected an object of entries");
    if (!keysJson->is_array())
        keysJson.fail("expected an array of parameter names");
    // A string; Kernel Tuner 1.x writes a list of objectives.
    std::string objective = "time";
    if (const auto it = parsed.find("objective"); it != parsed.end()) {
        if (it->is_string())
            objective = it->get<std::string>();
        else if (it->is_array() && !it->empty() && (*it)[0].is_string())
            objective = (*it)[0].get<std::string>();
    }

    SessionData data;
    SessionInfo& info = data.info;
    info.state = SessionState::Imported;
    // Tilescope's own caches carry the session (shape, problem, objective, ...) beside Kernel Tuner's fields.
    if (const auto meta = doc.member("tilescope"); meta && (*meta)->is_object()) {
        readSessionMetadata(*meta, info);
        info.parameters.clear();
        info.problemSize.clear();
    }
    info.kernel = kernel.is_string() ? kernel.get<std::string>() : "";
    info.deviceName = device.is_string() ? device.get<std::string>() : "";
    for (const auto& k : *keysJson) {
        if (!k.is_string())
            keysJson.fail("expected parameter names (strings)");
        info.parameters.push_back(k.get<std::string>());
    }
    if (const auto size = doc.member("problem_size")) {
        if ((*size)->is_array()) {
            for (std::size_t i = 0; i < (*size)->size(); ++i)
                if ((**size)[i].is_number())
                    info.problemSize.push_back(size->item(i).asIntegralIn(INT64_MIN, INT64_MAX));
        } else if ((*size)->is_number()) {
            info.problemSize.push_back(size->asIntegralIn(INT64_MIN, INT64_MAX));
        } else if ((*size)->is_string()) { // 1.1.0 allows "4096x4096" and the like
            const std::string sizes = (*size)->get<std::string>();
            for (std::size_t i = 0; i < sizes.size();) {
                if (!std::isdigit(static_cast<unsigned char>(sizes[i]))) {
                    ++i;
                    continue;
                }
                std::int64_t v = 0;
                const auto [end, ec] = std::from_chars(sizes.data() + i, sizes.data() + sizes.size(), v);
                if (ec != std::errc())
                    size->fail("the size " + showJson(Json(sizes)) + " holds a number too large for 64 bits");
                info.problemSize.push_back(v);
                i = static_cast<std::size_t>(end - sizes.data());
            }
        }
    }
    const bool throughput = objective != "time" && objective.find("/s") != std::string::npos;
    if (throughput)
        info.objectiveName = objective;
    // The entry field that holds the session's objective (not a metric).
    const std::string objectiveField = info.objectiveName;

    static const char* kKnown[] = {"time",           "times",         "compile_time",   "verification_time",
                                   "benchmark_time", "strategy_time", "framework_time", "timestamp"};
    for (const auto& [key, value] : cache->items()) {
        const JsonNode node = cache.child(key, value);
        const Json& entry = value;
        if (!entry.is_object())
            node.fail("expected an object");
        ResultRecord r;
        for (const std::string& name : info.parameters) {
            const auto v = entry.find(name);
            if (v == entry.end())
                node.fail("missing the value of parameter '" + name + "'");
            r.config[name] = recordedParameterValue(node.child(name, *v));
        }
        Measurement& m = r.measurement;
        // Kernel Tuner 1.x marks a failed config with "__error__" and may leave out "time".
        const auto errorIt = entry.find("__error__");
        const bool marked = errorIt != entry.end() && errorIt->is_string();
        const JsonNode time = marked ? node.child("__error__", *errorIt) : node.required("time");
        std::string timeField = time.pointer();
        std::vector<double> runtimes;
        if (const auto samples = node.member("times"); samples && (*samples)->is_array())
            for (std::size_t i = 0; i < (*samples)->size(); ++i)
                if ((**samples)[i].is_number())
                    runtimes.push_back(recordedTimeMs(samples->item(i)));
        if (time->is_number()) {
            m.status = ResultStatus::Ok;
            if (!runtimes.empty())
                m.time = timingStatsOf(runtimes);
            m.time.medianMs = recordedTimeMs(time); // Kernel Tuner's time (the mean of its runs, in ms)
            if (runtimes.empty()) {
                m.time.minMs = m.time.maxMs = m.time.medianMs;
                m.time.samples = 1;
            }
        } else if (time->is_string()) {
            const std::string error = time->get<std::string>();
            const auto status = kernelTunerStatus(error);
            if (!status)
                time.fail("unknown Kernel Tuner failure " + showJson(*time) +
                          ": expected a time in ms or one of Kernel Tuner's markers (InvalidConfig, "
                          "CompilationFailedConfig, RuntimeFailedConfig, ErrorConfig); read as a failure, the "
                          "config would be what it was not");
            m.status = *status;
            m.message = error == "InvalidConfig"
                            ? "Kernel Tuner: InvalidConfig (violates a restriction or a device limit)"
                            : "Kernel Tuner: " + error;
        } else {
            time.fail("expected a number (ms) or an error name");
        }
        m.compileSeconds = numberOr(entry, "compile_time", 0) / 1e3;
        m.benchmarkSeconds = numberOr(entry, "benchmark_time", 0) / 1e3;
        if (const auto ts = entry.find("timestamp"); ts != entry.end() && ts->is_string())
            r.recordedAt = ts->get<std::string>();
        for (auto f = entry.begin(); f != entry.end(); ++f) {
            const std::string& name = f.key();
            if (!f.value().is_number() ||
                std::find(info.parameters.begin(), info.parameters.end(), name) != info.parameters.end())
                continue;
            if (std::any_of(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return name == k; }))
                continue;
            if (!objectiveField.empty() && name == objectiveField) {
                if (m.status == ResultStatus::Ok)
                    r.objective = f.value().get<double>();
                continue;
            }
            m.metrics.push_back({tilescopeMetricName(name), f.value().get<double>()});
        }
        if (const auto ext = node.member("tilescope"); ext && (*ext)->is_object()) {
            m.message.clear(); // the exact message, if any, is in there
            readResultExtension(*ext, r, &timeField);
        }
        // The parameters' names are the header's: a configuration that names none is theirs.
        checkRecordedResult(
            r, {fileName, node.pointer(), timeField, info.parameters.empty() ? keysJson.pointer() : node.pointer()});
        data.results.push_back(std::move(r));
    }
    return finishRecording(std::move(data));
}

} // namespace tilescope
