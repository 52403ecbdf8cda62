-- 0006: scoped sensor reads and retention (issue 11).
--
-- Retention deletes the history of periods older than a cutoff in small
-- batches (Expire, expire.go). Each batch must find its rows through an
-- index, never by scanning a table whose size is the history itself.

-- The period a per-period sensor key names ("orders#20260310T05" →
-- "2026-03-10T05"), canonical; NULL for a plain key, which never expires.
-- The store fills it from the key on every write (schedule.SplitPeriodKey);
-- rows written before this migration are filled by its Go step
-- (migrate.go), which parses keys the way the engine does.
ALTER TABLE sensors ADD COLUMN period TEXT;
CREATE INDEX sensors_period ON sensors (period) WHERE period IS NOT NULL;

-- A pipeline's sensors changed since an instant (a rerun's circuit
-- breaker asks whether any did): a range within one pipeline, instead of
-- sensors_changed's range over every pipeline.
CREATE INDEX sensors_pipeline_changed ON sensors (pipeline_id, changed_at);

-- Expired periods of the ledger and baselines (runs and markers have
-- runs_period and markers_period_kind), and expired events.
CREATE INDEX ledger_period ON ledger (period);
CREATE INDEX baselines_period ON baselines (period);
CREATE INDEX events_time ON events (time);

-- What keeps an old period's records: an armed timer of the period (an
-- active run has runs_active).
CREATE INDEX timers_period ON timers (pipeline_id, period);
