package decide

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// TestReject: an item is reported once per fingerprint per day, its
// marker written if absent; another day, or another fingerprint, is news.
func TestReject(t *testing.T) {
	now := runtest.T0
	in := RejectIn{Type: event.SensorRejected, PipelineID: "ghost", Item: "PIPELINE#ghost / SENSOR#x", Reason: "unknown pipeline", Fingerprint: "x:abc"}
	key, kind := RejectMarker(in.PipelineID, in.Fingerprint, now)
	for _, c := range []struct {
		name    string
		markers []store.Marker
		want    bool
	}{
		{name: "first delivery", want: true},
		{name: "again the same day", markers: []store.Marker{{Key: key, Kind: kind, At: now}}},
		{name: "reported yesterday", markers: []store.Marker{{Key: run.Key{PipelineID: "ghost", Period: now.AddDate(0, 0, -1).Format("2006-01-02")}, Kind: kind}}, want: true},
		{name: "another item the same day", markers: []store.Marker{{Key: key, Kind: run.ItemMarker(run.MarkerRejected, "y:def").String()}}, want: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := world{markers: c.markers}
			in.NewID = ids()
			o, reported, _ := decided(t, w, w.facts(needs.Reject(key)), Reject, in, now, nil)
			if reported != c.want {
				t.Fatalf("reported %v, want %v", reported, c.want)
			}
			if !c.want {
				if !o.C.Empty() {
					t.Fatalf("a report again: %+v", o.C)
				}
				return
			}
			if !slices.Equal(types(o.C.Events), []event.Type{event.SensorRejected}) {
				t.Fatalf("events %v, want SENSOR_REJECTED", types(o.C.Events))
			}
			if len(o.C.Markers) != 1 || o.C.Markers[0].Marker.Kind != kind || o.C.Markers[0].Marker.Key != key || !o.C.Markers[0].IfAbsent {
				t.Fatalf("markers %+v, want %s of %v if absent", o.C.Markers, kind, key)
			}
		})
	}
}

// TestCall: a begun call is made while its run awaits it, with the
// pipeline's config; not when the run is gone or moved on.
func TestCall(t *testing.T) {
	w := newWorld(t, triggerDoc)
	p := w.pipes["p1"]
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	inFlight := run.Run{Key: key, State: run.Triggering, TriggerInFlight: true, Attempt: 0, Version: 3}
	id := inFlight.Call()
	for _, c := range []struct {
		name    string
		runs    []run.Run
		removed bool
		notMade bool
		wantErr bool
	}{
		{name: "the run awaits it", runs: []run.Run{inFlight}},
		{name: "the run is gone", notMade: true},
		{name: "the run moved on", runs: []run.Run{{Key: key, State: run.FailedFinal, Attempt: 0, Version: 4}}, notMade: true},
		{name: "another attempt's call", runs: []run.Run{func() run.Run { r := inFlight; r.Attempt = 1; return r }()}, notMade: true},
		{name: "no config of the pipeline", runs: []run.Run{inFlight}, removed: true, wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, triggerDoc)
			w.runs = c.runs
			if c.removed {
				delete(w.rows, "p1")
			}
			f := w.facts(needs.Call(key))
			var got CallToMake
			err := w.decide(t, f, func(f *Facts) (err error) {
				got, err = Call(key, id, f)
				return err
			})
			if (err != nil) != c.wantErr {
				t.Fatalf("err %v, want one %v", err, c.wantErr)
			}
			if c.wantErr {
				return
			}
			if (got.NotMade != "") != c.notMade {
				t.Fatalf("not made %q, want not made %v", got.NotMade, c.notMade)
			}
			if !c.notMade && (got.Pipeline == nil || got.Run.Key != key) {
				t.Fatalf("call %+v, want the run and its pipeline", got)
			}
		})
	}
}

// TestDeleteSensor: a running pipeline's sensor is deleted on its row's
// condition; an unknown pipeline's is refused.
func TestDeleteSensor(t *testing.T) {
	now := runtest.T0
	w := newWorld(t, triggerDoc)
	o, _, _ := decided(t, w, w.facts(needs.DeleteSensor("p1")), DeleteSensor, DeleteSensorIn{PipelineID: "p1", Key: "ready", Env: Env{NewID: ids()}}, now, nil)
	if len(o.C.SensorDeletes) != 1 || o.C.SensorDeletes[0] != (store.SensorDelete{PipelineID: "p1", Key: "ready"}) {
		t.Fatalf("deletes %+v, want p1/ready", o.C.SensorDeletes)
	}
	if c := o.Conditioned(); len(c.PipelineChecks) != 1 {
		t.Fatalf("conditions %+v, want the row's", c.PipelineChecks)
	}
	decided(t, w, w.facts(needs.DeleteSensor("nope")), DeleteSensor, DeleteSensorIn{PipelineID: "nope", Key: "ready"}, now, ErrUnknownPipeline)
}

// TestForget: a running pipeline's row is marked removed, on its
// version; a removed or unknown one is left as it is.
func TestForget(t *testing.T) {
	now := runtest.T0
	for _, c := range []struct {
		name   string
		row    func(store.Pipeline) (store.Pipeline, bool)
		forgot bool
	}{
		{name: "running", row: func(r store.Pipeline) (store.Pipeline, bool) { return r, true }, forgot: true},
		{name: "removed already", row: func(r store.Pipeline) (store.Pipeline, bool) { r.RemovedAt = now.Add(-time.Hour); return r, true }},
		{name: "never stored", row: func(r store.Pipeline) (store.Pipeline, bool) { return r, false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, triggerDoc)
			row, ok := c.row(w.rows["p1"])
			if row.Version = 7; ok {
				w.rows["p1"] = row
			} else {
				delete(w.rows, "p1")
			}
			o, forgot, _ := decided(t, w, w.facts(needs.Pipeline("p1")), Forget, "p1", now, nil)
			if forgot != c.forgot {
				t.Fatalf("forgot %v, want %v", forgot, c.forgot)
			}
			if !c.forgot {
				if !o.C.Empty() {
					t.Fatalf("writes %+v, want none", o.C)
				}
				return
			}
			if len(o.C.Pipelines) != 1 || !o.C.Pipelines[0].Pipeline.RemovedAt.Equal(now) || o.C.Pipelines[0].ExpectVersion != 7 {
				t.Fatalf("pipeline writes %+v, want p1 removed at now on version 7", o.C.Pipelines)
			}
		})
	}
}

// TestSensorWriteNeeds: a write of its inbox item's content names its
// needs with the item's content once the item is read (its period's
// facts, the item no longer among them), with none before; a write of
// given content names them with it.
func TestSensorWriteNeeds(t *testing.T) {
	now := runtest.T0
	w := newWorld(t, triggerDoc)
	ref := needs.SensorRef{PipelineID: "p1", Key: "ready"}
	item := sensor.Object{}
	none := w.facts(needs.Set{})
	withItem := needs.SensorWrite(w.configs("p1"), w.configs, none.ReadRuns, "p1", "ready", &item, now)
	without := needs.SensorWrite(w.configs("p1"), w.configs, none.ReadRuns, "p1", "ready", nil, now)
	if slices.Equal(withItem.Inboxes, without.Inboxes) {
		t.Fatal("the test needs the two namings to differ")
	}
	for _, c := range []struct {
		name string
		read bool // the item is read
		err  error
		data *sensor.Object
		want needs.Set
	}{
		{name: "the item not read yet", want: without},
		{name: "the item read", read: true, want: withItem},
		{name: "the item read, of a bad shape", read: true, err: errors.New("bad shape"), want: without},
		{name: "content given", data: &item, want: withItem},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := w.facts(needs.Set{})
			if c.read {
				f.Asked.Inboxes = []needs.SensorRef{ref}
				f.Inboxes = map[needs.SensorRef]Inbox{ref: {Data: item, Err: c.err}}
			}
			got := SensorWriteNeeds(f, w.configs, "p1", "ready", c.data, now)
			if !got.Minus(c.want).Empty() || !c.want.Minus(got).Empty() {
				t.Fatalf("needs %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestJobVars: a job is told its period's date, and its hour only when
// the period is hourly.
func TestJobVars(t *testing.T) {
	for _, c := range []struct{ period, date, hour string }{
		{"2026-03-10", "2026-03-10", ""},
		{"2026-03-10T07", "2026-03-10", "07"},
	} {
		r := run.Run{Key: run.Key{PipelineID: "p1", ScheduleID: "daily", Period: c.period}, Generation: 2, Attempt: 1}
		v := JobVars(r)
		if v.Date != c.date || v.Hour != c.hour || v.Pipeline != "p1" || v.Schedule != "daily" || v.RunID != RunID(r) {
			t.Fatalf("%s: vars %+v, want date %s hour %q", c.period, v, c.date, c.hour)
		}
	}
}

// TestCallCut: only a failed call its caller's bound cut, the caller
// going on, is left to the crash rules.
func TestCallCut(t *testing.T) {
	for i := range 8 {
		failed, cut, live := i&1 != 0, i&2 != 0, i&4 != 0
		if got, want := CallCut(failed, cut, live), i == 7; got != want {
			t.Fatalf("CallCut(failed %v, cut %v, caller live %v) = %v, want %v", failed, cut, live, got, want)
		}
	}
}
