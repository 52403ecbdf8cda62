package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// The list checks share one shape: a store seeded with records written out
// of order, a table of questions, and for each the records' ids in the
// order the port promises.

// listCase is one question to a list read and the ids of the records it
// must answer, in order.
type listCase[P any] struct {
	name   string
	params P
	want   []string
}

// checkLists runs each case as a subtest on a fresh store from load:
// list's answer, each record named by id, must be the case's want.
func checkLists[P, T any](t *testing.T, load func(*testing.T) store.Store, method string,
	list func(store.Store, context.Context, P) ([]T, error), id func(T) string, cases []listCase[P]) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := load(t)
			mustMatch(t, method, idsOf(must(list(s, t.Context(), tc.params)).get(t), id), tc.want)
		})
	}
}

// idsOf names each record with id, in order; no records is an empty list,
// not nil, so it matches a case's []string{}.
func idsOf[T any](xs []T, id func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, id(x))
	}
	return out
}

// without returns ids less the ones named in drop, in order.
func without(ids []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(drop, id) })
}

// seeded returns a fresh store holding what c writes, in one commit.
func seeded(t *testing.T, o Options, c store.Change) store.Store {
	s := o.New(t)
	commit(t, s, c)
	return s
}

// The ids the list checks name records by.
func keyString(k run.Key) string     { return k.PipelineID + "/" + k.ScheduleID + "/" + k.Period }
func runID(r run.Run) string         { return keyString(r.Key) }
func markerID(m store.Marker) string { return keyString(m.Key) + " " + m.Kind }
func timerKey(tm store.Timer) string { return tm.Key }
func sensorID(x store.Sensor) string { return x.PipelineID + "/" + x.Key }
func timerWrites(ts []store.Timer) store.Change {
	var c store.Change
	for _, tm := range ts {
		c.Timers = append(c.Timers, store.TimerWrite{Timer: tm})
	}
	return c
}
