package event

import (
	"encoding/json"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

// Event is one fact Interlock observed or caused. It is stored in the
// event log in the same commit as the state change behind it.
type Event struct {
	ID string // unique; sinks deduplicate on it
	// Shard and Seq are the event's position in the event log, assigned
	// by the store: its pipeline's shard (store.EventShard) and its place
	// in that shard, in commit order. Seq is 1, 2, 3 … per shard.
	Shard      int
	Seq        int64
	Time       time.Time
	Type       Type
	PipelineID string
	ScheduleID string
	Date       string // the period: YYYY-MM-DD or YYYY-MM-DDTHH
	Message    string
	Detail     sensor.Object
}

// Level is the event type's fixed level (error for unknown types, so an
// unknown event is never quietly dropped).
func (e Event) Level() Level {
	if s, ok := Lookup(e.Type); ok {
		return s.Level
	}
	return LevelError
}

// Envelope is the EventBridge-compatible form of an event.
type Envelope struct {
	ID         string         `json:"id"`
	Source     string         `json:"source"`
	DetailType Type           `json:"detail-type"`
	Time       string         `json:"time"`
	Detail     EnvelopeDetail `json:"detail"`
}

// EnvelopeDetail is the envelope's detail object.
type EnvelopeDetail struct {
	PipelineID string `json:"pipelineId"`
	ScheduleID string `json:"scheduleId,omitempty"`
	Date       string `json:"date,omitempty"`
	Message    string `json:"message,omitempty"`
	Timestamp  string `json:"timestamp"`
	Level      Level  `json:"level"`
	// BlockedBy is Detail.blockedBy lifted beside the level, so a
	// receiver sees at once that the event is explained by an upstream
	// root and is not a page of its own (docs/root-cause.md).
	BlockedBy *sensor.Object `json:"blockedBy,omitempty"`
	Detail    *sensor.Object `json:"detail,omitempty"`
}

// Source is the envelope source of every Interlock event.
const Source = "interlock"

// Envelope renders e for sinks and EventBridge.
func (e Event) Envelope() Envelope {
	env := Envelope{
		ID:         e.ID,
		Source:     Source,
		DetailType: e.Type,
		Time:       e.Time.UTC().Format(time.RFC3339),
		Detail: EnvelopeDetail{
			PipelineID: e.PipelineID,
			ScheduleID: e.ScheduleID,
			Date:       e.Date,
			Message:    e.Message,
			Timestamp:  e.Time.UTC().Format(time.RFC3339Nano),
			Level:      e.Level(),
		},
	}
	if e.Detail.Len() > 0 {
		d := e.Detail
		env.Detail.Detail = &d
	}
	if v, ok := e.Detail.Get("blockedBy"); ok {
		if o, ok := v.Object(); ok {
			env.Detail.BlockedBy = &o
		}
	}
	return env
}

// MarshalJSON renders the envelope.
func (e Event) MarshalJSON() ([]byte, error) { return json.Marshal(e.Envelope()) }
