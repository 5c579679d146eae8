#pragma once

// Builds config spaces off the GUI thread and delivers them in stages through signals on the
// GUI thread: the space and its statistics first, then a sample of configs, then what each
// condition removes. Only the newest request counts: results of older ones are dropped.

#include "common/backgroundtask.h"
#include "models/spacetypes.h"

#include "space/configspace.h"
#include "spec/tuningproblem.h"

#include <QObject>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace tilescope::views {

/// Spaces of at most this many valid configs get exact per-value counts: held in memory, or
/// (indexed through memoised counts, each config costlier to reach) at most the second.
inline constexpr std::uint64_t kExactValueCounts = 4'000'000;
inline constexpr std::uint64_t kExactValueCountsLazy = 250'000;

/// How many valid configs keep each value of each parameter (see ConditionImpactSet).
std::vector<std::vector<double>> countValues(const ConfigSpace& space, bool* estimated,
                                             const std::function<bool()>& cancelled);

class SpaceController : public QObject {
    Q_OBJECT
public:
    explicit SpaceController(QObject* parent = nullptr);
    /// Cancels the build in progress, if any, and waits for it (the stages after it are skipped).
    ~SpaceController() override;

    /// Builds the space of `problem` for shape `shapeIndex` (null: clears), then samples it and
    /// measures the conditions. Results of earlier requests that arrive later are dropped.
    void setProblem(std::shared_ptr<const TuningProblem> problem, std::size_t shapeIndex);
    /// How many configs to sample and with which seed; re-samples the current space.
    void setSampling(int count, std::uint64_t seed);

    int sampleCount() const { return m_sampleCount; }
    std::uint64_t seed() const { return m_seed; }
    /// True while a request has not delivered all its stages.
    bool isBusy() const { return m_busy; }

    std::shared_ptr<const SpaceResult> currentSpace() const { return m_space; }
    std::shared_ptr<const SampleSet> currentSamples() const { return m_samples; }
    std::shared_ptr<const ConditionImpactSet> currentImpact() const { return m_impact; }

signals:
    /// A build started (the previous results are stale from now on).
    void spaceRequested();
    void spaceReady(std::shared_ptr<const tilescope::views::SpaceResult> result);
    void samplesReady(std::shared_ptr<const tilescope::views::SampleSet> samples);
    void impactReady(std::shared_ptr<const tilescope::views::ConditionImpactSet> impact);
    void busyChanged(bool busy);
    /// Every stage of the newest request has been delivered.
    void settled();

private:
    void startSampling(std::shared_ptr<const ConfigSpace> space);
    void updateBusy();

    bool m_buildPending = false;  // the newest build has not delivered all its stages
    bool m_samplePending = false; // the newest sample has not been delivered
    int m_sampleCount = 20;
    std::uint64_t m_seed = 1;
    bool m_busy = false;
    std::shared_ptr<const SpaceResult> m_space;
    std::shared_ptr<const SampleSet> m_samples;
    std::shared_ptr<const ConditionImpactSet> m_impact;

    BackgroundTask m_buildTask{this};  // one build at a time: a new request supersedes (cancels) the one in flight
    BackgroundTask m_sampleTask{this}; // re-sampling does not wait behind a build
};

} // namespace tilescope::views
