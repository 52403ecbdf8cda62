package awstest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/triggertest"
)

// SecretEnv is the environment variable the test configs read a secret
// from. Its value is SecretKey, the secret access key: one string plays
// both secrets, so the contract kit's single Secret covers the credential
// chain and the ${env:…} values sent to AWS (which the fakes echo back in
// their errors and failure messages).
const SecretEnv = "INTERLOCK_AWS_TEST_SECRET"

// Env is the test environment for templates.
func Env() map[string]string { return map[string]string{SecretEnv: SecretKey} }

// RunID is the run id of test requests.
const RunID = "gold-cron-2026-03-10-g0-a1"

// Request builds a request for a job of type typ whose job.config is the
// YAML flow mapping config, loaded through the real pipeline schema.
// hour is "" for a daily period.
func Request(t testing.TB, typ, config, hour string) trigger.Request {
	t.Helper()
	period := "2026-03-10"
	if hour != "" {
		period += "T" + hour
	}
	doc := "pipeline: {id: gold}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: " + typ + ", config: " + config + "}\n"
	p, err := pipeline.ParsePipeline("gold.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	return trigger.Request{
		PipelineID: "gold", ScheduleID: "cron", Period: period, RunID: RunID, Attempt: 1,
		Type: typ, Config: p.Job.Config,
		Vars: pipeline.TemplateVars{Pipeline: "gold", Schedule: "cron", Date: "2026-03-10", Hour: hour, RunID: RunID},
	}
}

// Modes is what a fake answers, as set by a contract harness.
type Modes struct {
	mu            sync.Mutex
	start, status triggertest.Mode
}

// Set is the harness's Set.
func (m *Modes) Set(start, status triggertest.Mode) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.start, m.status = start, status
}

// Get returns the modes; StartOK and JobRunning until set.
func (m *Modes) Get() (start, status triggertest.Mode) {
	m.mu.Lock()
	defer m.mu.Unlock()
	start, status = m.start, m.status
	if start == "" {
		start = triggertest.StartOK
	}
	if status == "" {
		status = triggertest.JobRunning
	}
	return start, status
}

// Faults are a service's real answers to the contract's failing starts.
type Faults struct {
	Throttled, ServerError, Rejected Reply
}

// For returns the fault reply of start mode m, if m is a fault, with the
// secret in every form (triggertest.Echo) and what the fake received
// echoed in the message (as some AWS validation messages do), so a runner
// that passes it on unredacted is caught.
func (f Faults) For(m triggertest.Mode, received []byte) (Reply, bool) {
	var r Reply
	switch m {
	case triggertest.StartThrottled:
		r = f.Throttled
	case triggertest.StartServerError:
		r = f.ServerError
	case triggertest.StartRejected:
		r = f.Rejected
	default:
		return Reply{}, false
	}
	r.ErrorMessage = fmt.Sprintf("%s %s (request: %s)", r.ErrorMessage, triggertest.Echo(SecretKey, nil), strings.TrimSpace(string(received)))
	return r, true
}

// Auth is the stable part of the SigV4 credential of a call — access key,
// region and service, without the date — as the contract's StartAuth and
// PollAuth report it.
func Auth(c Call) string {
	return c.AccessKey + "/" + c.Region + "/" + c.Service
}

// LastAuth is Auth of the last call to op ("" if none).
func (s *Server) LastAuth(op string) string {
	var a string
	for _, c := range s.Calls() {
		if c.Op == op {
			a = Auth(c)
		}
	}
	return a
}

// Auths is Auth of every call to op, in order.
func (s *Server) Auths(op string) []string {
	var out []string
	for _, c := range s.Calls() {
		if c.Op == op {
			out = append(out, Auth(c))
		}
	}
	return out
}
