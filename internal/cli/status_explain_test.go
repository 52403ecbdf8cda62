package cli

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
)

// idleJobs is a job system that never runs anything: these tests run no
// engine timer.
type idleJobs struct{}

func (idleJobs) Start(context.Context, trigger.Request) (trigger.Started, error) {
	return trigger.Started{JobRunID: "never"}, nil
}

func (idleJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusRunning}, nil
}

// serveAt starts a real engine on a SQLite store with a virtual clock at
// now, loads the pipeline documents, and serves the API; it returns the
// server's URL.
func serveAt(t *testing.T, now time.Time, docs map[string]string) string {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cli.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	eng := engine.New(engine.Options{Store: st, Clock: clock.NewVirtual(now), Jobs: idleJobs{}})
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for file, doc := range docs {
		if _, err := eng.ApplyConfig(ctx, file, []byte(doc)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	h, err := api.New(api.Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func nyPipeline(id, sla, extra string) string {
	return "pipeline: {id: " + id + "}\nschedule:\n  trigger: {key: ready, check: exists}\n  timezone: America/New_York\n" + extra +
		"validation:\n  rules: [{key: ready, check: exists}]\nsla: " + sla + "\njob: {type: glue, config: {jobName: j}}\n"
}

// TestStatusAndExplainShowSLATimesInTheirZone: SLA instants are shown in
// the pipeline's zone with UTC beside them (the date added where it is
// not the period's), and a warning or verdict that forward-only skips
// (the pipeline was loaded after its time) is said so.
func TestStatusAndExplainShowSLATimesInTheirZone(t *testing.T) {
	// 08:00 in New York (EDT) on Tuesday 2026-03-10.
	url := serveAt(t, time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC), map[string]string{
		"late.yaml":    nyPipeline("late", `{deadline: "07:00", expectedDuration: 30m}`, ""),
		"halfway.yaml": nyPipeline("halfway", `{deadline: "09:00", expectedDuration: 2h}`, ""),
		"nightly.yaml": nyPipeline("nightly", `{deadline: "+1d 02:00", expectedDuration: 1h}`, "  exclude: {weekends: true}\n"),
		"evening.yaml": nyPipeline("evening", `{deadline: "22:00"}`, ""),
		"paris.yaml":   nyPipeline("paris", `{deadline: "18:00", timezone: Europe/Paris}`, ""),
	})
	cases := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"status: a breach before the load", []string{"status", "late"}, []string{
			"sla        deadline 07:00: warning 06:30 America/New_York (10:30Z), breach 07:00 America/New_York (11:00Z)",
			"           no SLA verdict: pipeline loaded at 08:00 America/New_York (12:00Z), after the breach time",
		}, nil},
		{"status: a warning before the load", []string{"status", "halfway"}, []string{
			"breach 09:00 America/New_York (13:00Z)",
			"           no SLA warning: pipeline loaded at 08:00 America/New_York (12:00Z), after the warning time",
		}, []string{"no SLA verdict"}},
		{"status: the next day's deadline carries its date", []string{"status", "nightly"}, []string{
			"warning 2026-03-11 01:00 America/New_York (05:00Z), breach 2026-03-11 02:00 America/New_York (06:00Z)",
		}, []string{"no SLA"}},
		{"status: UTC on another date than the zone's", []string{"status", "evening"}, []string{
			"warning -, breach 22:00 America/New_York (2026-03-11 02:00Z)",
		}, nil},
		{"status: the SLA's own zone", []string{"status", "paris"}, []string{
			"breach 18:00 Europe/Paris (17:00Z)",
		}, nil},
		{"status list", []string{"status"}, []string{
			"07:00 America/New_York (11:00Z)",
			"2026-03-11 02:00 America/New_York (06:00Z)",
		}, nil},
		{"explain: a breach before the load", []string{"explain", "late"}, []string{
			"sla warning          06:30 America/New_York (10:30Z)",
			"sla breach           07:00 America/New_York (11:00Z)",
			"no SLA verdict: pipeline loaded at 08:00 America/New_York (12:00Z), after the breach time",
		}, nil},
		{"explain: a warning before the load", []string{"explain", "halfway"}, []string{
			"sla warning          07:00 America/New_York (11:00Z)",
			"no SLA warning: pipeline loaded at 08:00 America/New_York (12:00Z), after the warning time",
		}, []string{"no SLA verdict"}},
		{"explain: a period loaded in time says nothing of the load", []string{"explain", "nightly"}, []string{
			"sla breach           2026-03-11 02:00 America/New_York (06:00Z)",
		}, []string{"no SLA", "excluded"}},
		{"explain: the rule that excludes a period", []string{"explain", "nightly", "--period", "2026-03-14"}, []string{
			"excluded   2026-03-14 (Saturday) is excluded as a weekend (exclude.weekends): nothing starts",
			"sla breach           2026-03-15 02:00 America/New_York (06:00Z)",
		}, []string{"by the calendar"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, append(c.args, "--server", url)...)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("missing %q in\n%s", w, out)
				}
			}
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("unexpected %q in\n%s", n, out)
				}
			}
		})
	}
}

func TestZoned(t *testing.T) {
	at := time.Date(2026, 3, 11, 2, 0, 0, 0, time.UTC)
	cases := []struct {
		zone, period, want string
	}{
		{"America/New_York", "2026-03-10", "22:00 America/New_York (2026-03-11 02:00Z)"},
		{"America/New_York", "2026-03-09", "2026-03-10 22:00 America/New_York (2026-03-11 02:00Z)"},
		{"Europe/Paris", "2026-03-11T03", "03:00 Europe/Paris (02:00Z)"},
		{"UTC", "2026-03-11", "02:00 UTC"},
		{"UTC", "2026-03-10", "2026-03-11 02:00 UTC"},
		{"", "2026-03-11", "2026-03-11T02:00:00Z"},
		{"Not/AZone", "2026-03-11", "2026-03-11T02:00:00Z"},
	}
	for _, c := range cases {
		if got := zoned(&at, c.zone, c.period); got != c.want {
			t.Errorf("zoned(%s, %s) = %q, want %q", c.zone, c.period, got, c.want)
		}
	}
	if got := zoned(nil, "UTC", "2026-03-11"); got != "-" {
		t.Errorf("zoned(nil) = %q", got)
	}
}
