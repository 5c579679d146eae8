#pragma once

// Cross-GPU: the same configs compiled for several architectures side by side (default sm_80,
// sm_86, sm_89, sm_90), without owning those GPUs: registers, spill bytes, theoretical occupancy
// and its limiter per arch, with the cells tinted where a config spills on one arch and not on
// another or where its occupancy changes, and a summary line per arch. The configs are a random
// sample of the space (200 by default), the best results of the session, or the selected config.
//
// The compiles run off the GUI thread through core's StaticAnalyzer and CompileService, with
// the on-disk compile cache, in batches, so rows appear as they are ready; Cancel stops after the
// compiles in flight.

#include "common/backgroundtask.h"
#include "model/records.h"
#include "models/crossgpumodel.h"

#include <QString>
#include <QWidget>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;
class QToolButton;

namespace tilescope {
class ConfigCodec;
} // namespace tilescope

namespace tilescope::views {

struct SpaceResult;

class CrossGpuView : public QWidget {
    Q_OBJECT
public:
    enum class Source {
        Sample,      ///< a random sample of the valid configs (count and seed)
        BestResults, ///< the best results of the session (count)
        Selected,    ///< the config selected in the window
    };
    /// Configs compiled per batch: rows appear batch by batch.
    static constexpr int kBatchConfigs = 8;

    explicit CrossGpuView(QWidget* parent = nullptr);
    /// Cancels the analysis in progress and waits for the compiles in flight.
    ~CrossGpuView() override;

    /// The problem, shape and config space to analyse (null: none; an analysis in progress is cancelled).
    void setSpace(std::shared_ptr<const SpaceResult> space);
    /// The session's results, for Source::BestResults.
    void setResults(std::shared_ptr<const std::vector<ResultRecord>> results);
    /// The config selected elsewhere (compact JSON), for Source::Selected; also selects its row.
    void setSelectedConfig(const QString& configJson);

    void setArchs(const std::vector<std::string>& archs);
    std::vector<std::string> archs() const;
    void setSource(Source source);
    Source source() const;
    void setConfigCount(int count);
    int configCount() const;
    void setSeed(std::uint64_t seed);
    /// The compile cache folder ("" = Tilescope's default, $TILESCOPE_CACHE_DIR or ~/.cache/tilescope/compile).
    void setCacheDirectory(const QString& directory) { m_cacheDirectory = directory; }

    /// Starts analysing the chosen configs on the chosen archs (cancelling one in progress).
    void start();
    /// Stops after the compiles in flight; the rows done stay.
    void cancel();
    bool isRunning() const { return m_running; }

    /// Selects the row of a config (compact JSON, any key order); false when it has none.
    bool selectConfig(const QString& configJson);

    CrossGpuModel* model() const { return m_model; }
    QSortFilterProxyModel* proxyModel() const { return m_proxy; }
    QTableView* tableView() const { return m_table; }
    /// The summary as plain text, one line per arch.
    QString summaryText() const;
    QString statusText() const;

signals:
    /// An analysis started: `total` compiles.
    void started(int total);
    void progressed(int done, int total);
    /// The analysis ended (all configs done, cancelled, or failed: statusText() says).
    void finished(bool cancelled);
    /// A row was picked: its config as compact JSON.
    void configSelected(const QString& configJson);

private:
    struct Job;
    // start's steps, off the GUI thread: the configs the job names (those not in the space are
    // counted in `skipped`), and the analysis, which reaches the view only through what it posts.
    static std::vector<std::uint64_t> chooseConfigs(const Job& job, const ConfigCodec& codec, int& skipped);
    static void analyse(const Job& job, const BackgroundJob& task, CrossGpuView* target);

    void buildArchMenu();
    void updateArchButton();
    void updateControls();
    void updateSummary();
    void onRows(std::vector<CrossGpuRow> rows);
    void onProgress(int done, int total);
    void onFinished(bool cancelled, const QString& error, int skipped);
    void onCurrentRowChanged();

    std::shared_ptr<const SpaceResult> m_space;
    std::shared_ptr<const std::vector<ResultRecord>> m_results;
    QString m_selectedConfig;
    QString m_cacheDirectory;
    std::uint64_t m_seed = 0;

    bool m_running = false;

    CrossGpuModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QComboBox* m_sourceCombo = nullptr;
    QSpinBox* m_countSpin = nullptr;
    QToolButton* m_archButton = nullptr;
    QMenu* m_archMenu = nullptr;
    QPushButton* m_runButton = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QCheckBox* m_onlyDifferences = nullptr;
    QLabel* m_summary = nullptr;
    QTableView* m_table = nullptr;
    BackgroundTask m_analysis{this}; // one at a time: a new one waits for the compiles in flight of the one it cancels
};

} // namespace tilescope::views
