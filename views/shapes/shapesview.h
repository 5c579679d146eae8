#pragma once

// Shapes: a shape set (sessions of one kernel at several shapes, as `tilescope-cli tune --shapes`
// records them) as one view. A shape x config regret heatmap (each cell the config's time against
// that shape's best; the dispatch table's entries first, each shape's own entry marked), the
// table within a regret bound the user sets, the regime per shape (memory- or compute-bound
// against the roofline, flat or not against the noise) and one control that switches the
// window's heatmap and details to a shape.

#include "model/records.h"
#include "shapes/dispatchtable.h"

#include <QWidget>

#include <cstdint>
#include <memory>
#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QStackedWidget;
class QTableWidget;

namespace tilescope::views {

class ShapesView : public QWidget {
    Q_OBJECT
public:
    /// Configs shown beside the table's entries, the ones measured on the most shapes first.
    static constexpr int kOtherColumns = 24;

    explicit ShapesView(QWidget* parent = nullptr);

    /// The sessions of a recording. A shape set when they are of one kernel at two shapes or
    /// more; otherwise the view says what a shape set is and how to make one.
    void setSessions(std::shared_ptr<const std::vector<SessionData>> sessions);
    bool hasShapeSet() const { return !m_matrix.shapes.empty(); }

    /// The regret bound of the table (0.03 for 3 %).
    void setMaxRegret(double regret);
    double maxRegret() const;

    /// The shape shown (a row of matrix()); -1 without a shape set.
    int currentShape() const;
    /// Makes `row` the current shape and emits shapeChosen() for it.
    void setCurrentShape(int row);
    /// The session shown for a shape: the one with the most results at it (0: none).
    std::int64_t sessionOf(int row) const;

    const ShapeConfigMatrix& matrix() const { return m_matrix; }
    const DispatchTable& table() const { return m_table; }
    const std::vector<ShapeRegime>& regimes() const { return m_regimes; }
    /// The matrix's config of each heatmap column after the fixed ones, in column order.
    const std::vector<std::size_t>& configColumns() const { return m_columns; }
    QTableWidget* heatmap() const { return m_heat; }
    /// The headline: "3 configs run the 13 shapes within 3 % of their best (worst 2.1 %, mean 0.4 %)".
    QString summaryText() const;
    /// The current shape's regime, in words.
    QString verdictText() const;

signals:
    /// The user (or setCurrentShape) chose a shape: the session to show for it.
    void shapeChosen(std::int64_t sessionId);

private:
    void rebuild(); // the matrix, regimes and sessions per shape, from m_sessions
    void replan();  // the table at the current bound, and the heatmap
    void fillHeatmap();
    void showShape(int row);

    std::shared_ptr<const std::vector<SessionData>> m_sessions;
    ShapeConfigMatrix m_matrix;
    DispatchTable m_table;
    std::vector<ShapeRegime> m_regimes;
    std::vector<std::int64_t> m_sessionOf;
    std::vector<std::size_t> m_columns;

    QStackedWidget* m_stack = nullptr;
    QLabel* m_empty = nullptr;
    QComboBox* m_shapeCombo = nullptr;
    QDoubleSpinBox* m_regretSpin = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_verdict = nullptr;
    QTableWidget* m_heat = nullptr;
    bool m_updating = false;
};

} // namespace tilescope::views
