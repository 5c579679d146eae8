#pragma once

// A content-addressed on-disk cache of compile results, shared by every Tilescope process of
// the user. An entry is one file named by the SHA-256 of everything the result depends on
// (compileCacheKey); it holds the cubin, the static info, the full log and, for a Triton
// binary, its launch metadata, and ends with a checksum. Writers write a temporary file and rename it into place
// (atomic on POSIX), so a reader sees a whole entry or none; a truncated, corrupt or foreign file reads as a miss.
// Least recently used entries are evicted when the folder grows past a size cap (reads
// refresh an entry's modification time, which serves as its last-use time).

#include "compile/compiler.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

namespace tilescope {

/// Tilescope's cache folder: $TILESCOPE_CACHE_DIR if set, else $XDG_CACHE_HOME/tilescope, else
/// ~/.cache/tilescope (else a folder in the system's temporary directory).
std::filesystem::path tilescopeCacheRoot();
/// Where compile results go by default: tilescopeCacheRoot() / "compile".
std::filesystem::path defaultCompileCacheDirectory();

/// The content address of `request`'s result (64 hex digits): SHA-256 over the NVRTC version,
/// the arch, the options, the source's name and text, the kernel name, the text of every file
/// the source includes (found by following #include lines through the source's and the options'
/// include dirs; a name found in none, such as a header NVRTC has built in, is keyed by its
/// name), and the defines whose names that code mentions (all of them when an #include's name
/// comes from a macro or the code pastes tokens with ##). The include dirs' paths are not part of
/// the key: a moved checkout keeps its cache. A Triton request's key covers the Triton that
/// compiles it (its version and the environment variables Triton keys its own cache on), the
/// kernel file's text, and every argument and keyword of the request.
std::string compileCacheKey(const CompileRequest& request);

struct CompileCacheOptions {
    std::filesystem::path directory;                 ///< empty = defaultCompileCacheDirectory()
    std::uint64_t maxBytes = std::uint64_t(1) << 30; ///< the size cap (1 GiB); LRU entries go beyond it
};

struct CompileCacheStats {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;  ///< includes corrupt entries
    std::uint64_t corrupt = 0; ///< entries that existed but did not read back (truncated, damaged, foreign)
    std::uint64_t stores = 0;
    std::uint64_t storeFailures = 0; ///< I/O errors while storing (the result is still returned)
    std::uint64_t evicted = 0;       ///< entries removed to keep under the cap
};

class CompileCache {
public:
    /// Creates nothing on disk until the first store.
    explicit CompileCache(CompileCacheOptions options = {});

    const std::filesystem::path& directory() const { return m_directory; }
    std::uint64_t maxBytes() const { return m_maxBytes; }

    /// The stored result for `key`, with `cached` set, or nullopt (absent or unreadable).
    /// Never throws for what is on disk.
    std::optional<CompileResult> load(const std::string& key);
    /// Stores `result` under `key` unless it is transient or cancelled; returns whether an entry
    /// was written. Never throws: a cache that cannot write only costs speed.
    bool store(const std::string& key, const CompileResult& result);
    /// Removes least recently used entries until the folder is under the cap (and temporary
    /// files that crashed writers left behind more than an hour ago). Runs by itself when stores
    /// have grown the folder past the cap.
    void evict();
    /// Removes every entry.
    void clear();

    /// Bytes of entries on disk now (a scan).
    std::uint64_t diskUsage() const;
    /// The number of entries on disk now (a scan).
    std::uint64_t entryCount() const;
    CompileCacheStats stats() const;

    /// The file an entry of `key` lives in (for tests and tools).
    std::filesystem::path entryPath(const std::string& key) const;

private:
    std::filesystem::path m_directory;
    std::uint64_t m_maxBytes;

    std::atomic<std::uint64_t> m_hits{0}, m_misses{0}, m_corrupt{0}, m_stores{0}, m_storeFailures{0}, m_evicted{0};
    std::atomic<std::uint64_t> m_tempCounter{0};

    std::mutex m_sizeMutex;         // guards the two below and serialises evictions
    bool m_sizeKnown = false;       // m_knownBytes was scanned
    std::uint64_t m_knownBytes = 0; // this process's estimate of the folder's size
};

} // namespace tilescope
