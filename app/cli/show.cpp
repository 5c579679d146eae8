// tilescope-cli show: what a results database holds: its sessions, and a session's results,
// best first. Opens the database read-only, so it works while a tuner writes to it.

#include "cli.h"

#include "model/configjson.h"

#include "analysis/clocks.h"
#include "analysis/confidence.h"
#include "analysis/pareto.h"
#include "analysis/verificationsplit.h"
#include "base/error.h"
#include "exchange/recording.h"
#include "measure/metricnames.h"
#include "store/resultstore.h"
#include "tuner/sessionreport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>

namespace tilescope::cli {

namespace {

struct ShowOptions {
    std::string db;
    std::int64_t session = 0;
    std::size_t top = 0;
    bool json = false;
    std::string pareto; ///< "A,B": list the session's Pareto front of two quantities
    bool sessionsOnly = false;
    StaticRank rankBy = StaticRank::Occupancy;
    CLI::Option* sessionOption = nullptr;
    CLI::Option* topOption = nullptr;
};

using Json = nlohmann::ordered_json;

// Text output fits a terminal of this many columns: longer values are shortened in the middle
// (whole in --json), sentences wrap, and a table too wide goes on in blocks below.
constexpr std::size_t kWidth = 120;

// "2026-11-30T03:29:58.365Z" to the minute ("2026-11-30 03:29"), for a table that needs the room
// for paths; other text as it is (--sessions --json has the whole time).
std::string toTheMinute(const std::string& iso) {
    if (iso.size() >= 16 && iso[4] == '-' && iso[7] == '-' && iso[10] == 'T' && iso[13] == ':')
        return iso.substr(0, 10) + " " + iso.substr(11, 5);
    return iso;
}

// "  backend     " and the value after it, wrapped or shortened to kWidth.
std::string field(const char* label, const std::string& value, bool* elided) {
    char lead[32];
    std::snprintf(lead, sizeof lead, "  %-12s", label);
    return fitLines(lead, value, kWidth, elided);
}

// JSON has no NaN or infinity: those become null.
Json number(double v) {
    return std::isfinite(v) ? Json(v) : Json();
}

Json resultJson(const ResultRecord& r, std::size_t rank, const SessionInfo& session) {
    const Measurement& m = r.measurement;
    const bool timed = m.time.samples > 0 || m.time.medianMs > 0;
    Json out = Json::object();
    out["rank"] = rank;
    out["session"] = session.id;
    out["config"] = toJson(r.config);
    out["status"] = std::string(statusName(m.status));
    out["time_ms"] = timed ? number(m.time.medianMs) : Json();
    out["time_min_ms"] = timed ? number(m.time.minMs) : Json();
    out["time_max_ms"] = timed ? number(m.time.maxMs) : Json();
    out["time_stdev_ms"] = timed ? number(m.time.stdevMs) : Json();
    if (m.time.hasInterval())
        out["time_ci95_ms"] = Json::array({number(m.time.ciLowMs), number(m.time.ciHighMs)});
    out["samples"] = m.time.samples;
    if (!session.objectiveName.empty())
        out["objective"] =
            Json{{"name", session.objectiveName}, {"value", r.objective ? number(*r.objective) : Json()}};
    out["compile_s"] = number(m.compileSeconds);
    out["benchmark_s"] = number(m.benchmarkSeconds);
    if (m.staticInfo) {
        out["registers"] = m.staticInfo->registers;
        out["spill_stores"] = m.staticInfo->spillStores;
        out["spill_loads"] = m.staticInfo->spillLoads;
        out["stack_frame"] = m.staticInfo->stackFrame;
        out["shared_static"] = m.staticInfo->sharedStatic;
    }
    if (r.blockSize)
        out["block_size"] = *r.blockSize;
    if (r.occupancy)
        out["occupancy"] = number(*r.occupancy);
    if (m.verificationError)
        out["verification_error"] = number(*m.verificationError);
    if (!m.metrics.empty()) {
        Json metrics = Json::object();
        for (const Metric& metric : m.metrics)
            metrics[metric.name] = number(metric.value);
        out["metrics"] = metrics;
    }
    if (r.spaceIndex)
        out["space_index"] = *r.spaceIndex;
    if (!m.message.empty())
        out["message"] = m.message;
    out["recorded_at"] = r.recordedAt;
    return out;
}

Json sessionJson(const SessionInfo& s, std::size_t results) {
    Json out = Json::object();
    out["id"] = s.id;
    out["kernel"] = s.kernel;
    out["shape"] = s.shapeLabel();
    out["parameters"] = s.parameters;
    out["backend"] = s.backend;
    out["strategy"] = s.strategy;
    out["seed"] = s.seed;
    out["budget"] = s.budget;
    out["device"] = s.deviceName;
    out["arch"] = s.arch;
    out["objective"] = s.objectiveName;
    out["state"] = std::string(sessionStateName(s.state));
    out["message"] = s.message;
    out["results"] = results;
    out["started_at"] = s.startedAt;
    out["ended_at"] = s.endedAt;
    out["provenance"] = Json::parse(s.provenanceJson.empty() ? std::string("{}") : s.provenanceJson, nullptr, false);
    if (out["provenance"].is_discarded())
        out["provenance"] = s.provenanceJson;
    return out;
}

/// One quantity of `--pareto`: its name, direction and how to read it from a result.
struct ParetoAxis {
    std::string name;
    bool higherIsBetter = false;
    std::function<std::optional<double>(const ResultRecord&)> value;
};

/// "time", the session's objective (its name, or "objective"), "registers", "occupancy", or a
/// metric by name; ":max" or ":min" after a name sets its direction (default: lower is better,
/// higher for the objective and occupancy). Throws InputError naming what the session has.
ParetoAxis paretoAxis(std::string text, const SessionInfo& session, const std::vector<ResultRecord>& ok,
                      const std::string& db) {
    ParetoAxis axis;
    std::optional<bool> direction;
    for (const auto& [suffix, higher] : {std::pair{":max", true}, std::pair{":min", false}}) {
        const std::string s(suffix);
        if (text.size() > s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0) {
            direction = higher;
            text.resize(text.size() - s.size());
        }
    }
    axis.name = text;
    if (text == "time") {
        axis.value = [](const ResultRecord& r) -> std::optional<double> { return r.measurement.time.medianMs; };
    } else if (text == "objective" || (!session.objectiveName.empty() && text == session.objectiveName)) {
        axis.higherIsBetter = true;
        axis.value = [](const ResultRecord& r) { return r.objective; };
    } else if (text == "registers") {
        axis.value = [](const ResultRecord& r) -> std::optional<double> {
            if (r.measurement.staticInfo && r.measurement.staticInfo->registers >= 0)
                return r.measurement.staticInfo->registers;
            return std::nullopt;
        };
    } else if (text == "occupancy") {
        axis.higherIsBetter = true;
        axis.value = [](const ResultRecord& r) { return r.occupancy; };
    } else {
        axis.value = [text](const ResultRecord& r) -> std::optional<double> {
            for (const Metric& m : r.measurement.metrics)
                if (m.name == text)
                    return m.value;
            return std::nullopt;
        };
    }
    if (direction)
        axis.higherIsBetter = *direction;
    const bool any =
        std::any_of(ok.begin(), ok.end(), [&](const ResultRecord& r) { return axis.value(r).has_value(); });
    if (!any) {
        std::vector<std::string> names{"time"};
        if (!session.objectiveName.empty())
            names.push_back(session.objectiveName);
        if (std::any_of(ok.begin(), ok.end(),
                        [](const ResultRecord& r) { return r.measurement.staticInfo.has_value(); }))
            names.push_back("registers");
        if (std::any_of(ok.begin(), ok.end(), [](const ResultRecord& r) { return r.occupancy.has_value(); }))
            names.push_back("occupancy");
        for (const ResultRecord& r : ok)
            for (const Metric& m : r.measurement.metrics)
                if (std::find(names.begin(), names.end(), m.name) == names.end())
                    names.push_back(m.name);
        std::string list;
        for (const std::string& n : names)
            list += (list.empty() ? "" : ", ") + n;
        throw InputError(db, "--pareto",
                         "no measured result of session " + std::to_string(session.id) + " has '" + text +
                             "' (it has: " + list + ")");
    }
    return axis;
}

/// `show --pareto A,B`: the configs no other measured config beats on both.
int showPareto(const ShowOptions& opt, const ResultStore& store, const SessionInfo& session) {
    const std::size_t comma = opt.pareto.find(',');
    if (comma == std::string::npos || opt.pareto.find(',', comma + 1) != std::string::npos)
        throw InputError(opt.db, "--pareto",
                         "give two quantities separated by a comma, e.g. time,energy (got '" + opt.pareto + "')");
    std::vector<ResultRecord> ok;
    for (ResultRecord& r : store.results(session.id))
        if (r.ok())
            ok.push_back(std::move(r));
    const ParetoAxis a = paretoAxis(opt.pareto.substr(0, comma), session, ok, opt.db);
    const ParetoAxis b = paretoAxis(opt.pareto.substr(comma + 1), session, ok, opt.db);
    std::vector<std::array<double, 2>> points;
    for (const ResultRecord& r : ok)
        points.push_back({a.value(r).value_or(std::nan("")), b.value(r).value_or(std::nan(""))});
    const std::vector<std::size_t> front = paretoFront(points, {a.higherIsBetter, b.higherIsBetter});
    if (opt.json) {
        Json list = Json::array();
        for (std::size_t k = 0; k < front.size(); ++k) {
            Json j = resultJson(ok[front[k]], k + 1, session);
            j["pareto"] = Json{{a.name, number(points[front[k]][0])}, {b.name, number(points[front[k]][1])}};
            list.push_back(std::move(j));
        }
        std::cout << list.dump(2) << "\n";
        return kOk;
    }
    std::vector<std::string> parameters;
    for (const auto& [name, value] : ok.empty() ? ConfigValues() : ok.front().config)
        parameters.push_back(name);
    std::vector<std::string> headers{"#"};
    std::vector<bool> right{true};
    for (const std::string& p : parameters) {
        headers.push_back(p);
        right.push_back(true);
    }
    headers.push_back(a.name + (a.higherIsBetter ? " (max)" : " (min)"));
    headers.push_back(b.name + (b.higherIsBetter ? " (max)" : " (min)"));
    right.insert(right.end(), {true, true});
    TextTable table(headers, right);
    for (std::size_t c = 1; c <= parameters.size(); ++c)
        table.setElidable(c, 8);
    for (std::size_t k = 0; k < front.size(); ++k) {
        const ResultRecord& r = ok[front[k]];
        std::vector<std::string> row{std::to_string(k + 1)};
        for (const std::string& p : parameters) {
            const ConfigValue* v = r.config.find(p);
            row.push_back(v ? v->plain() : "");
        }
        row.push_back(formatDouble("%.4g", points[front[k]][0]));
        row.push_back(formatDouble("%.4g", points[front[k]][1]));
        table.addRow(row);
    }
    bool elided = false;
    std::printf("%s", fitLines("",
                               "Session " + std::to_string(session.id) + ": the Pareto front of " + a.name + " and " +
                                   b.name + ", " + std::to_string(front.size()) + " of " + std::to_string(ok.size()) +
                                   " measured configs (no other config is as good on both and better on one)",
                               kWidth, &elided)
                          .c_str());
    std::printf("%s", table.renderFitting(kWidth, 2, 1, &elided).c_str());
    if (elided)
        std::printf("\nnote: %s marks values shortened to fit %zu columns; --json prints them whole\n",
                    std::string(kElision).c_str(), kWidth);
    return kOk;
}

// The sessions as a table, the lines too wide shortened or wrapped.
std::string sessionsTable(const ResultStore& store, const std::vector<SessionInfo>& sessions, bool* elided) {
    TextTable table({"id", "kernel", "shape", "backend", "strategy", "seed", "state", "results", "started (UTC)"},
                    {true, false, false, false, false, true, false, true, false});
    table.setElidable(1, 12); // kernel
    table.setElidable(2, 16); // shape
    table.setElidable(3, 16); // backend: a recording's absolute path
    for (const SessionInfo& s : sessions)
        table.addRow({std::to_string(s.id), s.kernel, s.shapeLabel(), s.backend, s.strategy,
                      s.strategy.empty() ? "" : std::to_string(s.seed), std::string(sessionStateName(s.state)),
                      formatCount(double(store.resultCount(s.id))), toTheMinute(s.startedAt)});
    return "Sessions (" + std::to_string(sessions.size()) + ")\n" + table.renderFitting(kWidth, 2, 1, elided);
}

void noteElided(bool elided) {
    if (elided)
        std::printf("\nnote: %s marks values shortened to fit %zu columns; --json prints them whole (with "
                    "--sessions, the sessions')\n",
                    std::string(kElision).c_str(), kWidth);
}

// The session --session names, else the newest.
const SessionInfo& chosenSession(const ShowOptions& opt, const std::vector<SessionInfo>& sessions) {
    if (opt.sessionOption->count() == 0)
        return sessions.back();
    for (const SessionInfo& s : sessions)
        if (s.id == opt.session)
            return s;
    std::string ids;
    for (const SessionInfo& s : sessions)
        ids += (ids.empty() ? "" : ", ") + std::to_string(s.id);
    throw InputError(opt.db, "--session", "no session " + std::to_string(opt.session) + " (sessions: " + ids + ")");
}

// Why configs that ran are not ranked: times that cannot be right, outputs that differ.
void printWhyNotRanked(const ResultStore& store, const SessionInfo& s, bool* elided) {
    std::vector<ResultRecord> all = store.results(s.id);
    std::vector<const ResultRecord*> implausible;
    for (const ResultRecord& r : all)
        if (r.status() == ResultStatus::Implausible)
            implausible.push_back(&r);
    std::stable_sort(implausible.begin(), implausible.end(),
                     [](const ResultRecord* a, const ResultRecord* b) { return a->timeMs() < b->timeMs(); });
    if (!implausible.empty())
        std::printf("%s",
                    field("implausible",
                          formatCount(double(implausible.size())) + (implausible.size() == 1 ? " config" : " configs") +
                              " never rank: their times cannot be right" +
                              (implausible.size() > 3 ? " (the fastest 3)" : ""),
                          elided)
                        .c_str());
    for (std::size_t i = 0; i < implausible.size() && i < 3; ++i)
        std::printf("%s", fitLines("    ",
                                   describeConfig(implausible[i]->config) + ": " + implausible[i]->measurement.message,
                                   kWidth, elided)
                              .c_str());
    // Older sessions recorded no verdict of their own: one from their results.
    if (recordedVerdict(s.provenanceJson, "verification").empty())
        if (const std::string verdict = describeVerification(all, verificationSplits(all)); !verdict.empty())
            std::printf("%s", field("verify", verdict, elided).c_str());
}

// The session's heading: what ran, where, how it went, what its results are.
void printSessionFields(const ResultStore& store, const SessionInfo& s, bool* elided) {
    std::printf("%s",
                fitLines("",
                         "Session " + std::to_string(s.id) + "  " +
                             (s.kernel.empty() ? std::string("(kernel unknown)") : s.kernel) + "  " + s.shapeLabel(),
                         kWidth, elided)
                    .c_str());
    std::printf("%s", field("backend", s.backend, elided).c_str());
    if (!s.strategy.empty())
        std::printf("%s", field("strategy",
                                s.strategy + ", seed " + std::to_string(s.seed) +
                                    ", budget: " + (s.budget.empty() ? std::string("the whole space") : s.budget),
                                elided)
                              .c_str());
    if (!s.deviceName.empty() || !s.arch.empty())
        std::printf("%s", field("device",
                                (s.deviceName.empty() ? std::string("unknown") : s.deviceName) +
                                    (s.arch.empty() ? "" : " (" + s.arch + ")"),
                                elided)
                              .c_str());
    std::printf(
        "%s",
        field("state", std::string(sessionStateName(s.state)) + (s.message.empty() ? "" : ": " + s.message), elided)
            .c_str());
    if (const std::string state = measuredStateSentence(s.provenanceJson); !state.empty())
        std::printf("%s", field("gpu state", state, elided).c_str());
    if (const std::string context = measurementContext(s.provenanceJson); !context.empty())
        std::printf("%s", field("context", context, elided).c_str());
    if (const std::string from = provenanceSentence(s); !from.empty())
        std::printf("%s", field("provenance", from, elided).c_str());
    const StatusCounts counts = store.statusCounts(s.id);
    std::printf(
        "%s",
        field("results", formatCount(double(store.resultCount(s.id))) + ": " + statusSummary(counts), elided).c_str());
    if (counts.of(ResultStatus::Implausible) > 0 || counts.of(ResultStatus::WrongResult) > 0)
        printWhyNotRanked(store, s, elided);
    // The session's own verdict (it may have verified configs again within groups, and so left none wrong).
    if (const std::string verdict = recordedVerdict(s.provenanceJson, "verification"); !verdict.empty())
        std::printf("%s", field("verify", verdict, elided).c_str());
    if (const std::string inputs = recordedVerdict(s.provenanceJson, "second_inputs"); !inputs.empty())
        std::printf("%s", field("inputs", inputs, elided).c_str());
}

// The columns of a listing of results: those the results fill.
struct ResultColumns {
    std::vector<std::string> headers{"rank"};
    std::vector<bool> right{true};
    bool anyTimed = false;
    bool withIntervals = false;           // the best has a 95 % interval of its median
    std::vector<std::size_t> intervalOf;  // per result: its interval's index (SIZE_MAX: none)
    std::vector<bool> tied;               // per interval: overlaps the best's
    std::vector<std::string> metricNames; // one column each

    void add(const std::string& header, bool rightAligned = true) {
        headers.push_back(header);
        right.push_back(rightAligned);
    }
};

// Energy's and power's intervals and the counter's period go in their metric's cell, or in --json.
bool inItsOwnCell(const std::string& name) {
    return name == kEnergyLowMetric || name == kEnergyHighMetric || name == kPowerLowMetric ||
           name == kPowerHighMetric || name == kEnergyCounterMetric;
}

ResultColumns resultColumns(const std::vector<ResultRecord>& results, const SessionInfo& s) {
    ResultColumns c;
    for (const std::string& p : s.parameters)
        c.add(p);
    // Results analysed, never timed (the analysis backend's), have no time or objective: a listing
    // of them alone leaves those columns out, for what compiling told.
    c.anyTimed = std::any_of(results.begin(), results.end(), [](const ResultRecord& r) {
        return r.measurement.time.samples > 0 || r.measurement.time.medianMs > 0 || r.objective;
    });
    c.add("status", false);
    if (c.anyTimed)
        for (const char* h : {"time_ms", "stdev_ms"})
            c.add(h);
    // The median's 95 % interval where the results have one, and which configs it cannot tell
    // from the best (their intervals overlap the best's).
    std::vector<MedianInterval> intervals;
    c.intervalOf.assign(results.size(), SIZE_MAX);
    for (std::size_t i = 0; i < results.size(); ++i) {
        const auto interval = medianIntervalOf(results[i].measurement.time);
        if (results[i].ok() && interval) {
            c.intervalOf[i] = intervals.size();
            intervals.push_back(*interval);
        }
    }
    c.tied.assign(intervals.size(), false);
    c.withIntervals = !intervals.empty() && c.intervalOf[0] == 0;
    if (c.withIntervals) {
        for (const std::size_t k : indistinguishableFromBest(intervals))
            c.tied[k] = true;
        for (const char* h : {"95 % interval", "~best"})
            c.add(h);
    }
    if (!s.objectiveName.empty() && c.anyTimed)
        c.add(s.objectiveName);
    for (const char* h : {"regs", "spill B", "occupancy"})
        c.add(h);
    // Metrics, one column per metric any listed result has, in the order first seen.
    for (const ResultRecord& r : results)
        for (const Metric& metric : r.measurement.metrics)
            if (!inItsOwnCell(metric.name) &&
                std::find(c.metricNames.begin(), c.metricNames.end(), metric.name) == c.metricNames.end())
                c.metricNames.push_back(metric.name);
    for (const std::string& name : c.metricNames) {
        const bool withInterval = name == kEnergyMetric || name == kPowerMetric;
        c.add(metricLabel(name) + (withInterval ? " (95 %)" : ""));
    }
    return c;
}

// A metric's cell: its value, energy and power with their interval.
std::string metricCell(const Measurement& m, const std::string& name) {
    const auto valueOf = [&](const std::string& wanted) -> std::optional<double> {
        const auto it = std::find_if(m.metrics.begin(), m.metrics.end(),
                                     [&](const Metric& metric) { return metric.name == wanted; });
        return it == m.metrics.end() ? std::nullopt : std::optional<double>(it->value);
    };
    const std::optional<double> value = valueOf(name);
    std::string cell = value ? formatDouble("%.4g", *value) : "";
    const bool energy = name == kEnergyMetric, power = name == kPowerMetric;
    if (value && (energy || power)) {
        const auto low = valueOf(energy ? kEnergyLowMetric : kPowerLowMetric);
        const auto high = valueOf(energy ? kEnergyHighMetric : kPowerHighMetric);
        if (low && high)
            cell += " (" + formatDouble("%.4g", *low) + "-" + formatDouble("%.4g", *high) + ")";
    }
    return cell;
}

// Result `i` (ranked i + 1) as a row of `c`'s columns.
std::vector<std::string> resultRow(const ResultRecord& r, std::size_t i, const SessionInfo& s, const ResultColumns& c) {
    const Measurement& m = r.measurement;
    const bool timed = m.time.samples > 0 || m.time.medianMs > 0;
    std::vector<std::string> row{std::to_string(i + 1)};
    for (const std::string& p : s.parameters) {
        const ConfigValue* it = r.config.find(p);
        row.push_back(!it ? "" : it->plain());
    }
    row.push_back(std::string(statusName(m.status)));
    if (c.anyTimed) {
        row.push_back(timed ? formatDouble("%.4g", m.time.medianMs) : "");
        row.push_back(timed && m.time.samples > 1 ? formatDouble("%.2g", m.time.stdevMs) : "");
    }
    if (c.withIntervals) {
        const bool has = c.intervalOf[i] != SIZE_MAX;
        row.push_back(has ? formatDouble("%.4g", m.time.ciLowMs) + "-" + formatDouble("%.4g", m.time.ciHighMs) : "");
        row.push_back(has && i > 0 && c.tied[c.intervalOf[i]] ? "yes" : "");
    }
    if (!s.objectiveName.empty() && c.anyTimed)
        row.push_back(r.objective ? formatDouble("%.2f", *r.objective) : "");
    row.push_back(m.staticInfo && m.staticInfo->registers >= 0 ? std::to_string(m.staticInfo->registers) : "");
    row.push_back(m.staticInfo && m.staticInfo->spills()
                      ? std::to_string(m.staticInfo->spillStores) + "/" + std::to_string(m.staticInfo->spillLoads)
                      : (m.staticInfo ? "0" : ""));
    row.push_back(r.occupancy ? formatDouble("%.0f %%", *r.occupancy) : "");
    for (const std::string& name : c.metricNames)
        row.push_back(metricCell(m, name));
    return row;
}

// The results listed, best first, and what their intervals tell apart.
void printResults(const ShowOptions& opt, const ResultStore& store, const SessionInfo& s,
                  const std::vector<ResultRecord>& results, bool* elided) {
    const ResultColumns c = resultColumns(results, s);
    TextTable table(c.headers, c.right);
    for (std::size_t column = 1; column <= s.parameters.size(); ++column)
        table.setElidable(column, 8); // a long value (a list, a string) of a parameter
    for (std::size_t i = 0; i < results.size(); ++i)
        table.addRow(resultRow(results[i], i, s, c));
    const bool analysed =
        std::any_of(results.begin(), results.end(), [](const ResultRecord& r) { return r.ranksStatically(); });
    std::printf("\nTop %zu of %s, best first%s\n%s", results.size(),
                formatCount(double(store.resultCount(s.id))).c_str(),
                analysed ? (" (analysed, not timed: by " + std::string(staticRankName(opt.rankBy)) + ")").c_str() : "",
                table.renderFitting(kWidth, 2, 1, elided).c_str());
    if (c.withIntervals) {
        const std::size_t others = static_cast<std::size_t>(std::count(c.tied.begin(), c.tied.end(), true)) - 1;
        std::printf("\n%s", fitLines("",
                                     others == 0 ? "No other listed config overlaps the best's 95 % interval: the "
                                                   "winner is told apart from them"
                                                 : std::to_string(others) + (others == 1 ? " config" : " configs") +
                                                       " listed cannot be told apart from the best (~best: their 95 "
                                                       "% intervals overlap its interval)",
                                     kWidth)
                                .c_str());
    }
    // Counters go to the configs that rank when measured: say what a blank metric cell means.
    const auto unprofiled = std::count_if(results.begin(), results.end(), [](const ResultRecord& r) {
        return r.measurement.status == ResultStatus::Ok && r.measurement.metrics.empty();
    });
    if (!c.metricNames.empty() && unprofiled > 0)
        std::printf("\n%s", fitLines("note: ",
                                     std::to_string(unprofiled) + (unprofiled == 1 ? " config" : " configs") +
                                         " listed without counters: counters go to the best five configs, and to "
                                         "the leaders of a search once 20 configs have a time (tune --metrics "
                                         "default,all-configs for every config's)",
                                     kWidth)
                                .c_str());
}

int runShow(const ShowOptions& opt) {
    const ResultStore store = openResults(opt.db);
    const std::vector<SessionInfo> sessions = store.sessions();
    if (sessions.empty()) {
        if (opt.json)
            std::cout << "[]\n";
        else
            std::printf("%s", fitLines("", opt.db + " holds no sessions yet", kWidth).c_str());
        return kOk;
    }
    bool elided = false;
    if (opt.sessionsOnly) {
        if (opt.json) {
            Json list = Json::array();
            for (const SessionInfo& s : sessions)
                list.push_back(sessionJson(s, store.resultCount(s.id)));
            std::cout << list.dump(2) << "\n";
            return kOk;
        }
        std::printf("%s", sessionsTable(store, sessions, &elided).c_str());
        noteElided(elided);
        return kOk;
    }
    const SessionInfo& chosen = chosenSession(opt, sessions);
    if (!opt.pareto.empty())
        return showPareto(opt, store, chosen);
    const std::size_t top = opt.topOption->count() > 0 ? opt.top : (opt.json ? 0 : 10);
    const std::vector<ResultRecord> results = store.results(chosen.id, true, top, opt.rankBy);
    if (opt.json) {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < results.size(); ++i)
            list.push_back(resultJson(results[i], i + 1, chosen));
        std::cout << list.dump(2) << "\n";
        return kOk;
    }
    if (sessions.size() > 1 || opt.sessionOption->count() == 0)
        std::printf("%s\n", sessionsTable(store, sessions, &elided).c_str());
    printSessionFields(store, chosen, &elided);
    if (!results.empty())
        printResults(opt, store, chosen, results, &elided);
    noteElided(elided);
    return kOk;
}

} // namespace

void registerShow(CLI::App& app) {
    auto opt = std::make_shared<ShowOptions>();
    CLI::App* cmd = app.add_subcommand("show", "Show a results database: its sessions and a session's results, best "
                                               "first (read-only; works while a tuner writes)");
    readsFile(cmd->add_option("db", opt->db,
                              "Recorded results: a results database (tilescope-cli tune ... --db FILE, or import), a "
                              "T4 file or a Kernel Tuner cache (gzip-compressed or not)"))
        ->required();
    opt->sessionOption = cmd->add_option("--session", opt->session, "Which session (default: the newest)")
                             ->check(wholeNumber(1, std::numeric_limits<std::int64_t>::max()));
    opt->topOption = cmd->add_option("--top", opt->top, "How many results, best first (default: 10; with --json all)")
                         ->check(wholeNumber(1, kAny));
    cmd->add_flag("--json", opt->json,
                  "Print a JSON list of results, best first, each with config (name -> value), status, time_ms "
                  "and more (the text output fits 120 columns, shortening long values in the middle; here they "
                  "are whole)");
    CLI::Option* sessions = cmd->add_flag("--sessions", opt->sessionsOnly,
                                          "List the sessions only; with --json, each with its whole backend, state "
                                          "and message, provenance and more");
    sessions->excludes(opt->sessionOption)->excludes(opt->topOption);
    addRankByOption(cmd, opt->rankBy, "their order");
    sessions->excludes(
        cmd->add_option("--pareto", opt->pareto,
                        "A,B: the configs no other measured config beats on both quantities, e.g. time,energy or "
                        "time,TFLOP/s: time (ms), the session's objective (its name, or objective), registers, "
                        "occupancy, or a metric by name; NAME:max or NAME:min sets a direction (default: lower is "
                        "better, higher for the objective and occupancy)"));
    setAction(cmd, [opt] { return runShow(*opt); });
}

} // namespace tilescope::cli
