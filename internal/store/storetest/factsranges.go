package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// testFactsRanges checks the range reads of store.FactsQuery (RunLists,
// SensorPrefixes, SensorsChanged, Backfills, AllPipelines, EventLists)
// and the silences read by id:
// each answers what its single read answers — bounds inclusive as RunList's PeriodFrom and PeriodTo and
// SensorListChanged's Since, a prefix that is not a key boundary, an
// empty range, look-alike keys and pipelines, a limit — named beside
// point keys in one query, and past one DynamoDB page.
func testFactsRanges(t *testing.T, o Options) {
	day := "2026-03-10"
	seed := func(t *testing.T, s store.Store) {
		var c store.Change
		for _, r := range []run.Run{
			newRun(key("pl", "cron", day)),
			newRun(key("pl", "cron", day+"T00")),
			withState(newRun(key("pl", "cron", day+"T05")), run.Completed),
			newRun(key("pl", "cron", day+"T23")),
			withState(newRun(key("pl", "cron", "2026-03-11")), run.Completed),
			newRun(key("pl", "cron", "2026-03-09")),
			newRun(key("pl", "", day+"T05")),       // the other schedule id
			newRun(key("pl-2", "cron", day+"T05")), // a pipeline id that extends pl
		} {
			c.Runs = append(c.Runs, store.RunWrite{Run: r})
		}
		for i, k := range []string{"order", "orders", "orders#2026-03-10", "orders#2026-03-10T05", "orders-v2", "ordersx", "other"} {
			x := minimalSensor("pl", k, int64(i))
			x.ChangedAt = at(time.Duration(i) * time.Minute)
			c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: x})
		}
		for _, b := range []struct {
			pipeline, id string
			at           time.Duration
		}{{"pl", "2", time.Minute}, {"pl", "10", time.Minute}, {"pl", "1", 2 * time.Minute}, {"pl-2", "1", 0}} {
			c.Backfills = append(c.Backfills, store.BackfillWrite{Backfill: store.Backfill{PipelineID: b.pipeline, ID: b.id, From: day, To: day,
				RequestedAt: at(b.at), RequestedBy: "op", State: backfill.Running}})
		}
		for _, id := range []string{"s1", "s10"} {
			c.Silences = append(c.Silences, store.SilenceWrite{Silence: store.Silence{Silence: silence.Silence{ID: id,
				Matchers: silence.Matchers{Pipelines: []string{"pl"}}, StartsAt: at(0), EndsAt: at(time.Hour), CreatedBy: "op", CreatedAt: at(0)}}})
		}
		removed := minimalPipeline("pl-removed")
		removed.RemovedAt = at(time.Minute)
		c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: minimalPipeline("pl-2")}, store.PipelineWrite{Pipeline: removed},
			store.PipelineWrite{Pipeline: minimalPipeline("pl")})
		for i, e := range []struct {
			pipeline string
			typ      event.Type
		}{{"pl", event.SLABreach}, {"pl", event.SLAWarning}, {"pl-2", event.SLABreach}, {"pl", event.SLABreach}, {"other", event.SLABreach}, {"pl", event.SLABreach}} {
			c.Events = append(c.Events, newEvent(fmt.Sprintf("e%d", i), e.typ, key(e.pipeline, "cron", day), at(time.Duration(i)*time.Minute)))
		}
		unchanged := minimalSensor("pl", "orders#unchanged", 9)
		unchanged.ChangedAt = time.Time{}
		c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: unchanged}, store.SensorWrite{Sensor: minimalSensor("pl-2", "orders", 1)})
		commit(t, s, c)
	}
	hours := store.RunListParams{PipelineID: "pl", ScheduleID: "cron", PeriodFrom: day + "T00", PeriodTo: day + "T23"}
	fromDay := store.RunListParams{PipelineID: "pl", ScheduleID: "cron", PeriodFrom: day}
	between := store.RunListParams{PipelineID: "pl", ScheduleID: "cron", PeriodFrom: day + "T06", PeriodTo: day + "T22"}
	bothSchedules := store.RunListParams{PipelineID: "pl", PeriodFrom: day + "T05", PeriodTo: day + "T05"}
	active := store.RunListParams{PipelineID: "pl", ActiveOnly: true}
	allActive := store.RunListParams{ActiveOnly: true}
	limited := store.RunListParams{PipelineID: "pl", ScheduleID: "cron", Limit: 2}
	orders := store.SensorListPrefixParams{PipelineID: "pl", Prefix: "orders"}
	ordersHash := store.SensorListPrefixParams{PipelineID: "pl", Prefix: "orders#2026-03-1"}
	none := store.SensorListPrefixParams{PipelineID: "pl", Prefix: "zz"}
	every := store.SensorListPrefixParams{PipelineID: "pl-2"}
	atTwo := store.SensorListChangedParams{PipelineID: "pl", Since: at(2 * time.Minute)}
	afterTwo := store.SensorListChangedParams{PipelineID: "pl", Since: at(2*time.Minute + time.Nanosecond)}
	firstAfterFour := store.SensorListChangedParams{PipelineID: "pl", Since: at(4 * time.Minute).In(elsewhere), Limit: 1}
	afterAll := store.SensorListChangedParams{PipelineID: "pl", Since: at(time.Hour)}
	breaches := store.EventListParams{PipelineID: "pl", Types: []event.Type{event.SLABreach}, Since: at(time.Minute), Limit: 500}
	firstTwo := store.EventListParams{Types: []event.Type{event.SLABreach, event.SLAWarning}, Limit: 2}
	noneSince := store.EventListParams{Since: at(time.Hour)}
	q := store.FactsQuery{
		Runs:           []run.Key{key("pl", "cron", day)},
		Sensors:        []store.SensorRef{ref("pl", "orders")},
		RunLists:       []store.RunListParams{hours, fromDay, between, bothSchedules, active, allActive, limited, hours},
		SensorPrefixes: []store.SensorListPrefixParams{orders, ordersHash, none, every, orders},
		SensorsChanged: []store.SensorListChangedParams{atTwo, afterTwo, firstAfterFour, afterAll},
		Backfills:      []string{"pl", "pl-", "none", "pl"},
		Silences:       []string{"s1", "missing", "s1", "s", "s10"},
		AllPipelines:   true,
		EventLists:     []store.EventListParams{breaches, firstTwo, noneSince, breaches},
	}

	t.Run("AnswersWhatTheSingleReadsAnswer", func(t *testing.T) {
		answersSingly(t, o.New(t), seed, q, describeRanges, []string{
			"backfills pl: pl/10 pl/2 pl/1",
			"changed {pl 2+1ns}: orders#2026-03-10T05 orders-v2 ordersx other",
			"changed {pl 2}: orders#2026-03-10 orders#2026-03-10T05 orders-v2 ordersx other",
			"changed {pl 4 limit 1}: orders-v2",
			"events 0: e3 e5",
			"events 1: e0 e1",
			"events 2:",
			"events 3: e3 e5",
			"pipelines: pl pl-2 pl-removed",
			"prefix pl-2/: pl-2/orders",
			"prefix pl/orders#2026-03-1: pl/orders#2026-03-10 pl/orders#2026-03-10T05",
			"prefix pl/orders: pl/orders pl/orders#2026-03-10 pl/orders#2026-03-10T05 pl/orders#unchanged pl/orders-v2 pl/ordersx",
			"runs {* active}: pl/cron/2026-03-10T23 pl//2026-03-10T05 pl-2/cron/2026-03-10T05 pl/cron/2026-03-10T00 pl/cron/2026-03-10 pl/cron/2026-03-09",
			"runs {pl active}: pl/cron/2026-03-10T23 pl//2026-03-10T05 pl/cron/2026-03-10T00 pl/cron/2026-03-10 pl/cron/2026-03-09",
			"runs {pl/ 2026-03-10T05..2026-03-10T05}: pl//2026-03-10T05 pl/cron/2026-03-10T05",
			"runs {pl/cron 2026-03-10..}: pl/cron/2026-03-11 pl/cron/2026-03-10T23 pl/cron/2026-03-10T05 pl/cron/2026-03-10T00 pl/cron/2026-03-10",
			"runs {pl/cron 2026-03-10T00..2026-03-10T23}: pl/cron/2026-03-10T23 pl/cron/2026-03-10T05 pl/cron/2026-03-10T00",
			"runs {pl/cron limit 2}: pl/cron/2026-03-11 pl/cron/2026-03-10T23",
			"silence s10: s10",
			"silence s1: s1",
		})
	})

	t.Run("NothingThere", func(t *testing.T) {
		want := store.NewFacts()
		for range q.EventLists { // a page is answered, empty
			want.EventPages = append(want.EventPages, store.EventPage{Events: []event.Event{}})
		}
		checkFacts(t, o.New(t), q, want)
	})

	t.Run("ReadsTheLatestCommit", func(t *testing.T) {
		s := o.New(t)
		seed(t, s)
		one := store.FactsQuery{RunLists: []store.RunListParams{hours, active}, SensorPrefixes: []store.SensorListPrefixParams{ordersHash}, AllPipelines: true,
			EventLists: []store.EventListParams{{PipelineID: "pl"}}}
		before := must(store.ReadFacts(t.Context(), s, one)).get(t)
		r := before.RunLists[hours][0] // T23, active
		commit(t, s, store.Change{
			Pipelines:     []store.PipelineWrite{{Pipeline: minimalPipeline("pl-3")}},
			Events:        []event.Event{newEvent("late", event.SLABreach, key("pl", "cron", day), at(time.Hour))},
			Runs:          []store.RunWrite{{Run: withState(r, run.Completed), ExpectVersion: r.Version}},
			SensorDeletes: []store.SensorDelete{{PipelineID: "pl", Key: "orders#2026-03-10"}},
		})
		after := must(store.ReadFacts(t.Context(), s, one)).get(t)
		mustMatch(t, "the hours' states after a commit", runStates(after.RunLists[hours]), []string{
			"pl/cron/2026-03-10T23 COMPLETED", "pl/cron/2026-03-10T05 COMPLETED", "pl/cron/2026-03-10T00 EVALUATING"})
		if got := runIDs(after.RunLists[active]); slices.Contains(got, runID(r)) {
			t.Errorf("Facts after a commit: the completed run is still active: %v", got)
		}
		next := store.FactsQuery{EventLists: []store.EventListParams{{PipelineID: "pl", After: before.EventPages[0].Next}}}
		if got := must(store.ReadFacts(t.Context(), s, next)).get(t).EventPages; len(got) != 1 || len(got[0].Events) != 1 || got[0].Events[0].ID != "late" {
			t.Errorf("Facts after a commit, the page after the first's cursor: %+v, want the event committed", got)
		}
		if got, want := len(after.AllPipelines), len(before.AllPipelines)+1; got != want {
			t.Errorf("Facts after a commit: %d pipelines, want %d", got, want)
		}
		if got := len(after.SensorPrefixes[ordersHash]); got != 1 {
			t.Errorf("Facts after a commit: %d sensors starting with %q, want 1", got, ordersHash.Prefix)
		}
	})

	// A read no index serves is refused as its single read refuses it,
	// the whole query with it.
	t.Run("RefusedAsTheSingleRead", func(t *testing.T) {
		s := o.New(t)
		for _, bad := range []store.FactsQuery{
			{Runs: q.Runs, RunLists: []store.RunListParams{{PeriodTo: day}}},
			{Runs: q.Runs, SensorsChanged: []store.SensorListChangedParams{{Since: at(0)}}},
		} {
			_, err := store.ReadFacts(t.Context(), s, bad)
			if !errors.Is(err, store.ErrUnservedRead) {
				t.Errorf("Facts of %+v: %v, want ErrUnservedRead", bad, err)
			}
			if _, err := store.ReadFactsSingly(t.Context(), s, bad); !errors.Is(err, store.ErrUnservedRead) {
				t.Errorf("ReadFactsSingly of %+v: %v, want ErrUnservedRead", bad, err)
			}
		}
	})

	// More than one DynamoDB Query page (1 MB) of sensors in a range, and
	// more runs than a page of keys holds: every page is read.
	t.Run("PastOnePage", func(t *testing.T) {
		s := o.New(t)
		pad := sensor.StringValue(strings.Repeat("p", 60<<10))
		var c store.Change
		for i := range 24 {
			x := minimalSensor("big", fmt.Sprintf("k#%02d", i), int64(i))
			x.Data = sensor.NewObject(map[string]sensor.Value{"pad": pad})
			x.ChangedAt = at(time.Duration(i) * time.Second)
			c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: x})
			if i%6 == 5 {
				commit(t, s, c)
				c = store.Change{}
			}
		}
		for i := range 120 {
			c.Runs = append(c.Runs, store.RunWrite{Run: newRun(key("big", "cron", fmt.Sprintf("2026-01-01T%03d", i)))})
			if i%40 == 39 {
				commit(t, s, c)
				c = store.Change{}
			}
		}
		big := store.FactsQuery{
			SensorPrefixes: []store.SensorListPrefixParams{{PipelineID: "big", Prefix: "k#"}},
			SensorsChanged: []store.SensorListChangedParams{{PipelineID: "big", Since: at(time.Second)}},
			RunLists:       []store.RunListParams{{PipelineID: "big", PeriodFrom: "2026-01-01T000", PeriodTo: "2026-01-01T119"}},
		}
		want := singleReads(t, s, big)
		if n, m, r := len(want.SensorPrefixes[big.SensorPrefixes[0]]), len(want.SensorsChanged[big.SensorsChanged[0]]), len(want.RunLists[big.RunLists[0]]); n != 24 || m != 23 || r != 120 {
			t.Fatalf("the single reads found %d sensors by prefix, %d changed, %d runs; want 24, 23, 120", n, m, r)
		}
		checkFacts(t, s, big, want)
	})
}

func runStates(rs []run.Run) []string {
	var out []string
	for _, r := range rs {
		out = append(out, runID(r)+" "+string(r.State))
	}
	return out
}

func runIDs(rs []run.Run) []string {
	var out []string
	for _, r := range rs {
		out = append(out, runID(r))
	}
	return out
}

// describeRanges lists f's range reads, one line per range naming its
// params and its records in order, sorted by line.
func describeRanges(f store.Facts) []string {
	var out []string
	for p, rs := range f.RunLists {
		name := p.PipelineID
		if name == "" {
			name = "*"
		}
		if p.ScheduleID != "" || p.PeriodFrom != "" || p.PeriodTo != "" {
			name += "/" + p.ScheduleID
		}
		if p.PeriodFrom != "" || p.PeriodTo != "" {
			name += " " + p.PeriodFrom + ".." + p.PeriodTo
		}
		if p.ActiveOnly {
			name += " active"
		}
		if p.Limit > 0 {
			name += fmt.Sprintf(" limit %d", p.Limit)
		}
		out = append(out, "runs {"+name+"}: "+strings.Join(runIDs(rs), " "))
	}
	for p, xs := range f.SensorPrefixes {
		line := "prefix " + p.PipelineID + "/" + p.Prefix + ":"
		for _, x := range xs {
			line += " " + x.PipelineID + "/" + x.Key
		}
		out = append(out, line)
	}
	for p, xs := range f.SensorsChanged {
		since := p.Since.Sub(t0)
		name := fmt.Sprintf("%s %d", p.PipelineID, since/time.Minute)
		if rest := since % time.Minute; rest != 0 {
			name += "+" + rest.String()
		}
		if p.Limit > 0 {
			name += fmt.Sprintf(" limit %d", p.Limit)
		}
		line := "changed {" + name + "}:"
		for _, x := range xs {
			line += " " + x.Key
		}
		out = append(out, line)
	}
	for id, x := range f.Silences {
		out = append(out, "silence "+id+": "+x.ID)
	}
	for i, page := range f.EventPages {
		line := fmt.Sprintf("events %d:", i)
		for _, e := range page.Events {
			line += " " + e.ID
		}
		out = append(out, line)
	}
	if len(f.AllPipelines) > 0 {
		line := "pipelines:"
		for _, p := range f.AllPipelines {
			line += " " + p.ID
		}
		out = append(out, line)
	}
	for id, bs := range f.Backfills {
		line := "backfills " + id + ":"
		for _, b := range bs {
			line += " " + b.PipelineID + "/" + b.ID
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}
