// Package runtest holds the fixtures the core's table tests share (run,
// sla, backfill, deps, board, pause, dryrun): a pipeline parsed from YAML,
// the test day and its instants. Tests import it; code never does.
package runtest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
)

// T0 is 08:00 UTC on the test day.
var T0 = time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)

// Day is the test day, 2026-03-10, as a daily period.
var Day = schedule.Daily(schedule.Date{Year: 2026, Month: time.March, Day: 10})

// HM is h:m UTC on the test day.
func HM(h, m int) time.Time { return time.Date(2026, 3, 10, h, m, 0, 0, time.UTC) }

// Pipeline parses doc as test.yaml, failing the test on an error.
func Pipeline(t testing.TB, doc string) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.ParsePipeline("test.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	return p
}

// Base is a trigger pipeline with one rule and a command job.
const Base = `
pipeline: {id: p1}
schedule:
  trigger: {key: ready, check: exists}
  evaluation: {window: 1h, interval: 5m}
validation:
  rules: [{key: ready, check: exists}]
job: {type: command, config: {command: /bin/true}, maxRetries: 2, maxCodeRetries: 1, triggerRetries: 2, pollInterval: 1m, pollWindow: 30m}
`

// PostRun is Base with post-run rules and drift on count.
const PostRun = Base + `postRun:
  rules: [{key: counts, check: exists}]
  driftField: count
  driftThreshold: 10
`

// DailySLA is a trigger pipeline with an SLA at 10:00 UTC, warned 1h
// before (09:00), whose periods are days; 2026-03-14 (a Saturday) is
// excluded.
const DailySLA = `
pipeline: {id: p1}
schedule:
  trigger: {key: ready, check: exists}
  exclude: {weekends: true}
sla: {deadline: "10:00", expectedDuration: 1h}
job: {type: glue, config: {jobName: j}}
`
