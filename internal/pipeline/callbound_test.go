package pipeline

import (
	"strings"
	"testing"
	"time"
)

func TestCallFits(t *testing.T) {
	const margin = 15 * time.Second
	job := func(typ, config string) Job {
		return parse(t, "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob:\n  type: "+typ+"\n  config: "+config+"\n").Job
	}
	cases := []struct {
		name       string
		job        Job
		invocation time.Duration
		wantPath   string // "" fits
		wantIn     string
	}{
		{"http, default 30s, in 5m", job("http", "{url: 'https://example.com/run'}"), 5 * time.Minute, "", ""},
		{"http, 4m45s timeout: exactly fits 5m with the margin", job("http", "{url: 'https://example.com/run', timeout: 4m45s}"), 5 * time.Minute, "", ""},
		{"http, 4m46s timeout: a second too long", job("http", "{url: 'https://example.com/run', timeout: 4m46s}"), 5 * time.Minute, "job.config.timeout", "set job.config.timeout to 4m45s or less"},
		{"http, default 30s, in a 40s invocation", job("http", "{url: 'https://example.com/run'}"), 40 * time.Second, "job.config.timeout", "no timeout may take the default, 30s"},
		{"airflow, 10m timeout in 5m", job("airflow", "{url: 'https://airflow.example.com', dagId: d, timeout: 10m}"), 5 * time.Minute, "job.config.timeout", "its timeout, 10m0s"},
		{"databricks in 5m", job("databricks", "{workspaceUrl: 'https://x.cloud.databricks.com', jobId: '1'}"), 5 * time.Minute, "", ""},
		{"databricks in 40s: no field to set", job("databricks", "{workspaceUrl: 'https://x.cloud.databricks.com', jobId: '1'}"), 40 * time.Second, "job.type", "raise the orchestrator's timeout"},
		{"command, default 1h", job("command", "{command: [echo, hi]}"), 5 * time.Minute, "job.config.timeout", "default, 1h0m0s"},
		{"command, 2m", job("command", "{command: [echo, hi], timeout: 2m}"), 5 * time.Minute, "", ""},
		{"lambda, no timeout: Lambda's 15m", job("lambda", "{functionName: f}"), 5 * time.Minute, "job.config.timeout", "Lambda's limit, 15m0s"},
		{"lambda, 4m function: 4m10s fits 5m", job("lambda", "{functionName: f, timeout: 4m}"), 5 * time.Minute, "", ""},
		{"lambda, 4m40s function: 4m50s does not", job("lambda", "{functionName: f, timeout: 4m40s}"), 5 * time.Minute, "job.config.timeout", "at most 4m35s"},
		{"lambda, no timeout, in a 15m orchestrator", job("lambda", "{functionName: f}"), 15 * time.Minute, "job.config.timeout", "15m0s"},
		{"glue: a start request", job("glue", "{jobName: j}"), 60 * time.Second, "", ""},
		{"step-function: a start request", job("step-function", "{stateMachineArn: 'arn:aws:states:us-east-1:1:stateMachine:m'}"), 60 * time.Second, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, why, ok := CallFits(c.job, c.invocation, margin)
			if ok != (c.wantPath == "") || path != c.wantPath || !strings.Contains(why, c.wantIn) {
				t.Fatalf("CallFits = %q, %q, %v; want path %q and a reason with %q", path, why, ok, c.wantPath, c.wantIn)
			}
		})
	}
}
