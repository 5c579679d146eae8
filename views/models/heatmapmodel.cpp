#include "models/heatmapmodel.h"

#include "analysis/confidence.h"

#include <QHash>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <unordered_map>
#include <utility>

namespace tilescope::views {

namespace {

// One fixed parameter of the filter.
struct FixedValue {
    ParameterLookup lookup;
    QString text;
    ValueIndex values;
};

// What one cell collects during the pass.
struct Accumulator {
    int x = 0;
    int y = 0;
    double best = std::numeric_limits<double>::quiet_NaN();
    std::optional<std::size_t> bestIndex;
    std::optional<std::size_t> firstOk;
    std::optional<std::size_t> firstFailure;
    std::vector<std::pair<double, std::size_t>> values; // Median only
    std::array<std::uint32_t, kStatusCount> statusCounts{};
    std::uint32_t ok = 0;
    std::uint32_t analysed = 0;
    std::uint32_t failed = 0;
};

// The sorted position of each index of `texts` (8 < 16 < 128), and the sorted texts.
std::vector<int> sortedPositions(const QStringList& texts, QStringList& sorted) {
    sorted = texts;
    sortValueTexts(sorted);
    QHash<QString, int> position;
    for (int i = 0; i < sorted.size(); ++i)
        position.insert(sorted[i], i);
    std::vector<int> out(static_cast<std::size_t>(texts.size()));
    for (int i = 0; i < texts.size(); ++i)
        out[static_cast<std::size_t>(i)] = position.value(texts[i]);
    return out;
}

QString statusText(ResultStatus status) {
    return QString::fromStdString(std::string(statusName(status)));
}

} // namespace

HeatmapSpec sessionHeatmapSpec(HeatmapSpec spec, const std::vector<std::string>& parameterNames,
                               const std::string& objectiveName, const std::vector<ResultRecord>& results) {
    if (parameterNames.size() < 2)
        return spec;
    std::vector<std::string> varying;
    for (const std::string& name : parameterNames) {
        std::set<std::string> seen;
        for (const ResultRecord& r : results) {
            if (const ConfigValue* v = r.config.find(name))
                seen.insert(v->json());
            if (seen.size() > 1) {
                varying.push_back(name);
                break;
            }
        }
    }
    const std::vector<std::string>& axes = varying.size() >= 2 ? varying : parameterNames;
    spec.yParameter = axes[0];
    spec.xParameter = axes[1];
    spec.fixedValues.clear();
    spec.reduction = Reduction::Best;
    spec.quantity = Quantity{objectiveName.empty() ? QuantityKind::LatencyUs : QuantityKind::Objective, {}, false};
    return untimedHeatmapSpec(std::move(spec), results);
}

HeatmapSpec untimedHeatmapSpec(HeatmapSpec spec, const std::vector<ResultRecord>& results) {
    if (spec.quantity.kind != QuantityKind::LatencyUs && spec.quantity.kind != QuantityKind::Objective)
        return spec;
    bool analysed = false;
    bool occupancy = false;
    for (const ResultRecord& r : results) {
        if (r.ok())
            return spec; // a time to show
        if (r.ranksStatically()) {
            analysed = true;
            occupancy = occupancy || r.occupancy.has_value();
        }
    }
    if (analysed)
        spec.quantity = Quantity{occupancy ? QuantityKind::TheoreticalOccupancy : QuantityKind::Registers, {}, false};
    return spec;
}

bool isFailure(ResultStatus status) {
    switch (status) {
    case ResultStatus::CompileError:
    case ResultStatus::LaunchError:
    case ResultStatus::WrongResult:
    case ResultStatus::Crashed:
    case ResultStatus::Timeout:
    case ResultStatus::Implausible:
        return true;
    case ResultStatus::Ok:
    case ResultStatus::Pruned:
    case ResultStatus::Skipped:
    case ResultStatus::Analysed:
        return false;
    }
    return false;
}

namespace {

// The fixed parameters of the filter other than the two axes.
std::vector<FixedValue> fixedFilter(const HeatmapSpec& spec) {
    std::vector<FixedValue> fixed;
    for (const auto& [name, text] : spec.fixedValues) {
        if (name != spec.xParameter && name != spec.yParameter)
            fixed.push_back({ParameterLookup(name), QString::fromStdString(text), {}});
    }
    return fixed;
}

// Whether `config` has every fixed parameter at its fixed value (as the grid's labels show it).
bool matchesFixed(std::vector<FixedValue>& fixed, const ConfigValues& config) {
    for (FixedValue& f : fixed) {
        const ConfigValue* value = f.lookup.find(config);
        if (!value)
            return false;
        const int index = f.values.indexOf(*value);
        if (f.values.texts()[index] != f.text)
            return false;
    }
    return true;
}

// Result `r` counted into its cell and the grid's counts.
void collectResult(Accumulator& acc, const ResultRecord& result, std::size_t r, HeatmapGrid& grid) {
    const bool higher = grid.higherIsBetter;
    const bool median = grid.spec.reduction == Reduction::Median;
    const ResultStatus status = result.status();
    ++acc.statusCounts[static_cast<std::size_t>(status)];
    // An analysed result (compiled, never run) has what compiling told: registers, spills,
    // occupancy colour its cell as an ok result's do.
    if (status == ResultStatus::Ok || status == ResultStatus::Analysed) {
        if (status == ResultStatus::Ok) {
            ++acc.ok;
            ++grid.okCount;
        } else {
            ++acc.analysed;
            ++grid.analysedCount;
        }
        if (!acc.firstOk)
            acc.firstOk = r;
        const std::optional<double> value = quantityValue(result, grid.spec.quantity);
        if (!value || !std::isfinite(*value))
            return;
        if (median) {
            acc.values.emplace_back(*value, r);
        } else if (!acc.bestIndex || (higher ? *value > acc.best : *value < acc.best)) {
            acc.best = *value;
            acc.bestIndex = r;
        }
    } else if (isFailure(status)) {
        ++acc.failed;
        ++grid.failedCount;
        if (!acc.firstFailure)
            acc.firstFailure = r;
    }
}

// The pass over the results: the axes' values in the order first seen, and a cell's collection
// for each pair of them that a result matching the filter has.
struct Collected {
    ValueIndex xIndex;
    ValueIndex yIndex;
    std::vector<Accumulator> cells;
};

Collected collectCells(const std::vector<ResultRecord>& results, HeatmapGrid& grid) {
    std::vector<FixedValue> fixed = fixedFilter(grid.spec);
    ParameterLookup xLookup(grid.spec.xParameter);
    ParameterLookup yLookup(grid.spec.yParameter);
    Collected out;
    std::unordered_map<std::uint64_t, std::size_t> cellSlots; // (x, y) value indices -> accumulator
    for (std::size_t r = 0; r < results.size(); ++r) {
        const ResultRecord& result = results[r];
        const ConfigValue* xValue = xLookup.find(result.config);
        const ConfigValue* yValue = yLookup.find(result.config);
        if (!xValue || !yValue || !matchesFixed(fixed, result.config))
            continue;
        ++grid.matchedCount;
        const int x = out.xIndex.indexOf(*xValue);
        const int y = out.yIndex.indexOf(*yValue);
        const std::uint64_t key = (static_cast<std::uint64_t>(x) << 32) | static_cast<std::uint32_t>(y);
        auto [slot, inserted] = cellSlots.try_emplace(key, out.cells.size());
        if (inserted) {
            out.cells.emplace_back();
            out.cells.back().x = x;
            out.cells.back().y = y;
        }
        collectResult(out.cells[slot->second], result, r, grid);
    }
    return out;
}

// A cell from its collection: its counts, its value (the best, or the median), the result that
// stands for it and its marker.
void fillCell(HeatmapCell& cell, Accumulator& acc, const HeatmapGrid& grid, const std::vector<ResultRecord>& results) {
    const bool higher = grid.higherIsBetter;
    const bool median = grid.spec.reduction == Reduction::Median;
    cell.okCount = acc.ok;
    cell.analysedCount = acc.analysed;
    cell.failedCount = acc.failed;
    cell.statusCounts = acc.statusCounts;
    if (median && !acc.values.empty()) {
        auto& values = acc.values;
        // Ties by result order, so that the representative does not depend on the sort.
        std::sort(values.begin(), values.end());
        const std::size_t n = values.size();
        const std::size_t lower = (n - 1) / 2;
        const std::size_t upper = n / 2;
        cell.value = (values[lower].first + values[upper].first) / 2.0;
        // Of the two middles of an even count, the better one stands for the cell.
        cell.representative = values[higher ? upper : lower].second;
    } else if (!median && acc.bestIndex) {
        cell.value = acc.best;
        cell.representative = acc.bestIndex;
    } else if (acc.firstOk) {
        cell.representative = acc.firstOk; // Ok, but without this quantity (a metric not collected)
    } else {
        cell.representative = acc.firstFailure;
    }
    if (cell.representative)
        cell.record = results[*cell.representative];
    if (acc.ok == 0 && acc.analysed == 0)
        cell.marker = acc.failed > 0 ? CellMarker::FailedOnly : CellMarker::Untested;
    else if (cell.record && cell.record->measurement.staticInfo && cell.record->measurement.staticInfo->spillStores > 0)
        cell.marker = CellMarker::Spilling;
    else
        cell.marker = CellMarker::Fine;
}

// The best cell and the range of the values (and their smallest positive one, for a log scale).
void findBestAndRange(HeatmapGrid& grid) {
    const bool higher = grid.higherIsBetter;
    for (int x = 0; x < grid.columns(); ++x) {
        for (int y = 0; y < grid.rows(); ++y) {
            const double value = grid.cell(x, y).value;
            if (!std::isfinite(value))
                continue;
            if (!grid.best.valid() || (higher ? value > grid.maxValue : value < grid.minValue))
                grid.best = {x, y};
            if (!(value >= grid.minValue))
                grid.minValue = value;
            if (!(value <= grid.maxValue))
                grid.maxValue = value;
            if (value > 0 && !(value >= grid.minPositive))
                grid.minPositive = value;
        }
    }
}

// The cells whose config the measurements cannot tell from the best's (analysis/confidence).
void markTiedWithBest(HeatmapGrid& grid) {
    if (!grid.best.valid() || !grid.cell(grid.best).record)
        return;
    const auto intervalOf = [](const ResultRecord& r) {
        return r.ok() ? medianIntervalOf(r.measurement.time) : std::nullopt;
    };
    const auto best = intervalOf(*grid.cell(grid.best).record);
    if (!best)
        return;
    for (int x = 0; x < grid.columns(); ++x) {
        for (int y = 0; y < grid.rows(); ++y) {
            HeatmapCell& cell = grid.cells[static_cast<std::size_t>(x * grid.rows() + y)];
            if (CellIndex{x, y} == grid.best || !cell.record || !std::isfinite(cell.value))
                continue;
            if (const auto mine = intervalOf(*cell.record); mine && mine->overlaps(*best)) {
                cell.tiedWithBest = true;
                ++grid.tiedCount;
            }
        }
    }
}

} // namespace

HeatmapGrid aggregate(const std::vector<ResultRecord>& results, const std::vector<std::string>& parameterNames,
                      const HeatmapSpec& spec, const std::string& objectiveName) {
    HeatmapGrid grid;
    grid.spec = spec;
    grid.parameterNames = parameterNames;
    grid.objectiveName = objectiveName;
    grid.quantityLabel = quantityLabel(spec.quantity, objectiveName);
    grid.higherIsBetter = higherIsBetter(spec.quantity);
    grid.resultCount = results.size();
    if (spec.xParameter.empty() || spec.yParameter.empty())
        return grid;

    Collected collected = collectCells(results, grid);
    const std::vector<int> xPosition = sortedPositions(collected.xIndex.texts(), grid.xValues);
    const std::vector<int> yPosition = sortedPositions(collected.yIndex.texts(), grid.yValues);
    grid.cells.resize(static_cast<std::size_t>(grid.columns()) * static_cast<std::size_t>(grid.rows()));
    for (Accumulator& acc : collected.cells) {
        const int x = xPosition[static_cast<std::size_t>(acc.x)];
        const int y = yPosition[static_cast<std::size_t>(acc.y)];
        fillCell(grid.cells[static_cast<std::size_t>(x * grid.rows() + y)], acc, grid, results);
    }
    findBestAndRange(grid);
    markTiedWithBest(grid);
    return grid;
}

CellIndex cellAt(const HeatmapGrid& grid, double x, double y) {
    if (!std::isfinite(x) || !std::isfinite(y))
        return {};
    const double column = std::floor(x + 0.5);
    const double row = std::floor(y + 0.5);
    if (column < 0 || row < 0 || column >= grid.columns() || row >= grid.rows())
        return {};
    return {static_cast<int>(column), static_cast<int>(row)};
}

QString tooltip(const HeatmapGrid& grid, CellIndex index) {
    if (!index.valid() || index.x >= grid.columns() || index.y >= grid.rows())
        return {};
    const HeatmapCell& cell = grid.cell(index);
    QStringList lines;
    lines << QStringLiteral("%1 = %2, %3 = %4")
                 .arg(QString::fromStdString(grid.spec.xParameter), grid.xValues[index.x],
                      QString::fromStdString(grid.spec.yParameter), grid.yValues[index.y]);

    const std::uint32_t pruned = cell.statusCounts[static_cast<std::size_t>(ResultStatus::Pruned)];
    const std::uint32_t withData = cell.okCount + cell.analysedCount;
    // "ok configs", "analysed configs" (compiled, never run) or both.
    const QString dataKind = cell.analysedCount == 0 ? QStringLiteral("ok")
                             : cell.okCount == 0     ? QStringLiteral("analysed")
                                                     : QStringLiteral("ok or analysed");
    if (withData == 0 && cell.failedCount == 0) {
        lines << (pruned > 0 ? QStringLiteral("untested: %1 pruned").arg(pruned) : QStringLiteral("untested"));
        return lines.join(QLatin1Char('\n'));
    }

    if (std::isfinite(cell.value)) {
        const bool median = grid.spec.reduction == Reduction::Median;
        const QString what = median                ? QStringLiteral("median")
                             : grid.higherIsBetter ? QStringLiteral("max")
                                                   : QStringLiteral("min");
        lines << QStringLiteral("%1 %2: %3 over %4 %5 configs")
                     .arg(what, grid.quantityLabel,
                          formatQuantityValue(cell.value, grid.spec.quantity, grid.objectiveName))
                     .arg(withData)
                     .arg(dataKind);
        lines << QString();
        lines << (median ? QStringLiteral("Median config:") : QStringLiteral("Best config:"));
    } else if (withData > 0) {
        lines << QStringLiteral("no %1 in its %2 %3 results").arg(grid.quantityLabel).arg(withData).arg(dataKind);
        if (cell.okCount == 0)
            lines << QStringLiteral("(analysed, never run: nothing timed; colour by registers, spills or occupancy)");
        lines << QString();
        lines << QStringLiteral("First %1 config:").arg(dataKind);
    } else {
        lines << QStringLiteral("only failed results");
        lines << QString();
        lines << QStringLiteral("First failure:");
    }
    if (cell.record)
        lines << describeResult(*cell.record, grid.objectiveName);
    if (cell.tiedWithBest)
        lines << QStringLiteral("≈ cannot be told from the best cell's config: their 95 % intervals overlap");

    QStringList counts;
    if (cell.okCount > 0 || cell.analysedCount == 0)
        counts << QStringLiteral("%1 ok").arg(cell.okCount);
    for (ResultStatus status : kAllStatuses) {
        const std::uint32_t n = cell.statusCounts[static_cast<std::size_t>(status)];
        if (status != ResultStatus::Ok && n > 0)
            counts << QStringLiteral("%1 %2").arg(n).arg(statusText(status));
    }
    lines << QString();
    lines << QStringLiteral("Results: ") + counts.join(QStringLiteral(", "));
    return lines.join(QLatin1Char('\n'));
}

QString heatmapTitle(const HeatmapGrid& grid) {
    const HeatmapSpec& spec = grid.spec;
    const QString what = spec.reduction == Reduction::Median ? QStringLiteral("median")
                         : grid.higherIsBetter               ? QStringLiteral("max")
                                                             : QStringLiteral("min");
    QStringList fixed;
    int others = 0;
    for (const std::string& name : grid.parameterNames) {
        if (name == spec.xParameter || name == spec.yParameter)
            continue;
        const auto it = spec.fixedValues.find(name);
        if (it != spec.fixedValues.end())
            fixed << QStringLiteral("%1 = %2").arg(QString::fromStdString(name), QString::fromStdString(it->second));
        else
            ++others;
    }
    QString title = others > 0 ? QStringLiteral("%1 %2 over the other parameters").arg(what, grid.quantityLabel)
                               : grid.quantityLabel;
    if (!fixed.isEmpty())
        title += QStringLiteral(" · ") + fixed.join(QStringLiteral(", "));
    return title;
}

} // namespace tilescope::views
