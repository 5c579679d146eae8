#include "exchange/recording.h"

#include "base/error.h"
#include "base/jsonreader.h"
#include "base/sha256.h"
#include "exchange/detection.h"
#include "exchange/kerneltunercache.h"
#include "exchange/recordcheck.h"
#include "exchange/t4.h"
#include "exchange/textfile.h"
#include "store/resultstore.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

namespace tilescope {

ResultStore openResults(const std::filesystem::path& path) {
    std::error_code ec;
    if (ResultStore::isDatabaseFile(path) || !std::filesystem::exists(path, ec))
        return ResultStore::open(path, StoreMode::ReadOnly); // which says what a missing database needs
    std::vector<SessionData> sessions = readRecording(path);
    ResultStore store = ResultStore::openInMemory();
    for (SessionData& session : sessions)
        importSession(store, std::move(session), path.string()); // named as the user gave it, as `import` does
    return store;
}

std::vector<SessionData> readRecording(const std::filesystem::path& path) {
    const std::string name = path.string();
    if (ResultStore::isDatabaseFile(path)) {
        const ResultStore store = ResultStore::open(path, StoreMode::ReadOnly);
        std::vector<SessionData> out;
        for (const SessionInfo& s : store.sessions()) {
            out.push_back(store.load(s.id));
            // A database may hold what an older version imported unchecked, or a hand's edit.
            checkRecordedSession(out.back(), name);
        }
        if (out.empty())
            throw InputError(name, "", "the database holds no sessions");
        return out;
    }
    const std::string text = exchange::readText(path);
    switch (recordingFormatOfText(text)) {
    case RecordingFormat::T4:
        return {parseT4(text, name)};
    case RecordingFormat::KernelTunerCache:
        return {parseKernelTunerCache(text, name)};
    case RecordingFormat::BestConfigs:
        throw InputError(name, "",
                         "a best-config JSON holds only winners, not a recording; use a T4 file, a Kernel "
                         "Tuner cache or a Tilescope database");
    case RecordingFormat::TuningProblem:
        throw InputError(name, "",
                         "a tuning problem (T1), not a recording; recorded results are a T4 file, a Kernel Tuner "
                         "cache or a Tilescope database");
    case RecordingFormat::TilescopeDatabase:
    case RecordingFormat::Unknown:
        break;
    }
    (void)parseJson(text, name); // a file that is no JSON: throws with the line and column
    throw InputError(name, "",
                     "not a recording: expected a T4 results file, a Kernel Tuner cache or a Tilescope "
                     "database");
}

std::int64_t importSession(ResultStore& store, SessionData data, const std::string& source) {
    SessionInfo info = data.info;
    info.state = SessionState::Imported;
    if (info.backend.empty() || info.backend.rfind("import:", 0) != 0)
        info.backend = "import:" + source + (info.backend.empty() ? "" : " (" + info.backend + ")");
    if (info.startedAt.empty())
        info.startedAt = nowIso8601();
    if (info.endedAt.empty())
        info.endedAt = nowIso8601();
    if (info.parameters.empty() && !data.results.empty())
        for (const auto& [name, value] : data.results.front().config)
            info.parameters.push_back(name);
    const std::int64_t id = store.createSession(info);
    store.appendMany(id, data.results);
    return id;
}

SessionData readSession(const std::filesystem::path& path, std::optional<std::int64_t> sessionId, std::string* note) {
    std::vector<SessionData> sessions = readRecording(path);
    const std::string name = path.filename().string();
    if (sessions.empty())
        throw InputError(name, "", "holds no sessions");
    if (sessionId) {
        std::string ids;
        for (SessionData& s : sessions) {
            if (s.info.id == *sessionId)
                return std::move(s);
            ids += (ids.empty() ? "" : ", ") + std::to_string(s.info.id);
        }
        throw InputError(name, "--session", "no session " + std::to_string(*sessionId) + " (sessions: " + ids + ")");
    }
    std::size_t pick = sessions.size() - 1;
    for (std::size_t i = sessions.size(); i-- > 0;) {
        if (std::any_of(sessions[i].results.begin(), sessions[i].results.end(),
                        [](const ResultRecord& r) { return r.ok(); })) {
            pick = i;
            break;
        }
    }
    if (note && sessions.size() > 1)
        *note = name + " holds " + std::to_string(sessions.size()) + " sessions; taking session " +
                std::to_string(sessions[pick].info.id) + ", the newest with results";
    return std::move(sessions[pick]);
}

std::string sessionFingerprint(const SessionData& session) {
    Sha256 h;
    const SessionInfo& info = session.info;
    for (const std::string& field : {info.kernel, info.shapeLabel(), info.deviceName, info.strategy})
        h.updateField(field);
    h.updateU64(info.seed);
    std::vector<std::string> lines;
    lines.reserve(session.results.size());
    for (const ResultRecord& r : session.results) {
        char time[64];
        std::snprintf(time, sizeof time, "%.9g|%d", r.measurement.time.medianMs, r.measurement.time.samples);
        lines.push_back(configKey(r.config) + "|" + std::string(statusName(r.status())) + "|" + time);
    }
    std::sort(lines.begin(), lines.end());
    h.updateU64(lines.size());
    for (const std::string& line : lines)
        h.updateField(line);
    return Sha256::hex(h.finish());
}

} // namespace tilescope
