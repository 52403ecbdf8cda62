package simulate_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/simulate"
)

// busyScenario builds a scenario of n pipelines over days virtual days: a
// third cron-started (New York time), two thirds sensor-triggered with an
// SLA and post-run checks; every pipeline gets its data every day, some
// late, and every tenth job fails once and is retried.
func busyScenario(n, days int) string {
	var b strings.Builder
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	fmt.Fprintf(&b, "name: busy %d pipelines x %d days\nstart: %s\nend: %s\n", n, days, start.Format(time.RFC3339), start.AddDate(0, 0, days).Format(time.RFC3339))
	// The watchdog passes hourly here: each pass reads a snapshot
	// proportional to recent activity, and 8,640 passes a month at the
	// default 5m dominate a busy simulation (BenchmarkSimulateWatchdog
	// measures that cost on its own).
	fmt.Fprintf(&b, "settings: {watchdog: {interval: %s}}\npipelines:\n", watchdogInterval)
	for i := 0; i < n; i++ {
		if i%3 == 0 {
			fmt.Fprintf(&b, `  - pipeline: {id: p%d}
    schedule: {cron: "0 6 * * *", timezone: America/New_York, evaluation: {window: 2h, interval: 10m}}
    validation: {rules: [{key: landed, check: exists}]}
    job: {type: glue, config: {jobName: j}, maxRetries: 1}
`, i)
			continue
		}
		fmt.Fprintf(&b, `  - pipeline: {id: p%d}
    schedule: {trigger: {key: landed, check: gte, field: files, value: 1}}
    sla: {deadline: "09:00", expectedDuration: 30m}
    validation: {rules: [{key: landed, check: gte, field: files, value: 1}]}
    postRun: {rules: [{key: audit, check: gte, field: count, value: 1}]}
    job: {type: glue, config: {jobName: j}, maxRetries: 1}
`, i)
	}
	b.WriteString("jobs:\n")
	for i := 0; i < n; i += 10 {
		fmt.Fprintf(&b, "  p%d: [{duration: 5m, result: fail}, {duration: 10m, result: success}]\n", i)
	}
	b.WriteString("timeline:\n")
	for d := 0; d < days; d++ {
		for i := 0; i < n; i++ {
			at := start.AddDate(0, 0, d).Add(time.Duration(7*60+i%120) * time.Minute)
			fmt.Fprintf(&b, "  - {at: %s, sensor: {pipeline: p%d, key: landed, data: {files: %d}}}\n", at.Format(time.RFC3339), i, d+1)
			if i%3 != 0 {
				fmt.Fprintf(&b, "  - {at: %s, sensor: {pipeline: p%d, key: \"audit#%s\", data: {count: %d}}}\n", at.Add(3*time.Hour).Format(time.RFC3339), i, at.Format("2006-01-02"), 100+d)
			}
		}
	}
	return b.String()
}

// watchdogInterval is the busy scenario's watchdog interval.
var watchdogInterval = "1h"

// BenchmarkSimulate1000Pipelines30Days measures `interlock simulate` on a
// busy scenario: 1,000 pipelines over 30 virtual days (product spec §8:
// under 60 s). Run with -benchtime 1x; it reports wall seconds and events.
func BenchmarkSimulate1000Pipelines30Days(b *testing.B) {
	benchSimulate(b, 1000, 30)
}

// BenchmarkSimulateWatchdog100Pipelines30Days measures a month of 100
// pipelines with the watchdog at its default 5m interval, to show what the
// passes cost.
func BenchmarkSimulateWatchdog100Pipelines30Days(b *testing.B) {
	watchdogInterval = "5m"
	defer func() { watchdogInterval = "1h" }()
	benchSimulate(b, 100, 30)
}

func benchSimulate(b *testing.B, n, days int) {
	src := busyScenario(n, days)
	sc, err := scenario.Parse("busy.yaml", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := simulate.Run(b.Context(), sc, simulate.Options{OpenStore: openSQLite, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(res.Events)), "events")
		b.ReportMetric(float64(n*days), "pipeline-days")
	}
}

// TestBusyScenarioSmall runs a small busy scenario so the benchmark's
// generator and the engine under load stay correct: every pipeline-day
// triggers, retries stay within budget, nothing is refused.
func TestBusyScenarioSmall(t *testing.T) {
	sc, err := scenario.Parse("busy.yaml", []byte(busyScenario(30, 3)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate.Run(t.Context(), sc, simulate.Options{OpenStore: openSQLite, Dir: filepath.Join(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	if res.Facts.LateReads > 0 {
		t.Errorf("%d late reads (facts an input's needs did not name); the last: %s", res.Facts.LateReads, res.Facts.LastLate)
	}
	count := map[string]int{}
	for _, e := range res.Events {
		count[string(e.Type)]++
	}
	// 30 pipelines × 3 days = 90 periods, each completing once; 3 of the
	// pipelines (every tenth) fail once first.
	// The 20 sensor-triggered ones meet their 09:00 SLA and pass their
	// post-run rules each day.
	if count["JOB_COMPLETED"] != 90 || count["JOB_FAILED"] != 3 || count["JOB_TRIGGERED"] != 93 || count["RETRY_EXHAUSTED"] != 0 ||
		count["SLA_MET"] != 60 || count["SLA_BREACH"] != 0 || count["POST_RUN_PASSED"] != 60 || count["POST_RUN_DRIFT"] != 0 || len(res.Errors) != 0 {
		t.Fatalf("event counts: %v; refused: %v", count, res.Errors)
	}
}
