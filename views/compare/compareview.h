#pragma once

// Compare: the results on screen (A) beside another recording of the same problem (B), from
// another GPU or another measurement context: a log-log scatter of each config's time on A and
// on B (the diagonal of the median ratio drawn, each side's winner marked), the summary of
// the compare use case (core/jobs/compare.h: ratios, rank correlation, what each winner loses on
// the other side) and the configs in a table. The other recording is read off the GUI thread.

#include "jobs/compare.h"
#include "common/backgroundtask.h"

#include <QString>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QCPGraph;
class QCustomPlot;
class QLabel;
class QPushButton;
class QTableWidget;
class QTextBrowser;

namespace tilescope::views {

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);

    /// The results on screen: side A. `label` names them ("NVIDIA H200 (sgemm.db)").
    void setCurrent(const SessionInfo& info, std::shared_ptr<const std::vector<ResultRecord>> results,
                    const QString& label);
    /// Reads a recording (any format) as side B, off the GUI thread, then compares.
    void compareWith(const QString& path);
    bool isLoading() const { return m_loading; }

    /// The comparison shown (nullopt before one, or when it failed: error() says why).
    const std::optional<DeviceComparison>& comparison() const { return m_comparison; }
    const QString& error() const { return m_error; }
    QCustomPlot* plot() const { return m_plot; }
    QTableWidget* table() const { return m_table; }
    QTextBrowser* summary() const { return m_summary; }

signals:
    /// A table row or a point was picked: the config's compact JSON (the shared parameters).
    void configSelected(const QString& configJson);
    /// A comparison is on screen (or its error).
    void compared();

private:
    void chooseFile();
    void recompute();
    void display(); // the comparison (or what to do) on screen

    QPushButton* m_choose = nullptr;
    QLabel* m_heading = nullptr;
    QTextBrowser* m_summary = nullptr;
    QCustomPlot* m_plot = nullptr;
    QCPGraph* m_points = nullptr;
    QCPGraph* m_winnerA = nullptr;
    QCPGraph* m_winnerB = nullptr;
    QCPGraph* m_diagonal = nullptr;
    QTableWidget* m_table = nullptr;

    // Side A as the window shows it: the snapshot is shared, copied only when there is a B.
    SessionInfo m_aInfo;
    std::shared_ptr<const std::vector<ResultRecord>> m_aResults;
    std::string m_aLabel;
    std::shared_ptr<const CompareSide> m_b;
    std::optional<DeviceComparison> m_comparison;
    QString m_error;
    QString m_path;
    bool m_loading = false;
    BackgroundTask m_reader{this};
};

} // namespace tilescope::views
