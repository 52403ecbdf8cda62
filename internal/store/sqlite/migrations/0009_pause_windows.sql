-- 0009: a pipeline's pauses that ended lately, on its row (store.Pipeline
-- PauseWindows: a JSON array of [from, to] Unix-nanosecond pairs, oldest
-- first). The data step in Go (keepPauseWindows) moves the windows kept so
-- far as markers whose kind was "paused:<RFC3339 start>" onto the rows and
-- deletes those markers.
ALTER TABLE pipelines ADD COLUMN pause_windows TEXT;
