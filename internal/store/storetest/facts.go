package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// testFacts checks store.FactsReader: one batch answers exactly what the
// port's single reads answer, on keys present, absent, named twice, named
// in two lists, and on keys that share a prefix with others (a per-period
// sensor key, an hourly period of a day, a pipeline whose id extends
// another's), so a batch that maps a record back to the wrong key, or
// reads a range too wide, fails. The answer of a store without the batch
// (store.ReadFactsSingly) is checked against the same single reads.
func testFacts(t *testing.T, o Options) {
	k1, k2 := key("pl", "cron", "2026-03-10"), key("pl", "cron", "2026-03-09")
	hour := key("pl", "cron", "2026-03-10T05") // its markers and ledger must not join k1's
	plLevel := key("pl", "", "")               // pipeline-level markers
	long := key("pl-2", "cron", "2026-03-10")  // a pipeline id that extends pl
	absent := key("pl", "cron", "2026-03-11")

	seed := func(t *testing.T, s store.Store) {
		var c store.Change
		for _, id := range []string{"pl", "pl-2"} {
			c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: fullPipeline(id)})
		}
		for _, k := range []string{"orders", "orders#2026-03-10", "orders#2026-03-1", "other"} {
			c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: fullSensor("pl", k)})
		}
		c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: minimalSensor("pl-2", "orders", 2)})
		c.Runs = append(c.Runs, store.RunWrite{Run: fullRun(k1)}, store.RunWrite{Run: withState(newRun(k2), run.Completed)},
			store.RunWrite{Run: newRun(hour)}, store.RunWrite{Run: fullRun(long)})
		for _, tk := range []string{"eval#pl#2026-03-10", "eval#pl#2026-03-10#2", "sla#pl"} {
			c.Timers = append(c.Timers, store.TimerWrite{Timer: fullTimer(tk, at(time.Duration(len(tk))*time.Minute))})
		}
		// Kinds out of order: Markers must come back sorted by kind.
		for _, m := range []struct {
			k     run.Key
			kinds []string
		}{{k1, []string{"sla-warning", "first-trigger", "b"}}, {hour, []string{"first-trigger"}},
			{plLevel, []string{"paused"}}, {long, []string{"first-trigger"}}, {k2, []string{"sla-breach"}}} {
			for _, kind := range m.kinds {
				c.Markers = append(c.Markers, store.MarkerWrite{Marker: fullMarker(m.k, kind), IfAbsent: true})
			}
		}
		c.Baselines = append(c.Baselines, fullBaseline(k1), fullBaseline(long))
		c.Ledger = append(c.Ledger, ledgerEntry(k1, 2), ledgerEntry(k1, 1), ledgerEntry(hour, 1), ledgerEntry(long, 1))
		commit(t, s, c)
	}

	full := store.FactsQuery{
		Pipelines: []string{"pl", "none", "pl", "pl-"},
		Sensors: []store.SensorRef{ref("pl", "orders"), ref("pl", "orders#2026-03-10"), ref("pl", "orders"), ref("pl", "missing"),
			ref("pl-2", "orders"), ref("none", "orders"), ref("pl", "orders#2026-03-1")},
		Inboxes: []store.SensorRef{ref("pl", "orders"), ref("pl", "missing"), ref("pl", "orders")},
		// k1 is in every list; absent twice.
		Runs:      []run.Key{k1, k2, k1, absent, long, absent},
		Timers:    []string{"eval#pl#2026-03-10", "missing", "sla#pl", "eval#pl#2026-03-10"},
		MarkersOf: []run.Key{k1, plLevel, absent, k1, key("pl", "cron", "2026-03-1")},
		Baselines: []run.Key{k1, k2, k1, key("pl-", "cron", "2026-03-10")},
		Ledgers:   []run.Key{k1, k2, hour, k1, key("pl", "cron", "2026-03-1")},
	}

	t.Run("AnswersWhatTheSingleReadsAnswer", func(t *testing.T) {
		s, want := answersSingly(t, o.New(t), seed, full, describe, []string{
			"baseline pl/cron/2026-03-10: pl/cron/2026-03-10",
			"inbox pl/missing: not found",
			"inbox pl/orders: not found",
			"ledger pl/cron/2026-03-10: pl/cron/2026-03-10 1 pl/cron/2026-03-10 2",
			"ledger pl/cron/2026-03-10T05: pl/cron/2026-03-10T05 1",
			"markers pl//: pl// paused",
			"markers pl/cron/2026-03-10: pl/cron/2026-03-10 b pl/cron/2026-03-10 first-trigger pl/cron/2026-03-10 sla-warning",
			"pipeline pl: pl",
			"run pl-2/cron/2026-03-10: pl-2/cron/2026-03-10",
			"run pl/cron/2026-03-09: pl/cron/2026-03-09",
			"run pl/cron/2026-03-10: pl/cron/2026-03-10",
			"sensor pl-2/orders: pl-2/orders",
			"sensor pl/orders#2026-03-10: pl/orders#2026-03-10",
			"sensor pl/orders#2026-03-1: pl/orders#2026-03-1",
			"sensor pl/orders: pl/orders",
			"timer eval#pl#2026-03-10: eval#pl#2026-03-10",
			"timer sla#pl: sla#pl",
		})
		mustMatch(t, "the single reads' run", want.Runs[k1], must(s.RunGet(t.Context(), k1)).get(t))
	})

	t.Run("EmptyQuery", func(t *testing.T) {
		s := o.New(t)
		seed(t, s)
		checkFacts(t, s, store.FactsQuery{}, store.NewFacts())
	})

	t.Run("NothingThere", func(t *testing.T) {
		s := o.New(t)
		want := store.NewFacts()
		for _, r := range full.Inboxes {
			want.Inboxes[r] = store.InboxItem{Err: store.ErrNotFound}
		}
		checkFacts(t, s, full, want)
	})

	t.Run("ReadsTheLatestCommit", func(t *testing.T) {
		s := o.New(t)
		seed(t, s)
		q := store.FactsQuery{Runs: []run.Key{k1}, Sensors: []store.SensorRef{ref("pl", "orders")}, MarkersOf: []run.Key{k1}}
		before := must(store.ReadFacts(t.Context(), s, q)).get(t)
		r := before.Runs[k1]
		r.State = run.Completed
		commit(t, s, store.Change{
			Runs:          []store.RunWrite{{Run: r, ExpectVersion: r.Version}},
			SensorDeletes: []store.SensorDelete{{PipelineID: "pl", Key: "orders"}},
			MarkerDeletes: []store.MarkerDelete{{Key: k1, Kind: "b"}},
		})
		after := must(store.ReadFacts(t.Context(), s, q)).get(t)
		if after.Runs[k1].State != run.Completed || after.Runs[k1].Version != r.Version+1 {
			t.Errorf("Facts after a commit: run %s v%d, want %s v%d", after.Runs[k1].State, after.Runs[k1].Version, run.Completed, r.Version+1)
		}
		if _, ok := after.Sensors[ref("pl", "orders")]; ok {
			t.Error("Facts after a commit: the deleted sensor is still there")
		}
		if len(after.Markers[k1]) != 2 {
			t.Errorf("Facts after a commit: %d markers of %v, want 2", len(after.Markers[k1]), k1)
		}
	})

	// More keys than one DynamoDB BatchGetItem takes (100), half absent.
	t.Run("ManyKeys", func(t *testing.T) {
		s := o.New(t)
		var q store.FactsQuery
		var c store.Change
		for i := range 150 {
			k := key("many", "cron", fmt.Sprintf("2026-01-%03d", i))
			q.Runs = append(q.Runs, k)
			if i%2 == 0 {
				c.Runs = append(c.Runs, store.RunWrite{Run: newRun(k)})
			}
			q.Sensors = append(q.Sensors, ref("many", fmt.Sprintf("s%03d", i)))
			if i%3 == 0 {
				c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: minimalSensor("many", fmt.Sprintf("s%03d", i), int64(i))})
			}
			// A commit of a few dozen records: DynamoDB's transactions
			// take at most 100.
			if i%30 == 29 {
				commit(t, s, c)
				c = store.Change{}
			}
		}
		want := singleReads(t, s, q)
		if len(want.Runs) != 75 || len(want.Sensors) != 50 || len(describe(want)) != 125 {
			t.Fatalf("the single reads found %d runs and %d sensors, want 75 and 50", len(want.Runs), len(want.Sensors))
		}
		checkFacts(t, s, q, want)
	})
}

// checkFacts fails unless ReadFacts (the store's batch when it offers one)
// answers q with want, twice, and leaves the single reads' answers as
// they were. The first answer's maps are spoiled before the second read:
// they are the caller's (the engine's facts rounds write into them), so
// no backend may answer in a map it keeps.
func checkFacts(t *testing.T, s store.Store, q store.FactsQuery, want store.Facts) {
	t.Helper()
	if _, ok := s.(store.FactsReader); !ok {
		t.Log("this store does not offer FactsReader: ReadFacts reads one by one")
	}
	for _, what := range []string{"Facts", "Facts again"} {
		got := must(store.ReadFacts(t.Context(), s, q)).get(t)
		mustMatchFacts(t, what, got, want)
		mustMatch(t, what, describe(got), describe(want))
		spoilFacts(got)
	}
	// What a batch read leaves behind (a backend's cache) changes no
	// single read.
	mustMatchFacts(t, "the single reads after Facts", singleReads(t, s, q), want)
}

// spoilFacts empties every map of f and puts in each an entry of the
// zero key: a later answer in one of these maps, refilled or not, shows.
func spoilFacts(f store.Facts) {
	spoil(f.Pipelines)
	spoil(f.Sensors)
	spoil(f.Inboxes)
	spoil(f.Runs)
	spoil(f.Timers)
	spoil(f.Markers)
	spoil(f.Baselines)
	spoil(f.Ledgers)
	spoil(f.RunLists)
	spoil(f.SensorPrefixes)
	spoil(f.SensorsChanged)
	spoil(f.Backfills)
	spoil(f.Silences)
}

func spoil[K comparable, V any](m map[K]V) {
	clear(m)
	var k K
	var v V
	m[k] = v
}

// mustMatchFacts compares two Facts: maps that must be non-nil, inbox
// errors by what they mean (errors.Is, or the same text).
func mustMatchFacts(t *testing.T, what string, got, want store.Facts) {
	t.Helper()
	if got.Pipelines == nil || got.Sensors == nil || got.Inboxes == nil || got.Runs == nil || got.Timers == nil ||
		got.Markers == nil || got.Baselines == nil || got.Ledgers == nil || got.RunLists == nil || got.SensorPrefixes == nil || got.SensorsChanged == nil || got.Backfills == nil || got.Silences == nil {
		t.Errorf("%s: a map of Facts is nil: %+v", what, got)
	}
	gotInbox, wantInbox := got.Inboxes, want.Inboxes
	got.Inboxes, want.Inboxes = nil, nil
	mustMatch(t, what, got, want)
	if len(gotInbox) != len(wantInbox) {
		t.Errorf("%s: %d inbox items, want %d", what, len(gotInbox), len(wantInbox))
	}
	for r, w := range wantInbox {
		g, ok := gotInbox[r]
		switch {
		case !ok:
			t.Errorf("%s: inbox %v missing", what, r)
		case (g.Err == nil) != (w.Err == nil) || (w.Err != nil && !errors.Is(g.Err, w.Err) && g.Err.Error() != w.Err.Error()):
			t.Errorf("%s: inbox %v error %v, want %v", what, r, g.Err, w.Err)
		default:
			mustMatch(t, what+" inbox", g.Data, w.Data)
		}
	}
}

func ref(pipelineID, key string) store.SensorRef {
	return store.SensorRef{PipelineID: pipelineID, Key: key}
}

// inboxReader is a store with a sensor inbox (DynamoDB).
type inboxReader interface {
	SensorItemGet(ctx context.Context, pipelineID, key string) (sensor.Object, error)
}

// answersSingly is a Facts group's AnswersWhatTheSingleReadsAnswer case:
// seed fills s, the single reads' answer to q must hold what lines says
// (as list prints it), and ReadFacts must answer the same (checkFacts). It
// returns s and that answer for the caller's own checks.
func answersSingly(t *testing.T, s store.Store, seed func(*testing.T, store.Store), q store.FactsQuery,
	list func(store.Facts) []string, lines []string) (store.Store, store.Facts) {
	t.Helper()
	seed(t, s)
	want := singleReads(t, s, q)
	mustMatch(t, "the single reads", list(want), lines)
	checkFacts(t, s, q, want)
	return s, want
}

// singleReads is what q means: store.ReadFactsSingly, the port's single
// reads, checked on their own by describe's listings.
func singleReads(t *testing.T, s store.Store, q store.FactsQuery) store.Facts {
	t.Helper()
	return must(store.ReadFactsSingly(t.Context(), s, q)).get(t)
}

// describe lists what f holds, one line per record, each under its map key
// and naming the record's own key, sorted: a record filed under the wrong
// key, or a marker or ledger entry of another period, shows.
func describe(f store.Facts) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for id, p := range f.Pipelines {
		add("pipeline %s: %s", id, p.ID)
	}
	for r, x := range f.Sensors {
		add("sensor %s/%s: %s/%s", r.PipelineID, r.Key, x.PipelineID, x.Key)
	}
	for r, it := range f.Inboxes {
		state := "content"
		switch {
		case errors.Is(it.Err, store.ErrNotFound):
			state = "not found"
		case it.Err != nil:
			state = it.Err.Error()
		}
		add("inbox %s/%s: %s", r.PipelineID, r.Key, state)
	}
	for k, x := range f.Runs {
		add("run %s: %s", keyString(k), keyString(x.Key))
	}
	for key, x := range f.Timers {
		add("timer %s: %s", key, x.Key)
	}
	for k, ms := range f.Markers {
		line := "markers " + keyString(k) + ":"
		for _, m := range ms {
			line += " " + keyString(m.Key) + " " + m.Kind
		}
		add("%s", line)
	}
	for k, x := range f.Baselines {
		add("baseline %s: %s", keyString(k), keyString(x.Key))
	}
	for k, es := range f.Ledgers {
		line := "ledger " + keyString(k) + ":"
		for _, e := range es {
			line += fmt.Sprintf(" %s %d", keyString(e.Key), e.Seq)
		}
		add("%s", line)
	}
	slices.Sort(out)
	return out
}
