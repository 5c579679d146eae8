#pragma once

// The results database: one SQLite file (WAL journal) holding tuning sessions, their configs and
// results and metrics. A tuner appends results as they arrive; each is committed within
// `commitInterval` (100 ms), so a killed tuner loses at most that much, and a resumed session
// skips every config already done. Other processes (the GUI, `show`) read while a tuner writes.
// The schema is documented for users (resources/docs/formats/database.md) and versioned: a newer
// schema than this build knows is refused, an older one is migrated on a read-write open.
//
// A ResultStore belongs to the thread that opened it (SQLite connections are not shared between
// threads here); every call from another thread throws std::logic_error.

#include "model/records.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace tilescope {

enum class StoreMode {
    ReadWrite, ///< creates the file when missing, migrates an older schema
    ReadOnly,  ///< never writes; the file must exist
};

struct StoreOptions {
    /// Results appended one by one are committed at the latest this long after the first of them
    /// (or at flush()): the most a killed tuner can lose.
    std::chrono::milliseconds commitInterval{100};
    /// How long a write waits for another process's write lock before failing.
    std::chrono::milliseconds busyTimeout{5000};
    /// A missing file is made at the first write, not at open (which still checks that it can be
    /// made there): a run that fails before it stores anything leaves no file behind, and nothing
    /// has to be deleted that another process may have opened meanwhile. Until then the store
    /// reads as a new, empty database.
    bool createOnFirstWrite = false;
};

/// Results per status of one session (indexed by ResultStatus).
struct StatusCounts {
    std::uint64_t byStatus[kStatusCount] = {};
    std::uint64_t total = 0;
    std::uint64_t of(ResultStatus s) const { return byStatus[static_cast<std::size_t>(s)]; }
};

class ResultStore {
public:
    /// The schema version this build writes.
    static constexpr int kSchemaVersion = 5;

    /// Opens (or, read-write, creates) the database at `path`. Throws InputError, naming the path:
    /// a missing file (read-only) or folder, a file or folder it may not write (read-write), a file
    /// that is not SQLite, a SQLite file that is not a Tilescope database, a newer schema, and
    /// (read-write) a damaged file, which is checked whole before anything is written to it.
    /// Processes may open one database together, also one that none of them has made yet: a new
    /// file appears with its schema whole, and a schema is made or migrated once.
    static ResultStore open(const std::filesystem::path& path, StoreMode mode = StoreMode::ReadWrite,
                            const StoreOptions& options = {});
    /// A new, empty database in memory (gone with the store), for reading recordings with the same
    /// queries as a database file.
    static ResultStore openInMemory();
    /// Whether the file starts with SQLite's header (the one test of "is this a database" that
    /// every reader uses). False for a file that cannot be read.
    static bool isDatabaseFile(const std::filesystem::path& path);

    ResultStore(ResultStore&&) noexcept;
    ResultStore& operator=(ResultStore&&) noexcept;
    /// Commits what is pending.
    ~ResultStore();

    const std::filesystem::path& path() const;
    bool readOnly() const;
    /// The schema version of the file: kSchemaVersion after opening read-write (which migrates);
    /// read-only, the file's own (an older schema reads, its newer columns as absent).
    int schemaVersion() const;

    // Sessions

    /// Adds a session (committed at once) and returns its id. `info.id` is ignored.
    std::int64_t createSession(const SessionInfo& info);
    /// Sets a session's state, end time (now, unless it is Running) and message.
    void setSessionState(std::int64_t sessionId, SessionState state, const std::string& message = {});
    /// Replaces the session's provenance JSON (a backend learns the device once it runs).
    void setSessionProvenance(std::int64_t sessionId, const std::string& deviceName, const std::string& arch,
                              const std::string& provenanceJson);
    /// Removes a session with its configs, results and metrics (one transaction).
    void deleteSession(std::int64_t sessionId);
    std::vector<SessionInfo> sessions() const;
    std::optional<SessionInfo> session(std::int64_t sessionId) const;
    /// The newest session that a re-run of the same tuning continues: same problem hash, shape
    /// index, backend, strategy and seed.
    std::optional<SessionInfo> findResumable(const SessionInfo& like) const;

    /// Keeps the files of a session's problem (committed at once): each file's contents once
    /// per database (by hash), its place in the session by path; a file without `data` keeps
    /// its hash and size only. Needs schema 5 (a read-write store has it).
    void addSessionFiles(std::int64_t sessionId, const std::vector<ProblemFile>& files);
    /// The files kept for a session, in path order; with `withData` their contents where kept.
    /// Empty for a session that kept none, and in a file older than schema 5.
    std::vector<ProblemFile> sessionFiles(std::int64_t sessionId, bool withData = true) const;

    // Results

    /// Appends a result (its config is added to the session's configs when new) and returns
    /// the result's id. A Skipped result is a placeholder: appending another result for the same
    /// config replaces it. Committed within commitInterval.
    std::int64_t append(std::int64_t sessionId, const ResultRecord& record);
    /// Replaces a stored result's timing and objective with a new measurement of the same config
    /// (a session's final re-measurement of its best configs); its benchmark time grows by
    /// `addedBenchmarkSeconds`. Throws std::runtime_error when there is no such result.
    void updateTiming(std::int64_t resultId, const TimingStats& time, std::optional<double> objective,
                      double addedBenchmarkSeconds);
    /// Replaces a stored result's verdict with a new measurement of the same config: its status,
    /// timing, objective, verification error, metrics and message (a session that verifies a
    /// config again: within the group its outputs belong to, or on a second input set); its
    /// benchmark time grows by `addedBenchmarkSeconds`. Throws std::runtime_error when there is
    /// no such result.
    void updateVerdict(std::int64_t resultId, const Measurement& measurement, std::optional<double> objective,
                       double addedBenchmarkSeconds);
    /// Appends many results in one transaction (imports): far faster than one by one.
    void appendMany(std::int64_t sessionId, std::span<const ResultRecord> records);
    /// Commits pending results now.
    void flush();
    /// Commits pending results if the oldest is older than commitInterval; whether it committed.
    bool commitIfDue();

    /// The session's results: in insertion order, or ranked (best first; see ranksBefore, its
    /// analysed results by `by`). `limit` 0 = all.
    std::vector<ResultRecord> results(std::int64_t sessionId, bool rankedOrder = false, std::size_t limit = 0,
                                      StaticRank by = StaticRank::Occupancy) const;
    std::uint64_t resultCount(std::int64_t sessionId) const;
    StatusCounts statusCounts(std::int64_t sessionId) const;
    /// The session's best result (bestOf): a timed one, else the best analysed one by `by`.
    std::optional<ResultRecord> best(std::int64_t sessionId, StaticRank by = StaticRank::Occupancy) const;
    /// Everything of a session, for export.
    SessionData load(std::int64_t sessionId) const;

    struct Impl;

private:
    explicit ResultStore(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace tilescope
