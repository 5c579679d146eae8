#pragma once

// The files a tuning problem is tuned with besides its T1 JSON: the kernel source, the headers it
// includes from its own folders, the BinaryRaw data of its arguments. A session keeps them in its
// database (ResultStore::addSessionFiles), so that the database alone shows, counts and
// continues the session where the files are gone or changed.

#include "model/records.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tilescope {

class TuningProblem;

/// Limits of what collectProblemFiles() keeps.
struct ProblemFileLimits {
    /// A data file larger than this keeps its hash and size only (ProblemFile::data nullopt): a
    /// database is no archive of large inputs (a Kernel Tuner script's arrays, written afresh
    /// by each run, would add their size to it every run; `kt` keeps them in its problem folder).
    std::uint64_t maxDataBytes = std::uint64_t(16) << 20;
    /// Headers followed at most (a header that includes itself, or a folder of thousands, ends here).
    std::size_t maxHeaders = 256;
    /// How deep includes are followed.
    int maxDepth = 16;
};

/// The files of `problem`, each with its role, its path as the problem names it (relative to the
/// problem's folder, '/' separators), its SHA-256, its size and (where kept) its contents:
/// - the kernel file (CUDA or Triton source);
/// - for CUDA, the headers it includes (`#include "name"`, and `<name>` where the folders below
///   hold it), followed through the headers they include: found beside the including file, in
///   the kernel's folder, or in a relative `-I` folder of CompilerOptions (taken from the
///   problem's folder); headers of absolute folders (the toolkit's, a library's) are not the
///   problem's and are left out;
/// - the DataSource of each BinaryRaw argument and reference argument; one over
///   `limits.maxDataBytes` keeps its hash and size only.
/// A file named by an absolute path keeps its hash and size only. A file that cannot be read is
/// left out (what needs it says so where it is used), never an error.
std::vector<ProblemFile> collectProblemFiles(const TuningProblem& problem, const ProblemFileLimits& limits = {});

/// SHA-256 (hex) and size of a file, read in pieces; false when it cannot be read.
bool hashFile(const std::filesystem::path& path, std::string& hash, std::uint64_t& size);

} // namespace tilescope
