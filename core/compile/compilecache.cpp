#include "compile/compilecache.h"

#include "base/sha256.h"
#include "compile/nvcc.h"
#include "compile/nvrtcheaders.h"
#include "compile/triton.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <unordered_set>
#include <string_view>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace tilescope {

namespace {

// Bump when the entry layout or what the key covers changes: old entries then never match
// (their keys differ) and age out through eviction.
// 2: defines as Kernel Tuner's prefix, those of names the code never mentions left out.
constexpr std::string_view kKeyVersion = "tilescope-compile-cache-2";

// This host's name and a dot, for names of temporary files in a folder other hosts may share
// ("" when it cannot be had).
const std::string& hostTag() {
    static const std::string tag = [] {
        char name[256] = {};
        if (gethostname(name, sizeof name - 1) != 0 || !name[0])
            return std::string();
        std::string text(name);
        for (char& c : text)
            if (c == '/' || c == '.')
                c = '_';
        return text + ".";
    }();
    return tag;
}
constexpr char kMagic[4] = {'T', 'S', 'C', 'C'};
constexpr std::uint32_t kFormat = 2; // 2: the entry's name in the cubin
constexpr std::string_view kEntrySuffix = ".tsc";
constexpr std::string_view kTempFolder = "tmp";
// Nothing NVRTC makes comes near this; a larger file is not ours.
constexpr std::uint64_t kMaxEntryBytes = std::uint64_t(1) << 30;
constexpr int kMaxIncludeDepth = 64;

std::string readFile(const fs::path& path, bool* ok) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *ok = false;
        return {};
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    *ok = !in.bad();
    return text;
}

// ---- include discovery for the key -------------------------------------------------------

struct IncludeDirective {
    std::string name;
    bool quoted = false;
    bool macro = false; ///< the name comes from a macro: `name` is the line's text
};

// `#include "x"` and `#include <x>` lines; comments and conditionals are not interpreted, so a
// disabled include is still keyed (an extra file in the key costs at most a miss).
std::vector<IncludeDirective> includeDirectives(std::string_view text) {
    std::vector<IncludeDirective> found;
    while (!text.empty()) {
        const std::size_t newline = text.find('\n');
        std::string_view line = text.substr(0, newline);
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        auto skipSpace = [&] {
            while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
                line.remove_prefix(1);
        };
        skipSpace();
        if (line.empty() || line.front() != '#')
            continue;
        line.remove_prefix(1);
        skipSpace();
        if (line.substr(0, 7) != "include")
            continue;
        line.remove_prefix(7);
        skipSpace();
        if (line.empty())
            continue;
        const char open = line.front();
        const char close = open == '"' ? '"' : open == '<' ? '>' : '\0';
        if (close == '\0') {
            found.push_back({std::string(line), false, true}); // a macro: keyed by its text
            continue;
        }
        const std::size_t end = line.find(close, 1);
        if (end == std::string_view::npos)
            continue;
        found.push_back({std::string(line.substr(1, end - 1)), open == '"'});
    }
    return found;
}

// Include dirs named in NVRTC options: -Idir, -I dir, --include-path=dir, --include-path dir.
std::vector<fs::path> optionIncludeDirs(const std::vector<std::string>& options) {
    std::vector<fs::path> dirs;
    for (std::size_t i = 0; i < options.size(); ++i) {
        const std::string& option = options[i];
        const bool next = i + 1 < options.size();
        if (option == "-I" || option == "--include-path") {
            if (next)
                dirs.emplace_back(options[++i]);
        } else if (option.rfind("--include-path=", 0) == 0) {
            dirs.emplace_back(option.substr(15));
        } else if (option.rfind("-I", 0) == 0) {
            dirs.emplace_back(option.substr(2));
        }
    }
    return dirs;
}

// What the code the compiler reads can name: every word of the source, the headers it includes,
// the kernel name and the options. `opaque` when a name may come about another way (an #include
// through a macro, token pasting with ##): then every define counts as mentioned.
struct Mentions {
    std::unordered_set<std::string> words;
    bool opaque = false;

    void add(std::string_view text) {
        if (text.find("##") != std::string_view::npos)
            opaque = true;
        for (std::string word : wordsOf(text))
            words.insert(std::move(word));
    }
    bool has(const std::string& name) const { return opaque || words.count(name) > 0; }
};

void hashIncludes(Sha256& sha, std::string_view text, const fs::path& ownDir, const std::vector<fs::path>& dirs,
                  std::set<fs::path>& seen, int depth, Mentions& mentions) {
    for (const IncludeDirective& directive : includeDirectives(text)) {
        sha.updateField(directive.name);
        if (directive.macro)
            mentions.opaque = true;
        std::vector<fs::path> candidates;
        if (directive.quoted && !ownDir.empty())
            candidates.push_back(ownDir / directive.name);
        for (const fs::path& dir : dirs)
            candidates.push_back(dir / directive.name);
        bool resolved = false;
        for (const fs::path& candidate : candidates) {
            std::error_code ec;
            if (!fs::is_regular_file(candidate, ec))
                continue;
            bool ok = false;
            std::string content = readFile(candidate, &ok);
            if (!ok)
                continue;
            resolved = true;
            sha.updateField("found");
            sha.updateField(content);
            mentions.add(content);
            const fs::path canonical = fs::weakly_canonical(candidate, ec);
            if (depth < kMaxIncludeDepth && seen.insert(ec ? candidate : canonical).second)
                hashIncludes(sha, content, candidate.parent_path(), dirs, seen, depth + 1, mentions);
            break;
        }
        if (!resolved)
            sha.updateField("not found");
    }
}

// ---- entry encoding ------------------------------------------------------------------------

class Writer {
public:
    void u32(std::uint32_t v) { raw(&v, sizeof v); }
    void u64(std::uint64_t v) { raw(&v, sizeof v); }
    void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
    void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
    void bytes(const void* data, std::size_t size) {
        u64(size);
        raw(data, size);
    }
    void text(std::string_view s) { bytes(s.data(), s.size()); }
    std::string& data() { return m_data; }

private:
    // Little-endian hosts only (x86-64, aarch64): the format is a cache, not an interchange file;
    // a big-endian reader would see a checksum mismatch and recompile.
    void raw(const void* data, std::size_t size) { m_data.append(static_cast<const char*>(data), size); }
    std::string m_data;
};

class Reader {
public:
    explicit Reader(std::string_view data)
        : m_data(data) {}
    bool u32(std::uint32_t* v) { return raw(v, sizeof *v); }
    bool u64(std::uint64_t* v) { return raw(v, sizeof *v); }
    bool i64(std::int64_t* v) {
        std::uint64_t u = 0;
        if (!u64(&u))
            return false;
        *v = static_cast<std::int64_t>(u);
        return true;
    }
    bool f64(double* v) {
        std::uint64_t u = 0;
        if (!u64(&u))
            return false;
        *v = std::bit_cast<double>(u);
        return true;
    }
    bool text(std::string* s) {
        std::uint64_t size = 0;
        if (!u64(&size) || size > m_data.size())
            return false;
        s->assign(m_data.data(), static_cast<std::size_t>(size));
        m_data.remove_prefix(static_cast<std::size_t>(size));
        return true;
    }
    bool bytes(std::vector<char>* out) {
        std::uint64_t size = 0;
        if (!u64(&size) || size > m_data.size())
            return false;
        out->assign(m_data.data(), m_data.data() + size);
        m_data.remove_prefix(static_cast<std::size_t>(size));
        return true;
    }
    bool atEnd() const { return m_data.empty(); }

private:
    bool raw(void* out, std::size_t size) {
        if (m_data.size() < size)
            return false;
        std::memcpy(out, m_data.data(), size);
        m_data.remove_prefix(size);
        return true;
    }
    std::string_view m_data;
};

std::string encodeEntry(const std::string& key, const CompileResult& result) {
    Writer payload;
    payload.text(key);
    payload.u32(static_cast<std::uint32_t>(result.status));
    payload.text(result.message);
    payload.text(result.log);
    payload.text(result.nvrtcVersion);
    payload.f64(result.seconds);
    const StaticInfo& info = result.info;
    payload.i64(info.registers);
    payload.i64(info.barriers);
    payload.i64(info.stackFrame);
    payload.i64(info.spillStores);
    payload.i64(info.spillLoads);
    payload.i64(info.sharedStatic);
    payload.i64(info.constantBytes);
    payload.text(result.entryName);
    payload.bytes(result.cubin.data(), result.cubin.size());
    // After the cubin, so that entries written before it read as before: how a binary whose
    // compiler decides its launch (Triton's) is launched.
    if (result.launch) {
        const LaunchMetadata& launch = *result.launch;
        payload.u32(1);
        payload.i64(launch.threadsPerBlock);
        payload.i64(launch.sharedBytes);
        payload.i64(launch.clusterSize);
        payload.u64(launch.scratch.size());
        for (const LaunchMetadata::Scratch& scratch : launch.scratch) {
            payload.i64(scratch.bytesPerBlock);
            payload.i64(scratch.align);
        }
        payload.u64(launch.argumentTypes.size());
        for (const std::string& type : launch.argumentTypes)
            payload.text(type);
    }

    Writer file;
    file.data().append(kMagic, sizeof kMagic);
    file.u32(kFormat);
    file.bytes(payload.data().data(), payload.data().size());
    const Sha256::Digest digest = Sha256::hash(payload.data());
    file.data().append(reinterpret_cast<const char*>(digest.data()), digest.size());
    return std::move(file.data());
}

// The launch section an entry of a Triton binary ends with.
bool readLaunch(Reader& in, CompileResult& result) {
    std::uint32_t present = 0;
    std::int64_t threads = 0, shared = 0, cluster = 0;
    std::uint64_t scratches = 0, types = 0;
    if (!in.u32(&present) || present != 1 || !in.i64(&threads) || !in.i64(&shared) || !in.i64(&cluster) ||
        !in.u64(&scratches) || scratches > 16)
        return false;
    LaunchMetadata launch;
    launch.threadsPerBlock = static_cast<int>(threads);
    launch.sharedBytes = shared;
    launch.clusterSize = static_cast<int>(cluster);
    for (std::uint64_t i = 0; i < scratches; ++i) {
        LaunchMetadata::Scratch scratch;
        if (!in.i64(&scratch.bytesPerBlock) || !in.i64(&scratch.align))
            return false;
        launch.scratch.push_back(scratch);
    }
    if (!in.u64(&types) || types > 4096)
        return false;
    for (std::uint64_t i = 0; i < types; ++i) {
        std::string type;
        if (!in.text(&type))
            return false;
        launch.argumentTypes.push_back(std::move(type));
    }
    result.launch = std::move(launch);
    return true;
}

std::optional<CompileResult> decodeEntry(std::string_view data, const std::string& key) {
    if (data.size() < sizeof kMagic + 4 + 8 + 32 || std::memcmp(data.data(), kMagic, sizeof kMagic) != 0)
        return std::nullopt;
    Reader file(data.substr(sizeof kMagic, data.size() - sizeof kMagic - 32));
    std::uint32_t format = 0;
    std::string payload;
    if (!file.u32(&format) || format != kFormat || !file.text(&payload) || !file.atEnd())
        return std::nullopt;
    const Sha256::Digest digest = Sha256::hash(payload);
    if (std::memcmp(digest.data(), data.data() + data.size() - 32, 32) != 0)
        return std::nullopt;

    Reader in(payload);
    std::string storedKey;
    std::uint32_t status = 0;
    CompileResult result;
    std::int64_t registers = 0, barriers = 0;
    StaticInfo& info = result.info;
    const bool ok = in.text(&storedKey) && in.u32(&status) && in.text(&result.message) && in.text(&result.log) &&
                    in.text(&result.nvrtcVersion) && in.f64(&result.seconds) && in.i64(&registers) &&
                    in.i64(&barriers) && in.i64(&info.stackFrame) && in.i64(&info.spillStores) &&
                    in.i64(&info.spillLoads) && in.i64(&info.sharedStatic) && in.i64(&info.constantBytes) &&
                    in.text(&result.entryName) && in.bytes(&result.cubin) && (in.atEnd() || readLaunch(in, result));
    if (!ok || !in.atEnd() || storedKey != key || status > static_cast<std::uint32_t>(CompileStatus::NoKernel))
        return std::nullopt;
    result.status = static_cast<CompileStatus>(status);
    info.registers = static_cast<int>(registers);
    info.barriers = static_cast<int>(barriers);
    result.cached = true;
    return result;
}

bool isEntryName(const fs::path& path) {
    const std::string name = path.filename().string();
    return name.size() > kEntrySuffix.size() && name.ends_with(kEntrySuffix);
}

struct EntryFile {
    fs::path path;
    std::uint64_t size = 0;
    fs::file_time_type lastUse;
};

std::vector<EntryFile> scanEntries(const fs::path& directory) {
    std::vector<EntryFile> entries;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename() == kTempFolder) {
            it.disable_recursion_pending();
            continue;
        }
        std::error_code fileEc;
        if (!it->is_regular_file(fileEc) || !isEntryName(it->path()))
            continue;
        EntryFile entry;
        entry.path = it->path();
        entry.size = it->file_size(fileEc);
        if (fileEc)
            continue; // evicted by another process meanwhile
        entry.lastUse = it->last_write_time(fileEc);
        if (fileEc)
            continue;
        entries.push_back(std::move(entry));
    }
    return entries;
}

std::string envValue(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

} // namespace

fs::path tilescopeCacheRoot() {
    if (std::string dir = envValue("TILESCOPE_CACHE_DIR"); !dir.empty())
        return fs::path(dir);
    // The XDG base directory spec says to ignore relative paths in XDG_CACHE_HOME.
    if (std::string xdg = envValue("XDG_CACHE_HOME"); !xdg.empty() && fs::path(xdg).is_absolute())
        return fs::path(xdg) / "tilescope";
    if (std::string home = envValue("HOME"); !home.empty())
        return fs::path(home) / ".cache" / "tilescope";
    std::error_code ec;
    const fs::path temp = fs::temp_directory_path(ec);
    return (ec ? fs::path("/tmp") : temp) / ("tilescope-cache-" + std::to_string(getuid()));
}

fs::path defaultCompileCacheDirectory() {
    return tilescopeCacheRoot() / "compile";
}

namespace {

// What Triton's JIT compiles of an argument that is not tl.constexpr: an integer's value only as
// far as it specialises on it (equal to 1, compiled in; divisible by 16; its type, i32 or i64 or
// u64 by its range), so that the shapes of one kernel (a tutorial's 31 sizes, all multiples of
// 16) share their binaries as in Triton's own cache. Pointers, booleans and floats as given.
std::string tritonSpecialisation(const std::string& argument) {
    const nlohmann::json value = nlohmann::json::parse(argument, nullptr, false);
    if (value.is_number_unsigned()) {
        const auto v = value.get<std::uint64_t>();
        if (v == 1)
            return "int:1";
        const char* type = v < (std::uint64_t{1} << 31) ? "i32" : v < (std::uint64_t{1} << 63) ? "i64" : "u64";
        return std::string("int:") + type + (v % 16 == 0 ? ":D" : "");
    }
    if (value.is_number_integer()) {
        const auto v = value.get<std::int64_t>();
        const char* type = v >= -(std::int64_t{1} << 31) ? "i32" : "i64";
        return std::string("int:") + type + (v % 16 == 0 ? ":D" : "");
    }
    return argument;
}

// A Triton kernel's binary depends on the whole request (its keywords are compile options and
// values Python reads, whether the source names them or not) and on the Triton that compiles it;
// its imports are Python's business, and the kernel's own file is the source.
std::string tritonCacheKey(const CompileRequest& request) {
    Sha256 sha;
    sha.updateField(kKeyVersion);
    sha.updateField("triton");
    const TritonSetup& setup = tritonSetup();
    sha.updateField(setup.ok ? setup.identity : "no triton: " + setup.error);
    sha.updateField(request.arch);
    sha.updateField(request.sourceName);
    sha.updateField(request.kernelName);
    sha.updateField(request.source);
    sha.updateU64(request.arguments.size());
    for (const std::string& argument : request.arguments)
        sha.updateField(tritonSpecialisation(argument));
    sha.updateU64(request.defines.size());
    for (const auto& [name, value] : request.defines) {
        sha.updateField(name);
        sha.updateField(value);
    }
    sha.updateU64(request.options.size());
    for (const std::string& option : request.options)
        sha.updateField(option);
    return Sha256::hex(sha.finish());
}

} // namespace

std::string compileCacheKey(const CompileRequest& request) {
    if (request.language == SourceLanguage::Triton)
        return tritonCacheKey(request);
    Sha256 sha;
    sha.updateField(kKeyVersion);
    if (request.compiler == CudaCompiler::Nvcc) {
        // nvcc's binary depends on nvcc (the whole of its --version) and on what it is told: the
        // request's arch, options, source, included files and defines, as NVRTC's does.
        const NvccSetup& setup = nvccSetup();
        sha.updateField("nvcc");
        sha.updateField(setup.ok ? setup.identity : "no nvcc: " + setup.error);
    } else {
        sha.updateField(nvrtcVersionString());
        sha.updateField(nvrtcHeaders().digest); // the toolkit's folders and the headers NVRTC is given
    }
    sha.updateField(request.arch);
    sha.updateU64(request.options.size());
    for (const std::string& option : request.options)
        sha.updateField(option);
    sha.updateField(request.sourceName);
    sha.updateField(request.kernelName);
    sha.updateField(request.source);

    Mentions mentions;
    mentions.add(request.source);
    mentions.add(request.kernelName);
    for (const std::string& option : request.options)
        mentions.add(option);
    std::vector<fs::path> dirs(request.includeDirs.begin(), request.includeDirs.end());
    for (fs::path& dir : optionIncludeDirs(request.options))
        dirs.push_back(std::move(dir));
    std::set<fs::path> seen;
    hashIncludes(sha, request.source, {}, dirs, seen, 0, mentions);

    // A define of a name the code never mentions cannot change the binary (its prefix line is
    // all it adds, and "#line 1" keeps the line numbers): configs that differ only there, such
    // as the grid of another shape or a launch-only parameter, share one entry. The order of
    // those that are mentioned stays in the key (a repeated name: the last one wins).
    std::uint64_t keyed = 0;
    for (const auto& [name, value] : request.defines) {
        if (!mentions.has(name))
            continue;
        sha.updateField(name);
        sha.updateField(value);
        ++keyed;
    }
    sha.updateU64(keyed);
    return Sha256::hex(sha.finish());
}

CompileCache::CompileCache(CompileCacheOptions options)
    : m_directory(options.directory.empty() ? defaultCompileCacheDirectory() : std::move(options.directory))
    , m_maxBytes(options.maxBytes) {}

fs::path CompileCache::entryPath(const std::string& key) const {
    // 256 subfolders keep any one folder small for large caches.
    const std::string shard = key.size() >= 2 ? key.substr(0, 2) : std::string("__");
    return m_directory / shard / (key + std::string(kEntrySuffix));
}

std::optional<CompileResult> CompileCache::load(const std::string& key) {
    const fs::path path = entryPath(key);
    std::error_code ec;
    const std::uint64_t size = fs::file_size(path, ec);
    if (ec) {
        ++m_misses;
        return std::nullopt;
    }
    std::optional<CompileResult> result;
    if (size <= kMaxEntryBytes) {
        bool ok = false;
        const std::string data = readFile(path, &ok);
        if (ok)
            result = decodeEntry(data, key);
    }
    if (!result) {
        // Left in place: a store of the same key replaces it atomically; deleting it here could
        // delete a good entry another process has just renamed over it.
        ++m_corrupt;
        ++m_misses;
        return std::nullopt;
    }
    // The modification time is the last use for LRU eviction (atime is often off: noatime).
    // Set from a fine clock: the kernel's own timestamps are coarse (jiffies).
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
    ++m_hits;
    return result;
}

bool CompileCache::store(const std::string& key, const CompileResult& result) {
    if (result.transient || result.status == CompileStatus::Cancelled || key.empty())
        return false;
    const std::string data = encodeEntry(key, result);
    const fs::path path = entryPath(key);
    const fs::path tempDir = m_directory / kTempFolder;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    fs::create_directories(tempDir, ec);

    // Unique per host, process, thread and call, so concurrent writers of one key never share a
    // file (the ranks of an MPI job write to one shared folder from several hosts).
    const std::string tempName = key + "." + hostTag() + std::to_string(getpid()) + "." +
                                 std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." +
                                 std::to_string(m_tempCounter++) + ".tmp";
    const fs::path temp = tempDir / tempName;
    bool written = false;
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (out) {
            out.write(data.data(), static_cast<std::streamsize>(data.size()));
            out.close();
            written = !out.fail();
        }
    }
    if (written) {
        fs::rename(temp, path, ec);
        written = !ec;
    }
    if (!written) {
        fs::remove(temp, ec);
        ++m_storeFailures;
        return false;
    }
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
    ++m_stores;

    bool overCap = false;
    {
        std::lock_guard lock(m_sizeMutex);
        if (!m_sizeKnown) {
            m_knownBytes = diskUsage(); // includes the entry just written
            m_sizeKnown = true;
        } else {
            m_knownBytes += data.size();
        }
        overCap = m_knownBytes > m_maxBytes;
    }
    if (overCap)
        evict();
    return true;
}

void CompileCache::evict() {
    std::lock_guard lock(m_sizeMutex);
    std::vector<EntryFile> entries = scanEntries(m_directory);
    std::uint64_t total = 0;
    for (const EntryFile& entry : entries)
        total += entry.size;

    if (total > m_maxBytes) {
        // Down to 90 % of the cap, so that the next few stores do not each trigger a scan.
        const std::uint64_t target = m_maxBytes / 10 * 9;
        std::sort(entries.begin(), entries.end(), [](const EntryFile& a, const EntryFile& b) {
            return a.lastUse != b.lastUse ? a.lastUse < b.lastUse : a.path < b.path;
        });
        for (const EntryFile& entry : entries) {
            if (total <= target)
                break;
            std::error_code ec;
            if (fs::remove(entry.path, ec))
                ++m_evicted;
            total -= entry.size; // gone either way: removed here or by another process
        }
    }
    m_knownBytes = total;
    m_sizeKnown = true;

    // Temporary files of writers that died before their rename.
    std::error_code ec;
    const auto staleBefore = fs::file_time_type::clock::now() - std::chrono::hours(1);
    for (fs::directory_iterator it(m_directory / kTempFolder, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code fileEc;
        if (it->last_write_time(fileEc) < staleBefore && !fileEc)
            fs::remove(it->path(), fileEc);
    }
}

void CompileCache::clear() {
    std::lock_guard lock(m_sizeMutex);
    for (const EntryFile& entry : scanEntries(m_directory)) {
        std::error_code ec;
        fs::remove(entry.path, ec);
    }
    m_knownBytes = 0;
    m_sizeKnown = true;
}

std::uint64_t CompileCache::diskUsage() const {
    std::uint64_t total = 0;
    for (const EntryFile& entry : scanEntries(m_directory))
        total += entry.size;
    return total;
}

std::uint64_t CompileCache::entryCount() const {
    return scanEntries(m_directory).size();
}

CompileCacheStats CompileCache::stats() const {
    CompileCacheStats s;
    s.hits = m_hits;
    s.misses = m_misses;
    s.corrupt = m_corrupt;
    s.stores = m_stores;
    s.storeFailures = m_storeFailures;
    s.evicted = m_evicted;
    return s;
}

} // namespace tilescope
