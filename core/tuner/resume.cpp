#include "tuner/resume.h"

#include "tuner/objective.h"

#include <map>

namespace tilescope {

std::optional<ResumedSession> resumeSession(ResultStore& store, const SessionInfo& like,
                                            const std::vector<ProblemFile>* files, std::string* refused) {
    std::optional<SessionInfo> found = store.findResumable(like);
    if (found && files) {
        // The newest session of this tuning tuned with these files; when there is none, what
        // changed since the newest.
        std::string changed = filesChangedSince(store, *found, like, *files);
        if (!changed.empty()) {
            const std::vector<SessionInfo> sessions = store.sessions();
            const SessionInfo newest = *found;
            found.reset();
            for (auto it = sessions.rbegin(); it != sessions.rend() && !found; ++it)
                if (it->id < newest.id && it->state != SessionState::Imported && it->problemHash == like.problemHash &&
                    it->shapeIndex == like.shapeIndex && it->backend == like.backend && it->strategy == like.strategy &&
                    it->seed == like.seed && filesChangedSince(store, *it, like, *files).empty())
                    found = *it;
            if (!found && refused)
                *refused = store.path().string() + ": session " + std::to_string(newest.id) +
                           " of this tuning was tuned with other files, which it does not continue: " + changed;
        }
    }
    if (!found)
        return std::nullopt;
    ResumedSession resumed;
    resumed.id = found->id;
    store.setSessionState(resumed.id, SessionState::Running);
    resumed.prior = store.results(resumed.id);
    resumed.startedAt = found->startedAt;
    return resumed;
}

std::string filesChangedSince(const ResultStore& store, const SessionInfo& stored, const SessionInfo& like,
                              const std::vector<ProblemFile>& now) {
    const auto shortHash = [](const std::string& hash) {
        return hash.empty() ? std::string("none") : hash.substr(0, 12);
    };
    const auto changed = [&](const std::string& path, const std::string& then, const std::string& nowHash) {
        return path + " changed (SHA-256 " + shortHash(then) + " then, " + shortHash(nowHash) + " now)";
    };
    const std::vector<ProblemFile> kept = store.sessionFiles(stored.id, false);
    std::vector<std::string> clauses;
    if (kept.empty()) {
        if (!stored.sourceHash.empty() && !like.sourceHash.empty() && stored.sourceHash != like.sourceHash)
            clauses.push_back(changed("the kernel file", stored.sourceHash, like.sourceHash));
    } else {
        std::map<std::string, const ProblemFile*> byPath;
        for (const ProblemFile& f : now)
            byPath[f.path] = &f;
        for (const ProblemFile& f : kept) {
            const auto it = byPath.find(f.path);
            if (it == byPath.end())
                clauses.push_back(f.path + " is gone");
            else if (it->second->hash != f.hash)
                clauses.push_back(changed(f.path, f.hash, it->second->hash));
            if (it != byPath.end())
                byPath.erase(it);
        }
        for (const auto& [path, file] : byPath)
            clauses.push_back(path + " is new (" + std::string(problemFileRoleName(file->role)) + ")");
    }
    std::string text;
    for (const std::string& c : clauses)
        text += (text.empty() ? "" : "; ") + c;
    return text;
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
