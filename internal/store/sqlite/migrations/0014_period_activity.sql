-- 0014: retention keeps a period whose date saw activity within retention
-- (issue 28): a write for a period older than retention is kept, with the
-- run that locks the period, for retention after it. Expire asks, for each
-- row it would delete, whether a sensor of the row's date was written in
-- the pipeline since the cutoff: a range of one pipeline's date, covered
-- (written_at), instead of sensors_period's range over every pipeline.
CREATE INDEX sensors_pipeline_period ON sensors (pipeline_id, period, written_at) WHERE period IS NOT NULL;
