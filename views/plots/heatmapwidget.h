#pragma once

// A heatmap of results over two parameters: one QCustomPlot with a colour map, its colour scale
// (the quantity and its unit), the parameter values as ticks, markers over cells with only
// failed results and over cells whose config spills, the best cell outlined, and a caption
// legend of the markers. Above it, controls for the axes, the quantity, the reduction, the
// colour scale and a value (or "all") per other parameter. Hovering shows a cell's tooltip;
// clicking a cell emits its config.
//
// Large result sets are aggregated on a helper thread (see ResultPlot).

#include "models/heatmapmodel.h"
#include "plots/resultplot.h"

#include <QPointF>
#include <QString>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class QCheckBox;
class QEvent;
class QComboBox;
class QCPColorGradient;
class QCPColorMap;
class QCPColorScale;
class QCPGraph;
class QCPItemRect;
class QCPItemText;
class QCPRange;
class QCPTextElement;
class QCustomPlot;
class QLabel;
class QMouseEvent;

namespace tilescope::views {

class FlowLayout;

class HeatmapWidget : public ResultPlot {
    Q_OBJECT
public:
    explicit HeatmapWidget(QWidget* parent = nullptr);

    /// The results to show (an immutable snapshot; call again with a new one as results arrive),
    /// the session's parameter names in order, and its objective ("TFLOP/s"; "" none). Keeps
    /// the current spec where it still fits; picks the first two parameters otherwise.
    void setResults(std::shared_ptr<const std::vector<ResultRecord>> results, std::vector<std::string> parameterNames,
                    std::string objectiveName);
    /// What to show; the controls follow.
    void setSpec(const HeatmapSpec& spec);
    const HeatmapSpec& spec() const { return m_spec; }

    /// Outlines (dashed) the cell holding `configJson` (compact JSON text, as configSelected
    /// gives); "" or a config outside the grid clears the outline. Whether a cell was outlined.
    bool selectConfig(const QString& configJson);

    /// The grid on screen (null before the first results); isBusy(): a newer one is on its way.
    std::shared_ptr<const HeatmapGrid> grid() const { return m_grid; }

    /// The cell under a pixel position of plot(); invalid outside the grid.
    CellIndex cellAtPixel(QPointF pixel) const;
    QCPColorMap* colorMap() const { return m_map; }
    QCPColorScale* colorScale() const { return m_scale; }
    QComboBox* xCombo() const { return m_xCombo; }
    QComboBox* yCombo() const { return m_yCombo; }
    QComboBox* quantityCombo() const { return m_quantityCombo; }
    QComboBox* reductionCombo() const { return m_reductionCombo; }
    QCheckBox* logScaleBox() const { return m_logBox; }
    /// The "all or one value" combo of a parameter (null for an unknown name).
    QComboBox* fixedValueCombo(const std::string& parameter) const;

signals:
    /// A cell was clicked: the compact JSON text of its representative config.
    void configSelected(const QString& configJson);
    /// A new grid is on screen.
    void gridChanged();

private:
    struct Computed {
        std::shared_ptr<const HeatmapGrid> grid;
        std::shared_ptr<const ResultSummary> summary; // null: unchanged
    };

    bool eventFilter(QObject* watched, QEvent* event) override;
    void buildPlot();
    void refresh() override;
    void apply(const Computed& computed);
    void applySummary(const ResultSummary& summary);
    void rebuildFixedCombos();
    /// Labels every value of an axis, or every 2nd, 4th... when the cells are too small for all.
    void thinTickLabels();
    void syncControls();
    void specFromControls();
    void showGrid();
    // showGrid's steps.
    void clearMarks(); // the value labels, the markers and the best's frame of the grid shown before
    void showNoGrid(); // no results, or none in the slice
    void showAxes(const HeatmapGrid& grid);
    /// The markers (failed, spilling, tied with the best) and the value labels; the untested cells' count.
    int showMarks(const HeatmapGrid& grid, QCPColorGradient& gradient, const QCPRange& range, bool logScale);
    void showLegend(const HeatmapGrid& grid, int untested);
    void showCounts(const HeatmapGrid& grid); // the title and the status line
    void fitToCellSize();
    void placeSelection();
    void onMouseMove(QMouseEvent* event);
    void onMouseRelease(QMouseEvent* event);

    // Data (the results are ResultPlot's)
    HeatmapSpec m_spec;
    std::shared_ptr<const HeatmapGrid> m_grid;
    std::shared_ptr<const ResultSummary> m_summary;
    std::vector<Quantity> m_quantities; // the quantity combo's items
    std::string m_selectedConfig;       // compact JSON of the selected config ("" none)

    // Controls
    QComboBox* m_xCombo = nullptr;
    QComboBox* m_yCombo = nullptr;
    QComboBox* m_quantityCombo = nullptr;
    QComboBox* m_reductionCombo = nullptr;
    QCheckBox* m_logBox = nullptr;
    QLabel* m_status = nullptr;
    QLabel* m_sliceLabel = nullptr;
    FlowLayout* m_sliceLayout = nullptr;      // "Slice:", a group per parameter, the counts
    std::array<int, 2> m_labelSteps = {0, 0}; // every how many cells an axis value is written (x, y)
    std::vector<QWidget*> m_fixedGroups;      // a label and its combo, one per parameter, in m_parameterNames order
    std::vector<QLabel*> m_fixedLabels;
    std::vector<QComboBox*> m_fixedCombos;

    // The plot (m_plot is ResultPlot's)
    QCPTextElement* m_title = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPGraph* m_failedGraph = nullptr;
    QCPGraph* m_spillGraph = nullptr;
    QCPGraph* m_tiedGraph = nullptr;      // cells that cannot be told from the best
    QCPGraph* m_bestLegend = nullptr;     // no data: the legend's entry for the outline
    QCPGraph* m_untestedLegend = nullptr; // no data: the legend's entry for blank cells
    QCPItemRect* m_bestRect = nullptr;
    QCPItemRect* m_selectionRect = nullptr;
    std::vector<QCPItemText*> m_valueLabels;
    CellIndex m_hoverCell;
};

} // namespace tilescope::views
