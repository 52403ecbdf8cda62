-- 0005: silences (store.Silence, internal/silence): an operator's request
-- not to be paged about matching events until its end. Written with the
-- port's version rule; end_at is the silence's end (ends_at, or
-- expired_at when earlier), which SilenceList ranges over and retention
-- deletes by, like an event's time.
CREATE TABLE silences (
    id         text COLLATE "C" NOT NULL PRIMARY KEY,
    version    bigint NOT NULL,
    pipelines  text, -- JSON arrays
    types      text,
    levels     text,
    owners     text,
    starts_at  bigint,
    ends_at    bigint,
    expired_at bigint,
    end_at     bigint NOT NULL,
    comment    text   NOT NULL,
    created_by text   NOT NULL,
    created_at bigint
);
CREATE INDEX silences_end ON silences (end_at);
