#pragma once

// The Run panel: where measurements come from (a local GPU, a recording to replay, or static
// analysis for an arch), the strategy, seed, budget, shape (or a shape set: all shapes or a list,
// each tuned in turn into the one database) and metrics; Start and Cancel; a
// progress bar with done / total, rate, ETA and the best so far; and the run log, where
// compile errors appear (double-clicking one opens its NVRTC log).
//
// Local GPUs are found by reading the driver's /proc/driver/nvidia/gpus/*/information files: the
// GUI never creates a CUDA context. Without them the CUDA choice is disabled and the panel says
// to replay a recording or analyse offline.

#include "session/sessioncontroller.h"

#include <QString>
#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QBoxLayout;
class QCheckBox;
class QComboBox;
class QDialog;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QWidget;

namespace tilescope::views {

/// An NVIDIA GPU the driver lists.
struct LocalGpu {
    int ordinal = 0; ///< in bus-id order (CUDA's order with CUDA_DEVICE_ORDER=PCI_BUS_ID)
    QString name;    ///< "NVIDIA H200"
    QString busId;   ///< "0000:19:00.0"
};

/// The GPUs the NVIDIA driver lists under `root` (one folder per GPU, named by bus id, holding
/// an "information" file with a "Model:" line), sorted by bus id. Empty without a driver.
std::vector<LocalGpu> probeLocalGpus(const QString& root = QStringLiteral("/proc/driver/nvidia/gpus"));

class RunPanel : public QWidget {
    Q_OBJECT
public:
    /// Log entries kept; older ones are dropped.
    static constexpr int kMaxLogEntries = 5000;

    explicit RunPanel(SessionController* controller, QWidget* parent = nullptr);
    ~RunPanel() override;

    /// The problem to tune (null: none; Start is disabled) and its file (for the window's title and the log).
    void setProblem(std::shared_ptr<const TuningProblem> problem, QString problemPath);
    /// The same problem, edited: the next run takes this snapshot; the panel's choices stay.
    void setEditedProblem(std::shared_ptr<const TuningProblem> problem);
    /// The results database runs write to (created when missing). Default: results.db in the
    /// application's data folder (~/.local/share/Tilescope on Linux).
    void setDatabasePath(QString path);
    QString databasePath() const;

    /// Replaces the local GPUs offered (probeLocalGpus() at construction).
    void setLocalGpus(std::vector<LocalGpu> gpus);
    bool cudaAvailable() const { return !m_gpus.empty(); }
    /// Selects replay of `path`.
    void setReplayRecording(const QString& path);
    /// Selects static analysis for `arch` ("sm_90"); false when the arch is not offered.
    bool setAnalysisArch(const QString& arch);

    /// The backend as the controller takes it: "cuda:0", "replay:/path", "analysis:sm_90"; "" when
    /// the choice is incomplete (replay without a recording, CUDA without a GPU).
    QString backendSpec() const;
    /// The request Start sends; nullopt with `why` set when it cannot start.
    std::optional<SessionController::Request> request(QString* why = nullptr) const;

    /// Opens a window with the full text of log entry `row` (a compile error's NVRTC log) and
    /// returns it; null when the entry has none.
    QDialog* showLogDetails(int row);

    SessionController* controller() const { return m_controller; }
    QComboBox* backendCombo() const { return m_backendCombo; }
    QLabel* driverLabel() const { return m_driverLabel; }
    QLineEdit* recordingEdit() const { return m_recordingEdit; }
    QLineEdit* remoteEdit() const { return m_remoteEdit; }
    QComboBox* archCombo() const { return m_archCombo; }
    QComboBox* strategyCombo() const { return m_strategyCombo; }
    QSpinBox* seedSpin() const { return m_seedSpin; }
    QComboBox* budgetKindCombo() const { return m_budgetKind; }
    QDoubleSpinBox* budgetValueSpin() const { return m_budgetValue; }
    QComboBox* shapeCombo() const { return m_shapeCombo; }
    /// One shape (the Shape above), all shapes, or the shapes listed in shapeListEdit().
    QComboBox* shapeSetCombo() const { return m_shapeSetCombo; }
    QLineEdit* shapeListEdit() const { return m_shapeListEdit; }
    /// With a shape set: the best N configs of every shape measured on every other shape.
    QSpinBox* crossEvalSpin() const { return m_crossEvalSpin; }
    QCheckBox* metricsBox() const { return m_metricsBox; }
    QCheckBox* resumeBox() const { return m_resumeBox; }
    QPushButton* startButton() const { return m_startButton; }
    QPushButton* cancelButton() const { return m_cancelButton; }
    QProgressBar* progressBar() const { return m_progressBar; }
    QLabel* progressLabel() const { return m_progressLabel; }
    QListWidget* logList() const { return m_log; }

public slots:
    /// Starts a run with the panel's settings (reports in the log why it cannot).
    void startRun();
    void cancelRun();

private:
    enum class BackendKind { Cuda, Remote, Replay, Analysis };
    BackendKind backendKind() const;
    void setUpBackendChoices();
    void setUpSearchChoices();
    QFormLayout* makeForm();
    QBoxLayout* makeRunControls();
    void connectController();
    void rebuildBackendChoice();
    void onBackendChanged();
    void browseRecording();
    void browseDatabase();
    void updateBudgetEditor();
    void fillShapes();
    void updateEnabled();
    void appendLog(const RunLogEntry& entry);
    void onProgress(const SessionProgress& progress);
    void onFinished(const SessionSummary& summary);
    void onFailed(const QString& message);

    SessionController* m_controller;
    std::shared_ptr<const TuningProblem> m_problem;
    QString m_problemPath;
    QString m_databasePath;
    std::vector<LocalGpu> m_gpus;

    QComboBox* m_backendCombo;
    QLabel* m_driverLabel;
    QWidget* m_replayRow;
    QLineEdit* m_recordingEdit;
    QLineEdit* m_remoteEdit; // ssh: "user@host/0,1"
    QWidget* m_analysisRow;
    QComboBox* m_archCombo;
    QComboBox* m_strategyCombo;
    QSpinBox* m_seedSpin;
    QComboBox* m_budgetKind;
    QDoubleSpinBox* m_budgetValue;
    QComboBox* m_shapeCombo;
    QComboBox* m_shapeSetCombo;
    QLineEdit* m_shapeListEdit;
    QSpinBox* m_crossEvalSpin;
    QCheckBox* m_metricsBox;
    QCheckBox* m_resumeBox;
    QLabel* m_databaseLabel;
    QPushButton* m_startButton;
    QPushButton* m_cancelButton;
    QProgressBar* m_progressBar;
    QLabel* m_progressLabel;
    QListWidget* m_log;
    std::string m_objectiveName; // of the run in progress
    bool m_runActive = false;    // a run started and has not ended (failed() also reports loads)
};

} // namespace tilescope::views
