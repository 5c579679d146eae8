#pragma once

// The Kernel Source panel: the open problem's kernel file (its name and folder above, the source
// highlighted below, or why it could not be read), or a note on how to open a problem. Follows
// the ProblemDocument. For the selected config it marks the lines with spill and local-memory
// instructions (its compile, which carries line information, read with nvdisasm off the GUI thread);
// with a config pinned, it shows which lines spill in one and not the other.

#include "common/backgroundtask.h"
#include "models/quantity.h"

#include <QStackedWidget>

#include <memory>

class QLabel;
class QToolButton;

namespace tilescope::views {

class ProblemDocument;
class SourceView;

class KernelSourcePanel : public QStackedWidget {
    Q_OBJECT
public:
    KernelSourcePanel(ProblemDocument* document, QWidget* parent = nullptr);
    ~KernelSourcePanel() override;

    SourceView* sourceView() const { return m_sourceView; }
    /// What the marks say: the selected config's spills by line, or why there are none.
    QLabel* linesLabel() const { return m_lines; }
    /// Pins the config shown, or unpins: lines are then compared with the pinned config's.
    QToolButton* pinButton() const { return m_pin; }
    bool isBusy() const { return m_busy; }
    /// Asks for the heatmap to be coloured by the spills at the line under the cursor.
    QToolButton* heatmapButton() const { return m_byLine; }
    bool isCountingLine() const { return m_counting; }

    /// Marks the lines of `configJson` (compact JSON, as the selection passes it); "" clears.
    void showConfig(const QString& configJson);
    /// The config whose lines are shown or being read ("" none).
    QString shownConfig() const { return m_config; }
    /// The architecture the lines are read for (default sm_90).
    void setArch(const QString& arch);
    /// Counts the spill instructions at kernel line `line` of each config (compact JSON), off the
    /// GUI thread (the compile cache serves configs compiled before); lineQuantity() follows.
    void countLine(int line, std::vector<QString> configs);

    struct Lines;

signals:
    /// The marks of a config arrived (or why they could not be read).
    void linesShown();
    /// The heatmap button was pressed for kernel line `line`.
    void lineCountsRequested(int line);
    /// The counts of countLine(): a quantity for the plots (QuantityKind::LineSpills).
    void lineQuantity(const Quantity& quantity);

private:
    void onProblemChanged();
    void showLines(const std::shared_ptr<const Lines>& lines);
    void render();
    void togglePin();

    ProblemDocument* m_document;
    SourceView* m_sourceView = nullptr;
    QLabel* m_header = nullptr;
    QLabel* m_lines = nullptr;
    QToolButton* m_pin = nullptr;
    QToolButton* m_byLine = nullptr;
    bool m_counting = false;
    BackgroundTask m_lineTask{this};
    QString m_arch = QStringLiteral("sm_90");
    QString m_config;                      // the selected config's JSON
    std::shared_ptr<const Lines> m_shown;  // its lines
    std::shared_ptr<const Lines> m_pinned; // the pinned config's
    bool m_busy = false;
    BackgroundTask m_task{this};
};

} // namespace tilescope::views
