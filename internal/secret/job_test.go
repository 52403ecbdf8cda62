package secret_test

import (
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/secret"
)

func jobConfig(t *testing.T, typ pipeline.JobType, config string) pipeline.JobConfig {
	t.Helper()
	doc := "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: " + string(typ) + ", config: " + config + "}\n"
	p, err := pipeline.ParsePipeline("p.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Job.Config
}

var env = map[string]string{
	"INTERLOCK_HOST":         "127.0.0.1",
	"INTERLOCK_PORT":         "8080",
	"INTERLOCK_PREFIX":       "airflow-prefix",
	"INTERLOCK_BASE":         "http://airflow.internal:8080",
	"INTERLOCK_TOKEN":        "tok-123456",
	"INTERLOCK_PASS":         "pass-98765",
	"INTERLOCK_QUERY":        "query-value",
	"INTERLOCK_BODY":         "body-value",
	"INTERLOCK_BOTH":         "10.1.2.3",
	"INTERLOCK_REGION":       "eu-west-1",
	"INTERLOCK_DAG":          "gold_revenue",
	"INTERLOCK_PATH":         "/hooks/T0AAA-B0BBB-s3cr3tPathToken",
	"INTERLOCK_HOOK":         "hooks.internal:8080/services/T0/B0/XyZ",
	"file:/run/secrets/host": "files.internal",
}

func lookup(name string) (string, bool) { v, ok := env[name]; return v, ok }

// Issue 10 defect 3: a value is redacted for carrying a credential, not
// for being read from the environment. A value that only says where the
// job is (scheme, host, port, region, DAG id) is shown; a value in a
// URL's path is a secret (a webhook's token is there).
func TestFromJobClassifiesValuesByUse(t *testing.T) {
	cases := []struct {
		name, config  string
		typ           pipeline.JobType
		secret, shown []string
	}{
		{"host and port are no secret", `{url: "http://${env:INTERLOCK_HOST}:${env:INTERLOCK_PORT}/run", headers: {Authorization: "Bearer ${env:INTERLOCK_TOKEN}"}}`,
			pipeline.JobHTTP, []string{"tok-123456", "Bearer tok-123456"}, []string{"127.0.0.1", "8080"}},
		{"a value in the path is a secret: webhooks carry their token there", `{url: "http://${env:INTERLOCK_HOST}:${env:INTERLOCK_PORT}/hooks/${env:INTERLOCK_PREFIX}/run"}`,
			pipeline.JobHTTP, []string{"airflow-prefix"}, []string{"127.0.0.1", "8080"}},
		{"a whole path from the environment is a secret", `{url: "http://${env:INTERLOCK_HOST}${env:INTERLOCK_PATH}"}`,
			pipeline.JobHTTP, []string{"/hooks/T0AAA-B0BBB-s3cr3tPathToken"}, []string{"127.0.0.1"}},
		{"a host with a path is a secret, the host alone would not be", `{url: "http://${env:INTERLOCK_HOOK}"}`,
			pipeline.JobHTTP, []string{"hooks.internal:8080/services/T0/B0/XyZ"}, nil},
		{"a host:port is no secret", `{url: "http://${env:INTERLOCK_BASE}/", dagId: "${env:INTERLOCK_DAG}"}`,
			pipeline.JobAirflow, nil, []string{"airflow.internal:8080", "gold_revenue"}},
		{"user info, query and body carry credentials", `{url: "http://etl:${env:INTERLOCK_PASS}@${env:INTERLOCK_HOST}/run?key=${env:INTERLOCK_QUERY}", body: "${env:INTERLOCK_BODY}"}`,
			pipeline.JobHTTP, []string{"pass-98765", "query-value", "body-value"}, []string{"127.0.0.1", "etl"}},
		{"a host also sent in a header stays a secret", `{url: "http://${env:INTERLOCK_BOTH}/run", headers: {Forwarded: "for=${env:INTERLOCK_BOTH}"}}`,
			pipeline.JobHTTP, []string{"10.1.2.3"}, nil},
		{"a host also sent in the body stays a secret", `{url: "http://${env:INTERLOCK_BOTH}/run", body: '{"h": "${env:INTERLOCK_BOTH}"}'}`,
			pipeline.JobHTTP, []string{"10.1.2.3"}, nil},
		{"a file secret is a secret even as a host", `{url: "http://${file:/run/secrets/host}/run"}`,
			pipeline.JobHTTP, []string{"files.internal"}, nil},
		{"AWS: the region and the endpoint's host are no secret, arguments are", `{jobName: j, region: "${env:INTERLOCK_REGION}", endpoint: "http://${env:INTERLOCK_HOST}:4566", arguments: {--token: "${env:INTERLOCK_TOKEN}"}}`,
			pipeline.JobGlue, []string{"tok-123456"}, []string{"eu-west-1", "127.0.0.1"}},
		{"AWS: a value in the endpoint's path is a secret", `{jobName: j, region: eu-west-1, endpoint: "http://${env:INTERLOCK_HOST}:4566/${env:INTERLOCK_PREFIX}"}`,
			pipeline.JobGlue, []string{"airflow-prefix"}, []string{"127.0.0.1"}},
		{"AWS: a resource name from the environment stays a secret", `{jobName: "${env:INTERLOCK_BODY}", region: eu-west-1}`,
			pipeline.JobGlue, []string{"body-value"}, nil},
		{"command: everything is a secret", `{command: [run, "${env:INTERLOCK_HOST}"], env: {T: "${env:INTERLOCK_TOKEN}"}}`,
			pipeline.JobCommand, []string{"127.0.0.1", "tok-123456"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := secret.FromJob(c.typ, jobConfig(t, c.typ, c.config), pipeline.TemplateVars{}, lookup)
			for _, v := range c.secret {
				if got := s.Redact("<" + v + ">"); got != "<[redacted]>" {
					t.Errorf("%q is not redacted: %q", v, got)
				}
			}
			for _, v := range c.shown {
				if got := s.Redact("<" + v + ">"); got != "<"+v+">" {
					t.Errorf("%q is redacted (%q): it only says where the job is", v, got)
				}
			}
		})
	}
}

// Base64 of the user info, as a Basic header carries it, is redacted.
func TestFromJobRedactsUserinfoAsBasicCarriesIt(t *testing.T) {
	s, _ := secret.FromJob(pipeline.JobHTTP, jobConfig(t, pipeline.JobHTTP, `{url: "http://etl:${env:INTERLOCK_PASS}@127.0.0.1/run"}`), pipeline.TemplateVars{}, lookup)
	if got := s.Redact("Basic ZXRsOnBhc3MtOTg3NjU="); got != "Basic [redacted]" {
		t.Fatalf("Redact = %q", got)
	}
}

// The lookup answers with what the scan read, so what is sent is what is
// redacted; a name the scan did not read is a secret.
func TestFromJobLookup(t *testing.T) {
	calls := 0
	counting := func(name string) (string, bool) { calls++; return lookup(name) }
	s, look := secret.FromJob(pipeline.JobHTTP, jobConfig(t, pipeline.JobHTTP, `{url: "http://${env:INTERLOCK_HOST}/", headers: {A: "${env:INTERLOCK_TOKEN}"}}`), pipeline.TemplateVars{}, counting)
	before := calls
	if v, ok := look("INTERLOCK_TOKEN"); !ok || v != "tok-123456" || calls != before {
		t.Fatalf("lookup = %q, %v; %d new calls", v, ok, calls-before)
	}
	if _, ok := look("INTERLOCK_UNSET"); ok {
		t.Fatal("an unset name was found")
	}
	if v, _ := look("INTERLOCK_BODY"); s.Redact(v) != "[redacted]" {
		t.Fatal("a value the scan did not read is not a secret")
	}
}
