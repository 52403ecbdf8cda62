-- 0011: the watchdog's read of changed sensors across pipelines follows
-- the sensors it reads (trigger data), not every sensor. A sensor records
-- whether the watchdog reads it (store.Sensor.Watched, decided by the
-- engine at each write), and only watched sensors are in sensors_changed;
-- a pipeline's row records when a config load last changed which of its
-- sensors are watched (store.Pipeline.WatchChangedAt), so a pass reads
-- the sensors written before that by pipeline (sensors_pipeline_changed).
--
-- Sensors stored before are watched (the default): a superset, which the
-- watchdog narrows by its configs, as it did before; each is decided
-- afresh at its next write. Rows stored before have no WatchChangedAt:
-- every sensor they have is watched.
ALTER TABLE sensors ADD COLUMN watched INTEGER NOT NULL DEFAULT 1;
ALTER TABLE pipelines ADD COLUMN watch_changed_at INTEGER;
DROP INDEX sensors_changed;
CREATE INDEX sensors_changed ON sensors (changed_at) WHERE watched = 1;
