#include "exchange/exportformat.h"

#include "base/error.h"
#include "exchange/bestconfigs.h"
#include "exchange/cppheader.h"
#include "exchange/csv.h"
#include "exchange/kerneltunercache.h"
#include "exchange/t4.h"
#include "exchange/triton.h"

#include <algorithm>

namespace tilescope {

const std::vector<ExportFormat>& exportFormats() {
    static const std::vector<ExportFormat> formats = {ExportFormat::T4,     ExportFormat::BestConfigsJson,
                                                      ExportFormat::Triton, ExportFormat::CppHeader,
                                                      ExportFormat::Csv,    ExportFormat::KernelTunerCache};
    return formats;
}

std::string exportFormatName(ExportFormat format) {
    switch (format) {
    case ExportFormat::T4:
        return "t4";
    case ExportFormat::KernelTunerCache:
        return "kerneltuner";
    case ExportFormat::BestConfigsJson:
        return "json";
    case ExportFormat::Triton:
        return "triton";
    case ExportFormat::CppHeader:
        return "cpp";
    case ExportFormat::Csv:
        return "csv";
    }
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
        return writeBestConfigsJson(bestConfigs(sessions));
    case ExportFormat::Triton:
        return writeTritonConfigs(sessions, std::max<std::size_t>(options.topK, 1));
    case ExportFormat::CppHeader: {
        const std::vector<BestConfig> best = bestConfigs(sessions);
        if (best.empty())
            throw InputError(source, "", "no config ran correctly: there is nothing to put in a header");
        return writeCppHeader(best);
    }
    case ExportFormat::Csv:
        return writeCsv(sessions);
    }
    throw InputError(source, "", "unknown export format");
}

} // namespace tilescope
