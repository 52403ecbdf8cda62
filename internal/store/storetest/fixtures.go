package storetest

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// t0 is the suite's reference instant. It has nanoseconds so a backend
// that rounds to micro- or milliseconds fails the round trips, and it is a
// constant: nothing in the suite reads the clock, as nothing in a store may.
var t0 = time.Date(2026, time.March, 14, 6, 30, 15, 123456789, time.UTC)

// elsewhere is a zone with an odd offset. Fixtures write some times in it:
// the store must keep the instant and hand it back in UTC.
var elsewhere = time.FixedZone("UTC+05:45", 5*3600+45*60)

// farFuture is later than any timer the suite sets, yet within every
// backend's range (nanosecond integers end in 2262).
var farFuture = time.Date(2200, time.January, 1, 0, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func ptr[T any](v T) *T { return &v }

func key(pipeline, schedule, period string) run.Key {
	return run.Key{PipelineID: pipeline, ScheduleID: schedule, Period: period}
}

// ordersDay is the period most cases write to: the daily run of pipeline
// orders on 2026-03-14.
var ordersDay = key("orders", "daily", "2026-03-14")

// sensorData is a sensor body with every JSON shape a writer can send and
// the numbers that naive encodings get wrong.
func sensorData() sensor.Object {
	obj := func(m map[string]sensor.Value) sensor.Value { return sensor.ObjectValue(sensor.NewObject(m)) }
	return sensor.NewObject(map[string]sensor.Value{
		"rows":     sensor.NumberValue(1e6),
		"ratio":    sensor.NumberValue(0.125),
		"tiny":     sensor.NumberValue(2.5e-7),
		"exact":    sensor.IntValue(9007199254740993), // 2^53+1: a float64 round trip loses it
		"negative": sensor.IntValue(-42),
		"text":     sensor.StringValue("5"), // a string holding a number stays a string
		"ok":       sensor.BoolValue(true),
		"nothing":  sensor.NullValue(), // present and null, not missing
		"unicode":  sensor.StringValue("zürich ☃ \"quoted\"\n\ttab"),
		"nested": obj(map[string]sensor.Value{
			"partitions": sensor.ArrayValue([]sensor.Value{
				sensor.IntValue(1), sensor.StringValue("b"),
				obj(map[string]sensor.Value{"deep": obj(map[string]sensor.Value{"deeper": sensor.NumberValue(-3.75)})}),
			}),
			"empty": obj(nil),
			"none":  sensor.ArrayValue([]sensor.Value{}),
		}),
	})
}

// detail is a small object for markers, timers and events.
func detail(k, v string) sensor.Object {
	return sensor.NewObject(map[string]sensor.Value{k: sensor.StringValue(v), "n": sensor.IntValue(7)})
}

// fullPipeline sets every field. Version is deliberately wrong: the store
// owns versions and must ignore it.
func fullPipeline(id string) store.Pipeline {
	return store.Pipeline{
		ID:            id,
		Version:       99,
		ConfigVersion: 3,
		Doc:           []byte("name: " + id + "\nschedule:\n  cron: \"0 6 * * *\"\n"),
		Hash:          "sha256:" + id,
		File:          "pipelines/" + id + ".yaml",
		FirstLoadedAt: at(-48 * time.Hour).In(elsewhere),
		UpdatedAt:     at(0),
		Paused:        true,
		PausedUntil:   at(6*time.Hour + 1),
		PausedAt:      at(5*time.Hour + 3),
		ResumedAt:     at(5*time.Hour + 4),
		RemovedAt:     at(7*time.Hour + 5).In(elsewhere),
		// Out of time order and in another zone: the store keeps the
		// order it was given and returns UTC.
		PauseWindows: []pause.Window{
			{From: at(3*time.Hour + 7), To: at(4*time.Hour + 9).In(elsewhere)},
			{From: at(time.Hour + 1).In(elsewhere), To: at(2*time.Hour + 2)},
		},
		WatchChangedAt: at(-3*time.Hour + 11).In(elsewhere),
	}
}

// fullCalendar sets every field; days and dates out of order, as a file
// may list them (the store keeps the order it was given).
func fullCalendar(name string) store.Calendar {
	return store.Calendar{
		Name:      name,
		Version:   99,
		Days:      []time.Weekday{time.Saturday, time.Sunday, time.Wednesday},
		Dates:     []schedule.Date{{Year: 2026, Month: time.December, Day: 25}, {Year: 2026, Month: time.January, Day: 1}, {Year: 2028, Month: time.February, Day: 29}},
		File:      "calendars/" + name + ".yaml",
		UpdatedAt: at(time.Minute).In(elsewhere),
		RemovedAt: at(2 * time.Minute),
	}
}

// minimalCalendar is a calendar with only what identifies it.
func minimalCalendar(name string) store.Calendar {
	return store.Calendar{Name: name, File: "calendars/" + name + ".yaml"}
}

// minimalPipeline is a pipeline with only what identifies it.
func minimalPipeline(id string) store.Pipeline {
	return store.Pipeline{ID: id, Doc: []byte("name: " + id + "\n"), UpdatedAt: at(0)}
}

func fullSensor(pipeline, key string) store.Sensor {
	return store.Sensor{
		PipelineID: pipeline,
		Key:        key,
		Data:       sensorData(),
		Version:    99,
		ChangedAt:  at(-time.Minute).In(elsewhere),
		WrittenAt:  at(0),
		Watched:    true,
	}
}

func minimalSensor(pipeline, key string, count int64) store.Sensor {
	return store.Sensor{
		PipelineID: pipeline, Key: key,
		Data:      sensor.NewObject(map[string]sensor.Value{"count": sensor.IntValue(count)}),
		ChangedAt: at(0), WrittenAt: at(0),
	}
}

// fullRun sets every field of a run.
func fullRun(k run.Key) run.Run {
	return run.Run{
		Key:             k,
		Version:         99,
		State:           run.Running,
		Outcome:         run.OutcomeRetriesExhausted,
		Cause:           run.CauseRerun,
		Generation:      2,
		Attempt:         3,
		CreatedAt:       at(-2 * time.Hour),
		UpdatedAt:       at(0),
		StateSince:      at(-time.Minute).In(elsewhere),
		ExpiresAt:       at(22 * time.Hour),
		EvalStartedAt:   time.Date(1969, time.July, 20, 20, 17, 40, 1, time.UTC), // before the Unix epoch
		EvalDeadline:    time.Unix(0, 0).UTC(),                                   // the epoch itself is not the zero time
		TriggerErrors:   4,
		TriggerInFlight: true,
		JobRunID:        "jr_2026-03-14_01",
		JobMeta:         map[string]string{"cluster": "etl-1", "step": "s-42", "empty": ""},
		JobStartedAt:    at(-30 * time.Minute),
		PollDeadline:    at(90 * time.Minute),
		EndedAt:         at(time.Nanosecond),
		LastFailure:     &run.Failure{Category: run.Transient, Message: "executor lost\nline two"},
		ConfigVersion:   3,
	}
}

// newRun is a freshly created run, as the engine makes one.
func newRun(k run.Key) run.Run {
	return run.Run{Key: k, State: run.Evaluating, Cause: run.CauseCron,
		CreatedAt: at(0), UpdatedAt: at(0), StateSince: at(0), ConfigVersion: 1}
}

func withState(r run.Run, s run.State) run.Run {
	r.State = s
	if s.Terminal() {
		r.Outcome = run.OutcomeSucceeded
		if s == run.FailedFinal {
			r.Outcome = run.OutcomeRetriesExhausted
		}
	}
	return r
}

func ledgerEntry(k run.Key, seq int) store.LedgerEntry {
	return store.LedgerEntry{Key: k, Seq: seq, Reason: fmt.Sprintf("rerun %d", seq),
		Source: "operator:alice", At: at(time.Duration(seq) * time.Minute).In(elsewhere)}
}

func fullBaseline(k run.Key) store.Baseline {
	return store.Baseline{Key: k, CapturedAt: at(time.Hour), Sensors: map[string]sensor.Object{
		"orders-count": sensorData(),
		"orders-ready": detail("status", "ready"),
	}}
}

func fullMarker(k run.Key, kind string) store.Marker {
	return store.Marker{Key: k, Kind: kind, At: at(time.Second).In(elsewhere), Detail: detail("alert", kind)}
}

func fullTimer(k string, due time.Time) store.Timer {
	return store.Timer{Key: k, Kind: "evaluate", Run: key("orders", "daily", "2026-03-14"),
		DueAt: due, Detail: detail("timer", k)}
}

// newEvent is an event with every field set except Seq, which the store
// assigns.
func newEvent(id string, typ event.Type, k run.Key, when time.Time) event.Event {
	return event.Event{
		ID: id, Time: when, Type: typ,
		PipelineID: k.PipelineID, ScheduleID: k.ScheduleID, Date: k.Period,
		Message: "event " + id, Detail: detail("id", id),
	}
}

// Write helpers: a Change with one record in it.

func createPipeline(p store.Pipeline) store.Change {
	return store.Change{Pipelines: []store.PipelineWrite{{Pipeline: p}}}
}

func putSensor(s store.Sensor, expect int64) store.Change {
	return store.Change{Sensors: []store.SensorWrite{{Sensor: s, ExpectVersion: expect}}}
}

func putRun(r run.Run, expect int64) store.Change {
	return store.Change{Runs: []store.RunWrite{{Run: r, ExpectVersion: expect}}}
}

func putTimer(t store.Timer) store.Change {
	return store.Change{Timers: []store.TimerWrite{{Timer: t}}}
}

func putMarker(m store.Marker, ifAbsent bool) store.Change {
	return store.Change{Markers: []store.MarkerWrite{{Marker: m, IfAbsent: ifAbsent}}}
}

func addEvents(evs ...event.Event) store.Change { return store.Change{Events: evs} }
