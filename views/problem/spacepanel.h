#pragma once

// The Config space panel: the size of the space of the current shape (valid and raw), the valid
// share, how long it took to enumerate, condition errors and the order parameters were bound in,
// then a table of uniformly sampled configs (count and seed selectable). Shows a busy indicator
// while the space controller works and an inline error when the space cannot be built.

#include <QWidget>

#include <memory>

class QLabel;
class QProgressBar;
class QSpinBox;
class QTableView;
class QToolButton;

namespace tilescope::views {

class ErrorBanner;
class SampleModel;
class SpaceController;
class StatTile;
struct SampleSet;
struct SpaceResult;

class SpacePanel : public QWidget {
    Q_OBJECT
public:
    explicit SpacePanel(SpaceController* controller, QWidget* parent = nullptr);
    ~SpacePanel() override;

    SampleModel* sampleModel() const { return m_samples; }
    /// The text of a statistic ("valid", "raw", "share", "time", "errors", "order", "details"), for tests.
    QString statText(const QString& name) const;
    ErrorBanner* errorBanner() const { return m_error; }
    QSpinBox* seedBox() const { return m_seedBox; }
    QSpinBox* countBox() const { return m_countBox; }
    QTableView* sampleView() const { return m_sampleView; }

private:
    void onSpaceRequested();
    void onSpaceReady(const std::shared_ptr<const SpaceResult>& result);
    void onSamplesReady(const std::shared_ptr<const SampleSet>& samples);
    void onBusyChanged(bool busy);
    void applySampling();
    void clearStats(const QString& placeholder);

    SpaceController* m_controller;
    SampleModel* m_samples;
    ErrorBanner* m_error = nullptr;
    QLabel* m_title = nullptr;
    QProgressBar* m_busyBar = nullptr;
    QLabel* m_busyLabel = nullptr;
    StatTile* m_valid = nullptr;
    StatTile* m_raw = nullptr;
    StatTile* m_share = nullptr;
    StatTile* m_time = nullptr;
    StatTile* m_errors = nullptr;
    QLabel* m_order = nullptr;
    QLabel* m_details = nullptr;
    QLabel* m_sampleTitle = nullptr;
    QSpinBox* m_countBox = nullptr;
    QSpinBox* m_seedBox = nullptr;
    QToolButton* m_reseed = nullptr;
    QTableView* m_sampleView = nullptr;
};

} // namespace tilescope::views
