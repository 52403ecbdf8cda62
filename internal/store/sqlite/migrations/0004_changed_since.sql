-- 0004: what changed since a time, for the watchdog's incremental snapshot:
-- each pass reads the runs and markers written since its previous pass
-- instead of every recent one.
CREATE INDEX runs_updated ON runs (updated_at);
CREATE INDEX markers_at ON markers (at);
