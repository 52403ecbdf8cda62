package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Two engines in two OS processes on one SQLite file must decide as one
// process would (product spec §8, "Many processes"): every decision reads
// the pipeline row — pause state, config version — and the calendars from
// the store and commits on the condition that they did not move.
//
// The second process is this test binary run again with childEnv set: it
// opens an engine on the store file and obeys requests on stdin, one JSON
// object a line, answering each on stdout. Its job system records every
// Start in a file shared by both processes, so the parent can count the
// jobs each process started, and with which config.

const (
	childEnv     = "INTERLOCK_ENGINE_CHILD_STORE"
	childJobsEnv = "INTERLOCK_ENGINE_CHILD_JOBS"
	childName    = "INTERLOCK_ENGINE_CHILD_NAME"
)

// childRequest is one instruction to a child engine. At is the virtual
// time the engine decides at: both processes are given the same instants.
type childRequest struct {
	At       time.Time     `json:"at"`
	Op       string        `json:"op"` // apply, forget, pause, resume, put, due, calendars
	Pipeline string        `json:"pipeline,omitempty"`
	File     string        `json:"file,omitempty"`
	Doc      string        `json:"doc,omitempty"`
	Key      string        `json:"key,omitempty"`
	Data     sensor.Object `json:"data,omitzero"`
	Calendar []string      `json:"calendar,omitempty"` // calendars: name, then dates
}

type childReply struct {
	OK      bool   `json:"ok"`
	Err     string `json:"err,omitempty"`
	Changed bool   `json:"changed,omitempty"`
	Timers  int    `json:"timers,omitempty"`
}

// startRecord is one job Start, as a child recorded it.
type startRecord struct {
	Process  string `json:"process"`
	Pipeline string `json:"pipeline"`
	Period   string `json:"period"`
	JobName  string `json:"jobName"`
}

// recordingJobs appends every Start to a file shared by the processes
// (O_APPEND: each record is one write, whole); its jobs succeed at the
// first poll.
type recordingJobs struct {
	path, name string
	mu         sync.Mutex
}

func (j *recordingJobs) Start(_ context.Context, req trigger.Request) (trigger.Started, error) {
	rec, _ := json.Marshal(startRecord{Process: j.name, Pipeline: req.PipelineID, Period: req.Period, JobName: req.Config.Str("jobName")})
	j.mu.Lock()
	defer j.mu.Unlock()
	f, err := os.OpenFile(j.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return trigger.Started{}, err
	}
	defer f.Close()
	if _, err := f.Write(append(rec, '\n')); err != nil {
		return trigger.Started{}, err
	}
	return trigger.Started{JobRunID: j.name + "-" + req.RunID}, nil
}

func (j *recordingJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusSucceeded}, nil
}

// TestEngineChildProcess is the child's main; it is skipped in a normal
// run.
func TestEngineChildProcess(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("the child half of TestTwoProcesses")
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := clock.NewVirtual(t0)
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: &recordingJobs{path: os.Getenv(childJobsEnv), name: os.Getenv(childName)}})
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req childRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			t.Fatalf("request %q: %v", in.Text(), err)
		}
		clk.Set(req.At)
		var rep childReply
		switch req.Op {
		case "apply":
			_, err = eng.ApplyConfig(ctx, req.File, []byte(req.Doc))
		case "forget":
			_, err = eng.Forget(ctx, req.Pipeline)
		case "pause":
			err = eng.Pause(ctx, req.Pipeline, time.Time{}, "test")
		case "resume":
			err = eng.Resume(ctx, req.Pipeline, "test")
		case "put":
			var res engine.PutResult
			res, err = eng.PutSensor(ctx, req.Pipeline, req.Key, req.Data)
			rep.Changed = res.Changed
		case "due":
			rep.Timers, err = eng.RunDue(ctx)
		case "calendars":
			cal := schedule.Calendar{Name: req.Calendar[0]}
			for _, d := range req.Calendar[1:] {
				date, perr := schedule.ParseDate(d)
				if perr != nil {
					t.Fatal(perr)
				}
				cal.Dates = append(cal.Dates, date)
			}
			_, err = eng.SetCalendars(ctx, map[string]schedule.Calendar{cal.Name: cal})
		default:
			err = fmt.Errorf("unknown op %q", req.Op)
		}
		rep.OK = err == nil
		if err != nil {
			rep.Err = err.Error()
		}
		if err := out.Encode(rep); err != nil {
			t.Fatal(err)
		}
	}
}

// child is the parent's handle on a child process.
type child struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	mu   sync.Mutex // one request at a time per process
}

func startChild(t *testing.T, name, storePath, jobsPath string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEngineChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+storePath, childJobsEnv+"="+jobsPath, childName+"="+name)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{name: name, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() {
		_ = c.in.Close() // the child's loop ends at EOF
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("child %s: %v", name, err)
			}
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Errorf("child %s did not stop", name)
		}
	})
	return c
}

// do sends a request and waits for its reply. It fails the test (from
// any goroutine: Errorf, not Fatal) when the child reports an error.
func (c *child) do(t *testing.T, req childRequest) childReply {
	t.Helper()
	rep := c.try(t, req)
	if !rep.OK {
		t.Errorf("child %s: %s %s: %s", c.name, req.Op, req.Pipeline, rep.Err)
	}
	return rep
}

// try is do for a request that may fail.
func (c *child) try(t *testing.T, req childRequest) childReply {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	b, _ := json.Marshal(req)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		t.Errorf("child %s: write: %v", c.name, err)
		return childReply{}
	}
	for c.out.Scan() {
		line := c.out.Text()
		if !strings.HasPrefix(line, "{") {
			continue // the test framework's own output
		}
		var rep childReply
		if err := json.Unmarshal([]byte(line), &rep); err != nil {
			t.Errorf("child %s: reply %q: %v", c.name, line, err)
			return rep
		}
		return rep
	}
	t.Errorf("child %s: no reply to %s (%v)", c.name, req.Op, c.out.Err())
	return childReply{}
}

func readStarts(t *testing.T, path string) []startRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []startRecord
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r startRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("start record %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func startsOf(all []startRecord, pipeline string) []startRecord {
	var out []startRecord
	for _, r := range all {
		if r.Pipeline == pipeline {
			out = append(out, r)
		}
	}
	return out
}

// twoProcessDoc is a trigger-started pipeline; its job's name says which
// config version started it.
func twoProcessDoc(id, jobName string) string {
	return fmt.Sprintf(`
pipeline: {id: %s}
schedule:
  trigger: {key: landed, check: exists}
  evaluation: {interval: 1m, window: 2h}
validation:
  rules: [{key: landed, check: exists}]
job: {type: glue, config: {jobName: %s}, pollInterval: 1m}
`, id, jobName)
}

func TestTwoProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	dir := t.TempDir()
	storePath, jobsPath := filepath.Join(dir, "shared.db"), filepath.Join(dir, "starts.jsonl")
	// Create the schema before two processes race to migrate it.
	st, err := sqlite.Open(t.Context(), storePath)
	if err != nil {
		t.Fatal(err)
	}
	a := startChild(t, "A", storePath, jobsPath)
	b := startChild(t, "B", storePath, jobsPath)
	at := t0
	tick := func() time.Time { at = at.Add(time.Second); return at }
	// Both processes load the same files, as two serves of one project do.
	for _, c := range []*child{a, b} {
		c.do(t, childRequest{At: tick(), Op: "calendars", Calendar: []string{"holidays", "2026-12-25"}})
	}
	for _, id := range []string{"paused", "reloaded", "raced", "calendared", "removed"} {
		doc := twoProcessDoc(id, "one")
		if id == "calendared" {
			doc = strings.Replace(doc, "  evaluation:", "  exclude: {calendar: holidays}\n  evaluation:", 1)
		}
		for _, c := range []*child{a, b} {
			c.do(t, childRequest{At: tick(), Op: "apply", File: id + ".yaml", Doc: doc})
		}
	}
	landed := func(c *child, id, date string) childReply {
		return c.do(t, childRequest{At: tick(), Op: "put", Pipeline: id, Key: "landed", Data: obj("date", date)})
	}
	due := func(c *child) { c.do(t, childRequest{At: tick(), Op: "due"}) }

	t.Run("PauseInOneTheOtherNeverTriggers", func(t *testing.T) {
		// B decides a run may trigger; A pauses before B's trigger step.
		landed(b, "paused", "2026-03-10")
		a.do(t, childRequest{At: tick(), Op: "pause", Pipeline: "paused"})
		due(b)
		due(a)
		// Data for another period arrives at B during the pause.
		landed(b, "paused", "2026-03-09")
		due(b)
		if got := startsOf(readStarts(t, jobsPath), "paused"); len(got) != 0 {
			t.Fatalf("a paused pipeline's job was started: %+v", got)
		}
		// Resumed in A, the held run goes on — once, whoever runs it.
		a.do(t, childRequest{At: tick(), Op: "resume", Pipeline: "paused"})
		due(b)
		due(a)
		got := startsOf(readStarts(t, jobsPath), "paused")
		periods := map[string]int{}
		for _, r := range got {
			periods[r.Period]++
		}
		if periods["2026-03-10"] != 1 || periods["2026-03-09"] != 1 || len(got) != 2 {
			t.Fatalf("after resume: starts %+v, want one for each period", got)
		}
	})

	t.Run("ReloadInOneTheOtherDecidesWithTheNewConfig", func(t *testing.T) {
		a.do(t, childRequest{At: tick(), Op: "apply", File: "reloaded.yaml", Doc: twoProcessDoc("reloaded", "two")})
		landed(b, "reloaded", "2026-03-10")
		due(b)
		got := startsOf(readStarts(t, jobsPath), "reloaded")
		if len(got) != 1 || got[0].JobName != "two" || got[0].Process != "B" {
			t.Fatalf("starts %+v, want one by B with the reloaded config (jobName two)", got)
		}
		r, err := st.RunGet(t.Context(), runKey("reloaded", "2026-03-10"))
		if err != nil || r.ConfigVersion != 2 {
			t.Fatalf("run: config version %d (%v), want 2", r.ConfigVersion, err)
		}
	})

	t.Run("RacingSensorWritesAcrossBothTriggerOnce", func(t *testing.T) {
		now := tick()
		var wg sync.WaitGroup
		for i := range 8 {
			for _, c := range []*child{a, b} {
				wg.Go(func() {
					c.do(t, childRequest{At: now, Op: "put", Pipeline: "raced", Key: "landed", Data: obj("date", "2026-03-10", "writer", c.name+fmt.Sprint(i))})
				})
			}
		}
		wg.Wait()
		now = tick()
		for _, c := range []*child{a, b, a, b} {
			wg.Go(func() { c.do(t, childRequest{At: now, Op: "due"}) })
		}
		wg.Wait()
		if got := startsOf(readStarts(t, jobsPath), "raced"); len(got) != 1 {
			t.Fatalf("starts %+v, want exactly one", got)
		}
		evsPage, err := st.EventList(t.Context(), store.EventListParams{PipelineID: "raced", Types: []event.Type{event.JobTriggered}})
		evs := evsPage.Events
		if err != nil || len(evs) != 1 {
			t.Fatalf("JOB_TRIGGERED events: %d (%v), want 1", len(evs), err)
		}
	})

	t.Run("CalendarChangeInOneTheOtherDecidesWithIt", func(t *testing.T) {
		// B resolves the pipeline with the calendar as it was…
		landed(b, "calendared", "2026-03-10")
		due(b)
		// …A stores a new holiday; B's next decision sees it.
		a.do(t, childRequest{At: tick(), Op: "calendars", Calendar: []string{"holidays", "2026-12-25", "2026-03-09"}})
		landed(b, "calendared", "2026-03-09")
		due(b)
		got := startsOf(readStarts(t, jobsPath), "calendared")
		if len(got) != 1 || got[0].Period != "2026-03-10" {
			t.Fatalf("starts %+v, want only 2026-03-10's (2026-03-09 became a holiday)", got)
		}
		evsPage, err := st.EventList(t.Context(), store.EventListParams{PipelineID: "calendared", Types: []event.Type{event.PipelineExcluded}})
		evs := evsPage.Events
		if err != nil || len(evs) != 1 || evs[0].Date != "2026-03-09" {
			t.Fatalf("PIPELINE_EXCLUDED events: %+v (%v), want one for 2026-03-09", evs, err)
		}
	})

	t.Run("RemovalInOneTheOtherStopsRunningIt", func(t *testing.T) {
		a.do(t, childRequest{At: tick(), Op: "forget", Pipeline: "removed"})
		rep := b.try(t, childRequest{At: tick(), Op: "put", Pipeline: "removed", Key: "landed", Data: obj("date", "2026-03-10")})
		if rep.OK || !strings.Contains(rep.Err, engine.ErrUnknownPipeline.Error()) {
			t.Fatalf("B took a sensor of a pipeline A removed: %+v", rep)
		}
		due(b)
		if got := startsOf(readStarts(t, jobsPath), "removed"); len(got) != 0 {
			t.Fatalf("starts %+v of a removed pipeline", got)
		}
		// Its file back in A: B runs it again.
		a.do(t, childRequest{At: tick(), Op: "apply", File: "removed.yaml", Doc: twoProcessDoc("removed", "one")})
		landed(b, "removed", "2026-03-10")
		due(b)
		if got := startsOf(readStarts(t, jobsPath), "removed"); len(got) != 1 {
			t.Fatalf("starts %+v, want one once the file is back", got)
		}
	})
}

func runKey(pipelineID, period string) run.Key {
	return run.Key{PipelineID: pipelineID, ScheduleID: pipeline.ScheduleStream, Period: period}
}
