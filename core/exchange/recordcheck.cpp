#include "exchange/recordcheck.h"

#include "base/error.h"
#include "model/configjson.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace tilescope {

namespace {

std::string recordedMsText(double ms) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g ms", ms);
    return buf;
}

// Why a recorded time cannot be one ("" when it can be): the rule for every time of a result,
// Ok or not (a failed result records 0, no time).
std::string timeFault(double ms) {
    if (!std::isfinite(ms))
        return "is not a finite number";
    if (ms < 0)
        return "is negative";
    return {};
}

std::string knownStatusNames() {
    std::string names;
    for (const ResultStatus s : kAllStatuses)
        names += (names.empty() ? "" : ", ") + std::string(statusName(s));
    return names;
}

} // namespace

JsonReadOptions recordingJsonOptions() {
    JsonReadOptions options;
    options.rejectWideIntegers = true;
    return options;
}

ResultStatus recordedStatus(const JsonNode& node) {
    if (node->is_string())
        if (const auto status = parseStatus(node->get<std::string>()))
            return *status;
    node.fail("unknown status " + showJson(*node) + " (a result's status is one of " + knownStatusNames() +
              "); read as another, the result would be what it was not");
}

double recordedTimeMs(const JsonNode& node, double toMs) {
    if (!node->is_number())
        node.fail(std::string("expected a time (a number), got ") + describeJson(*node));
    const double ms = node->get<double>() * toMs;
    if (const std::string why = timeFault(ms); !why.empty())
        node.fail("the recorded time " + showJson(*node) + " " + why + (toMs != 1 ? " in ms" : "") +
                  ": no kernel takes a negative or infinite time, and such a time would rank first");
    return ms;
}

ConfigValue recordedParameterValue(const JsonNode& node) {
    if (node->is_number_unsigned() &&
        node->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        node.fail("the integer " + showJson(*node) +
                  " is out of range: a parameter value is a 64-bit signed integer (at most 9223372036854775807), "
                  "and read as a double it would be another value");
    return configValueFromJson(*node);
}

void checkRecordedResult(const ResultRecord& r, const RecordedPlace& place) {
    if (r.config.empty())
        throw InputError(place.file, place.config,
                         "the configuration names no parameter: a result must say which config it measured");
    const TimingStats& t = r.measurement.time;
    if (const std::string why = timeFault(t.medianMs); !why.empty())
        throw InputError(place.file, place.time,
                         "the recorded time " + recordedMsText(t.medianMs) + " " + why + " (" +
                             describeConfig(r.config) + "): no kernel takes a negative or infinite time");
    if (r.ok() && !isMeasurableTime(t.medianMs))
        throw InputError(place.file, place.time,
                         "an ok result with a time of " + recordedMsText(t.medianMs) + " (" + describeConfig(r.config) +
                             "): no kernel takes 0 ms or less, and such a time would rank first; a correct "
                             "result needs its measured time");
    const std::pair<const char*, double> others[] = {{"minimum", t.minMs},
                                                     {"maximum", t.maxMs},
                                                     {"stdev", t.stdevMs},
                                                     {"interval's low end", t.ciLowMs},
                                                     {"interval's high end", t.ciHighMs}};
    for (const auto& [name, ms] : others)
        if (const std::string why = timeFault(ms); !why.empty())
            throw InputError(place.file, place.entry,
                             std::string("its ") + name + " time " + recordedMsText(ms) + " " + why + " (" +
                                 describeConfig(r.config) + "): no kernel takes a negative or infinite time");
}

void checkRecordedSession(const SessionData& session, const std::string& file) {
    for (std::size_t i = 0; i < session.results.size(); ++i) {
        const ResultRecord& r = session.results[i];
        const std::string row =
            r.id > 0 ? "results row " + std::to_string(r.id)
                     : "session " + std::to_string(session.info.id) + ", result " + std::to_string(i + 1);
        checkRecordedResult(r, {file, row, row + ", column time_ms",
                                r.id > 0 ? "configs row of result " + std::to_string(r.id) + ", column config"
                                         : row + ", its configuration"});
    }
}

} // namespace tilescope
