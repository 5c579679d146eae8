#pragma once

// Compile check without a GPU: a sample of the space's valid configs compiled with NVRTC for a
// chosen architecture, with what ptxas reports (registers, spills, shared memory) and the
// theoretical occupancy and its limiter; a failed compile's errors listed by source line (a
// double click shows the line in the Kernel Source panel); and, when some configs spill, the
// register-pressure rule that would prune them, added to the conditions in one click; and the
// tuning parameters whose values do not reach the compiled kernel (analysis/inertcheck.h).
// A row picked is a config picked: the window shows it in Details (what the compile told, from
// the sample when the results do not hold it) and its spilling lines in Kernel Source.

#include "common/backgroundtask.h"
#include "session/sessiontypes.h"

#include <QString>
#include <QWidget>

#include <memory>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace tilescope {
class TuningProblem;
}

namespace tilescope::views {

class ProblemDocument;
class SpaceController;

class CompileCheckPanel : public QWidget {
    Q_OBJECT
public:
    CompileCheckPanel(ProblemDocument* document, SpaceController* space, QWidget* parent = nullptr);
    ~CompileCheckPanel() override;

    QComboBox* archBox() const { return m_arch; }
    QSpinBox* countBox() const { return m_count; }
    QPushButton* compileButton() const { return m_compile; }
    QTableWidget* table() const { return m_table; }
    /// "kernel.cu:12: error: ..." for each error line of the failed compiles.
    QListWidget* errorList() const { return m_errors; }
    QLabel* ruleLabel() const { return m_rule; }
    /// The warning that tuning parameters do not change the compiled kernel (hidden when none).
    QLabel* inertLabel() const { return m_inert; }
    QPushButton* addRuleButton() const { return m_addRule; }
    bool isBusy() const { return m_busy; }

    /// Compiles a sample of the current space's valid configs for the chosen arch.
    void compileSample();

    /// The last sample as results that were compiled and not run, in the table's order (empty
    /// before a check, and after another problem opened): registers, spills, shared memory, block
    /// size and occupancy as compiled for sampleArch(); a failed compile as a compile error with
    /// its log. Status Skipped for those that compiled: they were never measured.
    ResultsSnapshot sample() const { return m_sample; }
    /// The arch the sample was compiled for ("" before a check).
    std::string sampleArch() const { return m_sampleArch; }
    /// The config (compact JSON) of a row of the table; "" outside it.
    QString configAt(int row) const;
    /// Selects the row of a config (compact JSON, as the results view gives it); "" or a config
    /// not in the sample clears the selection. Emits nothing.
    void selectConfig(const QString& configJson);

signals:
    /// A row was picked: its config (compact JSON).
    void configSelected(const QString& configJson);
    /// sample() changed: a check finished, or another problem opened.
    void sampleChanged();
    /// The user asked to see a line of the kernel source (1-based).
    void showSourceLine(int line);
    /// A compile check finished (or failed to start).
    void finished();

private:
    struct Outcome;
    void show(const std::shared_ptr<const Outcome>& outcome);
    void addRule();
    void clear(); // another problem: the sample was of the one before
    void fitConfigColumn();
    bool eventFilter(QObject* watched, QEvent* event) override;

    ProblemDocument* m_document;
    SpaceController* m_space;
    QComboBox* m_arch = nullptr;
    QSpinBox* m_count = nullptr;
    QPushButton* m_compile = nullptr;
    QLabel* m_status = nullptr;
    QTableWidget* m_table = nullptr;
    QListWidget* m_errors = nullptr;
    QLabel* m_inert = nullptr;
    QLabel* m_rule = nullptr;
    QPushButton* m_addRule = nullptr;
    std::string m_suggested; // the rule the button adds
    ResultsSnapshot m_sample;
    std::string m_sampleArch;
    bool m_selecting = false; // selectConfig() at work: the table's own signal is not the user's
    bool m_busy = false;
    BackgroundTask m_task{this};
};

} // namespace tilescope::views
