// StoredProblem: a session's problem read back from a real SQLite database after its files are
// gone (the kept copies written to a temporary folder that goes with it), the same problem (its
// hash, so that a resume finds the session), and the files it did not keep: taken from where they
// were when unchanged, else named as missing or changed.

#include "base/error.h"
#include "base/sha256.h"
#include "space/configspace.h"
#include "spec/problemfiles.h"
#include "store/resultstore.h"
#include "tuner/storedproblem.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

using namespace tilescope;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

const char* const kProblem = R"({
  "General": {"FormatVersion": 1},
  "ConfigurationSpace": {
    "TuningParameters": [{"Name": "BLOCK", "Type": "int", "Values": "[32, 64, 128, 256]"},
                         {"Name": "ITEMS", "Type": "int", "Values": "[1, 2, 4]"}],
    "Conditions": [{"Parameters": ["BLOCK", "ITEMS"], "Expression": "BLOCK * ITEMS <= 256"}]
  },
  "KernelSpecification": {
    "Language": "CUDA", "KernelName": "scale", "KernelFile": "../src/scale.cu",
    "GlobalSize": {"X": "4"}, "LocalSize": {"X": "BLOCK"}, "ProblemSize": ["4"],
    "Arguments": [
      {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly", "Size": "4",
       "FillType": "BinaryRaw", "DataSource": "x.bin"},
      {"Name": "y", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "4",
       "FillType": "BinaryRaw", "DataSource": "big.bin"}
    ]
  }
})";

const char* const kKernel = "#include \"scale.h\"\n__global__ void scale(float* x, float* y) {}\n";

// A problem folder (problem/ with its kernel in src/ up a level, including a header beside it)
// tuned into a database: the session as TuningSession stores it. Returns the session's id.
struct Tuned {
    fs::path root, problemFile, db;
    std::int64_t session = 0;
    std::string problemHash;
};

Tuned tune(const fs::path& root) {
    Tuned t;
    t.root = root;
    t.problemFile = root / "problem" / "scale.json";
    t.db = root / "results.db";
    write(t.problemFile, kProblem);
    write(root / "src" / "scale.cu", kKernel);
    write(root / "src" / "scale.h", "#define SCALE 2\n");
    write(root / "problem" / "x.bin", std::string(16, 'x'));
    write(root / "problem" / "big.bin", std::string(16, 'b'));
    const TuningProblem problem = TuningProblem::load(t.problemFile);
    ResultStore store = ResultStore::open(t.db);
    SessionInfo info;
    info.kernel = problem.kernelName;
    info.problemJson = problem.toJson();
    info.problemHash = Sha256::hex(Sha256::hash(info.problemJson));
    info.sourceHash = problem.sourceHash();
    info.shapeIndex = 0;
    info.backend = "analysis:sm_90";
    info.strategy = "exhaustive";
    info.provenanceJson = nlohmann::json{{"problem_file", t.problemFile.string()}}.dump();
    t.session = store.createSession(info);
    t.problemHash = info.problemHash;
    ProblemFileLimits limits;
    limits.maxDataBytes = 8; // big.bin (and x.bin) by hash only
    std::vector<ProblemFile> files = collectProblemFiles(problem, limits);
    for (ProblemFile& f : files) // x.bin kept after all: only big.bin over the limit
        if (f.path == "x.bin")
            f.data = std::string(16, 'x');
    store.addSessionFiles(t.session, files);
    return t;
}

} // namespace

class TestStoredProblem : public QObject {
    Q_OBJECT
private slots:
    void readBackAfterTheFilesAreGone();
    void aFileNotKeptAndGoneIsNamed();
    void aFileNotKeptThatChangedIsNamed();
    void aSessionThatKeptNoFiles();
    void sessionsWithoutAProblemAreRefused();
};

void TestStoredProblem::readBackAfterTheFilesAreGone() {
    QTemporaryDir tmp;
    const Tuned t = tune(fs::path(tmp.path().toStdString()) / "work");
    // The kernel, the header and the data are moved away; big.bin stays where it was, unchanged.
    fs::rename(t.root / "src", t.root / "src-gone");
    fs::rename(t.root / "problem" / "x.bin", t.root / "x-gone.bin");
    fs::path folder;
    {
        const std::unique_ptr<StoredProblem> stored = StoredProblem::open(t.db);
        const TuningProblem& problem = stored->problem();
        QCOMPARE(stored->session().id, t.session);
        QCOMPARE(stored->label(), t.db.string() + ", session " + std::to_string(t.session));
        QCOMPARE(problem.parameters.size(), std::size_t(2));
        QCOMPARE(problem.conditions.size(), std::size_t(1));
        QCOMPARE(ConfigSpace::build(problem, 0).size(), std::uint64_t(3 + 3 + 2 + 1));
        // The same problem: the same hash, so that a resume finds its session.
        QCOMPARE(Sha256::hex(Sha256::hash(problem.toJson())), t.problemHash);
        QCOMPARE(problem.problemPath, t.problemFile);
        // Its kernel ("../src/scale.cu") and header read from the kept copies, its data too.
        QVERIFY2(problem.launchBlockers.empty(),
                 problem.launchBlockers.empty() ? "" : problem.launchBlockers.front().what());
        QCOMPARE(read(problem.kernelPath()), std::string(kKernel));
        QCOMPARE(read(problem.kernelPath().parent_path() / "scale.h"), std::string("#define SCALE 2\n"));
        QCOMPARE(read(problem.baseDir / "x.bin"), std::string(16, 'x'));
        QCOMPARE(read(problem.baseDir / "big.bin"), std::string(16, 'b')); // from where it was
        QCOMPARE(read(stored->problemFile()), stored->session().problemJson);
        QCOMPARE(stored->problemFile().filename().string(), std::string("scale.json"));
        folder = stored->problemFile().parent_path();
        QVERIFY(fs::exists(folder));
        QVERIFY(stored->notes().empty());
        // Another session: none.
        QVERIFY_THROWS_EXCEPTION(InputError, StoredProblem::open(t.db, t.session + 1));
    }
    QVERIFY(!fs::exists(folder));                        // gone with the object
    QVERIFY(fs::exists(t.root / "problem" / "big.bin")); // and what it linked to stays

    // A kept file that changed where it was: the kept copy, and a note that names it.
    fs::rename(t.root / "src-gone", t.root / "src");
    write(t.root / "src" / "scale.h", "#define SCALE 3\n");
    const std::unique_ptr<StoredProblem> stored = StoredProblem::open(t.db, t.session);
    QCOMPARE(read(stored->problem().kernelPath().parent_path() / "scale.h"), std::string("#define SCALE 2\n"));
    QCOMPARE(stored->notes().size(), std::size_t(1));
    QVERIFY2(stored->notes().front().find("../src/scale.h changed at") == 0, stored->notes().front().c_str());
    QVERIFY(stored->notes().front().find("the copy the database kept is used") != std::string::npos);
}

void TestStoredProblem::aFileNotKeptAndGoneIsNamed() {
    QTemporaryDir tmp;
    const Tuned t = tune(fs::path(tmp.path().toStdString()) / "work");
    fs::remove(t.root / "problem" / "big.bin");
    const std::unique_ptr<StoredProblem> stored = StoredProblem::open(t.db);
    // Shown and counted all the same; running says why it cannot.
    QCOMPARE(ConfigSpace::build(stored->problem(), 0).size(), std::uint64_t(9));
    QCOMPARE(stored->problem().launchBlockers.size(), std::size_t(1));
    const std::string why = stored->problem().launchBlockers.front().message();
    QVERIFY2(why.find("big.bin is not in the database") == 0, why.c_str());
    QVERIFY2(why.find((t.root / "problem" / "big.bin").string()) != std::string::npos, why.c_str());
    QVERIFY_THROWS_EXCEPTION(InputError, stored->problem().requireLaunchable());
}

void TestStoredProblem::aFileNotKeptThatChangedIsNamed() {
    QTemporaryDir tmp;
    const Tuned t = tune(fs::path(tmp.path().toStdString()) / "work");
    write(t.root / "problem" / "big.bin", std::string(16, 'c'));
    const std::unique_ptr<StoredProblem> stored = StoredProblem::open(t.db);
    QCOMPARE(stored->problem().launchBlockers.size(), std::size_t(1));
    const std::string why = stored->problem().launchBlockers.front().message();
    QVERIFY2(
        why.find("big.bin changed at " + (t.root / "problem" / "big.bin").string() + " since session 1 was tuned") == 0,
        why.c_str());
    QVERIFY2(why.find(Sha256::hex(Sha256::hash(std::string(16, 'b'))).substr(0, 12) + " then") != std::string::npos,
             why.c_str());
}

void TestStoredProblem::aSessionThatKeptNoFiles() {
    // A session stored before files were kept: its files where they were, while they are there.
    QTemporaryDir tmp;
    const Tuned t = tune(fs::path(tmp.path().toStdString()) / "work");
    {
        ResultStore store = ResultStore::open(t.db);
        SessionInfo info = *store.session(t.session);
        info.id = 0;
        const std::int64_t old = store.createSession(info); // its problem, no files
        const std::unique_ptr<StoredProblem> stored = StoredProblem::open(t.db, old);
        QCOMPARE(stored->notes().size(), std::size_t(1));
        QVERIFY2(stored->notes().front().find("kept no files") != std::string::npos, stored->notes().front().c_str());
        QCOMPARE(stored->problem().kernelPath().lexically_normal(), (t.root / "src" / "scale.cu").lexically_normal());
        QVERIFY(stored->problem().launchBlockers.empty());
        // Its kernel changed since: named by the source hash the session recorded.
        write(t.root / "src" / "scale.cu", std::string(kKernel) + "// changed\n");
        const std::unique_ptr<StoredProblem> changed = StoredProblem::open(t.db, old);
        QCOMPARE(changed->problem().launchBlockers.size(), std::size_t(1));
        QVERIFY(changed->problem().launchBlockers.front().message().find("changed since session") != std::string::npos);
        // Nor does it say where its problem was: the space shows, and what is missing is said
        // (not a kernel file looked for in the private folder).
        info.provenanceJson = "{}";
        const std::int64_t nowhere = store.createSession(info);
        const std::unique_ptr<StoredProblem> lost = StoredProblem::open(t.db, nowhere);
        QCOMPARE(lost->problem().launchBlockers.size(), std::size_t(1));
        const std::string why = lost->problem().launchBlockers.front().message();
        QVERIFY2(why.find("kept no kernel file, and the database does not say where its problem was") !=
                         std::string::npos &&
                     why.find("not found") == std::string::npos,
                 why.c_str());
    }
}

void TestStoredProblem::sessionsWithoutAProblemAreRefused() {
    QTemporaryDir tmp;
    const fs::path db = fs::path(tmp.path().toStdString()) / "imported.db";
    {
        ResultStore store = ResultStore::open(db);
        SessionInfo info;
        info.kernel = "scale";
        info.backend = "import:cache.json";
        info.state = SessionState::Imported;
        store.createSession(info);
    }
    try {
        StoredProblem::open(db);
        QFAIL("a database without a stored problem opened");
    } catch (const InputError& e) {
        QVERIFY2(std::string(e.message()).find("imported results carry none") != std::string::npos, e.what());
    }
    try {
        StoredProblem::open(db, 1);
        QFAIL("a session without a stored problem opened");
    } catch (const InputError& e) {
        QCOMPARE(e.location(), std::string("--session"));
    }
    // A problem file is no database.
    const fs::path problem = fs::path(tmp.path().toStdString()) / "p.json";
    write(problem, kProblem);
    QVERIFY(!isResultsDatabase(problem));
    QVERIFY(isResultsDatabase(db));
}

QTEST_GUILESS_MAIN(TestStoredProblem)
#include "tst_storedproblem.moc"
