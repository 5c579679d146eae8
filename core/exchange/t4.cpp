#include "exchange/t4.h"

#include "base/jsonreader.h"
#include "exchange/recordcheck.h"
#include "exchange/sessionfields.h"
#include "model/configjson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <numeric>

namespace tilescope {

using Json = nlohmann::ordered_json;
using namespace exchange;

namespace {

// Milliseconds per one of a time's unit.
double msPerUnit(const std::string& unit) {
    if (unit == "s" || unit == "seconds")
        return 1e3;
    if (unit == "us" || unit == "microseconds")
        return 1e-3;
    if (unit == "ns" || unit == "nanoseconds")
        return 1e-6;
    return 1; // "ms", "miliseconds" (sic, Kernel Tuner), "" or anything else: Kernel Tuner writes ms
}

// The status a T4 invalidity other than "correct" reads as.
constexpr std::pair<const char*, ResultStatus> kInvalidities[] = {
    {"compile", ResultStatus::CompileError}, {"runtime", ResultStatus::LaunchError},
    {"timeout", ResultStatus::Timeout},      {"correctness", ResultStatus::WrongResult},
    {"constraints", ResultStatus::Pruned},
};

ResultStatus statusOfInvalidity(const std::string& invalidity, double correctness) {
    for (const auto& [name, status] : kInvalidities)
        if (invalidity == name)
            return status;
    return correctness > 0 ? ResultStatus::Ok : ResultStatus::WrongResult;
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
    // Never run, so neither correct nor failed: T4 has no invalidity for "not measured", and
    // "constraints" is what every T4 reader takes for a config that was not run (Kernel Tuner
    // writes it for its InvalidConfig). The "tilescope" object keeps the status for our readers.
    case ResultStatus::Analysed:
        break;
    }
    return {"constraints", 0};
}

Json measurementOf(const std::string& name, double value, const char* unit) {
    return Json{{"name", name}, {"value", jsonNumber(value)}, {"unit", unit}};
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
    for (const Metric& metric : m.metrics) {
        // NVML's figures in their units; CUPTI's counters are counts and percentages.
        const bool joules = metric.name.rfind(kEnergyMetric, 0) == 0 && metric.name != kEnergyCounterMetric;
        const bool watts = metric.name.rfind(kPowerMetric, 0) == 0;
        measurements.push_back(measurementOf(metric.name, metric.value,
                                             joules                                ? "J"
                                             : watts                               ? "W"
                                             : metric.name == kEnergyCounterMetric ? "ms"
                                                                                   : ""));
    }
    out["measurements"] = measurements;

    out["tilescope"] = resultExtension(r, true);
    return out;
}

} // namespace

SessionData parseT4(const std::string& text, const std::string& fileName) {
    const Json parsed = parseJson(text, fileName, recordingJsonOptions());
    const JsonNode doc(parsed, fileName);
    if (!parsed.is_object())
        doc.fail("not a T4 results file: expected a JSON object with \"results\"");
    if (const auto version = doc.member("schema_version")) {
        if (!(*version)->is_string() || (*version)->get<std::string>() != "1.0.0")
            version->fail("unknown T4 schema version " + (*version)->dump() + " (this version reads T4 1.0.0)");
    }
    const JsonNode results = doc.required("results");
    if (!results->is_array())
        results.fail("expected an array of results");

    SessionData data;
    SessionInfo& info = data.info;
    info.state = SessionState::Imported;
    if (const auto m = doc.member("metadata"); m && (*m)->is_object())
        if (const auto t = m->member("tilescope"); t && (*t)->is_object())
            readSessionMetadata(*t, info);

    for (std::size_t index = 0; index < results->size(); ++index) {
        const JsonNode node = results.item(index);
        const Json& entry = *node;
        if (!entry.is_object())
            node.fail("expected an object");
        const JsonNode configuration = node.required("configuration");
        const JsonNode times = node.required("times");
        const JsonNode invalidity = node.required("invalidity");
        const JsonNode correctness = node.required("correctness");
        if (!configuration->is_object())
            configuration.fail("expected an object of parameter values");
        if (!times->is_object())
            times.fail("expected an object");
        static const char* kInvalidity[] = {"timeout", "compile", "runtime", "correctness", "constraints", "correct"};
        if (!invalidity->is_string() ||
            std::none_of(std::begin(kInvalidity), std::end(kInvalidity),
                         [&](const char* v) { return invalidity->get<std::string>() == v; }))
            invalidity.fail("expected one of timeout, compile, runtime, correctness, constraints, correct; found " +
                            invalidity->dump());
        if (!correctness->is_number())
            correctness.fail("expected a number");

        ResultRecord r;
        for (const auto& [name, value] : configuration->items())
            r.config[name] = recordedParameterValue(configuration.child(name, value));
        if (info.parameters.empty())
            for (auto it = configuration->begin(); it != configuration->end(); ++it)
                info.parameters.push_back(it.key());
        Measurement& m = r.measurement;
        m.status = statusOfInvalidity(invalidity->get<std::string>(), correctness->get<double>());
        // Kernel Tuner writes "compilation"; the schema names "compilation_time". Both in ms.
        m.compileSeconds = numberOr(*times, "compilation_time", numberOr(*times, "compilation", 0)) / 1e3;
        // Where the median time comes from, for a message about it: the runtimes, the "time"
        // measurement, the "tilescope" object, each over the one before.
        std::string timeField = node.pointer() + "/measurements";
        std::vector<double> runtimes;
        if (const auto samples = times.member("runtimes"); samples && (*samples)->is_array()) {
            for (std::size_t i = 0; i < (*samples)->size(); ++i)
                if ((**samples)[i].is_number())
                    runtimes.push_back(recordedTimeMs(samples->item(i)));
            if (!runtimes.empty())
                timeField = samples->pointer();
        }
        m.benchmarkSeconds =
            numberOr(*times, "benchmark", std::accumulate(runtimes.begin(), runtimes.end(), 0.0)) / 1e3;
        if (!runtimes.empty())
            m.time = timingStatsOf(runtimes);

        std::string objectiveName = "time";
        if (const auto it = entry.find("objectives");
            it != entry.end() && it->is_array() && !it->empty() && (*it)[0].is_string())
            objectiveName = (*it)[0].get<std::string>();
        if (const auto measurements = node.member("measurements"); measurements && (*measurements)->is_array()) {
            for (std::size_t i = 0; i < (*measurements)->size(); ++i) {
                const JsonNode meas = measurements->item(i);
                if (!meas->is_object() || !meas->contains("name") || !(*meas)["name"].is_string())
                    continue;
                const std::string name = (*meas)["name"].get<std::string>();
                const Json value = meas->value("value", Json());
                if (!value.is_number())
                    continue; // strings and arrays (Kernel Tuner's "times") carry nothing we keep
                const auto unitIt = meas->find("unit");
                const std::string unit =
                    unitIt != meas->end() && unitIt->is_string() ? unitIt->get<std::string>() : std::string();
                const double v = value.get<double>();
                if (name == "time") {
                    m.time.medianMs = recordedTimeMs(meas.child("value"), msPerUnit(unit));
                    timeField = meas.pointer() + "/value";
                    if (m.time.samples == 0)
                        m.time.minMs = m.time.maxMs = m.time.medianMs;
                } else if (name == "time_min") {
                    m.time.minMs = recordedTimeMs(meas.child("value"), msPerUnit(unit));
                } else if (name == "time_max") {
                    m.time.maxMs = recordedTimeMs(meas.child("value"), msPerUnit(unit));
                } else if (name == "time_stdev") {
                    m.time.stdevMs = recordedTimeMs(meas.child("value"), msPerUnit(unit));
                } else if (name == "samples") {
                    m.time.samples = static_cast<int>(meas.child("value").asIntegralIn(0, INT_MAX));
                } else {
                    if (name == objectiveName && name != "time") {
                        r.objective = v;
                        if (info.objectiveName.empty())
                            info.objectiveName = name;
                    } else {
                        m.metrics.push_back({name, v});
                    }
                }
            }
        }
        if (m.status == ResultStatus::Ok && m.time.samples == 0 && m.time.medianMs > 0)
            m.time.samples = 1;
        if (const auto it = entry.find("timestamp"); it != entry.end() && it->is_string())
            r.recordedAt = it->get<std::string>();
        if (const auto ext = node.member("tilescope"); ext && (*ext)->is_object())
            readResultExtension(*ext, r, &timeField);
        checkRecordedResult(r, {fileName, node.pointer(), timeField, configuration.pointer()});
        data.results.push_back(std::move(r));
    }
    return finishRecording(std::move(data));
}

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

} // namespace tilescope
