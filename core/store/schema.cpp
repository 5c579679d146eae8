#include "store/schema.h"

#include <array>

namespace tilescope::store {

namespace {

// Version 1. Times are milliseconds (time_*), costs seconds (*_s); JSON columns hold compact
// JSON that SQLite's json_extract() reads. NULL means "not known" (not timed, not compiled).
// Foreign keys are declared for readers and tools; Tilescope keeps them whole itself and does not
// turn on their enforcement (it would cost four B-tree lookups per result).
constexpr const char* kVersion1 = R"sql(
CREATE TABLE schema_version (
    version      INTEGER PRIMARY KEY,
    applied_at   TEXT NOT NULL,
    tool_version TEXT NOT NULL
);

CREATE TABLE sessions (
    id             INTEGER PRIMARY KEY,
    kernel         TEXT NOT NULL DEFAULT '',
    problem_json   TEXT NOT NULL DEFAULT '',
    problem_hash   TEXT NOT NULL DEFAULT '',
    source_hash    TEXT NOT NULL DEFAULT '',
    shape_index    INTEGER,
    shape          TEXT NOT NULL DEFAULT '{}',
    problem_size   TEXT NOT NULL DEFAULT '[]',
    parameters     TEXT NOT NULL DEFAULT '[]',
    backend        TEXT NOT NULL DEFAULT '',
    strategy       TEXT NOT NULL DEFAULT '',
    seed           INTEGER NOT NULL DEFAULT 0,
    budget         TEXT NOT NULL DEFAULT '',
    device_name    TEXT NOT NULL DEFAULT '',
    arch           TEXT NOT NULL DEFAULT '',
    provenance     TEXT NOT NULL DEFAULT '{}',
    objective_name TEXT NOT NULL DEFAULT '',
    space_size     INTEGER NOT NULL DEFAULT 0,
    started_at     TEXT NOT NULL,
    ended_at       TEXT,
    state          TEXT NOT NULL CHECK (state = 'running' OR state = 'finished' OR state = 'cancelled' OR
                                        state = 'failed' OR state = 'imported'),
    message        TEXT NOT NULL DEFAULT '',
    tool_version   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_by_identity ON sessions (problem_hash, shape_index, backend, strategy, seed);

-- One row per config per session; Tilescope keeps (session_id, key) unique itself (a unique index
-- would cost a quarter of a bulk import's time, and one tuner drives a session at a time).
CREATE TABLE configs (
    id          INTEGER PRIMARY KEY,
    session_id  INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    space_index INTEGER,
    key         TEXT NOT NULL,
    config      TEXT NOT NULL
);

CREATE TABLE results (
    id                 INTEGER PRIMARY KEY,
    session_id         INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    config_id          INTEGER NOT NULL REFERENCES configs (id) ON DELETE CASCADE,
    -- An OR chain, not IN (...): SQLite builds a temporary index for an IN list on every insert.
    status             TEXT NOT NULL CHECK (status = 'ok' OR status = 'compile_error' OR status = 'launch_error' OR
                                            status = 'wrong_result' OR status = 'crashed' OR status = 'timeout' OR
                                            status = 'pruned' OR status = 'skipped'),
    time_ms            REAL,
    time_min_ms        REAL,
    time_max_ms        REAL,
    time_stdev_ms      REAL,
    samples            INTEGER NOT NULL DEFAULT 0,
    objective          REAL,
    compile_s          REAL NOT NULL DEFAULT 0,
    benchmark_s        REAL NOT NULL DEFAULT 0,
    verification_error REAL,
    registers          INTEGER,
    barriers           INTEGER,
    stack_frame        INTEGER,
    spill_stores       INTEGER,
    spill_loads        INTEGER,
    shared_static      INTEGER,
    constant_bytes     INTEGER,
    block_size         INTEGER,
    shared_dynamic     INTEGER,
    occupancy          REAL,
    device             INTEGER,
    metrics            TEXT NOT NULL DEFAULT '{}',
    message            TEXT NOT NULL DEFAULT '',
    log                TEXT NOT NULL DEFAULT '',
    recorded_at        TEXT NOT NULL
);
CREATE INDEX results_by_session ON results (session_id, status);

-- Metrics as name/value rows. They are stored as one JSON object per result (results.metrics):
-- a row per metric would cost a B-tree insert each, and the default CUPTI set has seven.
CREATE VIEW metrics AS
    SELECT r.id AS result_id, r.session_id, m.key AS name, m.value AS value
    FROM results r, json_each(r.metrics) m;

CREATE VIEW result_view AS
    SELECT r.*, c.space_index, c.key, c.config, s.kernel, s.shape, s.device_name, s.arch
    FROM results r JOIN configs c ON c.id = r.config_id JOIN sessions s ON s.id = r.session_id;
)sql";

// Version 2: the median's 95 % confidence interval of each timed result (NULL: not known).
constexpr const char* kVersion2 = R"sql(
ALTER TABLE results ADD COLUMN time_ci_low_ms REAL;
ALTER TABLE results ADD COLUMN time_ci_high_ms REAL;
)sql";

// Version 3: the status `implausible` (a time below what the config's outputs take to write).
// SQLite cannot change a CHECK constraint in place, so the results table is made again with the
// new one and its rows copied, in the same column order (version 2's columns came last); the
// views that read it and its index are made again too.
constexpr const char* kVersion3 = R"sql(
DROP VIEW metrics;
DROP VIEW result_view;
CREATE TABLE results_v3 (
    id                 INTEGER PRIMARY KEY,
    session_id         INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    config_id          INTEGER NOT NULL REFERENCES configs (id) ON DELETE CASCADE,
    status             TEXT NOT NULL CHECK (status = 'ok' OR status = 'compile_error' OR status = 'launch_error' OR
                                            status = 'wrong_result' OR status = 'crashed' OR status = 'timeout' OR
                                            status = 'pruned' OR status = 'skipped' OR status = 'implausible'),
    time_ms            REAL,
    time_min_ms        REAL,
    time_max_ms        REAL,
    time_stdev_ms      REAL,
    samples            INTEGER NOT NULL DEFAULT 0,
    objective          REAL,
    compile_s          REAL NOT NULL DEFAULT 0,
    benchmark_s        REAL NOT NULL DEFAULT 0,
    verification_error REAL,
    registers          INTEGER,
    barriers           INTEGER,
    stack_frame        INTEGER,
    spill_stores       INTEGER,
    spill_loads        INTEGER,
    shared_static      INTEGER,
    constant_bytes     INTEGER,
    block_size         INTEGER,
    shared_dynamic     INTEGER,
    occupancy          REAL,
    device             INTEGER,
    metrics            TEXT NOT NULL DEFAULT '{}',
    message            TEXT NOT NULL DEFAULT '',
    log                TEXT NOT NULL DEFAULT '',
    recorded_at        TEXT NOT NULL,
    time_ci_low_ms     REAL,
    time_ci_high_ms    REAL
);
INSERT INTO results_v3 SELECT * FROM results;
DROP TABLE results;
ALTER TABLE results_v3 RENAME TO results;
CREATE INDEX results_by_session ON results (session_id, status);

CREATE VIEW metrics AS
    SELECT r.id AS result_id, r.session_id, m.key AS name, m.value AS value
    FROM results r, json_each(r.metrics) m;

CREATE VIEW result_view AS
    SELECT r.*, c.space_index, c.key, c.config, s.kernel, s.shape, s.device_name, s.arch
    FROM results r JOIN configs c ON c.id = r.config_id JOIN sessions s ON s.id = r.session_id;
)sql";

// Version 4: the status `analysed` (compiled and analysed for an arch, never run: the analysis
// backend's results, which earlier versions stored as `pruned` with the message "not measured:
// static analysis for ARCH"; those become `analysed`). The table is made again as for version 3.
constexpr const char* kVersion4 = R"sql(
DROP VIEW metrics;
DROP VIEW result_view;
CREATE TABLE results_v4 (
    id                 INTEGER PRIMARY KEY,
    session_id         INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    config_id          INTEGER NOT NULL REFERENCES configs (id) ON DELETE CASCADE,
    status             TEXT NOT NULL CHECK (status = 'ok' OR status = 'compile_error' OR status = 'launch_error' OR
                                            status = 'wrong_result' OR status = 'crashed' OR status = 'timeout' OR
                                            status = 'pruned' OR status = 'skipped' OR status = 'implausible' OR
                                            status = 'analysed'),
    time_ms            REAL,
    time_min_ms        REAL,
    time_max_ms        REAL,
    time_stdev_ms      REAL,
    samples            INTEGER NOT NULL DEFAULT 0,
    objective          REAL,
    compile_s          REAL NOT NULL DEFAULT 0,
    benchmark_s        REAL NOT NULL DEFAULT 0,
    verification_error REAL,
    registers          INTEGER,
    barriers           INTEGER,
    stack_frame        INTEGER,
    spill_stores       INTEGER,
    spill_loads        INTEGER,
    shared_static      INTEGER,
    constant_bytes     INTEGER,
    block_size         INTEGER,
    shared_dynamic     INTEGER,
    occupancy          REAL,
    device             INTEGER,
    metrics            TEXT NOT NULL DEFAULT '{}',
    message            TEXT NOT NULL DEFAULT '',
    log                TEXT NOT NULL DEFAULT '',
    recorded_at        TEXT NOT NULL,
    time_ci_low_ms     REAL,
    time_ci_high_ms    REAL
);
INSERT INTO results_v4 SELECT * FROM results;
DROP TABLE results;
ALTER TABLE results_v4 RENAME TO results;
CREATE INDEX results_by_session ON results (session_id, status);

-- What the analysis backend stored as pruned with this message was compiled and analysed, not
-- pruned: it becomes what it was.
UPDATE results SET status = 'analysed'
    WHERE status = 'pruned' AND substr(message, 1, 34) = 'not measured: static analysis for ';

CREATE VIEW metrics AS
    SELECT r.id AS result_id, r.session_id, m.key AS name, m.value AS value
    FROM results r, json_each(r.metrics) m;

CREATE VIEW result_view AS
    SELECT r.*, c.space_index, c.key, c.config, s.kernel, s.shape, s.device_name, s.arch
    FROM results r JOIN configs c ON c.id = r.config_id JOIN sessions s ON s.id = r.session_id;
)sql";

// Version 5: the files a session's problem was tuned with (its kernel source, the headers it
// included, its BinaryRaw data), so that the database alone can show, count and continue it.
// Contents are kept once whatever the sessions that share them (by SHA-256); a file over the
// size limit keeps its hash and size only (data NULL).
constexpr const char* kVersion5 = R"sql(
CREATE TABLE files (
    hash TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB
);
CREATE TABLE session_files (
    session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role = 'kernel' OR role = 'header' OR role = 'data'),
    path       TEXT NOT NULL,
    hash       TEXT NOT NULL REFERENCES files (hash),
    PRIMARY KEY (session_id, path)
);
)sql";

constexpr std::array<Migration, 5> kMigrations = {{
    {1, kVersion1},
    {2, kVersion2},
    {3, kVersion3},
    {4, kVersion4},
    {5, kVersion5},
}};

} // namespace

std::span<const Migration> migrations() {
    return kMigrations;
}

} // namespace tilescope::store
