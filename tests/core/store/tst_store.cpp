// The results database: what goes in comes out, commits are timely, readers read while a writer
// writes, and bad paths, foreign files and newer schemas are refused with a clear message.

#include "base/error.h"
#include "model/configjson.h"
#include "store/resultstore.h"
#include "store/schema.h"

#include <QDir>
#include <QFileInfo>
#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace tilescope;

namespace {

std::string path(const QTemporaryDir& dir, const char* name) {
    return dir.filePath(name).toStdString();
}

// Raw SQL on a database file, bypassing ResultStore (to tamper with it as another program might).
void rawSql(const std::string& file, const char* sql) {
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    QVERIFY2(rc == SQLITE_OK, message.c_str());
}

std::string rawQuery(const std::string& file, const char* sql) {
    sqlite3* db = nullptr;
    sqlite3_open(file.c_str(), &db);
    sqlite3_stmt* stmt = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
        out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
}

SessionInfo sampleSession() {
    SessionInfo s;
    s.kernel = "sgemm";
    s.problemJson = "{\"General\": {}}";
    s.problemHash = "abc123";
    s.sourceHash = "def456";
    s.shapeIndex = 1;
    s.shape = {{"M", 2048}, {"N", 1024}, {"K", 512}};
    s.problemSize = {1024, 2048};
    s.parameters = {"BLOCK_M", "LAYOUT", "SCALE"};
    s.backend = "replay:/tmp/rec.json";
    s.strategy = "random";
    s.seed = 42;
    s.budget = "100 configs";
    s.deviceName = "NVIDIA H200";
    s.arch = "sm_90";
    s.provenanceJson = "{\"driver\":\"580.1\"}";
    s.objectiveName = "TFLOP/s";
    s.spaceSize = 2761;
    s.startedAt = "2026-11-29T10:00:00.000Z";
    return s;
}

ResultRecord sampleResult(int i, ResultStatus status = ResultStatus::Ok) {
    ResultRecord r;
    r.spaceIndex = static_cast<std::uint64_t>(i);
    r.config = ConfigValues{};
    r.config["BLOCK_M"] = 32 * (i + 1);
    r.config["LAYOUT"] = i % 2 ? "row" : "col";
    r.config["SCALE"] = 0.5 * i;
    Measurement& m = r.measurement;
    m.status = status;
    if (status == ResultStatus::Ok || status == ResultStatus::WrongResult) {
        m.time = {1.0 + i, 0.9 + i, 1.2 + i, 0.01 * i, 10 + i, i % 2 ? 0.95 + i : 0.0, i % 2 ? 1.05 + i : 0.0};
        r.objective = 100.0 / (1.0 + i);
    }
    m.compileSeconds = 0.25 + i;
    m.benchmarkSeconds = 0.05 * i;
    if (i % 3 == 0)
        m.metrics = {{"dram__bytes_read.sum", 1e9 + i}, {"sm__warps_active.avg.pct_of_peak_sustained_active", 55.5}};
    if (status == ResultStatus::WrongResult)
        m.verificationError = 0.125;
    if (status != ResultStatus::Ok)
        m.message = "why, with \"quotes\", commas\nand a newline";
    m.device = i % 2 ? 0 : -1;
    if (i % 2 == 0) {
        StaticInfo info;
        info.registers = 64 + i;
        info.barriers = 1;
        info.stackFrame = 16;
        info.spillStores = i;
        info.spillLoads = 2 * i;
        info.sharedStatic = 4096;
        info.constantBytes = 380;
        m.staticInfo = info;
        r.blockSize = 256;
        r.sharedDynamic = 0;
        r.occupancy = 62.5;
    }
    if (status == ResultStatus::CompileError)
        r.log = "error: identifier \"x\" is undefined";
    r.recordedAt = "2026-11-29T10:00:0" + std::to_string(i % 10) + ".000Z";
    return r;
}

void compareRecords(const ResultRecord& got, const ResultRecord& want) {
    QCOMPARE(configJson(got.config), configJson(want.config));
    QCOMPARE(got.spaceIndex, want.spaceIndex);
    QVERIFY(got.measurement == want.measurement);
    QCOMPARE(got.objective, want.objective);
    QCOMPARE(got.blockSize, want.blockSize);
    QCOMPARE(got.sharedDynamic, want.sharedDynamic);
    QCOMPARE(got.occupancy, want.occupancy);
    QCOMPARE(got.log, want.log);
    QCOMPARE(got.recordedAt, want.recordedAt);
}

template <typename F>
QString inputErrorOf(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

// A database as Tilescope wrote it at schema 1, made by its own SQL (no ResultStore).
void makeSchema1(const std::string& file) {
    rawSql(file, store::migrations()[0].sql);
    rawSql(file, "INSERT INTO schema_version (version, applied_at, tool_version) VALUES (1, 'then', '0.1')");
    rawSql(file, ("PRAGMA application_id = " + std::to_string(store::kApplicationId)).c_str());
}

// The work of one process of concurrentOpensOfOneDatabase (a fresh process of this program, so no
// test macros): opens the database, adds a finished session of `results` results; 0 when all went
// in, else 1 with the error written to `errorFd`.
constexpr const char* kChildFlag = "--add-session-child";

int addSessionInChild(const std::string& file, int results, int errorFd) {
    try {
        ResultStore store = ResultStore::open(file);
        const std::int64_t id = store.createSession(sampleSession());
        for (int i = 0; i < results; ++i)
            store.append(id, sampleResult(i));
        store.setSessionState(id, SessionState::Finished);
        store.flush();
        return 0;
    } catch (const std::exception& e) {
        const std::string line = std::string(e.what()) + "\n";
        [[maybe_unused]] const ssize_t written = ::write(errorFd, line.data(), line.size());
        return 1;
    }
}

// SQLite's quick_check of a file: "ok", or what it found first (or the error that stopped it).
std::string quickCheck(const std::string& file) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* stmt = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &stmt, nullptr) != SQLITE_OK)
        out = sqlite3_errmsg(db);
    else if (const int rc = sqlite3_step(stmt); rc == SQLITE_ROW)
        out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    else
        out = sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
}

std::string fileBytes(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

} // namespace

class TestStore : public QObject {
    Q_OBJECT

private slots:
    void statusNamesRoundTrip() {
        QCOMPARE(kStatusCount, std::size_t(10));
        for (const ResultStatus s : kAllStatuses)
            QCOMPARE(parseStatus(statusName(s)), std::optional<ResultStatus>(s));
        QCOMPARE(statusName(ResultStatus::CompileError), std::string_view("compile_error"));
        QCOMPARE(statusName(ResultStatus::WrongResult), std::string_view("wrong_result"));
        QCOMPARE(statusName(ResultStatus::Implausible), std::string_view("implausible"));
        QVERIFY(isMeasured(ResultStatus::Implausible));
        QVERIFY(!parseStatus("fine"));
        QVERIFY(!parseStatus(""));
        QVERIFY(isMeasured(ResultStatus::Pruned));
        QVERIFY(!isMeasured(ResultStatus::Skipped));
        QCOMPARE(statusName(ResultStatus::Analysed), std::string_view("analysed"));
        QVERIFY(isMeasured(ResultStatus::Analysed)); // final for its session: a resume does not compile it again
        for (const StaticRank r : kAllStaticRanks)
            QCOMPARE(parseStaticRank(staticRankName(r)), std::optional<StaticRank>(r));
        QVERIFY(!parseStaticRank("time"));
    }

    // Results compiled and analysed, never run, rank by what compiling told (occupancy, then spills,
    // then registers by default; or by the quantity asked for), after every timed result, and
    // before failures and pruned configs; the store ranks and picks the best the same way.
    void analysedResultsRankByWhatCompilingTold() {
        const auto analysed = [](int i, double occupancy, int registers, std::int64_t spills) {
            ResultRecord r;
            r.id = i;
            r.config = ConfigValues{};
            r.config["B"] = i;
            r.measurement.status = ResultStatus::Analysed;
            StaticInfo info;
            info.registers = registers;
            info.spillStores = spills;
            info.spillLoads = spills;
            r.measurement.staticInfo = info;
            r.occupancy = occupancy;
            return r;
        };
        const ResultRecord a = analysed(1, 50, 64, 0);  // half occupancy, no spills
        const ResultRecord b = analysed(2, 100, 32, 8); // full occupancy, spills
        const ResultRecord c = analysed(3, 50, 40, 0);  // half occupancy, fewer registers than a
        ResultRecord noInfo = analysed(4, 0, -1, 0);    // knows nothing: last among them
        noInfo.measurement.staticInfo.reset();
        noInfo.occupancy.reset();
        ResultRecord pruned = analysed(5, 100, 16, 0);
        pruned.measurement.status = ResultStatus::Pruned;
        ResultRecord timed = sampleResult(7);
        timed.id = 7;
        QVERIFY(a.ranksStatically() && a.mayWin() && !a.ranks());
        QVERIFY(!pruned.mayWin());
        QVERIFY(timed.mayWin() && !timed.ranksStatically());

        const auto order = [](const std::vector<ResultRecord>& results, StaticRank by) {
            std::vector<std::int64_t> ids;
            for (const ResultRecord& r : ranked(results, by))
                ids.push_back(r.id);
            return ids;
        };
        const std::vector<ResultRecord> all = {pruned, noInfo, a, b, c};
        QCOMPARE(order(all, StaticRank::Occupancy), (std::vector<std::int64_t>{2, 3, 1, 4, 5}));
        QCOMPARE(order(all, StaticRank::Registers), (std::vector<std::int64_t>{2, 3, 1, 4, 5}));
        QCOMPARE(order(all, StaticRank::Spills), (std::vector<std::int64_t>{3, 1, 2, 4, 5}));
        QCOMPARE(order({a, b, analysed(6, 100, 20, 8)}, StaticRank::Registers), (std::vector<std::int64_t>{6, 2, 1}));
        // A timed result ranks first whatever its time.
        QCOMPARE(order({a, b, timed}, StaticRank::Occupancy).front(), std::int64_t(7));
        QCOMPARE(bestOf({a, b, timed})->id, std::int64_t(7));
        QCOMPARE(bestOf({a, b, c, pruned})->id, std::int64_t(2));
        QCOMPARE(bestOf({a, b, c, pruned}, StaticRank::Spills)->id, std::int64_t(3));
        QVERIFY(!bestOf({pruned}));
        // Alike: the earlier config of the space first, whichever was stored first (compiles finish
        // in any order); without space indices, the earlier stored.
        ResultRecord later = analysed(8, 50, 64, 0), earlier = analysed(9, 50, 64, 0);
        later.spaceIndex = 20;
        earlier.spaceIndex = 3;
        QCOMPARE(order({later, earlier}, StaticRank::Occupancy), (std::vector<std::int64_t>{9, 8}));
        later.spaceIndex.reset();
        QCOMPARE(order({later, earlier}, StaticRank::Occupancy), (std::vector<std::int64_t>{8, 9}));

        QCOMPARE(describeStatic(b), std::string("occupancy 100 %, spills 8/8 B, 32 registers"));
        QCOMPARE(describeStatic(b, StaticRank::Registers), std::string("32 registers, spills 8/8 B, occupancy 100 %"));
        QCOMPARE(describeStatic(a, StaticRank::Spills), std::string("no spills, occupancy 50 %, 64 registers"));
        QCOMPARE(describeStatic(noInfo), std::string());

        // Stored and read back, in a session of their own.
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(path(dir, "r.db"));
        const std::int64_t id = store.createSession(sampleSession());
        for (ResultRecord r : all) {
            r.id = 0;
            store.append(id, r);
        }
        QCOMPARE(store.statusCounts(id).of(ResultStatus::Analysed), std::uint64_t(4));
        QCOMPARE(store.best(id)->config.find("B")->plain(), std::string("2"));
        QCOMPARE(store.best(id, StaticRank::Spills)->config.find("B")->plain(), std::string("3"));
        const std::vector<ResultRecord> top = store.results(id, true, 2, StaticRank::Spills);
        QCOMPARE(top.size(), std::size_t(2));
        QCOMPARE(top[1].config.find("B")->plain(), std::string("1"));
    }

    void whatGoesInComesOut() {
        QTemporaryDir dir;
        const std::string file = path(dir, "r.db");
        const SessionInfo info = sampleSession();
        std::vector<ResultRecord> written;
        std::int64_t id = 0;
        {
            ResultStore store = ResultStore::open(file);
            QCOMPARE(store.schemaVersion(), ResultStore::kSchemaVersion);
            id = store.createSession(info);
            QVERIFY(id > 0);
            const ResultStatus statuses[] = {
                ResultStatus::Ok, ResultStatus::CompileError, ResultStatus::WrongResult, ResultStatus::Pruned,
                ResultStatus::Ok, ResultStatus::Crashed,      ResultStatus::Timeout,     ResultStatus::LaunchError};
            for (int i = 0; i < 8; ++i) {
                written.push_back(sampleResult(i, statuses[i]));
                written.back().id = store.append(id, written.back());
            }
        } // closing commits
        const ResultStore store = ResultStore::open(file, StoreMode::ReadOnly);
        QVERIFY(store.readOnly());
        const auto sessions = store.sessions();
        QCOMPARE(sessions.size(), std::size_t(1));
        const SessionInfo& s = sessions[0];
        QCOMPARE(s.id, id);
        QCOMPARE(s.kernel, info.kernel);
        QCOMPARE(s.problemJson, info.problemJson);
        QCOMPARE(s.problemHash, info.problemHash);
        QCOMPARE(s.sourceHash, info.sourceHash);
        QCOMPARE(s.shapeIndex, info.shapeIndex);
        QVERIFY(s.shape == info.shape);
        QVERIFY(s.problemSize == info.problemSize);
        QVERIFY(s.parameters == info.parameters);
        QCOMPARE(s.backend, info.backend);
        QCOMPARE(s.strategy, info.strategy);
        QCOMPARE(s.seed, info.seed);
        QCOMPARE(s.budget, info.budget);
        QCOMPARE(s.deviceName, info.deviceName);
        QCOMPARE(s.arch, info.arch);
        QCOMPARE(s.provenanceJson, info.provenanceJson);
        QCOMPARE(s.objectiveName, info.objectiveName);
        QCOMPARE(s.spaceSize, info.spaceSize);
        QCOMPARE(s.startedAt, info.startedAt);
        QCOMPARE(s.state, SessionState::Running);
        QCOMPARE(s.shapeLabel(), std::string("M=2048 N=1024 K=512"));

        const auto results = store.results(id);
        QCOMPARE(results.size(), written.size());
        for (std::size_t i = 0; i < results.size(); ++i) {
            QCOMPARE(results[i].id, written[i].id);
            QCOMPARE(results[i].sessionId, id);
            compareRecords(results[i], written[i]);
        }
        const StatusCounts counts = store.statusCounts(id);
        QCOMPARE(counts.total, std::uint64_t(8));
        QCOMPARE(counts.of(ResultStatus::Ok), std::uint64_t(2));
        QCOMPARE(store.resultCount(id), std::uint64_t(8));

        // Ranked: Ok by objective (higher first), then the failures in their order.
        const auto ranked = store.results(id, true);
        QCOMPARE(configJson(ranked[0].config), configJson(written[0].config));
        QCOMPARE(configJson(ranked[1].config), configJson(written[4].config));
        QCOMPARE(ranked[2].status(), ResultStatus::CompileError);
        QCOMPARE(store.results(id, true, 3).size(), std::size_t(3));
        QCOMPARE(configJson(store.best(id)->config), configJson(written[0].config));

        const SessionData data = store.load(id);
        QCOMPARE(data.results.size(), std::size_t(8));
        QVERIFY(!inputErrorOf([&] { store.load(99); }).isEmpty());
    }

    void sessionStateAndResume() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(path(dir, "r.db"));
        SessionInfo a = sampleSession();
        const std::int64_t first = store.createSession(a);
        store.setSessionState(first, SessionState::Cancelled, "interrupted");
        const auto s = store.session(first);
        QCOMPARE(s->state, SessionState::Cancelled);
        QCOMPARE(s->message, std::string("interrupted"));
        QVERIFY(!s->endedAt.empty());
        const std::int64_t second = store.createSession(a);
        QCOMPARE(store.findResumable(a)->id, second); // the newest of the same identity
        SessionInfo other = a;
        other.seed = 43;
        QVERIFY(!store.findResumable(other));
        other = a;
        other.shapeIndex = 0;
        QVERIFY(!store.findResumable(other));
        other = a;
        other.backend = "replay:/tmp/other.json";
        QVERIFY(!store.findResumable(other));
        store.setSessionState(second, SessionState::Running);
        QVERIFY(store.session(second)->endedAt.empty());
        store.setSessionProvenance(second, "NVIDIA H100", "sm_90", "{\"uuid\":\"GPU-1\"}");
        QCOMPARE(store.session(second)->deviceName, std::string("NVIDIA H100"));
        QCOMPARE(store.session(second)->provenanceJson, std::string("{\"uuid\":\"GPU-1\"}"));
        QVERIFY(!store.session(77));

        store.append(second, sampleResult(0));
        store.append(first, sampleResult(3));
        store.deleteSession(second);
        QVERIFY(!store.session(second));
        QCOMPARE(store.resultCount(second), std::uint64_t(0));
        QCOMPARE(store.resultCount(first), std::uint64_t(1));
        QCOMPARE(store.results(first)[0].measurement.metrics.size(), std::size_t(2)); // the other's metrics stay
    }

    void skippedIsAPlaceholder() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(path(dir, "r.db"));
        const std::int64_t id = store.createSession(sampleSession());
        store.append(id, sampleResult(1, ResultStatus::Skipped));
        store.append(id, sampleResult(2, ResultStatus::Ok));
        store.append(id, sampleResult(1, ResultStatus::Ok)); // replaces the placeholder
        store.append(id, sampleResult(2, ResultStatus::Ok)); // a second measurement is kept
        const auto results = store.results(id);
        QCOMPARE(results.size(), std::size_t(3));
        QCOMPARE(store.statusCounts(id).of(ResultStatus::Skipped), std::uint64_t(0));
    }

    void schemaIsVersionedAndWal() {
        QTemporaryDir dir;
        const std::string file = path(dir, "r.db");
        { ResultStore::open(file); }
        QCOMPARE(rawQuery(file, "SELECT max(version) FROM schema_version"),
                 std::to_string(ResultStore::kSchemaVersion));
        QCOMPARE(rawQuery(file, "PRAGMA journal_mode"), std::string("wal"));
        QCOMPARE(rawQuery(file, "PRAGMA application_id"), std::to_string(store::kApplicationId));
        QCOMPARE(store::migrations().size(), std::size_t(ResultStore::kSchemaVersion));
        for (std::size_t i = 0; i < store::migrations().size(); ++i)
            QCOMPARE(store::migrations()[i].version, int(i + 1));
        // Reopening an up-to-date database migrates nothing.
        { ResultStore::open(file); }
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM schema_version"), std::to_string(ResultStore::kSchemaVersion));
        // The documented view works.
        ResultStore store = ResultStore::open(file);
        const auto id = store.createSession(sampleSession());
        store.append(id, sampleResult(0));
        store.flush();
        QCOMPARE(rawQuery(file, "SELECT json_extract(config, '$.BLOCK_M') FROM result_view"), std::string("32"));
        QCOMPARE(rawQuery(file,
                          "SELECT value FROM metrics WHERE name = 'sm__warps_active.avg.pct_of_peak_sustained_active'"),
                 std::string("55.5"));
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM metrics WHERE result_id = 1"), std::string("2"));
    }

    void sessionFilesAreKeptOnce() {
        QTemporaryDir dir;
        const std::string file = path(dir, "files.db");
        ResultStore store = ResultStore::open(file);
        const std::int64_t a = store.createSession(sampleSession());
        const std::int64_t b = store.createSession(sampleSession());
        const ProblemFile kernel{ProblemFile::Role::Kernel, "k.cu", std::string(64, 'a'), 5, std::string("k\0ern", 6)};
        const ProblemFile big{ProblemFile::Role::Data, "data/in.bin", std::string(64, 'b'), 1ull << 40, std::nullopt};
        store.addSessionFiles(a, {kernel, big});
        store.addSessionFiles(b, {kernel});
        const std::vector<ProblemFile> files = store.sessionFiles(a);
        QCOMPARE(files.size(), std::size_t(2));
        QCOMPARE(files[0].path, std::string("data/in.bin")); // in path order
        QVERIFY(!files[0].data);
        QCOMPARE(files[0].size, std::uint64_t(1) << 40);
        QCOMPARE(files[1], kernel); // the bytes whole, a NUL included
        QVERIFY(!store.sessionFiles(a, false)[1].data);
        // One copy of the contents whatever the sessions that share them; gone with the last.
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM files"), std::string("2"));
        store.deleteSession(a);
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM files"), std::string("1"));
        QCOMPARE(store.sessionFiles(b).size(), std::size_t(1));
        store.deleteSession(b);
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM files"), std::string("0"));
    }

    void olderSchemaReadsAndUpgrades() {
        QTemporaryDir dir;
        const std::string file = path(dir, "old.db");
        std::int64_t id = 0;
        {
            ResultStore store = ResultStore::open(file);
            id = store.createSession(sampleSession());
            store.append(id, sampleResult(1));
        }
        // Back to schema 1, as Tilescope wrote it before the median's interval was stored.
        rawQuery(file, "ALTER TABLE results DROP COLUMN time_ci_low_ms");
        rawQuery(file, "ALTER TABLE results DROP COLUMN time_ci_high_ms");
        rawQuery(file, "DROP TABLE session_files");
        rawQuery(file, "DROP TABLE files");
        rawQuery(file, "DELETE FROM schema_version WHERE version >= 2");
        QCOMPARE(rawQuery(file, "SELECT max(version) FROM schema_version"), std::string("1"));
        {
            // Read-only it reads as it is, without the interval.
            const ResultStore old = ResultStore::open(file, StoreMode::ReadOnly);
            QCOMPARE(old.schemaVersion(), 1);
            const std::vector<ResultRecord> results = old.results(id);
            QCOMPARE(results.size(), std::size_t(1));
            QCOMPARE(results[0].timeMs(), 2.0);
            QVERIFY(!results[0].measurement.time.hasInterval());
        }
        {
            // Read-write it is upgraded, and new results keep their interval.
            ResultStore store = ResultStore::open(file);
            QCOMPARE(store.schemaVersion(), ResultStore::kSchemaVersion);
            store.append(id, sampleResult(3));
            const std::vector<ResultRecord> results = store.results(id);
            QVERIFY(!results[0].measurement.time.hasInterval());
            QCOMPARE(results[1].measurement.time.ciLowMs, 3.95);
            QCOMPARE(results[1].measurement.time.ciHighMs, 4.05);
        }
        QCOMPARE(rawQuery(file, "SELECT max(version) FROM schema_version"),
                 std::to_string(ResultStore::kSchemaVersion));
    }

    void schema2DatabaseOpensAndUpgrades() {
        // A database as Tilescope wrote it before `implausible` (schema 2, made by its own SQL),
        // with a message that holds a NUL and other control bytes, as a compile error once did.
        QTemporaryDir dir;
        const std::string file = path(dir, "v2.db");
        rawSql(file, store::migrations()[0].sql);
        rawSql(file, store::migrations()[1].sql);
        rawSql(file, ("INSERT INTO schema_version VALUES (1, '2026-01-01', '0.9'), (2, '2026-01-02', '0.9');"
                      "PRAGMA application_id = " +
                      std::to_string(store::kApplicationId))
                         .c_str());
        rawSql(file, "INSERT INTO sessions (id, kernel, parameters, started_at, state) "
                     "VALUES (1, 'k', '[\"B\"]', '2026-01-01T00:00:00.000Z', 'finished');"
                     "INSERT INTO configs VALUES (1, 1, 0, '32', '{\"B\":32}'), (2, 1, 1, '64', '{\"B\":64}');"
                     "INSERT INTO results (session_id, config_id, status, time_ms, samples, message, recorded_at, "
                     "time_ci_low_ms, time_ci_high_ms) VALUES "
                     "(1, 1, 'ok', 2.5, 10, '', '2026-01-01T00:00:01.000Z', 2.4, 2.6),"
                     "(1, 2, 'compile_error', NULL, 0, char(0) || 'ptxas error' || char(7) || ' uses too much "
                     "shared data' || char(13, 10) || 'next' || char(0), '2026-01-01T00:00:02.000Z', NULL, NULL);");
        // Schema 2 refuses the new status: why version 3 makes the table again.
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM results"), std::string("2"));
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
            const int rc = sqlite3_exec(db,
                                        "INSERT INTO results (session_id, config_id, status, recorded_at) "
                                        "VALUES (1, 1, 'implausible', 'x')",
                                        nullptr, nullptr, nullptr);
            sqlite3_close(db);
            QCOMPARE(rc & 0xff, SQLITE_CONSTRAINT);
        }
        const std::string cleaned = "ptxas error  uses too much shared data\nnext";
        {
            // Read-only it reads as it is, its messages cleaned.
            const ResultStore old = ResultStore::open(file, StoreMode::ReadOnly);
            QCOMPARE(old.schemaVersion(), 2);
            const std::vector<ResultRecord> results = old.results(1);
            QCOMPARE(results.size(), std::size_t(2));
            QCOMPARE(results[0].timeMs(), 2.5);
            QCOMPARE(results[0].measurement.time.ciHighMs, 2.6);
            QCOMPARE(results[1].measurement.message, cleaned);
        }
        {
            // Read-write it is upgraded: every row and column kept, and the new status stored.
            ResultStore store = ResultStore::open(file);
            QCOMPARE(store.schemaVersion(), ResultStore::kSchemaVersion);
            std::vector<ResultRecord> results = store.results(1);
            QCOMPARE(results.size(), std::size_t(2));
            QCOMPARE(results[0].id, std::int64_t(1));
            QCOMPARE(results[0].timeMs(), 2.5);
            QCOMPARE(results[0].measurement.time.ciLowMs, 2.4);
            QCOMPARE(results[1].status(), ResultStatus::CompileError);
            QCOMPARE(results[1].measurement.message, cleaned);
            ResultRecord r = sampleResult(5, ResultStatus::Ok);
            r.measurement.status = ResultStatus::Implausible;
            r.measurement.message = std::string("0.0069 ms is below") + '\0' + "\x1b[0m 0.0080 ms\r\n";
            r.config = {{"B", 128}};
            r.measurement.time = {0.0069, 0.0068, 0.0071, 0.0001, 10, 0, 0};
            store.append(1, r);
            store.flush();
            results = store.results(1);
            QCOMPARE(results.size(), std::size_t(3));
            QCOMPARE(results[2].status(), ResultStatus::Implausible);
            QCOMPARE(results[2].timeMs(), r.timeMs());
            QCOMPARE(results[2].measurement.message, std::string("0.0069 ms is below [0m 0.0080 ms"));
            QCOMPARE(store.statusCounts(1).of(ResultStatus::Implausible), std::uint64_t(1));
            // An implausible result never ranks, however fast.
            QCOMPARE(store.best(1)->timeMs(), 2.5);
        }
        QCOMPARE(rawQuery(file, "SELECT max(version) FROM schema_version"),
                 std::to_string(ResultStore::kSchemaVersion));
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM result_view WHERE status = 'implausible'"), std::string("1"));
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM metrics WHERE result_id = 3"), std::string("0"));
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM sqlite_master WHERE name = 'results_by_session'"),
                 std::string("1"));
    }

    void schema3DatabaseOpensAndUpgrades() {
        // A database as Tilescope wrote it before `analysed` (schema 3, made by its own SQL): the
        // analysis backend's results were pruned, with its message; a config over the device's
        // limits was pruned too, and stays so.
        QTemporaryDir dir;
        const std::string file = path(dir, "v3.db");
        for (std::size_t i = 0; i < 3; ++i)
            rawSql(file, store::migrations()[i].sql);
        rawSql(file, ("INSERT INTO schema_version VALUES (1, 'a', '0.9'), (2, 'b', '0.9'), (3, 'c', '0.9');"
                      "PRAGMA application_id = " +
                      std::to_string(store::kApplicationId))
                         .c_str());
        rawSql(file,
               "INSERT INTO sessions (id, kernel, parameters, backend, started_at, state) "
               "VALUES (1, 'k', '[\"B\"]', 'analysis:sm_90', '2026-01-01T00:00:00.000Z', 'finished');"
               "INSERT INTO configs VALUES (1, 1, 0, '32', '{\"B\":32}'), (2, 1, 1, '64', '{\"B\":64}'),"
               "(3, 1, 2, '2048', '{\"B\":2048}');"
               "INSERT INTO results (session_id, config_id, status, samples, registers, barriers, stack_frame, "
               "spill_stores, spill_loads, shared_static, constant_bytes, occupancy, message, recorded_at) VALUES "
               "(1, 1, 'pruned', 0, 40, 0, 0, 0, 0, 0, 0, 50.0, 'not measured: static analysis for sm_90', 'x'),"
               "(1, 2, 'pruned', 0, 32, 0, 0, 0, 0, 0, 0, 100.0, 'not measured: static analysis for sm_90', 'y'),"
               "(1, 3, 'pruned', 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
               "'over the device''s limits: 2048 threads per block > 1024', 'z');");
        {
            // Schema 3 refuses the new status.
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(file.c_str(), &db), SQLITE_OK);
            const int rc = sqlite3_exec(db,
                                        "INSERT INTO results (session_id, config_id, status, recorded_at) "
                                        "VALUES (1, 1, 'analysed', 'x')",
                                        nullptr, nullptr, nullptr);
            sqlite3_close(db);
            QCOMPARE(rc & 0xff, SQLITE_CONSTRAINT);
        }
        const auto check = [](const ResultStore& store) {
            const std::vector<ResultRecord> results = store.results(1);
            QCOMPARE(results.size(), std::size_t(3));
            QCOMPARE(results[0].status(), ResultStatus::Analysed);
            QCOMPARE(results[1].status(), ResultStatus::Analysed);
            QCOMPARE(results[2].status(), ResultStatus::Pruned);
            const StatusCounts counts = store.statusCounts(1);
            QCOMPARE(counts.of(ResultStatus::Analysed), std::uint64_t(2));
            QCOMPARE(counts.of(ResultStatus::Pruned), std::uint64_t(1));
            QCOMPARE(store.best(1)->config.find("B")->plain(), std::string("64")); // the higher occupancy
        };
        {
            // Read-only (not migrated), its analysed results read as such.
            const ResultStore old = ResultStore::open(file, StoreMode::ReadOnly);
            QCOMPARE(old.schemaVersion(), 3);
            check(old);
        }
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM results WHERE status = 'pruned'"), std::string("3"));
        {
            // Read-write it is migrated: the rows become analysed, and the new status is stored.
            ResultStore store = ResultStore::open(file);
            QCOMPARE(store.schemaVersion(), ResultStore::kSchemaVersion);
            check(store);
            ResultRecord r = sampleResult(4, ResultStatus::Analysed);
            r.config = {{"B", 128}};
            store.append(1, r);
            store.flush();
            QCOMPARE(store.statusCounts(1).of(ResultStatus::Analysed), std::uint64_t(3));
        }
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM results WHERE status = 'analysed'"), std::string("3"));
        QCOMPARE(rawQuery(file, "SELECT message FROM results WHERE status = 'pruned'"),
                 std::string("over the device's limits: 2048 threads per block > 1024"));
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM result_view WHERE status = 'analysed'"), std::string("3"));
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM sqlite_master WHERE name = 'results_by_session'"),
                 std::string("1"));
    }

    void newerSchemaIsRefused() {
        QTemporaryDir dir;
        const std::string file = path(dir, "r.db");
        {
            ResultStore store = ResultStore::open(file);
            store.createSession(sampleSession());
        }
        rawSql(file, "INSERT INTO schema_version (version, applied_at, tool_version) VALUES (7, 'later', '9.0')");
        for (const StoreMode mode : {StoreMode::ReadWrite, StoreMode::ReadOnly}) {
            const QString message = inputErrorOf([&] { ResultStore::open(file, mode); });
            QVERIFY2(message.contains("schema version 7") && message.contains("newer"), qPrintable(message));
        }
        // Nothing was changed by the refusal.
        QCOMPARE(rawQuery(file, "SELECT count(*) FROM sessions"), std::string("1"));
    }

    void foreignFilesAreRefused() {
        QTemporaryDir dir;
        const std::string text = path(dir, "notes.txt");
        std::ofstream(text) << "just some text, long enough to be more than a header\n";
        QString message = inputErrorOf([&] { ResultStore::open(text); });
        QVERIFY2(message.contains("not a SQLite database"), qPrintable(message));

        const std::string other = path(dir, "other.db");
        rawSql(other, "CREATE TABLE people (name TEXT)");
        message = inputErrorOf([&] { ResultStore::open(other); });
        QVERIFY2(message.contains("not a Tilescope results database"), qPrintable(message));
        QCOMPARE(rawQuery(other, "SELECT count(*) FROM sqlite_master WHERE name = 'sessions'"), std::string("0"));
    }

    void badPaths() {
        QTemporaryDir dir;
        QString message = inputErrorOf([&] { ResultStore::open(path(dir, "missing.db"), StoreMode::ReadOnly); });
        QVERIFY2(message.contains("no such database"), qPrintable(message));
        QVERIFY(!QFile::exists(dir.filePath("missing.db"))); // a read-only open creates nothing

        message = inputErrorOf([&] { ResultStore::open(path(dir, "no/such/folder/r.db")); });
        QVERIFY2(message.contains("does not exist"), qPrintable(message));

        message = inputErrorOf([&] { ResultStore::open(dir.path().toStdString()); });
        QVERIFY2(message.contains("is a folder"), qPrintable(message));

        // A place nobody may create files in, root included.
        message = inputErrorOf([&] { ResultStore::open("/proc/tilescope-test.db"); });
        QVERIFY2(message.contains("/proc/tilescope-test.db") && message.contains("cannot"), qPrintable(message));

        message = inputErrorOf([] { ResultStore::open(""); });
        QVERIFY(!message.isEmpty());
    }

    void readOnlyFile() {
        // A database that cannot be written is refused when opened to write, with a message naming
        // it, for every user: root writes files without write permission, so the cases that hold
        // for root too come first.
        QTemporaryDir dir;
        const std::string file = path(dir, "r.db");
        { ResultStore::open(file).createSession(sampleSession()); }
        // Its write-ahead log cannot be made: a folder holds the name.
        QVERIFY(QDir().mkdir(QString::fromStdString(file + "-wal")));
        QString message = inputErrorOf([&] { ResultStore::open(file); });
        QVERIFY2(message.contains(QString::fromStdString(file)) &&
                     message.contains("cannot write the database or its journal"),
                 qPrintable(message));
        QVERIFY(QDir().rmdir(QString::fromStdString(file + "-wal")));
        QCOMPARE(ResultStore::open(file).sessions().size(), std::size_t(1)); // usable again, nothing lost

        // Its folder is a regular file.
        const std::string notAFolder = path(dir, "notes.txt");
        std::ofstream(notAFolder) << "a file, not a folder\n";
        message = inputErrorOf([&] { ResultStore::open(notAFolder + "/r.db"); });
        QVERIFY2(message.contains(QString::fromStdString(notAFolder)) &&
                     message.contains("cannot create the database") && message.contains("is a file, not a folder"),
                 qPrintable(message));
        QCOMPARE(QFileInfo(QString::fromStdString(notAFolder)).size(), qint64(21)); // untouched

        // A file without write permission (root may write it anyway).
        QFile::setPermissions(QString::fromStdString(file), QFileDevice::ReadOwner | QFileDevice::ReadGroup);
        if (geteuid() != 0) {
            message = inputErrorOf([&] { ResultStore::open(file); });
            QVERIFY2(message.contains(QString::fromStdString(file)) && message.contains("read-only"),
                     qPrintable(message));
        }
        QCOMPARE(ResultStore::open(file, StoreMode::ReadOnly).sessions().size(), std::size_t(1));
    }

    void readOnlyModeRejectsWrites() {
        QTemporaryDir dir;
        const std::string file = path(dir, "r.db");
        std::int64_t id = 0;
        { id = ResultStore::open(file).createSession(sampleSession()); }
        ResultStore store = ResultStore::open(file, StoreMode::ReadOnly);
        QVERIFY(inputErrorOf([&] { store.append(id, sampleResult(0)); }).contains("read-only"));
        QVERIFY(inputErrorOf([&] { store.createSession(sampleSession()); }).contains("read-only"));
        QCOMPARE(store.resultCount(id), std::uint64_t(0));
    }

    void commitsWithinTheInterval() {
        QTemporaryDir dir;
        const std::string file = path(dir, "r.db");
        StoreOptions options;
        options.commitInterval = std::chrono::milliseconds(150);
        ResultStore writer = ResultStore::open(file, StoreMode::ReadWrite, options);
        const std::int64_t id = writer.createSession(sampleSession());
        const ResultStore reader = ResultStore::open(file, StoreMode::ReadOnly);
        writer.append(id, sampleResult(0)); // the first after a quiet spell commits at once
        QCOMPARE(reader.resultCount(id), std::uint64_t(1));
        writer.append(id, sampleResult(1)); // batched with what follows for up to 150 ms
        writer.append(id, sampleResult(2));
        QCOMPARE(reader.resultCount(id), std::uint64_t(1));
        QVERIFY(!writer.commitIfDue());
        std::this_thread::sleep_for(std::chrono::milliseconds(170));
        QVERIFY(writer.commitIfDue());
        QCOMPARE(reader.resultCount(id), std::uint64_t(3));
        writer.append(id, sampleResult(3));
        QCOMPARE(reader.resultCount(id), std::uint64_t(3));
        std::this_thread::sleep_for(std::chrono::milliseconds(170));
        writer.append(id, sampleResult(4)); // due: commits both
        QCOMPARE(reader.resultCount(id), std::uint64_t(5));
        writer.append(id, sampleResult(5));
        writer.flush();
        QCOMPARE(reader.resultCount(id), std::uint64_t(6));
    }

    void readersReadWhileAWriterWrites() {
        QTemporaryDir dir;
        const std::string file = path(dir, "r.db");
        std::int64_t id = 0;
        { id = ResultStore::open(file).createSession(sampleSession()); }
        constexpr int kResults = 3000;
        std::atomic<bool> finished{false};
        std::string writerError;
        std::thread writer([&] {
            try {
                StoreOptions options;
                options.commitInterval = std::chrono::milliseconds(2);
                ResultStore store = ResultStore::open(file, StoreMode::ReadWrite, options);
                for (int i = 0; i < kResults; ++i)
                    store.append(id, sampleResult(i));
                store.flush();
            } catch (const std::exception& e) {
                writerError = e.what();
            }
            finished = true;
        });
        const ResultStore reader = ResultStore::open(file, StoreMode::ReadOnly);
        std::uint64_t last = 0;
        int reads = 0;
        while (!finished.load()) {
            const std::uint64_t n = reader.resultCount(id);
            QVERIFY(n >= last); // snapshots only grow
            last = n;
            ++reads;
        }
        writer.join();
        QVERIFY2(writerError.empty(), writerError.c_str());
        QCOMPARE(reader.resultCount(id), std::uint64_t(kResults));
        QVERIFY(reads > 0);
    }

    void theConnectionStaysOnItsThread() {
        QTemporaryDir dir;
        ResultStore store = ResultStore::open(path(dir, "r.db"));
        bool threw = false;
        std::thread other([&] {
            try {
                store.sessions();
            } catch (const std::logic_error&) {
                threw = true;
            }
        });
        other.join();
        QVERIFY(threw);
        QVERIFY(store.sessions().empty()); // still fine on its own thread
    }

    void concurrentOpensOfOneDatabase_data() {
        QTest::addColumn<QString>("start");
        QTest::newRow("no file yet") << "missing";
        QTest::newRow("an empty file") << "empty";
        QTest::newRow("schema 1, migrated by both") << "schema-1";
    }

    // Two processes open one database at the same moment, each to add a session with its results:
    // however their opens interleave (making the file, its schema, a migration), neither fails and
    // nothing of either is lost. Processes, not threads: what is tested is the locking between them.
    void concurrentOpensOfOneDatabase() {
        QFETCH(QString, start);
        const std::string self = QCoreApplication::applicationFilePath().toStdString();
        QTemporaryDir dir;
        constexpr int kTrials = 50;
        constexpr int kResults = 20;
        QStringList failures;
        // At most kTrials, and no more once kBudget has passed: on a loaded machine a trial's
        // processes wait for each other's locks for seconds.
        const auto started = std::chrono::steady_clock::now();
        constexpr auto kBudget = std::chrono::seconds(90);
        int trials = 0;
        for (int trial = 0; trial < kTrials && (trial < 5 || std::chrono::steady_clock::now() - started < kBudget);
             ++trial, ++trials) {
            const std::string file = path(dir, ("r" + std::to_string(trial) + ".db").c_str());
            if (start == "empty")
                std::ofstream{file};
            else if (start == "schema-1")
                makeSchema1(file);
            int gate[2];
            int errors[2];
            int ready[2];
            QCOMPARE(::pipe(gate), 0);
            QCOMPARE(::pipe(errors), 0);
            QCOMPARE(::pipe(ready), 0);
            // Each child is this program started afresh (fork, then exec at once): a child that ran
            // on after fork alone would inherit whatever lock another thread of this process held.
            const std::string results = std::to_string(kResults);
            const std::string gateFd = std::to_string(gate[0]);
            const std::string errorFd = std::to_string(errors[1]);
            const std::string readyFd = std::to_string(ready[1]);
            const char* const argv[] = {self.c_str(),   kChildFlag,      file.c_str(),    results.c_str(),
                                        gateFd.c_str(), errorFd.c_str(), readyFd.c_str(), nullptr};
            pid_t children[2] = {};
            for (pid_t& child : children) {
                child = ::fork();
                QVERIFY(child >= 0);
                if (child == 0) {
                    ::execv(self.c_str(), const_cast<char* const*>(argv));
                    ::_exit(4);
                }
            }
            ::close(gate[0]);
            ::close(errors[1]);
            ::close(ready[1]);
            // The gate opens once both are at it, so that they open the file together.
            char at[2];
            for (ssize_t got = 0, n = 0; got < 2 && (n = ::read(ready[0], at + got, 2 - got)) > 0;)
                got += n;
            ::close(ready[0]);
            QCOMPARE(::write(gate[1], "go", 2), ssize_t(2));
            ::close(gate[1]);
            // A child that has not ended in two minutes is stuck: it is killed and the trial fails.
            int exits[2] = {};
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
            for (int i = 0; i < 2; ++i) {
                int status = 0;
                pid_t done = 0;
                while ((done = ::waitpid(children[i], &status, WNOHANG)) == 0 &&
                       std::chrono::steady_clock::now() < deadline)
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                if (done == 0) {
                    ::kill(children[i], SIGKILL);
                    done = ::waitpid(children[i], &status, 0);
                    failures << QStringLiteral("trial %1: process %2 still running after two minutes; killed")
                                    .arg(trial)
                                    .arg(i);
                }
                QCOMPARE(done, children[i]);
                exits[i] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            }
            std::string said;
            char buf[512];
            for (ssize_t n; (n = ::read(errors[0], buf, sizeof buf)) > 0;)
                said.append(buf, static_cast<std::size_t>(n));
            ::close(errors[0]);
            std::string lost;
            std::size_t sessions = 0;
            try {
                const ResultStore store = ResultStore::open(file, StoreMode::ReadOnly);
                sessions = store.sessions().size();
                for (const SessionInfo& s : store.sessions())
                    if (s.state != SessionState::Finished || store.resultCount(s.id) != std::uint64_t(kResults))
                        lost += " session " + std::to_string(s.id) + " has " + std::to_string(store.resultCount(s.id)) +
                                " results, state " + std::string(sessionStateName(s.state)) + ";";
            } catch (const std::exception& e) {
                lost = std::string(" the database does not open: ") + e.what() + ";";
            }
            if (exits[0] != 0 || exits[1] != 0 || sessions != 2 || !lost.empty())
                failures << QStringLiteral("trial %1: exits %2 %3, %4 sessions;%5 %6")
                                .arg(trial)
                                .arg(exits[0])
                                .arg(exits[1])
                                .arg(sessions)
                                .arg(QString::fromStdString(lost), QString::fromStdString(said).trimmed());
        }
        qInfo("%d trials", trials);
        QVERIFY2(failures.isEmpty(), qPrintable(QString::number(failures.size()) + " of " + QString::number(trials) +
                                                " trials failed:\n" + failures.join('\n')));
    }

    void createdOnFirstWrite() {
        // With createOnFirstWrite, a missing database is made when the first write comes: an open
        // that writes nothing leaves no file, and nothing is ever deleted that another process may
        // have opened meanwhile.
        QTemporaryDir dir;
        const std::string file = path(dir, "r.db");
        StoreOptions lazily;
        lazily.createOnFirstWrite = true;
        {
            ResultStore store = ResultStore::open(file, StoreMode::ReadWrite, lazily);
            QVERIFY(store.sessions().empty());
            QVERIFY(!store.findResumable(sampleSession()));
            QCOMPARE(store.schemaVersion(), ResultStore::kSchemaVersion);
            store.flush();
        }
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList());
        {
            ResultStore store = ResultStore::open(file, StoreMode::ReadWrite, lazily);
            QVERIFY(!QFileInfo::exists(QString::fromStdString(file)));
            const std::int64_t id = store.createSession(sampleSession());
            QVERIFY(QFileInfo::exists(QString::fromStdString(file)));
            store.append(id, sampleResult(0));
            store.flush();
            QCOMPARE(ResultStore::open(file, StoreMode::ReadOnly).resultCount(id), std::uint64_t(1));
        }
        QCOMPARE(rawQuery(file, "PRAGMA journal_mode"), std::string("wal"));
        QCOMPARE(rawQuery(file, "PRAGMA application_id"), std::to_string(store::kApplicationId));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{"r.db"});
        // A place it cannot make the file is still refused at the open, before any work.
        const QString message =
            inputErrorOf([&] { ResultStore::open("/proc/tilescope-test.db", StoreMode::ReadWrite, lazily); });
        QVERIFY2(message.contains("/proc/tilescope-test.db") && message.contains("cannot"), qPrintable(message));
        // Another process made the file meanwhile: the first write goes into it.
        const std::string shared = path(dir, "shared.db");
        ResultStore late = ResultStore::open(shared, StoreMode::ReadWrite, lazily);
        { ResultStore::open(shared).createSession(sampleSession()); }
        QCOMPARE(late.createSession(sampleSession()), std::int64_t(2));
        QCOMPARE(late.sessions().size(), std::size_t(2));
    }

    void damagedDatabaseIsNotWritten() {
        // A page in the middle overwritten: whatever reads it would fail, but a write elsewhere
        // would go through. Opened to write, it is refused at once, the damage located, the file as
        // it was; read-only it opens (readers say what they cannot read).
        QTemporaryDir dir;
        const std::string file = path(dir, "r.db");
        {
            ResultStore store = ResultStore::open(file);
            const std::int64_t id = store.createSession(sampleSession());
            std::vector<ResultRecord> records;
            for (int i = 0; i < 2000; ++i)
                records.push_back(sampleResult(i));
            store.appendMany(id, records);
        }
        std::string bytes = fileBytes(file);
        QVERIFY(bytes.size() > 64 * 4096);
        const std::size_t half = bytes.size() / 2 / 4096 * 4096;
        std::mt19937 rng(17);
        for (std::size_t i = half; i < half + 4096; ++i)
            bytes[i] = static_cast<char>(rng());
        std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
        QVERIFY2(quickCheck(file) != "ok", "the damage was not found by SQLite: the test damages nothing");
        const QString message = inputErrorOf([&] { ResultStore::open(file); });
        QVERIFY2(message.contains("r.db") && message.contains("damaged") && message.contains("Page "),
                 qPrintable(message));
        QCOMPARE(fileBytes(file), bytes);
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{"r.db"});
        QCOMPARE(ResultStore::open(file, StoreMode::ReadOnly).sessions().size(), std::size_t(1));
    }

    void configHelpers() {
        ConfigValues c;
        c["A"] = 64;
        c["B"] = "row";
        c["C"] = 0.5;
        c["D"] = true;
        QCOMPARE(configKey(c), std::string("64,\"row\",0.5,true"));
        QCOMPARE(describeConfig(c), std::string("A=64 B=row C=0.5 D=true"));
        QCOMPARE(configJson(c), std::string("{\"A\":64,\"B\":\"row\",\"C\":0.5,\"D\":true}"));
        c["Q\"uote"] = -7;
        c["E"] = 1e-05;
        c["F"] = 2.0;
        c["G"] = ConfigValue::null();
        QCOMPARE(configJson(c),
                 std::string("{\"A\":64,\"B\":\"row\",\"C\":0.5,\"D\":true,\"Q\\\"uote\":-7,\"E\":1e-05,\"F\":2.0,"
                             "\"G\":null}"));
        // As nlohmann::json writes the same config (the store's text before ConfigValues).
        QCOMPARE(configJson(c), toJson(c).dump());
        QCOMPARE(parseConfigJson(configJson(c)), std::optional<ConfigValues>(c));
        QVERIFY(!parseConfigJson("[1, 2]"));
        QVERIFY(!parseConfigJson("{\"A\": "));
        QCOMPARE(configJson(ConfigValues{}), std::string("{}"));
        QCOMPARE(sessionStateName(SessionState::Imported), std::string_view("imported"));
        QCOMPARE(parseSessionState("cancelled"), std::optional<SessionState>(SessionState::Cancelled));
        const std::string now = nowIso8601();
        QCOMPARE(now.size(), std::size_t(24));
        QCOMPARE(now.back(), 'Z');
    }
};

// A child of concurrentOpensOfOneDatabase: `tst_store --add-session-child FILE RESULTS GATE_FD
// ERROR_FD READY_FD` says it is ready, waits at the gate, then adds its session.
int main(int argc, char** argv) {
    if (argc == 7 && std::strcmp(argv[1], kChildFlag) == 0) {
        char go = 0;
        if (::write(std::atoi(argv[6]), "r", 1) != 1 || ::read(std::atoi(argv[4]), &go, 1) != 1)
            return 3;
        return addSessionInChild(argv[2], std::atoi(argv[3]), std::atoi(argv[5]));
    }
    QCoreApplication app(argc, argv);
    TestStore test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_store.moc"
