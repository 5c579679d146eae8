#pragma once

// The data of a heatmap: results reduced to a grid over two parameters. Each cell holds one
// value of a quantity (latency, the objective, registers, ...) reduced over the other parameters
// (the best or the median), after fixing some of them to one value; the config that stands for
// the cell; and what went wrong there (untested, only failures, spilling). Plain data and
// functions, no widgets, so tests and background threads use it directly.

#include "model/records.h"
#include "models/quantity.h"

#include <QString>
#include <QStringList>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::views {

enum class Reduction : std::uint8_t {
    Best,   ///< the best value (min latency, max throughput, as the quantity ranks)
    Median, ///< the median of the Ok values
};

/// What to plot.
struct HeatmapSpec {
    std::string xParameter;
    std::string yParameter;
    Quantity quantity;
    Reduction reduction = Reduction::Best;
    /// Parameter -> value (as valueText() writes it): results with another value are ignored.
    /// Entries for the x and y parameters are ignored.
    std::map<std::string, std::string> fixedValues;
    /// A view option (aggregate() ignores it): a logarithmic colour scale.
    bool logScale = false;

    bool operator==(const HeatmapSpec&) const = default;
};

/// What a cell shows besides its colour.
enum class CellMarker : std::uint8_t {
    Untested,   ///< no result (pruned and skipped ones count as none)
    FailedOnly, ///< results, but all failed (compile error, launch error, crashed, timeout, wrong result)
    /// (Spilling and Fine: the cell has an ok result, or one analysed, never run, whose static
    /// quantities colour it.)
    Spilling, ///< the representative config spills registers (spill stores > 0)
    Fine,
};

/// A position in the grid: column x (index into xValues) and row y (index into yValues).
struct CellIndex {
    int x = -1;
    int y = -1;

    bool valid() const { return x >= 0 && y >= 0; }
    bool operator==(const CellIndex&) const = default;
};

struct HeatmapCell {
    double value = std::numeric_limits<double>::quiet_NaN(); ///< NaN: no Ok or Analysed result with a value
    CellMarker marker = CellMarker::Untested;
    std::uint32_t okCount = 0;
    std::uint32_t analysedCount = 0; ///< compiled and analysed, never run: registers, spills, occupancy
    std::uint32_t failedCount = 0;
    std::array<std::uint32_t, kStatusCount> statusCounts{}; ///< every status, by ResultStatus
    /// The config that stands for the cell: the best Ok (or Analysed) result for Best, the median
    /// one for Median; for a FailedOnly cell its first failure. Index into the aggregated results.
    std::optional<std::size_t> representative;
    std::optional<ResultRecord> record; ///< a copy of results[representative], so the grid stands alone
    /// Not the best cell, but its config cannot be told from the best cell's: both have a 95 %
    /// interval of the median (the final round's) and they overlap.
    bool tiedWithBest = false;
};

/// A heatmap's data. Cells are stored column by column: cells[x * rows() + y].
struct HeatmapGrid {
    HeatmapSpec spec;
    std::vector<std::string> parameterNames;
    std::string objectiveName;
    QString quantityLabel; ///< "latency (µs)"
    bool higherIsBetter = false;
    QStringList xValues; ///< distinct values seen, sorted numerically (8 < 16 < 128)
    QStringList yValues;
    std::vector<HeatmapCell> cells;
    CellIndex best;            ///< the cell with the best value; invalid when every cell is NaN
    std::size_t tiedCount = 0; ///< cells tiedWithBest
    double minValue = std::numeric_limits<double>::quiet_NaN(); ///< over the finite cell values
    double maxValue = std::numeric_limits<double>::quiet_NaN();
    double minPositive = std::numeric_limits<double>::quiet_NaN(); ///< for a log scale
    std::size_t resultCount = 0;                                   ///< results given
    std::size_t matchedCount = 0;  ///< of them, passing the fixed values and having both parameters
    std::size_t okCount = 0;       ///< of the matched
    std::size_t analysedCount = 0; ///< of the matched: compiled and analysed, never run
    std::size_t failedCount = 0;   ///< of the matched

    int columns() const { return static_cast<int>(xValues.size()); }
    int rows() const { return static_cast<int>(yValues.size()); }
    bool empty() const { return xValues.isEmpty() || yValues.isEmpty(); }
    const HeatmapCell& cell(int x, int y) const { return cells[static_cast<std::size_t>(x * rows() + y)]; }
    const HeatmapCell& cell(CellIndex index) const { return cell(index.x, index.y); }
};

/// What a heatmap of a new session's results first shows: its first parameter down the side and
/// its second along the bottom, as a matrix reads (BLOCK_M rows, BLOCK_N columns), every config
/// of a cell reduced to its best, coloured by the objective (latency without one). Parameters
/// that take one value in `results` are passed over while two others vary (a space pinned to
/// one family would make a heatmap of one row). The rest of `spec` is kept; unchanged with fewer
/// than two parameters.
HeatmapSpec sessionHeatmapSpec(HeatmapSpec spec, const std::vector<std::string>& parameterNames,
                               const std::string& objectiveName, const std::vector<ResultRecord>& results = {});

/// What a heatmap of results that were analysed, never timed (the analysis backend's), shows in
/// place of a time: `spec` coloured by the theoretical occupancy (registers where no result has
/// one) when it shows the latency or the objective, no result has a time and some were analysed;
/// else `spec` as it is. sessionHeatmapSpec() applies it; a view applies it again as results
/// arrive, since a session's first results come after its heatmap was set up.
HeatmapSpec untimedHeatmapSpec(HeatmapSpec spec, const std::vector<ResultRecord>& results);

/// Whether a status counts as a failure for the FailedOnly marker.
bool isFailure(ResultStatus status);

/// Reduces `results` to a grid over spec.xParameter x spec.yParameter, in one pass (hash maps
/// keyed by value indices): 100,000 results take a few tens of milliseconds. `parameterNames`
/// orders the configs in tooltips. Results without the x or y parameter are ignored.
HeatmapGrid aggregate(const std::vector<ResultRecord>& results, const std::vector<std::string>& parameterNames,
                      const HeatmapSpec& spec, const std::string& objectiveName = {});

/// The cell under plot coordinates (x, y), where cell (i, j) is centred on (i, j) and one unit
/// wide; invalid outside the grid.
CellIndex cellAt(const HeatmapGrid& grid, double x, double y);

/// A cell's tooltip: its position, the value and what it reduces, the representative config
/// with its time, objective, registers and spills, and the results per status.
QString tooltip(const HeatmapGrid& grid, CellIndex cell);

/// The title line of a heatmap: "min latency (µs) over the other parameters · VEC = 4".
QString heatmapTitle(const HeatmapGrid& grid);

} // namespace tilescope::views
