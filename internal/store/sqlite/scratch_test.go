package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// A scratch store's database is in memory while it is open: its commits
// write nothing to the file, and Close writes the whole of it there, an
// ordinary database file that Open reads.
func TestScratchWritesItsFileAtClose(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "scratch.db")
	s, err := OpenScratch(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	createPipeline(t, s, "a")
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the open scratch store wrote its file (stat: %v)", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	durable := openWith(t, "Open", Open, path)
	got, err := durable.PipelineGet(ctx, "a")
	if err != nil || got.Hash != "h1" {
		t.Fatalf("the file Close wrote holds %+v, %v", got, err)
	}
}

// A file that is not a database fails OpenScratch, naming it, and is left
// as it was: the Close after the failed open writes no empty database
// over it.
func TestScratchKeepsAnUnreadableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scratch.db")
	junk := bytes.Repeat([]byte("not a database "), 1000)
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenScratch(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("OpenScratch read a file that is not a database")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("the error does not name the file: %v", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, junk) {
		t.Fatalf("the unreadable file was changed (%d bytes now)", len(got))
	}
}

// A list on the scratch store's one connection runs detached from its
// context once the context was checked: it starts no goroutines to watch
// a context that can end (the driver's interrupt, database/sql's closer),
// so it allocates as a list under a context that cannot end, plus the
// detached context itself. A context that has ended still fails it.
func TestScratchListsRunDetached(t *testing.T) {
	s := openScratch(t, filepath.Join(t.TempDir(), "scratch.db"))
	list := func(ctx context.Context) error {
		_, err := s.SensorList(ctx, "a")
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plain := testing.AllocsPerRun(50, func() { _ = list(context.Background()) })
	cancellable := testing.AllocsPerRun(50, func() { _ = list(ctx) })
	if cancellable > plain+1 {
		t.Fatalf("a list under a context that can end allocates %.0f, under one that cannot %.0f: it watches its context", cancellable, plain)
	}
	cancel()
	if err := list(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a list under an ended context: %v", err)
	}
}

// A scratch store holds at most its page limit (1 GiB in production,
// memdb's own): the commit that would pass it fails, naming the store's
// file and the limit and not as a conflict, writes nothing, and the store
// keeps what it held before, to its file at Close.
func TestScratchFullFailsClearly(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "scratch.db")
	const pages = 512 // 2 MiB
	s, err := openPages(ctx, path, syncOff, pages)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	createPipeline(t, s, "a")
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	big := strings.Repeat("x", 64<<10)
	committed := 0
	for ; committed < 1000; committed++ {
		err = s.Commit(ctx, store.Change{Events: []event.Event{{ID: fmt.Sprint("e", committed), Time: at, Type: event.ValidationPassed,
			PipelineID: "a", ScheduleID: "daily", Date: "2026-03-01", Message: big}}})
		if err != nil {
			break
		}
	}
	if err == nil {
		t.Fatalf("1,000 events of 64 kB each fit in a scratch store of %d pages", pages)
	}
	for _, want := range []string{path, "is full", "2 MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if errors.Is(err, store.ErrConflict) {
		t.Errorf("a full store is reported as a conflict: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	durable := openWith(t, "Open", Open, path)
	page, err := durable.EventList(ctx, store.EventListParams{PipelineID: "a"})
	if err != nil || len(page.Events) != committed {
		t.Fatalf("the file holds %d events (%v), want the %d committed before the store was full", len(page.Events), err, committed)
	}
}

// A Change that fails on a scratch store writes nothing and takes nothing
// with it: the Changes before it in the store's open transaction
// (scratchtx.go) stay, their pipeline checks applied again in SQL on the
// state they were first checked on, not against the cached row a later
// Change moved; and the store takes more Changes, and writes them all to
// its file.
func TestScratchFailedChangeKeepsTheOnesBefore(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "scratch.db")
	s, err := OpenScratch(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, at := createPipeline(t, s, "a")
	read, err := s.PipelineGet(ctx, "a") // cached
	if err != nil {
		t.Fatal(err)
	}
	key := run.Key{PipelineID: "a", ScheduleID: "daily", Period: "2026-03-01"}
	marker := func(kind string, ifAbsent bool) []store.MarkerWrite {
		return []store.MarkerWrite{{Marker: store.Marker{Key: key, Kind: kind, At: at}, IfAbsent: ifAbsent}}
	}
	// Checked at the cached row's version, and so answered from the cache.
	if err := s.Commit(ctx, store.Change{PipelineChecks: []store.PipelineCheck{{ID: "a", Version: read.Version}}, Markers: marker("checked", true)}); err != nil {
		t.Fatal(err)
	}
	p.ConfigVersion = 2
	if err := s.Commit(ctx, store.Change{Pipelines: []store.PipelineWrite{{Pipeline: p, ExpectVersion: read.Version}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PipelineGet(ctx, "a"); err != nil { // the cache holds the new version
		t.Fatal(err)
	}
	sensor := store.Sensor{PipelineID: "a", Key: "landed", ChangedAt: at, WrittenAt: at}
	err = s.Commit(ctx, store.Change{Sensors: []store.SensorWrite{{Sensor: sensor}}, Markers: marker("checked", true)})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a marker written again if absent: %v; want a conflict", err)
	}
	if err := s.Commit(ctx, store.Change{Markers: marker("after", true)}); err != nil {
		t.Fatalf("a Change after the failed one: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	durable := openWith(t, "Open", Open, path)
	for _, kind := range []string{"checked", "after"} {
		if _, err := durable.MarkerGet(ctx, key, kind); err != nil {
			t.Errorf("marker %s: %v", kind, err)
		}
	}
	if got, err := durable.PipelineGet(ctx, "a"); err != nil || got.ConfigVersion != 2 {
		t.Errorf("pipeline a: config version %d, %v; want 2", got.ConfigVersion, err)
	}
	if _, err := durable.SensorGet(ctx, "a", "landed"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the failed Change's sensor: %v; want none", err)
	}
}
