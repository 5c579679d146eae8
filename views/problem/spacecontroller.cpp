#include "problem/spacecontroller.h"

#include "base/error.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <utility>

namespace tilescope::views {

namespace {

// What one condition does: the space built without it, and with it alone. These spaces are
// only counted, never held (a space without a strong condition can be far larger), and a memo
// overflow or a count past a smaller work limit gives "unknown" rather than a long wait.
std::vector<ConditionImpact> measureConditions(const TuningProblem& problem, std::size_t shapeIndex,
                                               std::uint64_t validSize, double rawSize,
                                               const std::function<bool()>& cancelled,
                                               const std::atomic<bool>* cancelFlag) {
    SpaceLimits countOnly;
    countOnly.cancel = cancelFlag;
    countOnly.maxMaterializedBytes = 0;
    countOnly.maxMemoEntries = std::uint64_t(1) << 20;
    countOnly.maxEvaluations /= 16;
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

std::vector<std::vector<double>> countValues(const ConfigSpace& space, bool* estimated,
                                             const std::function<bool()>& cancelled) {
    const int parameters = space.parameterCount();
    std::vector<std::vector<double>> counts(static_cast<std::size_t>(parameters));
    for (int p = 0; p < parameters; ++p)
        counts[static_cast<std::size_t>(p)].assign(space.parameterValues(p).size(), 0.0);
    const bool exact = space.size() <= (space.stats().materialized ? kExactValueCounts : kExactValueCountsLazy);
    if (estimated)
        *estimated = !exact;
    auto tally = [&](const Config& config, double weight) {
        for (int p = 0; p < parameters; ++p)
            counts[static_cast<std::size_t>(p)][config[static_cast<std::size_t>(p)]] += weight;
    };
    constexpr std::uint64_t kCheckEvery = 1 << 16;
    if (exact) {
        for (std::uint64_t i = 0; i < space.size(); ++i) {
            if (i % kCheckEvery == 0 && cancelled())
                return {};
            tally(space.at(i), 1.0);
        }
        return counts;
    }
    const std::vector<std::uint64_t> sample = space.sample(kCheckEvery, 1);
    const double weight =
        static_cast<double>(space.size()) / static_cast<double>(std::max<std::size_t>(1, sample.size()));
    for (std::size_t i = 0; i < sample.size(); ++i) {
        if (i % 4096 == 0 && cancelled())
            return {};
        tally(space.at(sample[i]), weight);
    }
    return counts;
}

SpaceController::SpaceController(QObject* parent)
    : QObject(parent) {}

SpaceController::~SpaceController() {
    // A running build stops soon instead of running to its end, and skips its remaining stages.
    m_buildTask.stop();
    m_sampleTask.stop();
}

void SpaceController::setProblem(std::shared_ptr<const TuningProblem> problem, std::size_t shapeIndex) {
    // The build in flight, if any, is stale: it stops, and what it delivers is dropped. So are
    // samples in flight: they belong to the old space.
    m_buildTask.supersede();
    m_sampleTask.supersede();
    m_samplePending = false;
    m_space.reset();
    m_samples.reset();
    m_impact.reset();
    emit spaceRequested();
    m_buildPending = problem != nullptr;
    updateBusy();
    if (!problem)
        return;

    m_buildTask.start([this, problem = std::move(problem), shapeIndex](const BackgroundJob& job) {
        auto result = std::make_shared<SpaceResult>();
        result->problem = problem;
        result->shapeIndex = shapeIndex;
        try {
            // Counted first without holding the configs (memoised counts answer in milliseconds
            // where enumerating takes a second, and index the space as well); a space whose
            // conditions defeat the memo is enumerated instead.
            SpaceLimits limits;
            limits.cancel = job.cancelFlag();
            SpaceLimits counted = limits;
            counted.maxMaterializedBytes = 0;
            try {
                result->space = std::make_shared<const ConfigSpace>(ConfigSpace::build(*problem, shapeIndex, counted));
            } catch (const UncountableSpace&) {
                throw; // beyond the work limit: enumerating would run into it again
            } catch (const InputError&) {
                result->space = std::make_shared<const ConfigSpace>(ConfigSpace::build(*problem, shapeIndex, limits));
            }
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
        // Posts run on the GUI thread, and only while this job is the newest.
        job.post([this, delivered]() {
            m_space = delivered;
            emit spaceReady(delivered);
            if (delivered->ok())
                startSampling(delivered->space);
            else
                m_buildPending = false;
            updateBusy();
        });
        if (!ok)
            return;

        auto impact = std::make_shared<ConditionImpactSet>();
        impact->space = delivered->space;
        impact->rawSize = delivered->stats.rawSize;
        impact->conditions = measureConditions(
            *problem, shapeIndex, delivered->stats.validSize, delivered->stats.rawSize,
            [&job]() { return job.isSuperseded(); }, job.cancelFlag());
        if (job.isSuperseded())
            return;
        impact->valueCounts =
            countValues(*delivered->space, &impact->valueCountsEstimated, [&job]() { return job.isSuperseded(); });
        if (problem->shapes.size() > 1) {
            SpaceLimits countOnly;
            countOnly.cancel = job.cancelFlag();
            countOnly.maxMaterializedBytes = 0;
            for (std::size_t s = 0; s < problem->shapes.size() && !job.isSuperseded(); ++s) {
                if (s == shapeIndex) {
                    impact->validPerShape.push_back(delivered->stats.validSize);
                    continue;
                }
                try {
                    impact->validPerShape.push_back(ConfigSpace::build(*problem, s, countOnly).size());
                } catch (const std::exception&) {
                    impact->validPerShape.push_back(std::nullopt); // beyond the limits, or cancelled
                }
            }
        }
        if (job.isSuperseded())
            return;
        std::shared_ptr<const ConditionImpactSet> impactDelivered = std::move(impact);
        job.post([this, impactDelivered]() {
            m_impact = impactDelivered;
            m_buildPending = false;
            emit impactReady(impactDelivered);
            updateBusy();
        });
    });
}

void SpaceController::setSampling(int count, std::uint64_t seed) {
    m_sampleCount = std::max(0, count);
    m_seed = seed;
    if (m_space && m_space->ok())
        startSampling(m_space->space);
}

void SpaceController::startSampling(std::shared_ptr<const ConfigSpace> space) {
    m_samplePending = true;
    updateBusy();
    m_sampleTask.start(
        [space = std::move(space), count = m_sampleCount, seed = m_seed]() {
            auto samples = std::make_shared<SampleSet>();
            samples->space = space;
            samples->seed = seed;
            samples->indices = space->sample(static_cast<std::uint64_t>(count), seed);
            samples->configs.reserve(samples->indices.size());
            for (std::uint64_t index : samples->indices)
                samples->configs.push_back(space->at(index));
            return std::shared_ptr<const SampleSet>(std::move(samples));
        },
        [this](std::shared_ptr<const SampleSet> delivered) {
            if (!m_space || m_space->space != delivered->space)
                return;
            m_samples = delivered;
            m_samplePending = false;
            emit samplesReady(delivered);
            updateBusy();
        });
}

void SpaceController::updateBusy() {
    const bool busy = m_buildPending || m_samplePending;
    const bool changed = busy != m_busy;
    m_busy = busy;
    if (changed)
        emit busyChanged(busy);
    if (!busy)
        emit settled();
}

} // namespace tilescope::views
