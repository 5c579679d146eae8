#include "tuner/resume.h"

#include "tuner/objective.h"

namespace tilescope {

std::optional<ResumedSession> resumeSession(ResultStore& store, const SessionInfo& like) {
    const std::optional<SessionInfo> found = store.findResumable(like);
    if (!found)
        return std::nullopt;
    ResumedSession resumed;
    resumed.id = found->id;
    store.setSessionState(resumed.id, SessionState::Running);
    resumed.prior = store.results(resumed.id);
    resumed.startedAt = found->startedAt;
    return resumed;
}

std::optional<std::uint64_t> spaceIndexOf(const ResultRecord& r, const ConfigSpace& space, const ConfigCodec& codec) {
    const std::optional<std::uint64_t> index = r.spaceIndex;
    if (index && *index < space.size() && codec.toValues(space.at(*index)) == r.config)
        return index;
    return codec.indexOf(r.config);
}

std::vector<Observation> takePrior(const std::vector<ResultRecord>& prior, const ConfigSpace& space,
                                   const ConfigCodec& codec, SessionTally& tally) {
    std::vector<Observation> observations;
    for (const ResultRecord& r : prior) {
        const std::optional<std::uint64_t> index = spaceIndexOf(r, space, codec);
        if (tally.addPrior(r, index))
            observations.push_back(observationOf(r, *index, true));
    }
    return observations;
}

} // namespace tilescope
