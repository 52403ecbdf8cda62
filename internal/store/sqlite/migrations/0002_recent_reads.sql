-- 0002: indexes for the watchdog's bulk snapshot.
--
-- On every pass the watchdog reads the runs and markers of recent periods
-- across all pipelines, and the sensors that changed lately. Each index
-- below makes one of those reads a range scan, so a pass costs what is
-- recent, never what has piled up in the history.
--
-- These tables are WITHOUT ROWID, so an index entry also holds the primary
-- key columns it does not name: (period) is in effect
-- (period, pipeline_id, schedule_id).

-- RunList with PeriodFrom. Ascending on purpose: an index in RunList's own
-- order (period DESC, pipeline_id, schedule_id) also serves the unfiltered
-- order, and the planner then prefers walking all of it to avoid a sort —
-- for ActiveOnly too, which must stay on the small runs_active index.
CREATE INDEX runs_period ON runs (period);

-- MarkerList with PeriodFrom, and Kinds: the range is on period, and kind
-- is checked in the index before a row is read. Pipeline-level markers
-- (empty period) sort first and fall outside every range. The query marks
-- the range unlikely() (see reads.go): without that the planner prefers
-- walking the whole primary key, which is in MarkerList's order.
CREATE INDEX markers_period_kind ON markers (period, kind);

-- SensorListChanged: a range on changed_at, read in the order returned
-- (ties by pipeline_id, key from the primary key). NULL (Go's zero time)
-- sorts first, as the zero time does, and no range includes it.
CREATE INDEX sensors_changed ON sensors (changed_at);
