-- 0015: a sink's delivery state beside its cursor (issue 26: health that
-- tells the truth): when it last accepted an alert (the cursor's start or
-- a move over skipped events is no success), and its current run of
-- failed attempts, so a sink failing on every attempt is unhealthy at
-- once, not after its alert is given up.
ALTER TABLE delivery_cursors ADD COLUMN delivered_at INTEGER;
ALTER TABLE delivery_cursors ADD COLUMN failing_since INTEGER;
ALTER TABLE delivery_cursors ADD COLUMN failing_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE delivery_cursors ADD COLUMN failing_error TEXT NOT NULL DEFAULT '';
