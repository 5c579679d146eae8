#pragma once

// Where a session stands, and how each result moves it: counts per status, the configs done,
// the best so far, the device time spent, the rate. Results of a resumed session's earlier runs
// count too; a config stored as skipped (a placeholder) counts as done once a later result
// replaces it.

#include "model/records.h"
#include "store/resultstore.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>

namespace tilescope {

/// Where a session stands.
struct SessionProgress {
    std::uint64_t done = 0;           ///< configs with a final result (prior runs included)
    std::uint64_t total = 0;          ///< configs the session evaluates at most: the budget's count or the space
    std::uint64_t thisRun = 0;        ///< results stored by this run
    StatusCounts counts;              ///< the session's results per status (prior runs included)
    std::optional<ResultRecord> best; ///< the best timed result, else the best analysed one (bestOf)
    double elapsedSeconds = 0;        ///< wall time of this run
    double recordedSeconds = 0;       ///< compile + benchmark time of the session's results: what the device spent
    double rate = 0;                  ///< results per second of wall time, this run
    double etaSeconds = -1;           ///< wall time left at that rate (-1: unknown)
};

/// The tally of a session's results into its progress.
class SessionTally {
public:
    const SessionProgress& progress() const { return m_progress; }
    /// Configs (space indices) with a final result: any status but Skipped.
    const std::unordered_set<std::uint64_t>& done() const { return m_done; }
    /// Configs whose stored result is Skipped, a placeholder a later result replaces.
    std::size_t skipped() const { return m_placeholders.size(); }

    /// A result stored before this run (a resumed session's), of config `index` when the space
    /// has it. Returns whether it makes its config done (a strategy observes it then).
    bool addPrior(const ResultRecord& r, std::optional<std::uint64_t> index);
    /// A result of this run, of config `index`, replacing its placeholder if it had one. Returns
    /// whether it is the new best.
    bool add(const ResultRecord& r, std::uint64_t index);
    /// Device time spent besides the results' own (the final round).
    void addRecordedSeconds(double seconds) { m_progress.recordedSeconds += seconds; }
    /// A stored result's status changed from `from` to `to` (verified again).
    void restatus(ResultStatus from, ResultStatus to) {
        count(from, -1);
        count(to, +1);
    }
    /// The best as stored now (after the final round measured the leaders again).
    void setBest(std::optional<ResultRecord> best) { m_progress.best = std::move(best); }
    /// How results analysed, not timed, rank for the best (before any is added).
    void setRankBy(StaticRank by) { m_rankBy = by; }
    void setTotal(std::uint64_t total) { m_progress.total = total; }
    /// The rate and the time left after `elapsedSeconds` of this run.
    void updateRates(double elapsedSeconds);

    /// For people: how many configs ran faster than physics allows, and the fastest one's reason;
    /// "" when none did.
    std::string implausibleNote() const;

private:
    void count(ResultStatus status, int sign);
    void noteImplausible(const ResultRecord& r);

    SessionProgress m_progress;
    StaticRank m_rankBy = StaticRank::Occupancy;
    std::unordered_set<std::uint64_t> m_done;
    std::unordered_set<std::uint64_t> m_placeholders;
    std::optional<ResultRecord> m_fastestImplausible; // prior runs included
};

} // namespace tilescope
