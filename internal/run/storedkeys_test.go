package run

import (
	"errors"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
)

// TestTimerKeyFormat pins each family's stored key byte for byte: stored
// timers (SQLite, PostgreSQL, DynamoDB) and the AWS schedules named after
// them must keep being found after an upgrade.
func TestTimerKeyFormat(t *testing.T) {
	day := Key{PipelineID: "gold", ScheduleID: "stream", Period: "2026-03-10"}
	for _, c := range []struct {
		k    TimerKey
		want string
	}{
		{PeriodTimer(TimerStep, day), "step/gold/stream/2026-03-10"},
		{PeriodTimer(TimerSLAWarning, day), "sla-warning/gold/stream/2026-03-10"},
		{PeriodTimer(TimerSLABreach, Key{PipelineID: "gold", ScheduleID: "stream", Period: "2026-03-10T07"}), "sla-breach/gold/stream/2026-03-10T07"},
		{PeriodTimer(TimerRelSLAWarning, day), "relative-sla-warning/gold/stream/2026-03-10"},
		{PeriodTimer(TimerRelSLABreach, day), "relative-sla-breach/gold/stream/2026-03-10"},
		{PeriodTimer(TimerDownstreams, day), "downstreams/gold/stream/2026-03-10"},
		{PeriodTimer(TimerUpstream, day), "upstream/gold/stream/2026-03-10"},
		{PeriodTimer(TimerRelease, day), "root-release/gold/stream/2026-03-10"},
		{PeriodTimer(TimerStep, Key{PipelineID: "gold", Period: "2026-03-10"}), "step/gold//2026-03-10"},
		{PipelineTimer(TimerCron, "gold"), "cron/gold"},
		{PipelineTimer(TimerPeriod, "gold"), "period/gold"},
		{PipelineTimer(TimerResume, "gold"), "resume/gold"},
		{PipelineTimer(TimerBackfill, "gold"), "backfill/gold"},
		{SilenceEndTimer("m3k-00ff"), "silence-end/m3k-00ff"},
		{MaintenanceEndTimer("nightly db/restore"), "maintenance-end/nightly db/restore"},
	} {
		t.Run(c.want, func(t *testing.T) {
			if got := c.k.String(); got != c.want {
				t.Fatalf("String = %q, want %q", got, c.want)
			}
			back, err := ParseTimerKey(c.want)
			if err != nil || back != c.k {
				t.Fatalf("ParseTimerKey(%q) = %+v, %v; want %+v", c.want, back, err, c.k)
			}
		})
	}
}

func TestParseTimerKey(t *testing.T) {
	for _, c := range []struct {
		in   string
		want TimerKey // zero: an error
	}{
		{"step/a/s/x/2026-03-10", TimerKey{Family: TimerStep, Run: Key{PipelineID: "a", ScheduleID: "s/x", Period: "2026-03-10"}}},
		{"silence-end/a/b", TimerKey{Family: TimerSilenceEnd, Name: "a/b"}},
		{"", TimerKey{}},
		{"step", TimerKey{}},
		{"step/", TimerKey{}},
		{"step/a", TimerKey{}},
		{"step/a/2026-03-10", TimerKey{}},  // no schedule segment
		{"step//s/2026-03-10", TimerKey{}}, // no pipeline
		{"step/a/s/", TimerKey{}},          // no period
		{"cron/", TimerKey{}},
		{"cron/a/b", TimerKey{}},
		{"silence-end/", TimerKey{}},
		{"sla-breach:gold", TimerKey{}}, // not this format
		{"nightly/gold", TimerKey{}},    // unknown family
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseTimerKey(c.in)
			if c.want == (TimerKey{}) {
				if !errors.Is(err, ErrTimerKey) {
					t.Fatalf("ParseTimerKey(%q) = %+v, %v; want ErrTimerKey", c.in, got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseTimerKey(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			}
		})
	}
}

// TestTimerFamiliesRoundTrip: every family is listed once and keys of
// each read back as built.
func TestTimerFamiliesRoundTrip(t *testing.T) {
	seen := map[TimerFamily]bool{}
	for _, f := range TimerFamilies() {
		if seen[f] {
			t.Fatalf("%s listed twice", f)
		}
		seen[f] = true
		k := TimerKey{Family: f}
		switch timerShapes[f] {
		case shapePeriod:
			k.Run = Key{PipelineID: "p", ScheduleID: "s", Period: "2026-03-10T05"}
		case shapePipeline:
			k.Run = Key{PipelineID: "p"}
		case shapeName:
			k.Name = "n"
		default:
			t.Fatalf("%s has no shape", f)
		}
		if back, err := ParseTimerKey(k.String()); err != nil || back != k {
			t.Errorf("%s: %q reads back as %+v, %v", f, k.String(), back, err)
		}
	}
	if len(seen) != len(timerShapes) {
		t.Errorf("TimerFamilies lists %d families, timerShapes %d", len(seen), len(timerShapes))
	}
}

// FuzzParseTimerKey: no stored string panics the parser, and a key it
// accepts is one String writes back byte for byte (so a key the parser
// reads is the key the store holds: the timer it deletes or moves is the
// one it read).
func FuzzParseTimerKey(f *testing.F) {
	for _, s := range []string{"step/a/s/2026-03-10", "cron/a", "silence-end/x/y", "step/a//p", "maintenance-end/", "sla-breach/a/b/c/d", "/", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseTimerKey(s)
		if err != nil {
			return
		}
		if got := k.String(); got != s {
			t.Fatalf("ParseTimerKey(%q) = %+v, which writes %q", s, k, got)
		}
	})
}

// TestMarkerKindFormat pins each qualified kind's stored form byte for
// byte, as TestTimerKeyFormat does for timers.
func TestMarkerKindFormat(t *testing.T) {
	down := Key{PipelineID: "silver", ScheduleID: "stream", Period: "2026-03-10T07"}
	for _, c := range []struct {
		k    MarkerKind
		want string
	}{
		{DownstreamMarker("revenue"), "downstream:revenue"},
		{BlockedMarker(down, event.SLABreach), "blocked:silver/stream/2026-03-10T07/SLA_BREACH"},
		{BlockedMarker(Key{PipelineID: "silver", Period: "2026-03-10"}, event.JobFailed), "blocked:silver//2026-03-10/JOB_FAILED"},
		{AfterSilenceMarker("maintenance:nightly@1", event.JobFailed), "after-silence/maintenance:nightly@1/JOB_FAILED"},
		{AfterSilenceMarker("a/b", event.SLAWarning), "after-silence/a/b/SLA_WARNING"},
		{ConfigInvalidMarker("00ff12ab"), "config-invalid:00ff12ab"},
		{ItemMarker(MarkerJobReport, "jr-1"), "job-report/jr-1"},
		{ItemMarker(MarkerRerunRequest, "a/b:c"), "rerun-request/a/b:c"},
		{ItemMarker(MarkerRejected, "sensor:gold/x\x00ff"), "rejected/sensor:gold/x\x00ff"},
		{StuckMarker(Run{Generation: 2, State: Triggering}), "run-stuck:2:TRIGGERING"},
		{MarkerKind{Name: MarkerRunStuck}, "run-stuck"},
		{MarkerKind{Name: MarkerSLABreach}, "sla-breach"},
		{MarkerKind{Name: MarkerWatchdogPass}, "watchdog-pass"},
	} {
		t.Run(c.want, func(t *testing.T) {
			if got := c.k.String(); got != c.want {
				t.Fatalf("String = %q, want %q", got, c.want)
			}
			back, err := ParseMarkerKind(c.want)
			if err != nil || back != c.k {
				t.Fatalf("ParseMarkerKind(%q) = %+v, %v; want %+v", c.want, back, err, c.k)
			}
		})
	}
}

func TestParseMarkerKind(t *testing.T) {
	for _, c := range []struct {
		in   string
		want MarkerKind // zero: an error
	}{
		{"blocked:a/s/x/2026-03-10/JOB_FAILED", BlockedMarker(Key{PipelineID: "a", ScheduleID: "s/x", Period: "2026-03-10"}, event.JobFailed)},
		{"later-feature:x", MarkerKind{Name: "later-feature:x"}}, // a kind this version does not know
		{"after-silence:x", MarkerKind{Name: "after-silence:x"}},
		{"downstream/x", MarkerKind{Name: "downstream/x"}}, // not its separator: a plain kind
		{"job-report:x", MarkerKind{Name: "job-report:x"}},
		{"blocked/a/s/2026-03-10/JOB_FAILED", MarkerKind{Name: "blocked/a/s/2026-03-10/JOB_FAILED"}},
		{"run-stuck/1:RUNNING", MarkerKind{Name: "run-stuck/1:RUNNING"}},
		{"downstream", MarkerKind{}},
		{"job-report", MarkerKind{}},
		{"job-report/", MarkerKind{}},
		{"rejected/", MarkerKind{}},
		{"downstream:", MarkerKind{}},
		{"config-invalid:", MarkerKind{}},
		{"blocked", MarkerKind{}},
		{"blocked:", MarkerKind{}},
		{"blocked:a/2026-03-10/JOB_FAILED", MarkerKind{}},  // no schedule segment
		{"blocked:/s/2026-03-10/JOB_FAILED", MarkerKind{}}, // no pipeline
		{"blocked:a/s//JOB_FAILED", MarkerKind{}},          // no period
		{"blocked:a/s/2026-03-10/", MarkerKind{}},          // no type
		{"after-silence", MarkerKind{}},
		{"after-silence/", MarkerKind{}},
		{"after-silence/x", MarkerKind{}},
		{"after-silence//JOB_FAILED", MarkerKind{}},
		{"after-silence/x/", MarkerKind{}},
		{"run-stuck:", MarkerKind{}},
		{"run-stuck:1", MarkerKind{}},
		{"run-stuck:1:", MarkerKind{}},
		{"run-stuck:x:RUNNING", MarkerKind{}},
		{"run-stuck:01:RUNNING", MarkerKind{}}, // not as written
		{"run-stuck:+1:RUNNING", MarkerKind{}},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseMarkerKind(c.in)
			if c.want == (MarkerKind{}) {
				if !errors.Is(err, ErrMarkerKind) {
					t.Fatalf("ParseMarkerKind(%q) = %+v, %v; want ErrMarkerKind", c.in, got, err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseMarkerKind(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			}
		})
	}
}

// FuzzParseMarkerKind: as FuzzParseTimerKey, for marker kinds.
func FuzzParseMarkerKind(f *testing.F) {
	for _, s := range []string{"downstream:a", "blocked:a/s/p/T", "blocked:a//p/T", "after-silence/a/b/T", "config-invalid:ff",
		"run-stuck:0:RUNNING", "run-stuck", "sla-breach", "x:y", ":", "/", "", "job-report/a", "rejected/x:y/z", "rerun-request/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseMarkerKind(s)
		if err != nil {
			return
		}
		if got := k.String(); got != s {
			t.Fatalf("ParseMarkerKind(%q) = %+v, which writes %q", s, k, got)
		}
	})
}
