#include "jobs/export.h"

#include "base/error.h"
#include "base/filewrite.h"
#include "exchange/bestconfigs.h"
#include "exchange/cppheader.h"
#include "exchange/recording.h"
#include "model/configjson.h"
#include "store/resultstore.h"

#include <utility>

namespace tilescope {

namespace {

bool holdsOneSession(ExportFormat format) {
    return format == ExportFormat::T4 || format == ExportFormat::KernelTunerCache;
}

// The sessions of the request's database that go into the export, loaded.
std::vector<SessionData> readSessions(const ExportRequest& request, const ExportEvents& events) {
    const ResultStore store = openResults(request.database);
    std::vector<SessionInfo> sessions = store.sessions();
    if (request.session) {
        std::erase_if(sessions, [&](const SessionInfo& s) { return s.id != *request.session; });
        if (sessions.empty())
            throw InputError(request.database, "--session", "no session " + std::to_string(*request.session));
    }
    if (sessions.empty())
        throw InputError(request.database, "", "the database holds no sessions to export");

    std::vector<SessionData> data;
    if (holdsOneSession(request.options.format) && !request.session) {
        // T4 and a Kernel Tuner cache hold one session: the newest with results.
        const SessionInfo* pick = &sessions.back();
        for (auto it = sessions.rbegin(); it != sessions.rend(); ++it)
            if (store.resultCount(it->id) > 0) {
                pick = &*it;
                break;
            }
        if (sessions.size() > 1 && events.sessionPicked)
            events.sessionPicked(pick->id, sessions.size());
        data.push_back(store.load(pick->id));
    } else {
        for (const SessionInfo& s : sessions)
            data.push_back(store.load(s.id));
    }
    return data;
}

} // namespace

ExportOutcome runExport(const ExportRequest& request, const ExportEvents& events) {
    std::vector<SessionData> read;
    if (request.sessions.empty())
        read = readSessions(request, events);
    const std::vector<SessionData>& sessions = request.sessions.empty() ? read : request.sessions;

    ExportOutcome outcome;
    outcome.text =
        exportResults(sessions, request.options, request.source.empty() ? request.database : request.source);
    for (const SessionData& s : sessions)
        outcome.sessions.push_back(s.info);
    if (!request.output.empty() && request.output != "-")
        outcome.written = writeExport(request.output, outcome.text, request.options.format, request.outputLocation);
    return outcome;
}

ExportWritten writeExport(const std::string& path, std::string_view text, ExportFormat format,
                          const std::string& location) {
    // Whole or not at all: a failed export leaves an earlier file of that name as it was.
    writeFileAtomically(path, text, location);
    return ExportWritten{path, exportFormatName(format), text.size()};
}

std::optional<ExportWritten> exportChosenConfig(const SessionInfo& session, const std::vector<ResultRecord>& results,
                                 const std::string& configJson, const std::string& path) {
    const ResultRecord* chosen = nullptr;
    for (const ResultRecord& r : results)
        if (r.ok() && tilescope::configJson(r.config) == configJson && (!chosen || ranksBefore(r, *chosen)))
            chosen = &r;
    if (!chosen)
        return std::nullopt;
    const std::vector<BestConfig> entry = {bestConfigOf(session, *chosen)};
    const bool header = path.ends_with(".h") || path.ends_with(".hpp");
    return writeExport(path, header ? writeCppHeader(entry) : writeBestConfigsJson(entry),
                       header ? ExportFormat::CppHeader : ExportFormat::BestConfigsJson);
}

} // namespace tilescope
