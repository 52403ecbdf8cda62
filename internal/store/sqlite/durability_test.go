package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// childEnv, when set, makes TestAcknowledgedCommitsSurviveKill the writer
// process: it commits to the database at that path until killed.
const childEnv = "INTERLOCK_SQLITE_KILL_CHILD"

// A fixed base instant: the writer never reads the clock either.
var killBase = time.Date(2026, time.March, 14, 0, 0, 0, 0, time.UTC)

func killChange(i int) store.Change {
	k := run.Key{PipelineID: "p", ScheduleID: "s", Period: fmt.Sprintf("p%06d", i)}
	at := killBase.Add(time.Duration(i) * time.Second)
	return store.Change{
		Runs:   []store.RunWrite{{Run: run.Run{Key: k, State: run.Evaluating, CreatedAt: at}}},
		Timers: []store.TimerWrite{{Timer: store.Timer{Key: "t:" + k.Period, Kind: "evaluate", Run: k, DueAt: at}}},
		Events: []event.Event{{ID: "e" + k.Period, Time: at, Type: event.ValidationPassed, PipelineID: "p", Date: k.Period}},
	}
}

// The product's durability bar: a commit the store acknowledged survives
// kill -9 of the process. A child process commits in a loop and prints
// each acknowledgement; the test kills it mid-stream with SIGKILL and
// checks that every acknowledged commit is in the reopened database. With
// several writers in the child, commits share transactions (group.go):
// each is acknowledged after its group's fsync, and must survive too.
func TestAcknowledgedCommitsSurviveKill(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		writers, _ := strconv.Atoi(os.Getenv(childWritersEnv))
		killChild(path, max(writers, 1))
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	for _, writers := range []int{1, 8} {
		t.Run(fmt.Sprintf("writers=%d", writers), func(t *testing.T) { testKill(t, writers) })
	}
}

// childWritersEnv is how many goroutines of the child commit at once.
const childWritersEnv = "INTERLOCK_SQLITE_KILL_WRITERS"

func testKill(t *testing.T, writers int) {
	path := filepath.Join(t.TempDir(), "interlock.db")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAcknowledgedCommitsSurviveKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+path, childWritersEnv+"="+strconv.Itoa(writers))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const wantAcks = 300
	acked := map[int]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(acked) < wantAcks {
		if n, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
			i, _ := strconv.Atoi(n)
			acked[i] = true
		}
	}
	// Kill while the child is still committing: no Close, no checkpoint.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if len(acked) < wantAcks {
		t.Fatalf("child acknowledged only %d commits before stopping", len(acked))
	}

	s := openPath(t, path)
	for i := range acked {
		k := killChange(i).Runs[0].Run.Key
		if _, err := s.RunGet(t.Context(), k); err != nil {
			t.Fatalf("acknowledged commit %d lost after kill -9: run: %v", i, err)
		}
		if _, err := s.TimerGet(t.Context(), "t:"+k.Period); err != nil {
			t.Fatalf("acknowledged commit %d lost after kill -9: timer: %v", i, err)
		}
	}
	page, err := s.EventList(t.Context(), store.EventListParams{})
	evs := page.Events
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < len(acked) {
		t.Fatalf("%d events after kill -9, want at least the %d acknowledged", len(evs), len(acked))
	}
	t.Logf("%d acknowledged commits, %d found after kill -9", len(acked), len(evs))
}

// killChild commits until killed, from writers goroutines, printing
// "ack i" after each Commit returns. It stops by itself after a bound in
// case nobody kills it.
func killChild(path string, writers int) {
	s, err := Open(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	for w := range writers {
		go func() {
			for i := w; i < 100000; i += writers {
				if err := s.Commit(context.Background(), killChange(i)); err != nil {
					fmt.Fprintln(os.Stderr, "child:", err)
					os.Exit(2)
				}
				fmt.Printf("ack %d\n", i)
			}
		}()
	}
	time.Sleep(time.Minute)
	os.Exit(3)
}
