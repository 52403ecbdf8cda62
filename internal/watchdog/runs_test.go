package watchdog

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
)

func TestStaleRuns(t *testing.T) {
	now := at(t, "2026-03-10T12:00:00Z")
	stream := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\n" + job
	k := key("p", "stream", "2026-03-10")
	active := func(state run.State, expires time.Time) run.Run {
		return run.Run{Key: k, Version: 7, State: state, StateSince: now.Add(-3 * time.Hour), ExpiresAt: expires}
	}
	cases := []struct {
		name   string
		dryRun bool
		paused bool
		r      run.Run
		want   []string
	}{
		{name: "expired running run", r: active(run.Running, now.Add(-time.Second)), want: []string{"SFN_TIMEOUT p/stream/2026-03-10"}},
		{name: "expires exactly now is not stale", r: active(run.Running, now)},
		{name: "not yet expired", r: active(run.Running, now.Add(time.Minute))},
		{name: "no time-to-live is never stale", r: active(run.Running, time.Time{})},
		{name: "dry-run pipeline is invisible", dryRun: true, r: active(run.Running, now.Add(-time.Hour))},
		{name: "paused: evaluating run is held", paused: true, r: active(run.Evaluating, now.Add(-time.Hour))},
		{name: "paused: triggering run not in flight is held", paused: true, r: active(run.Triggering, now.Add(-time.Hour))},
		{name: "paused: trigger call in flight is not held", paused: true,
			r:    func() run.Run { r := active(run.Triggering, now.Add(-time.Hour)); r.TriggerInFlight = true; return r }(),
			want: []string{"SFN_TIMEOUT p/stream/2026-03-10"}},
		{name: "paused: running job is not held", paused: true, r: active(run.Running, now.Add(-time.Hour)), want: []string{"SFN_TIMEOUT p/stream/2026-03-10"}},
		{name: "not paused: expired evaluating run", r: active(run.Evaluating, now.Add(-time.Hour)), want: []string{"SFN_TIMEOUT p/stream/2026-03-10"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := stream
			if c.dryRun {
				doc += "dryRun: true\n"
			}
			wp := loaded(parse(t, doc))
			wp.Paused = c.paused
			s := snap(now, wp).addRun(c.r)
			fs := runCheck(t, CheckStaleRuns, s)
			expect(t, fs, c.want...)
			for _, f := range fs {
				if f.Action != ActionFailRun || f.Run == nil || f.Run.Version != 7 || f.Marker != "" {
					t.Errorf("finding = %+v, want ActionFailRun with the run (version 7) and no marker", f)
				}
				if got := detailString(f, "ttlExpired"); got != c.r.ExpiresAt.UTC().Format(time.RFC3339) {
					t.Errorf("ttlExpired = %q", got)
				}
			}
		})
	}
}

func TestStaleRunsSkipsUnknownPipeline(t *testing.T) {
	now := at(t, "2026-03-10T12:00:00Z")
	s := snap(now).addRun(run.Run{Key: key("gone", "stream", "2026-03-10"), State: run.Running, ExpiresAt: now.Add(-time.Hour)})
	expect(t, runCheck(t, CheckStaleRuns, s))
}

func TestStuckRuns(t *testing.T) {
	now := at(t, "2026-03-10T12:00:00Z")
	k := key("p", "stream", "2026-03-10")
	base := "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\n"
	in := func(state run.State, since time.Duration) run.Run {
		return run.Run{Key: k, State: state, StateSince: now.Add(-since), ExpiresAt: now.Add(time.Hour)}
	}
	const want = "RUN_STUCK p/stream/2026-03-10"
	cases := []struct {
		name      string
		doc       string
		threshold time.Duration // Snapshot.StuckRunThreshold
		paused    bool
		r         run.Run
		markers   []string
		want      []string
	}{
		{name: "running past the default 30m", doc: base + job, r: in(run.Running, 31*time.Minute), want: []string{want}},
		{name: "exactly the threshold is not stuck", doc: base + job, r: in(run.Running, 30*time.Minute)},
		{name: "triggering past the threshold", doc: base + job, r: in(run.Triggering, time.Hour), want: []string{want}},
		{name: "evaluating is never stuck", doc: base + job, r: in(run.Evaluating, 10*time.Hour)},
		{name: "snapshot threshold applies", doc: base + job, threshold: 2 * time.Hour, r: in(run.Running, time.Hour)},
		{name: "snapshot threshold exceeded", doc: base + job, threshold: 2 * time.Hour, r: in(run.Running, 3*time.Hour), want: []string{want}},
		{name: "job.stuckAfter wins over the snapshot", doc: base + "job: {type: glue, config: {jobName: j}, stuckAfter: 5m}\n", threshold: 2 * time.Hour, r: in(run.Running, 6*time.Minute), want: []string{want}},
		{name: "job.stuckAfter not reached", doc: base + "job: {type: glue, config: {jobName: j}, stuckAfter: 2h}\n", r: in(run.Running, time.Hour)},
		{name: "deduplicated", doc: base + job, r: in(run.Running, time.Hour), markers: []string{"run-stuck:0:RUNNING"}},
		{name: "reported state differs: stuck again in a new state", doc: base + job, r: in(run.Running, time.Hour), markers: []string{"run-stuck:0:TRIGGERING"}, want: []string{want}},
		{name: "a rerun (generation 1) stuck is reported again",
			doc: base + job, r: func() run.Run { r := in(run.Running, time.Hour); r.Generation = 1; return r }(),
			markers: []string{"run-stuck:0:RUNNING"}, want: []string{want}},
		{name: "dry-run pipeline", doc: base + job + "dryRun: true\n", r: in(run.Running, time.Hour)},
		{name: "paused: held triggering run", doc: base + job, paused: true, r: in(run.Triggering, time.Hour)},
		{name: "paused: running job is still reported", doc: base + job, paused: true, r: in(run.Running, time.Hour), want: []string{want}},
		{name: "no StateSince: UpdatedAt is used",
			doc: base + job, r: run.Run{Key: k, State: run.Running, UpdatedAt: now.Add(-time.Hour)}, want: []string{want}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wp := loaded(parse(t, c.doc))
			wp.Paused = c.paused
			s := snap(now, wp).addRun(c.r)
			s.StuckRunThreshold = c.threshold
			for _, m := range c.markers {
				s.addMarker(k, m, now.Add(-time.Minute))
			}
			fs := runCheck(t, CheckStuckRuns, s)
			expect(t, fs, c.want...)
			for _, f := range fs {
				if f.Marker != StuckMarker(c.r) {
					t.Errorf("marker = %q, want %q", f.Marker, StuckMarker(c.r))
				}
				if detailString(f, "state") != string(c.r.State) {
					t.Errorf("detail state = %q", detailString(f, "state"))
				}
			}
		})
	}
}

func TestStuckMarker(t *testing.T) {
	r := run.Run{Generation: 2, State: run.Triggering}
	if got, want := StuckMarker(r), "run-stuck:2:TRIGGERING"; got != want {
		t.Errorf("StuckMarker = %q, want %q", got, want)
	}
}
