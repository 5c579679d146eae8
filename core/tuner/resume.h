#pragma once

// Resuming: a run continues the newest stored session of the same tuning (problem, shape,
// backend, strategy, seed; ResultStore::findResumable). Its results count as done, and the
// strategy observes them first, so it never proposes them again.

#include "exchange/configcodec.h"
#include "search/strategy.h"
#include "space/configspace.h"
#include "store/resultstore.h"
#include "tuner/sessionprogress.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

/// A stored session that a run continues.
struct ResumedSession {
    std::int64_t id = 0;
    std::string startedAt; ///< of its first run
    std::vector<ResultRecord> prior;
};

/// The session of `store` that a run described by `like` continues, marked running again, with
/// its results; nullopt when there is none. With `files` (what the run tunes with,
/// spec/problemfiles.h), the newest such session tuned with the same files: when only sessions
/// tuned with other files are there, nullopt, and `refused` (when given) says what changed since
/// the newest (filesChangedSince).
std::optional<ResumedSession> resumeSession(ResultStore& store, const SessionInfo& like,
                                            const std::vector<ProblemFile>* files = nullptr,
                                            std::string* refused = nullptr);

/// How the files a run would tune with (`now`, and the kernel's hash in `like.sourceHash`) differ
/// from those `stored`, a session of `store`, was tuned with: "tiny.cu changed (SHA-256
/// 1a2b3c4d5e6f then, 0f1e2d3c4b5a now)", clauses joined by "; " ("" when none differs). A
/// session that kept no files compares its kernel's hash only. Data files compare by hash, kept
/// or not.
std::string filesChangedSince(const ResultStore& store, const SessionInfo& stored, const SessionInfo& like,
                              const std::vector<ProblemFile>& now);

/// What to tell a run asked to resume that found no session to continue: that `store` holds none
/// of this tuning ("results.db holds no session of this tuning to continue ..."), and how the
/// newest session of the same problem and shape differs from `like` (its backend, strategy or
/// seed), when there is one. The run then starts a new session.
std::string noSessionToResume(const ResultStore& store, const SessionInfo& like);

/// Where a stored result's config is in `space`: its recorded index while that still holds the
/// same values, else found by its values; nullopt when the space no longer has it.
std::optional<std::uint64_t> spaceIndexOf(const ResultRecord& r, const ConfigSpace& space, const ConfigCodec& codec);

/// Counts a resumed session's results into `tally` and returns what the strategy observes of
/// them: one observation per config they make done.
std::vector<Observation> takePrior(const std::vector<ResultRecord>& prior, const ConfigSpace& space,
                                   const ConfigCodec& codec, SessionTally& tally);

} // namespace tilescope
