#include "tuner/storedproblem.h"

#include "base/error.h"
#include "base/textformat.h"
#include "spec/problemfiles.h"
#include "store/resultstore.h"
#include "tuner/backendspec.h"

#include <nlohmann/json.hpp>

#include <stdlib.h> // mkdtemp

#include <algorithm>
#include <fstream>

namespace tilescope {

namespace fs = std::filesystem;

namespace {

// How many folders up from the problem's folder a relative path reaches ("../../x.h": 2).
int levelsUp(const std::string& path) {
    const fs::path p = fs::path(path).lexically_normal();
    if (p.is_absolute())
        return 0;
    int up = 0;
    for (const fs::path& part : p) {
        if (part != "..")
            break;
        ++up;
    }
    return up;
}

std::string shortHash(const std::string& hash) {
    return hash.substr(0, 12);
}

std::string sizeText(std::uint64_t bytes) {
    return formatBytes(bytes);
}

// Where the session's problem file was when it was tuned (its provenance), "" when not recorded.
fs::path originalProblemFile(const SessionInfo& session) {
    const nlohmann::json p =
        nlohmann::json::parse(session.provenanceJson.empty() ? "{}" : session.provenanceJson, nullptr, false);
    if (!p.is_object())
        return {};
    const auto it = p.find("problem_file");
    return it != p.end() && it->is_string() ? fs::path(it->get<std::string>()) : fs::path();
}

SessionInfo chooseSession(const ResultStore& store, const std::string& db, std::optional<std::int64_t> id) {
    const std::vector<SessionInfo> sessions = store.sessions();
    if (id) {
        const auto it =
            std::find_if(sessions.begin(), sessions.end(), [&](const SessionInfo& s) { return s.id == *id; });
        if (it == sessions.end()) {
            std::string ids;
            for (const SessionInfo& s : sessions)
                ids += (ids.empty() ? "" : ", ") + std::to_string(s.id);
            throw InputError(db, "--session",
                             "there is no session " + std::to_string(*id) +
                                 (ids.empty() ? " (the database holds none)" : " (its sessions: " + ids + ")"));
        }
        if (it->problemJson.empty())
            throw InputError(db, "--session",
                             "session " + std::to_string(*id) + " holds results without their problem (" +
                                 (it->backend.empty() ? std::string("an import") : it->backend) +
                                 "): open its T1 problem file instead");
        return *it;
    }
    for (auto it = sessions.rbegin(); it != sessions.rend(); ++it)
        if (!it->problemJson.empty())
            return *it;
    throw InputError(db, "",
                     sessions.empty() ? "the database holds no session"
                                      : "no session of the database holds its problem (imported results carry none): "
                                        "open the T1 problem file instead");
}

void writeBytes(const fs::path& path, const std::string& bytes) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out)
        throw std::runtime_error("cannot write " + path.string());
}

// Puts the original file where the problem looks for it: a link, else a copy.
void linkOrCopy(const fs::path& original, const fs::path& target) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    fs::create_symlink(fs::absolute(original, ec), target, ec);
    if (ec)
        fs::copy_file(original, target, fs::copy_options::overwrite_existing, ec);
}

} // namespace

struct StoredProblem::Key {};

StoredProblem::StoredProblem(Key) {}

StoredProblem::~StoredProblem() {
    if (!m_folder.empty()) {
        std::error_code ec;
        fs::remove_all(m_folder, ec);
    }
}

std::unique_ptr<StoredProblem> StoredProblem::open(const fs::path& database, std::optional<std::int64_t> sessionId) {
    const std::string db = database.string();
    const ResultStore store = ResultStore::open(database, StoreMode::ReadOnly);
    auto stored = std::make_unique<StoredProblem>(Key{});
    stored->m_session = chooseSession(store, db, sessionId);
    const SessionInfo& session = stored->m_session;
    const std::string sessionName = "session " + std::to_string(session.id);
    stored->m_label = db + ", " + sessionName;
    const std::vector<ProblemFile> files = store.sessionFiles(session.id, true);
    const fs::path originalFile = originalProblemFile(session);
    const fs::path originalDir = originalFile.empty() ? fs::path() : originalFile.parent_path();

    // The problem as written, to see how far up its files reach.
    const TuningProblem peek = TuningProblem::parse(session.problemJson, stored->m_label, {});
    int up = levelsUp(peek.kernelFile);
    for (const ProblemFile& f : files)
        up = std::max(up, levelsUp(f.path));

    std::error_code ec;
    std::string pattern = (fs::temp_directory_path(ec) / "tilescope-problem-XXXXXX").string();
    if (ec || ::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("cannot make a temporary folder for the problem of " + stored->m_label);
    stored->m_folder = pattern;
    fs::path problemDir = stored->m_folder / "problem";
    for (int i = 0; i < up; ++i)
        problemDir /= "up" + std::to_string(i + 1); // so that "../x.h" stays inside the folder
    fs::create_directories(problemDir, ec);

    std::vector<InputError> blockers;
    const auto where = [](const ProblemFile& f) {
        return f.role == ProblemFile::Role::Kernel ? std::string("/KernelSpecification/KernelFile") : std::string();
    };
    for (const ProblemFile& f : files) {
        const fs::path named(f.path);
        const bool absolute = named.is_absolute();
        const fs::path original = absolute ? named : originalDir.empty() ? fs::path() : originalDir / named;
        std::string nowHash;
        std::uint64_t nowSize = 0;
        const bool there = !original.empty() && hashFile(original, nowHash, nowSize);
        if (f.data) {
            writeBytes(problemDir / named.lexically_normal(), *f.data);
            stored->m_written.push_back(f.path);
            if (there && nowHash != f.hash)
                stored->m_notes.push_back(f.path + " changed at " + original.string() + " since " + sessionName +
                                          " was tuned (SHA-256 " + shortHash(f.hash) + " then, " + shortHash(nowHash) +
                                          " now): the copy the database kept is used");
            continue;
        }
        const std::string why =
            absolute ? "the database keeps only the hash of a file named by an absolute path"
                     : "the database keeps only the hash of a data file over 64 MiB (" + sizeText(f.size) + ")";
        if (there && nowHash == f.hash) {
            if (!absolute) {
                linkOrCopy(original, problemDir / named.lexically_normal());
                stored->m_written.push_back(f.path);
            }
        } else if (there) {
            blockers.emplace_back(stored->m_label, where(f),
                                  f.path + " changed at " + original.string() + " since " + sessionName +
                                      " was tuned (SHA-256 " + shortHash(f.hash) + " then, " + shortHash(nowHash) +
                                      " now), and " + why + ": put the file it was back there");
        } else {
            blockers.emplace_back(stored->m_label, where(f),
                                  f.path + " is not in the database (" + why + ") and not at " +
                                      (original.empty() ? std::string("its original place (the database does not say "
                                                                      "where the problem was)")
                                                        : "its original place, " + original.string()) +
                                      ": put it back there to run the session");
        }
    }

    // A session stored before files were kept: its files where they were, if they still are.
    fs::path baseDir = problemDir;
    if (files.empty()) {
        if (!originalDir.empty() && fs::is_directory(originalDir, ec))
            baseDir = originalDir;
        stored->m_notes.push_back(
            sessionName + " kept no files (it was stored by an older Tilescope): " +
            (baseDir == problemDir ? std::string("its space is shown; where its kernel was, the database does not say")
                                   : "its kernel is read from " + originalDir.string() + ", where it was"));
    }

    // The T1 file beside the files, under its original name where it has one.
    std::string name = originalFile.empty() ? peek.kernelName + ".json" : originalFile.filename().string();
    if (name.empty() || name == ".json" || fs::exists(problemDir / name, ec))
        name = "problem.json";
    stored->m_problemFile = problemDir / name;
    writeBytes(stored->m_problemFile, session.problemJson);

    stored->m_problem = TuningProblem::parse(session.problemJson, stored->m_label, baseDir);
    stored->m_problem.problemPath = originalFile;
    if (files.empty() && baseDir == problemDir) {
        // Not "kernel file not found (looked in <the private folder>)": what is missing, and where from.
        auto& kept = stored->m_problem.launchBlockers;
        kept.erase(std::remove_if(kept.begin(), kept.end(),
                                  [](const InputError& e) {
                                      return e.location().rfind("/KernelSpecification/KernelFile", 0) == 0;
                                  }),
                   kept.end());
        blockers.emplace_back(stored->m_label, "/KernelSpecification/KernelFile",
                              sessionName + " was stored by an older Tilescope, which kept no kernel file, and the "
                                            "database does not say where its problem was: open the problem's T1 "
                                            "file to compile and run it");
    }
    if (files.empty() && !session.sourceHash.empty()) {
        const std::string now = stored->m_problem.sourceHash();
        if (!now.empty() && now != session.sourceHash)
            blockers.emplace_back(stored->m_label, "/KernelSpecification/KernelFile",
                                  stored->m_problem.kernelPath().string() + " changed since " + sessionName +
                                      " was tuned (SHA-256 " + shortHash(session.sourceHash) + " then, " +
                                      shortHash(now) + " now)");
    }
    for (InputError& b : blockers)
        stored->m_problem.launchBlockers.push_back(std::move(b));
    return stored;
}

const std::vector<std::string>& OpenedProblem::notes() const {
    static const std::vector<std::string> kNone;
    return stored ? stored->notes() : kNone;
}

OpenedProblem openProblem(const fs::path& path, std::optional<std::int64_t> session) {
    OpenedProblem opened;
    if (isResultsDatabase(path)) {
        opened.stored = StoredProblem::open(path, session);
        opened.problem = opened.stored->problem();
        return opened;
    }
    if (session)
        throw InputError("", "--session",
                         "--session is for a results database, and " + path.string() + " is a problem file");
    opened.problem = TuningProblem::load(path);
    return opened;
}

bool isResultsDatabase(const fs::path& path) {
    return ResultStore::isDatabaseFile(path);
}

std::optional<std::string> backendSpecOf(const SessionInfo& session) {
    if (session.backend.empty() || session.state == SessionState::Imported)
        return std::nullopt;
    try {
        if (parseBackendSpec(session.backend).label() == session.backend)
            return session.backend;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

} // namespace tilescope
