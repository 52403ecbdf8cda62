package awsjob

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/textsafe"
	"github.com/interlockhq/interlock/internal/trigger"
)

// MetaRegion is the Meta key every AWS job type records: the region the
// job was started in, so a poll (perhaps by a restarted process, perhaps
// after job.config.region was edited) asks the same region.
const MetaRegion = "aws_region"

// The job.config fields every AWS job type accepts (see jobschema.go).
const (
	FieldRegion   = "region"
	FieldEndpoint = "endpoint"
)

// Job is one start or poll of an AWS job: its request, with template
// expansion whose values are classified by secret.FromJob, so that Line
// and Redact keep the secrets out of errors and messages.
type Job struct {
	// Type names the job type in errors ("glue").
	Type string

	s       *Session
	req     trigger.Request
	secrets *secret.Set
	lookup  func(string) (string, bool)
}

// Job prepares req, of job type typ, for a call. A nil Session (a
// Runner's zero value) works, without sharing configuration across calls.
// Every template of req's config is read here, whatever the call expands:
// a poll's message may echo arguments only the start sent.
func (s *Session) Job(typ string, req trigger.Request) *Job {
	if s == nil {
		s = &Session{}
	}
	env := s.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	secrets, lookup := secret.FromJob(pipeline.JobType(typ), req.Config, req.Vars, env)
	return &Job{Type: typ, s: s, req: req, secrets: secrets, lookup: lookup}
}

// Expand expands template s. An unset variable is an error naming it
// (never an empty string). Values are those the Job read when it was
// made, so what is redacted is what is sent.
func (j *Job) Expand(s string) (string, error) {
	return pipeline.ExpandTemplate(s, j.req.Vars, j.lookup)
}

// Field expands the string field name of job.config ("" if not set).
func (j *Job) Field(name string) (string, error) {
	v, err := j.Expand(j.req.Config.Str(name))
	if err != nil {
		return "", fmt.Errorf("%s: job.config.%s: %w", j.Type, name, err)
	}
	return v, nil
}

// Required is Field for a field the job cannot do without. The schema
// makes it required at load; an empty value after expansion is refused
// here too, as AWS would refuse it less clearly.
func (j *Job) Required(name string) (string, error) {
	v, err := j.Field(name)
	if err == nil && strings.TrimSpace(v) == "" {
		err = fmt.Errorf("%s: job.config.%s is empty", j.Type, name)
	}
	return v, err
}

// StartFields expands what a start sends: the fields names, each
// Required, and the map job.config.arguments (Map; empty, never nil, when
// not set, so a start may add its own arguments to it).
func (j *Job) StartFields(names ...string) ([]string, map[string]string, error) {
	vals := make([]string, len(names))
	for i, name := range names {
		v, err := j.Required(name)
		if err != nil {
			return nil, nil, err
		}
		vals[i] = v
	}
	args, err := j.Map("arguments")
	if err != nil {
		return nil, nil, err
	}
	if args == nil {
		args = map[string]string{}
	}
	return vals, args, nil
}

// PollTarget finds what a poll needs (Target): the parent resource from
// the job's Meta, else from its config field, and the run id from Meta,
// else the run's JobRunID. Meta wins so that editing the config never
// loses a running job.
func (j *Job) PollTarget(t Target) (parent, id string, err error) {
	id = j.req.Meta[t.IDMeta]
	if id == "" {
		id = j.req.JobRunID
	}
	if id == "" {
		return "", "", fmt.Errorf("%s: no %s to poll", j.Type, t.What)
	}
	if t.ParentField == "" {
		return "", id, nil
	}
	if parent = j.req.Meta[t.ParentMeta]; parent == "" {
		if parent, err = j.Required(t.ParentField); err != nil {
			return "", "", err
		}
	}
	return parent, id, nil
}

// Map expands the values of the map field name of job.config (nil if not
// set). Keys are taken literally.
func (j *Job) Map(name string) (map[string]string, error) {
	m := j.req.Config.Map(name)
	for _, k := range sortedKeys(m) {
		v, err := j.Expand(m[k])
		if err != nil {
			return nil, fmt.Errorf("%s: job.config.%s.%s: %w", j.Type, name, k, err)
		}
		m[k] = v
	}
	return m, nil
}

// Endpoint is job.config.endpoint expanded, "" when not set: then the SDK
// resolves the endpoint (AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, the
// profile's endpoint settings, or the public endpoint of the region).
func (j *Job) Endpoint() (string, error) { return j.Field(FieldEndpoint) }

// Config returns the AWS configuration for the job. Its region is, first
// found: the region recorded in the request's Meta when the job started
// (polls), job.config.region, hint (a region read from the job's own ARN,
// or ""), and last the SDK's chain.
func (j *Job) Config(ctx context.Context, hint string) (aws.Config, error) {
	region := j.req.Meta[MetaRegion]
	if region == "" {
		r, err := j.Field(FieldRegion)
		if err != nil {
			return aws.Config{}, err
		}
		region = r
	}
	if region == "" {
		region = hint
	}
	cfg, err := j.s.Config(ctx, region)
	if err != nil {
		return aws.Config{}, fmt.Errorf("%s: %s", j.Type, j.Line(err.Error(), maxMessage))
	}
	return cfg, nil
}

// Timeout bounds one control-plane call.
func (j *Job) Timeout() time.Duration { return j.s.timeout() }

// Redact replaces the job's secrets in s: every value a template of its
// config reads that carries a credential (secret.FromJob: not a region
// or an endpoint's host), in every wire form. Text from outside goes
// through Line instead, which cleans before it redacts.
func (j *Job) Redact(s string) string { return j.secrets.Redact(s) }

// Line makes text from AWS or the job system fit a message: cleaned (one
// line, no invisible characters), redacted, cut to limit bytes plus the
// cut mark, redacted again (secret.Set.Line).
func (j *Job) Line(text string, limit int) string {
	return j.secrets.Line(text, limit+len(textsafe.Mark))
}

// Secrets are the job's secrets.
func (j *Job) Secrets() *secret.Set { return j.secrets }

// StartFailed turns the failure of start call op into what Start
// returns: a failed PERMANENT result when the service refused the job
// (Classify), otherwise the error, for the engine to retry.
func (j *Job) StartFailed(op string, err error) (trigger.Started, error) {
	e := j.Fail(op, err)
	if Classify(err) == Refused {
		return j.Refused("start refused: " + e.Error()), nil
	}
	return trigger.Started{}, e
}

// Refused is a start that did not start a job: a failed PERMANENT result.
func (j *Job) Refused(message string) trigger.Started {
	return trigger.Started{Result: &trigger.Result{Status: trigger.StatusFailed, Category: run.Permanent, Message: message}}
}

// Failed is a failed result of category c whose message is the job
// system's text (cleaned, redacted and cut to maxMessage bytes: Line)
// after prefix.
func (j *Job) Failed(c run.Category, prefix, text string) trigger.Result {
	msg := prefix
	if t := j.Line(text, maxMessage); t != "" {
		msg += ": " + t
	}
	return trigger.Result{Status: trigger.StatusFailed, Category: c, Message: msg}
}

// Meta returns the Meta of a started job: the region and kv, pairs of
// keys and values.
func Meta(cfg aws.Config, kv ...string) map[string]string {
	m := map[string]string{MetaRegion: cfg.Region}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// ARNRegion returns the region of an ARN ("arn:aws:states:eu-west-1:…"),
// or "" if s is not an ARN or names no region.
func ARNRegion(s string) string {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" {
		return ""
	}
	return parts[3]
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// KeyValues renders m as "k=v" arguments sorted by key, so the same
// config always produces the same argument list; nil when m is empty.
func KeyValues(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, k+"="+m[k])
	}
	return out
}
