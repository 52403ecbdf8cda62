package e2e_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// TestRetentionKeepsAReplayedPeriod is issue 28's item 5 through the
// built binary: a sensor written for a period 120 days back (retention
// 90d) is acknowledged and triggers its job; after a restart of serve —
// whose retention sweep runs at start, and deletes a period that was
// written 130 days ago — the replayed period's sensor and run are still
// there, and new data for the period does not start a second first run.
// A backfill of a period 121 days back is kept the same way.
func TestRetentionKeepsAReplayedPeriod(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := projectWriter(t, dir)
	write("interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\nretention: 90d\nwatchdog: {interval: 1h}\n")
	write("pipelines/replay.yaml", `pipeline: {id: replay}
schedule:
  trigger: {key: ready, check: exists}
validation:
  rules: [{key: ready, check: exists}]
job: {type: command, config: {command: ["true"]}, pollInterval: 1s}
`)
	write("pipelines/daily.yaml", `pipeline: {id: daily}
schedule:
  cron: "0 6 * * *"
job: {type: command, config: {command: ["true"]}, pollInterval: 1s}
`)
	now := time.Now().UTC()
	backfilled := now.AddDate(0, 0, -121).Format("2006-01-02")
	replayed := now.AddDate(0, 0, -120).Format("2006-01-02")
	forgotten := now.AddDate(0, 0, -130).Format("2006-01-02")

	srv := start(t, dir, nil)
	put := func(srv *server, key, body string) {
		t.Helper()
		if code, out := request(t, "PUT", srv.url+"/v1/pipelines/replay/sensors/"+key, "", body); code/100 != 2 {
			t.Fatalf("PUT sensor %s: %d %s", key, code, out)
		}
	}
	counts := func(srv *server) map[string]int {
		t.Helper()
		code, body := request(t, "GET", srv.url+"/v1/events?pipeline=replay&limit=1000", "", "")
		if code != 200 {
			t.Fatalf("events: %d %s", code, body)
		}
		out := map[string]int{}
		for _, l := range decode[struct {
			Events []struct {
				Type   string `json:"detail-type"`
				Detail struct {
					Detail struct{ Generation int }
				}
			}
		}](t, "the events", body).Events {
			out[l.Type]++
			if l.Type == "JOB_TRIGGERED" {
				out[fmt.Sprintf("JOB_TRIGGERED generation %d", l.Detail.Detail.Generation)]++
			}
		}
		return out
	}
	type runView struct {
		State      string
		Generation int
		CreatedAt  time.Time
		UpdatedAt  time.Time
	}
	runs := func(srv *server) []runView {
		t.Helper()
		code, body := request(t, "GET", srv.url+"/v1/pipelines/replay/runs?period="+replayed, "", "")
		if code != 200 {
			t.Fatalf("runs: %d %s", code, body)
		}
		return decode[struct{ Runs []runView }](t, "the runs", body).Runs
	}
	sensorKeys := func(srv *server) string {
		t.Helper()
		code, body := request(t, "GET", srv.url+"/v1/pipelines/replay/sensors", "", "")
		if code != 200 {
			t.Fatalf("sensors: %d %s", code, body)
		}
		var keys []string
		for _, x := range decode[struct{ Sensors []struct{ Key string } }](t, "the sensors", body).Sensors {
			keys = append(keys, x.Key)
		}
		return strings.Join(keys, ",")
	}

	put(srv, "ready%23"+replayed, `{"rows": 1}`)
	eventually(t, "the replayed period's job to complete", func() bool {
		r := runs(srv)
		return len(r) == 1 && r[0].State == "COMPLETED"
	})
	first := runs(srv)[0]
	if c := counts(srv); c["VALIDATION_PASSED"] != 1 || c["JOB_TRIGGERED generation 0"] != 1 {
		t.Fatalf("events after the replayed write: %v, want one validation and one trigger", c)
	}
	// A backfill of an old period of a cron pipeline, followed to its end:
	// its run is the date's only activity within retention (the data
	// seeded below was written 121 days ago), and keeps the whole date.
	if out := mustCLI(t, dir, 0, "backfill", "daily", "--from", backfilled, "--to", backfilled, "--server", srv.url); !strings.Contains(out, `"state":"completed"`) {
		t.Fatalf("backfill of %s printed:\n%s", backfilled, out)
	}
	backfillRuns := func(srv *server) string {
		t.Helper()
		code, body := request(t, "GET", srv.url+"/v1/pipelines/daily/runs?period="+backfilled, "", "")
		if code != 200 {
			t.Fatalf("runs of daily: %d %s", code, body)
		}
		var out []string
		for _, r := range decode[struct {
			Runs []struct{ State, Cause string }
		}](t, "the runs of daily", body).Runs {
			out = append(out, r.State+" "+r.Cause)
		}
		return strings.Join(out, ",")
	}
	if r := backfillRuns(srv); r != "COMPLETED backfill" {
		t.Fatalf("runs of daily %s after its backfill: %q", backfilled, r)
	}
	srv.stop(t)

	// A period whose last write is 130 days old: the sweep at the next
	// start deletes it, which says the sweep ran.
	seedQuietPeriod(t, filepath.Join(dir, "state.db"), "replay", "ready#"+forgotten, now.AddDate(0, 0, -130))
	seedQuietPeriod(t, filepath.Join(dir, "state.db"), "daily", "ready#"+backfilled, now.AddDate(0, 0, -121))

	srv = start(t, dir, nil)
	defer srv.stop(t)
	eventually(t, "the sweep at start to delete the period written 130 days ago", func() bool {
		return !strings.Contains(sensorKeys(srv), forgotten)
	})
	if keys := sensorKeys(srv); keys != "ready#"+replayed {
		t.Fatalf("sensors after the restart's sweep: %q, want the replayed write kept", keys)
	}
	if r := backfillRuns(srv); r != "COMPLETED backfill" {
		t.Fatalf("runs of daily %s after the restart's sweep: %q, want its backfill kept", backfilled, r)
	}
	if code, body := request(t, "GET", srv.url+"/v1/pipelines/daily/sensors", "", ""); code != 200 || !strings.Contains(body, `"ready#`+backfilled+`"`) {
		t.Fatalf("sensors of daily after the restart's sweep: %d %s, want the backfilled date's kept with its run", code, body)
	}
	if r := runs(srv); len(r) != 1 || r[0] != first {
		t.Fatalf("runs of %s after the restart's sweep: %+v, want its completed run kept: %+v", replayed, r, first)
	}

	// New data for the period: the run that locks it is still there, so
	// the data is late for a period that ran — a rerun of that run
	// (generation 1, within maxDriftReruns), not a second first run.
	put(srv, "ready%23"+replayed, `{"rows": 2}`)
	eventually(t, "the new data's decision to finish", func() bool {
		r := runs(srv)
		return len(r) == 1 && r[0].State == "COMPLETED" && r[0].UpdatedAt.After(first.UpdatedAt)
	})
	if r := runs(srv)[0]; r.Generation != 1 || !r.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("run of %s after new data: %+v, want the first run (created %s) rerun as generation 1", replayed, r, first.CreatedAt)
	}
	if c := counts(srv); c["JOB_TRIGGERED generation 0"] != 1 || c["LATE_DATA_ARRIVAL"] != 1 || c["RERUN_ACCEPTED"] != 1 {
		t.Errorf("events after new data for the replayed period: %v, want one first trigger, then late data and its rerun", c)
	}
}

// seedQuietPeriod stores, with serve stopped, a per-period sensor of
// pipeline last written at written.
func seedQuietPeriod(t *testing.T, path, pipeline, key string, written time.Time) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	x := store.Sensor{PipelineID: pipeline, Key: key, ChangedAt: written, WrittenAt: written,
		Data: sensor.NewObject(map[string]sensor.Value{"rows": sensor.IntValue(1)})}
	if err := s.Commit(t.Context(), store.Change{Sensors: []store.SensorWrite{{Sensor: x}}}); err != nil {
		t.Fatal(fmt.Errorf("seeding %s: %w", key, err))
	}
}
