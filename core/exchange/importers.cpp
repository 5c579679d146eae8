// Reading recordings: T4 results files, Kernel Tuner caches, Tilescope databases.

#include "exchange/exchange.h"
#include "exchange/jsontext.h"

#include "analysis/plausibility.h"
#include "base/error.h"
#include "base/sha256.h"
#include "model/configjson.h"
#include "store/resultstore.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

namespace tilescope {

using Json = nlohmann::ordered_json;

namespace {

using exchange::parseJson;

[[noreturn]] void fail(const std::string& file, const std::string& where, const std::string& message) {
    throw InputError(file, where, message);
}

const Json& require(const Json& object, const char* key, const std::string& file, const std::string& where) {
    const auto it = object.find(key);
    if (it == object.end())
        fail(file, where.empty() ? "/" : where, std::string("missing required field '") + key + "'");
    return *it;
}

double toMs(double value, const std::string& unit) {
    if (unit == "s" || unit == "seconds")
        return value * 1e3;
    if (unit == "us" || unit == "microseconds")
        return value * 1e-3;
    if (unit == "ns" || unit == "nanoseconds")
        return value * 1e-6;
    return value; // "ms", "miliseconds" (sic, Kernel Tuner), "" or anything else: Kernel Tuner writes ms
}

double numberOr(const Json& object, const char* key, double fallback) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

// A value as a message shows it: numbers as written, long strings cut, containers by their kind.
std::string shown(const Json& v) {
    if (v.is_array())
        return "an array";
    if (v.is_object())
        return "an object";
    std::string text = v.dump();
    if (text.size() > 40)
        text = text.substr(0, 37) + "...";
    return text;
}

// An integer within [lo, hi]: an integral number (1e3 and 1000.0 too), else the file's error,
// never a conversion out of range.
std::int64_t integerIn(const Json& v, std::int64_t lo, std::int64_t hi, const std::string& file,
                       const std::string& where) {
    std::optional<std::int64_t> value;
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (hi >= 0 && u <= static_cast<std::uint64_t>(hi))
            value = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
        value = v.get<std::int64_t>();
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        // [-2^63, 2^63): where the conversion is defined.
        if (std::trunc(d) == d && d >= -9223372036854775808.0 && d < 9223372036854775808.0)
            value = static_cast<std::int64_t>(d);
    }
    if (!value || *value < lo || *value > hi) {
        const std::string range = lo == INT64_MIN ? "a 64-bit integer"
                                  : hi == INT64_MAX
                                      ? "an integer of at least " + std::to_string(lo)
                                      : "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
        fail(file, where, "expected " + range + ", got " + shown(v));
    }
    return *value;
}

// The integer member `key` of `object` when it is there (and not null), checked as integerIn does.
std::optional<std::int64_t> integerMember(const Json& object, const char* key, std::int64_t lo, std::int64_t hi,
                                          const std::string& file, const std::string& where) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null())
        return std::nullopt;
    return integerIn(*it, lo, hi, file, where + "/" + key);
}

// Median, min, max, sample stdev of runtimes in ms.
TimingStats statsOf(const std::vector<double>& runtimes) {
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

std::vector<double> numbers(const Json& array) {
    std::vector<double> out;
    if (array.is_array())
        for (const auto& v : array)
            if (v.is_number())
                out.push_back(v.get<double>());
    return out;
}

// Session fields of Tilescope's T4 metadata ("metadata": {"tilescope": {...}}) at `where`.
void readSessionMetadata(const Json& meta, SessionInfo& info, const std::string& file, const std::string& where) {
    auto str = [&](const char* key, std::string& out) {
        if (const auto it = meta.find(key); it != meta.end() && it->is_string())
            out = it->get<std::string>();
    };
    str("kernel", info.kernel);
    str("problem_json", info.problemJson);
    str("problem_hash", info.problemHash);
    str("source_hash", info.sourceHash);
    str("backend", info.backend);
    str("strategy", info.strategy);
    str("budget", info.budget);
    str("device", info.deviceName);
    str("arch", info.arch);
    str("objective", info.objectiveName);
    str("started_at", info.startedAt);
    str("ended_at", info.endedAt);
    str("tool_version", info.toolVersion);
    if (const auto it = meta.find("seed"); it != meta.end() && it->is_number_unsigned())
        info.seed = it->get<std::uint64_t>();
    if (const auto v = integerMember(meta, "shape_index", 0, INT64_MAX, file, where))
        info.shapeIndex = *v;
    if (const auto it = meta.find("space_size"); it != meta.end() && it->is_number_unsigned())
        info.spaceSize = it->get<std::uint64_t>();
    if (const auto it = meta.find("shape"); it != meta.end() && it->is_object())
        for (auto d = it->begin(); d != it->end(); ++d)
            info.shape.emplace_back(d.key(),
                                    integerIn(d.value(), INT64_MIN, INT64_MAX, file, where + "/shape/" + d.key()));
    if (const auto it = meta.find("problem_size"); it != meta.end() && it->is_array())
        for (std::size_t i = 0; i < it->size(); ++i)
            info.problemSize.push_back(
                integerIn((*it)[i], INT64_MIN, INT64_MAX, file, where + "/problem_size/" + std::to_string(i)));
    if (const auto it = meta.find("parameters"); it != meta.end() && it->is_array())
        for (const auto& v : *it)
            if (v.is_string())
                info.parameters.push_back(v.get<std::string>());
    if (const auto it = meta.find("provenance"); it != meta.end() && it->is_object())
        info.provenanceJson = it->dump();
}

// Tilescope's per-result extension object of our own T4 files and caches, at `where`.
void readResultExtension(const Json& ext, ResultRecord& r, const std::string& file, const std::string& where) {
    Measurement& m = r.measurement;
    if (const auto it = ext.find("status"); it != ext.end() && it->is_string())
        if (const auto status = parseStatus(it->get<std::string>()))
            m.status = *status;
    if (const auto it = ext.find("message"); it != ext.end() && it->is_string())
        m.message = it->get<std::string>();
    if (const auto it = ext.find("log"); it != ext.end() && it->is_string())
        r.log = it->get<std::string>();
    if (const auto it = ext.find("space_index"); it != ext.end() && it->is_number_unsigned())
        r.spaceIndex = it->get<std::uint64_t>();
    if (const auto it = ext.find("time"); it != ext.end() && it->is_object()) {
        m.time.medianMs = numberOr(*it, "median_ms", m.time.medianMs);
        m.time.minMs = numberOr(*it, "min_ms", m.time.minMs);
        m.time.maxMs = numberOr(*it, "max_ms", m.time.maxMs);
        m.time.stdevMs = numberOr(*it, "stdev_ms", m.time.stdevMs);
        m.time.ciLowMs = numberOr(*it, "ci_low_ms", m.time.ciLowMs);
        m.time.ciHighMs = numberOr(*it, "ci_high_ms", m.time.ciHighMs);
        if (const auto v = integerMember(*it, "samples", 0, INT_MAX, file, where + "/time"))
            m.time.samples = static_cast<int>(*v);
    }
    m.compileSeconds = numberOr(ext, "compile_s", m.compileSeconds);
    m.benchmarkSeconds = numberOr(ext, "benchmark_s", m.benchmarkSeconds);
    if (const auto it = ext.find("verification_error"); it != ext.end() && it->is_number())
        m.verificationError = it->get<double>();
    if (const auto v = integerMember(ext, "device", -1, INT_MAX, file, where))
        m.device = static_cast<int>(*v);
    if (const auto it = ext.find("objective"); it != ext.end() && it->is_number())
        r.objective = it->get<double>();
    if (const auto v = integerMember(ext, "block_size", INT64_MIN, INT64_MAX, file, where))
        r.blockSize = *v;
    if (const auto v = integerMember(ext, "shared_dynamic", INT64_MIN, INT64_MAX, file, where))
        r.sharedDynamic = *v;
    if (const auto it = ext.find("occupancy"); it != ext.end() && it->is_number())
        r.occupancy = it->get<double>();
    if (const auto it = ext.find("static"); it != ext.end() && it->is_object()) {
        const std::string at = where + "/static";
        auto field = [&](const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
            return integerMember(*it, key, lo, hi, file, at).value_or(fallback);
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

ResultStatus statusOfInvalidity(const std::string& invalidity, double correctness) {
    if (invalidity == "compile")
        return ResultStatus::CompileError;
    if (invalidity == "runtime")
        return ResultStatus::LaunchError;
    if (invalidity == "timeout")
        return ResultStatus::Timeout;
    if (invalidity == "correctness")
        return ResultStatus::WrongResult;
    if (invalidity == "constraints")
        return ResultStatus::Pruned;
    return correctness > 0 ? ResultStatus::Ok : ResultStatus::WrongResult;
}

} // namespace

namespace {

// What every recording read goes through: messages without NUL or control bytes, and the times
// that cannot be right made implausible (analysis/plausibility.h), the session's message saying
// what was checked.
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

} // namespace

SessionData parseT4(const std::string& text, const std::string& fileName) {
    const Json doc = parseJson(text, fileName);
    if (!doc.is_object())
        fail(fileName, "/", "not a T4 results file: expected a JSON object with \"results\"");
    if (const auto it = doc.find("schema_version"); it != doc.end()) {
        if (!it->is_string() || it->get<std::string>() != "1.0.0")
            fail(fileName, "/schema_version",
                 "unknown T4 schema version " + it->dump() + " (this version reads T4 1.0.0)");
    }
    const Json& results = require(doc, "results", fileName, "");
    if (!results.is_array())
        fail(fileName, "/results", "expected an array of results");

    SessionData data;
    SessionInfo& info = data.info;
    info.state = SessionState::Imported;
    const Json* meta = nullptr;
    if (const auto m = doc.find("metadata"); m != doc.end() && m->is_object())
        if (const auto t = m->find("tilescope"); t != m->end() && t->is_object())
            meta = &*t;
    if (meta)
        readSessionMetadata(*meta, info, fileName, "/metadata/tilescope");

    std::size_t index = 0;
    for (const Json& entry : results) {
        const std::string where = "/results/" + std::to_string(index++);
        if (!entry.is_object())
            fail(fileName, where, "expected an object");
        const Json& configuration = require(entry, "configuration", fileName, where);
        const Json& times = require(entry, "times", fileName, where);
        const Json& invalidity = require(entry, "invalidity", fileName, where);
        const Json& correctness = require(entry, "correctness", fileName, where);
        if (!configuration.is_object())
            fail(fileName, where + "/configuration", "expected an object of parameter values");
        if (!times.is_object())
            fail(fileName, where + "/times", "expected an object");
        static const char* kInvalidity[] = {"timeout", "compile", "runtime", "correctness", "constraints", "correct"};
        if (!invalidity.is_string() || std::none_of(std::begin(kInvalidity), std::end(kInvalidity),
                                                    [&](const char* v) { return invalidity.get<std::string>() == v; }))
            fail(fileName, where + "/invalidity",
                 "expected one of timeout, compile, runtime, correctness, constraints, correct; found " +
                     invalidity.dump());
        if (!correctness.is_number())
            fail(fileName, where + "/correctness", "expected a number");

        ResultRecord r;
        r.config = configFromJson(configuration);
        if (info.parameters.empty())
            for (auto it = configuration.begin(); it != configuration.end(); ++it)
                info.parameters.push_back(it.key());
        Measurement& m = r.measurement;
        m.status = statusOfInvalidity(invalidity.get<std::string>(), correctness.get<double>());
        // Kernel Tuner writes "compilation"; the schema names "compilation_time". Both in ms.
        m.compileSeconds = numberOr(times, "compilation_time", numberOr(times, "compilation", 0)) / 1e3;
        const std::vector<double> runtimes = numbers(times.value("runtimes", Json::array()));
        m.benchmarkSeconds = numberOr(times, "benchmark", std::accumulate(runtimes.begin(), runtimes.end(), 0.0)) / 1e3;
        if (!runtimes.empty())
            m.time = statsOf(runtimes);

        std::string objectiveName = "time";
        if (const auto it = entry.find("objectives");
            it != entry.end() && it->is_array() && !it->empty() && (*it)[0].is_string())
            objectiveName = (*it)[0].get<std::string>();
        if (const auto it = entry.find("measurements"); it != entry.end() && it->is_array()) {
            std::size_t measIndex = 0;
            for (const Json& meas : *it) {
                const std::string measWhere = where + "/measurements/" + std::to_string(measIndex++);
                if (!meas.is_object() || !meas.contains("name") || !meas["name"].is_string())
                    continue;
                const std::string name = meas["name"].get<std::string>();
                const Json value = meas.value("value", Json());
                if (!value.is_number())
                    continue; // strings and arrays (Kernel Tuner's "times") carry nothing we keep
                const auto unitIt = meas.find("unit");
                const std::string unit =
                    unitIt != meas.end() && unitIt->is_string() ? unitIt->get<std::string>() : std::string();
                const double v = value.get<double>();
                if (name == "time") {
                    m.time.medianMs = toMs(v, unit);
                    if (m.time.samples == 0)
                        m.time.minMs = m.time.maxMs = m.time.medianMs;
                } else if (name == "time_min") {
                    m.time.minMs = toMs(v, unit);
                } else if (name == "time_max") {
                    m.time.maxMs = toMs(v, unit);
                } else if (name == "time_stdev") {
                    m.time.stdevMs = toMs(v, unit);
                } else if (name == "samples") {
                    m.time.samples = static_cast<int>(integerIn(value, 0, INT_MAX, fileName, measWhere + "/value"));
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
        if (const auto it = entry.find("tilescope"); it != entry.end() && it->is_object())
            readResultExtension(*it, r, fileName, where + "/tilescope");
        data.results.push_back(std::move(r));
    }
    return finishRecording(std::move(data));
}

SessionData parseKernelTunerCache(const std::string& text, const std::string& fileName) {
    Json doc;
    try {
        doc = parseJson(text, fileName);
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
            doc = parseJson(closed, fileName); // with the same limits
        } catch (const InputError&) {
            throw first;
        }
    }
    if (!doc.is_object())
        fail(fileName, "/", "not a Kernel Tuner cache: expected a JSON object");
    static const char* kVersions[] = {"1.0.0", "1.0.1", "1.1.0"};
    if (const auto it = doc.find("schema_version"); it != doc.end()) {
        if (!it->is_string() || std::none_of(std::begin(kVersions), std::end(kVersions),
                                             [&](const char* v) { return it->get<std::string>() == v; }))
            fail(fileName, "/schema_version",
                 "unknown Kernel Tuner cache schema version " + it->dump() +
                     " (this version reads 1.0.0, 1.0.1, 1.1.0 and unversioned caches)");
    }
    const bool versioned = doc.contains("schema_version");
    // Unversioned caches (before 1.0.0) may lack the objective; Kernel Tuner assumes time.
    const Json& device = require(doc, "device_name", fileName, "");
    const Json& kernel = require(doc, "kernel_name", fileName, "");
    const Json& keysJson = require(doc, "tune_params_keys", fileName, "");
    const Json& cache = require(doc, "cache", fileName, "");
    if (versioned) {
        require(doc, "problem_size", fileName, "");
        require(doc, "tune_params", fileName, "");
        require(doc, "objective", fileName, "");
    }
    if (!cache.is_object())
        fail(fileName, "/cache", "expected an object of entries");
    if (!keysJson.is_array())
        fail(fileName, "/tune_params_keys", "expected an array of parameter names");
    // A string; Kernel Tuner 1.x writes a list of objectives.
    std::string objective = "time";
    if (const auto it = doc.find("objective"); it != doc.end()) {
        if (it->is_string())
            objective = it->get<std::string>();
        else if (it->is_array() && !it->empty() && (*it)[0].is_string())
            objective = (*it)[0].get<std::string>();
    }

    SessionData data;
    SessionInfo& info = data.info;
    info.state = SessionState::Imported;
    // Tilescope's own caches carry the session (shape, problem, objective, ...) beside Kernel Tuner's fields.
    if (const auto it = doc.find("tilescope"); it != doc.end() && it->is_object()) {
        readSessionMetadata(*it, info, fileName, "/tilescope");
        info.parameters.clear();
        info.problemSize.clear();
    }
    info.kernel = kernel.is_string() ? kernel.get<std::string>() : "";
    info.deviceName = device.is_string() ? device.get<std::string>() : "";
    for (const auto& k : keysJson) {
        if (!k.is_string())
            fail(fileName, "/tune_params_keys", "expected parameter names (strings)");
        info.parameters.push_back(k.get<std::string>());
    }
    if (const auto it = doc.find("problem_size"); it != doc.end()) {
        if (it->is_array()) {
            for (std::size_t i = 0; i < it->size(); ++i)
                if ((*it)[i].is_number())
                    info.problemSize.push_back(
                        integerIn((*it)[i], INT64_MIN, INT64_MAX, fileName, "/problem_size/" + std::to_string(i)));
        } else if (it->is_number()) {
            info.problemSize.push_back(integerIn(*it, INT64_MIN, INT64_MAX, fileName, "/problem_size"));
        } else if (it->is_string()) { // 1.1.0 allows "4096x4096" and the like
            const std::string sizes = it->get<std::string>();
            for (std::size_t i = 0; i < sizes.size();) {
                if (!std::isdigit(static_cast<unsigned char>(sizes[i]))) {
                    ++i;
                    continue;
                }
                std::int64_t v = 0;
                const auto [end, ec] = std::from_chars(sizes.data() + i, sizes.data() + sizes.size(), v);
                if (ec != std::errc())
                    fail(fileName, "/problem_size",
                         "the size " + shown(Json(sizes)) + " holds a number too large for 64 bits");
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
    for (auto it = cache.begin(); it != cache.end(); ++it) {
        const std::string where = "/cache/" + it.key();
        const Json& entry = it.value();
        if (!entry.is_object())
            fail(fileName, where, "expected an object");
        ResultRecord r;
        for (const std::string& name : info.parameters) {
            const auto v = entry.find(name);
            if (v == entry.end())
                fail(fileName, where, "missing the value of parameter '" + name + "'");
            r.config[name] = configValueFromJson(*v);
        }
        Measurement& m = r.measurement;
        // Kernel Tuner 1.x marks a failed config with "__error__" and may leave out "time".
        const auto errorIt = entry.find("__error__");
        const bool marked = errorIt != entry.end() && errorIt->is_string();
        const Json& time = marked ? *errorIt : require(entry, "time", fileName, where);
        const std::vector<double> runtimes = numbers(entry.value("times", Json::array()));
        if (time.is_number()) {
            m.status = ResultStatus::Ok;
            if (!runtimes.empty())
                m.time = statsOf(runtimes);
            m.time.medianMs = time.get<double>(); // Kernel Tuner's time (the mean of its runs, in ms)
            if (runtimes.empty()) {
                m.time.minMs = m.time.maxMs = m.time.medianMs;
                m.time.samples = 1;
            }
        } else if (time.is_string()) {
            const std::string error = time.get<std::string>();
            if (error == "InvalidConfig") {
                m.status = ResultStatus::Pruned;
                m.message = "Kernel Tuner: InvalidConfig (violates a restriction or a device limit)";
            } else if (error == "CompilationFailedConfig") {
                m.status = ResultStatus::CompileError;
                m.message = "Kernel Tuner: CompilationFailedConfig";
            } else {
                m.status = ResultStatus::LaunchError;
                m.message = "Kernel Tuner: " + error;
            }
        } else {
            fail(fileName, where + "/time", "expected a number (ms) or an error name");
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
            m.metrics.push_back({name, f.value().get<double>()});
        }
        if (const auto ext = entry.find("tilescope"); ext != entry.end() && ext->is_object()) {
            m.message.clear(); // the exact message, if any, is in there
            readResultExtension(*ext, r, fileName, where + "/tilescope");
        }
        data.results.push_back(std::move(r));
    }
    return finishRecording(std::move(data));
}

std::string recordingFormatName(RecordingFormat format) {
    switch (format) {
    case RecordingFormat::TilescopeDatabase:
        return "Tilescope database";
    case RecordingFormat::T4:
        return "T4";
    case RecordingFormat::KernelTunerCache:
        return "Kernel Tuner cache";
    case RecordingFormat::BestConfigs:
        return "best-config JSON";
    case RecordingFormat::TuningProblem:
        return "tuning problem";
    case RecordingFormat::Unknown:
        break;
    }
    return "unknown";
}

namespace {

constexpr std::size_t kHeadBytes = std::size_t{1} << 20;

bool isProblem(const Json& doc) {
    return doc.contains("ConfigurationSpace") || doc.contains("KernelSpecification");
}

RecordingFormat formatOfJson(const Json& doc) {
    if (!doc.is_object())
        return RecordingFormat::Unknown;
    if (doc.contains("cache") && (doc.contains("tune_params_keys") || doc.contains("kernel_name")))
        return RecordingFormat::KernelTunerCache;
    if (doc.contains("results"))
        return RecordingFormat::T4;
    if (const auto it = doc.find("format"); it != doc.end() && *it == "tilescope-best-configs")
        return RecordingFormat::BestConfigs;
    if (isProblem(doc))
        return RecordingFormat::TuningProblem;
    return RecordingFormat::Unknown;
}

// The format of text that does not parse (a truncated or large file's head), so that a
// truncated recording is still recognised (and then reported as truncated by its parser, not as
// "unknown"). Kernel Tuner caches name their parameters' keys; T4 files carry "results" next to a
// "schema_version" or "metadata" (a Tilescope T4 holds the problem in its metadata, so the
// problem's own keys do not decide).
RecordingFormat sniff(std::string_view head) {
    auto has = [&](std::string_view key) { return head.find(key) != std::string_view::npos; };
    if (has("\"tune_params_keys\"") || (has("\"cache\"") && has("\"kernel_name\"")))
        return RecordingFormat::KernelTunerCache;
    const bool problemKeys = has("\"ConfigurationSpace\"") || has("\"KernelSpecification\"");
    if (has("\"results\"") && (!problemKeys || has("\"schema_version\"") || has("\"metadata\"")))
        return RecordingFormat::T4;
    if (has("tilescope-best-configs"))
        return RecordingFormat::BestConfigs;
    if (problemKeys)
        return RecordingFormat::TuningProblem;
    return RecordingFormat::Unknown;
}

RecordingFormat formatOfText(const std::string& text, const Json& doc) {
    return doc.is_discarded() ? sniff(std::string_view(text).substr(0, kHeadBytes)) : formatOfJson(doc);
}

} // namespace

bool isRecording(RecordingFormat format) {
    return format == RecordingFormat::TilescopeDatabase || format == RecordingFormat::T4 ||
           format == RecordingFormat::KernelTunerCache;
}

RecordingFormat detectRecordingFormat(const std::filesystem::path& path) {
    if (ResultStore::isDatabaseFile(path))
        return RecordingFormat::TilescopeDatabase;
    const std::string head = exchange::readText(path, kHeadBytes);
    return formatOfText(head, exchange::tryParseJson(head));
}

ResultStore openResults(const std::filesystem::path& path) {
    std::error_code ec;
    if (ResultStore::isDatabaseFile(path) || !std::filesystem::exists(path, ec))
        return ResultStore::open(path, StoreMode::ReadOnly); // which says what a missing database needs
    std::vector<SessionData> sessions = readRecording(path);
    ResultStore store = ResultStore::openInMemory();
    for (SessionData& session : sessions)
        importSession(store, std::move(session), path.string()); // named as the user gave it, as `import` does
    return store;
}

std::vector<SessionData> readRecording(const std::filesystem::path& path) {
    const std::string name = path.string();
    if (ResultStore::isDatabaseFile(path)) {
        const ResultStore store = ResultStore::open(path, StoreMode::ReadOnly);
        std::vector<SessionData> out;
        for (const SessionInfo& s : store.sessions())
            out.push_back(store.load(s.id));
        if (out.empty())
            throw InputError(name, "", "the database holds no sessions");
        return out;
    }
    const std::string text = exchange::readText(path);
    const Json doc = exchange::tryParseJson(text);
    const RecordingFormat format = formatOfText(text, doc);
    switch (format) {
    case RecordingFormat::T4:
        return {parseT4(text, name)};
    case RecordingFormat::KernelTunerCache:
        return {parseKernelTunerCache(text, name)};
    case RecordingFormat::BestConfigs:
        throw InputError(name, "",
                         "a best-config JSON holds only winners, not a recording; use a T4 file, a Kernel "
                         "Tuner cache or a Tilescope database");
    case RecordingFormat::TuningProblem:
        throw InputError(name, "",
                         "a tuning problem (T1), not a recording; recorded results are a T4 file, a Kernel Tuner "
                         "cache or a Tilescope database");
    case RecordingFormat::TilescopeDatabase:
    case RecordingFormat::Unknown:
        break;
    }
    if (doc.is_discarded())
        exchange::parseJson(text, name); // throws with the line and column
    throw InputError(name, "",
                     "not a recording: expected a T4 results file, a Kernel Tuner cache or a Tilescope "
                     "database");
}

std::int64_t importSession(ResultStore& store, SessionData data, const std::string& source) {
    SessionInfo info = data.info;
    info.state = SessionState::Imported;
    if (info.backend.empty() || info.backend.rfind("import:", 0) != 0)
        info.backend = "import:" + source + (info.backend.empty() ? "" : " (" + info.backend + ")");
    if (info.startedAt.empty())
        info.startedAt = nowIso8601();
    if (info.endedAt.empty())
        info.endedAt = nowIso8601();
    if (info.parameters.empty() && !data.results.empty())
        for (const auto& [name, value] : data.results.front().config)
            info.parameters.push_back(name);
    const std::int64_t id = store.createSession(info);
    store.appendMany(id, data.results);
    return id;
}

SessionData readSession(const std::filesystem::path& path, std::optional<std::int64_t> sessionId, std::string* note) {
    std::vector<SessionData> sessions = readRecording(path);
    const std::string name = path.filename().string();
    if (sessions.empty())
        throw InputError(name, "", "holds no sessions");
    if (sessionId) {
        std::string ids;
        for (SessionData& s : sessions) {
            if (s.info.id == *sessionId)
                return std::move(s);
            ids += (ids.empty() ? "" : ", ") + std::to_string(s.info.id);
        }
        throw InputError(name, "--session", "no session " + std::to_string(*sessionId) + " (sessions: " + ids + ")");
    }
    std::size_t pick = sessions.size() - 1;
    for (std::size_t i = sessions.size(); i-- > 0;) {
        if (std::any_of(sessions[i].results.begin(), sessions[i].results.end(),
                        [](const ResultRecord& r) { return r.ok(); })) {
            pick = i;
            break;
        }
    }
    if (note && sessions.size() > 1)
        *note = name + " holds " + std::to_string(sessions.size()) + " sessions; taking session " +
                std::to_string(sessions[pick].info.id) + ", the newest with results";
    return std::move(sessions[pick]);
}

std::string sessionFingerprint(const SessionData& session) {
    Sha256 h;
    const SessionInfo& info = session.info;
    for (const std::string& field : {info.kernel, info.shapeLabel(), info.deviceName, info.strategy})
        h.updateField(field);
    h.updateU64(info.seed);
    std::vector<std::string> lines;
    lines.reserve(session.results.size());
    for (const ResultRecord& r : session.results) {
        char time[64];
        std::snprintf(time, sizeof time, "%.9g|%d", r.measurement.time.medianMs, r.measurement.time.samples);
        lines.push_back(configKey(r.config) + "|" + std::string(statusName(r.status())) + "|" + time);
    }
    std::sort(lines.begin(), lines.end());
    h.updateU64(lines.size());
    for (const std::string& line : lines)
        h.updateField(line);
    return Sha256::hex(h.finish());
}

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
