#include "store/resultstore.h"

#include "base/error.h"
#include "model/configjson.h"
#include "store/schema.h"

#include <nlohmann/json.hpp>

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <unordered_map>

#include <fcntl.h>
#include <unistd.h>

namespace tilescope {

namespace {

using Clock = std::chrono::steady_clock;

// An open database: the connection and what its errors are told with.
struct Connection {
    sqlite3* db = nullptr;
    std::filesystem::path path;
    std::chrono::milliseconds busyTimeout{0};
};

std::string durationText(std::chrono::milliseconds ms) {
    if (ms.count() < 1000)
        return std::to_string(ms.count()) + " ms";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g s", double(ms.count()) / 1000.0);
    return buf;
}

// What a failed SQLite call means to the user. A locked, damaged, full or unwritable database is
// something outside this program (another process, the disk, a tool that edited the file): an
// InputError naming the file. Anything else would be a bug here. `why` is SQLite's message.
[[noreturn]] void sqliteFailure(const Connection& c, int rc, const std::string& why, const std::string& doing = {}) {
    const std::string file = c.path.string();
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        throw InputError(file, "",
                         "the database is locked: another process (a tuner, an import, a sqlite3 shell) holds its "
                         "lock, still after waiting " +
                             durationText(c.busyTimeout) + "; try again when it is done");
    case SQLITE_NOTADB:
        throw InputError(file, "", "not a SQLite database, or a damaged one (" + why + ")");
    case SQLITE_CORRUPT:
        throw InputError(file, "",
                         "the database is damaged (" + why +
                             "); Tilescope cannot read it (`sqlite3 FILE .recover` may save what is left)");
    case SQLITE_FULL:
        throw InputError(file, "", "cannot write the database: the disk is full");
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        throw InputError(file, "", "cannot write the database or its journal (a read-only file or folder?): " + why);
    case SQLITE_IOERR:
        throw InputError(file, "", "cannot read or write the database file: " + why);
    case SQLITE_ERROR:
        // A statement of this build that the file's tables cannot answer ("no such column"):
        // the file says it has this schema but was changed by another program, or is damaged.
        if (doing.rfind("cannot prepare", 0) == 0)
            throw InputError(file, "",
                             "the database lacks tables or columns of its schema version (" + why +
                                 "): it was changed by another program or is damaged");
        throw std::runtime_error("SQLite: " + doing + why);
    default:
        throw std::runtime_error("SQLite: " + doing + why);
    }
}

// A prepared statement, reset after each use. Column and bind indices follow SQLite (bind from 1,
// columns from 0).
class Statement {
public:
    Statement() = default;
    Statement(const Connection& c, const char* sql)
        : m_conn(&c)
        , m_db(c.db) {
        if (const int rc = sqlite3_prepare_v3(m_db, sql, -1, SQLITE_PREPARE_PERSISTENT, &m_stmt, nullptr);
            rc != SQLITE_OK)
            sqliteFailure(c, rc, sqlite3_errmsg(m_db), "cannot prepare '" + std::string(sql) + "': ");
    }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    Statement(Statement&& o) noexcept
        : m_conn(o.m_conn)
        , m_db(o.m_db)
        , m_stmt(o.m_stmt) {
        o.m_stmt = nullptr;
    }
    Statement& operator=(Statement&& o) noexcept {
        std::swap(m_conn, o.m_conn);
        std::swap(m_db, o.m_db);
        std::swap(m_stmt, o.m_stmt);
        return *this;
    }
    ~Statement() { sqlite3_finalize(m_stmt); }

    Statement& bind(int i, std::int64_t v) {
        check(sqlite3_bind_int64(m_stmt, i, v));
        return *this;
    }
    Statement& bind(int i, double v) {
        check(std::isfinite(v) ? sqlite3_bind_double(m_stmt, i, v) : sqlite3_bind_null(m_stmt, i));
        return *this;
    }
    Statement& bind(int i, const std::string& v) {
        check(sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
        return *this;
    }
    /// Text that outlives the statement's next run(): bound without a copy.
    Statement& bindView(int i, std::string_view v) {
        check(sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC));
        return *this;
    }
    Statement& bindBlob(int i, std::string_view v) {
        check(sqlite3_bind_blob64(m_stmt, i, v.data(), v.size(), SQLITE_TRANSIENT));
        return *this;
    }
    Statement& bindNull(int i) {
        check(sqlite3_bind_null(m_stmt, i));
        return *this;
    }
    template <typename T>
    Statement& bind(int i, const std::optional<T>& v) {
        if (v)
            return bind(i, *v);
        return bindNull(i);
    }

    /// Steps once: true while a row is available.
    bool step() {
        const int rc = sqlite3_step(m_stmt);
        if (rc == SQLITE_ROW)
            return true;
        if (rc == SQLITE_DONE)
            return false;
        const std::string message = sqlite3_errmsg(m_db); // before the reset, which may clear it
        sqlite3_reset(m_stmt);
        sqliteFailure(*m_conn, rc, message);
    }
    void run() {
        while (step()) {
        }
        reset();
    }
    // Bindings stay: every use binds all parameters again.
    void reset() { sqlite3_reset(m_stmt); }

    bool isNull(int c) const { return sqlite3_column_type(m_stmt, c) == SQLITE_NULL; }
    std::int64_t integer(int c) const { return sqlite3_column_int64(m_stmt, c); }
    double real(int c) const { return sqlite3_column_double(m_stmt, c); }
    std::string text(int c) const {
        const auto* p = sqlite3_column_text(m_stmt, c);
        return p ? std::string(reinterpret_cast<const char*>(p),
                               static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, c)))
                 : std::string();
    }
    std::string blob(int c) const {
        const auto* p = static_cast<const char*>(sqlite3_column_blob(m_stmt, c));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, c))) : std::string();
    }
    std::optional<std::int64_t> optInteger(int c) const {
        return isNull(c) ? std::nullopt : std::optional<std::int64_t>(integer(c));
    }
    std::optional<double> optReal(int c) const { return isNull(c) ? std::nullopt : std::optional<double>(real(c)); }

private:
    void check(int rc) {
        if (rc != SQLITE_OK)
            throw std::runtime_error(std::string("SQLite: cannot bind: ") + sqlite3_errmsg(m_db));
    }
    const Connection* m_conn = nullptr;
    sqlite3* m_db = nullptr;
    sqlite3_stmt* m_stmt = nullptr;
};

// Text JSON writes as it is (no quotes or backslashes to escape, ASCII only).
bool plainText(const std::string& s) {
    for (const char c : s)
        if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x80)
            return false;
    return true;
}

std::string shapeJson(const SessionInfo& info) {
    nlohmann::ordered_json shape = nlohmann::ordered_json::object();
    for (const auto& [name, value] : info.shape)
        shape[name] = value;
    return shape.dump();
}

} // namespace

struct ResultStore::Impl : Connection {
    bool readOnly = false;
    StoreOptions options;
    std::thread::id owner = std::this_thread::get_id();
    int schemaVersion = 0;
    // createOnFirstWrite and the file still missing: an empty database in memory answers until the
    // first write makes the file (materialize()).
    bool pending = false;

    bool inTransaction = false;
    Clock::time_point lastCommit{}; // the epoch: the first append commits at once

    Statement begin, commit, insertConfig, insertResult, deleteSkipped;
    // Per session: config key -> config id, for the configs this connection has seen.
    std::unordered_map<std::int64_t, std::unordered_map<std::string, std::int64_t>> configIds;

    ~Impl() { closeConnection(); }

    // Commits what is pending and closes the connection (the last one to a file in WAL mode folds
    // the log into the file and removes the -wal and -shm files).
    void closeConnection() {
        if (!db)
            return;
        if (inTransaction)
            sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
        inTransaction = false;
        // Statements must be finalised before the connection closes.
        begin = Statement();
        commit = Statement();
        insertConfig = Statement();
        insertResult = Statement();
        deleteSkipped = Statement();
        sqlite3_close_v2(db);
        db = nullptr;
        configIds.clear();
    }

    // Opens `file` (the database's path, or a name standing in for it) as this store's connection:
    // a Tilescope database this build reads; to write, whole, in WAL mode, at this build's schema.
    void connect(const std::string& file);
    // The schema version the connection's file holds (0: none yet); refuses a foreign or newer one.
    int readVersion();
    void enterWal();
    void migrate();
    void checkWhole();
    void materialize();

    void checkThread() const {
        if (std::this_thread::get_id() != owner)
            throw std::logic_error("ResultStore used from a thread other than the one that opened it");
    }
    // Every write asks first: refused read-only; with the file still to be made, it is made now.
    void checkWritable() {
        if (readOnly)
            throw InputError(path.string(), "", "the database was opened read-only");
        if (pending)
            materialize();
    }

    void exec(const char* sql) {
        char* error = nullptr;
        if (const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error); rc != SQLITE_OK) {
            const std::string message = error ? error : sqlite3_errmsg(db);
            sqlite3_free(error);
            sqliteFailure(*this, rc, message);
        }
    }

    void beginIfNeeded() {
        if (!inTransaction) {
            begin.run();
            inTransaction = true;
        }
    }
    // Commits pending results. Only a commit of results restarts the interval: the first result
    // after a quiet spell is then committed at once.
    void commitNow() {
        if (inTransaction) {
            commit.run();
            inTransaction = false;
            lastCommit = Clock::now();
        }
    }

    void prepareWriters() {
        begin = Statement(*this, "BEGIN IMMEDIATE");
        commit = Statement(*this, "COMMIT");
        insertConfig =
            Statement(*this, "INSERT INTO configs (session_id, space_index, key, config) VALUES (?, ?, ?, ?)");
        insertResult = Statement(
            *this,
            "INSERT INTO results (session_id, config_id, status, time_ms, time_min_ms, time_max_ms, time_stdev_ms, "
            "samples, objective, compile_s, benchmark_s, verification_error, registers, barriers, stack_frame, "
            "spill_stores, spill_loads, shared_static, constant_bytes, block_size, shared_dynamic, occupancy, "
            "device, metrics, message, log, recorded_at, time_ci_low_ms, time_ci_high_ms) VALUES (?, ?, ?, ?, ?, ?, "
            "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        // Scoped by session and status, so that results_by_session finds the few rows.
        deleteSkipped =
            Statement(*this, "DELETE FROM results WHERE session_id = ? AND status = 'skipped' AND config_id = ?");
    }

    std::int64_t configId(std::int64_t sessionId, const ResultRecord& r, bool& existed) {
        auto [known, first] = configIds.try_emplace(sessionId);
        auto& ids = known->second;
        if (first) {
            // The session's configs, once: this map is what keeps a config to one row per session
            // (a unique index would cost a third of a bulk import's time; one tuner drives a session).
            Statement all(*this, "SELECT key, id FROM configs WHERE session_id = ?");
            all.bind(1, sessionId);
            while (all.step())
                ids.emplace(all.text(0), all.integer(1));
        }
        std::string key = configKey(r.config);
        if (const auto it = ids.find(key); it != ids.end()) {
            existed = true;
            return it->second;
        }
        insertConfig.bind(1, sessionId);
        if (r.spaceIndex)
            insertConfig.bind(2, static_cast<std::int64_t>(*r.spaceIndex));
        else
            insertConfig.bindNull(2);
        const std::string text = configJson(r.config);
        insertConfig.bindView(3, key).bindView(4, text);
        insertConfig.run();
        existed = false;
        const std::int64_t id = sqlite3_last_insert_rowid(db);
        ids.emplace(std::move(key), id);
        return id;
    }

    // A result's metrics as the JSON object of its metrics column.
    static std::string metricsObject(const std::vector<Metric>& list) {
        std::string metrics = "{}";
        if (!list.empty()) {
            metrics = "{";
            for (const Metric& metric : list) {
                if (metrics.size() > 1)
                    metrics += ',';
                if (plainText(metric.name))
                    metrics.append("\"").append(metric.name).append("\"");
                else
                    metrics += nlohmann::json(metric.name).dump();
                metrics += ':';
                if (std::isfinite(metric.value)) {
                    char buf[32];
                    metrics.append(buf, std::to_chars(buf, buf + sizeof buf, metric.value).ptr);
                } else {
                    metrics += "null";
                }
            }
            metrics += '}';
        }
        return metrics;
    }

    // `now` stands in for records without a time.
    std::int64_t insert(std::int64_t sessionId, const ResultRecord& r, const std::string& now) {
        bool existed = false;
        const std::int64_t config = configId(sessionId, r, existed);
        if (existed)
            deleteSkipped.bind(1, sessionId).bind(2, config).run();
        const Measurement& m = r.measurement;
        const bool timed = m.time.samples > 0 || m.time.medianMs > 0;
        Statement& s = insertResult;
        s.bind(1, sessionId).bind(2, config).bindView(3, statusName(m.status));
        if (timed)
            s.bind(4, m.time.medianMs).bind(5, m.time.minMs).bind(6, m.time.maxMs).bind(7, m.time.stdevMs);
        else
            s.bindNull(4).bindNull(5).bindNull(6).bindNull(7);
        s.bind(8, std::int64_t(m.time.samples)).bind(9, r.objective).bind(10, m.compileSeconds);
        s.bind(11, m.benchmarkSeconds).bind(12, m.verificationError);
        if (m.staticInfo) {
            const StaticInfo& i = *m.staticInfo;
            if (i.registers >= 0)
                s.bind(13, std::int64_t(i.registers));
            else
                s.bindNull(13);
            s.bind(14, std::int64_t(i.barriers)).bind(15, i.stackFrame).bind(16, i.spillStores);
            s.bind(17, i.spillLoads).bind(18, i.sharedStatic).bind(19, i.constantBytes);
        } else {
            for (int c = 13; c <= 19; ++c)
                s.bindNull(c);
        }
        s.bind(20, r.blockSize).bind(21, r.sharedDynamic).bind(22, r.occupancy);
        if (m.device >= 0)
            s.bind(23, std::int64_t(m.device));
        else
            s.bindNull(23);
        const std::string metrics = metricsObject(m.metrics);
        // Messages never carry NUL or control bytes, whoever made them (model/measurement.h).
        s.bindView(24, metrics).bind(25, cleanMessage(m.message)).bind(26, cleanMessage(r.log));
        s.bindView(27, r.recordedAt.empty() ? now : r.recordedAt);
        if (timed && m.time.hasInterval())
            s.bind(28, m.time.ciLowMs).bind(29, m.time.ciHighMs);
        else
            s.bindNull(28).bindNull(29);
        s.run();
        return sqlite3_last_insert_rowid(db);
    }

    // A value of a column this build does not know: a newer Tilescope's, or one edited by hand.
    // Read as anything else it would silently change a result, so it is an error naming the row.
    [[noreturn]] void unknownValue(const char* table, std::int64_t row, const char* column, const std::string& value,
                                   const std::string& known) const {
        throw InputError(path.string(), std::string(table) + " row " + std::to_string(row) + ", column " + column,
                         "'" + value + "' is not a " + column + " this Tilescope knows (" + known +
                             "); the database was perhaps written by a newer Tilescope, or edited");
    }
    static std::string knownStatuses() {
        std::string known;
        for (const ResultStatus s : kAllStatuses)
            known += (known.empty() ? "" : ", ") + std::string(statusName(s));
        return known;
    }
    static std::string knownStates() {
        std::string known;
        for (int i = 0; i <= static_cast<int>(SessionState::Imported); ++i)
            known += (known.empty() ? "" : ", ") + std::string(sessionStateName(static_cast<SessionState>(i)));
        return known;
    }
    // Versions before 4 stored the analysis backend's results as pruned with this message: read
    // from such a file opened read-only (which is not migrated), they are what version 4 makes them.
    static constexpr std::string_view kOlderAnalysedMessage = "not measured: static analysis for ";
    bool isOlderAnalysed(ResultStatus status, std::string_view message) const {
        return schemaVersion < 4 && status == ResultStatus::Pruned &&
               message.substr(0, kOlderAnalysedMessage.size()) == kOlderAnalysedMessage;
    }

    ResultStatus readStatus(std::int64_t resultId, const std::string& text) const {
        const std::optional<ResultStatus> status = parseStatus(text);
        if (!status)
            unknownValue("results", resultId, "status", text, knownStatuses());
        return *status;
    }

    SessionInfo readSession(const Statement& s) const {
        SessionInfo info;
        info.id = s.integer(0);
        info.kernel = s.text(1);
        info.problemJson = s.text(2);
        info.problemHash = s.text(3);
        info.sourceHash = s.text(4);
        info.shapeIndex = s.optInteger(5);
        const auto shape = nlohmann::ordered_json::parse(s.text(6), nullptr, false);
        if (shape.is_object())
            for (auto it = shape.begin(); it != shape.end(); ++it)
                if (it.value().is_number_integer())
                    info.shape.emplace_back(it.key(), it.value().get<std::int64_t>());
        const auto size = nlohmann::json::parse(s.text(7), nullptr, false);
        if (size.is_array())
            for (const auto& v : size)
                if (v.is_number_integer())
                    info.problemSize.push_back(v.get<std::int64_t>());
        const auto params = nlohmann::json::parse(s.text(8), nullptr, false);
        if (params.is_array())
            for (const auto& v : params)
                if (v.is_string())
                    info.parameters.push_back(v.get<std::string>());
        info.backend = s.text(9);
        info.strategy = s.text(10);
        info.seed = static_cast<std::uint64_t>(s.integer(11));
        info.budget = s.text(12);
        info.deviceName = s.text(13);
        info.arch = s.text(14);
        info.provenanceJson = s.text(15);
        info.objectiveName = s.text(16);
        info.spaceSize = static_cast<std::uint64_t>(s.integer(17));
        info.startedAt = s.text(18);
        info.endedAt = s.text(19);
        const std::string state = s.text(20);
        if (const std::optional<SessionState> known = parseSessionState(state))
            info.state = *known;
        else
            unknownValue("sessions", info.id, "state", state, knownStates());
        info.message = s.text(21);
        info.toolVersion = s.text(22);
        return info;
    }

    static constexpr const char* kSessionColumns =
        "SELECT id, kernel, problem_json, problem_hash, source_hash, shape_index, shape, problem_size, parameters, "
        "backend, strategy, seed, budget, device_name, arch, provenance, objective_name, space_size, started_at, "
        "ended_at, state, message, tool_version FROM sessions ";

    std::vector<ResultRecord> readResults(std::int64_t sessionId) const {
        std::vector<ResultRecord> out;
        // Schema 1 has no interval columns: they read as NULL.
        const std::string sql =
            "SELECT r.id, c.space_index, c.config, r.status, r.time_ms, r.time_min_ms, r.time_max_ms, "
            "r.time_stdev_ms, r.samples, r.objective, r.compile_s, r.benchmark_s, r.verification_error, "
            "r.registers, r.barriers, r.stack_frame, r.spill_stores, r.spill_loads, r.shared_static, "
            "r.constant_bytes, r.block_size, r.shared_dynamic, r.occupancy, r.device, r.message, r.log, "
            "r.recorded_at, r.metrics, " +
            std::string(schemaVersion >= 2 ? "r.time_ci_low_ms, r.time_ci_high_ms" : "NULL, NULL") +
            " FROM results r JOIN configs c ON c.id = r.config_id WHERE r.session_id = ? ORDER BY r.id";
        Statement s(*this, sql.c_str());
        s.bind(1, sessionId);
        while (s.step()) {
            ResultRecord r;
            r.id = s.integer(0);
            r.sessionId = sessionId;
            if (const auto index = s.optInteger(1))
                r.spaceIndex = static_cast<std::uint64_t>(*index);
            std::optional<ConfigValues> config = parseConfigJson(s.text(2));
            if (!config)
                throw InputError(path.string(), "configs row of result " + std::to_string(r.id) + ", column config",
                                 "not a JSON object of parameter values: '" + s.text(2).substr(0, 80) + "'");
            r.config = std::move(*config);
            Measurement& m = r.measurement;
            m.status = readStatus(r.id, s.text(3));
            m.time.medianMs = s.optReal(4).value_or(0);
            m.time.minMs = s.optReal(5).value_or(0);
            m.time.maxMs = s.optReal(6).value_or(0);
            m.time.stdevMs = s.optReal(7).value_or(0);
            m.time.samples = static_cast<int>(s.integer(8));
            r.objective = s.optReal(9);
            m.compileSeconds = s.real(10);
            m.benchmarkSeconds = s.real(11);
            m.verificationError = s.optReal(12);
            if (!s.isNull(14)) { // barriers is set whenever static info was
                StaticInfo i;
                i.registers = static_cast<int>(s.optInteger(13).value_or(-1));
                i.barriers = static_cast<int>(s.integer(14));
                i.stackFrame = s.integer(15);
                i.spillStores = s.integer(16);
                i.spillLoads = s.integer(17);
                i.sharedStatic = s.integer(18);
                i.constantBytes = s.integer(19);
                m.staticInfo = i;
            }
            r.blockSize = s.optInteger(20);
            r.sharedDynamic = s.optInteger(21);
            r.occupancy = s.optReal(22);
            m.device = static_cast<int>(s.optInteger(23).value_or(-1));
            m.message = cleanMessage(s.text(24)); // a file written before messages were cleaned
            if (isOlderAnalysed(m.status, m.message))
                m.status = ResultStatus::Analysed;
            r.log = cleanMessage(s.text(25));
            r.recordedAt = s.text(26);
            m.time.ciLowMs = s.optReal(28).value_or(0);
            m.time.ciHighMs = s.optReal(29).value_or(0);
            const std::string metrics = s.text(27);
            if (metrics.size() > 2) {
                const auto parsed = nlohmann::ordered_json::parse(metrics, nullptr, false);
                if (parsed.is_object())
                    for (auto it = parsed.begin(); it != parsed.end(); ++it)
                        m.metrics.push_back({it.key(), it.value().is_number() ? it.value().get<double>() : NAN});
            }
            out.push_back(std::move(r));
        }
        return out;
    }
};

namespace {

[[noreturn]] void openError(const std::filesystem::path& path, const std::string& message) {
    throw InputError(path.string(), "", message);
}

int queryInt(const Connection& c, const char* sql) {
    Statement s(c, sql);
    return s.step() ? static_cast<int>(s.integer(0)) : 0;
}

constexpr char kInMemory[] = ":memory:";

// A file that is neither empty (nor unreadable: SQLite says why) nor begins with SQLite's header.
// One read: another process may be making the empty file a database meanwhile, and two reads
// could see it empty and then not empty.
bool foreignFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    char header[16] = {};
    in.read(header, sizeof header);
    return in.gcount() > 0 && (in.gcount() < 16 || std::memcmp(header, "SQLite format 3", 16) != 0);
}

// SQLite writes whole pages, so a file with its header but shorter than one page was cut short.
// SQLite itself would read such a file as an empty database (and a read-write open would then
// write a new schema over what is left); a longer one that lost pages it reports as damaged.
std::string truncation(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    unsigned char header[100] = {};
    in.read(reinterpret_cast<char*>(header), sizeof header);
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got < 16 || std::memcmp(header, "SQLite format 3", 16) != 0)
        return {};
    if (got < sizeof header)
        return "the file has " + std::to_string(got) + " bytes, less than SQLite's 100-byte header (truncated)";
    const unsigned raw = (unsigned(header[16]) << 8) | header[17];
    const std::uintmax_t pageSize = raw == 1 ? 65536 : raw;
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size < pageSize)
        return "the file has " + std::to_string(size) + " bytes, less than one of its " + std::to_string(pageSize) +
               "-byte pages (truncated)";
    return {};
}

namespace fs = std::filesystem;

std::string errnoText(int error) {
    return std::generic_category().message(error);
}

// The name of a file of this process's own beside `path`: a database being made, or a probe.
fs::path privateNameBeside(const fs::path& path, const char* what) {
    static std::atomic<unsigned> counter{0};
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    return dir / ("." + path.filename().string().substr(0, 200) + "." + what + "-" + std::to_string(::getpid()) + "-" +
                  std::to_string(counter.fetch_add(1)));
}

// Makes the file `name` exclusively (0644 less the umask, as SQLite makes a database); an error
// naming `path` and its folder when the folder does not take new files.
void createExclusively(const fs::path& path, const fs::path& name) {
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int error = errno;
        openError(path, "cannot create the database in " + name.parent_path().string() +
                            " (a read-only folder?): " + errnoText(error));
    }
    ::close(fd);
}

void removeWithJournals(const fs::path& file) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        ::unlink((file.string() + suffix).c_str());
}

// A new database appears whole: it is made under a name of this process's own beside `path` (its
// schema, application id and WAL mode), then linked to `path` only where nothing is there yet
// (link(2) is atomic and never replaces a file). Of processes that make one database at once, one
// file wins and the others open it; none sees a half-made one, and none deletes a file another
// holds (only its own, which no one else knows). Where the file system has no hard links, nothing
// is linked: connect() then lets SQLite make the file and the schema in a write transaction.
void createDatabaseFile(const fs::path& path, const StoreOptions& options) {
    const fs::path made = privateNameBeside(path, "new");
    createExclusively(path, made);
    try {
        ResultStore::Impl maker;
        maker.path = path; // what its messages name
        maker.busyTimeout = options.busyTimeout;
        maker.options = options;
        maker.connect(made.string());
        maker.closeConnection();
    } catch (...) {
        removeWithJournals(made);
        throw;
    }
    // The last connection closed removed the log files of `made`; had it not, they are its own.
    for (const char* suffix : {"-wal", "-shm", "-journal"})
        ::unlink((made.string() + suffix).c_str());
    ::link(made.c_str(), path.c_str()); // EEXIST: another process made it first; else see above
    ::unlink(made.c_str());
}

} // namespace

int ResultStore::Impl::readVersion() {
    // Reading the schema is the first access: a damaged or foreign file fails here.
    const int tables = queryInt(*this, "SELECT count(*) FROM sqlite_master");
    const int hasVersion =
        queryInt(*this, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
    const int appId = queryInt(*this, "PRAGMA application_id");
    if ((tables > 0 && !hasVersion) || (appId != 0 && appId != store::kApplicationId))
        openError(path, "a SQLite database, but not a Tilescope results database");
    const int version = hasVersion ? queryInt(*this, "SELECT max(version) FROM schema_version") : 0;
    if (version > kSchemaVersion)
        openError(path, "made by a newer Tilescope, schema " + std::to_string(version) + " > " +
                            std::to_string(kSchemaVersion) + ": the database has schema version " +
                            std::to_string(version) + ", newer than this Tilescope reads (up to " +
                            std::to_string(kSchemaVersion) +
                            "); open it with that version (its `export` writes T4 or CSV that this one reads)");
    return version;
}

void ResultStore::Impl::checkWhole() {
    // A page that no query has read yet can be damaged while the rest reads well: a tuner would add
    // its results to a file that export then refuses (or damage it further), so a file opened to
    // write is checked whole first. quick_check reads every page (not whether the indexes agree
    // with their tables). A value that breaks a CHECK or NOT NULL constraint is no damage: the
    // readers name its row.
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(8)", -1, &stmt, nullptr);
    std::vector<std::string> found;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        if ((rc = sqlite3_step(stmt)) != SQLITE_ROW)
            break;
        const auto* text = sqlite3_column_text(stmt, 0);
        std::string line = text ? reinterpret_cast<const char*>(text) : "";
        if (line == "ok" || line.rfind("CHECK constraint failed", 0) == 0 || line.rfind("NULL value in", 0) == 0)
            continue;
        // Lines as "*** in database main ***\nPage 225: btreeInitPage() returns error code 11".
        if (line.rfind("*** in database main ***", 0) == 0)
            line.erase(0, line.find('\n') == std::string::npos ? line.size() : line.find('\n') + 1);
        if (!line.empty())
            found.push_back(line);
    }
    const std::string why = rc == SQLITE_DONE ? std::string() : sqlite3_errmsg(db);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE && (rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB)
        sqliteFailure(*this, rc, why); // locked, unreadable: not a verdict on the file
    if (rc != SQLITE_DONE && found.empty())
        found.push_back(why);
    if (found.empty())
        return;
    std::string where;
    for (std::size_t i = 0; i < found.size() && i < 3; ++i)
        where += (i ? "; " : "") + found[i];
    openError(path, "the database is damaged (" + where +
                        "); Tilescope writes nothing to a damaged database (`sqlite3 FILE .recover` may save what "
                        "is left, into a new file)");
}

void ResultStore::Impl::enterWal() {
    // Once per file (the mode is kept in it). The switch takes the file's exclusive lock; SQLite
    // answers a connection that would wait for it while holding a read lock with SQLITE_BUSY at
    // once (waiting could deadlock), so processes that open a new file together take turns here.
    std::string current;
    {
        Statement mode(*this, "PRAGMA journal_mode");
        current = mode.step() ? mode.text(0) : std::string();
    }
    if (current == "wal" || current == "memory")
        return;
    const auto deadline = Clock::now() + options.busyTimeout;
    for (;;) {
        char* error = nullptr;
        const int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, &error);
        const std::string message = error ? error : sqlite3_errmsg(db);
        sqlite3_free(error);
        if (rc == SQLITE_OK)
            return;
        if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) || Clock::now() >= deadline)
            sqliteFailure(*this, rc, message);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void ResultStore::Impl::migrate() {
    // One writer at a time holds the IMMEDIATE transaction, and the version is read again inside it:
    // of processes that found the file new (or old) together, the first makes (or migrates) the
    // schema and the others find it done.
    exec("BEGIN IMMEDIATE");
    try {
        const int version = readVersion();
        for (const store::Migration& m : store::migrations()) {
            if (m.version <= version)
                continue;
            exec(m.sql);
            Statement mark(*this, "INSERT INTO schema_version (version, applied_at, tool_version) VALUES (?, ?, ?)");
            mark.bind(1, std::int64_t(m.version)).bind(2, nowIso8601()).bind(3, std::string(TILESCOPE_VERSION));
            mark.run();
        }
        if (version < kSchemaVersion)
            exec(("PRAGMA application_id = " + std::to_string(store::kApplicationId)).c_str());
        exec("COMMIT");
    } catch (...) {
        sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

void ResultStore::Impl::connect(const std::string& file) {
    const int flags =
        (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX;
    const int rc = sqlite3_open_v2(file.c_str(), &db, flags, nullptr);
    if (rc != SQLITE_OK) {
        const std::string why = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        sqlite3_close_v2(db);
        db = nullptr;
        openError(path, readOnly ? "cannot open the database: " + why
                                 : "cannot open the database for writing (a read-only file or folder?): " + why);
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, static_cast<int>(options.busyTimeout.count()));
    if (!readOnly && sqlite3_db_readonly(db, "main") == 1)
        openError(path, "the database is read-only (file permissions); tuning and importing need to write it");

    try {
        const int version = readVersion();
        if (readOnly) {
            if (version == 0)
                openError(path, "an empty database: it holds no Tilescope schema yet");
            // Later versions only add columns: an older file reads, those columns as absent.
        } else {
            if (file != kInMemory)
                checkWhole();
            enterWal();
            exec("PRAGMA synchronous = NORMAL"); // WAL + NORMAL: durable across a killed process
            // A bulk import's transaction spills to the WAL when the page cache fills: 64 MB keeps
            // 100,000 results in memory until the commit.
            exec("PRAGMA cache_size = -65536");
            if (version < kSchemaVersion)
                migrate();
            prepareWriters();
        }
        // Foreign keys stay off (SQLite's default): see schema.cpp.
        schemaVersion = readOnly ? version : kSchemaVersion;
    } catch (const InputError&) {
        throw;
    } catch (const std::exception& e) {
        const int code = sqlite3_errcode(db) & 0xff;
        if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
            openError(path, "not a SQLite database, or a damaged one: " + std::string(sqlite3_errmsg(db)));
        if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN || code == SQLITE_PERM || code == SQLITE_AUTH)
            openError(path, "cannot write the database or its journal (a read-only file or folder?): " +
                                std::string(sqlite3_errmsg(db)));
        if (code == SQLITE_BUSY)
            openError(path, "the database is locked by another process");
        openError(path, std::string("cannot open the database: ") + e.what());
    }
}

void ResultStore::Impl::materialize() {
    closeConnection(); // the empty stand-in: nothing was written to it
    pending = false;
    try {
        std::error_code ec;
        if (!fs::exists(path, ec))
            createDatabaseFile(path, options);
        connect(path.string());
    } catch (...) {
        // The store stays usable as it was: empty, the file still to be made.
        closeConnection();
        pending = true;
        connect(kInMemory);
        throw;
    }
}

bool ResultStore::isDatabaseFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    char header[16] = {};
    in.read(header, sizeof header);
    return in.gcount() == 16 && std::memcmp(header, "SQLite format 3", 16) == 0;
}

ResultStore ResultStore::openInMemory() {
    return open(kInMemory, StoreMode::ReadWrite);
}

ResultStore ResultStore::open(const std::filesystem::path& path, StoreMode mode, const StoreOptions& options) {
    const bool readOnly = mode == StoreMode::ReadOnly;
    std::error_code ec;
    const bool inMemory = path == kInMemory;
    if (path.empty())
        openError(path, "no database path given");
    if (fs::is_directory(path, ec))
        openError(path, "is a folder, not a database file");
    const bool exists = !inMemory && fs::exists(path, ec);
    if (inMemory) {
        // nothing on disk to check
    } else if (!exists) {
        if (readOnly)
            openError(path, "no such database (check the path; `tilescope-cli tune ... --db FILE` creates one)");
        const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
        if (fs::exists(parent, ec) && !fs::is_directory(parent, ec))
            openError(path, "cannot create the database: " + parent.string() + " is a file, not a folder");
        if (!fs::is_directory(parent, ec))
            openError(path, "cannot create the database: the folder " + parent.string() + " does not exist");
    } else if (foreignFile(path)) {
        // (an empty file becomes a database; one it cannot read, SQLite reports below)
        openError(path, "not a SQLite database (a Tilescope results database is a SQLite file)");
    } else if (const std::string cut = truncation(path); !cut.empty()) {
        openError(path, "the database is damaged: " + cut);
    }

    auto impl = std::make_unique<Impl>();
    impl->path = path;
    impl->busyTimeout = options.busyTimeout;
    impl->readOnly = readOnly;
    impl->options = options;
    if (!inMemory && !exists && !readOnly) {
        if (options.createOnFirstWrite) {
            // Whether the folder takes the file is known now, before any work: a probe of this
            // process's own, made and removed.
            const fs::path probe = privateNameBeside(path, "probe");
            createExclusively(path, probe);
            ::unlink(probe.c_str());
            impl->pending = true;
            impl->connect(kInMemory);
            return ResultStore(std::move(impl));
        }
        createDatabaseFile(path, options);
    }
    impl->connect(path.string());
    return ResultStore(std::move(impl));
}

ResultStore::ResultStore(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl)) {}
ResultStore::ResultStore(ResultStore&&) noexcept = default;
ResultStore& ResultStore::operator=(ResultStore&&) noexcept = default;
ResultStore::~ResultStore() = default;

const std::filesystem::path& ResultStore::path() const {
    return m_impl->path;
}
bool ResultStore::readOnly() const {
    return m_impl->readOnly;
}
int ResultStore::schemaVersion() const {
    return m_impl->schemaVersion;
}

std::int64_t ResultStore::createSession(const SessionInfo& info) {
    m_impl->checkThread();
    m_impl->checkWritable();
    m_impl->commitNow();
    Statement s(*m_impl,
                "INSERT INTO sessions (kernel, problem_json, problem_hash, source_hash, shape_index, shape, "
                "problem_size, parameters, backend, strategy, seed, budget, device_name, arch, provenance, "
                "objective_name, space_size, started_at, ended_at, state, message, tool_version) VALUES (?, ?, ?, ?, "
                "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, info.kernel).bind(2, info.problemJson).bind(3, info.problemHash).bind(4, info.sourceHash);
    s.bind(5, info.shapeIndex).bind(6, shapeJson(info)).bind(7, nlohmann::json(info.problemSize).dump());
    s.bind(8, nlohmann::json(info.parameters).dump()).bind(9, info.backend).bind(10, info.strategy);
    s.bind(11, static_cast<std::int64_t>(info.seed)).bind(12, info.budget).bind(13, info.deviceName);
    s.bind(14, info.arch).bind(15, info.provenanceJson.empty() ? std::string("{}") : info.provenanceJson);
    s.bind(16, info.objectiveName).bind(17, static_cast<std::int64_t>(info.spaceSize));
    s.bind(18, info.startedAt.empty() ? nowIso8601() : info.startedAt);
    if (info.endedAt.empty())
        s.bindNull(19);
    else
        s.bind(19, info.endedAt);
    s.bind(20, std::string(sessionStateName(info.state))).bind(21, info.message).bind(22, info.toolVersion);
    s.run();
    return sqlite3_last_insert_rowid(m_impl->db);
}

void ResultStore::setSessionState(std::int64_t sessionId, SessionState state, const std::string& message) {
    m_impl->checkThread();
    m_impl->checkWritable();
    m_impl->commitNow();
    Statement s(*m_impl, "UPDATE sessions SET state = ?, ended_at = ?, message = ? WHERE id = ?");
    s.bind(1, std::string(sessionStateName(state)));
    if (state == SessionState::Running)
        s.bindNull(2);
    else
        s.bind(2, nowIso8601());
    s.bind(3, message).bind(4, sessionId);
    s.run();
}

void ResultStore::setSessionProvenance(std::int64_t sessionId, const std::string& deviceName, const std::string& arch,
                                       const std::string& provenanceJson) {
    m_impl->checkThread();
    m_impl->checkWritable();
    m_impl->commitNow();
    Statement s(*m_impl, "UPDATE sessions SET device_name = ?, arch = ?, provenance = ? WHERE id = ?");
    s.bind(1, deviceName).bind(2, arch).bind(3, provenanceJson.empty() ? std::string("{}") : provenanceJson);
    s.bind(4, sessionId).run();
}

void ResultStore::addSessionFiles(std::int64_t sessionId, const std::vector<ProblemFile>& files) {
    m_impl->checkThread();
    m_impl->checkWritable();
    m_impl->commitNow();
    m_impl->beginIfNeeded();
    Statement content(*m_impl, "INSERT INTO files (hash, size, data) VALUES (?, ?, ?) ON CONFLICT (hash) DO UPDATE "
                               "SET data = excluded.data WHERE files.data IS NULL AND excluded.data IS NOT NULL");
    Statement place(*m_impl, "INSERT OR REPLACE INTO session_files (session_id, role, path, hash) VALUES (?, ?, ?, ?)");
    for (const ProblemFile& f : files) {
        content.bind(1, f.hash).bind(2, static_cast<std::int64_t>(f.size));
        if (f.data)
            content.bindBlob(3, *f.data);
        else
            content.bindNull(3);
        content.run();
        place.bind(1, sessionId).bind(2, std::string(problemFileRoleName(f.role))).bind(3, f.path).bind(4, f.hash);
        place.run();
    }
    m_impl->commitNow();
}

std::vector<ProblemFile> ResultStore::sessionFiles(std::int64_t sessionId, bool withData) const {
    m_impl->checkThread();
    std::vector<ProblemFile> out;
    if (m_impl->schemaVersion < 5)
        return out;
    Statement s(*m_impl, withData ? "SELECT p.role, p.path, p.hash, f.size, f.data FROM session_files p JOIN files f "
                                    "ON f.hash = p.hash WHERE p.session_id = ? ORDER BY p.path"
                                  : "SELECT p.role, p.path, p.hash, f.size, NULL FROM session_files p JOIN files f "
                                    "ON f.hash = p.hash WHERE p.session_id = ? ORDER BY p.path");
    s.bind(1, sessionId);
    while (s.step()) {
        ProblemFile f;
        const std::string role = s.text(0);
        f.role = role == "header" ? ProblemFile::Role::Header
                 : role == "data" ? ProblemFile::Role::Data
                                  : ProblemFile::Role::Kernel;
        f.path = s.text(1);
        f.hash = s.text(2);
        f.size = static_cast<std::uint64_t>(s.integer(3));
        if (!s.isNull(4))
            f.data = s.blob(4);
        out.push_back(std::move(f));
    }
    return out;
}

void ResultStore::deleteSession(std::int64_t sessionId) {
    m_impl->checkThread();
    m_impl->checkWritable();
    m_impl->beginIfNeeded();
    for (const char* sql : {"DELETE FROM results WHERE session_id = ?", "DELETE FROM configs WHERE session_id = ?",
                            "DELETE FROM session_files WHERE session_id = ?", "DELETE FROM sessions WHERE id = ?"}) {
        Statement s(*m_impl, sql);
        s.bind(1, sessionId).run();
    }
    // Contents no other session keeps.
    Statement(*m_impl, "DELETE FROM files WHERE hash NOT IN (SELECT hash FROM session_files)").run();
    m_impl->commitNow();
    m_impl->configIds.erase(sessionId);
}

std::vector<SessionInfo> ResultStore::sessions() const {
    m_impl->checkThread();
    Statement s(*m_impl, (std::string(Impl::kSessionColumns) + "ORDER BY id").c_str());
    std::vector<SessionInfo> out;
    while (s.step())
        out.push_back(m_impl->readSession(s));
    return out;
}

std::optional<SessionInfo> ResultStore::session(std::int64_t sessionId) const {
    m_impl->checkThread();
    Statement s(*m_impl, (std::string(Impl::kSessionColumns) + "WHERE id = ?").c_str());
    s.bind(1, sessionId);
    if (!s.step())
        return std::nullopt;
    return m_impl->readSession(s);
}

std::optional<SessionInfo> ResultStore::findResumable(const SessionInfo& like) const {
    m_impl->checkThread();
    Statement s(*m_impl, (std::string(Impl::kSessionColumns) +
                          "WHERE problem_hash = ? AND shape_index IS ? AND backend = ? AND strategy = ? AND "
                          "seed = ? AND state != 'imported' ORDER BY id DESC LIMIT 1")
                             .c_str());
    s.bind(1, like.problemHash).bind(2, like.shapeIndex).bind(3, like.backend).bind(4, like.strategy);
    s.bind(5, static_cast<std::int64_t>(like.seed));
    if (!s.step())
        return std::nullopt;
    return m_impl->readSession(s);
}

std::int64_t ResultStore::append(std::int64_t sessionId, const ResultRecord& record) {
    m_impl->checkThread();
    m_impl->checkWritable();
    m_impl->beginIfNeeded();
    const std::int64_t id = m_impl->insert(sessionId, record, record.recordedAt.empty() ? nowIso8601() : "");
    if (Clock::now() - m_impl->lastCommit >= m_impl->options.commitInterval)
        m_impl->commitNow();
    return id;
}

void ResultStore::updateTiming(std::int64_t resultId, const TimingStats& time, std::optional<double> objective,
                               double addedBenchmarkSeconds) {
    m_impl->checkThread();
    m_impl->checkWritable();
    m_impl->beginIfNeeded();
    Statement s(*m_impl, "UPDATE results SET time_ms = ?, time_min_ms = ?, time_max_ms = ?, time_stdev_ms = ?, "
                         "samples = ?, objective = ?, benchmark_s = benchmark_s + ?, time_ci_low_ms = ?, "
                         "time_ci_high_ms = ? WHERE id = ?");
    s.bind(1, time.medianMs).bind(2, time.minMs).bind(3, time.maxMs).bind(4, time.stdevMs);
    s.bind(5, static_cast<std::int64_t>(time.samples)).bind(6, objective).bind(7, addedBenchmarkSeconds);
    if (time.hasInterval())
        s.bind(8, time.ciLowMs).bind(9, time.ciHighMs);
    else
        s.bindNull(8).bindNull(9);
    s.bind(10, resultId).run();
    if (sqlite3_changes(m_impl->db) != 1)
        throw std::runtime_error(m_impl->path.string() + ": no result " + std::to_string(resultId) + " to update");
    m_impl->commitNow();
}

void ResultStore::updateVerdict(std::int64_t resultId, const Measurement& m, std::optional<double> objective,
                                double addedBenchmarkSeconds) {
    m_impl->checkThread();
    m_impl->checkWritable();
    m_impl->beginIfNeeded();
    Statement s(*m_impl, "UPDATE results SET status = ?, time_ms = ?, time_min_ms = ?, time_max_ms = ?, "
                         "time_stdev_ms = ?, samples = ?, objective = ?, benchmark_s = benchmark_s + ?, "
                         "verification_error = ?, metrics = ?, message = ?, time_ci_low_ms = ?, time_ci_high_ms = ? "
                         "WHERE id = ?");
    const bool timed = m.time.samples > 0 || m.time.medianMs > 0;
    s.bindView(1, statusName(m.status));
    if (timed)
        s.bind(2, m.time.medianMs).bind(3, m.time.minMs).bind(4, m.time.maxMs).bind(5, m.time.stdevMs);
    else
        s.bindNull(2).bindNull(3).bindNull(4).bindNull(5);
    s.bind(6, std::int64_t(m.time.samples)).bind(7, objective).bind(8, addedBenchmarkSeconds);
    s.bind(9, m.verificationError);
    const std::string metrics = Impl::metricsObject(m.metrics);
    s.bindView(10, metrics).bind(11, cleanMessage(m.message));
    if (timed && m.time.hasInterval())
        s.bind(12, m.time.ciLowMs).bind(13, m.time.ciHighMs);
    else
        s.bindNull(12).bindNull(13);
    s.bind(14, resultId).run();
    if (sqlite3_changes(m_impl->db) != 1)
        throw std::runtime_error(m_impl->path.string() + ": no result " + std::to_string(resultId) + " to update");
    m_impl->commitNow();
}

void ResultStore::appendMany(std::int64_t sessionId, std::span<const ResultRecord> records) {
    m_impl->checkThread();
    m_impl->checkWritable();
    m_impl->beginIfNeeded();
    const std::string now = nowIso8601();
    for (const ResultRecord& r : records)
        m_impl->insert(sessionId, r, now);
    m_impl->commitNow();
}

void ResultStore::flush() {
    m_impl->checkThread();
    if (!m_impl->readOnly)
        m_impl->commitNow();
}

bool ResultStore::commitIfDue() {
    m_impl->checkThread();
    if (!m_impl->inTransaction || Clock::now() - m_impl->lastCommit < m_impl->options.commitInterval)
        return false;
    m_impl->commitNow();
    return true;
}

std::vector<ResultRecord> ResultStore::results(std::int64_t sessionId, bool rankedOrder, std::size_t limit,
                                               StaticRank by) const {
    m_impl->checkThread();
    std::vector<ResultRecord> out = m_impl->readResults(sessionId);
    if (rankedOrder)
        out = ranked(std::move(out), by);
    if (limit > 0 && out.size() > limit)
        out.resize(limit);
    return out;
}

std::uint64_t ResultStore::resultCount(std::int64_t sessionId) const {
    m_impl->checkThread();
    Statement s(*m_impl, "SELECT count(*) FROM results WHERE session_id = ?");
    s.bind(1, sessionId);
    return s.step() ? static_cast<std::uint64_t>(s.integer(0)) : 0;
}

StatusCounts ResultStore::statusCounts(std::int64_t sessionId) const {
    m_impl->checkThread();
    // An older file read-only: its analysed results counted as version 4 counts them (readResults).
    Statement s(*m_impl, m_impl->schemaVersion < 4
                             ? "SELECT CASE WHEN status = 'pruned' AND substr(message, 1, 34) = 'not measured: static "
                               "analysis for ' THEN 'analysed' ELSE status END AS s, count(*), min(id) FROM results "
                               "WHERE session_id = ? GROUP BY s"
                             : "SELECT status, count(*), min(id) FROM results WHERE session_id = ? GROUP BY status");
    s.bind(1, sessionId);
    StatusCounts counts;
    while (s.step()) {
        const ResultStatus status = m_impl->readStatus(s.integer(2), s.text(0));
        const auto n = static_cast<std::uint64_t>(s.integer(1));
        counts.byStatus[static_cast<std::size_t>(status)] += n;
        counts.total += n;
    }
    return counts;
}

std::optional<ResultRecord> ResultStore::best(std::int64_t sessionId, StaticRank by) const {
    return bestOf(results(sessionId), by);
}

SessionData ResultStore::load(std::int64_t sessionId) const {
    SessionData data;
    const auto info = session(sessionId);
    if (!info)
        throw InputError(path().string(), "", "no session " + std::to_string(sessionId) + " in the database");
    data.info = *info;
    data.results = results(sessionId);
    return data;
}

} // namespace tilescope
