-- 0013: silences (store.Silence, internal/silence): an operator's request
-- not to be paged about matching events until its end. Written with the
-- port's version rule; end_at is the silence's end (ends_at, or
-- expired_at when earlier), which SilenceList ranges over and retention
-- deletes by, like an event's time.
CREATE TABLE silences (
    id         TEXT    NOT NULL PRIMARY KEY,
    version    INTEGER NOT NULL,
    pipelines  TEXT,
    types      TEXT,
    levels     TEXT,
    owners     TEXT,
    starts_at  INTEGER,
    ends_at    INTEGER,
    expired_at INTEGER,
    end_at     INTEGER NOT NULL,
    comment    TEXT    NOT NULL,
    created_by TEXT    NOT NULL,
    created_at INTEGER
) STRICT;
CREATE INDEX silences_end ON silences (end_at);
