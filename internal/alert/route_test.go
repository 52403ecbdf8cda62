package alert_test

import (
	"testing"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/event"
)

func TestMatchDecide(t *testing.T) {
	ev := func(typ event.Type, pipeline string) event.Event {
		return event.Event{Type: typ, PipelineID: pipeline, Date: "2026-03-07"}
	}
	tests := []struct {
		name  string
		match alert.Match
		e     event.Event
		want  alert.Verdict
	}{
		// The default selection: problems, and all-clears after a problem.
		{"default: error", alert.Match{}, ev(event.JobFailed, "a"), alert.Send},
		{"default: warning", alert.Match{}, ev(event.SLAWarning, "a"), alert.Send},
		{"default: info", alert.Match{}, ev(event.ValidationPassed, "a"), alert.Skip},
		{"default: dry-run is info", alert.Match{}, ev(event.DryRunWouldTrigger, "a"), alert.Skip},
		{"default: SLA_MET after a problem only", alert.Match{}, ev(event.SLAMet, "a"), alert.SendIfAlerted},
		{"default: SCHEDULE_RECOVERED", alert.Match{}, ev(event.ScheduleRecovered, "a"), alert.SendIfAlerted},
		{"default: TRIGGER_RECOVERED", alert.Match{}, ev(event.TriggerRecovered, "a"), alert.SendIfAlerted},
		{"default: JOB_COMPLETED", alert.Match{}, ev(event.JobCompleted, "a"), alert.SendIfAlerted},
		{"default: unknown type is an error", alert.Match{}, ev("NEW_THING", "a"), alert.Send},
		{"default with pipelines", alert.Match{Pipelines: []string{"a"}}, ev(event.JobFailed, "a"), alert.Send},
		{"default with pipelines: other pipeline", alert.Match{Pipelines: []string{"a"}}, ev(event.JobFailed, "b"), alert.Skip},
		{"default with pipelines: info still skipped", alert.Match{Pipelines: []string{"a"}}, ev(event.JobTriggered, "a"), alert.Skip},

		// Types: exact.
		{"types: listed", alert.Match{Types: []event.Type{event.SLABreach, event.JobFailed}}, ev(event.JobFailed, "a"), alert.Send},
		{"types: not listed", alert.Match{Types: []event.Type{event.SLABreach}}, ev(event.JobFailed, "a"), alert.Skip},
		{"types: an info type by name", alert.Match{Types: []event.Type{event.JobCompleted}}, ev(event.JobCompleted, "a"), alert.Send},
		{"types: SLA_MET every time", alert.Match{Types: []event.Type{event.SLAMet}}, ev(event.SLAMet, "a"), alert.Send},
		{"types: dry-run by name", alert.Match{Types: []event.Type{event.DryRunWouldTrigger}}, ev(event.DryRunWouldTrigger, "a"), alert.Send},

		// Levels: a set, not a minimum.
		{"levels: error", alert.Match{Levels: []event.Level{event.LevelError}}, ev(event.JobFailed, "a"), alert.Send},
		{"levels: error is not warning", alert.Match{Levels: []event.Level{event.LevelError}}, ev(event.SLAWarning, "a"), alert.Skip},
		{"levels: warning is not error", alert.Match{Levels: []event.Level{event.LevelWarning}}, ev(event.JobFailed, "a"), alert.Skip},
		{"levels: info takes all-clears as such", alert.Match{Levels: []event.Level{event.LevelInfo}}, ev(event.SLAMet, "a"), alert.Send},
		{"levels: all", alert.Match{Levels: event.Levels()}, ev(event.ValidationPassed, "a"), alert.Send},

		// Pipelines: ids and globs.
		{"pipelines: exact id", alert.Match{Pipelines: []string{"gold.orders"}, Levels: event.Levels()}, ev(event.JobFailed, "gold.orders"), alert.Send},
		{"pipelines: exact id is not a prefix", alert.Match{Pipelines: []string{"gold"}, Levels: event.Levels()}, ev(event.JobFailed, "gold.orders"), alert.Skip},
		{"pipelines: glob", alert.Match{Pipelines: []string{"silver-*", "gold-*"}, Levels: event.Levels()}, ev(event.JobFailed, "gold-orders"), alert.Send},
		{"pipelines: glob misses", alert.Match{Pipelines: []string{"gold-*"}, Levels: event.Levels()}, ev(event.JobFailed, "silver-orders"), alert.Skip},
		{"pipelines: pipeline-less event", alert.Match{Pipelines: []string{"gold-*"}}, ev(event.WatchdogDegraded, ""), alert.Skip},

		// All given lists must match.
		{"and: all match", alert.Match{Types: []event.Type{event.JobFailed}, Pipelines: []string{"a"}, Levels: []event.Level{event.LevelError}}, ev(event.JobFailed, "a"), alert.Send},
		{"and: type and level disagree", alert.Match{Types: []event.Type{event.SLAWarning}, Levels: []event.Level{event.LevelError}}, ev(event.SLAWarning, "a"), alert.Skip},
		{"and: pipeline differs", alert.Match{Types: []event.Type{event.JobFailed}, Pipelines: []string{"b"}}, ev(event.JobFailed, "a"), alert.Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.match.Decide(tt.e); got != tt.want {
				t.Errorf("Decide(%s on %q) = %v, want %v", tt.e.Type, tt.e.PipelineID, got, tt.want)
			}
		})
	}
}
