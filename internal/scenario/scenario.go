// Package scenario reads scenario files, the public format behind
// `interlock simulate` (see docs/scenarios.md): pipelines, simulated job
// behaviour, a timeline of actions on a virtual clock and expectations on
// the events that come out. It only parses and checks the file; running a
// scenario is the simulator's job.
package scenario

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
)

// File is a parsed, checked scenario.
type File struct {
	Path      string
	Name      string
	Start     time.Time
	End       time.Time
	Settings  *pipeline.Settings
	Calendars map[string]schedule.Calendar
	Pipelines []*pipeline.Pipeline
	// Docs are the pipeline documents as loaded, in Pipelines order: the
	// simulator hands them to the engine as a reload would.
	Docs     []Doc
	Jobs     map[string][]Job // per pipeline id, in trigger order
	Timeline []Action         // sorted by At; file order among equal times
	Expect   Expect
}

// Doc is one pipeline document and the name it is known by in messages.
type Doc struct {
	File string
	Data []byte
}

// Result is how a simulated job ends.
type Result string

// Job results.
const (
	Success Result = "success"
	Fail    Result = "fail"
	Timeout Result = "timeout" // the job itself reports a timeout
	Hang    Result = "hang"    // the job never reports
)

// Category is the failure category a failing simulated job reports.
type Category string

// Failure categories.
const (
	Transient Category = "TRANSIENT"
	Permanent Category = "PERMANENT"
	TimeoutC  Category = "TIMEOUT"
)

// DefaultJob is what a trigger gets once a pipeline's job list is used up.
var DefaultJob = Job{Duration: time.Minute, Result: Success}

// Job describes one simulated job run.
type Job struct {
	Duration      time.Duration // trigger to result; 0 = synchronous
	Result        Result
	Category      Category // on Fail; Transient by default
	TriggerErrors int      // failed trigger calls before the call succeeds
	Crash         Crash    // the process stops during the trigger call ("" : it does not)
}

// Crash is how the process stops during a simulated job's trigger call:
// after the "call in flight" mark, before the call's answer is recorded.
// The simulator starts a new process on the same store at once.
type Crash string

// Crashes.
const (
	CrashAfterStart  Crash = "after-start"  // the job system received the call: the job runs
	CrashBeforeStart Crash = "before-start" // it did not: no job
)

// Action is one timeline entry; exactly one of its action fields is set.
type Action struct {
	At   time.Time
	Line int

	Sensor       *SensorWrite
	DeleteSensor *SensorRef
	Rerun        *Rerun
	Config       *ConfigChange
	Pause        *Pause
	Resume       *PipelineRef
	Restart      bool
	// Backfill asks for a backfill of a range of past periods;
	// CancelBackfill cancels the pipeline's running one.
	Backfill       *Backfill
	CancelBackfill *PipelineRef
	// Silence creates a silence as POST /v1/silences would;
	// ExpireSilence ends one as DELETE /v1/silences/{id} would.
	Silence       *Silence
	ExpireSilence *SilenceRef

	// Refused says the action must be refused (as the API would answer
	// 4xx): the simulator checks it like an expectation. A refusal not
	// marked so is still printed, but fails no expectation.
	Refused bool
}

// SensorWrite writes a sensor as PUT /v1/pipelines/{pipeline}/sensors/{key}
// would. Data is rendered at the action's virtual time (see Render).
type SensorWrite struct {
	Pipeline string
	Key      string
	Data     *yaml.Node
}

// SensorRef names a stored sensor.
type SensorRef struct {
	Pipeline string
	Key      string
}

// Rerun is a rerun request.
type Rerun struct {
	Pipeline string
	Date     string
	Reason   string // "manual" when not given
}

// Backfill is a backfill request, as POST /v1/pipelines/{id}/backfills
// (Only defaults to "missing", MaxActive to 1).
type Backfill struct {
	Pipeline  string
	From, To  string
	Only      string
	MaxActive int
	Reverse   bool
	DryRun    bool
}

// ConfigChange adds or replaces a pipeline as a reload would. The document
// is decoded when the action runs: an invalid one is refused at that point
// (CONFIG_INVALID), it does not make the scenario invalid.
type ConfigChange struct {
	Node *yaml.Node // the inline document, or nil when File is set
	File string     // path of a pipeline file, resolved against the scenario
}

// Silence is a new silence (docs/silences.md). Exactly one of Duration
// and Until is set; ID is optional (the simulator names it silence-1,
// silence-2 … in timeline order otherwise).
type Silence struct {
	ID       string
	Matchers silence.Matchers
	Duration time.Duration
	Until    time.Time
	Comment  string
}

// SilenceRef names a silence.
type SilenceRef struct {
	ID string
}

// PipelineRef names a pipeline.
type PipelineRef struct {
	Pipeline string
}

// Pause pauses a pipeline, until a time (zero: until a resume), as
// POST /v1/pipelines/{id}/pause would.
type Pause struct {
	Pipeline string
	Until    time.Time
}

// Expect holds the expectations of a scenario.
type Expect struct {
	Events []Matcher // each must match (Count times, or at least once)
	Absent []Matcher // each must match nothing
	// Order lists sequences of matchers: in each, the first event each
	// matcher matches comes in the log after the previous one's (at one
	// instant too: causal order, docs/scenarios.md).
	Order [][]Matcher
}

// Matcher selects events.
type Matcher struct {
	Line     int
	Type     event.Type
	Pipeline string
	Schedule string
	Date     string
	After    *time.Time // inclusive
	Before   *time.Time // inclusive
	Detail   map[string]sensor.Value
	Count    *int
	// BlockedBy, when set, is the pipeline the event's Detail.blockedBy
	// names (its root cause, docs/root-cause.md).
	BlockedBy string
	// Paged, when set, is whether a default alert route pages the event
	// on its own: a warning or an error, not an all-clear, not blocked by
	// an upstream root (Detail.blockedBy), and not silenced.
	Paged *bool
	// Silenced, when set, is whether the event matched a silence or a
	// maintenance window (judged by its time, as the alert worker judges
	// it; docs/silences.md).
	Silenced *bool
	// Message, when set, is a text the event's message contains; with
	// MessageTimes, exactly that many times (0: not at all).
	Message      string
	MessageTimes *int
}
