-- 0012: backfills (store.Backfill): an operator's request to run a range
-- of a pipeline's past periods, with each period's progress in body (a
-- JSON document, store.EncodeBackfillBody). Written with the port's
-- version rule; read by key or by pipeline; never expired.
CREATE TABLE backfills (
    pipeline_id  TEXT    NOT NULL,
    id           TEXT    NOT NULL,
    version      INTEGER NOT NULL,
    requested_at INTEGER,
    body         TEXT    NOT NULL,
    PRIMARY KEY (pipeline_id, id)
) STRICT;
