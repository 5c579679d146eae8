#pragma once

// A scatter plot of results: any quantity against any other (registers against TFLOP/s, achieved
// against theoretical occupancy, ...), points coloured by a third through a colour scale. One
// QCustomPlot; points are binned by colour into a fixed set of graphs (QCPGraph has no per-point
// colour). At most kMaxPoints are drawn: the best results and an even sample of the rest.
// Hovering shows a point's config; clicking selects it (configSelected); selectConfig() rings
// a config chosen elsewhere, so that plots and tables stay in step.

#include "models/scattermodel.h"
#include "plots/resultplot.h"

#include <QPointF>
#include <QString>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QCPColorScale;
class QCPGraph;
class QCustomPlot;
class QEvent;
class QLabel;
class QMouseEvent;

namespace tilescope::views {

class ScatterWidget : public ResultPlot {
    Q_OBJECT
public:
    static constexpr std::size_t kMaxPoints = 4000;
    static constexpr int kColourBins = 16;

    explicit ScatterWidget(QWidget* parent = nullptr);

    /// The results (an immutable snapshot), the session's parameter names and its objective
    /// ("TFLOP/s"; "" none). The axes stay where they fit; the first time they default to
    /// registers (or latency) against the objective (or latency), coloured by spill stores, or,
    /// when the results have energy, to latency against energy with the Pareto front drawn.
    void setResults(std::shared_ptr<const std::vector<ResultRecord>> results, std::vector<std::string> parameterNames,
                    std::string objectiveName);
    void setSpec(const ScatterSpec& spec);
    const ScatterSpec& spec() const { return m_spec; }

    /// Rings the point of `configJson` (compact JSON text, as configSelected gives), drawn or
    /// thinned out; "" clears. Whether the config has a point.
    bool selectConfig(const QString& configJson);
    QString selectedConfig() const { return QString::fromStdString(m_selectedConfig); }

    /// The points on screen (null before the first results); isBusy(): newer ones are coming.
    std::shared_ptr<const ScatterData> data() const { return m_data; }
    /// The drawn point nearest to a pixel of plot() within a few pixels: its index in
    /// data()->points, or -1.
    int pointAtPixel(QPointF pixel) const;
    /// The pixel of a drawn point.
    QPointF pixelOf(int point) const;
    QComboBox* xCombo() const { return m_xCombo; }
    QComboBox* yCombo() const { return m_yCombo; }
    QComboBox* colourCombo() const { return m_colourCombo; }
    /// The line above the plot: how many configs are drawn, on the front, failed.
    QString statusText() const;

signals:
    /// A point was clicked: the compact JSON text of its config.
    void configSelected(const QString& configJson);
    /// New points are on screen.
    void pointsChanged();

private:
    struct Computed {
        std::shared_ptr<const ScatterData> data;
        std::shared_ptr<const ResultSummary> summary;             // null: unchanged
        std::shared_ptr<const std::vector<ResultRecord>> results; // what data's indices point into
    };

    bool eventFilter(QObject* watched, QEvent* event) override;
    void refresh() override;
    void apply(const Computed& computed);
    void applySummary(const ResultSummary& summary);
    void syncControls();
    void specFromControls();
    void showPoints();
    void placeSelection();
    QString pointText(const ScatterPoint& point) const;
    void onMouseMove(QMouseEvent* event);
    void onMouseRelease(QMouseEvent* event);

    ScatterSpec m_spec;        // the results are ResultPlot's
    bool m_specChosen = false; // by setSpec or the controls: setResults keeps it
    std::shared_ptr<const ScatterData> m_data;
    std::shared_ptr<const std::vector<ResultRecord>> m_dataResults; // m_data's results (m_results may be newer)
    std::vector<Quantity> m_quantities; // the axis combos' items; the colour combo has "none" first
    std::string m_selectedConfig;

    QComboBox* m_xCombo = nullptr;
    QComboBox* m_yCombo = nullptr;
    QComboBox* m_colourCombo = nullptr;
    QCheckBox* m_logXBox = nullptr;
    QCheckBox* m_logYBox = nullptr;
    QCheckBox* m_frontBox = nullptr;
    QLabel* m_status = nullptr;

    QCPColorScale* m_scale = nullptr;
    std::vector<QCPGraph*> m_bins;        // kColourBins graphs, worst colour first
    QCPGraph* m_plain = nullptr;          // points without a colour value
    QCPGraph* m_selectionGraph = nullptr;
    QCPGraph* m_frontGraph = nullptr; ///< the Pareto front, when the spec asks for it // a ring around the selected config
    int m_hoverPoint = -1;
};

} // namespace tilescope::views
