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

std::string noSessionToResume(const ResultStore& store, const SessionInfo& like) {
    std::string text = store.path().string() +
                       " holds no session of this tuning to continue (the same problem, shape, backend, strategy and "
                       "seed)";
    const std::vector<SessionInfo> sessions = store.sessions();
    for (auto it = sessions.rbegin(); it != sessions.rend(); ++it) {
        if (it->state == SessionState::Imported || it->problemHash != like.problemHash ||
            it->shapeIndex != like.shapeIndex)
            continue;
        std::vector<std::string> differs;
        if (it->backend != like.backend)
            differs.push_back("backend (" + it->backend + ", not " + like.backend + ")");
        if (it->strategy != like.strategy)
            differs.push_back("strategy (" + it->strategy + ", not " + like.strategy + ")");
        if (it->seed != like.seed)
            differs.push_back("seed (" + std::to_string(it->seed) + ", not " + std::to_string(like.seed) + ")");
        std::string list;
        for (std::size_t i = 0; i < differs.size(); ++i)
            list += (i == 0 ? "" : i + 1 == differs.size() ? " and " : ", ") + differs[i];
        text +=
            "; session " + std::to_string(it->id) + ", the newest of this problem and shape, differs in its " + list;
        break;
    }
    return text;
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
