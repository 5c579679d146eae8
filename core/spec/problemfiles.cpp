#include "spec/problemfiles.h"

#include "base/sha256.h"
#include "spec/tuningproblem.h"

#include <array>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace tilescope {

namespace fs = std::filesystem;

namespace {

// Reads a whole file; nullopt when it cannot be read.
std::optional<std::string> readWhole(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad())
        return std::nullopt;
    return text.str();
}

bool isRegularFile(const fs::path& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec);
}

// The folders of relative -I (and --include-path) options, taken from the problem's folder.
std::vector<fs::path> relativeIncludeDirs(const TuningProblem& problem) {
    std::vector<fs::path> dirs;
    const std::vector<std::string>& options = problem.compilerOptions;
    for (std::size_t i = 0; i < options.size(); ++i) {
        const std::string& o = options[i];
        std::string dir;
        if ((o == "-I" || o == "--include-path") && i + 1 < options.size())
            dir = options[++i];
        else if (o.rfind("--include-path=", 0) == 0)
            dir = o.substr(15);
        else if (o.rfind("-I", 0) == 0)
            dir = o.substr(2);
        // A variable ($CUTLASS_DIR) names a library's folder, not the problem's.
        if (dir.empty() || dir.find('$') != std::string::npos || fs::path(dir).is_absolute())
            continue;
        dirs.push_back(problem.baseDir / dir);
    }
    return dirs;
}

struct Include {
    std::string name;
    bool quoted = false;
};

// The #include lines of a source (a line at a time: # and include may stand apart).
std::vector<Include> includesOf(const std::string& source) {
    std::vector<Include> out;
    std::istringstream lines(source);
    std::string line;
    const auto skipBlanks = [&](std::size_t i) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
            ++i;
        return i;
    };
    while (std::getline(lines, line)) {
        std::size_t i = skipBlanks(0);
        if (i >= line.size() || line[i] != '#')
            continue;
        i = skipBlanks(i + 1);
        if (line.compare(i, 7, "include") != 0)
            continue;
        i = skipBlanks(i + 7);
        if (i >= line.size() || (line[i] != '"' && line[i] != '<'))
            continue;
        const char close = line[i] == '"' ? '"' : '>';
        const std::size_t end = line.find(close, i + 1);
        if (end == std::string::npos || end == i + 1)
            continue;
        out.push_back({line.substr(i + 1, end - i - 1), close == '"'});
    }
    return out;
}

// The path of `file` relative to the problem's folder, as a problem would name it.
std::string relativeName(const fs::path& file, const fs::path& baseDir) {
    const fs::path relative = file.lexically_normal().lexically_relative(baseDir.lexically_normal());
    return relative.empty() ? file.lexically_normal().generic_string() : relative.generic_string();
}

class Collector {
public:
    Collector(const TuningProblem& problem, const ProblemFileLimits& limits)
        : m_problem(problem)
        , m_limits(limits) {}

    std::vector<ProblemFile> collect() {
        const TuningProblem& p = m_problem;
        if (!p.kernelFile.empty()) {
            const std::optional<std::string> source = add(ProblemFile::Role::Kernel, p.kernelFile, false);
            if (source && p.isCuda()) {
                std::error_code ec;
                const fs::path kernel = fs::absolute(p.kernelPath(), ec);
                m_searchDirs.push_back(kernel.parent_path());
                for (const fs::path& dir : relativeIncludeDirs(p))
                    m_searchDirs.push_back(fs::absolute(dir, ec));
                followIncludes(*source, kernel.parent_path(), 0);
            }
        }
        for (const KernelArgument& a : p.arguments)
            if (a.fillType == "BinaryRaw" && !a.dataSource.empty())
                add(ProblemFile::Role::Data, a.dataSource, true);
        for (const ReferenceArgument& r : p.referenceArguments)
            if (r.fillType == "BinaryRaw" && !r.dataSource.empty())
                add(ProblemFile::Role::Data, r.dataSource, true);
        return std::move(m_files);
    }

private:
    // Adds the file the problem names `named` (relative to its folder, or absolute); returns its
    // contents when they are kept. Nothing when it cannot be read or was added before.
    std::optional<std::string> add(ProblemFile::Role role, const std::string& named, bool isData) {
        const fs::path path(named);
        const fs::path file = path.is_absolute() || m_problem.baseDir.empty() ? path : m_problem.baseDir / path;
        ProblemFile f;
        f.role = role;
        f.path = path.lexically_normal().generic_string();
        if (!m_paths.insert(f.path).second || !isRegularFile(file))
            return std::nullopt;
        if (!hashFile(file, f.hash, f.size))
            return std::nullopt;
        std::optional<std::string> contents;
        if (!path.is_absolute() && !(isData && f.size > m_limits.maxDataBytes)) {
            contents = readWhole(file);
            // Changed between the two reads: keep what was read, under its own hash.
            if (contents && contents->size() != f.size) {
                f.size = contents->size();
                f.hash = Sha256::hex(Sha256::hash(*contents));
            }
        }
        f.data = contents;
        m_files.push_back(std::move(f));
        return contents;
    }

    void followIncludes(const std::string& source, const fs::path& dir, int depth) {
        if (depth >= m_limits.maxDepth)
            return;
        for (const Include& include : includesOf(source)) {
            std::vector<fs::path> candidates;
            if (include.quoted)
                candidates.push_back(dir / include.name);
            for (const fs::path& d : m_searchDirs)
                candidates.push_back(d / include.name);
            for (const fs::path& candidate : candidates) {
                if (!isRegularFile(candidate))
                    continue;
                if (m_headers >= m_limits.maxHeaders)
                    return;
                const fs::path normal = candidate.lexically_normal();
                if (!m_seen.insert(normal.string()).second)
                    break;
                ++m_headers;
                const std::optional<std::string> text =
                    add(ProblemFile::Role::Header, relativeName(normal, fs::absolute(m_problem.baseDir)), false);
                if (text)
                    followIncludes(*text, normal.parent_path(), depth + 1);
                break; // the first folder that holds it is the one the compiler reads
            }
        }
    }

    const TuningProblem& m_problem;
    const ProblemFileLimits& m_limits;
    std::vector<fs::path> m_searchDirs;
    std::vector<ProblemFile> m_files;
    std::set<std::string> m_paths; // as stored
    std::set<std::string> m_seen;  // headers followed, by absolute path
    std::size_t m_headers = 0;
};

} // namespace

bool hashFile(const fs::path& path, std::string& hash, std::uint64_t& size) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return false;
    Sha256 sha;
    std::array<char, 1 << 16> buffer;
    size = 0;
    while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
        sha.update(buffer.data(), static_cast<std::size_t>(in.gcount()));
        size += static_cast<std::uint64_t>(in.gcount());
    }
    if (in.bad())
        return false;
    hash = Sha256::hex(sha.finish());
    return true;
}

std::vector<ProblemFile> collectProblemFiles(const TuningProblem& problem, const ProblemFileLimits& limits) {
    return Collector(problem, limits).collect();
}

} // namespace tilescope
