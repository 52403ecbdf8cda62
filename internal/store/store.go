// Package store defines the storage port: everything the engine persists,
// behind one interface that every backend (SQLite, PostgreSQL, DynamoDB)
// implements and that storetest checks.
//
// Reads are plain lookups. Every write goes through Commit, which applies a
// Change atomically: all of it or none of it, with its conditions checked
// (run and sensor versions, absent markers, timer due times). That makes the
// event log an outbox — an event is stored in the same commit as the state
// change that caused it — and makes per-period run creation the exclusive
// trigger lock. The store never reads the clock: every time it stores or
// compares comes from the caller.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store/record"
)

// Sentinel errors. Backends map their native errors onto these.
var (
	// ErrNotFound: the record does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a condition of a Commit failed (a version moved, a
	// record that must be absent exists); nothing was written.
	ErrConflict = errors.New("store: conflict")
)

// Store is the storage port.
type Store interface {
	PipelineGet(ctx context.Context, id string) (Pipeline, error)
	// PipelineList returns every pipeline, sorted by ID.
	PipelineList(ctx context.Context) ([]Pipeline, error)

	CalendarGet(ctx context.Context, name string) (Calendar, error)
	// CalendarList returns every calendar, removed ones too, sorted by
	// name. Calendars are few (a handful per project): one read serves
	// every pipeline that names one.
	CalendarList(ctx context.Context) ([]Calendar, error)

	SensorGet(ctx context.Context, pipelineID, key string) (Sensor, error)
	// SensorList returns the pipeline's sensors, sorted by key. Its cost
	// grows with the pipeline's stored history (per-period keys); no
	// decision reads it: it is for listing (the API).
	SensorList(ctx context.Context, pipelineID string) ([]Sensor, error)
	// SensorGetMany returns the pipeline's sensors stored under p.Keys,
	// sorted by key; a key with no sensor is left out (no ErrNotFound),
	// a key named twice is returned once. It is a decision's read: the
	// rule keys and their per-period forms for one period
	// (schedule.PeriodKeys), each a primary-key lookup on every backend
	// (SQLite and PostgreSQL: the primary key; DynamoDB: BatchGetItem), so
	// its cost follows the rules, never the stored history.
	SensorGetMany(ctx context.Context, p SensorGetManyParams) ([]Sensor, error)
	// SensorListPrefix returns the pipeline's sensors whose key starts
	// with p.Prefix (byte-wise), sorted by key: one range of the primary
	// key (DynamoDB: a Query with begins_with on the sort key). It is for
	// the trigger key, a prefix that also matches keys written for other
	// periods, so its cost grows with that key's history within retention;
	// only operator actions read it (explain, rerun, resume).
	SensorListPrefix(ctx context.Context, p SensorListPrefixParams) ([]Sensor, error)
	// SensorListChanged returns the sensors matching p, earliest ChangedAt
	// first (ties by pipeline, then key). It is for the watchdog's
	// snapshot: the watched sensors that received new content lately,
	// across every pipeline, at a cost that grows with recent changes of
	// trigger data rather than with every sensor ever written; and for one
	// pipeline's sensors changed since an instant.
	SensorListChanged(ctx context.Context, p SensorListChangedParams) ([]Sensor, error)

	RunGet(ctx context.Context, key run.Key) (run.Run, error)
	// RunList returns runs matching p, newest period first (period strings
	// sort chronologically as text; ties by pipeline, then schedule).
	RunList(ctx context.Context, p RunListParams) ([]run.Run, error)

	// LedgerList returns the rerun ledger of a period, oldest (lowest Seq)
	// first; an empty ledger is an empty list, not ErrNotFound.
	LedgerList(ctx context.Context, key run.Key) ([]LedgerEntry, error)

	BaselineGet(ctx context.Context, key run.Key) (Baseline, error)

	MarkerGet(ctx context.Context, key run.Key, kind string) (Marker, error)
	// MarkerListOf returns every marker of one period, sorted by kind: one
	// range of the primary key on every backend (DynamoDB: a Query with
	// begins_with on the sort key), so a decision that needs several of a
	// period's facts (its SLA marks) reads them at once.
	MarkerListOf(ctx context.Context, key run.Key) ([]Marker, error)
	// MarkerList returns markers matching p, sorted by pipeline, schedule,
	// period and kind.
	MarkerList(ctx context.Context, p MarkerListParams) ([]Marker, error)

	// TimerListDue returns timers due at or before now, earliest first
	// (ties by key), at most limit (limit <= 0: no limit, as in the list
	// params below).
	TimerListDue(ctx context.Context, now time.Time, limit int) ([]Timer, error)
	// TimerNext returns the earliest timer (ties by key), or ErrNotFound
	// when none is set.
	TimerNext(ctx context.Context) (Timer, error)
	TimerGet(ctx context.Context, key string) (Timer, error)
	// TimerList returns the timers matching p, due or not, earliest first
	// (ties by key). It is for reading what is scheduled — the watchdog
	// checks that every run that needs a timer has one — and never for
	// firing timers: that is TimerListDue's, which asks about an instant.
	TimerList(ctx context.Context, p TimerListParams) ([]Timer, error)

	// EventList returns the page of events matching p after p.After, and
	// the cursor after it: each shard's events in commit order, the shards
	// merged by Time (MergeEventShards). A read scoped by pipeline reads
	// that pipeline's shard only.
	EventList(ctx context.Context, p EventListParams) (EventPage, error)

	// Expire deletes history older than p's cutoffs, at most p.Limit
	// records per call, and says whether more remain (retention; see
	// ExpireParams for what goes and what never does). A backend that
	// expires records by itself (DynamoDB's TTL) may delete nothing here
	// and report More false: the port promises what must stay, and that
	// what is expired goes eventually, not when.
	Expire(ctx context.Context, p ExpireParams) (ExpireResult, error)

	// Alert delivery bookkeeping (alerts.go), read by key within a sink.
	DeliveryCursorGet(ctx context.Context, sink string) (DeliveryCursor, error)
	// DeliveryCursorList returns every sink's cursor (sinks no longer
	// configured too), sorted by sink: one record per sink, few.
	DeliveryCursorList(ctx context.Context) ([]DeliveryCursor, error)
	// DeadLetterList returns a sink's dead letters, oldest At first (ties
	// by event time, then event id).
	DeadLetterList(ctx context.Context, sink string) ([]DeadLetter, error)
	AlertThreadGet(ctx context.Context, sink string, key run.Key) (AlertThread, error)
	AlertSentGet(ctx context.Context, sink string, key run.Key, typ event.Type, hash string) (AlertSent, error)
	AlertAlertedGet(ctx context.Context, sink string, key run.Key) (AlertAlerted, error)

	// LeaseGet returns a lease (lease.go) by name.
	LeaseGet(ctx context.Context, name string) (Lease, error)

	// BackfillGet returns one backfill (backfill.go) of a pipeline.
	BackfillGet(ctx context.Context, pipelineID, id string) (Backfill, error)
	// BackfillList returns a pipeline's backfills, oldest RequestedAt
	// first (ties by id): one key range on every backend (DynamoDB: a
	// Query of the pipeline's backfill partition). Backfills are few.
	BackfillList(ctx context.Context, pipelineID string) ([]Backfill, error)
	// SilenceGet returns a silence (silences.go) by ID.
	SilenceGet(ctx context.Context, id string) (Silence, error)
	// SilenceList returns the silences matching p, earliest CreatedAt
	// first (ties by ID). Silences are few: one read serves a whole
	// sweep of the alert worker or a page of events.
	SilenceList(ctx context.Context, p SilenceListParams) ([]Silence, error)

	// Commit applies c atomically. It returns ErrConflict, and writes
	// nothing, when any condition fails.
	Commit(ctx context.Context, c Change) error

	Close() error
}

// Pipeline is a pipeline's stored configuration and operator state.
type Pipeline struct {
	ID            string
	Version       int64  // compare-and-swap version of this row
	ConfigVersion int64  // bumped when Doc changes
	Doc           []byte // the pipeline document as loaded (YAML)
	Hash          string // content hash of Doc
	File          string // where it was loaded from, for messages
	FirstLoadedAt time.Time
	UpdatedAt     time.Time
	Paused        bool
	PausedUntil   time.Time // zero: until resumed
	// PausedAt and ResumedAt bound the current or last pause, so the
	// watchdog does not report cron ticks skipped on purpose as missed.
	PausedAt  time.Time
	ResumedAt time.Time // zero while paused, or when never resumed
	// PauseWindows are the pipeline's pauses that ended lately, oldest
	// first, as the resume that ended each kept them
	// (pause.KeepWindow: those of the last pause.WindowRetention, at
	// most pause.MaxWindows). A cron tick inside one started nothing on
	// purpose, so the watchdog does not report it missed.
	//
	// They are a field of the row rather than records of their own: the
	// resume that ends a pause writes the row anyway, so keeping its window
	// adds no record to that Change (store.Change.Check); the watchdog's
	// snapshot, which reads every row, has every pipeline's windows without
	// one read more, where records would need a cross-pipeline read by end
	// time (on DynamoDB a GSI on a time, or a Query per pipeline); and a
	// decision that reads the row reads the pause state whole, under the
	// row's version. The list is bounded, so the row stays small (a
	// DynamoDB item holds 400 KB).
	PauseWindows []pause.Window
	// RemovedAt is when the last file defining the pipeline went away;
	// zero while one defines it. A removed pipeline decides nothing (its
	// timers are dropped as they come due, its sensors are refused) and
	// keeps its history; loading its file again brings it back. It is
	// stored, not remembered by the process that saw the file go, so
	// every process sharing the store stops running it.
	RemovedAt time.Time
	// WatchChangedAt is when a config load last changed which of the
	// pipeline's sensors the watchdog reads (watchdog.WatchKey: its
	// trigger key, or none); zero when no load has since it was first
	// loaded. Sensors written before it may carry a Watched decided by
	// the older config, so a watchdog pass reads them by pipeline
	// (watchdog.PlanSensorReads).
	WatchChangedAt time.Time
}

// Calendar is a named calendar (calendars/*.yaml) as every process reads
// it: stored beside the pipelines, so a process that never read the
// calendar files — a second serve, a Lambda — resolves schedule.include
// and schedule.exclude with the same dates.
type Calendar struct {
	Name      string
	Version   int64 // compare-and-swap version; bumped by every change
	Days      []time.Weekday
	Dates     []schedule.Date
	File      string // where it was loaded from, for messages
	UpdatedAt time.Time
	// RemovedAt is when its file went away; zero while one defines it. A
	// removed calendar is kept, not deleted: pipelines that name it keep
	// the resolution they had (and were refused with CONFIG_INVALID),
	// while a newly loaded pipeline may not name it.
	RemovedAt time.Time
}

// Schedule returns the calendar as the schedule package reads it.
func (c Calendar) Schedule() schedule.Calendar {
	return schedule.Calendar{Name: c.Name, Days: c.Days, Dates: c.Dates}
}

// Sensor is a stored sensor (record.Sensor: the pure core reads it too).
type Sensor = record.Sensor

// LedgerEntry is one accepted rerun or automatic retry of a period; the
// ledger is what budgets count.
type LedgerEntry struct {
	Key    run.Key
	Seq    int // 1, 2, … per period; unique
	Reason string
	Source string // what caused it: a job event, a sensor key, an operator
	At     time.Time
}

// Baseline is the post-run baseline captured when a job succeeds: the data
// of each post-run rule's sensor at that moment.
type Baseline struct {
	Key        run.Key
	Sensors    map[string]sensor.Object
	CapturedAt time.Time
}

// Marker is a durable fact about a period (record.Marker: the pure core
// reads it too).
type Marker = record.Marker

// Timer is a durable timer. Keys are unique; putting a timer with an
// existing key replaces it.
type Timer struct {
	Key    string
	Kind   string
	Run    run.Key // the run or period it concerns; PipelineID at least
	DueAt  time.Time
	Detail sensor.Object
}

// RunListParams filters RunList. Zero fields do not filter; set fields
// all apply (AND).
type RunListParams struct {
	PipelineID string
	ScheduleID string
	Period     string
	// PeriodFrom keeps runs whose Period >= PeriodFrom, compared as plain
	// strings. Periods ("2026-03-14", "2026-03-14T05") sort in time order
	// as text, and a day sorts before its hours: PeriodFrom "2026-03-14"
	// includes "2026-03-14T05", PeriodFrom "2026-03-14T05" excludes
	// "2026-03-14". It is for the watchdog, which loads the recent runs of
	// every pipeline in one read whose cost grows with recent periods, not
	// with stored history.
	PeriodFrom string
	// PeriodTo keeps runs whose Period <= PeriodTo (text order, as
	// PeriodFrom); with PeriodFrom it reads one range of one pipeline's
	// periods, such as the hours of a day ("2026-03-14T00" to
	// "2026-03-14T23") for an upstream rule with hours: all. It needs the
	// pipeline.
	PeriodTo string
	// UpdatedSince keeps runs whose UpdatedAt >= UpdatedSince (inclusive).
	// It lets the watchdog refresh its snapshot with what changed since
	// its previous pass instead of reading every recent run again.
	UpdatedSince time.Time
	ActiveOnly   bool // only non-terminal runs
	Limit        int  // 0: no limit
}

// MarkerListParams filters MarkerList. Zero fields do not filter; set
// fields all apply (AND).
type MarkerListParams struct {
	// PeriodFrom keeps markers whose period is >= PeriodFrom, compared as
	// in RunListParams. Pipeline-level markers (empty period) sort before
	// every date and so are excluded whenever PeriodFrom is set. It is for
	// the watchdog's snapshot of recent periods, as in RunListParams.
	PeriodFrom string
	// Since keeps markers whose At >= Since (inclusive): the watchdog's
	// incremental refresh, as RunListParams.UpdatedSince.
	Since time.Time
}

// TimerListParams filters TimerList. Zero fields do not filter; set fields
// all apply (AND).
type TimerListParams struct {
	Kind string
}

// SensorListChangedParams filters SensorListChanged. Zero fields do not
// filter; set fields all apply (AND).
type SensorListChangedParams struct {
	// Since keeps sensors whose ChangedAt >= Since (inclusive; the same
	// instant in any zone). Only ChangedAt counts: an identical re-write,
	// which moves WrittenAt alone, does not make a sensor changed. A sensor
	// with a zero ChangedAt is earlier than every non-zero Since.
	Since      time.Time
	PipelineID string
	// Watched keeps the sensors stored with Watched set. It is the read
	// across pipelines (no PipelineID), which must set it: that index
	// holds watched sensors only; a pipeline's read must not (its index
	// holds them all). Index refuses the other combinations.
	Watched bool
	Limit   int // 0: no limit
}

// Change is a set of writes applied atomically by Commit.
type Change struct {
	Pipelines      []PipelineWrite
	Calendars      []CalendarWrite
	Sensors        []SensorWrite
	SensorDeletes  []SensorDelete
	Runs           []RunWrite
	Ledger         []LedgerEntry // appended; a duplicate (Key, Seq) is a conflict
	Baselines      []Baseline    // put (replace)
	BaselineDelete []run.Key
	Markers        []MarkerWrite
	MarkerDeletes  []MarkerDelete
	Timers         []TimerWrite
	TimerDeletes   []TimerDelete
	// Events are appended in order, each to its pipeline's shard; the
	// store assigns Shard and Seq.
	Events []event.Event

	// Alert delivery bookkeeping (alerts.go). AlertThreads are
	// created: an existing thread of the same key is a conflict.
	DeliveryCursors []DeliveryCursorWrite
	DeadLetters     []DeadLetter
	AlertThreads    []AlertThread
	AlertsSent      []AlertSent
	AlertsAlerted   []AlertAlerted

	// Leases (lease.go), each with its version condition.
	Leases []LeaseWrite

	// Backfills (backfill.go), each with its version condition.
	Backfills []BackfillWrite
	// Silences (silences.go), each with its version condition.
	Silences []SilenceWrite

	// PipelineChecks and CalendarChecks are conditions that write
	// nothing: a decision made from a pipeline's row (its pause state,
	// its config version) and the calendars its config names commits
	// only if none of them moved since it read them. Each counts as a
	// touch of its record (DynamoDB's ConditionCheck is an action on the
	// item), so a Change never both checks and writes one record: a write
	// carries its own condition.
	PipelineChecks []PipelineCheck
	CalendarChecks []CalendarCheck
}

// Empty reports whether c writes nothing.
func (c Change) Empty() bool {
	return len(c.Pipelines)+len(c.Calendars)+len(c.PipelineChecks)+len(c.CalendarChecks)+len(c.Sensors)+len(c.SensorDeletes)+len(c.Runs)+len(c.Ledger)+
		len(c.Baselines)+len(c.BaselineDelete)+len(c.Markers)+len(c.MarkerDeletes)+
		len(c.Timers)+len(c.TimerDeletes)+len(c.Events)+
		len(c.DeliveryCursors)+len(c.DeadLetters)+len(c.AlertThreads)+len(c.AlertsSent)+len(c.AlertsAlerted)+len(c.Leases)+len(c.Backfills)+len(c.Silences) == 0
}

// PipelineWrite puts a pipeline row. ExpectVersion 0 means the row must
// not exist; otherwise the stored Version must equal it. The stored
// Version becomes ExpectVersion+1.
type PipelineWrite struct {
	Pipeline      Pipeline
	ExpectVersion int64
}

// PipelineCheck is a condition on a pipeline row: the stored Version must
// equal Version (0: the row must not exist). Nothing is written.
type PipelineCheck struct {
	ID      string
	Version int64
}

// CalendarWrite puts a calendar with the same version rule as
// PipelineWrite.
type CalendarWrite struct {
	Calendar      Calendar
	ExpectVersion int64
}

// CalendarCheck is a condition on a calendar, as PipelineCheck.
type CalendarCheck struct {
	Name    string
	Version int64
}

// SensorWrite puts a sensor with the same version rule as PipelineWrite.
type SensorWrite struct {
	Sensor        Sensor
	ExpectVersion int64
}

// SensorDelete removes a sensor; a missing sensor is not an error.
type SensorDelete struct {
	PipelineID string
	Key        string
}

// RunWrite puts a run with the same version rule as PipelineWrite.
type RunWrite struct {
	Run           run.Run
	ExpectVersion int64
}

// MarkerWrite puts a marker. With IfAbsent, an existing marker of the same
// key and kind is a conflict; without, it is replaced.
type MarkerWrite struct {
	Marker   Marker
	IfAbsent bool
}

// MarkerDelete removes a marker; a missing marker is not an error.
type MarkerDelete struct {
	Key  run.Key
	Kind string
}

// TimerWrite puts a timer. When ExpectDueAt is set, the stored timer must
// exist with that due time (the caller is the one that processed it).
type TimerWrite struct {
	Timer       Timer
	ExpectDueAt *time.Time
}

// TimerDelete removes a timer. When ExpectDueAt is set, the stored timer
// must exist with that due time; otherwise a missing timer is not an error.
type TimerDelete struct {
	Key         string
	ExpectDueAt *time.Time
}

// SensorGetManyParams names the sensors SensorGetMany reads.
type SensorGetManyParams struct {
	PipelineID string
	Keys       []string
}

// SensorListPrefixParams names the sensors SensorListPrefix reads. An
// empty Prefix matches every key of the pipeline.
type SensorListPrefixParams struct {
	PipelineID string
	Prefix     string
}

// ExpireParams says what Expire deletes. Records of a period (a run, its
// ledger entries, its baseline, its markers, and sensors whose key names
// the period, "orders#2026-03-10" or "orders#20260310T05") expire when
// run.PeriodExpired holds: their period sorts before PeriodBefore as text
// AND their date saw no activity since Before — in the pipeline, no run
// of the date or of one of its hours changed (UpdatedAt) and no sensor of
// the date or of one of its hours was written (WrittenAt) at or after
// Before. A period's ledger entries, baseline and markers are written
// with a run or a sensor of it, so those two stand for every write. A
// write for a period older than retention (a replay, a backfill, a
// rerun) so keeps the whole date, run and sensors alike, for retention
// after it: it is never acknowledged and then deleted, and the run that
// locks the period stays with it.
//
// Events expire when their Time is before Before, alert bookkeeping
// (threads, alerts sent and alerted, dead letters) when its At is, and a
// silence when its end is. The caller derives both from one instant
// (run.RetentionCutoff), leaving a day's slack for the zones periods are
// named in.
//
// What never expires, whatever its age:
//   - alert sinks' delivery cursors and leases;
//   - pipelines, calendars and timers (a timer is deleted by whoever
//     processes it; an armed timer is work still to do);
//   - pipeline-level records: markers with an empty period, sensors whose
//     key names no period (the latest value of a plain key);
//   - every record of a period that still has an active (non-terminal)
//     run or an armed timer in the same pipeline: its run, ledger,
//     baseline, markers and per-period sensors are what that work will
//     read.
//
// Zero cutoffs expire nothing of their kind; a period's records need both.
type ExpireParams struct {
	PeriodBefore string    // a period or a date; "" expires no period's records
	Before       time.Time // zero expires no event, no alert bookkeeping and no period's records
	// Limit bounds the records deleted by one call (and so the time the
	// write lock is held); <= 0 is refused.
	Limit int
}

// ExpireResult says what one Expire call deleted.
type ExpireResult struct {
	// Deleted counts the records deleted, by kind: "sensors", "runs",
	// "ledger", "baselines", "markers", "events", "alert_threads",
	// "alerts_sent", "alerts_alerted", "dead_letters", "silences".
	Deleted map[string]int
	// More is true when the call stopped at its limit: expired records
	// may remain.
	More bool
}

// Total is the number of records deleted.
func (r ExpireResult) Total() int {
	n := 0
	for _, v := range r.Deleted {
		n += v
	}
	return n
}
