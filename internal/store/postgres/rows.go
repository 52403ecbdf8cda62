package postgres

import (
	"fmt"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Each record type has one column list and one scan function, used by
// every read of that type, and one encode function used by every write, so
// a field added to a record is added in exactly three places here and
// caught by storetest's round-trip checks if one is missed.

// scanner is pgx.Row or pgx.Rows.
type scanner interface{ Scan(dest ...any) error }

const pipelineCols = `id, version, config_version, doc, hash, file, first_loaded_at, updated_at, paused, paused_until, paused_at, resumed_at, removed_at, pause_windows, watch_changed_at`

func scanPipeline(r scanner) (store.Pipeline, error) {
	var p store.Pipeline
	err := r.Scan(&p.ID, &p.Version, &p.ConfigVersion, &p.Doc, &p.Hash, &p.File,
		timeCol{&p.FirstLoadedAt}, timeCol{&p.UpdatedAt}, &p.Paused, timeCol{&p.PausedUntil}, timeCol{&p.PausedAt}, timeCol{&p.ResumedAt}, timeCol{&p.RemovedAt}, pauseWindowsCol{&p.PauseWindows}, timeCol{&p.WatchChangedAt})
	return p, err
}

// encodePipeline returns the values of pipelineCols after id and version.
func encodePipeline(e *encoder, p store.Pipeline) []any {
	doc := p.Doc
	if doc == nil {
		doc = []byte{} // the column is NOT NULL; nil and empty mean the same
	}
	return []any{p.ConfigVersion, doc, p.Hash, p.File,
		e.time("pipeline first loaded at", p.FirstLoadedAt), e.time("pipeline updated at", p.UpdatedAt),
		p.Paused, e.time("pipeline paused until", p.PausedUntil),
		e.time("pipeline paused at", p.PausedAt), e.time("pipeline resumed at", p.ResumedAt),
		e.time("pipeline removed at", p.RemovedAt), e.pauseWindows(p.PauseWindows),
		e.time("pipeline watch changed at", p.WatchChangedAt)}
}

const sensorCols = `pipeline_id, key, version, data, changed_at, written_at, watched`

func scanSensor(r scanner) (store.Sensor, error) {
	var s store.Sensor
	err := r.Scan(&s.PipelineID, bytesCol{&s.Key}, &s.Version, objectCol{&s.Data},
		timeCol{&s.ChangedAt}, timeCol{&s.WrittenAt}, &s.Watched)
	return s, err
}

func encodeSensor(e *encoder, s store.Sensor) []any {
	return []any{e.object("sensor data", s.Data),
		e.time("sensor changed at", s.ChangedAt), e.time("sensor written at", s.WrittenAt), sensorPeriod(s.Key), s.Watched}
}

// sensorPeriod is the sensors.period column of a key: the period its
// suffix names, canonical, or NULL for a plain key. Retention expires a
// per-period sensor by it (expire.go).
func sensorPeriod(key string) any {
	if _, p, ok := schedule.SplitPeriodKey(key); ok {
		return p.String()
	}
	return nil
}

const runCols = `pipeline_id, schedule_id, period, version, state, active, outcome, cause,
	generation, attempt, created_at, updated_at, state_since, expires_at,
	eval_started_at, eval_deadline, trigger_errors, trigger_in_flight,
	job_run_id, job_meta, job_started_at, poll_deadline, ended_at,
	last_failure_category, last_failure_message, config_version`

func scanRun(r scanner) (run.Run, error) {
	var (
		x       run.Run
		active  bool
		failCat *string
		failMsg *string
	)
	err := r.Scan(&x.PipelineID, &x.ScheduleID, &x.Period, &x.Version, &x.State, &active, &x.Outcome, &x.Cause,
		&x.Generation, &x.Attempt, timeCol{&x.CreatedAt}, timeCol{&x.UpdatedAt}, timeCol{&x.StateSince}, timeCol{&x.ExpiresAt},
		timeCol{&x.EvalStartedAt}, timeCol{&x.EvalDeadline}, &x.TriggerErrors, &x.TriggerInFlight,
		&x.JobRunID, jsonCol{&x.JobMeta}, timeCol{&x.JobStartedAt}, timeCol{&x.PollDeadline}, timeCol{&x.EndedAt},
		&failCat, &failMsg, &x.ConfigVersion)
	if err != nil {
		return run.Run{}, err
	}
	if failCat != nil {
		x.LastFailure = &run.Failure{Category: run.Category(*failCat)}
		if failMsg != nil {
			x.LastFailure.Message = *failMsg
		}
	}
	return x, nil
}

// encodeRun returns the values of runCols after the key and version.
func encodeRun(e *encoder, x run.Run) []any {
	var failCat, failMsg any
	if x.LastFailure != nil {
		failCat, failMsg = string(x.LastFailure.Category), x.LastFailure.Message
	}
	return []any{string(x.State), !x.State.Terminal(), string(x.Outcome), string(x.Cause),
		x.Generation, x.Attempt,
		e.time("run created at", x.CreatedAt), e.time("run updated at", x.UpdatedAt),
		e.time("run state since", x.StateSince), e.time("run expires at", x.ExpiresAt),
		e.time("run evaluation start", x.EvalStartedAt), e.time("run evaluation deadline", x.EvalDeadline),
		x.TriggerErrors, x.TriggerInFlight,
		x.JobRunID, e.json("run job meta", x.JobMeta, len(x.JobMeta)),
		e.time("run job started at", x.JobStartedAt), e.time("run poll deadline", x.PollDeadline),
		e.time("run ended at", x.EndedAt),
		failCat, failMsg, x.ConfigVersion}
}

const ledgerCols = `pipeline_id, schedule_id, period, seq, reason, source, at`

func scanLedger(r scanner) (store.LedgerEntry, error) {
	var l store.LedgerEntry
	err := r.Scan(&l.Key.PipelineID, &l.Key.ScheduleID, &l.Key.Period, &l.Seq, &l.Reason, &l.Source, timeCol{&l.At})
	return l, err
}

const baselineCols = `pipeline_id, schedule_id, period, sensors, captured_at`

func scanBaseline(r scanner) (store.Baseline, error) {
	var b store.Baseline
	err := r.Scan(&b.Key.PipelineID, &b.Key.ScheduleID, &b.Key.Period, jsonCol{&b.Sensors}, timeCol{&b.CapturedAt})
	return b, err
}

const markerCols = `pipeline_id, schedule_id, period, kind, at, detail`

func scanMarker(r scanner) (store.Marker, error) {
	var m store.Marker
	err := r.Scan(&m.Key.PipelineID, &m.Key.ScheduleID, &m.Key.Period, &m.Kind, timeCol{&m.At}, objectCol{&m.Detail})
	return m, err
}

const timerCols = `key, kind, pipeline_id, schedule_id, period, due_at, detail`

func scanTimer(r scanner) (store.Timer, error) {
	var t store.Timer
	err := r.Scan(&t.Key, &t.Kind, &t.Run.PipelineID, &t.Run.ScheduleID, &t.Run.Period, timeCol{&t.DueAt}, objectCol{&t.Detail})
	return t, err
}

const eventCols = `shard, seq, id, time, type, pipeline_id, schedule_id, date, message, detail`

func scanEvent(r scanner) (event.Event, error) {
	var ev event.Event
	err := r.Scan(&ev.Shard, &ev.Seq, &ev.ID, timeCol{&ev.Time}, &ev.Type, &ev.PipelineID, &ev.ScheduleID, &ev.Date, &ev.Message, objectCol{&ev.Detail})
	return ev, err
}

// bytesCol scans a bytea column (a sensor's key) into a string.
type bytesCol struct{ s *string }

func (c bytesCol) Scan(v any) error {
	b, ok := v.([]byte)
	if !ok {
		return fmt.Errorf("bytea column holds %T", v)
	}
	*c.s = string(b)
	return nil
}
