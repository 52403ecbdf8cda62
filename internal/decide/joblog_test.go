package decide

import (
	"errors"
	"testing"

	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/store"
)

func TestJobLog(t *testing.T) {
	now := runtest.T0
	p := runtest.Pipeline(t, triggerDoc)
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	running := run.Run{Key: key, State: run.Running, Version: 3, JobRunID: "j1"}
	success := run.JobReport{Known: true, Status: run.JobStatusSucceeded}
	for _, c := range []struct {
		name    string
		in      JobLogIn
		markers []store.Marker
		applied bool
		ignored bool
		wantErr error
	}{
		{name: "a success completes the running job", in: JobLogIn{ID: "r1", JobRunID: "j1"}, applied: true},
		{name: "a record decided before decides nothing", in: JobLogIn{ID: "r1", JobRunID: "j1"}, ignored: true,
			markers: []store.Marker{{Key: key, Kind: run.ItemMarker(run.MarkerJobReport, "r1").String(), At: now}}},
		{name: "a record about another job changes nothing", in: JobLogIn{ID: "r2", JobRunID: "j0"}, ignored: true},
		{name: "another pipeline's schedule is refused", in: JobLogIn{ID: "r3", ScheduleID: "cron-x"}, wantErr: ErrInvalidRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, triggerDoc)
			w.runs, w.markers = []run.Run{running}, c.markers
			in := c.in
			in.PipelineID, in.Period, in.Report, in.Event, in.NewID = "p1", runtest.Day, success, "success", ids()
			var o *Outcome
			var l JobLogged
			err := w.decide(t, w.facts(needs.JobLog(p, "p1", runtest.Day, success)), func(f *Facts) (err error) {
				o, l, err = JobLog(in, f, now)
				return err
			})
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil || l.Applied != c.applied || (l.Ignored != "") != c.ignored {
				t.Fatalf("logged %+v err %v, want applied %v ignored %v", l, err, c.applied, c.ignored)
			}
			if c.applied && (len(o.C.Runs) != 1 || o.C.Runs[0].Run.State != run.Completed || len(o.C.Markers) == 0) {
				t.Fatalf("outcome %+v, want the run completed and the record's marker", o.C)
			}
		})
	}
}
