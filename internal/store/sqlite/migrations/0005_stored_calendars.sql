-- 0005: what every process must read from the store rather than from its
-- own memory or files (issue 11, "decisions independent of the process").
--
-- A pipeline whose file went away is marked removed, not forgotten by the
-- one process that noticed: every process sharing the store stops running
-- it, and its history stays.
ALTER TABLE pipelines ADD COLUMN removed_at INTEGER;

-- Named calendars, stored beside the pipelines so a process that never read
-- the calendar files resolves include/exclude the same way. Few rows; read
-- by name, or all at once. A removed calendar keeps its row (removed_at set)
-- so the pipelines that name it keep their resolution.
--   days:  JSON array of weekday numbers (0 = Sunday), NULL when none.
--   dates: JSON array of "YYYY-MM-DD", NULL when none.
CREATE TABLE calendars (
    name       TEXT    NOT NULL PRIMARY KEY,
    version    INTEGER NOT NULL,
    days       TEXT,
    dates      TEXT,
    file       TEXT    NOT NULL,
    updated_at INTEGER,
    removed_at INTEGER
) STRICT, WITHOUT ROWID;
