#pragma once

// Which format a file Tilescope reads is in: the one rule for the CLI and the workbench.

#include <filesystem>
#include <string>

namespace tilescope {

/// What a file Tilescope reads holds.
enum class RecordingFormat {
    Unknown,
    TilescopeDatabase, ///< a SQLite results database
    T4,                ///< a T4 results file
    KernelTunerCache,  ///< a Kernel Tuner cache file
    BestConfigs,       ///< Tilescope's JSON cache of best configs (an export, not a recording)
    TuningProblem,     ///< a T1 tuning problem (not a recording)
};

/// "Tilescope database", "T4", "Kernel Tuner cache", "best-config JSON", "tuning problem", "unknown".
std::string recordingFormatName(RecordingFormat format);
/// Whether the format is recorded results that readRecording() reads.
bool isRecording(RecordingFormat format);
/// The format of a file by its content (gzip-compressed or not), from its first MiB: the one rule
/// for the CLI and the workbench. A truncated recording is still told by what it starts with.
/// Throws InputError when the file cannot be read.
RecordingFormat detectRecordingFormat(const std::filesystem::path& path);
/// The format of a JSON file's text (already inflated) by the same rule; text that does not parse
/// (a truncated file, a head) by the keys it holds.
RecordingFormat recordingFormatOfText(const std::string& text);

} // namespace tilescope
