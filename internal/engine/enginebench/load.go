package enginebench

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
)

// The sensor-write load of the sensor → decision benchmarks (500 writes/s
// on SQLite and PostgreSQL) and of the saturation search: pipelines with a
// trigger on "landed" and two validation rules, whose "rows" sensor is
// already satisfied, so a "landed" write for a new period is new data the
// engine decides on at once — it starts the period's run.

// LoadSensorPipelines applies n such pipelines (p0 … p<n-1>) through e and
// writes their "rows" sensor.
func LoadSensorPipelines(b *testing.B, e *engine.Engine, n int) {
	b.Helper()
	for i := range n {
		doc := fmt.Sprintf(`
pipeline: {id: p%d}
schedule:
  trigger: {key: landed, check: gte, field: files, value: 1}
validation:
  rules:
    - {key: landed, check: gte, field: files, value: 1}
    - {key: rows, check: gte, field: count, value: 1000}
job: {type: glue, config: {jobName: j%d}}
`, i, i)
		if _, err := e.ApplyConfig(b.Context(), fmt.Sprintf("p%d.yaml", i), []byte(doc)); err != nil {
			b.Fatal(err)
		}
		if _, err := e.PutSensor(b.Context(), fmt.Sprintf("p%d", i), "rows", run.Detail("count", 5000)); err != nil {
			b.Fatal(err)
		}
	}
}

// WriteLanded makes sensor write number i of the load through e: pipeline
// p<i mod n>, a period of its own (day i/n from 2026-01-01), so that every
// write is a decision that starts a run.
func WriteLanded(b *testing.B, e *engine.Engine, n, i int) error {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i/n)
	_, err := e.PutSensor(b.Context(), fmt.Sprintf("p%d", i%n), "landed",
		run.Detail("files", 3, "date", day.Format("2006-01-02")))
	return err
}

// Step is what one rate of a load did.
type Step struct {
	Rate           float64       // writes/s asked for
	Achieved       float64       // writes/s made (issued over the step's wall time)
	P50, P99, Max  time.Duration // from each write's due time to its decision committed
	Writes, Failed int
	// Abandoned: the writes in flight exceeded a quarter second's worth,
	// so the step stopped issuing writes (its p99 is past any bound).
	Abandoned bool
}

func (s Step) String() string {
	a := ""
	if s.Abandoned {
		a = " (abandoned: backlog)"
	}
	return fmt.Sprintf("%6.0f/s asked, %6.0f/s made: p50 %6.1f ms, p99 %7.1f ms, max %7.1f ms, %d writes, %d failed%s",
		s.Rate, s.Achieved, ms(s.P50), ms(s.P99), ms(s.Max), s.Writes, s.Failed, a)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// RunLoad makes writes at rate for d, open loop: write number next+k is
// due at start + k/rate and is made at its due time by a goroutine of its
// own (as independent clients reach serve's handlers), its latency counted
// from its due time. It returns when every write made has ended, and
// advances next past them.
func RunLoad(rate float64, d time.Duration, next *int, write func(i int) error) Step {
	return runLoad(rate, d, next, write, false)
}

// runLoad is RunLoad; with abandon, it stops making writes once more than
// a quarter second's worth are in flight (Saturate's steps: such a step
// has failed, and the backlog would only slow the next).
func runLoad(rate float64, d time.Duration, next *int, write func(i int) error, abandon bool) Step {
	wall := clock.Real{}
	n := int(rate * d.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	lat := make([]time.Duration, n)
	var failed, inFlight atomic.Int64
	backlog := int64(rate / 4)
	var wg sync.WaitGroup
	s := Step{Rate: rate}
	start := wall.Now()
	made := 0
	for k := range n {
		due := start.Add(time.Duration(k) * interval)
		if w := due.Sub(wall.Now()); w > 0 {
			time.Sleep(w)
		}
		if abandon && inFlight.Load() > max(backlog, 8) {
			s.Abandoned = true
			break
		}
		i := *next + k
		inFlight.Add(1)
		wg.Go(func() {
			defer inFlight.Add(-1)
			if err := write(i); err != nil {
				failed.Add(1)
			}
			lat[k] = wall.Now().Sub(due)
		})
		made++
	}
	issued := wall.Now().Sub(start)
	wg.Wait()
	*next += made
	lat = lat[:made]
	slices.Sort(lat)
	s.Writes, s.Failed = made, int(failed.Load())
	if made > 0 {
		s.Achieved = float64(made) / max(issued.Seconds(), float64(made-1)/rate)
		s.P50, s.P99, s.Max = lat[made/2], lat[made*99/100], lat[made-1]
	}
	return s
}

// Sustained says whether a step held its rate under the latency bound:
// every write made and decided, none failed, p99 under bound.
func (s Step) Sustained(bound time.Duration) bool {
	return !s.Abandoned && s.Failed == 0 && s.P99 < bound && s.Achieved >= 0.95*s.Rate
}

// Saturate searches the highest rate the load sustains with p99 under
// bound: it doubles the rate from start while the steps hold (halves it
// while start does not, down to start/8), then bisects between the last
// rate held and the first that failed, bisect times. Each step lasts d; a
// step that fails is run once more before the rate counts as failed, so
// that one stall of a machine shared with other work (a few hundred ms
// without CPU fail a 2 s step at any rate) does not decide the figure
// alone. It returns the highest rate held (0 if none) and every step, in
// order.
func Saturate(start float64, d, bound time.Duration, bisect int, next *int, write func(i int) error) (float64, []Step) {
	var steps []Step
	holds := func(rate float64) bool {
		for range 2 {
			s := runLoad(rate, d, next, write, true)
			steps = append(steps, s)
			if s.Sustained(bound) {
				return true
			}
		}
		return false
	}
	good, bad := 0.0, 0.0
	if holds(start) {
		good = start
		for bad == 0 {
			if good >= 64*start { // far past what two cores commit: stop doubling
				return good, steps
			}
			if holds(2 * good) {
				good *= 2
			} else {
				bad = 2 * good
			}
		}
	} else {
		bad = start
		for good == 0 && bad > start/8 {
			if holds(bad / 2) {
				good = bad / 2
			} else {
				bad /= 2
			}
		}
		if good == 0 {
			return 0, steps
		}
	}
	for range bisect {
		mid := (good + bad) / 2
		if holds(mid) {
			good = mid
		} else {
			bad = mid
		}
	}
	return good, steps
}

// SaturationPipelines is the saturation search's number of pipelines: at
// a few thousand writes/s each pipeline's sensor is written a few times a
// second, rarely twice at once (which would be a conflict and a retry,
// not the load measured).
const SaturationPipelines = 1000

// SaturateAndLog runs the saturation search of `make bench` (2 s steps
// from 250 writes/s, p99 under 50 ms, three bisections), logs its steps
// and returns the highest rate held.
func SaturateAndLog(b *testing.B, write func(i int) error) float64 {
	b.Helper()
	next := 0
	best, steps := Saturate(250, 2*time.Second, 50*time.Millisecond, 3, &next, write)
	for _, s := range steps {
		b.Log(s)
	}
	return best
}

// Report fails b if any write of s failed or the step was abandoned, and
// reports its p50-ms, p99-ms, max-ms and writes/s.
func Report(b *testing.B, s Step) {
	b.Helper()
	if s.Failed > 0 || s.Abandoned {
		b.Fatalf("%v", s)
	}
	b.ReportMetric(ms(s.P50), "p50-ms")
	b.ReportMetric(ms(s.P99), "p99-ms")
	b.ReportMetric(ms(s.Max), "max-ms")
	b.ReportMetric(s.Achieved, "writes/s")
}
