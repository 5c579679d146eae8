#include "problem/spacecontroller.h"

#include "base/error.h"

#include <QThreadPool>

#include <algorithm>
#include <exception>
#include <functional>
#include <utility>

namespace tilescope::views {

namespace {

// What one condition does: the space built without it, and with it alone. These spaces are
// only counted, never held (a space without a strong condition can be far larger), and a memo
// overflow gives "unknown" rather than a long wait.
std::vector<ConditionImpact> measureConditions(const TuningProblem& problem, std::size_t shapeIndex,
                                               std::uint64_t validSize, double rawSize,
                                               const std::function<bool()>& cancelled,
                                               const std::atomic<bool>* cancelFlag) {
    SpaceLimits countOnly;
    countOnly.cancel = cancelFlag;
    countOnly.maxMaterializedBytes = 0;
    countOnly.maxMemoEntries = std::uint64_t(1) << 20;
    std::vector<ConditionImpact> out(problem.conditions.size());
    for (std::size_t c = 0; c < problem.conditions.size(); ++c) {
        if (cancelled())
            return {};
        try {
            TuningProblem without = problem;
            without.conditions.erase(without.conditions.begin() + static_cast<std::ptrdiff_t>(c));
            const std::uint64_t size = ConfigSpace::build(without, shapeIndex, countOnly).size();
            out[c].removed = size >= validSize ? size - validSize : 0;
        } catch (const std::exception&) {
            // Too large to count within the limits: left unknown.
        }
        if (cancelled())
            return {};
        try {
            TuningProblem alone = problem;
            alone.conditions = {problem.conditions[c]};
            const double size = static_cast<double>(ConfigSpace::build(alone, shapeIndex, countOnly).size());
            out[c].rejected = rawSize - size;
        } catch (const std::exception&) {
        }
    }
    return out;
}

} // namespace

SpaceController::SpaceController(QObject* parent)
    : QObject(parent)
    , m_buildPool(std::make_unique<QThreadPool>())
    , m_samplePool(std::make_unique<QThreadPool>()) {
    m_buildPool->setMaxThreadCount(1);
    m_samplePool->setMaxThreadCount(1);
}

SpaceController::~SpaceController() {
    m_cancelBuild->store(true); // a running build stops soon instead of running to its end
    ++m_buildGeneration;        // the running task skips its remaining stages
    ++m_sampleGeneration;
    m_buildPool->clear();
    m_samplePool->clear();
    m_buildPool->waitForDone();
    m_samplePool->waitForDone();
}

void SpaceController::setProblem(std::shared_ptr<const TuningProblem> problem, std::size_t shapeIndex) {
    const std::uint64_t generation = ++m_buildGeneration;
    m_cancelBuild->store(true); // the build in flight, if any, is stale: stop it
    m_cancelBuild = std::make_shared<std::atomic<bool>>(false);
    m_buildPool->clear(); // queued builds that have not started are stale
    // Samples in flight belong to the old space: nothing to wait for any more.
    m_samplesDone = ++m_sampleGeneration;
    m_space.reset();
    m_samples.reset();
    m_impact.reset();
    emit spaceRequested();
    if (!problem) {
        m_buildsDone = generation;
        updateBusy();
        return;
    }
    updateBusy();

    m_buildPool->start([this, generation, problem = std::move(problem), shapeIndex, cancel = m_cancelBuild]() {
        auto result = std::make_shared<SpaceResult>();
        result->problem = problem;
        result->shapeIndex = shapeIndex;
        try {
            SpaceLimits limits;
            limits.cancel = cancel.get();
            result->space = std::make_shared<const ConfigSpace>(ConfigSpace::build(*problem, shapeIndex, limits));
            result->stats = result->space->stats();
        } catch (const Cancelled&) {
            return; // a newer request replaced this one
        } catch (const InputError& e) {
            result->errorLocation = QString::fromStdString(e.location());
            result->errorMessage = QString::fromStdString(e.message());
        } catch (const std::exception& e) {
            result->errorMessage = QString::fromStdString(e.what());
        }
        const bool ok = result->ok();
        std::shared_ptr<const SpaceResult> delivered = std::move(result);
        QMetaObject::invokeMethod(
            this,
            [this, generation, delivered]() {
                if (generation != m_buildGeneration)
                    return;
                m_space = delivered;
                emit spaceReady(delivered);
                if (delivered->ok())
                    startSampling(delivered->space);
                else
                    m_buildsDone = generation;
                updateBusy();
            },
            Qt::QueuedConnection);
        if (!ok)
            return;

        auto cancelled = [this, generation]() { return generation != m_buildGeneration.load(); };
        auto impact = std::make_shared<ConditionImpactSet>();
        impact->space = delivered->space;
        impact->rawSize = delivered->stats.rawSize;
        impact->conditions = measureConditions(*problem, shapeIndex, delivered->stats.validSize,
                                               delivered->stats.rawSize, cancelled, cancel.get());
        if (cancelled())
            return;
        std::shared_ptr<const ConditionImpactSet> impactDelivered = std::move(impact);
        QMetaObject::invokeMethod(
            this,
            [this, generation, impactDelivered]() {
                if (generation != m_buildGeneration)
                    return;
                m_impact = impactDelivered;
                m_buildsDone = generation;
                emit impactReady(impactDelivered);
                updateBusy();
            },
            Qt::QueuedConnection);
    });
}

void SpaceController::setSampling(int count, std::uint64_t seed) {
    m_sampleCount = std::max(0, count);
    m_seed = seed;
    if (m_space && m_space->ok())
        startSampling(m_space->space);
}

void SpaceController::startSampling(std::shared_ptr<const ConfigSpace> space) {
    const std::uint64_t generation = ++m_sampleGeneration;
    m_samplePool->clear();
    updateBusy();
    m_samplePool->start([this, generation, space = std::move(space), count = m_sampleCount, seed = m_seed]() {
        if (generation != m_sampleGeneration.load())
            return;
        auto samples = std::make_shared<SampleSet>();
        samples->space = space;
        samples->seed = seed;
        samples->indices = space->sample(static_cast<std::uint64_t>(count), seed);
        samples->configs.reserve(samples->indices.size());
        for (std::uint64_t index : samples->indices)
            samples->configs.push_back(space->at(index));
        std::shared_ptr<const SampleSet> delivered = std::move(samples);
        QMetaObject::invokeMethod(
            this,
            [this, generation, delivered]() {
                if (generation != m_sampleGeneration || !m_space || m_space->space != delivered->space)
                    return;
                m_samples = delivered;
                m_samplesDone = generation;
                emit samplesReady(delivered);
                updateBusy();
            },
            Qt::QueuedConnection);
    });
}

void SpaceController::updateBusy() {
    const bool busy = m_buildsDone != m_buildGeneration || m_samplesDone != m_sampleGeneration;
    const bool changed = busy != m_busy;
    m_busy = busy;
    if (changed)
        emit busyChanged(busy);
    if (!busy)
        emit settled();
}

} // namespace tilescope::views
