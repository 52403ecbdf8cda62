package awsjob

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
)

func TestMain(m *testing.M) {
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, v := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"} {
		os.Unsetenv(v)
	}
	os.Exit(m.Run())
}

// apiError is err as the SDK returns it: an API error inside the HTTP
// response error.
func apiError(status int, code string) error {
	return &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
			Err:      &smithy.GenericAPIError{Code: code, Message: "the message"},
		},
		RequestID: "rid-1",
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		status int
		code   string
		want   Verdict
	}{
		{400, "ThrottlingException", Retry},
		{429, "TooManyRequestsException", Retry},
		{400, "ConcurrentRunsExceededException", Retry},
		{400, "ExecutionLimitExceeded", Retry},
		{503, "ServiceUnavailable", Retry},
		{500, "InternalFailure", Retry},
		{500, "InternalServiceException", Retry},
		{400, "ExpiredTokenException", Retry},
		{403, "UnrecognizedClientException", Retry},
		{409, "ConflictException", Retry},
		{502, "EC2ThrottledException", Retry},
		{400, "ValidationException", Refused},
		{403, "AccessDeniedException", Refused},
		{404, "ResourceNotFoundException", Refused},
		{400, "EntityNotFoundException", Refused},
		{400, "InvalidParameterValueException", Refused},
		{400, "StateMachineDoesNotExist", Refused},
		{502, "InvalidRuntimeException", Refused},
		{400, "BrandNew", Refused},
		{404, "BrandNew", Refused},
		{429, "BrandNew", Retry},
		{500, "BrandNew", Retry},
		{503, "", Retry},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", c.code, c.status), func(t *testing.T) {
			if got := Classify(apiError(c.status, c.code)); got != c.want {
				t.Fatalf("Classify = %s, want %s", got, c.want)
			}
		})
	}
	t.Run("no AWS answer", func(t *testing.T) {
		for _, err := range []error{errors.New("dial tcp: connection refused"), context.DeadlineExceeded, fmt.Errorf("op: %w", context.Canceled)} {
			if got := Classify(err); got != Retry {
				t.Errorf("Classify(%v) = %s, want retry", err, got)
			}
		}
	})
	t.Run("no code table overlaps", func(t *testing.T) {
		for c := range retryCodes {
			if refusedCodes[c] {
				t.Errorf("%s is in both tables", c)
			}
		}
	})
}

func testJob(t *testing.T, env map[string]string, cfg string) *Job {
	t.Helper()
	doc := "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: " + cfg + "}\n"
	p, err := pipeline.ParsePipeline("p.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{LookupEnv: func(n string) (string, bool) { v, ok := env[n]; return v, ok }}
	return s.Job("glue", trigger.Request{Config: p.Job.Config, Vars: pipeline.TemplateVars{Date: "2026-03-10"}})
}

func TestFailDescribesWithoutSecrets(t *testing.T) {
	j := testJob(t, map[string]string{"INTERLOCK_TOKEN": "s3cr3t-value", "INTERLOCK_SHORT": "abc"}, `{jobName: j, arguments: {a: "${env:INTERLOCK_TOKEN}", b: "${env:INTERLOCK_SHORT}"}}`)
	err := &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 400}},
			Err:      &smithy.GenericAPIError{Code: "ValidationException", Message: "Value 's3cr3t-value' at 'arguments.a'\nfailed abc"},
		},
		RequestID: "rid-1",
	}
	e := j.Fail("StartJobRun", err)
	want := "glue StartJobRun: ValidationException: Value '[redacted]' at 'arguments.a' failed abc (HTTP 400, request rid-1)"
	if e.Error() != want {
		t.Fatalf("Error() = %q\nwant      %q", e.Error(), want)
	}
	if errors.Unwrap(e) != nil {
		t.Errorf("Fail wraps the SDK's error, whose text is not redacted")
	}
	st, serr := j.StartFailed("StartJobRun", err)
	if serr != nil || st.Result == nil || st.Result.Category != run.Permanent || st.Result.Message != "start refused: "+want {
		t.Errorf("StartFailed = %+v, %v", st.Result, serr)
	}
	if _, serr := j.StartFailed("StartJobRun", fmt.Errorf("wrapped: %w", context.DeadlineExceeded)); !errors.Is(serr, context.DeadlineExceeded) {
		t.Errorf("a timed-out call's error should say so to errors.Is: %v", serr)
	}
}

func TestRedactCoversFieldsThisCallDidNotExpand(t *testing.T) {
	j := testJob(t, map[string]string{"INTERLOCK_TOKEN": "tok-123456", "INTERLOCK_LONG": "tok-123456-and-more"}, `{jobName: "${env:INTERLOCK_LONG}", arguments: {a: "x${env:INTERLOCK_TOKEN}"}}`)
	got := j.Redact("saw tok-123456-and-more and tok-123456")
	if got != "saw [redacted] and [redacted]" {
		t.Fatalf("Redact = %q", got)
	}
}

func TestExpandErrors(t *testing.T) {
	j := testJob(t, nil, `{jobName: "${env:INTERLOCK_UNSET}"}`)
	if _, err := j.Required("jobName"); err == nil || !strings.Contains(err.Error(), "glue: job.config.jobName") || !strings.Contains(err.Error(), "INTERLOCK_UNSET") {
		t.Fatalf("err = %v", err)
	}
	j = testJob(t, map[string]string{"INTERLOCK_EMPTY": ""}, `{jobName: "${env:INTERLOCK_EMPTY}"}`)
	if _, err := j.Required("jobName"); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("err = %v", err)
	}
}

func TestName(t *testing.T) {
	if got := Name("p-cron-2026-03-10-g0-a1", 80); got != "p-cron-2026-03-10-g0-a1" {
		t.Errorf("a fitting id changed: %q", got)
	}
	ids := []string{"a.b-cron-2026-03-10-g0-a1", "a_b-cron-2026-03-10-g0-a1", "a/b-cron-2026-03-10-g0-a1", strings.Repeat("x", 100), strings.Repeat("x", 99) + "y", "é-ü", ""}
	seen := map[string]bool{}
	for _, id := range ids {
		n := Name(id, 64)
		if len(n) > 64 || n != Name(id, 64) || seen[n] {
			t.Errorf("Name(%q) = %q: too long, unstable or shared", id, n)
		}
		for _, r := range n {
			if !nameChar(r) {
				t.Errorf("Name(%q) = %q has %q", id, n, r)
			}
		}
		seen[n] = true
	}
	if n := Name("a.b", 80); !strings.HasPrefix(n, "a_b-") || len(n) != 3+13 {
		t.Errorf("Name(a.b) = %q", n)
	}
}

func TestSmallHelpers(t *testing.T) {
	if got := KeyValues(map[string]string{"b": "2", "a": "1", "--c": "3"}); fmt.Sprint(got) != "[--c=3 a=1 b=2]" {
		t.Errorf("KeyValues = %v", got)
	}
	if KeyValues(nil) != nil {
		t.Error("KeyValues(nil) is not nil")
	}
	for in, want := range map[string]string{
		"arn:aws:states:eu-west-1:1:stateMachine:m":  "eu-west-1",
		"arn:aws:lambda:us-east-2:1:function:f:prod": "us-east-2",
		"arn:aws:iam::123456789012:role/r":           "",
		"my-function":                                "",
		"123456789012:function:my-function":          "",
	} {
		if got := ARNRegion(in); got != want {
			t.Errorf("ARNRegion(%q) = %q, want %q", in, got, want)
		}
	}
}

func testSession() *Session {
	return &Session{LoadOptions: []func(*config.LoadOptions) error{
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")),
		config.WithSharedConfigFiles([]string{}),
		config.WithSharedCredentialsFiles([]string{}),
		config.WithEC2IMDSClientEnableState(imds.ClientDisabled),
	}}
}

func TestSessionConfig(t *testing.T) {
	s := testSession()
	if _, err := s.Config(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "no AWS region") {
		t.Fatalf("no region: err = %v", err)
	}
	cfg, err := s.Config(context.Background(), "eu-west-1")
	if err != nil || cfg.Region != "eu-west-1" {
		t.Fatalf("Config = %v, %v", cfg.Region, err)
	}
	if _, nop := cfg.Retryer().(aws.NopRetryer); !nop {
		t.Errorf("the SDK's retryer is %T, want aws.NopRetryer: the engine owns retries", cfg.Retryer())
	}
	again, _ := s.Config(context.Background(), "eu-west-1")
	if again.Credentials != cfg.Credentials {
		t.Error("the configuration (and its credential cache) is not shared across calls")
	}
}

func TestJobRegionOrder(t *testing.T) {
	s := testSession()
	req := func(cfg string, meta map[string]string) *Job {
		doc := "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: " + cfg + "}\n"
		p, err := pipeline.ParsePipeline("p.yaml", []byte(doc), pipeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Job("glue", trigger.Request{Config: p.Job.Config, Meta: meta})
	}
	cases := []struct {
		name string
		job  *Job
		hint string
		want string
	}{
		{"meta wins", req(`{jobName: j, region: us-east-1}`, map[string]string{MetaRegion: "ap-south-1"}), "eu-west-2", "ap-south-1"},
		{"config next", req(`{jobName: j, region: us-east-1}`, nil), "eu-west-2", "us-east-1"},
		{"then the ARN", req(`{jobName: j}`, nil), "eu-west-2", "eu-west-2"},
	}
	for _, c := range cases {
		cfg, err := c.job.Config(context.Background(), c.hint)
		if err != nil || cfg.Region != c.want {
			t.Errorf("%s: region %q, %v; want %q", c.name, cfg.Region, err, c.want)
		}
	}
}

// Issue 10: AWS's text is cleaned before it is redacted (a secret split
// by ESC or U+200B, or JSON-escaped, is redacted whole), and a value that
// only says where the job runs (the region, the endpoint's host) is shown.
func TestFailCleansBeforeRedactingAndShowsLocations(t *testing.T) {
	j := testJob(t, map[string]string{"INTERLOCK_TOKEN": `s3cr"3t-value`, "INTERLOCK_HOST": "10.9.8.7", "INTERLOCK_REGION": "eu-west-3"},
		`{jobName: j, region: "${env:INTERLOCK_REGION}", endpoint: "http://${env:INTERLOCK_HOST}:4566", arguments: {a: "${env:INTERLOCK_TOKEN}"}}`)
	err := &smithy.GenericAPIError{Code: "ValidationException", Message: "s3cr\"\x1b3t-value, s3cr\"\u200b3t-value, {\"a\":\"s3cr\\\"3t-value\"} at 10.9.8.7 in eu-west-3"}
	got := j.Fail("StartJobRun", err).Error()
	want := `glue StartJobRun: ValidationException: [redacted], [redacted], {"a":"[redacted]"} at 10.9.8.7 in eu-west-3`
	if got != want {
		t.Fatalf("Error() = %q\nwant      %q", got, want)
	}
}
