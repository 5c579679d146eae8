#pragma once

// The quantities that plots show of a result (latency, the session's objective, registers,
// spills, occupancy, CUPTI metrics), with their labels, units and which direction is better, so
// that the heatmap, the scatter plot and their tooltips name and rank them the same way.

#include "model/records.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tilescope::views {

enum class QuantityKind : std::uint8_t {
    LatencyUs,            ///< the median kernel time in µs
    Objective,            ///< the session's objective (TFLOP/s, GB/s)
    Registers,            ///< registers per thread
    SpillStores,          ///< spill store bytes per thread
    TheoreticalOccupancy, ///< percent, from the occupancy calculator
    AchievedOccupancy,    ///< percent, CUPTI sm__warps_active.avg.pct_of_peak_sustained_active
    LocalSectors,         ///< CUPTI local load + store sectors (spill traffic)
    Metric,               ///< any other CUPTI metric, by name
    LineSpills,           ///< spill instructions at one source line (the Kernel Source panel counts them)
};

/// What a plot shows of a result.
struct Quantity {
    Quantity(QuantityKind kindOf = QuantityKind::LatencyUs, std::string metricName = {}, bool higher = false)
        : kind(kindOf)
        , metric(std::move(metricName))
        , metricHigherIsBetter(higher) {}

    QuantityKind kind = QuantityKind::LatencyUs;
    std::string metric;                ///< the CUPTI name, for QuantityKind::Metric
    bool metricHigherIsBetter = false; ///< an arbitrary metric's direction is not known: the caller says
    /// For QuantityKind::LineSpills: the line ("regs.cu:8") and each config's count there, by the
    /// config's compact JSON (configJson), immutable and shared with the threads that plot it.
    std::string line;
    std::shared_ptr<const std::unordered_map<std::string, double>> byConfig;

    bool operator==(const Quantity&) const = default;
};

/// The CUPTI metric names behind the achieved-occupancy and local-memory quantities.
inline constexpr const char* kAchievedOccupancyMetric = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr const char* kLocalLoadSectorsMetric = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum";
inline constexpr const char* kLocalStoreSectorsMetric = "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum";

/// The value of `quantity` for an Ok result, and the static ones (registers, spills, theoretical
/// occupancy, spills at a line) for an Analysed one (compiled, never run); nullopt for other
/// results and when the result does not carry it (no objective, no static info, metric not
/// collected).
std::optional<double> quantityValue(const ResultRecord& result, const Quantity& quantity);
/// Whether larger values are better (throughput, occupancy) or smaller ones (time, spills).
bool higherIsBetter(const Quantity& quantity);
/// For axes and legends, with the unit: "latency (µs)", "TFLOP/s", "registers / thread".
QString quantityLabel(const Quantity& quantity, const std::string& objectiveName);
/// A value of `quantity` for people: "123.4 µs", "45.6 TFLOP/s", "128 registers".
QString formatQuantityValue(double value, const Quantity& quantity, const std::string& objectiveName);
/// A number with as many decimals as its size needs: 0.0123, 1.23, 12.3, 123, 12,345.
QString formatNumber(double value);

/// What a set of results offers to plot, for the controls: the distinct values of each
/// parameter (sorted numerically where they are numbers, as display text) and which quantities
/// have data.
struct ResultSummary {
    std::vector<QStringList> parameterValues; ///< one list per parameter name given
    bool hasStaticInfo = false;
    bool hasOccupancy = false;
    bool hasObjective = false;
    std::vector<std::string> metricNames; ///< every metric seen, in first-seen order
    std::size_t okCount = 0;
    std::size_t analysedCount = 0; ///< compiled and analysed, never run (their static info counts above)
    std::size_t resultCount = 0;
};

ResultSummary summarize(const std::vector<ResultRecord>& results, const std::vector<std::string>& parameterNames);

/// The quantities worth offering for `summary`, in menu order: latency always, the objective
/// when the session has one, static info and occupancy when present, then the metrics (the two
/// named ones as their own kinds).
std::vector<Quantity> availableQuantities(const ResultSummary& summary, const std::string& objectiveName);

/// A config value as plots show it: 64, 0.5, true, abc (strings without quotes).
QString valueText(const ConfigValue& value);

/// Finds one parameter's value in configs fast: the configs of a session share their key
/// order, so the position where the last config had it is tried before a search.
class ParameterLookup {
public:
    explicit ParameterLookup(std::string name)
        : m_name(std::move(name)) {}
    /// The value, or null when the config lacks the parameter.
    const ConfigValue* find(const ConfigValues& config);

private:
    std::string m_name;
    std::size_t m_position = 0;
};

/// The distinct values of one parameter, numbered in the order first seen, merged by display
/// text (64 and 64.0 look alike, so they are one value). Integers, the common case, are keyed
/// without making any text.
class ValueIndex {
public:
    int indexOf(const ConfigValue& value);
    /// Display texts by index.
    const QStringList& texts() const { return m_texts; }

private:
    int byText(const QString& text);

    std::unordered_map<std::int64_t, int> m_ints;
    std::unordered_map<std::string, int> m_others;
    QHash<QString, int> m_byText;
    QStringList m_texts;
};
/// Sorts display values numerically where both are numbers (8 < 16 < 128), else as text, numbers first.
void sortValueTexts(QStringList& values);
/// The result's lines for a tooltip: its config, time, objective, registers, spills, occupancy.
QString describeResult(const ResultRecord& result, const std::string& objectiveName);

} // namespace tilescope::views
