package run

import (
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Step is the next thing a runtime must do for a run. A runtime sequences
// steps (locally with durable timers, on AWS with a state machine); the
// decisions are made here.
type Step string

// Steps.
const (
	StepNone     Step = ""         // nothing: the run is terminal or waits for a person
	StepEvaluate Step = "evaluate" // evaluate the validation rules
	StepTrigger  Step = "trigger"  // call the job's trigger
	StepPoll     Step = "poll"     // ask the job how it is doing
)

// Note is an event a decision wants emitted; the runtime stamps it with
// an id, the time and the run's identity.
type Note struct {
	Type    event.Type
	Message string
	Detail  sensor.Object
}

// Effect is what a decision asks of the runtime besides storing the run.
type Effect struct {
	Notes  []Note
	Next   Step
	NextAt time.Time // when to take Next
	// LedgerReason, when set, appends a rerun-ledger entry (budgets count it).
	LedgerReason string
	LedgerSource string
	// Succeeded: the job succeeded — capture the post-run baseline and give
	// the SLA verdict.
	Succeeded bool
	// Ended: the run ended without success — the period's SLA alerts are
	// suppressed (the failure event carries the news).
	Ended bool
}

// DropsSLATimers reports whether the period's SLA timers go with this
// effect: the run succeeded (the verdict is given at once) or ended
// without success (the failure event carries the news).
func (e Effect) DropsSLATimers() bool { return e.Succeeded || e.Ended }

func (e *Effect) note(t event.Type, msg string, kv ...any) {
	e.Notes = append(e.Notes, Note{Type: t, Message: msg, Detail: Detail(kv...)})
}

// Detail builds an event detail object from key/value pairs. Values may be
// string, int, int64, float64, bool, time.Time (RFC3339), time.Duration
// (Go syntax) or sensor.Value; anything else is rendered with %v.
func Detail(kv ...any) sensor.Object {
	fields := make(map[string]sensor.Value, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		fields[k] = toValue(kv[i+1])
	}
	return sensor.NewObject(fields)
}

func toValue(v any) sensor.Value {
	switch x := v.(type) {
	case sensor.Value:
		return x
	case string:
		return sensor.StringValue(x)
	case int:
		return sensor.IntValue(int64(x))
	case int64:
		return sensor.IntValue(x)
	case float64:
		return sensor.NumberValue(x)
	case bool:
		return sensor.BoolValue(x)
	case time.Time:
		return sensor.StringValue(x.UTC().Format(time.RFC3339))
	case time.Duration:
		return sensor.StringValue(x.String())
	case nil:
		return sensor.NullValue()
	}
	return sensor.StringValue(fmtAny(v))
}
