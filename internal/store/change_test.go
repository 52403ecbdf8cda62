package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// Two different records of one kind whose fields, written one after
// another, read the same ("a/" + "b" and "a" + "/b") are two records: Check
// names a record by its fields, not by their concatenated text.
func TestCheckTellsApartRecordsWhoseTextsCollide(t *testing.T) {
	k := run.Key{PipelineID: "p", ScheduleID: "daily", Period: "2026-03-01"}
	for name, c := range map[string]Change{
		"sensors": {SensorDeletes: []SensorDelete{{PipelineID: "a/", Key: "b"}, {PipelineID: "a", Key: "/b"}}},
		"events":  {Events: []event.Event{{PipelineID: "p"}, {ID: "#0", PipelineID: "p"}}},
		"alerts sent": {AlertsSent: []AlertSent{
			{Sink: "s", Key: k, Type: "A B", Hash: "h"},
			{Sink: "s", Key: k, Type: "A", Hash: "B h"},
		}},
		"dead letters": {DeadLetters: []DeadLetter{{Sink: "a b", EventID: "c"}, {Sink: "a", EventID: "b c"}}},
	} {
		if err := c.Check(); err != nil {
			t.Errorf("%s: %v, want two distinct records accepted", name, err)
		}
	}
}

// A record touched twice in one Change is refused, whichever list touches
// it the second time, and the error names it.
func TestCheckRefusesARecordTouchedTwice(t *testing.T) {
	k := run.Key{PipelineID: "p", ScheduleID: "daily", Period: "2026-03-01"}
	for name, c := range map[string]Change{
		"sensor":      {Sensors: []SensorWrite{{Sensor: Sensor{PipelineID: "p", Key: "k"}}}, SensorDeletes: []SensorDelete{{PipelineID: "p", Key: "k"}}},
		"ledger":      {Ledger: []LedgerEntry{{Key: k, Seq: 2}, {Key: k, Seq: 2}}},
		"marker":      {Markers: []MarkerWrite{{Marker: Marker{Key: k, Kind: "m"}}}, MarkerDeletes: []MarkerDelete{{Key: k, Kind: "m"}}},
		"timer":       {Timers: []TimerWrite{{Timer: Timer{Key: "t"}}}, TimerDeletes: []TimerDelete{{Key: "t"}}},
		"event":       {Events: []event.Event{{ID: "e", PipelineID: "p"}, {ID: "e", PipelineID: "q"}}},
		"alert sent":  {AlertsSent: []AlertSent{{Sink: "s", Key: k, Type: "T", Hash: "h"}, {Sink: "s", Key: k, Type: "T", Hash: "h"}}},
		"baseline":    {Baselines: []Baseline{{Key: k}}, BaselineDelete: []run.Key{k}},
		"dead letter": {DeadLetters: []DeadLetter{{Sink: "s", EventID: "e"}, {Sink: "s", EventID: "e"}}},
	} {
		err := c.Check()
		if !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want ErrInvalidChange naming the %s", name, err, name)
		}
	}
	// The same fields under two kinds are two records.
	if err := (Change{Ledger: []LedgerEntry{{Key: k, Seq: 1}}, Baselines: []Baseline{{Key: k}}, Runs: []RunWrite{{Run: run.Run{Key: k}}}}).Check(); err != nil {
		t.Errorf("a run, its baseline and its ledger entry: %v", err)
	}
}

// BenchmarkCheck checks a Change the size of a busy evaluation's: a run,
// its ledger entry, sensors, markers, timers, events and an alert record.
func BenchmarkCheck(b *testing.B) {
	k := run.Key{PipelineID: "pipeline-0042", ScheduleID: "daily", Period: "2026-03-01"}
	c := Change{
		Runs:          []RunWrite{{Run: run.Run{Key: k}}},
		Ledger:        []LedgerEntry{{Key: k, Seq: 3}},
		Sensors:       []SensorWrite{{Sensor: Sensor{PipelineID: k.PipelineID, Key: "orders"}}, {Sensor: Sensor{PipelineID: k.PipelineID, Key: "customers"}}},
		Markers:       []MarkerWrite{{Marker: Marker{Key: k, Kind: "sla-warn"}}, {Marker: Marker{Key: k, Kind: "sla-breach"}}},
		Timers:        []TimerWrite{{Timer: Timer{Key: "eval/pipeline-0042/daily"}}},
		TimerDeletes:  []TimerDelete{{Key: "sla/pipeline-0042/daily/2026-03-01"}},
		Events:        []event.Event{{ID: "e1", PipelineID: k.PipelineID}, {ID: "e2", PipelineID: k.PipelineID}, {PipelineID: k.PipelineID}},
		AlertsSent:    []AlertSent{{Sink: "slack", Key: k, Type: "SLA_WARNING", Hash: "abc"}},
		DeadLetters:   []DeadLetter{{Sink: "slack", EventID: "e0"}},
		SensorDeletes: []SensorDelete{{PipelineID: k.PipelineID, Key: "stale"}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Check(); err != nil {
			b.Fatal(err)
		}
	}
}
