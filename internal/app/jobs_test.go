package app

import (
	"os"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
	"github.com/interlockhq/interlock/internal/trigger/emr"
	"github.com/interlockhq/interlock/internal/trigger/emrserverless"
	"github.com/interlockhq/interlock/internal/trigger/glue"
	"github.com/interlockhq/interlock/internal/trigger/lambda"
	"github.com/interlockhq/interlock/internal/trigger/stepfunction"
)

// TestJobsFindExactlyTheAskableTypes pins which job types serve's real
// registry can look up after a crash mid-trigger (lifecycle.md, "A crash
// during the trigger call"): Airflow, Databricks, Step Functions and EMR
// Serverless are asked for the job by the identity Interlock gave it; the
// other five cannot be asked and wait out the call's lease. A runner
// wrapped in something that hides its Find method would quietly send an
// askable type back to waiting, and one that claims a lookup it cannot
// make would start a second job; either change fails here. The engine
// wraps the registry in trigger.Guard, so that view is checked too.
func TestJobsFindExactlyTheAskableTypes(t *testing.T) {
	askable := map[pipeline.JobType]bool{
		pipeline.JobAirflow:       true,
		pipeline.JobDatabricks:    true,
		pipeline.JobStepFunction:  true,
		pipeline.JobEMRServerless: true,
		pipeline.JobGlue:          false,
		pipeline.JobEMR:           false,
		pipeline.JobLambda:        false,
		pipeline.JobHTTP:          false,
		pipeline.JobCommand:       false,
	}
	types := pipeline.JobTypes()
	if len(types) != len(askable) {
		t.Fatalf("pipeline.JobTypes() has %d types, this test knows %d: say whether the new one can be looked up", len(types), len(askable))
	}
	reg := Jobs(Secrets(os.LookupEnv), nil)
	if len(reg) != len(types) {
		t.Fatalf("Jobs has %d runners, want one per job type (%d)", len(reg), len(types))
	}
	guard := trigger.Guard{Next: reg}
	for _, typ := range types {
		want, known := askable[typ]
		if !known {
			t.Errorf("job type %q: this test does not say whether it can be looked up", typ)
			continue
		}
		if _, ok := reg[string(typ)]; !ok {
			t.Errorf("Jobs has no runner for %q", typ)
			continue
		}
		if got := reg.Finds(string(typ)); got != want {
			t.Errorf("Jobs(...).Finds(%q) = %v, want %v", typ, got, want)
		}
		if got := trigger.Findable(guard, string(typ)); got != want {
			t.Errorf("trigger.Findable(Guard{Jobs(...)}, %q) = %v, want %v", typ, got, want)
		}
		if _, isFinder := reg[string(typ)].(trigger.Finder); isFinder != want {
			t.Errorf("the %q runner implements trigger.Finder = %v, want %v", typ, isFinder, want)
		}
	}
}

// TestJobsShareOneAWSSession: the AWS job types call AWS through one
// awsjob.Session, which reads templates with the lookup Jobs was given
// (a credential is loaded once per region for all of them, not once per
// job type).
func TestJobsShareOneAWSSession(t *testing.T) {
	lookup := func(name string) (string, bool) { return "from-" + name, true }
	reg := Jobs(lookup, nil)
	sessions := map[*awsjob.Session][]string{}
	for typ, r := range map[pipeline.JobType]*awsjob.Session{
		pipeline.JobGlue:          awsjob.Runner(reg[string(pipeline.JobGlue)].(glue.Runner)).AWS,
		pipeline.JobEMR:           awsjob.Runner(reg[string(pipeline.JobEMR)].(emr.Runner)).AWS,
		pipeline.JobEMRServerless: awsjob.Runner(reg[string(pipeline.JobEMRServerless)].(emrserverless.Runner)).AWS,
		pipeline.JobStepFunction:  awsjob.Runner(reg[string(pipeline.JobStepFunction)].(stepfunction.Runner)).AWS,
		pipeline.JobLambda:        reg[string(pipeline.JobLambda)].(lambda.Runner).AWS,
	} {
		if r == nil {
			t.Fatalf("the %s runner has no session", typ)
		}
		sessions[r] = append(sessions[r], string(typ))
	}
	if len(sessions) != 1 {
		t.Fatalf("the AWS job types use %d sessions (%v), want one", len(sessions), sessions)
	}
	for s := range sessions {
		if v, _ := s.LookupEnv("X"); v != "from-X" {
			t.Errorf("the shared session reads ${env:X} as %q, not through Jobs' lookup", v)
		}
	}
}
