-- 0001: the initial schema.
--
-- Conventions, so every query reads the same way:
--   * Times are INTEGER Unix nanoseconds in UTC; NULL is Go's zero time.
--     (0 is not used for "unset": it is a real instant, the Unix epoch.)
--   * Sensor data and details are canonical JSON (sorted keys) in TEXT;
--     NULL is an empty object / map.
--   * Tables are STRICT so a value of the wrong type is an error, not a
--     silent conversion.
--   * Keyed tables are WITHOUT ROWID: every lookup is by the natural key,
--     so storing rows in key order saves the second b-tree.

CREATE TABLE pipelines (
    id              TEXT    NOT NULL PRIMARY KEY,
    version         INTEGER NOT NULL,
    config_version  INTEGER NOT NULL,
    doc             BLOB    NOT NULL,
    hash            TEXT    NOT NULL,
    file            TEXT    NOT NULL,
    first_loaded_at INTEGER,
    updated_at      INTEGER,
    paused          INTEGER NOT NULL,
    paused_until    INTEGER
) STRICT, WITHOUT ROWID;

CREATE TABLE sensors (
    pipeline_id TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    data        TEXT,
    changed_at  INTEGER,
    written_at  INTEGER,
    PRIMARY KEY (pipeline_id, key)
) STRICT, WITHOUT ROWID;

-- The primary key is the per-period trigger lock: creating a run is an
-- INSERT, and a second INSERT of the same key fails with a constraint error
-- that the store reports as ErrConflict.
CREATE TABLE runs (
    pipeline_id           TEXT    NOT NULL,
    schedule_id           TEXT    NOT NULL,
    period                TEXT    NOT NULL,
    version               INTEGER NOT NULL,
    state                 TEXT    NOT NULL,
    -- 1 while state is not terminal. Written from run.State.Terminal() so
    -- the rule of which states are terminal lives in Go, once.
    active                INTEGER NOT NULL,
    outcome               TEXT    NOT NULL,
    cause                 TEXT    NOT NULL,
    generation            INTEGER NOT NULL,
    attempt               INTEGER NOT NULL,
    created_at            INTEGER,
    updated_at            INTEGER,
    state_since           INTEGER,
    expires_at            INTEGER,
    eval_started_at       INTEGER,
    eval_deadline         INTEGER,
    trigger_errors        INTEGER NOT NULL,
    trigger_in_flight     INTEGER NOT NULL,
    job_run_id            TEXT    NOT NULL,
    job_meta              TEXT,
    job_started_at        INTEGER,
    poll_deadline         INTEGER,
    ended_at              INTEGER,
    -- NULL category: no failure recorded (run.Run.LastFailure is nil).
    last_failure_category TEXT,
    last_failure_message  TEXT,
    config_version        INTEGER NOT NULL,
    PRIMARY KEY (pipeline_id, schedule_id, period)
) STRICT, WITHOUT ROWID;

-- RunList's usual questions: a pipeline's runs newest period first, and the
-- runs still in flight (a small set the watchdog scans on every pass).
CREATE INDEX runs_pipeline_period ON runs (pipeline_id, period DESC);
CREATE INDEX runs_active ON runs (pipeline_id, period) WHERE active = 1;

CREATE TABLE ledger (
    pipeline_id TEXT    NOT NULL,
    schedule_id TEXT    NOT NULL,
    period      TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    reason      TEXT    NOT NULL,
    source      TEXT    NOT NULL,
    at          INTEGER,
    PRIMARY KEY (pipeline_id, schedule_id, period, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE baselines (
    pipeline_id TEXT NOT NULL,
    schedule_id TEXT NOT NULL,
    period      TEXT NOT NULL,
    sensors     TEXT,
    captured_at INTEGER,
    PRIMARY KEY (pipeline_id, schedule_id, period)
) STRICT, WITHOUT ROWID;

CREATE TABLE markers (
    pipeline_id TEXT NOT NULL,
    schedule_id TEXT NOT NULL,
    period      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    at          INTEGER,
    detail      TEXT,
    PRIMARY KEY (pipeline_id, schedule_id, period, kind)
) STRICT, WITHOUT ROWID;

CREATE INDEX markers_pipeline_kind ON markers (pipeline_id, kind);

CREATE TABLE timers (
    key         TEXT    NOT NULL PRIMARY KEY,
    kind        TEXT    NOT NULL,
    pipeline_id TEXT    NOT NULL,
    schedule_id TEXT    NOT NULL,
    period      TEXT    NOT NULL,
    due_at      INTEGER NOT NULL,
    detail      TEXT
) STRICT, WITHOUT ROWID;

-- TimerListDue and TimerNext walk this index in order and stop at now.
CREATE INDEX timers_due ON timers (due_at, key);

-- AUTOINCREMENT, not a plain rowid: a sequence number is never reused, even
-- if the newest events are deleted, so a sink's cursor (AfterSeq) can never
-- skip an event that takes an old number.
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL,
    time        INTEGER,
    type        TEXT    NOT NULL,
    pipeline_id TEXT    NOT NULL,
    schedule_id TEXT    NOT NULL,
    date        TEXT    NOT NULL,
    message     TEXT    NOT NULL,
    detail      TEXT
) STRICT;

CREATE INDEX events_pipeline_seq ON events (pipeline_id, seq);
