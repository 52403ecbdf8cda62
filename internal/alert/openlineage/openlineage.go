// Package openlineage is the openlineage sink: it posts an OpenLineage
// RunEvent (https://openlineage.io) for each alert to a lineage backend
// (Marquez, DataHub, OpenMetadata, …) at <url>/api/v1/lineage, the path
// OpenLineage's HTTP transport posts to, so that Interlock's runs appear in
// the lineage graph beside the jobs they guard.
//
// Each pipeline is an OpenLineage job (namespace: the sink's, name: the
// pipeline id); each period of it is one OpenLineage run, whose runId is
// derived from the namespace, pipeline and period (RunID), so every event
// of a period — and an upstream's run named as a parent — agrees on it
// without any state. The event types map as: JOB_TRIGGERED → START (its
// first attempt; a retry's trigger is RUNNING), JOB_COMPLETED → COMPLETE,
// RETRY_EXHAUSTED of a job and JOB_POLL_EXHAUSTED → FAIL, anything else
// → OTHER (the specification's event that changes no state and carries
// facets: the verdicts of VALIDATION_PASSED, an SLA breach). Facets:
// nominalTime (the period's start and end, when the event names them),
// parent (the upstream run a run its upstreams opened counts as started
// by) and interlock, Interlock's own (pipeline, period, the event and its
// detail: rule verdicts, attempt, job run id, cause).
//
// Delivery is the webhook sink's: a 2xx is success; 408, 429 and 5xx are
// worth retrying (honouring Retry-After); other answers and redirects
// (not followed: the api key must not travel elsewhere) are not. The api
// key, when configured, is sent as "Authorization: Bearer <key>", as the
// transport's api_key is. Errors show the URL's scheme and host only.
package openlineage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/alerthttp"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Specification constants.
const (
	// Producer is the _producer of every event and facet Interlock writes.
	Producer = "https://github.com/interlockhq/interlock"
	// RunEventSchema is the RunEvent's schemaURL.
	RunEventSchema = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
	// Facet schemas.
	NominalTimeSchema = "https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet"
	ParentSchema      = "https://openlineage.io/spec/facets/1-0-1/ParentRunFacet.json#/$defs/ParentRunFacet"
	JobTypeSchema     = "https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet"
	// InterlockSchema documents the interlock run facet.
	InterlockSchema = "https://github.com/interlockhq/interlock/blob/main/docs/openlineage.md#the-interlock-run-facet"
	// Path is where the events are posted, under the configured URL.
	Path = "/api/v1/lineage"
	// DefaultNamespace is the jobs' namespace when none is configured.
	DefaultNamespace = "interlock"
	// ProcessJob is the job of events that name no pipeline (watchdog).
	ProcessJob = "interlock"
)

// DefaultTypes are the events an openlineage entry receives when its
// match names no types or levels: a run's lifecycle and its verdicts.
func DefaultTypes() []event.Type {
	return []event.Type{event.ValidationPassed, event.ValidationExhausted, event.JobTriggered, event.JobCompleted,
		event.JobFailed, event.JobPollExhausted, event.RetryExhausted}
}

// Config configures a Sink.
type Config struct {
	Name      string // default Name(URL)
	URL       string // the backend's base URL (OPENLINEAGE_URL); events go to URL + Path
	Namespace string // default DefaultNamespace
	APIKey    alert.Secret
	Client    *http.Client // default alerthttp.NewClient()
}

// Sink posts RunEvents to a lineage backend.
type Sink struct {
	alerthttp.Poster
	endpoint, namespace string
}

var _ alert.Sink = (*Sink)(nil)

// New checks c and returns the sink; a configured api key is read once
// here so that a missing one fails at start.
func New(c Config) (*Sink, error) {
	p, err := alerthttp.NewPoster("openlineage", c.Name, c.URL, c.APIKey, "api key", c.Client)
	if err != nil {
		return nil, err
	}
	s := &Sink{Poster: p, endpoint: strings.TrimRight(c.URL, "/") + Path, namespace: c.Namespace}
	if s.namespace == "" {
		s.namespace = DefaultNamespace
	}
	return s, nil
}

// Name is the default sink name of a backend URL: "openlineage:", the
// host and a short hash of the whole URL.
func Name(rawURL string) string { return alerthttp.SinkName("openlineage", rawURL) }

// Deliver implements alert.Sink.
func (s *Sink) Deliver(ctx context.Context, a alert.Alert) (bool, error) {
	return s.Post(ctx, alerthttp.Delivery{URL: s.endpoint, EventID: a.Event.ID, Body: RunEventOf(a.Event, s.namespace),
		Authorize: func(h http.Header, key string, _ []byte) { h.Set("Authorization", "Bearer "+key) },
	})
}

// RunEvent is the RunEvent Interlock posts.
type RunEvent struct {
	EventType string    `json:"eventType"`
	EventTime string    `json:"eventTime"`
	Producer  string    `json:"producer"`
	SchemaURL string    `json:"schemaURL"`
	Run       Run       `json:"run"`
	Job       Job       `json:"job"`
	Inputs    []Dataset `json:"inputs"`
	Outputs   []Dataset `json:"outputs"`
}

// Run is the event's run.
type Run struct {
	RunID  string    `json:"runId"`
	Facets RunFacets `json:"facets"`
}

// RunFacets are the run facets Interlock writes.
type RunFacets struct {
	NominalTime *NominalTime    `json:"nominalTime,omitempty"`
	Parent      *Parent         `json:"parent,omitempty"`
	Interlock   *InterlockFacet `json:"interlock"`
}

// Facet is what every facet carries.
type Facet struct {
	Producer  string `json:"_producer"`
	SchemaURL string `json:"_schemaURL"`
}

// NominalTime is the nominalTime run facet: the period's instants.
type NominalTime struct {
	Facet
	NominalStartTime string `json:"nominalStartTime"`
	NominalEndTime   string `json:"nominalEndTime,omitempty"`
}

// Parent is the parent run facet.
type Parent struct {
	Facet
	Run struct {
		RunID string `json:"runId"`
	} `json:"run"`
	Job JobRef `json:"job"`
}

// JobRef names a job.
type JobRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// InterlockFacet is Interlock's own run facet: the event behind the
// RunEvent.
type InterlockFacet struct {
	Facet
	PipelineID string         `json:"pipelineId,omitempty"`
	ScheduleID string         `json:"scheduleId,omitempty"`
	Period     string         `json:"period,omitempty"`
	EventID    string         `json:"eventId"`
	Event      event.Type     `json:"event"`
	Level      event.Level    `json:"level"`
	Message    string         `json:"message,omitempty"`
	Detail     *sensor.Object `json:"detail,omitempty"` // the rules' verdicts (rules, passedRules), attempt, jobRunId, cause, …
}

// Job is the event's job.
type Job struct {
	JobRef
	Facets struct {
		JobType JobType `json:"jobType"`
	} `json:"facets"`
}

// JobType is the jobType job facet.
type JobType struct {
	Facet
	ProcessingType string `json:"processingType"`
	Integration    string `json:"integration"`
	JobType        string `json:"jobType"`
}

// Dataset is a dataset of the event (Interlock names none).
type Dataset struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// RunEventOf maps an Interlock event to the RunEvent posted for it, in
// namespace.
func RunEventOf(e event.Event, namespace string) RunEvent {
	job := e.PipelineID
	if job == "" {
		job = ProcessJob
	}
	ev := RunEvent{
		EventType: string(TypeOf(e)),
		EventTime: e.Time.UTC().Format(time.RFC3339Nano),
		Producer:  Producer,
		SchemaURL: RunEventSchema,
		Run:       Run{RunID: RunID(namespace, job, e.Date)},
		Inputs:    []Dataset{},
		Outputs:   []Dataset{},
	}
	ev.Job.JobRef = JobRef{Namespace: namespace, Name: job}
	ev.Job.Facets.JobType = JobType{Facet: facet(JobTypeSchema), ProcessingType: "BATCH", Integration: "INTERLOCK", JobType: "PIPELINE"}
	f := &InterlockFacet{Facet: facet(InterlockSchema), PipelineID: e.PipelineID, ScheduleID: e.ScheduleID, Period: e.Date,
		EventID: e.ID, Event: e.Type, Level: e.Level(), Message: e.Message}
	if e.Detail.Len() > 0 {
		d := e.Detail
		f.Detail = &d
	}
	ev.Run.Facets.Interlock = f
	start, okStart := detailString(e.Detail, "periodStart")
	end, _ := detailString(e.Detail, "periodEnd")
	if okStart {
		ev.Run.Facets.NominalTime = &NominalTime{Facet: facet(NominalTimeSchema), NominalStartTime: start, NominalEndTime: end}
	}
	if up, ok := detailString(e.Detail, "parentPipeline"); ok {
		per, _ := detailString(e.Detail, "parentPeriod")
		p := &Parent{Facet: facet(ParentSchema), Job: JobRef{Namespace: namespace, Name: up}}
		p.Run.RunID = RunID(namespace, up, per)
		ev.Run.Facets.Parent = p
	}
	return ev
}

// EventType is an OpenLineage event type.
type EventType string

// The event types Interlock posts.
const (
	Start    EventType = "START"
	Running  EventType = "RUNNING"
	Complete EventType = "COMPLETE"
	Fail     EventType = "FAIL"
	Other    EventType = "OTHER"
)

// TypeOf is the OpenLineage event type an Interlock event is posted as.
func TypeOf(e event.Event) EventType {
	switch e.Type {
	case event.JobTriggered:
		if n, ok := e.Detail.Get("attempt"); ok {
			if a, ok := n.Int(); ok && a > 1 {
				return Running // a retry of the period's run
			}
		}
		return Start
	case event.JobCompleted:
		return Complete
	case event.JobPollExhausted:
		return Fail
	case event.RetryExhausted:
		if s, _ := detailString(e.Detail, "source"); s == "job" {
			return Fail
		}
	}
	return Other
}

// RunID is the runId of a pipeline's period in namespace: a UUID (version
// 8, RFC 9562) from their SHA-256, so every event of the period, and a
// downstream naming it as parent, derive the same one. An event without
// a period has the pipeline's run of no period.
func RunID(namespace, job, period string) string {
	sum := sha256.Sum256([]byte(namespace + "\x00" + job + "\x00" + period))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func facet(schema string) Facet { return Facet{Producer: Producer, SchemaURL: schema} }

func detailString(o sensor.Object, field string) (string, bool) {
	v, ok := o.Get(field)
	if !ok {
		return "", false
	}
	s, ok := v.Str()
	return s, ok && s != ""
}
