#include "tuner/sessionprogress.h"

#include "model/configvalues.h"

namespace tilescope {

void SessionTally::count(ResultStatus status, int sign) {
    auto& n = m_progress.counts.byStatus[static_cast<std::size_t>(status)];
    n = sign > 0 ? n + 1 : n - 1;
    m_progress.counts.total = sign > 0 ? m_progress.counts.total + 1 : m_progress.counts.total - 1;
}

void SessionTally::noteImplausible(const ResultRecord& r) {
    if (r.status() == ResultStatus::Implausible &&
        (!m_fastestImplausible || (r.timeMs() > 0 && r.timeMs() < m_fastestImplausible->timeMs())))
        m_fastestImplausible = r;
}

bool SessionTally::addPrior(const ResultRecord& r, std::optional<std::uint64_t> index) {
    count(r.status(), +1);
    noteImplausible(r);
    m_progress.recordedSeconds += r.measurement.compileSeconds + r.measurement.benchmarkSeconds;
    if (r.mayWin() && (!m_progress.best || ranksBefore(r, *m_progress.best, m_rankBy)))
        m_progress.best = r;
    if (index && r.status() == ResultStatus::Skipped)
        m_placeholders.insert(*index);
    if (!index || !isMeasured(r.status()) || !m_done.insert(*index).second)
        return false;
    ++m_progress.done;
    return true;
}

bool SessionTally::add(const ResultRecord& r, std::uint64_t index) {
    noteImplausible(r);
    ++m_progress.thisRun;
    if (m_placeholders.erase(index) > 0)
        count(ResultStatus::Skipped, -1);
    if (r.status() == ResultStatus::Skipped)
        m_placeholders.insert(index);
    count(r.status(), +1);
    m_progress.recordedSeconds += r.measurement.compileSeconds + r.measurement.benchmarkSeconds;
    if (isMeasured(r.status()) && m_done.insert(index).second)
        ++m_progress.done;
    const bool better = r.mayWin() && (!m_progress.best || ranksBefore(r, *m_progress.best, m_rankBy));
    if (better)
        m_progress.best = r;
    return better;
}

void SessionTally::updateRates(double elapsedSeconds) {
    SessionProgress& p = m_progress;
    p.elapsedSeconds = elapsedSeconds;
    p.rate = p.elapsedSeconds > 0 ? static_cast<double>(p.thisRun) / p.elapsedSeconds : 0;
    p.etaSeconds = p.rate > 0 && p.total >= p.done ? static_cast<double>(p.total - p.done) / p.rate : -1;
}

std::string SessionTally::implausibleNote() const {
    const std::uint64_t n = m_progress.counts.of(ResultStatus::Implausible);
    if (n == 0 || !m_fastestImplausible)
        return {};
    return std::to_string(n) + (n == 1 ? " config" : " configs") +
           " ran faster than physics allows and never rank (the fastest, " +
           describeConfig(m_fastestImplausible->config) + ": " + m_fastestImplausible->measurement.message + ")";
}

} // namespace tilescope
