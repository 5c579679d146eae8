#pragma once

// The formats results are exported in, by name, and the one function the CLI and the workbench
// both call to write them.

#include "model/records.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

/// The formats results are exported in.
enum class ExportFormat : std::uint8_t {
    T4,               ///< one session's results, T4 1.0.0 (writeT4)
    BestConfigsJson,  ///< the best config per (kernel, shape, device) (writeBestConfigsJson)
    Triton,           ///< triton.Config lists of the top configs (writeTritonConfigs)
    CppHeader,        ///< a C++17 header with a lookup by shape (writeCppHeader)
    Csv,              ///< every result (writeCsv)
    KernelTunerCache, ///< one session's results as a Kernel Tuner cache (writeKernelTunerCache)
};

/// Every export format, in the order tools list them.
const std::vector<ExportFormat>& exportFormats();
/// "t4", "json", "triton", "cpp", "csv", "kerneltuner": the names `tilescope-cli export --format` takes.
std::string exportFormatName(ExportFormat format);
/// The inverse of exportFormatName; nullopt for an unknown name.
std::optional<ExportFormat> parseExportFormat(std::string_view name);

/// How to export: the format and what it takes.
struct ExportOptions {
    ExportFormat format = ExportFormat::T4;
    std::size_t topK = 8; ///< Triton: configs per (shape, device)
    /// How results analysed, not timed, rank (the analysis backend's; json, triton, cpp): the
    /// best of a session that timed nothing is the best by this.
    StaticRank rankBy = StaticRank::Occupancy;
};

/// `sessions` in `options.format`, as the CLI and the workbench write them. T4 and kerneltuner
/// hold exactly one session; json and cpp the best config per (kernel, shape, device) over all of
/// them; triton the top-k of each; csv every result. Throws InputError naming `source` (the
/// database or recording they came from) when there is nothing to write: no sessions, several
/// sessions for T4 or kerneltuner, no config that ran correctly or was analysed for a C++ header;
/// and for a result that no recording may hold (checkRecordedSession: an ok result with a time of 0
/// or below, ...).
std::string exportResults(const std::vector<SessionData>& sessions, const ExportOptions& options,
                          const std::string& source = {});

} // namespace tilescope
