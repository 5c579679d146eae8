#pragma once

// Results in and out of Tilescope.
//
// In: T4 results files (the community autotuning output format, schema
// kernel_tuner/schema/T4/1.0.0/results-schema.json), Kernel Tuner cache JSON (schemas
// kernel_tuner/schema/cache/1.0.0, 1.0.1 and 1.1.0, and the unversioned caches before them,
// including caches a killed Kernel Tuner left unclosed) and Tilescope databases. Each becomes
// SessionData, which import writes into a store and the replay backend answers from.
//
// Out: T4 (Tilescope's own fields ride along in a "tilescope" object per result and in
// "metadata", so our T4 imports back to the same results), a Kernel Tuner cache (that Kernel
// Tuner's simulation mode replays; our fields ride along likewise), a JSON cache of the best config per
// (kernel, shape, device), triton.Config lists, a self-contained C++ header with a lookup by
// shape, and CSV of every result.
//
// Units: Tilescope keeps times in ms and costs (compile, benchmark) in seconds; T4 and Kernel
// Tuner caches carry everything in ms, as Kernel Tuner writes them.

#include "model/records.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope {

class ResultStore;

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

/// Parses a T4 results file. Throws InputError with the file and the place: bad or truncated
/// JSON (line and column), an unknown schema version, a missing required field
/// ("/results/12: missing 'invalidity'").
SessionData parseT4(const std::string& text, const std::string& fileName);
/// Parses a Kernel Tuner cache file. Throws InputError likewise (an unknown schema_version
/// names the versions this build reads).
SessionData parseKernelTunerCache(const std::string& text, const std::string& fileName);
/// Every session a recording holds: one for T4 and Kernel Tuner caches, all of a database's.
/// Throws InputError for a file that is none of them.
std::vector<SessionData> readRecording(const std::filesystem::path& path);
/// What a session measured, as a SHA-256 (hex) that does not depend on where it was read from
/// or when it was imported: its kernel, shape, device, strategy and seed, and every result's
/// config, status, median and sample count (in config order). `import` skips a session whose
/// fingerprint the database already holds.
std::string sessionFingerprint(const SessionData& session);
/// Sessions that are parts of one sweep split across tasks (tune --part I/N: the same problem,
/// shape, device, backend but for its part suffix, strategy, seed and N) joined into one session
/// each, in the place of its first part: its results are the parts' results, its info the first
/// part's (the backend without the part, the earliest start and latest end), its provenance the
/// first part's with every part's under "parts"; its message names the parts missing, if any.
/// Other sessions pass unchanged, in order. `from` gives, per session returned, the indices of
/// the input sessions it holds.
std::vector<SessionData> joinParts(std::vector<SessionData> sessions, std::vector<std::vector<std::size_t>>* from);
/// One session of a recording: the one numbered `sessionId`, else the newest with an Ok result
/// (else the newest). `note`, when given, says which was taken when there were several. Throws
/// InputError as readRecording() does, and for a session that is not there (naming those that are).
SessionData readSession(const std::filesystem::path& path, std::optional<std::int64_t> sessionId = std::nullopt,
                        std::string* note = nullptr);
/// Recorded results to read with a ResultStore's queries, whatever their format: a Tilescope
/// database opened read-only, or a T4 file or Kernel Tuner cache imported into a database in
/// memory (its sessions "import:FILE", as `import` names them). Throws InputError as
/// ResultStore::open() and readRecording() do.
ResultStore openResults(const std::filesystem::path& path);

/// Writes `data` into `store` as a new session in state Imported (its results in one
/// transaction) and returns the session's id. `source` names the file in the session's backend
/// column ("import:FILE").
std::int64_t importSession(ResultStore& store, SessionData data, const std::string& source);

/// T4 JSON of one session (2-space indent).
std::string writeT4(const SessionData& session);

/// One session as a Kernel Tuner cache file, laid out as Kernel Tuner 1.x writes them (no
/// schema_version, one entry a line) so that its simulation mode replays it: device_name,
/// kernel_name, problem_size (the session's, else its shape's dims), tune_params_keys,
/// tune_params (the problem's value lists when the session carries its problem, else the values
/// the results took), objective "time", and per config under the key Kernel Tuner makes (Python's
/// str() of the values joined by commas) the parameters, "time" (the median, ms), "times",
/// compile_time, verification_time, benchmark_time, strategy_time, framework_time (ms),
/// timestamp, the objective and the metrics by name. A config without a time carries Kernel
/// Tuner's marker in "time" and "__error__": CompilationFailedConfig, RuntimeFailedConfig
/// (launch error, wrong result, crash, timeout) or InvalidConfig (pruned, skipped). Exact values
/// ride along in a "tilescope" object per entry and in the header, so the file imports back to the
/// same results.
std::string writeKernelTunerCache(const SessionData& session);

/// The best Ok config of one (kernel, shape, device).
struct BestConfig {
    std::string kernel;
    std::vector<std::pair<std::string, std::int64_t>> shape; ///< may be empty
    std::vector<std::int64_t> problemSize;                   ///< when the shape has no names
    std::string device;                                      ///< "" unknown
    std::string arch;                                        ///< "" unknown
    ConfigValues config;
    double timeMs = 0;
    double ciLowMs = 0; ///< the median's 95 % interval (0, 0: not known)
    double ciHighMs = 0;
    std::string objectiveName;       ///< "" = none
    std::optional<double> objective; ///< its value
    std::int64_t sessionId = 0;
    int driverVersion = 0;  ///< the CUDA driver it was tuned with (13000 for 13.0; 0 unknown)
    std::string specHash;   ///< TuningProblem::specHash() of the problem it was tuned for ("" unknown)
    std::string sourceHash; ///< SHA-256 of the kernel source ("" unknown)

    bool operator==(const BestConfig&) const = default;
};

/// The best config per (kernel, shape, device) over `sessions`, ordered by kernel, device, shape.
std::vector<BestConfig> bestConfigs(const std::vector<SessionData>& sessions);
/// Tilescope's JSON cache: {"format": "tilescope-best-configs", "version": 1, "entries": [...]}.
std::string writeBestConfigsJson(const std::vector<BestConfig>& best);
/// Reads it back. Throws InputError for bad JSON or another format or version.
std::vector<BestConfig> parseBestConfigsJson(const std::string& text, const std::string& fileName);
/// The entries of writeBestConfigsJson() on one comment line ("// tilescope-cache: {...}"), which
/// the C++ header and the Triton export carry so that `check` can tell when they went stale.
std::string bestConfigsMetadataLine(const std::vector<BestConfig>& best, const std::string& commentPrefix);
/// The best configs a file of tuned configs holds: a JSON cache, or the metadata line of a C++
/// header or Triton export. Throws InputError for anything else (and for a malformed cache).
std::vector<BestConfig> parseTunedConfigs(const std::string& text, const std::string& fileName);

/// Python source defining, per kernel, a list of triton.Config: the `topK` best configs of
/// every (shape, device), best first, without repeats. Parameters named like warps
/// (num_warps, NUM_WARPS, WARPS, warps) and stages (num_stages, NUM_STAGES, STAGES, stages)
/// become the num_warps= and num_stages= arguments; the rest go in the kwargs dict.
std::string writeTritonConfigs(const std::vector<SessionData>& sessions, std::size_t topK);

/// `config` as Python: `triton.Config({...}, num_warps=..., num_stages=...)`, parameters named
/// like warps and stages (see writeTritonConfigs) as those arguments, the rest in the dict.
std::string tritonConfigExpression(const ConfigValues& config);
/// A JSON value as a Python literal (True, None, float('inf'), lists, strings).
std::string pythonValue(const ConfigValue& value);

/// A C++17 header of its own (only <cstdint>): per kernel a namespace with a Config struct, a
/// constexpr table kEntries of the best config per (shape, device), `const Config*
/// lookup(shape dims...)` and `lookupOn(device, shape dims...)` (nullptr for a shape not tuned),
/// and their constexpr twins find() / findOn() giving the index in kEntries or -1.
/// `guardName` names the namespace that holds them all ("tilescope_tuned").
std::string writeCppHeader(const std::vector<BestConfig>& best, const std::string& guardName = "tilescope_tuned");

/// How Tilescope's C++ exports spell configs: a `Config` struct with a member per parameter (in
/// the first config's order, then any the others add), its type from the values it takes
/// (const char*, bool, long long or double), and each config as an initializer of that struct.
class CppConfigLayout {
public:
    explicit CppConfigLayout(const std::vector<const ConfigValues*>& configs);
    /// "struct Config {\n    long long BLOCK_M;\n ...};\n"
    std::string structDefinition() const;
    /// "{128LL, true, \"row\"}": `config`'s values (a missing one as 0, false or "").
    std::string initializer(const ConfigValues& config) const;

private:
    std::vector<std::string> m_params;
    std::vector<std::string> m_types;
    std::vector<std::string> m_ids;
};

/// `name` as a C++ identifier for generated code (other characters as _, a leading digit
/// prefixed, C++ and Python keywords and the generated code's own names suffixed with _), or
/// `fallback` when empty.
std::string cppIdentifier(const std::string& name, const std::string& fallback);

/// CSV (RFC 4180) of every result of every session: one row per result, the union of the
/// sessions' parameters as columns.
std::string writeCsv(const std::vector<SessionData>& sessions);

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

struct ExportOptions {
    ExportFormat format = ExportFormat::T4;
    std::size_t topK = 8; ///< Triton: configs per (shape, device)
};

/// `sessions` in `options.format`, as the CLI and the workbench write them. T4 and kerneltuner
/// hold exactly one session; json and cpp the best config per (kernel, shape, device) over all of them; triton the
/// top-k of each; csv every result. Throws InputError naming `source` (the database or
/// recording they came from) when there is nothing to write: no sessions, several sessions for
/// T4 or kerneltuner, no config that ran correctly for a C++ header.
std::string exportResults(const std::vector<SessionData>& sessions, const ExportOptions& options,
                          const std::string& source = {});

} // namespace tilescope
