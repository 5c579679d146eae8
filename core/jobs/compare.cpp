#include "jobs/compare.h"

#include "base/filewrite.h"
#include "base/textformat.h"
#include "exchange/detection.h"
#include "exchange/recording.h"

#include <filesystem>
#include <sstream>
#include <utility>

namespace tilescope {

CompareSide readCompareSide(const std::string& path, std::optional<std::int64_t> session, bool labelSession,
                            const CompareEvents& events) {
    std::string note;
    SessionData data = readSession(path, session, &note);
    if (!note.empty() && events.sessionPicked)
        events.sessionPicked(note);
    CompareSide side;
    const std::string file = std::filesystem::path(path).filename().string();
    side.label = (data.info.deviceName.empty() ? std::string("unknown device") : data.info.deviceName) + " (" + file +
                 (labelSession && data.info.id > 0 &&
                          detectRecordingFormat(path) == RecordingFormat::TilescopeDatabase
                      ? ", session " + std::to_string(data.info.id)
                      : std::string()) +
                 ")";
    side.info = std::move(data.info);
    side.results = std::move(data.results);
    return side;
}

CompareOutcome runCompare(const CompareRequest& request, const CompareEvents& events) {
    CompareOutcome outcome;
    outcome.a = request.a ? request.a
                          : std::make_shared<const CompareSide>(
                                readCompareSide(request.pathA, request.sessionA, request.labelSessions, events));
    outcome.b = request.b ? request.b
                          : std::make_shared<const CompareSide>(
                                readCompareSide(request.pathB, request.sessionB, request.labelSessions, events));
    outcome.comparison = compareSides(*outcome.a, *outcome.b, request.top);
    if (!request.csvPath.empty()) {
        writeFileAtomically(request.csvPath, comparisonCsv(outcome.comparison));
        outcome.csvWritten = request.csvPath;
    }
    return outcome;
}

std::string comparisonCsv(const DeviceComparison& comparison) {
    std::ostringstream out;
    for (const std::string& p : comparison.shared)
        out << p << ',';
    out << "time_a_ms,time_b_ms,ratio,rank_a,rank_b\n";
    for (const ComparedConfig& x : comparison.configs) {
        for (const std::string& p : comparison.shared) {
            const ConfigValue* v = x.config.find(p);
            out << (v ? v->plain() : std::string()) << ',';
        }
        out << formatDouble("%.4g", x.timeA) << ',' << formatDouble("%.4g", x.timeB) << ','
            << formatDouble("%.4g", x.ratio) << ',' << x.rankA << ',' << x.rankB << '\n';
    }
    return out.str();
}

} // namespace tilescope
