// Package sfnlocal runs Amazon States Language definitions for tests with
// the pinned npm packages aws-local-stepfunctions and asl-validator
// (test/emulators, make emulators), through test/emulators/sfn-driver.mjs:
// Run executes a batch of executions to their ends; Serve keeps one Node
// process open, starting each execution when the test asks, as Step
// Functions starts them when its StartExecution is called.
//
// The Task states invoke Lambda through the AWS SDK for JavaScript, which
// is pointed at the test's own Invoke endpoint (AWS_ENDPOINT_URL_LAMBDA):
// the real Go handlers answer. Wait states and retry intervals take no
// time; the Go side keeps the virtual clock.
//
// When node or the packages are missing, the test is skipped — failed
// under INTERLOCK_REQUIRE_BACKENDS=1 (CI).
package sfnlocal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/testenv/testproc"
)

// RepoRoot is the module's root directory (tests run in their package's).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Driver returns node and the driver script, skipping t — failing it
// under INTERLOCK_REQUIRE_BACKENDS=1 — when node or the npm packages are
// missing.
func Driver(t testing.TB) (node, script string) {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "test", "emulators")
	missing := ""
	node, err := exec.LookPath("node")
	if err != nil {
		missing = "node is not installed"
	}
	for _, pkg := range []string{"aws-local-stepfunctions", "asl-validator"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil && missing == "" {
			missing = pkg + " is not installed (make emulators)"
		}
	}
	if missing != "" {
		testproc.Missing(t, "step functions: "+missing)
	}
	return node, filepath.Join(dir, "sfn-driver.mjs")
}

// Execution is an execution to start: its name and its input, and (Serve
// only) StartTime, its start on the test's clock: a Task's input value
// that is $$.Execution.StartTime (which the package takes from the wall
// clock) is given this instant instead. Zero: the wall clock's.
type Execution struct {
	Name      string    `json:"name"`
	Input     any       `json:"input"`
	StartTime time.Time `json:"startTime,omitzero"`
}

// Validation is asl-validator's verdict on the definition.
type Validation struct {
	IsValid bool              `json:"isValid"`
	Errors  []json.RawMessage `json:"errors"`
}

// Result is an execution's end: SUCCEEDED, FAILED (with the error and its
// cause), or ABORTED or TIMED_OUT when Stop ended it; its output, and the
// states it entered, in order.
type Result struct {
	Name   string          `json:"name"`
	Status string          `json:"status"`
	Error  string          `json:"error"`
	Cause  string          `json:"cause"`
	Output json.RawMessage `json:"output"`
	States []string        `json:"states"`
}

// Batch is what Run returns.
type Batch struct {
	Validation Validation `json:"validation"`
	Executions []Result   `json:"executions"`
}

// command is the driver's process, its Lambda client calling endpoint.
func command(ctx context.Context, t testing.TB, endpoint string, args ...string) *exec.Cmd {
	node, script := Driver(t)
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = filepath.Dir(script)
	cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL_LAMBDA="+endpoint, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true")
	return cmd
}

// Run lints def and runs execs to their ends in one node process whose
// Lambda client calls endpoint (an Invoke endpoint), bounded to two
// minutes.
func Run(t testing.TB, endpoint string, def []byte, execs []Execution) Batch {
	t.Helper()
	req, err := json.Marshal(map[string]any{"definition": json.RawMessage(def), "executions": execs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := command(ctx, t, endpoint)
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sfn driver: %v\n%s", err, stderr.String())
	}
	var res Batch
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("sfn driver output %q: %v\n%s", out, err, stderr.String())
	}
	return res
}

// Machine is a state machine served by one node process: Start starts an
// execution, and OnEnd (given to Serve) hears of each end.
type Machine struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *testproc.Output
	done   chan struct{} // the process's output is read to its end

	mu      sync.Mutex
	running int
	err     error
}

// Serve starts the driver on def, its Lambda client calling endpoint, and
// fails t when asl-validator refuses def. onEnd is called (from one
// goroutine, in the order executions end) with each execution's result.
// The process is stopped when the test ends.
func Serve(t testing.TB, endpoint string, def []byte, onEnd func(Result)) *Machine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &Machine{cmd: command(ctx, t, endpoint, "--serve"), stderr: &testproc.Output{}, done: make(chan struct{})}
	m.cmd.Stderr = m.stderr
	stdin, err := m.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	m.stdin = stdin
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.stdin.Close()
		cancel()
		<-m.done
		_ = m.cmd.Wait()
	})
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 16<<20)
	if err := m.send(map[string]any{"definition": json.RawMessage(def)}); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() {
		close(m.done)
		t.Fatalf("sfn driver: no answer to the definition: %v\n%s", lines.Err(), m.stderr.String())
	}
	var first struct{ Validation Validation }
	if err := json.Unmarshal(lines.Bytes(), &first); err != nil {
		close(m.done)
		t.Fatalf("sfn driver: %q: %v", lines.Bytes(), err)
	}
	if !first.Validation.IsValid {
		close(m.done)
		t.Fatalf("asl-validator: the definition is not valid: %s", first.Validation.Errors)
	}
	go func() {
		defer close(m.done)
		for lines.Scan() {
			var r Result
			if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
				m.fail(fmt.Errorf("sfn driver: %q: %w", lines.Bytes(), err))
				return
			}
			m.mu.Lock()
			m.running--
			m.mu.Unlock()
			onEnd(r)
		}
		m.fail(errors.Join(lines.Err(), errors.New("sfn driver: the process ended")))
	}()
	return m
}

// Start starts an execution.
func (m *Machine) Start(e Execution) error {
	m.mu.Lock()
	m.running++
	m.mu.Unlock()
	return m.send(e)
}

// The statuses Stop ends an execution with.
const (
	Aborted  = "ABORTED"   // StopExecution, or the execution deleted
	TimedOut = "TIMED_OUT" // the state machine's TimeoutSeconds passed
)

// Stop ends the running execution name with status (Aborted or TimedOut),
// as Step Functions' StopExecution or its TimeoutSeconds would: the
// Lambda call it has in flight is abandoned (its request closed) and no
// state after it runs. Its end is reported like any other, with that
// status; a name that ended meanwhile is ignored.
func (m *Machine) Stop(name, status string) error {
	if status != Aborted && status != TimedOut {
		return fmt.Errorf("sfnlocal: stop %s: status %q is neither %s nor %s", name, status, Aborted, TimedOut)
	}
	return m.send(map[string]string{"stop": name, "status": status})
}

// Running is the number of executions started and not ended.
func (m *Machine) Running() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running
}

// Err is what went wrong with the process, with its stderr; nil while it
// runs.
func (m *Machine) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		return nil
	}
	return fmt.Errorf("%w\n%s", m.err, m.stderr.String())
}

func (m *Machine) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
	}
}

func (m *Machine) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err = m.stdin.Write(append(b, '\n'))
	return err
}
