-- 0007: a sink's delivery state beside its cursor (as SQLite's 0015):
-- when it last accepted an alert, and its current run of failed attempts.
ALTER TABLE delivery_cursors ADD COLUMN delivered_at bigint;
ALTER TABLE delivery_cursors ADD COLUMN failing_since bigint;
ALTER TABLE delivery_cursors ADD COLUMN failing_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE delivery_cursors ADD COLUMN failing_error text NOT NULL DEFAULT '';
