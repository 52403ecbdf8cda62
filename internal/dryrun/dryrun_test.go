package dryrun

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
)

func TestDryRunEmits(t *testing.T) {
	for typ, want := range map[event.Type]bool{
		event.DryRunWouldTrigger: true, event.DryRunLateData: true, event.PostRunBaselineCaptured: true,
		event.ConfigInvalid: true, event.PipelinePaused: true, event.PipelineResumed: true,
		event.DryRunWouldRetry: true, event.DryRunRetryExhausted: true, event.DryRunRerunRejected: true,
		event.BackfillRequested: true, event.BackfillPeriodStarted: true, event.BackfillCompleted: true,
		event.JobTriggered: false, event.SLABreach: false, event.ValidationPassed: false, event.ScheduleMissed: false,
		event.JobFailed: false, event.RetryExhausted: false, event.RerunRejected: false, event.RunStuck: false,
		event.SilenceCreated: false, event.RootCauseResolved: false,
		"DRY_RUN_NOT_IN_THE_CATALOGUE": false, "BACKFILL_NOT_IN_THE_CATALOGUE": false, // a name is not a type
	} {
		if got := Emits(typ); got != want {
			t.Errorf("Emits(%s) = %v, want %v", typ, got, want)
		}
	}
}

func TestDryRunTrigger(t *testing.T) {
	withSLA := runtest.Pipeline(t, "dryRun: true\n"+runtest.Base+`sla: {deadline: "10:00", expectedDuration: 1h}`+"\n")
	noSLA := runtest.Pipeline(t, "dryRun: true\n"+runtest.Base)
	passed := rule.Outcome{Passed: true}
	cases := []struct {
		name string
		p    string
		f    Facts
		now  time.Time
		want string // "seen? triggered? NOTE[status] ..."
	}{
		{"first look, rules fail", "sla", Facts{}, runtest.HM(8, 0), "seen"},
		{"seen before, rules fail", "sla", Facts{Seen: true}, runtest.HM(8, 0), ""},
		{"rules pass, SLA met", "sla", Facts{Rules: passed, Data: true}, runtest.HM(8, 0), "seen triggered DRY_RUN_WOULD_TRIGGER DRY_RUN_SLA_PROJECTION[met] DRY_RUN_COMPLETED[met]"},
		{"rules pass, SLA breached", "sla", Facts{Seen: true, Rules: passed}, runtest.HM(9, 30), "triggered DRY_RUN_WOULD_TRIGGER DRY_RUN_SLA_PROJECTION[breach] DRY_RUN_COMPLETED[breach]"},
		{"rules pass, no SLA", "none", Facts{Seen: true, Rules: passed}, runtest.HM(8, 0), "triggered DRY_RUN_WOULD_TRIGGER DRY_RUN_COMPLETED[n/a]"},
		{"data after the would-be trigger: late", "sla", Facts{Seen: true, TriggeredAt: runtest.HM(7, 0), Data: true, Rules: passed}, runtest.HM(8, 0), "DRY_RUN_LATE_DATA[1h0m0s]"},
		{"a cron tick after the would-be trigger: nothing", "sla", Facts{Seen: true, TriggeredAt: runtest.HM(7, 0), Rules: passed}, runtest.HM(8, 0), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := withSLA
			if c.p == "none" {
				p = noSLA
			}
			if got := c.f.NeedsRules(); got != c.f.TriggeredAt.IsZero() {
				t.Fatalf("NeedsRules = %v", got)
			}
			d, err := Trigger(p, runtest.Day, c.f, c.now)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if d.MarkSeen {
				got = append(got, "seen")
			}
			if d.Triggered {
				got = append(got, "triggered")
			}
			for _, n := range d.Notes {
				s := string(n.Type)
				for _, f := range []string{"status", "slaStatus", "lateBy"} {
					if v, ok := n.Detail.Get(f); ok {
						str, _ := v.Str()
						s += "[" + str + "]"
					}
				}
				got = append(got, s)
			}
			if s := strings.Join(got, " "); s != c.want {
				t.Fatalf("got  %q\nwant %q", s, c.want)
			}
		})
	}
}

func TestDryRunDrift(t *testing.T) {
	p := runtest.Pipeline(t, "dryRun: true\n"+runtest.PostRun)
	base := run.Detail("count", 100)
	if _, ok := Drift(p, "counts", run.Detail("count", 500), nil); ok {
		t.Error("drift without a baseline")
	}
	if _, ok := Drift(p, "counts", run.Detail("count", 105), &base); ok {
		t.Error("drift within the threshold")
	}
	if n, ok := Drift(p, "counts", run.Detail("count", 500), &base); !ok || n.Type != event.DryRunDrift {
		t.Errorf("drift: %v %v", ok, n.Type)
	}
}
