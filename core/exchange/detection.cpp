#include "exchange/detection.h"

#include "base/jsonreader.h"
#include "exchange/textfile.h"
#include "store/resultstore.h"

#include <nlohmann/json.hpp>

#include <string_view>
#include <utility>

namespace tilescope {

using Json = nlohmann::ordered_json;

namespace {

constexpr std::size_t kHeadBytes = std::size_t{1} << 20;

bool isProblem(const Json& doc) {
    return doc.contains("ConfigurationSpace") || doc.contains("KernelSpecification");
}

RecordingFormat formatOfJson(const Json& doc) {
    if (!doc.is_object())
        return RecordingFormat::Unknown;
    if (doc.contains("cache") && (doc.contains("tune_params_keys") || doc.contains("kernel_name")))
        return RecordingFormat::KernelTunerCache;
    if (doc.contains("results"))
        return RecordingFormat::T4;
    if (const auto it = doc.find("format"); it != doc.end() && *it == "tilescope-best-configs")
        return RecordingFormat::BestConfigs;
    if (isProblem(doc))
        return RecordingFormat::TuningProblem;
    return RecordingFormat::Unknown;
}

// The format of text that does not parse (a truncated or large file's head), so that a
// truncated recording is still recognised (and then reported as truncated by its parser, not as
// "unknown"). Kernel Tuner caches name their parameters' keys; T4 files carry "results" next to a
// "schema_version" or "metadata" (a Tilescope T4 holds the problem in its metadata, so the
// problem's own keys do not decide).
RecordingFormat sniff(std::string_view head) {
    auto has = [&](std::string_view key) { return head.find(key) != std::string_view::npos; };
    if (has("\"tune_params_keys\"") || (has("\"cache\"") && has("\"kernel_name\"")))
        return RecordingFormat::KernelTunerCache;
    const bool problemKeys = has("\"ConfigurationSpace\"") || has("\"KernelSpecification\"");
    if (has("\"results\"") && (!problemKeys || has("\"schema_version\"") || has("\"metadata\"")))
        return RecordingFormat::T4;
    if (has("tilescope-best-configs"))
        return RecordingFormat::BestConfigs;
    if (problemKeys)
        return RecordingFormat::TuningProblem;
    return RecordingFormat::Unknown;
}

} // namespace

std::string recordingFormatName(RecordingFormat format) {
    static constexpr std::pair<RecordingFormat, const char*> kNames[] = {
        {RecordingFormat::TilescopeDatabase, "Tilescope database"}, {RecordingFormat::T4, "T4"},
        {RecordingFormat::KernelTunerCache, "Kernel Tuner cache"},  {RecordingFormat::BestConfigs, "best-config JSON"},
        {RecordingFormat::TuningProblem, "tuning problem"},
    };
    for (const auto& [f, name] : kNames)
        if (f == format)
            return name;
    return "unknown";
}

bool isRecording(RecordingFormat format) {
    return format == RecordingFormat::TilescopeDatabase || format == RecordingFormat::T4 ||
           format == RecordingFormat::KernelTunerCache;
}

RecordingFormat recordingFormatOfText(const std::string& text) {
    const Json doc = tryParseJson(text);
    return doc.is_discarded() ? sniff(std::string_view(text).substr(0, kHeadBytes)) : formatOfJson(doc);
}

RecordingFormat detectRecordingFormat(const std::filesystem::path& path) {
    if (ResultStore::isDatabaseFile(path))
        return RecordingFormat::TilescopeDatabase;
    return recordingFormatOfText(exchange::readText(path, kHeadBytes));
}

} // namespace tilescope
