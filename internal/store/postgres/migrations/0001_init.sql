-- 0001: the schema of the PostgreSQL store, as of the port of issue 14.
--
-- Conventions, so every query reads the same way:
--   * Times are BIGINT Unix nanoseconds in UTC; NULL is Go's zero time.
--     Not timestamptz: it keeps microseconds, and the port round-trips
--     nanoseconds (storetest checks it). 0 is a real instant (the epoch).
--   * Keys, periods, kinds and every text that is sorted or compared are
--     COLLATE "C": byte-wise order, as the port promises ("periods sort as
--     text", byte-wise key prefixes), whatever the database's locale.
--   * Sensor data and details are the canonical JSON the store writes
--     (sorted keys, numbers as written) in TEXT, not jsonb: jsonb rewrites
--     numbers and key order, and nothing queries inside them.
--   * Every list read is a range of one primary key or index (the table
--     "Every read on one key or one index, on each backend" in
--     docs/architecture.md); the indexes below are those.

CREATE TABLE pipelines (
    id              text COLLATE "C" NOT NULL PRIMARY KEY,
    version         bigint  NOT NULL,
    config_version  bigint  NOT NULL,
    doc             bytea   NOT NULL,
    hash            text    NOT NULL,
    file            text    NOT NULL,
    first_loaded_at bigint,
    updated_at      bigint,
    paused          boolean NOT NULL,
    paused_until    bigint,
    paused_at       bigint,
    resumed_at      bigint,
    removed_at      bigint,
    -- [[from, to], …] in Unix nanoseconds (null: zero time), oldest first.
    pause_windows   text
);

CREATE TABLE calendars (
    name       text COLLATE "C" NOT NULL PRIMARY KEY,
    version    bigint NOT NULL,
    days       text, -- JSON array of weekday numbers (0 = Sunday)
    dates      text, -- JSON array of "YYYY-MM-DD"
    file       text   NOT NULL,
    updated_at bigint,
    removed_at bigint
);

-- A sensor's key is bytea: keys are any bytes (what a client posted), and
-- bytea compares byte-wise, as prefix ranges want.
CREATE TABLE sensors (
    pipeline_id text COLLATE "C" NOT NULL,
    key         bytea  NOT NULL,
    version     bigint NOT NULL,
    data        text,
    changed_at  bigint,
    written_at  bigint,
    -- The period a per-period key names ("orders#20260310T05" →
    -- "2026-03-10T05"), canonical; NULL for a plain key, which never
    -- expires. The store fills it from the key (schedule.SplitPeriodKey).
    period      text COLLATE "C",
    PRIMARY KEY (pipeline_id, key)
);
-- SensorListChanged across pipelines, and of one pipeline.
CREATE INDEX sensors_changed ON sensors (changed_at, pipeline_id, key);
CREATE INDEX sensors_pipeline_changed ON sensors (pipeline_id, changed_at, key);
-- Retention.
CREATE INDEX sensors_period ON sensors (period) WHERE period IS NOT NULL;

-- The primary key is the per-period trigger lock: creating a run is an
-- INSERT … ON CONFLICT DO NOTHING that inserts nothing when the run exists.
CREATE TABLE runs (
    pipeline_id           text COLLATE "C" NOT NULL,
    schedule_id           text COLLATE "C" NOT NULL,
    period                text COLLATE "C" NOT NULL,
    version               bigint  NOT NULL,
    state                 text    NOT NULL,
    -- true while state is not terminal; written from run.State.Terminal()
    -- so the rule of which states are terminal lives in Go, once.
    active                boolean NOT NULL,
    outcome               text    NOT NULL,
    cause                 text    NOT NULL,
    generation            bigint  NOT NULL,
    attempt               bigint  NOT NULL,
    created_at            bigint,
    updated_at            bigint,
    state_since           bigint,
    expires_at            bigint,
    eval_started_at       bigint,
    eval_deadline         bigint,
    trigger_errors        bigint  NOT NULL,
    trigger_in_flight     boolean NOT NULL,
    job_run_id            text    NOT NULL,
    job_meta              text,
    job_started_at        bigint,
    poll_deadline         bigint,
    ended_at              bigint,
    last_failure_category text, -- NULL: no failure recorded
    last_failure_message  text,
    config_version        bigint  NOT NULL,
    PRIMARY KEY (pipeline_id, schedule_id, period)
);
-- A pipeline's runs newest period first; the runs in flight (small);
-- recent periods and recent updates across pipelines.
CREATE INDEX runs_pipeline_period ON runs (pipeline_id, period DESC, schedule_id);
CREATE INDEX runs_active ON runs (pipeline_id, period) WHERE active;
CREATE INDEX runs_period ON runs (period);
CREATE INDEX runs_updated ON runs (updated_at);

CREATE TABLE ledger (
    pipeline_id text COLLATE "C" NOT NULL,
    schedule_id text COLLATE "C" NOT NULL,
    period      text COLLATE "C" NOT NULL,
    seq         bigint NOT NULL,
    reason      text   NOT NULL,
    source      text   NOT NULL,
    at          bigint,
    PRIMARY KEY (pipeline_id, schedule_id, period, seq)
);
CREATE INDEX ledger_period ON ledger (period);

CREATE TABLE baselines (
    pipeline_id text COLLATE "C" NOT NULL,
    schedule_id text COLLATE "C" NOT NULL,
    period      text COLLATE "C" NOT NULL,
    sensors     text,
    captured_at bigint,
    PRIMARY KEY (pipeline_id, schedule_id, period)
);
CREATE INDEX baselines_period ON baselines (period);

CREATE TABLE markers (
    pipeline_id text COLLATE "C" NOT NULL,
    schedule_id text COLLATE "C" NOT NULL,
    period      text COLLATE "C" NOT NULL,
    kind        text COLLATE "C" NOT NULL,
    at          bigint,
    detail      text,
    PRIMARY KEY (pipeline_id, schedule_id, period, kind)
);
CREATE INDEX markers_period ON markers (period, kind);
CREATE INDEX markers_at ON markers (at);

CREATE TABLE timers (
    key         text COLLATE "C" NOT NULL PRIMARY KEY,
    kind        text COLLATE "C" NOT NULL,
    pipeline_id text COLLATE "C" NOT NULL,
    schedule_id text COLLATE "C" NOT NULL,
    period      text COLLATE "C" NOT NULL,
    due_at      bigint NOT NULL,
    detail      text
);
CREATE INDEX timers_due ON timers (due_at, key);
-- What keeps an old period's records: an armed timer of the period.
CREATE INDEX timers_period ON timers (pipeline_id, period);

-- The event log in shards (store.EventShards): an event's position is
-- (shard, seq), seq counting 1, 2, 3 … per shard in commit order. The
-- commit that appends takes its numbers by incrementing its shard's
-- counter row, which it holds locked until it commits: a shard's numbers
-- become visible in the order they were taken, so a reader's cursor never
-- passes a number still to be committed. Numbers are never reused.
CREATE TABLE event_shards (
    shard integer NOT NULL PRIMARY KEY,
    seq   bigint  NOT NULL
);
INSERT INTO event_shards (shard, seq) SELECT s, 0 FROM generate_series(0, 15) AS s;

CREATE TABLE events (
    shard       integer NOT NULL,
    seq         bigint  NOT NULL,
    id          text    NOT NULL,
    time        bigint,
    type        text COLLATE "C" NOT NULL,
    pipeline_id text COLLATE "C" NOT NULL,
    schedule_id text    NOT NULL,
    date        text COLLATE "C" NOT NULL,
    message     text    NOT NULL,
    detail      text,
    PRIMARY KEY (shard, seq)
);
-- A pipeline's events, in its shard's order; and a period's.
CREATE INDEX events_pipeline ON events (pipeline_id, seq);
CREATE INDEX events_period ON events (pipeline_id, date, seq);
CREATE INDEX events_time ON events (time);

-- Alert delivery bookkeeping (store/alerts.go): each table's primary key
-- is its only read path, within one sink; the at indexes are retention's.
CREATE TABLE delivery_cursors (
    sink   text COLLATE "C" NOT NULL PRIMARY KEY,
    cursor text   NOT NULL,
    at     bigint
);

CREATE TABLE dead_letters (
    sink        text COLLATE "C" NOT NULL,
    event_id    text COLLATE "C" NOT NULL,
    type        text   NOT NULL,
    pipeline_id text   NOT NULL,
    schedule_id text   NOT NULL,
    period      text   NOT NULL,
    event_time  bigint,
    attempts    bigint NOT NULL,
    error       text   NOT NULL,
    at          bigint,
    PRIMARY KEY (sink, event_id)
);
CREATE INDEX dead_letters_sink_at ON dead_letters (sink, at, event_time, event_id);
CREATE INDEX dead_letters_at ON dead_letters (at);

CREATE TABLE alert_threads (
    sink        text COLLATE "C" NOT NULL,
    pipeline_id text COLLATE "C" NOT NULL,
    schedule_id text COLLATE "C" NOT NULL,
    period      text COLLATE "C" NOT NULL,
    ts          text   NOT NULL,
    channel     text   NOT NULL,
    at          bigint,
    PRIMARY KEY (sink, pipeline_id, schedule_id, period)
);
CREATE INDEX alert_threads_at ON alert_threads (at);

CREATE TABLE alerts_sent (
    sink        text COLLATE "C" NOT NULL,
    pipeline_id text COLLATE "C" NOT NULL,
    schedule_id text COLLATE "C" NOT NULL,
    period      text COLLATE "C" NOT NULL,
    type        text COLLATE "C" NOT NULL,
    hash        text COLLATE "C" NOT NULL,
    event_id    text   NOT NULL,
    at          bigint,
    PRIMARY KEY (sink, pipeline_id, schedule_id, period, type, hash)
);
CREATE INDEX alerts_sent_at ON alerts_sent (at);

CREATE TABLE alerts_alerted (
    sink        text COLLATE "C" NOT NULL,
    pipeline_id text COLLATE "C" NOT NULL,
    schedule_id text COLLATE "C" NOT NULL,
    period      text COLLATE "C" NOT NULL,
    event_id    text   NOT NULL,
    type        text   NOT NULL,
    at          bigint,
    PRIMARY KEY (sink, pipeline_id, schedule_id, period)
);
CREATE INDEX alerts_alerted_at ON alerts_alerted (at);
