-- 0003: when the current or last pause of a pipeline began and ended, so
-- the watchdog can tell cron ticks skipped on purpose from missed ones.
ALTER TABLE pipelines ADD COLUMN paused_at INTEGER;
ALTER TABLE pipelines ADD COLUMN resumed_at INTEGER;
