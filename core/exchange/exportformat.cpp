#include "exchange/exportformat.h"

#include "base/error.h"
#include "exchange/bestconfigs.h"
#include "exchange/cppheader.h"
#include "exchange/csv.h"
#include "exchange/kerneltunercache.h"
#include "exchange/recordcheck.h"
#include "exchange/t4.h"
#include "exchange/triton.h"

#include <algorithm>
#include <utility>

namespace tilescope {

namespace {

// Every format with its name, in the order tools list them.
constexpr std::pair<ExportFormat, const char*> kNames[] = {
    {ExportFormat::T4, "t4"},         {ExportFormat::BestConfigsJson, "json"},
    {ExportFormat::Triton, "triton"}, {ExportFormat::CppHeader, "cpp"},
    {ExportFormat::Csv, "csv"},       {ExportFormat::KernelTunerCache, "kerneltuner"},
};

} // namespace

const std::vector<ExportFormat>& exportFormats() {
    static const std::vector<ExportFormat> formats = [] {
        std::vector<ExportFormat> out;
        for (const auto& [format, name] : kNames)
            out.push_back(format);
        return out;
    }();
    return formats;
}

std::string exportFormatName(ExportFormat format) {
    for (const auto& [f, name] : kNames)
        if (f == format)
            return name;
    return "t4";
}

std::optional<ExportFormat> parseExportFormat(std::string_view name) {
    for (ExportFormat format : exportFormats())
        if (exportFormatName(format) == name)
            return format;
    return std::nullopt;
}

std::string exportResults(const std::vector<SessionData>& sessions, const ExportOptions& options,
                          const std::string& source) {
    if (sessions.empty())
        throw InputError(source, "", "there are no sessions to export");
    // What is exported is read back by others (and by us): a result no recording may hold (a time
    // of 0 or below that a database kept from an older import) is refused here as on import.
    for (const SessionData& s : sessions)
        checkRecordedSession(s, source);
    switch (options.format) {
    case ExportFormat::T4:
        if (sessions.size() != 1)
            throw InputError(source, "",
                             "T4 holds one session, and " + std::to_string(sessions.size()) + " were given: pick one");
        return writeT4(sessions.front());
    case ExportFormat::KernelTunerCache:
        if (sessions.size() != 1)
            throw InputError(source, "",
                             "a Kernel Tuner cache holds one session, and " + std::to_string(sessions.size()) +
                                 " were given: pick one");
        return writeKernelTunerCache(sessions.front());
    case ExportFormat::BestConfigsJson:
        return writeBestConfigsJson(bestConfigs(sessions, options.rankBy));
    case ExportFormat::Triton:
        return writeTritonConfigs(sessions, std::max<std::size_t>(options.topK, 1), options.rankBy);
    case ExportFormat::CppHeader: {
        const std::vector<BestConfig> best = bestConfigs(sessions, options.rankBy);
        if (best.empty())
            throw InputError(source, "",
                             "no config ran correctly or was analysed: there is nothing to put in a header");
        return writeCppHeader(best);
    }
    case ExportFormat::Csv:
        return writeCsv(sessions);
    }
    throw InputError(source, "", "unknown export format");
}

} // namespace tilescope
