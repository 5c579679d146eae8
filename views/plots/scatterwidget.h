#pragma once

// A scatter plot of results: any quantity against any other (registers against TFLOP/s, achieved
// against theoretical occupancy, ...), points coloured by a third through a colour scale. One
// QCustomPlot; points are binned by colour into a fixed set of graphs (QCPGraph has no per-point
// colour). At most kMaxPoints are drawn: the best results and an even sample of the rest.
// Hovering shows a point's config; clicking selects it (configSelected); selectConfig() rings
// a config chosen elsewhere, so that plots and tables stay in step.

#include "plots/scattermodel.h"

#include <QPointF>
#include <QString>
#include <QWidget>

#include <atomic>
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
class QThreadPool;

namespace tilescope::views {

class ScatterWidget : public QWidget {
    Q_OBJECT
public:
    static constexpr std::size_t kMaxPoints = 4000;
    static constexpr int kColourBins = 16;
    /// Result sets larger than this are prepared on the helper thread.
    static constexpr std::size_t kSyncLimit = 20'000;

    explicit ScatterWidget(QWidget* parent = nullptr);
    /// Waits for a preparation in flight.
    ~ScatterWidget() override;

    /// The results (an immutable snapshot), the session's parameter names and its objective
    /// ("TFLOP/s"; "" none). The axes stay where they fit; the first time they default to
    /// registers (or latency) against the objective (or latency), coloured by spill stores.
    void setResults(std::shared_ptr<const std::vector<ResultRecord>> results, std::vector<std::string> parameterNames,
                    std::string objectiveName);
    void setSpec(const ScatterSpec& spec);
    const ScatterSpec& spec() const { return m_spec; }

    /// Rings the point of `configJson` (compact JSON text, as configSelected gives), drawn or
    /// thinned out; "" clears. Whether the config has a point.
    bool selectConfig(const QString& configJson);
    QString selectedConfig() const { return QString::fromStdString(m_selectedConfig); }

    /// The points on screen (null before the first results) and whether newer ones are coming.
    std::shared_ptr<const ScatterData> data() const { return m_data; }
    bool isBusy() const { return m_busy; }
    /// The drawn point nearest to a pixel of plot() within a few pixels: its index in
    /// data()->points, or -1.
    int pointAtPixel(QPointF pixel) const;
    /// The pixel of a drawn point.
    QPointF pixelOf(int point) const;
    /// The text of the tooltip last shown by hovering ("" none), for tests.
    QString hoverText() const { return m_hoverText; }

    bool savePng(const QString& path, int width = 0, int height = 0);
    bool savePdf(const QString& path, int width = 0, int height = 0);

    QCustomPlot* plot() const { return m_plot; }
    QComboBox* xCombo() const { return m_xCombo; }
    QComboBox* yCombo() const { return m_yCombo; }
    QComboBox* colourCombo() const { return m_colourCombo; }

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
    void showEvent(QShowEvent* event) override;
    void refresh();
    void apply(const Computed& computed);
    void applySummary(const ResultSummary& summary);
    void syncControls();
    void specFromControls();
    void showPoints();
    void placeSelection();
    QString pointText(const ScatterPoint& point) const;
    void onMouseMove(QMouseEvent* event);
    void onMousePress(QMouseEvent* event);
    void onMouseRelease(QMouseEvent* event);

    std::shared_ptr<const std::vector<ResultRecord>> m_results;
    std::vector<std::string> m_parameterNames;
    std::string m_objectiveName;
    ScatterSpec m_spec;
    bool m_specChosen = false; // by setSpec or the controls: setResults keeps it
    std::shared_ptr<const ScatterData> m_data;
    std::shared_ptr<const std::vector<ResultRecord>> m_dataResults; // m_data's results (m_results may be newer)
    std::vector<Quantity> m_quantities; // the axis combos' items; the colour combo has "none" first
    std::string m_selectedConfig;

    std::unique_ptr<QThreadPool> m_pool;
    std::atomic<std::uint64_t> m_generation{0};
    bool m_busy = false;
    bool m_refreshWhenShown = false; // results or spec changed while hidden behind another tab
    bool m_needSummary = false;

    QComboBox* m_xCombo = nullptr;
    QComboBox* m_yCombo = nullptr;
    QComboBox* m_colourCombo = nullptr;
    QCheckBox* m_logXBox = nullptr;
    QCheckBox* m_logYBox = nullptr;
    QLabel* m_status = nullptr;

    QCustomPlot* m_plot = nullptr;
    QCPColorScale* m_scale = nullptr;
    std::vector<QCPGraph*> m_bins;        // kColourBins graphs, worst colour first
    QCPGraph* m_plain = nullptr;          // points without a colour value
    QCPGraph* m_selectionGraph = nullptr; // a ring around the selected config
    int m_hoverPoint = -1;
    QString m_hoverText;
    QPointF m_pressPos;
    bool m_pressed = false;
};

} // namespace tilescope::views
