#pragma once

// A session's problem read back from its database: the T1 JSON the session stored and the files
// it kept (spec/problemfiles.h: the kernel, its headers, its BinaryRaw data), written to a private
// temporary folder that goes with the object, and the problem loaded from there. The database
// alone then shows, counts and continues the session after the problem's files are gone or
// changed. The command line (`space RESULTS.db`, `tune RESULTS.db --resume`) and the workbench
// (a database opened without a problem) both read a problem this way.

#include "model/records.h"
#include "spec/tuningproblem.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

class StoredProblem {
    struct Key;

public:
    /// The problem of session `sessionId` of the database at `database`, else of its newest
    /// session that stored one. Throws InputError naming the database: not a results database,
    /// no such session, a session that stored no problem (an import), no session with one.
    /// A file the session needs but did not keep (data over the size limit, a file named by an
    /// absolute path) is taken from its original place when it is there with the same contents
    /// (by hash); otherwise the problem carries a launch blocker naming the file, as missing or as
    /// changed since the session was tuned, so that counting and showing still work and compiling
    /// or running says why it cannot.
    static std::unique_ptr<StoredProblem> open(const std::filesystem::path& database,
                                               std::optional<std::int64_t> sessionId = std::nullopt);
    explicit StoredProblem(Key); ///< made by open() only
    /// Removes the temporary folder.
    ~StoredProblem();
    StoredProblem(const StoredProblem&) = delete;
    StoredProblem& operator=(const StoredProblem&) = delete;

    /// The problem as tuned. Its KernelFile resolves inside the temporary folder; its
    /// `problemPath` is where it was loaded from when the session was tuned ("" when the database
    /// does not say), and `fileName` names the database and session for messages.
    const TuningProblem& problem() const { return m_problem; }
    /// The session whose problem it is.
    const SessionInfo& session() const { return m_session; }
    /// The T1 file written in the temporary folder (what a program that reads a file opens).
    const std::filesystem::path& problemFile() const { return m_problemFile; }
    /// What a reader should know: a file the database kept that changed at its original place
    /// since (the kept copy is used), a session that kept no files (older than schema 5: only
    /// its original files, where they still are). One sentence each.
    const std::vector<std::string>& notes() const { return m_notes; }
    /// The files written beside the problem file, as the problem names them (relative to its
    /// folder): the kept ones, and those taken from their original place.
    const std::vector<std::string>& writtenFiles() const { return m_written; }
    /// "results.db, session 3": where the problem came from, for messages and titles.
    const std::string& label() const { return m_label; }

private:
    TuningProblem m_problem;
    SessionInfo m_session;
    std::filesystem::path m_folder;
    std::filesystem::path m_problemFile;
    std::vector<std::string> m_notes;
    std::vector<std::string> m_written;
    std::string m_label;
};

/// A problem to work on, read from a T1 file or from a results database.
struct OpenedProblem {
    TuningProblem problem;
    /// Set when it came from a database: its session, its notes, the folder its files were
    /// written to (which lives as long as this).
    std::unique_ptr<StoredProblem> stored;
    const std::vector<std::string>& notes() const;
};

/// The problem `path` holds: a T1 file (TuningProblem::load), or a results database
/// (StoredProblem::open: the problem of `session`, else of its newest session that stored one).
/// Throws InputError, as those do; `session` with a problem file too.
OpenedProblem openProblem(const std::filesystem::path& path, std::optional<std::int64_t> session = std::nullopt);

/// Whether `path` names a Tilescope results database rather than a problem file (by its first
/// bytes, as every reader tells a database).
bool isResultsDatabase(const std::filesystem::path& path);

/// The --backend spec that repeats `session`'s backend, for a run that continues it; nullopt when
/// its label names no backend spec a run can take (an import, an MPI job, a part of a sweep).
std::optional<std::string> backendSpecOf(const SessionInfo& session);

} // namespace tilescope
