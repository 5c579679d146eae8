#pragma once

// Recordings in: every session of a T4 file, a Kernel Tuner cache or a Tilescope database, read
// whatever the format (exchange/detection.h tells it), and imported into a store.

#include "model/records.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tilescope {

class ResultStore;

/// Every session a recording holds: one for T4 and Kernel Tuner caches, all of a database's.
/// Throws InputError for a file that is none of them.
std::vector<SessionData> readRecording(const std::filesystem::path& path);
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

/// What a session measured, as a SHA-256 (hex) that does not depend on where it was read from
/// or when it was imported: its kernel, shape, device, strategy and seed, and every result's
/// config, status, median and sample count (in config order). `import` skips a session whose
/// fingerprint the database already holds.
std::string sessionFingerprint(const SessionData& session);

} // namespace tilescope
