// Hostile input to the files Tilescope reads and writes and to the CLI's numbers: damaged, locked
// and newer databases and values in them this build does not know; numeric options that a plain
// conversion would accept or wrap (0, negatives, nan, inf, 1e3 for a count); exports to places that
// cannot be written, and a failed one over an existing file; kernel files that cannot be read,
// headers that include each other or are a named pipe, and kernels in another language handed to
// NVRTC. Each is refused with a message that names the file, field or option (the CLI with exit
// status 2), leaves what was there as it was, and ends: every wait is bounded, and each case that
// could hang runs under a deadline.

#include "base/error.h"
#include "base/filewrite.h"
#include "compile/compiler.h"
#include "compile/requestbuilder.h"
#include "model/configjson.h"
#include "spec/tuningproblem.h"
#include "store/resultstore.h"

#include "clirun.h"

#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <random>

using namespace tilescope;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const QString kTiny = QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny.json");
const QString kTinyCache = QStringLiteral(TILESCOPE_TEST_DATA "/tuning/tiny_ktcache.json");

std::string readBytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string str(const QString& s) {
    return s.toStdString();
}

// What `f` throws, as text: "" when nothing; an InputError's message; "NOT AN INPUT ERROR: ..." for
// anything else (a test then fails showing it).
QString errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return QString::fromStdString(e.what());
    } catch (const std::exception& e) {
        return QStringLiteral("NOT AN INPUT ERROR: ") + e.what();
    }
    return {};
}

// The InputError `f` throws (its location is checked too); fails the test when there is none.
std::optional<InputError> inputErrorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e;
    } catch (const std::exception& e) {
        qWarning("not an InputError: %s", e.what());
    }
    return std::nullopt;
}

// Runs `f` on another thread and waits at most `deadline`: false when it overran (it is then left
// to `unblock`, which must make it return, before the test fails).
bool endsWithin(std::chrono::seconds deadline, const std::function<void()>& f,
                const std::function<void()>& unblock = {}) {
    auto done = std::async(std::launch::async, f);
    if (done.wait_for(deadline) == std::future_status::ready) {
        done.get();
        return true;
    }
    if (unblock)
        unblock();
    done.wait();
    return false;
}

// Unblocks a reader stuck opening the named pipe `path`: a writer comes and goes.
void releasePipe(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0)
        ::close(fd);
}

// The real tilescope-cli under a deadline (status -1 when it crashed or overran it).
CliRun cli(const QStringList& args, int deadlineMs = 120000, const QString& workDir = {}) {
    return runProgram(QStringLiteral(TILESCOPE_CLI), args, deadlineMs, workDir);
}

// The CLI run by /bin/sh after `setup` (a ulimit, say), with the CLI's path as $0... in "$@".
CliRun cliAfter(const QString& setup, const QStringList& args, const QString& workDir) {
    return runProgram(QStringLiteral("/bin/sh"),
                      QStringList{"-c", setup + "; exec \"$0\" \"$@\"", QStringLiteral(TILESCOPE_CLI)} + args, 120000,
                      workDir);
}

QStringList entries(const QString& dir) {
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
}

// A connection of another program to a database file.
class OtherConnection {
public:
    explicit OtherConnection(const std::string& file) { sqlite3_open(file.c_str(), &m_db); }
    ~OtherConnection() { sqlite3_close(m_db); }
    OtherConnection(const OtherConnection&) = delete;
    OtherConnection& operator=(const OtherConnection&) = delete;
    /// Runs `sql`; SQLite's message when it fails, "" when it does not.
    std::string exec(const char* sql) {
        char* error = nullptr;
        const int rc = sqlite3_exec(m_db, sql, nullptr, nullptr, &error);
        const std::string message = rc == SQLITE_OK ? std::string() : std::string(error ? error : "failed");
        sqlite3_free(error);
        return message;
    }

private:
    sqlite3* m_db = nullptr;
};

SessionInfo aSession() {
    SessionInfo s;
    s.kernel = "scale";
    s.problemHash = "hash";
    s.backend = "replay:rec.json";
    s.strategy = "random";
    s.startedAt = "2026-11-29T10:00:00.000Z";
    return s;
}

// A database of one session with `count` results spread over many pages (each with a log).
void makeDatabase(const std::string& file, int count = 2000) {
    ResultStore store = ResultStore::open(file);
    const std::int64_t id = store.createSession(aSession());
    std::vector<ResultRecord> records;
    for (int i = 0; i < count; ++i) {
        ResultRecord r;
        r.spaceIndex = static_cast<std::uint64_t>(i);
        r.config["BLOCK"] = 32 * (i % 64 + 1);
        r.config["ITEMS"] = i / 64;
        r.measurement.status = i % 5 ? ResultStatus::Ok : ResultStatus::CompileError;
        if (r.ok()) {
            r.measurement.time = {1.0 + i, 0.9 + i, 1.1 + i, 0.01, 10};
            r.objective = 100.0 / (1 + i);
        } else {
            r.log = "kernel.cu(" + std::to_string(i) + "): error: identifier \"x\" is undefined";
        }
        records.push_back(std::move(r));
    }
    store.appendMany(id, records);
}

// Everything a reader reads of a database: "" when it reads whole, else what it threw.
QString readEverything(const std::string& file, StoreMode mode) {
    StoreOptions options;
    options.busyTimeout = 300ms;
    return errorOf([&] {
        ResultStore store = ResultStore::open(file, mode, options);
        for (const SessionInfo& s : store.sessions()) {
            store.results(s.id, true);
            store.statusCounts(s.id);
            store.best(s.id);
            store.load(s.id);
        }
    });
}

// tiny.json in `dir` with its kernel text `kernel` (as k.cu) and JSON edits.
QString tinyProblemIn(const QTemporaryDir& dir, const std::string& kernel,
                      const std::function<void(nlohmann::ordered_json&)>& edit = {}) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(readBytes(str(kTiny)));
    doc["KernelSpecification"]["KernelFile"] = "k.cu";
    if (edit)
        edit(doc);
    const QString path = dir.filePath("problem.json");
    writeBytes(str(path), doc.dump(2));
    writeBytes(str(dir.filePath("k.cu")), kernel);
    return path;
}

const std::string kTinyKernel = readBytes(TILESCOPE_TEST_DATA "/tuning/tiny.cu");

} // namespace

class TestHostileIo : public QObject {
    Q_OBJECT

private slots:
    // ---- databases -------------------------------------------------------------------------

    void damagedDatabase_data() {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<bool>("mustFail"); // else it may also read whole (the damage missed the data)
        QTest::newRow("random bytes after a valid header") << "random-after-header" << true;
        QTest::newRow("random bytes over the schema page") << "random-schema" << true;
        QTest::newRow("truncated to the header") << "cut-100" << true;
        QTest::newRow("truncated to one page") << "cut-4096" << true;
        QTest::newRow("truncated to half") << "cut-half" << true;
        QTest::newRow("one page short") << "cut-page" << false;
        QTest::newRow("a page of random bytes in the middle") << "random-page" << false;
        QTest::newRow("zeros from the middle on") << "zero-half" << true;
    }

    void damagedDatabase() {
        QFETCH(QString, damage);
        QFETCH(bool, mustFail);
        QTemporaryDir dir;
        const std::string file = str(dir.filePath("r.db"));
        makeDatabase(file);
        std::string bytes = readBytes(file);
        QVERIFY(bytes.size() > 64 * 4096);
        std::mt19937 rng(17);
        auto randomBytes = [&](std::size_t n) {
            std::string out(n, '\0');
            for (char& c : out)
                c = static_cast<char>(rng());
            return out;
        };
        const std::size_t half = bytes.size() / 2 / 4096 * 4096;
        if (damage == "random-after-header")
            bytes = bytes.substr(0, 16) + randomBytes(64 * 1024);
        else if (damage == "random-schema")
            bytes.replace(100, 4096 - 100, randomBytes(4096 - 100));
        else if (damage == "cut-100")
            bytes.resize(100);
        else if (damage == "cut-4096")
            bytes.resize(4096);
        else if (damage == "cut-half")
            bytes.resize(half);
        else if (damage == "cut-page")
            bytes.resize(bytes.size() - 4096);
        else if (damage == "random-page")
            bytes.replace(half, 4096, randomBytes(4096));
        else if (damage == "zero-half")
            bytes.replace(half, bytes.size() - half, std::string(bytes.size() - half, '\0'));
        writeBytes(file, bytes);

        for (const StoreMode mode : {StoreMode::ReadOnly, StoreMode::ReadWrite}) {
            const QString error = readEverything(file, mode);
            QVERIFY2(!error.startsWith("NOT AN INPUT ERROR"), qPrintable(error));
            if (mustFail)
                QVERIFY2(!error.isEmpty(), "a damaged database read as whole");
            if (!error.isEmpty())
                QVERIFY2(error.contains("r.db") && (error.contains("damaged") || error.contains("not a SQLite")),
                         qPrintable(error));
            // Nothing was written to it.
            const std::string after = readBytes(file);
            std::size_t at = 0;
            while (at < std::min(after.size(), bytes.size()) && after[at] == bytes[at])
                ++at;
            QVERIFY2(after == bytes, qPrintable(QStringLiteral("%1: %2 bytes, was %3; first change at %4; %5")
                                                    .arg(mode == StoreMode::ReadOnly ? "read-only" : "read-write")
                                                    .arg(after.size())
                                                    .arg(bytes.size())
                                                    .arg(at)
                                                    .arg(error)));
        }

        // The CLI: a clear message and status 2, never "internal error". (A tuner may have added its
        // session before it reads the damaged pages: damage found at open writes nothing.)
        const CliRun show = cli({"show", dir.filePath("r.db")});
        QVERIFY2(show.status == 0 || show.status == 2, qPrintable(describe(show)));
        QVERIFY2(!show.err.contains("internal error"), qPrintable(describe(show)));
        if (mustFail)
            QVERIFY2(show.status == 2 && show.err.contains("r.db"), qPrintable(describe(show)));
        const CliRun tune = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", dir.filePath("r.db")});
        if (mustFail)
            QVERIFY2(tune.status == 2 && tune.err.contains("r.db") && !tune.err.contains("internal error"),
                     qPrintable(describe(tune)));
        QVERIFY2(tune.status == 0 || tune.status == 2, qPrintable(describe(tune)));
        QVERIFY2(!tune.err.contains("internal error"), qPrintable(describe(tune)));
    }

    void lockedDatabaseWaitsThenFails() {
        QTemporaryDir dir;
        const std::string file = str(dir.filePath("r.db"));
        makeDatabase(file, 10);
        OtherConnection other(file);
        QCOMPARE(other.exec("BEGIN IMMEDIATE; INSERT INTO sessions (started_at, state) VALUES ('now', 'running')"),
                 std::string());

        StoreOptions options;
        options.busyTimeout = 300ms;
        QElapsedTimer timer;
        timer.start();
        const auto error = inputErrorOf([&] {
            ResultStore store = ResultStore::open(file, StoreMode::ReadWrite, options);
            store.createSession(aSession());
        });
        const qint64 waited = timer.elapsed();
        QVERIFY(error.has_value());
        QVERIFY2(error->file() == file && QString(error->what()).contains("locked") &&
                     QString(error->what()).contains("300 ms"),
                 error->what());
        QVERIFY2(waited >= 250 && waited < 5000, qPrintable(QString::number(waited)));

        // Readers are not held up by a writer (WAL).
        {
            ResultStore reader = ResultStore::open(file, StoreMode::ReadOnly, options);
            QCOMPARE(reader.sessions().size(), std::size_t(1));
            QCOMPARE(reader.resultCount(1), std::uint64_t(10));
        }
        // Once the lock is gone, the same write goes through.
        QCOMPARE(other.exec("ROLLBACK"), std::string());
        ResultStore store = ResultStore::open(file, StoreMode::ReadWrite, options);
        QCOMPARE(store.createSession(aSession()), std::int64_t(2));
    }

    void exclusivelyLockedDatabase() {
        // A database another program switched to a rollback journal and holds exclusively: even a
        // read waits, then fails.
        QTemporaryDir dir;
        const std::string file = str(dir.filePath("r.db"));
        makeDatabase(file, 10);
        OtherConnection other(file);
        QCOMPARE(other.exec("PRAGMA journal_mode = DELETE"), std::string());
        QCOMPARE(other.exec("BEGIN EXCLUSIVE; INSERT INTO sessions (started_at, state) VALUES ('now', 'running')"),
                 std::string());
        StoreOptions options;
        options.busyTimeout = 200ms;
        for (const StoreMode mode : {StoreMode::ReadOnly, StoreMode::ReadWrite}) {
            QElapsedTimer timer;
            timer.start();
            const QString error = errorOf([&] { ResultStore::open(file, mode, options).sessions(); });
            QVERIFY2(error.contains("r.db") && error.contains("locked"), qPrintable(error));
            QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed())));
        }
        QCOMPARE(other.exec("ROLLBACK"), std::string());
        QCOMPARE(ResultStore::open(file, StoreMode::ReadOnly).sessions().size(), std::size_t(1));
    }

    void lockedDatabaseInTheCli() {
        QTemporaryDir dir;
        const QString db = dir.filePath("r.db");
        QCOMPARE(cli({"import", kTinyCache, "--db", db}).status, 0);
        OtherConnection other(str(db));
        QCOMPARE(other.exec("BEGIN IMMEDIATE; INSERT INTO sessions (started_at, state) VALUES ('now', 'running')"),
                 std::string());
        // The tuner waits for the lock (5 s), then says so; a reader reads meanwhile.
        QElapsedTimer timer;
        timer.start();
        const CliRun tune = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", db}, 60000);
        QVERIFY2(tune.status == 2 && tune.err.contains("r.db") && tune.err.contains("locked"),
                 qPrintable(describe(tune)));
        QVERIFY2(timer.elapsed() < 30000, qPrintable(QString::number(timer.elapsed())));
        const CliRun show = cli({"show", db});
        QVERIFY2(show.status == 0, qPrintable(describe(show)));
        QCOMPARE(other.exec("ROLLBACK"), std::string());
        QCOMPARE(ResultStore::open(str(db), StoreMode::ReadOnly).sessions().size(), std::size_t(1));
    }

    void newerSchema() {
        QTemporaryDir dir;
        const std::string file = str(dir.filePath("r.db"));
        makeDatabase(file, 10);
        {
            OtherConnection other(file);
            QCOMPARE(other.exec("INSERT INTO schema_version VALUES (99, 'later', '9.0')"), std::string());
        }
        const std::string bytes = readBytes(file);
        for (const StoreMode mode : {StoreMode::ReadOnly, StoreMode::ReadWrite}) {
            const QString error = errorOf([&] { ResultStore::open(file, mode); });
            QVERIFY2(error.contains("r.db") && error.contains("made by a newer Tilescope, schema 99 > " +
                                                              QString::number(ResultStore::kSchemaVersion)),
                     qPrintable(error));
        }
        for (const QStringList& args :
             {QStringList{"show", dir.filePath("r.db")}, QStringList{"export", dir.filePath("r.db"), "--format", "csv"},
              QStringList{"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", dir.filePath("r.db")},
              QStringList{"import", kTinyCache, "--db", dir.filePath("r.db")}}) {
            const CliRun r = cli(args);
            QVERIFY2(r.status == 2 && r.err.contains("made by a newer Tilescope, schema 99 > " +
                                                     QString::number(ResultStore::kSchemaVersion)),
                     qPrintable(args.join(' ') + "\n" + describe(r)));
        }
        QVERIFY(readBytes(file) == bytes);
    }

    void tablesChangedByAnotherProgram() {
        // The schema version says 1 but a column is gone (renamed by hand, or damage the fuzz
        // harness found): a located error, not an internal one.
        QTemporaryDir dir;
        const std::string file = str(dir.filePath("r.db"));
        makeDatabase(file, 10);
        {
            OtherConnection other(file);
            QCOMPARE(other.exec("ALTER TABLE results RENAME COLUMN metrics TO metrics_before"), std::string());
        }
        const auto error = inputErrorOf([&] {
            const ResultStore store = ResultStore::open(file, StoreMode::ReadOnly);
            store.results(1);
        });
        QVERIFY(error.has_value());
        QCOMPARE(error->file(), file);
        QVERIFY2(QString(error->what()).contains("lacks tables or columns") &&
                     QString(error->what()).contains("metrics"),
                 error->what());
        const CliRun r = cli({"show", dir.filePath("r.db"), "--session", "1"});
        QVERIFY2(r.status == 2 && r.err.contains("lacks tables or columns"), qPrintable(describe(r)));
    }

    void unknownValuesAreNoOtherValue() {
        // A status, state or config this build cannot read (a newer Tilescope's, or edited by hand)
        // must not be read as another (a status as "skipped", a state as "failed", a config as {}).
        QTemporaryDir dir;
        const std::string file = str(dir.filePath("r.db"));
        makeDatabase(file, 10);
        {
            OtherConnection other(file);
            QCOMPARE(other.exec("PRAGMA ignore_check_constraints = 1; UPDATE results SET status = 'exploded' "
                                "WHERE id = 5"),
                     std::string());
        }
        ResultStore store = ResultStore::open(file, StoreMode::ReadOnly);
        for (const auto& read :
             std::vector<std::function<void()>>{[&] { store.results(1); }, [&] { store.statusCounts(1); },
                                                [&] { store.best(1); }, [&] { store.load(1); }}) {
            const auto error = inputErrorOf(read);
            QVERIFY(error.has_value());
            QCOMPARE(error->file(), file);
            QCOMPARE(error->location(), std::string("results row 5, column status"));
            QVERIFY2(QString(error->what()).contains("'exploded'"), error->what());
        }
        for (const QStringList& args :
             {QStringList{"show", dir.filePath("r.db")}, QStringList{"show", dir.filePath("r.db"), "--json"},
              QStringList{"export", dir.filePath("r.db"), "--format", "csv"},
              QStringList{"export", dir.filePath("r.db"), "--format", "json"}}) {
            const CliRun r = cli(args);
            QVERIFY2(r.status == 2 && r.err.contains("exploded") && r.err.contains("column status"),
                     qPrintable(args.join(' ') + "\n" + describe(r)));
            QVERIFY(r.out.isEmpty() || !r.out.contains("skipped"));
        }

        {
            OtherConnection other(file);
            QCOMPARE(other.exec("PRAGMA ignore_check_constraints = 1; UPDATE results SET status = 'ok' WHERE id = 5; "
                                "UPDATE sessions SET state = 'paused'"),
                     std::string());
        }
        auto error = inputErrorOf([&] { ResultStore::open(file, StoreMode::ReadOnly).sessions(); });
        QVERIFY(error.has_value());
        QCOMPARE(error->location(), std::string("sessions row 1, column state"));
        QVERIFY2(QString(error->what()).contains("'paused'"), error->what());

        {
            OtherConnection other(file);
            QCOMPARE(other.exec("UPDATE sessions SET state = 'finished'; UPDATE configs SET config = 'BLOCK=32' "
                                "WHERE id = (SELECT config_id FROM results WHERE id = 3)"),
                     std::string());
        }
        error = inputErrorOf([&] { ResultStore::open(file, StoreMode::ReadOnly).results(1); });
        QVERIFY(error.has_value());
        QVERIFY2(QString::fromStdString(error->location()).contains("column config"), error->what());
    }

    void damagedDatabaseIsNotWritten() {
        // One page in the middle overwritten: reads of other pages go on, and so would a tuner's
        // writes. Every command that writes a database refuses it at once, locating the damage, and
        // leaves it as it was, as export (which reads it all) refuses it too.
        QTemporaryDir dir;
        const std::string file = str(dir.filePath("r.db"));
        makeDatabase(file);
        std::string bytes = readBytes(file);
        const std::size_t half = bytes.size() / 2 / 4096 * 4096;
        std::mt19937 rng(17);
        for (std::size_t i = half; i < half + 4096; ++i)
            bytes[i] = static_cast<char>(rng());
        writeBytes(file, bytes);
        for (const QStringList& args :
             {QStringList{"export", dir.filePath("r.db"), "--format", "csv"},
              QStringList{"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", dir.filePath("r.db")},
              QStringList{"import", kTinyCache, "--db", dir.filePath("r.db")}}) {
            const CliRun r = cli(args);
            QVERIFY2(r.status == 2 && r.err.contains("r.db: ") && r.err.contains("damaged") &&
                         !r.err.contains("internal error"),
                     qPrintable(args.join(' ') + "\n" + describe(r)));
            // (a reader leaves an empty log and its index beside a file in WAL mode)
            QVERIFY2(readBytes(file) == bytes && readBytes(file + "-wal").empty(),
                     qPrintable(args.join(' ') + ": the damaged database was written"));
            for (const QString& name : entries(dir.path()))
                QVERIFY2(name == "r.db" || name == "r.db-wal" || name == "r.db-shm", qPrintable(name));
        }
        const CliRun tune = cli({"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", dir.filePath("r.db")});
        QVERIFY2(tune.err.contains("Page "), qPrintable(describe(tune))); // where the damage is
    }

    void twoTunersCreateOneDatabase() {
        // Two tuners started together on a database that does not exist yet: both make it at once.
        // Both must finish, and every session reported done must be in the database whole (what the
        // same tuning stores alone). Run 50 times: the race is lost only now and then.
        QTemporaryDir dir;
        const QStringList tune{"tune", kTiny, "--backend", "replay:" + kTinyCache, "--budget", "5"};
        auto stored = [](const QString& db, std::int64_t session) {
            const ResultStore store = ResultStore::open(str(db), StoreMode::ReadOnly);
            QStringList out;
            for (const ResultRecord& r : store.results(session))
                out << QString::fromStdString(configKey(r.config) + " " + std::string(statusName(r.status())));
            return out;
        };
        const QString alone = dir.filePath("alone.db");
        const CliRun reference = cli(tune + QStringList{"--db", alone});
        QVERIFY2(reference.status == 0, qPrintable(describe(reference)));
        const QStringList want = stored(alone, 1);
        QVERIFY(want.size() >= 5);

        constexpr int kTrials = 50;
        const QRegularExpression done(QStringLiteral("^Session (\\d+) finished"), QRegularExpression::MultilineOption);
        QStringList failures;
        for (int trial = 0; trial < kTrials; ++trial) {
            const QString db = dir.filePath(QStringLiteral("r%1.db").arg(trial));
            QProcess runs[2];
            for (QProcess& p : runs)
                p.start(QStringLiteral(TILESCOPE_CLI), tune + QStringList{"--db", db});
            QString said;
            std::vector<std::int64_t> reported;
            int ok = 0;
            for (QProcess& p : runs) {
                QVERIFY(p.waitForFinished(60000));
                const QString out = QString::fromUtf8(p.readAllStandardOutput());
                const QString err = QString::fromUtf8(p.readAllStandardError());
                const int status = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
                if (status == 0) {
                    ++ok;
                    const QRegularExpressionMatch m = done.match(out);
                    if (m.hasMatch())
                        reported.push_back(m.captured(1).toLongLong());
                    else
                        said += " exit 0 without a finished session: " + out;
                } else {
                    said += QStringLiteral(" exit %1: %2").arg(status).arg(err.trimmed());
                }
            }
            QString lost;
            std::size_t sessions = 0;
            if (QFileInfo::exists(db)) {
                sessions = ResultStore::open(str(db), StoreMode::ReadOnly).sessions().size();
                for (const std::int64_t id : reported)
                    if (stored(db, id) != want)
                        lost += QStringLiteral(" session %1 reported done lacks results;").arg(id);
            } else if (!reported.empty()) {
                lost = " the database is gone;";
            }
            if (ok != 2 || reported.size() != 2 || sessions != 2 || !lost.isEmpty())
                failures << QStringLiteral("trial %1: %2 of 2 ok, %3 sessions stored;%4%5")
                                .arg(trial)
                                .arg(ok)
                                .arg(sessions)
                                .arg(lost, said);
        }
        QVERIFY2(failures.isEmpty(), qPrintable(QString::number(failures.size()) + " of " + QString::number(kTrials) +
                                                " trials lost a session:\n" + failures.join('\n')));
    }

    // ---- outputs ---------------------------------------------------------------------------

    void outputThatIsAnInput_data() {
        // args: the command, with IN for the database (a copy of tiny's recording), PROBLEM for a
        // problem file, T4 for a T4 file; out: the file that would be written, which is an input.
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("out");
        QTest::newRow("export -o the database")
            << QStringList{"export", "r.db", "--format", "csv", "-o", "r.db"} << "r.db";
        QTest::newRow("export --output the database, another spelling")
            << QStringList{"export", "./r.db", "--format", "t4", "--output", "../d/r.db"} << "../d/r.db";
        QTest::newRow("export -o a symbolic link to the database")
            << QStringList{"export", "r.db", "--format", "csv", "-o", "link.db"} << "link.db";
        QTest::newRow("export -o a hard link of the database")
            << QStringList{"export", "r.db", "--format", "json", "-o", "hard.db"} << "hard.db";
        QTest::newRow("export -o the T4 file it reads")
            << QStringList{"export", "t4.json", "--format", "t4", "-o", "t4.json"} << "t4.json";
        QTest::newRow("compare --csv one of the two")
            << QStringList{"compare", "r.db", "t4.json", "--csv", "t4.json"} << "t4.json";
        QTest::newRow("table --cpp the recording") << QStringList{"table", "r.db", "--cpp", "r.db"} << "r.db";
        QTest::newRow("analyze --csv the problem")
            << QStringList{"analyze", "problem.json", "--sample", "1", "--csv", "problem.json"} << "problem.json";
        QTest::newRow("lab --json the recording")
            << QStringList{"lab", "problem.json", "--replay", "r.db", "--json", "link.db"} << "link.db";
        QTest::newRow("import into the database it reads")
            << QStringList{"import", "r.db", "--db", "hard.db"} << "hard.db";
        QTest::newRow("tune --db the problem")
            << QStringList{"tune", "problem.json", "--backend", "replay:r.db", "--db", "problem.json"}
            << "problem.json";
    }

    void outputThatIsAnInput() {
        // Writing an output over one of the command's own inputs would destroy what it reads
        // (export DB -o DB left an empty export where the results were). The same file, by device
        // and inode, through any link: refused before anything is written, naming it.
        QFETCH(QStringList, args);
        QFETCH(QString, out);
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir("d"));
        const QString work = dir.filePath("d");
        QCOMPARE(cli({"import", kTinyCache, "--db", work + "/r.db"}).status, 0);
        QCOMPARE(cli({"export", work + "/r.db", "--format", "t4", "-o", work + "/t4.json"}).status, 0);
        fs::copy_file(str(kTiny), str(work + "/problem.json"));
        writeBytes(str(work + "/k.cu"), kTinyKernel);
        fs::create_symlink("r.db", str(work + "/link.db"));
        fs::create_hard_link(str(work + "/r.db"), str(work + "/hard.db"));
        std::map<QString, std::string> before;
        for (const QString& name : entries(work))
            before[name] = readBytes(str(work + "/" + name));

        const CliRun r = cli(args, 120000, work);
        QVERIFY2(r.status == 2 && r.err.contains(out + ": ") && r.err.contains("same file") &&
                     !r.err.contains("internal error"),
                 qPrintable(describe(r)));
        QStringList names;
        for (const auto& [name, bytes] : before) {
            names << name;
            QVERIFY2(readBytes(str(work + "/" + name)) == bytes, qPrintable(name + " changed"));
        }
        QCOMPARE(entries(work), names);
    }

    void standardOutputThatIsAnInput() {
        // The same through the shell: standard output appended to the database the command reads.
        QTemporaryDir dir;
        const QString db = dir.filePath("r.db");
        QCOMPARE(cli({"import", kTinyCache, "--db", db}).status, 0);
        const std::string bytes = readBytes(str(db));
        const CliRun r = cliAfter("exec >>r.db", {"export", "r.db", "--format", "csv"}, dir.path());
        QVERIFY2(r.status == 2 && r.err.contains("standard output") && r.err.contains("r.db") &&
                     r.err.contains("same file"),
                 qPrintable(describe(r)));
        QVERIFY(readBytes(str(db)) == bytes);
        // Appended to another file, it is written as ever.
        const CliRun other = cliAfter("exec >>out.csv", {"export", "r.db", "--format", "csv"}, dir.path());
        QVERIFY2(other.status == 0, qPrintable(describe(other)));
        QVERIFY(readBytes(str(dir.filePath("out.csv"))).rfind("session,kernel,", 0) == 0);
    }

    void failedWriteToStandardOutput_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("export") << QStringList{"export", "r.db", "--format", "csv"};
        QTest::newRow("export, a small one") << QStringList{"export", "r.db", "--format", "json"};
        QTest::newRow("show") << QStringList{"show", "r.db"};
        QTest::newRow("show --json") << QStringList{"show", "r.db", "--json"};
        QTest::newRow("space") << QStringList{"space", kTiny};
        QTest::newRow("space --count") << QStringList{"space", kTiny, "--count"};
        QTest::newRow("compare") << QStringList{"compare", "r.db", kTinyCache};
        QTest::newRow("import") << QStringList{"import", kTinyCache, "--db", "new.db"};
        QTest::newRow("tune") << QStringList{"tune", kTiny, "--backend", "replay:" + kTinyCache, "--db", "new.db"};
        QTest::newRow("--help") << QStringList{"--help"};
        QTest::newRow("export --help") << QStringList{"export", "--help"};
        QTest::newRow("--version") << QStringList{"--version"};
    }

    void failedWriteToStandardOutput() {
        // A full disk under standard output (/dev/full) fails every write: the command must say so
        // and fail, not exit 0 having written nothing.
        QFETCH(QStringList, args);
        if (!QFileInfo::exists(QStringLiteral("/dev/full")))
            QSKIP("no /dev/full here");
        QTemporaryDir dir;
        QCOMPARE(cli({"import", kTinyCache, "--db", dir.filePath("r.db")}).status, 0);
        const CliRun full = cliAfter("exec >/dev/full", args, dir.path());
        QVERIFY2(full.status == 2 && full.err.contains("cannot write to standard output") &&
                     !full.err.contains("internal error"),
                 qPrintable(describe(full)));
        // The same command to a file that takes it succeeds.
        QFile::remove(dir.filePath("new.db"));
        const CliRun fine = cliAfter("exec >out.txt", args, dir.path());
        QVERIFY2(fine.status == 0, qPrintable(describe(fine)));
        QVERIFY(!readBytes(str(dir.filePath("out.txt"))).empty());
    }

    // ---- CLI numbers -----------------------------------------------------------------------

    void badNumbers_data() {
        QTest::addColumn<QStringList>("args"); // PROBLEM, CACHE and DB stand for files the test makes
        QTest::addColumn<QString>("option");
        const QStringList tune{"tune", "PROBLEM", "--backend", "replay:CACHE", "--db", "DB"};
        const QStringList lab{"lab", "PROBLEM", "--replay", "CACHE", "--repeats", "2"};
        struct Row {
            const char* name;
            QStringList args;
            const char* option;
        };
        const Row rows[] = {
            {"tune --fraction 0", tune + QStringList{"--fraction", "0"}, "--fraction"},
            {"tune --fraction negative", tune + QStringList{"--fraction", "-0.5"}, "--fraction"},
            {"tune --fraction nan", tune + QStringList{"--fraction", "nan"}, "--fraction"},
            {"tune --fraction inf", tune + QStringList{"--fraction", "inf"}, "--fraction"},
            {"tune --fraction over 1", tune + QStringList{"--fraction", "1.5"}, "--fraction"},
            {"tune --fraction a word", tune + QStringList{"--fraction", "half"}, "--fraction"},
            {"tune --budget 0", tune + QStringList{"--budget", "0"}, "--budget"},
            {"tune --budget negative", tune + QStringList{"--budget", "-1"}, "--budget"},
            {"tune --budget fractional", tune + QStringList{"--budget", "2.5"}, "--budget"},
            {"tune --budget exponent", tune + QStringList{"--budget", "1e3"}, "--budget"},
            {"tune --budget past 2^64", tune + QStringList{"--budget", "99999999999999999999999"}, "--budget"},
            {"tune --max-time 0", tune + QStringList{"--max-time", "0"}, "--max-time"},
            {"tune --max-time negative", tune + QStringList{"--max-time", "-3"}, "--max-time"},
            {"tune --max-time nan", tune + QStringList{"--max-time", "nan"}, "--max-time"},
            {"tune --max-time inf", tune + QStringList{"--max-time", "inf"}, "--max-time"},
            {"tune --seed negative", tune + QStringList{"--seed", "-1"}, "--seed"},
            {"tune --shape negative", tune + QStringList{"--shape", "-1"}, "--shape"},
            {"tune --confirm negative", tune + QStringList{"--confirm", "-1"}, "--confirm"},
            {"tune --jobs 0", tune + QStringList{"--jobs", "0"}, "--jobs"},
            {"tune --jobs negative", tune + QStringList{"--jobs", "-4"}, "--jobs"},
            {"tune --sample-time 0", tune + QStringList{"--sample-time", "0"}, "--sample-time"},
            {"tune --sample-time nan", tune + QStringList{"--sample-time", "nan"}, "--sample-time"},
            {"tune --min-samples 0", tune + QStringList{"--min-samples", "0"}, "--min-samples"},
            {"tune --min-samples nan", tune + QStringList{"--min-samples", "nan"}, "--min-samples"},
            {"tune --config-timeout nan", tune + QStringList{"--config-timeout", "nan"}, "--config-timeout"},
            {"tune --config-timeout inf", tune + QStringList{"--config-timeout", "inf"}, "--config-timeout"},
            {"space --sample negative", {"space", "PROBLEM", "--sample", "-1"}, "--sample"},
            {"space --seed nan", {"space", "PROBLEM", "--seed", "nan"}, "--seed"},
            {"space --shape exponent", {"space", "PROBLEM", "--shape", "1e2"}, "--shape"},
            {"analyze --sample 0", {"analyze", "PROBLEM", "--sample", "0"}, "--sample"},
            {"analyze --jobs negative", {"analyze", "PROBLEM", "--jobs", "-1"}, "--jobs"},
            {"show --top 0", {"show", "CACHE", "--top", "0"}, "--top"},
            {"show --session negative", {"show", "CACHE", "--session", "-1"}, "--session"},
            {"show --session past 2^63", {"show", "CACHE", "--session", "99999999999999999999"}, "--session"},
            {"export --top 0", {"export", "CACHE", "--format", "triton", "--top", "0"}, "--top"},
            {"export --session nan", {"export", "CACHE", "--format", "csv", "--session", "nan"}, "--session"},
            {"lab --fraction 0", lab + QStringList{"--fraction", "0"}, "--fraction"},
            {"lab --fraction nan", lab + QStringList{"--fraction", "nan"}, "--fraction"},
            {"lab --budget 0", lab + QStringList{"--budget", "0"}, "--budget"},
            {"lab --repeats 0", {"lab", "PROBLEM", "--replay", "CACHE", "--repeats", "0"}, "--repeats"},
            {"lab --batch 0", lab + QStringList{"--batch", "0"}, "--batch"},
            {"lab --seed negative", lab + QStringList{"--seed", "-1"}, "--seed"},
        };
        for (const Row& row : rows)
            QTest::newRow(row.name) << row.args << QString(row.option);
    }

    void badNumbers() {
        QFETCH(QStringList, args);
        QFETCH(QString, option);
        QTemporaryDir dir;
        const QString db = dir.filePath("r.db");
        for (QString& a : args)
            a.replace("PROBLEM", kTiny).replace("CACHE", kTinyCache).replace("DB", db);
        const CliRun r = cli(args, 60000);
        QVERIFY2(r.status == 2, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(option + ": expected"), qPrintable(describe(r)));
        QVERIFY2(r.out.isEmpty(), qPrintable(describe(r)));
        QVERIFY(!QFile::exists(db)); // refused before anything was written
    }

    void goodNumbers_data() {
        QTest::addColumn<QStringList>("args");
        const QStringList tune{"tune", "PROBLEM", "--backend", "replay:CACHE", "--db", "DB"};
        QTest::newRow("tune --fraction 1") << tune + QStringList{"--fraction", "1"};
        QTest::newRow("tune --fraction 0.05") << tune + QStringList{"--fraction", "0.05"};
        QTest::newRow("tune --budget 3 --seed 18446744073709551615")
            << tune + QStringList{"--budget", "3", "--seed", "18446744073709551615"};
        QTest::newRow("tune --max-time 1e-3") << tune + QStringList{"--max-time", "1e-3"};
        QTest::newRow("tune --confirm 0 --shape 0") << tune + QStringList{"--confirm", "0", "--shape", "0"};
        QTest::newRow("space --sample 0") << QStringList{"space", "PROBLEM", "--sample", "0"};
        QTest::newRow("show --top 1 --session 1") << QStringList{"show", "CACHE", "--top", "1", "--session", "1"};
    }

    void goodNumbers() {
        QFETCH(QStringList, args);
        QTemporaryDir dir;
        for (QString& a : args)
            a.replace("PROBLEM", kTiny).replace("CACHE", kTinyCache).replace("DB", dir.filePath("r.db"));
        const CliRun r = cli(args);
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
    }

    // ---- files written ---------------------------------------------------------------------

    void exportToAPlaceThatCannotBeWritten_data() {
        QTest::addColumn<QString>("output");
        QTest::addColumn<QString>("expected");
        QTest::newRow("a missing folder") << "no/such/out.csv"
                                          << "the folder no/such does not exist";
        QTest::newRow("a path under a regular file") << "afile/out.csv"
                                                     << "afile is a file, not a folder";
        QTest::newRow("a folder") << "adir"
                                  << "it is a folder";
        QTest::newRow("a folder, with a slash") << "adir/"
                                                << "it is a folder";
    }

    void exportToAPlaceThatCannotBeWritten() {
        QFETCH(QString, output);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        writeBytes(str(dir.filePath("afile")), "a file\n");
        QVERIFY(QDir(dir.path()).mkdir("adir"));
        const QStringList before = entries(dir.path());
        const CliRun r = cli({"export", kTinyCache, "--format", "csv", "-o", output}, 60000, dir.path());
        QVERIFY2(r.status == 2, qPrintable(describe(r)));
        QVERIFY2(r.err.contains(output + ": -o: ") && r.err.contains(expected), qPrintable(describe(r)));
        QCOMPARE(entries(dir.path()), before);
        QCOMPARE(entries(dir.filePath("adir")), QStringList());
        QCOMPARE(readBytes(str(dir.filePath("afile"))), std::string("a file\n"));
    }

    void failedExportLeavesTheOldFile() {
        // The disk fills up midway (a file size limit stands in for it): the old export stays
        // whole, and no temporary file is left behind.
        QTemporaryDir dir;
        const std::string old = "the export of yesterday\n";
        const std::string out = str(dir.filePath("out.csv"));
        writeBytes(out, old);
        QVERIFY(::chmod(out.c_str(), 0640) == 0);
        const QStringList before = entries(dir.path());
        for (const char* format : {"csv", "t4", "json", "cpp", "triton", "kerneltuner"}) {
            const CliRun r = cliAfter("ulimit -f 4; trap '' XFSZ",
                                      {"export", kTinyCache, "--format", format, "-o", "out.csv"}, dir.path());
            if (QString(format) == "csv" || QString(format) == "t4" || QString(format) == "kerneltuner") {
                // (these are larger than the limit; the others may fit)
                QVERIFY2(r.status == 2 && r.err.contains("out.csv: -o: ") && r.err.contains("left as it was"),
                         qPrintable(QString(format) + "\n" + describe(r)));
            }
            if (r.status != 0)
                QCOMPARE(readBytes(out), old);
            QCOMPARE(entries(dir.path()), before);
            writeBytes(out, old);
        }
        // Without the limit the same export replaces the file, keeping its permissions.
        const CliRun r = cli({"export", kTinyCache, "--format", "csv", "-o", "out.csv"}, 60000, dir.path());
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QVERIFY(readBytes(out).rfind("session,kernel,", 0) == 0);
        struct stat st {};
        QCOMPARE(::stat(out.c_str(), &st), 0);
        QCOMPARE(st.st_mode & 0777, mode_t(0640));
        QCOMPARE(entries(dir.path()), before);
    }

    void failedExportOfBadInputLeavesTheOldFile() {
        QTemporaryDir dir;
        const std::string out = str(dir.filePath("out.csv"));
        writeBytes(out, "old\n");
        const CliRun r =
            cli({"export", kTinyCache, "--format", "csv", "--session", "9", "-o", "out.csv"}, 60000, dir.path());
        QVERIFY2(r.status == 2, qPrintable(describe(r)));
        QCOMPARE(readBytes(out), std::string("old\n"));
    }

    void exportThroughALink() {
        QTemporaryDir dir;
        writeBytes(str(dir.filePath("real.csv")), "old\n");
        fs::create_symlink("real.csv", str(dir.filePath("link.csv")));
        const CliRun r = cli({"export", kTinyCache, "--format", "csv", "-o", "link.csv"}, 60000, dir.path());
        QVERIFY2(r.status == 0, qPrintable(describe(r)));
        QVERIFY(fs::is_symlink(str(dir.filePath("link.csv"))));
        QVERIFY(readBytes(str(dir.filePath("real.csv"))).rfind("session,kernel,", 0) == 0);
        QCOMPARE(entries(dir.path()), (QStringList{"link.csv", "real.csv"}));
    }

    void otherFilesTheCliWrites() {
        QTemporaryDir dir;
        writeBytes(str(dir.filePath("afile")), "a file\n");
        // analyze --csv, after its compiles.
        CliRun r = cli({"analyze", kTiny, "--sample", "1", "--no-cache", "--csv", "afile/out.csv"}, 120000, dir.path());
        QVERIFY2(r.status == 2 && r.err.contains("afile/out.csv: --csv: ") && r.err.contains("not a folder"),
                 qPrintable(describe(r)));
        // lab --json.
        QVERIFY(QDir(dir.path()).mkdir("adir"));
        r = cli({"lab", kTiny, "--replay", kTinyCache, "--repeats", "2", "--json", "adir"}, 120000, dir.path());
        QVERIFY2(r.status == 2 && r.err.contains("adir: --json: ") && r.err.contains("folder"),
                 qPrintable(describe(r)));
        // lab --curves: a folder where a curve's file should be; the curve written before it is whole.
        QVERIFY(QDir(dir.path()).mkpath("curves/seconds.csv"));
        writeBytes(str(dir.filePath("curves/evaluations.csv")), "old\n");
        r = cli({"lab", kTiny, "--replay", kTinyCache, "--repeats", "2", "--curves", "curves"}, 120000, dir.path());
        QVERIFY2(r.status == 2 && r.err.contains("seconds.csv: ") && r.err.contains("is a folder"),
                 qPrintable(describe(r)));
        QVERIFY(readBytes(str(dir.filePath("curves/evaluations.csv"))).rfind("strategy,evaluations,", 0) == 0);
        QCOMPARE(entries(dir.filePath("curves")), (QStringList{"evaluations.csv", "seconds.csv"}));
        QCOMPARE(entries(dir.path()), (QStringList{"adir", "afile", "curves"}));
        QCOMPARE(entries(dir.filePath("adir")), QStringList());
    }

    void writeFileAtomically_data() {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("expected");
        QTest::newRow("no name") << ""
                                 << "no file name";
        QTest::newRow("a folder") << "adir"
                                  << "is a folder";
        QTest::newRow("a missing folder") << "missing/x.txt"
                                          << "does not exist";
        QTest::newRow("under a file") << "afile/x.txt"
                                      << "is a file, not a folder";
        QTest::newRow("deep under a file") << "afile/a/b/x.txt"
                                           << "is a file, not a folder";
        QTest::newRow("a pipe nobody reads") << "pipe"
                                             << "a pipe that nobody reads";
    }

    void writeFileAtomically() {
        QFETCH(QString, target);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        writeBytes(str(dir.filePath("afile")), "a file\n");
        QVERIFY(QDir(dir.path()).mkdir("adir"));
        QCOMPARE(::mkfifo(str(dir.filePath("pipe")).c_str(), 0600), 0);
        const QStringList before = entries(dir.path());
        const fs::path path = target.isEmpty() ? fs::path() : fs::path(str(dir.filePath(target)));
        std::optional<InputError> error;
        QVERIFY(endsWithin(
            20s, [&] { error = inputErrorOf([&] { tilescope::writeFileAtomically(path, "x\n", "-o"); }); },
            [&] { releasePipe(str(dir.filePath("pipe"))); }));
        QVERIFY(error.has_value());
        QCOMPARE(error->location(), std::string("-o"));
        QVERIFY2(QString(error->what()).contains(expected), error->what());
        QCOMPARE(entries(dir.path()), before);
        QCOMPARE(readBytes(str(dir.filePath("afile"))), std::string("a file\n"));
    }

    // ---- kernels ---------------------------------------------------------------------------

    void unreadableKernelFile_data() {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("a folder") << "folder"
                                  << "is a folder";
        QTest::newRow("a named pipe") << "pipe"
                                      << "named pipe";
        QTest::newRow("a device") << "device"
                                  << "not a regular file";
        QTest::newRow("a path under a regular file") << "under-file"
                                                     << "not found";
        QTest::newRow("gone") << "gone"
                              << "not found";
        QTest::newRow("far too large") << "huge"
                                       << "MiB";
    }

    void unreadableKernelFile() {
        // The kernel file is fine when the problem is read and has changed when a compile starts:
        // the NVRTC front (RequestBuilder) says so, promptly, naming KernelFile.
        QFETCH(QString, kind);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        TuningProblem problem = TuningProblem::load(str(tinyProblemIn(dir, kTinyKernel)));
        QVERIFY(problem.launchBlockers.empty());
        const std::string kernel = str(dir.filePath("k.cu"));
        fs::remove(kernel);
        if (kind == "folder") {
            fs::create_directory(kernel);
        } else if (kind == "pipe") {
            QCOMPARE(::mkfifo(kernel.c_str(), 0600), 0);
        } else if (kind == "device") {
            fs::create_symlink("/dev/zero", kernel);
        } else if (kind == "under-file") {
            writeBytes(kernel, kTinyKernel);
            problem.kernelFile = "k.cu/k.cu";
        } else if (kind == "huge") {
            writeBytes(kernel, kTinyKernel);
            fs::resize_file(kernel, 17u << 20); // sparse: no disk space
        }
        std::optional<InputError> error;
        QVERIFY(endsWithin(
            20s, [&] { error = inputErrorOf([&] { RequestBuilder builder(problem); }); },
            [&] { releasePipe(kernel); }));
        QVERIFY(error.has_value());
        QCOMPARE(error->location(), std::string("/KernelSpecification/KernelFile"));
        QVERIFY2(QString(error->what()).contains(expected), error->what());
    }

    void unreadableKernelFileInTheCli() {
        QTemporaryDir dir;
        const QString problem = tinyProblemIn(dir, kTinyKernel);
        const std::string kernel = str(dir.filePath("k.cu"));
        fs::remove(kernel);
        QCOMPARE(::mkfifo(kernel.c_str(), 0600), 0);
        for (const QStringList& args : {QStringList{"analyze", problem, "--no-cache", "--sample", "1"},
                                        QStringList{"tune", problem, "--backend", "analysis:sm_90", "--db",
                                                    dir.filePath("r.db"), "--budget", "2"}}) {
            const CliRun r = cli(args, 60000);
            QVERIFY2(r.status == 2 && r.err.contains("/KernelSpecification/KernelFile"),
                     qPrintable(args.join(' ') + "\n" + describe(r)));
        }
        QVERIFY(!QFile::exists(dir.filePath("r.db")));
    }

    void includeCycle_data() {
        QTest::addColumn<QString>("a"); // a.cuh, which k.cu includes
        QTest::addColumn<QString>("b"); // b.cuh ("" = none)
        QTest::newRow("two headers include each other") << "#include \"b.cuh\"\n"
                                                        << "#include \"a.cuh\"\n";
        QTest::newRow("a header includes itself") << "#include \"a.cuh\"\n"
                                                  << "";
        QTest::newRow("by a longer path each time") << "#include \"./a.cuh\"\n"
                                                    << "";
        QTest::newRow("through a folder and back") << "#include \"d/../a.cuh\"\n"
                                                   << "";
        QTest::newRow("by its full path") << "#include \"DIR/a.cuh\"\n"
                                          << "";
        QTest::newRow("with a guard that never holds") << "#ifndef A_GUARD\n#include \"b.cuh\"\n#endif\n"
                                                       << "#undef A_GUARD\n#include \"a.cuh\"\n";
    }

    void includeCycle() {
        QFETCH(QString, a);
        QFETCH(QString, b);
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir("d"));
        a.replace("DIR", dir.path());
        writeBytes(str(dir.filePath("a.cuh")), str(a));
        if (!b.isEmpty())
            writeBytes(str(dir.filePath("b.cuh")), str(b));
        const TuningProblem problem =
            TuningProblem::load(str(tinyProblemIn(dir, "#include \"a.cuh\"\n" + kTinyKernel)));
        CompileResult result;
        QVERIFY2(endsWithin(60s,
                            [&] {
                                const RequestBuilder builder(problem);
                                result = compileKernel(builder.request(Config{0, 0, 0, 0}, "sm_90"));
                            }),
                 "compiling a kernel whose headers include each other did not end");
        QCOMPARE(result.status, CompileStatus::CompileError);
        QVERIFY2(QString::fromStdString(result.message).contains("includes itself"), result.message.c_str());
        QVERIFY2(result.log.size() < 16 * 1024, qPrintable(QString::number(result.log.size())));
        QVERIFY(result.message.size() < 4096);
    }

    void includeCycleInTheCli() {
        // Every config fails the same way: the tuner stops with status 2, naming the error.
        QTemporaryDir dir;
        writeBytes(str(dir.filePath("a.cuh")), "#include \"b.cuh\"\n");
        writeBytes(str(dir.filePath("b.cuh")), "#include \"a.cuh\"\n");
        const QString problem = tinyProblemIn(dir, "#include \"a.cuh\"\n" + kTinyKernel);
        const CliRun r =
            cli({"tune", problem, "--backend", "analysis:sm_90", "--db", dir.filePath("r.db"), "--no-cache"}, 120000);
        QVERIFY2(r.status == 2 && r.err.contains("includes itself"), qPrintable(describe(r)));
        QVERIFY(r.err.size() < 16 * 1024);
    }

    void includedPipe_data() {
        QTest::addColumn<QString>("kernelPrefix");
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<QString>("expected");
        QTest::newRow("the kernel includes it") << "#include \"pipe.cuh\"\n" << QStringList{} << "k.cu line 1";
        QTest::newRow("a header includes it, with <>") << "#include \"a.cuh\"\n" << QStringList{} << "a.cuh line 2";
        QTest::newRow("a header in an -I folder") << "#include <inc.cuh>\n"
                                                  << QStringList{"-IDIR/inc"} << "inc.cuh line 1";
        QTest::newRow("--pre-include") << "" << QStringList{"--pre-include=DIR/pipe.cuh"} << "--pre-include";
    }

    void includedPipe() {
        // NVRTC waits without end on a header that is a named pipe: refused before compiling.
        QFETCH(QString, kernelPrefix);
        QFETCH(QStringList, options);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const std::string pipe = str(dir.filePath("pipe.cuh"));
        QCOMPARE(::mkfifo(pipe.c_str(), 0600), 0);
        writeBytes(str(dir.filePath("a.cuh")), "#pragma once\n#include <pipe.cuh>\n");
        QVERIFY(QDir(dir.path()).mkdir("inc"));
        writeBytes(str(dir.filePath("inc/inc.cuh")), "#include \"../pipe.cuh\"\n");
        for (QString& o : options)
            o.replace("DIR", dir.path());
        const TuningProblem problem =
            TuningProblem::load(str(tinyProblemIn(dir, str(kernelPrefix) + kTinyKernel, [&](auto& doc) {
                nlohmann::ordered_json list = nlohmann::ordered_json::array();
                for (const QString& o : options)
                    list.push_back(str(o));
                doc["KernelSpecification"]["CompilerOptions"] = list;
            })));
        std::optional<InputError> error;
        QVERIFY(endsWithin(
            20s, [&] { error = inputErrorOf([&] { RequestBuilder builder(problem); }); }, [&] { releasePipe(pipe); }));
        QVERIFY(error.has_value());
        QCOMPARE(error->location(), std::string("/KernelSpecification/KernelFile"));
        QVERIFY2(QString(error->what()).contains(expected) && QString(error->what()).contains("named pipe"),
                 error->what());
    }

    void nonCudaLanguage_data() {
        QTest::addColumn<QString>("language");
        QTest::newRow("OpenCL") << "OpenCL";
        QTest::newRow("HIP") << "HIP";
    }

    void nonCudaLanguage() {
        QFETCH(QString, language);
        QTemporaryDir dir;
        const QString path =
            tinyProblemIn(dir, kTinyKernel, [&](auto& doc) { doc["KernelSpecification"]["Language"] = str(language); });
        // Read (counting needs no kernel), with the reason it cannot be compiled.
        const TuningProblem problem = TuningProblem::load(str(path));
        QCOMPARE(problem.launchBlockers.size(), std::size_t(1));
        QCOMPARE(problem.launchBlockers[0].location(), std::string("/KernelSpecification/Language"));
        // The NVRTC front refuses it before any compile.
        auto error = inputErrorOf([&] { RequestBuilder builder(problem); });
        QVERIFY(error.has_value());
        QCOMPARE(error->location(), std::string("/KernelSpecification/Language"));
        QVERIFY2(QString(error->what()).contains(language) && QString(error->what()).contains("NVRTC"), error->what());
        // Also when the language changed after reading (an edit in memory leaves no blocker).
        QTemporaryDir cudaDir;
        TuningProblem edited = TuningProblem::load(str(tinyProblemIn(cudaDir, kTinyKernel)));
        QVERIFY(edited.launchBlockers.empty());
        edited.language = str(language);
        error = inputErrorOf([&] { RequestBuilder builder(edited); });
        QVERIFY(error.has_value());
        QCOMPARE(error->location(), std::string("/KernelSpecification/Language"));
        // The CLI: status 2, the field named, nothing written.
        const CliRun space = cli({"space", path, "--count"});
        QVERIFY2(space.status == 0, qPrintable(describe(space)));
        for (const QStringList& args :
             {QStringList{"analyze", path, "--no-cache", "--sample", "1"},
              QStringList{"tune", path, "--backend", "analysis:sm_90", "--db", dir.filePath("r.db")}}) {
            const CliRun r = cli(args, 60000);
            QVERIFY2(r.status == 2 && r.err.contains("/KernelSpecification/Language") && r.err.contains(language),
                     qPrintable(args.join(' ') + "\n" + describe(r)));
        }
        QVERIFY(!QFile::exists(dir.filePath("r.db")));
    }
};

QTEST_GUILESS_MAIN(TestHostileIo)
#include "tst_hostile_io.moc"
