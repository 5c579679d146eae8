#include "tuner/failurewatch.h"

#include "spec/tuningproblem.h"
#include "tuner/prune.h"

#include <algorithm>
#include <random>

namespace tilescope {

namespace {

bool mayBeSystematic(ResultStatus s) {
    return s == ResultStatus::CompileError || s == ResultStatus::LaunchError || s == ResultStatus::Crashed;
}

} // namespace

FailureWatch::FailureWatch(const TuningProblem& problem, const ConfigSpace& space, bool enabled)
    : m_problem(problem)
    , m_space(space)
    , m_active(enabled) {}

void FailureWatch::observe(const ResultRecord& r, std::uint64_t index) {
    if (!m_active)
        return;
    const ResultStatus s = r.status();
    if (s == ResultStatus::Skipped || s == ResultStatus::Pruned)
        return; // says nothing either way
    if (!mayBeSystematic(s) || (!m_configs.empty() && (s != m_status || r.measurement.message != m_message))) {
        m_active = false; // a config ran, or failed otherwise: the parameters matter
        return;
    }
    m_status = s;
    m_message = r.measurement.message;
    m_configs.push_back(m_space.at(index));
}

// Every parameter with several values took at least two of them among the failed configs.
bool FailureWatch::noParameterExplains() const {
    for (std::size_t p = 0; p < m_problem.parameters.size(); ++p) {
        if (m_problem.parameters[p].values.size() < 2)
            continue;
        const std::uint16_t first = m_configs.front()[p];
        if (std::all_of(m_configs.begin(), m_configs.end(), [&](const Config& c) { return c[p] == first; }))
            return false;
    }
    return true;
}

std::string FailureWatch::check(const std::unordered_set<std::uint64_t>& done, std::uint64_t seed,
                                const CompileProbe& probe) {
    m_nextCheck *= 2;
    if (m_status == ResultStatus::CompileError && probe) {
        // A few configs from anywhere in the space: compiles are cheap (and cached for later).
        std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + m_configs.size());
        std::vector<std::future<CompileResult>> probes;
        for (int tries = 0; probes.size() < 4 && tries < 64; ++tries) {
            const std::uint64_t index = rng() % m_space.size();
            if (done.count(index))
                continue;
            Config config = m_space.at(index);
            probes.push_back(probe(config));
            m_configs.push_back(std::move(config));
            ++m_probed;
        }
        for (auto& p : probes) {
            const CompileResult cr = p.get();
            if (cr.ok() || compileFailure(cr) != m_message) {
                m_active = false;
                return {};
            }
        }
    }
    if (!noParameterExplains())
        return {};
    const std::size_t tried = m_configs.size() - m_probed;
    return "every config failed the same way, whatever its parameters, so the problem or its kernel is at fault: " +
           std::string(statusName(m_status)) + ": " + m_message + " (the first " + std::to_string(tried) +
           " configs of this run" +
           (m_probed > 0 ? " and " + std::to_string(m_probed) + " more compiled from across the space"
                         : std::string()) +
           ")";
}

} // namespace tilescope
