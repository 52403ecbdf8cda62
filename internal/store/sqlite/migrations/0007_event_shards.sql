-- The event log in shards (store.EventShards, docs/architecture.md "Event
-- order and delivery cursors"): no sequence shared by every writer. An
-- event's position is (shard, seq), seq counting 1, 2, 3 … per shard in
-- commit order; shard is a hash of the pipeline id, so a pipeline's events
-- are one shard's. event_shards holds each shard's counter, incremented in
-- the transaction that appends; a shard's numbers are never reused, even
-- once its newest events are deleted.
--
-- The old table is renamed here; the data step in Go (shardEvents, which
-- computes the hash) moves its rows, converts the alert sinks' cursors and
-- drops it.
CREATE TABLE event_shards (
    shard INTEGER NOT NULL PRIMARY KEY,
    seq   INTEGER NOT NULL
) STRICT;

DROP INDEX events_pipeline_seq;
DROP INDEX events_time;
ALTER TABLE events RENAME TO events_0006;

CREATE TABLE events (
    shard       INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    id          TEXT    NOT NULL,
    time        INTEGER,
    type        TEXT    NOT NULL,
    pipeline_id TEXT    NOT NULL,
    schedule_id TEXT    NOT NULL,
    date        TEXT    NOT NULL,
    message     TEXT    NOT NULL,
    detail      TEXT,
    PRIMARY KEY (shard, seq)
) STRICT;

-- A pipeline's events, in its shard's order; and a period's.
CREATE INDEX events_pipeline ON events (pipeline_id, seq);
CREATE INDEX events_period ON events (pipeline_id, date, seq);
-- Expired events (retention, expire.go).
CREATE INDEX events_time ON events (time);
