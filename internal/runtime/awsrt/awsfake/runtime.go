package awsfake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
)

// Function runs a Lambda function as the Lambda service does: a real
// process (a lambda.Start program) polls a local Lambda Runtime API
// (GET /2018-06-01/runtime/invocation/next, POST …/{id}/response or
// …/{id}/error, POST …/init/error) for its invocations. Invoke hands it a
// payload and waits for its answer. A process that dies fails the
// invocation it was running, as on AWS, and Start begins a new one (a cold
// start). Kill, KillOnResponse and KillAfterResponse let a test kill it
// at a chosen point.
type Function struct {
	t       testing.TB
	srv     *httptest.Server
	command func() *exec.Cmd
	timeout time.Duration

	mu          sync.Mutex
	proc        *exec.Cmd
	exited      chan struct{}
	queue       chan *invocation // the running process's
	running     map[string]*invocation
	seq         int
	killOnReply bool
	killAfter   bool
	logs        bytes.Buffer
}

type invocation struct {
	id      string
	payload []byte
	done    chan invokeResult
}

type invokeResult struct {
	body []byte
	err  error
}

// FunctionError is an invocation the function answered with an error
// (POST …/error), or that its process did not survive.
type FunctionError struct {
	Type    string // the errorType, or "Runtime.ExitError"
	Message string
}

func (e *FunctionError) Error() string { return e.Type + ": " + e.Message }

// NewFunction serves a Runtime API for the processes command builds; Start
// starts one. Each invocation gets timeout (0: 30 s) as its deadline. The
// processes are killed when the test ends.
func NewFunction(t testing.TB, timeout time.Duration, command func() *exec.Cmd) *Function {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	f := &Function{t: t, command: command, timeout: timeout, running: map[string]*invocation{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() {
		f.Kill()
		f.srv.Close()
	})
	return f
}

// Start starts a new process of the function once the previous one has
// exited (a killed process fails its invocation a moment before it is
// reaped: Start waits for that, at most 10 s). Its stdout and stderr go to
// Logs.
func (f *Function) Start() {
	f.mu.Lock()
	prev := f.exited
	f.mu.Unlock()
	if prev != nil {
		select {
		case <-prev:
		case <-time.After(10 * time.Second):
			f.t.Fatal("awsfake: Start while the function's previous process is still running after 10 s")
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cmd := f.command()
	cmd.Env = append(cmd.Env, "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(f.srv.URL, "http://"))
	cmd.Stdout, cmd.Stderr = &lockedWriter{mu: &f.mu, w: &f.logs}, &lockedWriter{mu: &f.mu, w: &f.logs}
	if err := cmd.Start(); err != nil {
		f.t.Fatalf("awsfake: start the function: %v", err)
	}
	exited := make(chan struct{})
	// A new queue per process: an invocation queued for a process that
	// died failed with it, and is not run by the next one.
	f.proc, f.exited, f.queue, f.killOnReply, f.killAfter = cmd, exited, make(chan *invocation, 1), false, false
	go func() {
		err := cmd.Wait()
		f.mu.Lock()
		for id, inv := range f.running {
			inv.done <- invokeResult{err: &FunctionError{Type: "Runtime.ExitError", Message: fmt.Sprintf("the function's process exited: %v", err)}}
			delete(f.running, id)
		}
		f.mu.Unlock()
		close(exited)
	}()
}

// Kill kills the running process, if any, and waits until it is gone.
func (f *Function) Kill() {
	f.mu.Lock()
	proc, exited := f.proc, f.exited
	f.mu.Unlock()
	if proc == nil {
		return
	}
	_ = proc.Process.Kill()
	<-exited
}

// KillOnResponse makes the process be killed when it posts its next
// answer, before the answer is taken: the invocation fails although the
// function did all its work.
func (f *Function) KillOnResponse() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.killOnReply = true
}

// KillAfterResponse makes the process be killed right after its next
// answer is taken: the invocation succeeds, and whatever the function
// left to do after answering is lost with the process.
func (f *Function) KillAfterResponse() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.killAfter = true
}

// Logs returns what the processes wrote to stdout and stderr.
func (f *Function) Logs() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logs.String()
}

// Invoke runs one invocation and returns the function's answer. An error
// answer or a dead process is a *FunctionError.
func (f *Function) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	f.mu.Lock()
	exited, queue := f.exited, f.queue
	f.seq++
	inv := &invocation{id: fmt.Sprintf("req-%06d", f.seq), payload: payload, done: make(chan invokeResult, 1)}
	f.mu.Unlock()
	if exited == nil {
		return nil, errors.New("awsfake: the function was never started")
	}
	select {
	case <-exited:
		return nil, &FunctionError{Type: "Runtime.ExitError", Message: "the function's process is not running"}
	case queue <- inv:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-inv.done:
		return r.body, r.err
	case <-exited:
		// The exit handler fails a running invocation; one still queued
		// is failed here.
		select {
		case r := <-inv.done:
			return r.body, r.err
		default:
			return nil, &FunctionError{Type: "Runtime.ExitError", Message: "the function's process exited"}
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

const runtimePrefix = "/2018-06-01/runtime/"

func (f *Function) serve(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, runtimePrefix)
	switch {
	case !ok:
		http.NotFound(w, r)
	case r.Method == http.MethodGet && path == "invocation/next":
		f.next(w, r)
	case r.Method == http.MethodPost && path == "init/error":
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		fmt.Fprintf(&f.logs, "[runtime] init error: %s\n", body)
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodPost && strings.HasPrefix(path, "invocation/"):
		f.answer(w, r, strings.TrimPrefix(path, "invocation/"))
	default:
		http.NotFound(w, r)
	}
}

func (f *Function) next(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	queue := f.queue
	f.mu.Unlock()
	var inv *invocation
	select {
	case inv = <-queue:
	case <-r.Context().Done():
		return
	}
	f.mu.Lock()
	f.running[inv.id] = inv
	f.mu.Unlock()
	deadline := clock.Real{}.Now().Add(f.timeout)
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(deadline.UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:"+Region+":"+Account+":function:test")
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(inv.payload)
}

func (f *Function) answer(w http.ResponseWriter, r *http.Request, rest string) {
	id, kind, ok := strings.Cut(rest, "/")
	if !ok || (kind != "response" && kind != "error") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	inv := f.running[id]
	kill := f.killOnReply && kind == "response"
	if kill {
		f.killOnReply = false
	}
	killAfter := f.killAfter && kind == "response"
	if killAfter {
		f.killAfter = false
	}
	f.mu.Unlock()
	if inv == nil {
		http.Error(w, "unknown request id "+id, http.StatusBadRequest)
		return
	}
	if kill {
		// The process dies before its answer is taken; the exit handler
		// fails the invocation.
		f.Kill()
		return
	}
	f.mu.Lock()
	delete(f.running, id)
	f.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
	if kind == "error" {
		inv.done <- invokeResult{err: &FunctionError{Type: "Unhandled", Message: string(body)}}
		return
	}
	inv.done <- invokeResult{body: body}
	if killAfter {
		f.Kill()
	}
}

// lockedWriter serialises the writes of a process's two streams.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
