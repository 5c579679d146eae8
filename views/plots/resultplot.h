#pragma once

// What the heatmap and the scatter plot share: the results they show (an immutable snapshot, the
// session's parameter names, its objective), their QCustomPlot, what makes a click on it, and how
// they refresh: a small result set is computed at once, a large one on a helper thread (only the
// newest request is applied, so live updates at 10 Hz cannot pile up), and a plot hidden behind
// another tab waits until it is shown.

#include "common/backgroundtask.h"
#include "model/records.h"

#include <QLabel>
#include <QPointF>
#include <QString>
#include <QWidget>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

class QCustomPlot;
class QMouseEvent;
class QShowEvent;

namespace tilescope::views {

class ResultPlot : public QWidget {
    Q_OBJECT
public:
    /// Result sets larger than this are computed on the helper thread.
    static constexpr std::size_t kSyncLimit = 20'000;

    /// Waits for a computation in flight.
    ~ResultPlot() override;

    /// Whether a newer picture is being computed on the helper thread.
    bool isBusy() const { return m_busy; }
    /// The text of the tooltip last shown by hovering ("" none), for tests.
    QString hoverText() const { return m_hoverText; }

    bool savePng(const QString& path, int width = 0, int height = 0);
    bool savePdf(const QString& path, int width = 0, int height = 0);

    QCustomPlot* plot() const { return m_plot; }
    /// The results shown (null before the first).
    std::shared_ptr<const std::vector<ResultRecord>> results() const { return m_results; }

protected:
    explicit ResultPlot(QWidget* parent);

    /// Recomputes what is shown (through compute()).
    virtual void refresh() = 0;
    /// True while the plot is hidden behind another tab of a visible window: refresh() then
    /// returns, and runs again when the plot is shown (a live run's snapshots cost it nothing).
    bool waitUntilShown();
    /// Runs `job` at once for a small result set, else on the helper thread with `busyText` in
    /// `status` meanwhile; `apply` gets its result on the GUI thread, the newest request's only.
    template <class Job, class Apply>
    void compute(Job job, Apply apply, QLabel* status, const QString& busyText);
    /// A left press on the plot, and whether a release ends a click (a few pixels from the press).
    void notePress(QMouseEvent* event);
    bool isClick(QMouseEvent* event);
    void showEvent(QShowEvent* event) override;

    std::shared_ptr<const std::vector<ResultRecord>> m_results;
    std::vector<std::string> m_parameterNames;
    std::string m_objectiveName;
    bool m_needSummary = false;    // the results changed: the next job summarizes them for the controls
    QCustomPlot* m_plot = nullptr; // made by the subclass, where its layout wants it
    QString m_hoverText;

private:
    bool m_busy = false;
    bool m_refreshWhenShown = false; // results or spec changed while hidden behind another tab
    QPointF m_pressPos;
    bool m_pressed = false;
    BackgroundTask m_task{this};
};

template <class Job, class Apply>
void ResultPlot::compute(Job job, Apply apply, QLabel* status, const QString& busyText) {
    if (!m_results || m_results->size() <= kSyncLimit) {
        m_task.supersede(); // a larger request in flight is stale now
        m_busy = false;
        apply(job());
        return;
    }
    m_busy = true;
    status->setText(busyText);
    m_task.start(std::move(job), [this, apply = std::move(apply)](auto computed) {
        m_busy = false;
        apply(computed);
    });
}

} // namespace tilescope::views
