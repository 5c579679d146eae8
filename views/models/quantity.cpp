#include "models/quantity.h"

#include "common/format.h"
#include "measure/metricnames.h"

#include <QLocale>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_set>

namespace tilescope::views {

namespace {

std::optional<double> metricValue(const ResultRecord& result, const std::string& name) {
    for (const Metric& metric : result.measurement.metrics) {
        if (metric.name == name)
            return metric.value;
    }
    return std::nullopt;
}

QString bytesText(std::int64_t bytes) {
    if (bytes >= 1024 && bytes % 1024 == 0)
        return QStringLiteral("%1 KiB").arg(bytes / 1024);
    return QStringLiteral("%1 B").arg(bytes);
}

// The first line of a failure message, short enough for a tooltip.
QString shortMessage(const std::string& message) {
    QString text = QString::fromStdString(message).section(QLatin1Char('\n'), 0, 0).trimmed();
    if (text.size() > 120)
        text = text.left(117) + QStringLiteral("…");
    return text;
}

} // namespace

std::optional<double> quantityValue(const ResultRecord& result, const Quantity& quantity) {
    // An analysed result (compiled, never run) has what compiling told, and no time or metrics.
    const bool analysed = result.ranksStatically();
    if (!result.ok() && !analysed)
        return std::nullopt;
    const auto& info = result.measurement.staticInfo;
    switch (quantity.kind) {
    case QuantityKind::LatencyUs:
        if (analysed)
            return std::nullopt;
        return result.measurement.time.medianMs * 1000.0;
    case QuantityKind::Objective:
        if (analysed)
            return std::nullopt;
        return result.objective;
    case QuantityKind::Registers:
        if (info && info->registers >= 0)
            return info->registers;
        return std::nullopt;
    case QuantityKind::SpillStores:
        if (info)
            return static_cast<double>(info->spillStores);
        return std::nullopt;
    case QuantityKind::TheoreticalOccupancy:
        return result.occupancy;
    case QuantityKind::AchievedOccupancy:
        return metricValue(result, kAchievedOccupancyMetric);
    case QuantityKind::LocalSectors: {
        // Either half alone still says the config touches local memory.
        const auto loads = metricValue(result, kLocalLoadSectorsMetric);
        const auto stores = metricValue(result, kLocalStoreSectorsMetric);
        if (!loads && !stores)
            return std::nullopt;
        return loads.value_or(0.0) + stores.value_or(0.0);
    }
    case QuantityKind::Metric:
        return metricValue(result, quantity.metric);
    case QuantityKind::LineSpills: {
        if (!quantity.byConfig)
            return std::nullopt;
        const auto it = quantity.byConfig->find(configJson(result.config));
        return it == quantity.byConfig->end() ? std::nullopt : std::optional<double>(it->second);
    }
    }
    return std::nullopt;
}

bool higherIsBetter(const Quantity& quantity) {
    switch (quantity.kind) {
    case QuantityKind::Objective:
    case QuantityKind::TheoreticalOccupancy:
    case QuantityKind::AchievedOccupancy:
        return true;
    case QuantityKind::Metric:
        return quantity.metricHigherIsBetter;
    case QuantityKind::LatencyUs:
    case QuantityKind::Registers:
    case QuantityKind::SpillStores:
    case QuantityKind::LocalSectors:
    case QuantityKind::LineSpills:
        return false;
    }
    return false;
}

QString quantityLabel(const Quantity& quantity, const std::string& objectiveName) {
    switch (quantity.kind) {
    case QuantityKind::LatencyUs:
        return QStringLiteral("latency (µs)");
    case QuantityKind::Objective:
        return objectiveName.empty() ? QStringLiteral("objective") : QString::fromStdString(objectiveName);
    case QuantityKind::Registers:
        return QStringLiteral("registers / thread");
    case QuantityKind::SpillStores:
        return QStringLiteral("spill stores (bytes / thread)");
    case QuantityKind::TheoreticalOccupancy:
        return QStringLiteral("theoretical occupancy (%)");
    case QuantityKind::AchievedOccupancy:
        return QStringLiteral("achieved occupancy (%)");
    case QuantityKind::LocalSectors:
        return QStringLiteral("local-memory sectors (ld + st)");
    case QuantityKind::Metric:
        return QString::fromStdString(metricLabel(quantity.metric));
    case QuantityKind::LineSpills:
        return QStringLiteral("spill instructions at %1").arg(QString::fromStdString(quantity.line));
    }
    return {};
}

QString formatNumber(double value) {
    if (!std::isfinite(value))
        return QStringLiteral("—");
    const double magnitude = std::abs(value);
    const QLocale locale = numberLocale();
    if (magnitude == 0.0)
        return QStringLiteral("0");
    if (magnitude >= 1000 || value == std::round(value))
        return locale.toString(value, 'f', 0);
    if (magnitude >= 100)
        return locale.toString(value, 'f', 1);
    if (magnitude >= 1)
        return locale.toString(value, 'f', 2);
    return locale.toString(value, 'g', 3);
}

QString formatQuantityValue(double value, const Quantity& quantity, const std::string& objectiveName) {
    const QString number = formatNumber(value);
    switch (quantity.kind) {
    case QuantityKind::LatencyUs:
        return number + QStringLiteral(" µs");
    case QuantityKind::Objective:
        return objectiveName.empty() ? number : number + QLatin1Char(' ') + QString::fromStdString(objectiveName);
    case QuantityKind::Registers:
        return number + QStringLiteral(" registers");
    case QuantityKind::SpillStores:
        return number + QStringLiteral(" B spilled");
    case QuantityKind::TheoreticalOccupancy:
    case QuantityKind::AchievedOccupancy:
        return number + QStringLiteral(" %");
    case QuantityKind::LocalSectors:
        return number + QStringLiteral(" sectors");
    case QuantityKind::Metric:
        return number;
    case QuantityKind::LineSpills:
        return number + QStringLiteral(" spill instructions");
    }
    return number;
}

QString valueText(const ConfigValue& value) {
    switch (value.kind()) {
    case ConfigValue::Kind::Int:
        return QString::number(value.asInt());
    case ConfigValue::Kind::Float: {
        // The shortest text that reads back to the same double, as the JSON file has it.
        char buffer[32];
        const auto end = std::to_chars(buffer, buffer + sizeof buffer, value.asNumber()).ptr;
        return QString::fromLatin1(buffer, static_cast<qsizetype>(end - buffer));
    }
    case ConfigValue::Kind::Bool:
        return value.asBool() ? QStringLiteral("true") : QStringLiteral("false");
    case ConfigValue::Kind::Text:
        return QString::fromStdString(value.text());
    case ConfigValue::Kind::Null:
    case ConfigValue::Kind::Compound:
        break;
    }
    return QString::fromStdString(value.json());
}

void sortValueTexts(QStringList& values) {
    std::stable_sort(values.begin(), values.end(), [](const QString& a, const QString& b) {
        bool aNumber = false;
        bool bNumber = false;
        const double x = a.toDouble(&aNumber);
        const double y = b.toDouble(&bNumber);
        if (aNumber && bNumber)
            return x < y;
        if (aNumber != bNumber)
            return aNumber;
        return a < b;
    });
}

const ConfigValue* ParameterLookup::find(const ConfigValues& config) {
    if (m_position < config.size()) {
        const auto& entry = config.entry(m_position);
        if (entry.first == m_name)
            return &entry.second;
    }
    for (std::size_t i = 0; i < config.size(); ++i) {
        const auto& entry = config.entry(i);
        if (entry.first == m_name) {
            m_position = i;
            return &entry.second;
        }
    }
    return nullptr;
}

int ValueIndex::indexOf(const ConfigValue& value) {
    if (value.isInt()) {
        const auto key = value.asInt();
        if (const auto it = m_ints.find(key); it != m_ints.end())
            return it->second;
        return m_ints.emplace(key, byText(valueText(value))).first->second;
    }
    std::string key = value.json();
    if (const auto it = m_others.find(key); it != m_others.end())
        return it->second;
    const int index = byText(valueText(value));
    m_others.emplace(std::move(key), index);
    return index;
}

int ValueIndex::byText(const QString& text) {
    const auto it = m_byText.constFind(text);
    if (it != m_byText.constEnd())
        return it.value();
    const int index = static_cast<int>(m_texts.size());
    m_byText.insert(text, index);
    m_texts.push_back(text);
    return index;
}

ResultSummary summarize(const std::vector<ResultRecord>& results, const std::vector<std::string>& parameterNames) {
    ResultSummary summary;
    summary.resultCount = results.size();
    std::vector<ParameterLookup> lookups;
    for (const std::string& name : parameterNames)
        lookups.emplace_back(name);
    std::vector<ValueIndex> values(parameterNames.size());
    std::vector<std::string> lastMetrics; // results mostly carry the same metrics in the same order
    std::unordered_set<std::string> metrics;
    for (const ResultRecord& result : results) {
        for (std::size_t p = 0; p < lookups.size(); ++p) {
            if (const ConfigValue* value = lookups[p].find(result.config))
                values[p].indexOf(*value);
        }
        if (!result.ok() && !result.ranksStatically())
            continue;
        if (result.ok())
            ++summary.okCount;
        else
            ++summary.analysedCount;
        summary.hasStaticInfo = summary.hasStaticInfo || result.measurement.staticInfo.has_value();
        summary.hasOccupancy = summary.hasOccupancy || result.occupancy.has_value();
        summary.hasObjective = summary.hasObjective || result.objective.has_value();
        const auto& resultMetrics = result.measurement.metrics;
        const bool sameAsLast = resultMetrics.size() == lastMetrics.size() &&
                                std::equal(resultMetrics.begin(), resultMetrics.end(), lastMetrics.begin(),
                                           [](const Metric& m, const std::string& name) { return m.name == name; });
        if (sameAsLast)
            continue;
        lastMetrics.clear();
        for (const Metric& metric : resultMetrics) {
            lastMetrics.push_back(metric.name);
            if (metrics.insert(metric.name).second)
                summary.metricNames.push_back(metric.name);
        }
    }
    summary.parameterValues.reserve(values.size());
    for (const ValueIndex& index : values) {
        QStringList texts = index.texts();
        sortValueTexts(texts);
        summary.parameterValues.push_back(std::move(texts));
    }
    return summary;
}

std::vector<Quantity> availableQuantities(const ResultSummary& summary, const std::string& objectiveName) {
    std::vector<Quantity> out;
    out.push_back({QuantityKind::LatencyUs, {}, false});
    if (!objectiveName.empty() || summary.hasObjective)
        out.push_back({QuantityKind::Objective, {}, false});
    if (summary.hasStaticInfo) {
        out.push_back({QuantityKind::Registers, {}, false});
        out.push_back({QuantityKind::SpillStores, {}, false});
    }
    if (summary.hasOccupancy)
        out.push_back({QuantityKind::TheoreticalOccupancy, {}, false});
    const auto& names = summary.metricNames;
    auto has = [&](const char* name) { return std::find(names.begin(), names.end(), name) != names.end(); };
    if (has(kAchievedOccupancyMetric))
        out.push_back({QuantityKind::AchievedOccupancy, {}, false});
    if (has(kLocalLoadSectorsMetric) || has(kLocalStoreSectorsMetric))
        out.push_back({QuantityKind::LocalSectors, {}, false});
    for (const std::string& name : names) {
        if (name == kAchievedOccupancyMetric || name == kLocalLoadSectorsMetric || name == kLocalStoreSectorsMetric)
            continue;
        // Percentages of peak are utilisations: more is better. Counts and durations: less is.
        const bool higher = name.find("pct_of_peak") != std::string::npos;
        out.push_back({QuantityKind::Metric, name, higher});
    }
    return out;
}

QString describeResult(const ResultRecord& result, const std::string& objectiveName) {
    QStringList lines;
    lines << QString::fromStdString(describeConfig(result.config));
    if (!result.ok()) {
        QString line =
            QStringLiteral("status: %1").arg(QString::fromStdString(std::string(statusName(result.status()))));
        const QString message = shortMessage(result.measurement.message);
        if (!message.isEmpty())
            line += QStringLiteral(" — ") + message;
        lines << line;
    } else {
        const TimingStats& time = result.measurement.time;
        QString line = QStringLiteral("latency %1 µs").arg(formatNumber(time.medianMs * 1000.0));
        if (time.samples > 1 && time.medianMs > 0)
            line += QStringLiteral(" (median of %1, σ %2 %)")
                        .arg(time.samples)
                        .arg(formatNumber(100.0 * time.stdevMs / time.medianMs));
        if (time.hasInterval())
            line += QStringLiteral(" · 95 % interval %1–%2 µs")
                        .arg(formatNumber(time.ciLowMs * 1000.0), formatNumber(time.ciHighMs * 1000.0));
        lines << line;
        if (result.objective)
            lines << formatQuantityValue(*result.objective, {QuantityKind::Objective, {}, false}, objectiveName);
    }
    if (const auto& info = result.measurement.staticInfo) {
        QString line = info->registers >= 0 ? QStringLiteral("%1 registers").arg(info->registers)
                                            : QStringLiteral("registers unknown");
        if (info->spills())
            line += QStringLiteral(" · spills %1 stored, %2 loaded")
                        .arg(bytesText(info->spillStores), bytesText(info->spillLoads));
        else
            line += QStringLiteral(" · no spills");
        if (info->stackFrame > 0)
            line += QStringLiteral(" · stack %1").arg(bytesText(info->stackFrame));
        const std::int64_t shared = info->sharedStatic + result.sharedDynamic.value_or(0);
        if (shared > 0)
            line += QStringLiteral(" · shared %1").arg(bytesText(shared));
        lines << line;
    }
    QStringList occupancy;
    if (result.occupancy)
        occupancy << QStringLiteral("%1 % theoretical").arg(formatNumber(*result.occupancy));
    if (const auto achieved = metricValue(result, kAchievedOccupancyMetric))
        occupancy << QStringLiteral("%1 % achieved").arg(formatNumber(*achieved));
    if (!occupancy.isEmpty())
        lines << QStringLiteral("occupancy ") + occupancy.join(QStringLiteral(", "));
    if (const auto sectors = quantityValue(result, {QuantityKind::LocalSectors, {}, false}); sectors && *sectors > 0)
        lines << QStringLiteral("local memory %1 sectors").arg(formatNumber(*sectors));
    return lines.join(QLatin1Char('\n'));
}

} // namespace tilescope::views
