-- Alert delivery bookkeeping as typed records (store/alerts.go), instead
-- of markers under the reserved pipeline ids '#alert…'. Each table's
-- primary key is its only read path, always within one sink; the at
-- indexes are retention's (expire.go). The Go step (moveAlertMarkers)
-- moves the markers here and deletes them.
CREATE TABLE delivery_cursors (
    sink   TEXT    NOT NULL PRIMARY KEY,
    cursor TEXT    NOT NULL,
    at     INTEGER
) STRICT;

CREATE TABLE dead_letters (
    sink        TEXT    NOT NULL,
    event_id    TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    pipeline_id TEXT    NOT NULL,
    schedule_id TEXT    NOT NULL,
    period      TEXT    NOT NULL,
    event_time  INTEGER,
    attempts    INTEGER NOT NULL,
    error       TEXT    NOT NULL,
    at          INTEGER,
    PRIMARY KEY (sink, event_id)
) STRICT;
CREATE INDEX dead_letters_at ON dead_letters (at);

CREATE TABLE alert_threads (
    sink        TEXT    NOT NULL,
    pipeline_id TEXT    NOT NULL,
    schedule_id TEXT    NOT NULL,
    period      TEXT    NOT NULL,
    ts          TEXT    NOT NULL,
    channel     TEXT    NOT NULL,
    at          INTEGER,
    PRIMARY KEY (sink, pipeline_id, schedule_id, period)
) STRICT;
CREATE INDEX alert_threads_at ON alert_threads (at);

CREATE TABLE alerts_sent (
    sink        TEXT    NOT NULL,
    pipeline_id TEXT    NOT NULL,
    schedule_id TEXT    NOT NULL,
    period      TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    hash        TEXT    NOT NULL,
    event_id    TEXT    NOT NULL,
    at          INTEGER,
    PRIMARY KEY (sink, pipeline_id, schedule_id, period, type, hash)
) STRICT;
CREATE INDEX alerts_sent_at ON alerts_sent (at);

CREATE TABLE alerts_alerted (
    sink        TEXT    NOT NULL,
    pipeline_id TEXT    NOT NULL,
    schedule_id TEXT    NOT NULL,
    period      TEXT    NOT NULL,
    event_id    TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    at          INTEGER,
    PRIMARY KEY (sink, pipeline_id, schedule_id, period)
) STRICT;
CREATE INDEX alerts_alerted_at ON alerts_alerted (at);
