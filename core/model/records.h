#pragma once

// The value types of tuning results as the store keeps them and the exchange formats carry
// them: a session (what was tuned, where, how) and its results (one config's measurement plus
// what compiling it told). Independent of a ConfigSpace: a config is a ConfigValues (name ->
// value), so results of imported files, older problem versions and other tools fit too.

#include "model/configvalues.h"
#include "model/measurement.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope {

/// Where a session stands.
enum class SessionState : std::uint8_t {
    Running,   ///< being tuned (or its tuner died: resume it)
    Finished,  ///< its strategy or budget ended it
    Cancelled, ///< the user stopped it (resumable)
    Failed,    ///< an error ended it (`message` says which)
    Imported,  ///< read from a file (T4, a Kernel Tuner cache)
};

/// "running", "finished", "cancelled", "failed", "imported".
std::string_view sessionStateName(SessionState state);
std::optional<SessionState> parseSessionState(std::string_view name);

/// One tuning session: a problem at one shape on one backend with one strategy.
struct SessionInfo {
    std::int64_t id = 0;                    ///< assigned by the store
    std::string kernel;                     ///< the kernel's name ("" unknown)
    std::string problemJson;                ///< the T1 problem as tuned ("" for imports that carry none)
    std::string problemHash;                ///< SHA-256 (hex) of problemJson ("" when none)
    std::string sourceHash;                 ///< SHA-256 (hex) of the kernel source ("" unknown)
    std::optional<std::int64_t> shapeIndex; ///< which of the problem's shapes
    std::vector<std::pair<std::string, std::int64_t>> shape; ///< its dims, in file order (may be empty)
    std::vector<std::int64_t> problemSize;                   ///< T1 ProblemSize evaluated (Kernel Tuner's key)
    std::vector<std::string> parameters;                     ///< parameter names, in order
    std::string backend;                                     ///< "replay:FILE", "cuda", "import:FILE"
    std::string strategy;                                    ///< "exhaustive", "random", ... ("" for imports)
    std::uint64_t seed = 0;
    std::string budget;                ///< for people: "100 configs", "10 % of the space", "60 s", "" = the whole space
    std::string deviceName;            ///< "NVIDIA H200" ("" unknown)
    std::string arch;                  ///< "sm_90" ("" unknown)
    std::string provenanceJson = "{}"; ///< device UUID, driver, CUDA and NVRTC versions, clocks, tool version
    std::string objectiveName;         ///< "TFLOP/s"; "" = time only (lower is better)
    std::uint64_t spaceSize = 0;       ///< valid configs at this shape (0 unknown)
    std::string startedAt;             ///< ISO 8601 UTC, "2026-11-29T10:04:05.123Z"
    std::string endedAt;               ///< "" while running
    SessionState state = SessionState::Running;
    std::string message; ///< why it failed, or a note
    std::string toolVersion = TILESCOPE_VERSION;

    /// "M=4096 N=4096 K=4096", else "problem_size=4096,4096", else "".
    std::string shapeLabel() const;
};

/// A file a session's problem was tuned with, as the database keeps it (ResultStore::addSessionFiles).
struct ProblemFile {
    enum class Role : std::uint8_t { Kernel, Header, Data };
    Role role = Role::Kernel;
    std::string path;                ///< as the problem names it, relative to the problem's folder ('/' separators)
    std::string hash;                ///< SHA-256 (hex) of the contents
    std::uint64_t size = 0;          ///< bytes
    std::optional<std::string> data; ///< the contents; nullopt when not kept (over the size limit) or not read

    bool operator==(const ProblemFile&) const = default;
};
/// "kernel", "header", "data".
std::string_view problemFileRoleName(ProblemFile::Role role);

/// How results that were analysed, not timed (ResultStatus::Analysed), rank among themselves: by
/// one quantity compiling tells, then the others. Timed results rank before them whatever it is.
enum class StaticRank : std::uint8_t {
    Occupancy, ///< the highest theoretical occupancy, then the fewest spilled bytes, then the fewest registers
    Registers, ///< the fewest registers per thread, then the fewest spilled bytes, then the highest occupancy
    Spills,    ///< the fewest spilled bytes (stores + loads), then the highest occupancy, then the fewest registers
};

/// "occupancy", "registers", "spills".
std::string_view staticRankName(StaticRank rank);
/// The inverse of staticRankName; nullopt for an unknown name.
std::optional<StaticRank> parseStaticRank(std::string_view name);
/// Every StaticRank, in enum order (for help texts and menus).
inline constexpr StaticRank kAllStaticRanks[] = {StaticRank::Occupancy, StaticRank::Registers, StaticRank::Spills};

/// Whether `ms` is a time a kernel can take: finite and above zero. The one rule for recorded
/// times: what ranks (ResultRecord::ranks) and what the readers of recordings accept as the time of
/// an Ok result.
inline bool isMeasurableTime(double ms) {
    return std::isfinite(ms) && ms > 0;
}

/// One evaluation of one config.
struct ResultRecord {
    std::int64_t id = 0; ///< assigned by the store
    std::int64_t sessionId = 0;
    std::optional<std::uint64_t> spaceIndex; ///< in the session's ConfigSpace, when known
    ConfigValues config;
    Measurement measurement;                   ///< status, timing, metrics, costs, static info (measurement.staticInfo)
    std::optional<double> objective;           ///< the session's objective (e.g. TFLOP/s), for Ok results
    std::optional<std::int64_t> blockSize;     ///< threads per block
    std::optional<std::int64_t> sharedDynamic; ///< bytes of dynamic shared memory per block
    std::optional<double> occupancy;           ///< theoretical occupancy in percent
    std::string log;                           ///< the compile log of a compile error
    std::string recordedAt;                    ///< ISO 8601 UTC; the store sets it when empty

    ResultStatus status() const { return measurement.status; }
    bool ok() const { return measurement.status == ResultStatus::Ok; }
    double timeMs() const { return measurement.time.medianMs; }
    /// Whether it may be a winner: Ok with a time a kernel can take (isMeasurableTime). An Ok
    /// result with a time of 0 or below (a hand-edited or damaged recording) would otherwise rank
    /// first, however many real results there are.
    bool ranks() const { return ok() && isMeasurableTime(timeMs()); }
    /// Whether it ranks by what compiling told (StaticRank), after every result that ranks by time:
    /// compiled and analysed, never run.
    bool ranksStatically() const { return measurement.status == ResultStatus::Analysed; }
    /// Whether it may be a session's best: it ranks by its time, or (nothing timed) statically.
    bool mayWin() const { return ranks() || ranksStatically(); }
};

/// A session with its results: what import writes into a store, export reads, replay answers from.
struct SessionData {
    SessionInfo info;
    std::vector<ResultRecord> results;
};

/// Whether `a` ranks before `b`: results that rank by time (ResultRecord::ranks) first; among them
/// the higher objective when both have one, else the lower median time; ties by lower id. Then
/// the analysed ones (ResultRecord::ranksStatically) by `by` (a quantity a result lacks ranks
/// last), ties by lower space index, then lower id. The others (failed results, and Ok ones without a time a kernel can
/// take) keep their order.
bool ranksBefore(const ResultRecord& a, const ResultRecord& b, StaticRank by = StaticRank::Occupancy);
/// The results sorted by rank, best first (stable).
std::vector<ResultRecord> ranked(std::vector<ResultRecord> results, StaticRank by = StaticRank::Occupancy);
/// The best result that may win (ResultRecord::mayWin), or nullopt: a timed one when there is one,
/// else the best analysed one by `by`.
std::optional<ResultRecord> bestOf(const std::vector<ResultRecord>& results, StaticRank by = StaticRank::Occupancy);

/// What compiling told of a result, its quantities in the order `by` ranks them: "occupancy 50 %,
/// no spills, 64 registers", "64 registers, spills 24/24 B, occupancy 50 %" (stores/loads per
/// thread). A quantity the result lacks is left out; "" when it has none.
std::string describeStatic(const ResultRecord& r, StaticRank by = StaticRank::Occupancy);

/// The current time as ISO 8601 UTC with milliseconds.
std::string nowIso8601();

} // namespace tilescope
