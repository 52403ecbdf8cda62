package sqlstore

import (
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Each record type has one column list and one scan function, used by
// every read of that type on both backends, and one encode function used
// by every write, so a field added to a record is added in exactly three
// places here and caught by storetest's round-trip checks on both if one
// is missed.

// Scanner is a row: *sql.Row, *sql.Rows, pgx.Row or pgx.Rows.
type Scanner interface{ Scan(dest ...any) error }

const PipelineCols = `id, version, config_version, doc, hash, file, first_loaded_at, updated_at, paused, paused_until, paused_at, resumed_at, removed_at, pause_windows, watch_changed_at`

func ScanPipeline(r Scanner) (store.Pipeline, error) {
	var p store.Pipeline
	err := r.Scan(&p.ID, &p.Version, &p.ConfigVersion, &p.Doc, &p.Hash, &p.File,
		TimeCol{&p.FirstLoadedAt}, TimeCol{&p.UpdatedAt}, &p.Paused, TimeCol{&p.PausedUntil}, TimeCol{&p.PausedAt}, TimeCol{&p.ResumedAt}, TimeCol{&p.RemovedAt}, PauseWindowsCol{&p.PauseWindows}, TimeCol{&p.WatchChangedAt})
	return p, err
}

// EncodePipeline returns the values of PipelineCols after id and version.
func EncodePipeline(e *Encoder, p store.Pipeline) []any {
	doc := p.Doc
	if doc == nil {
		doc = []byte{} // the column is NOT NULL; nil and empty mean the same
	}
	return []any{p.ConfigVersion, doc, p.Hash, p.File,
		e.Time("pipeline first loaded at", p.FirstLoadedAt), e.Time("pipeline updated at", p.UpdatedAt),
		e.D.Bool(p.Paused), e.Time("pipeline paused until", p.PausedUntil),
		e.Time("pipeline paused at", p.PausedAt), e.Time("pipeline resumed at", p.ResumedAt),
		e.Time("pipeline removed at", p.RemovedAt), e.PauseWindows(p.PauseWindows),
		e.Time("pipeline watch changed at", p.WatchChangedAt)}
}

const SensorCols = `pipeline_id, key, version, data, changed_at, written_at, watched`

func (d *Dialect) ScanSensor(r Scanner) (store.Sensor, error) {
	var s store.Sensor
	err := r.Scan(&s.PipelineID, d.Key(&s.Key), &s.Version, ObjectCol{&s.Data},
		TimeCol{&s.ChangedAt}, TimeCol{&s.WrittenAt}, &s.Watched)
	return s, err
}

// EncodeSensor returns the values of SensorCols after the key and
// version, then the period column.
func EncodeSensor(e *Encoder, s store.Sensor) []any {
	return []any{e.Object("sensor data", s.Data),
		e.Time("sensor changed at", s.ChangedAt), e.Time("sensor written at", s.WrittenAt), SensorPeriod(s.Key), e.D.Bool(s.Watched)}
}

// SensorPeriod is the sensors.period column of a key: the period its
// suffix names, canonical, or NULL for a plain key. Retention expires a
// per-period sensor by it.
func SensorPeriod(key string) any {
	if _, p, ok := schedule.SplitPeriodKey(key); ok {
		return p.String()
	}
	return nil
}

const RunCols = `pipeline_id, schedule_id, period, version, state, active, outcome, cause,
	generation, attempt, created_at, updated_at, state_since, expires_at,
	eval_started_at, eval_deadline, trigger_errors, trigger_in_flight,
	job_run_id, job_meta, job_started_at, poll_deadline, ended_at,
	last_failure_category, last_failure_message, config_version`

func ScanRun(r Scanner) (run.Run, error) {
	var (
		x       run.Run
		active  bool
		failCat *string
		failMsg *string
	)
	err := r.Scan(&x.PipelineID, &x.ScheduleID, &x.Period, &x.Version, &x.State, &active, &x.Outcome, &x.Cause,
		&x.Generation, &x.Attempt, TimeCol{&x.CreatedAt}, TimeCol{&x.UpdatedAt}, TimeCol{&x.StateSince}, TimeCol{&x.ExpiresAt},
		TimeCol{&x.EvalStartedAt}, TimeCol{&x.EvalDeadline}, &x.TriggerErrors, &x.TriggerInFlight,
		&x.JobRunID, JSONCol{&x.JobMeta}, TimeCol{&x.JobStartedAt}, TimeCol{&x.PollDeadline}, TimeCol{&x.EndedAt},
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

// EncodeRun returns the values of RunCols after the key and version.
func EncodeRun(e *Encoder, x run.Run) []any {
	var failCat, failMsg any
	if x.LastFailure != nil {
		failCat, failMsg = string(x.LastFailure.Category), x.LastFailure.Message
	}
	return []any{string(x.State), e.D.Bool(!x.State.Terminal()), string(x.Outcome), string(x.Cause),
		x.Generation, x.Attempt,
		e.Time("run created at", x.CreatedAt), e.Time("run updated at", x.UpdatedAt),
		e.Time("run state since", x.StateSince), e.Time("run expires at", x.ExpiresAt),
		e.Time("run evaluation start", x.EvalStartedAt), e.Time("run evaluation deadline", x.EvalDeadline),
		x.TriggerErrors, e.D.Bool(x.TriggerInFlight),
		x.JobRunID, e.JSON("run job meta", x.JobMeta, len(x.JobMeta)),
		e.Time("run job started at", x.JobStartedAt), e.Time("run poll deadline", x.PollDeadline),
		e.Time("run ended at", x.EndedAt),
		failCat, failMsg, x.ConfigVersion}
}

const LedgerCols = `pipeline_id, schedule_id, period, seq, reason, source, at`

func ScanLedger(r Scanner) (store.LedgerEntry, error) {
	var l store.LedgerEntry
	err := r.Scan(&l.Key.PipelineID, &l.Key.ScheduleID, &l.Key.Period, &l.Seq, &l.Reason, &l.Source, TimeCol{&l.At})
	return l, err
}

const BaselineCols = `pipeline_id, schedule_id, period, sensors, captured_at`

func ScanBaseline(r Scanner) (store.Baseline, error) {
	var b store.Baseline
	err := r.Scan(&b.Key.PipelineID, &b.Key.ScheduleID, &b.Key.Period, JSONCol{&b.Sensors}, TimeCol{&b.CapturedAt})
	return b, err
}

const MarkerCols = `pipeline_id, schedule_id, period, kind, at, detail`

func ScanMarker(r Scanner) (store.Marker, error) {
	var m store.Marker
	err := r.Scan(&m.Key.PipelineID, &m.Key.ScheduleID, &m.Key.Period, &m.Kind, TimeCol{&m.At}, ObjectCol{&m.Detail})
	return m, err
}

const TimerCols = `key, kind, pipeline_id, schedule_id, period, due_at, detail`

func ScanTimer(r Scanner) (store.Timer, error) {
	var t store.Timer
	err := r.Scan(&t.Key, &t.Kind, &t.Run.PipelineID, &t.Run.ScheduleID, &t.Run.Period, TimeCol{&t.DueAt}, ObjectCol{&t.Detail})
	return t, err
}

// TimerArgs are the arguments of w's statement: TimerCols' values for a
// write of the timer, or, with ExpectDueAt (the caller fired the timer at
// that time and moves it), the values after the key, then the key and the
// expected due time (UPDATE … SET kind, pipeline_id, schedule_id, period,
// due_at, detail WHERE key AND due_at). A timer with no due time is
// refused: it would never fire, or fire at once, depending on how the
// zero time is read.
func TimerArgs(e *Encoder, w store.TimerWrite) []any {
	t := w.Timer
	if t.DueAt.IsZero() {
		e.Fail("write timer %s: no due time", t.Key)
	}
	due, detail := e.Time("timer due at", t.DueAt), e.Object("timer detail", t.Detail)
	if w.ExpectDueAt == nil {
		return []any{t.Key, t.Kind, t.Run.PipelineID, t.Run.ScheduleID, t.Run.Period, due, detail}
	}
	return []any{t.Kind, t.Run.PipelineID, t.Run.ScheduleID, t.Run.Period, due, detail,
		t.Key, e.Time("timer expected due time", *w.ExpectDueAt)}
}

const EventCols = `shard, seq, id, time, type, pipeline_id, schedule_id, date, message, detail`

func ScanEvent(r Scanner) (event.Event, error) {
	var ev event.Event
	err := r.Scan(&ev.Shard, &ev.Seq, &ev.ID, TimeCol{&ev.Time}, &ev.Type, &ev.PipelineID, &ev.ScheduleID, &ev.Date, &ev.Message, ObjectCol{&ev.Detail})
	return ev, err
}
