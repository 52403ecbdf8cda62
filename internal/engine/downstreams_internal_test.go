package engine

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// TestDownstreamIDsReadOnlyTheIndex: an upstream's pipeline-level key
// holds other markers beside its downstream index (a refused file's
// CONFIG_INVALID, a kind a later version adds); only the index's kinds
// name downstreams.
func TestDownstreamIDsReadOnlyTheIndex(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "e.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 3, 10, 5, 0, 0, 0, time.UTC)
	e := New(Options{Store: st, Clock: clock.NewVirtual(now), Passive: true})
	up := run.Key{PipelineID: "orders"}
	var c store.Change
	for _, kind := range []string{
		run.DownstreamMarker("revenue").String(),
		run.DownstreamMarker("billing").String(),
		run.ConfigInvalidMarker("00ff").String(),
		run.BlockedMarker(run.Key{PipelineID: "x", Period: "2026-03-10"}, event.JobFailed).String(),
		"downstream",       // not a qualified kind: no id
		"later-feature:ab", // a kind this version does not know
		run.MarkerWatchdogPass,
	} {
		c.Markers = append(c.Markers, store.MarkerWrite{Marker: store.Marker{Key: up, Kind: kind, At: now}})
	}
	if err := st.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	f := e.directFacts()
	o := decide.New(nil, f.Facts, now, decide.Env{Rules: e.rules})
	got, err := get(t.Context(), f, func() ([]string, error) { return o.DownstreamIDs("orders") })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"billing", "revenue"}; !slices.Equal(got, want) {
		t.Fatalf("downstreamIDs = %q, want %q", got, want)
	}
}

// TestConfigInvalidMarkerKind pins the stored kind of a refused file's
// marker: the first 8 bytes of its name's SHA-256, in hex. Another form
// would report every refused file again after an upgrade.
func TestConfigInvalidMarkerKind(t *testing.T) {
	_, kind, _ := configInvalidMarker("pipelines/orders.yaml", []byte("pipeline: {id: orders}"))
	if want := "config-invalid:c5a0513470da4c2f"; kind != want {
		t.Fatalf("kind = %q, want %q", kind, want)
	}
}
