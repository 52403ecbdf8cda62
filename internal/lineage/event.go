package lineage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// EventType is a RunEvent's eventType: the run's state transition.
type EventType string

// The event types of the OpenLineage specification.
const (
	Start    EventType = "START"
	Running  EventType = "RUNNING"
	Complete EventType = "COMPLETE"
	Abort    EventType = "ABORT"
	Fail     EventType = "FAIL"
	Other    EventType = "OTHER"
)

// EventTypes lists the event types, in the specification's order.
func EventTypes() []EventType { return []EventType{Start, Running, Complete, Abort, Fail, Other} }

// Terminal reports whether t ends a run (COMPLETE, ABORT, FAIL).
func (t EventType) Terminal() bool { return t == Complete || t == Abort || t == Fail }

// Name is an OpenLineage job or dataset identity.
type Name struct {
	Namespace string
	Name      string
}

func (n Name) String() string { return n.Namespace + "/" + n.Name }

// Event is the part of a RunEvent Interlock reads. Facets it does not
// read are ignored.
type Event struct {
	Type     EventType
	Time     time.Time
	RunID    string
	Job      Name
	Producer string
	// NominalStart is the nominalTime run facet's nominalStartTime; zero
	// when the event has none.
	NominalStart time.Time
	Inputs       []Dataset
	Outputs      []Dataset
}

// Dataset is an input or output of a RunEvent with the facets Interlock
// reads.
type Dataset struct {
	Name
	// RowCount and Bytes are the outputStatistics facet's rowCount and
	// size (output datasets), or the dataQualityMetrics facet's rowCount
	// and bytes (input datasets); nil when absent.
	RowCount *int64
	Bytes    *int64
	// Assertions is the dataQualityAssertions facet; nil when absent.
	Assertions []Assertion
}

// Assertion is one entry of the dataQualityAssertions facet.
type Assertion struct {
	Assertion string
	Column    string
	Success   bool
}

// ErrInvalid is wrapped by every error of Parse.
var ErrInvalid = errors.New("invalid OpenLineage run event")

// FieldError is an event that Parse refuses, with the JSON field at fault.
type FieldError struct {
	Field string // "run.runId", "outputs[1].outputFacets.outputStatistics.rowCount"; "" for the body
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return "field " + e.Field + ": " + e.Msg
}

func (e *FieldError) Unwrap() error { return ErrInvalid }

// Bounds on what an event may hold: identities go into sensor data and
// events, so a producer's bug cannot make them unbounded.
const (
	MaxNameBytes  = 1024
	MaxRunIDBytes = 256
	MaxDatasets   = 1000
	MaxAssertions = 10000
)

// The JSON shapes read. Pointers tell absent from zero.
type rawEvent struct {
	EventType *string     `json:"eventType"`
	EventTime *string     `json:"eventTime"`
	Run       *rawRun     `json:"run"`
	Job       *rawName    `json:"job"`
	Producer  *string     `json:"producer"`
	SchemaURL *string     `json:"schemaURL"`
	Inputs    []rawInput  `json:"inputs"`
	Outputs   []rawOutput `json:"outputs"`
}

type rawRun struct {
	RunID  *string `json:"runId"`
	Facets *struct {
		NominalTime *struct {
			NominalStartTime *string `json:"nominalStartTime"`
		} `json:"nominalTime"`
	} `json:"facets"`
}

type rawName struct {
	Namespace *string `json:"namespace"`
	Name      *string `json:"name"`
}

type rawAssertions struct {
	Assertions []struct {
		Assertion string `json:"assertion"`
		Column    string `json:"column"`
		Success   *bool  `json:"success"`
	} `json:"assertions"`
}

type rawInput struct {
	rawName
	InputFacets *struct {
		DataQualityMetrics *struct {
			RowCount *int64 `json:"rowCount"`
			Bytes    *int64 `json:"bytes"`
		} `json:"dataQualityMetrics"`
		DataQualityAssertions *rawAssertions `json:"dataQualityAssertions"`
	} `json:"inputFacets"`
}

type rawOutput struct {
	rawName
	OutputFacets *struct {
		OutputStatistics *struct {
			RowCount *int64 `json:"rowCount"`
			Size     *int64 `json:"size"`
		} `json:"outputStatistics"`
		// Not in the specification's output facets, but producers
		// (dbt-ol for tests on a model) attach it there too.
		DataQualityAssertions *rawAssertions `json:"dataQualityAssertions"`
	} `json:"outputFacets"`
}

// Parse reads a RunEvent. It refuses, naming the field, a body that is
// not one JSON object, an event without eventTime, run.runId, job
// namespace and name or producer, an unknown eventType (absent is OTHER,
// as the specification allows), times that are not RFC 3339 with an
// offset, and negative or fractional counts. A DatasetEvent or JobEvent
// (no run) is refused: only run events say that something happened.
func Parse(body []byte) (Event, error) {
	var raw rawEvent
	if len(bytes.TrimSpace(body)) == 0 {
		return Event{}, &FieldError{Msg: "request body is empty: want an OpenLineage RunEvent (a JSON object)"}
	}
	if !utf8.Valid(body) {
		return Event{}, &FieldError{Msg: "request body is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&raw); err != nil {
		return Event{}, jsonError(err)
	}
	if dec.More() {
		return Event{}, &FieldError{Msg: "request body holds more than one JSON value: want one RunEvent"}
	}
	if _, err := dec.Token(); err == nil {
		return Event{}, &FieldError{Msg: "request body holds more than one JSON value: want one RunEvent"}
	}
	var ev Event
	var err error
	if ev.Type, err = eventType(raw.EventType); err != nil {
		return Event{}, err
	}
	if raw.EventTime == nil {
		return Event{}, missing("eventTime")
	}
	if ev.Time, err = instant("eventTime", *raw.EventTime); err != nil {
		return Event{}, err
	}
	if raw.Run == nil {
		return Event{}, &FieldError{Field: "run", Msg: "missing: want a RunEvent (DatasetEvent and JobEvent are not read)"}
	}
	if ev.RunID, err = text("run.runId", raw.Run.RunID, MaxRunIDBytes); err != nil {
		return Event{}, err
	}
	if f := raw.Run.Facets; f != nil && f.NominalTime != nil && f.NominalTime.NominalStartTime != nil {
		if ev.NominalStart, err = instant("run.facets.nominalTime.nominalStartTime", *f.NominalTime.NominalStartTime); err != nil {
			return Event{}, err
		}
	}
	if raw.Job == nil {
		return Event{}, missing("job")
	}
	if ev.Job, err = name("job", raw.Job); err != nil {
		return Event{}, err
	}
	if ev.Producer, err = text("producer", raw.Producer, MaxNameBytes); err != nil {
		return Event{}, err
	}
	if len(raw.Inputs) > MaxDatasets || len(raw.Outputs) > MaxDatasets {
		return Event{}, &FieldError{Field: "inputs", Msg: fmt.Sprintf("more than %d datasets", MaxDatasets)}
	}
	for i, in := range raw.Inputs {
		d, err := input(fmt.Sprintf("inputs[%d]", i), in)
		if err != nil {
			return Event{}, err
		}
		ev.Inputs = append(ev.Inputs, d)
	}
	for i, out := range raw.Outputs {
		d, err := output(fmt.Sprintf("outputs[%d]", i), out)
		if err != nil {
			return Event{}, err
		}
		ev.Outputs = append(ev.Outputs, d)
	}
	return ev, nil
}

func missing(field string) error { return &FieldError{Field: field, Msg: "missing"} }

func eventType(s *string) (EventType, error) {
	if s == nil {
		return Other, nil
	}
	for _, t := range EventTypes() {
		if string(t) == *s {
			return t, nil
		}
	}
	names := make([]string, 0, len(EventTypes()))
	for _, t := range EventTypes() {
		names = append(names, string(t))
	}
	return "", &FieldError{Field: "eventType", Msg: fmt.Sprintf("%q is not an event type (want one of %s)", clip(*s), strings.Join(names, ", "))}
}

// instant reads an RFC 3339 date-time, which the specification's
// date-time format is: the offset is required, so the instant is never
// a guess in the server's zone.
func instant(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, &FieldError{Field: field, Msg: fmt.Sprintf("%q is not an RFC 3339 date-time with an offset (2026-11-27T03:00:00Z)", clip(s))}
	}
	return t, nil
}

func text(field string, s *string, max int) (string, error) {
	switch {
	case s == nil:
		return "", missing(field)
	case strings.TrimSpace(*s) == "":
		return "", &FieldError{Field: field, Msg: "must not be empty"}
	case len(*s) > max:
		return "", &FieldError{Field: field, Msg: fmt.Sprintf("longer than %d bytes", max)}
	}
	return *s, nil
}

func name(field string, r *rawName) (Name, error) {
	ns, err := text(field+".namespace", r.Namespace, MaxNameBytes)
	if err != nil {
		return Name{}, err
	}
	n, err := text(field+".name", r.Name, MaxNameBytes)
	if err != nil {
		return Name{}, err
	}
	return Name{Namespace: ns, Name: n}, nil
}

func input(field string, r rawInput) (Dataset, error) {
	var f facetsRead
	if in := r.InputFacets; in != nil {
		f.assertions, f.assertionsAt = in.DataQualityAssertions, field+".inputFacets.dataQualityAssertions"
		if m := in.DataQualityMetrics; m != nil {
			f.rows, f.rowsAt = m.RowCount, field+".inputFacets.dataQualityMetrics.rowCount"
			f.bytes, f.bytesAt = m.Bytes, field+".inputFacets.dataQualityMetrics.bytes"
		}
	}
	return dataset(field, r.rawName, f)
}

func output(field string, r rawOutput) (Dataset, error) {
	var f facetsRead
	if out := r.OutputFacets; out != nil {
		f.assertions, f.assertionsAt = out.DataQualityAssertions, field+".outputFacets.dataQualityAssertions"
		if s := out.OutputStatistics; s != nil {
			f.rows, f.rowsAt = s.RowCount, field+".outputFacets.outputStatistics.rowCount"
			f.bytes, f.bytesAt = s.Size, field+".outputFacets.outputStatistics.size"
		}
	}
	return dataset(field, r.rawName, f)
}

// facetsRead are a dataset's facets Interlock reads, with the JSON path
// of each for errors.
type facetsRead struct {
	rows, bytes                   *int64
	assertions                    *rawAssertions
	rowsAt, bytesAt, assertionsAt string
}

func dataset(field string, raw rawName, f facetsRead) (Dataset, error) {
	n, err := name(field, &raw)
	if err != nil {
		return Dataset{}, err
	}
	d := Dataset{Name: n}
	if d.RowCount, err = count(f.rowsAt, f.rows); err != nil {
		return Dataset{}, err
	}
	if d.Bytes, err = count(f.bytesAt, f.bytes); err != nil {
		return Dataset{}, err
	}
	if d.Assertions, err = assertions(f.assertionsAt, f.assertions); err != nil {
		return Dataset{}, err
	}
	return d, nil
}

func count(field string, n *int64) (*int64, error) {
	if n != nil && *n < 0 {
		return nil, &FieldError{Field: field, Msg: fmt.Sprintf("%d is negative", *n)}
	}
	return n, nil
}

func assertions(field string, r *rawAssertions) ([]Assertion, error) {
	if r == nil {
		return nil, nil
	}
	if len(r.Assertions) > MaxAssertions {
		return nil, &FieldError{Field: field + ".assertions", Msg: fmt.Sprintf("more than %d assertions", MaxAssertions)}
	}
	out := make([]Assertion, 0, len(r.Assertions))
	for i, a := range r.Assertions {
		if a.Success == nil {
			return nil, missing(fmt.Sprintf("%s.assertions[%d].success", field, i))
		}
		out = append(out, Assertion{Assertion: a.Assertion, Column: a.Column, Success: *a.Success})
	}
	return out, nil
}

// jsonError names the field of a JSON value of the wrong type, and the
// byte offset of a syntax error.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return &FieldError{Msg: fmt.Sprintf("want a JSON object (an OpenLineage RunEvent), got %s", te.Value)}
		}
		return &FieldError{Field: field, Msg: fmt.Sprintf("want %s, got %s", jsonKind(te.Type.Kind().String()), te.Value)}
	case errors.As(err, &se):
		return &FieldError{Msg: fmt.Sprintf("not valid JSON at byte %d: %v", se.Offset, err)}
	}
	return &FieldError{Msg: "not valid JSON: " + err.Error()}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int64":
		return "a whole number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "a list"
	case "struct", "ptr":
		return "an object"
	}
	return goKind
}

// clip bounds a producer's value quoted in an error.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
