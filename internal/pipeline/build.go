package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/schedule"
)

// ParsePipeline parses and validates one pipeline document. The error,
// if any, is confdec.Errors holding every problem in the file.
func ParsePipeline(file string, data []byte, opt Options) (*Pipeline, error) {
	p, err := parseFile(file, data, func(d *confdec.Decoder, root *yaml.Node) *Pipeline { return DecodePipeline(d, root, "", opt) })
	if err != nil {
		return nil, err
	}
	p.Source.SHA256 = sha256Hex(data)
	return p, nil
}

// parseFile parses data, the YAML document of file, and builds its value
// with decode: every problem of the file as confdec.Errors, or the value.
func parseFile[T any](file string, data []byte, decode func(d *confdec.Decoder, root *yaml.Node) *T) (*T, error) {
	root, err := confdec.ParseDocument(file, data)
	if err != nil {
		return nil, err
	}
	d := confdec.NewDecoder(file)
	v := decode(d, root)
	if err := d.Err(); err != nil {
		return nil, err
	}
	return v, nil
}

// LoadPipelineFile reads and parses the pipeline file at path.
func LoadPipelineFile(path string, opt Options) (*Pipeline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePipeline(path, data, opt)
}

// DecodePipeline validates the pipeline document at n, reporting errors
// to d under path (a scenario passes "pipelines[0]"). It returns nil when
// the document has errors. Source.SHA256 is the hash of the document's
// YAML re-encoding; ParsePipeline replaces it with the hash of the file.
func DecodePipeline(d *confdec.Decoder, n *yaml.Node, path string, opt Options) *Pipeline {
	p := decodeDoc(d, n, path, "pipeline document", opt, (*builder).pipeline)
	if p == nil {
		return nil
	}
	p.Source = Source{File: d.File, SHA256: hashNode(n)}
	return p
}

func hashNode(n *yaml.Node) (sum string) {
	defer func() {
		if recover() != nil {
			sum = ""
		}
	}()
	data, err := yaml.Marshal(n)
	if err != nil {
		return ""
	}
	return sha256Hex(data)
}

func sha256Hex(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// builder turns a decoded rawDoc into a Pipeline, reporting semantic
// errors at the lines confdec recorded.
type builder struct {
	d    *confdec.Decoder
	path string
	opt  Options
	// startedByUpstream: validation.rules holds an upstream rule, whose
	// success starts the pipeline's runs, so it needs no cron or trigger.
	startedByUpstream bool
}

func (b *builder) at(field string) string { return confdec.Join(b.path, field) }

func (b *builder) errorf(field, format string, args ...any) {
	b.d.ErrorAt(b.at(field), format, args...)
}

// has reports whether field appeared in the document.
func (b *builder) has(field string) bool { return b.d.Has(b.at(field)) }

// failed reports whether an error was already recorded at or below field:
// a value that failed to decode reads as absent, and must not also be
// reported as missing.
func (b *builder) failed(field string) bool { return b.d.Failed(b.at(field)) }

// valid reports whether field appeared and decoded without error: only
// then are semantic checks on its value meaningful.
func (b *builder) valid(field string) bool { return b.has(field) && !b.d.Failed(b.at(field)) }

// Identifiers go into store keys, URL paths and file names.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

func checkID(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case !idPattern.MatchString(s):
		return fmt.Sprintf("%q: want 1 to 128 letters, digits, '.', '_' or '-'", s)
	case strings.Trim(s, ".") == "":
		return fmt.Sprintf("%q is not a usable id", s)
	}
	return ""
}

func (b *builder) pipeline(raw *rawDoc) *Pipeline {
	p := &Pipeline{ID: raw.Pipeline.ID, Owner: raw.Pipeline.Owner, Description: raw.Pipeline.Description, DryRun: raw.DryRun}
	if b.valid("pipeline.id") {
		if msg := checkID(raw.Pipeline.ID); msg != "" {
			b.errorf("pipeline.id", "%s", msg)
		}
	}
	b.startedByUpstream = hasUpstreamRule(raw.Validation)
	p.Schedule = b.schedule(raw.Schedule)
	p.SLA = b.sla(raw.SLA, raw.Schedule, p)
	p.Validation = b.validation(raw.Validation, p)
	p.PostRun = b.postRun(raw.PostRun)
	p.Upstreams = p.Validation.Upstreams
	if raw.Job != nil {
		p.Job = b.job(raw.Job)
	}
	if raw.DryRun && (raw.Schedule == nil || raw.Schedule.Trigger == nil) && !b.failed("schedule.trigger") {
		b.errorf("dryRun", "needs schedule.trigger: a dry run observes the trigger sensor")
	}
	p.Lineage = b.lineage(raw.Lineage)
	b.withinRetention(p)
	return p
}

// location loads an IANA time zone; "" is UTC. "Local" is refused: it
// would make the meaning of a file depend on the host.
func (b *builder) location(field, name string) *time.Location {
	if name == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		b.errorf(field, "%s", zoneMessage(name))
		return time.UTC
	}
	return loc
}

// syntaxMsg drops the "invalid syntax: " prefix schedule's errors carry.
func syntaxMsg(err error) string {
	return strings.TrimPrefix(err.Error(), schedule.ErrSyntax.Error()+": ")
}

// durationIn checks lo ≤ v ≤ hi for a duration that was set.
func (b *builder) durationIn(field string, v, lo, hi time.Duration) {
	if v < lo || v > hi {
		b.errorf(field, "%s is out of range (want %s to %s)", v, lo, hi)
	}
}

// optDuration sets *dst to an optional duration that is set, which must
// lie in [lo, hi]; absent, *dst keeps its default.
func (b *builder) optDuration(field string, v *time.Duration, dst *time.Duration, lo, hi time.Duration) {
	if v != nil {
		*dst = *v
		b.durationIn(field, *v, lo, hi)
	}
}

// intBudget resolves an optional integer budget: absent → def, else it
// must lie in [lo, hi].
func (b *builder) intBudget(field string, v *int, def, lo, hi int) int {
	if v == nil {
		return def
	}
	if *v < lo || *v > hi {
		b.errorf(field, "%d is out of range (want %d to %d)", *v, lo, hi)
	}
	return *v
}

func (b *builder) validation(raw *rawValidation, p *Pipeline) Validation {
	v := Validation{Mode: rule.All}
	if raw == nil {
		return v
	}
	mode, err := rule.ParseMode(raw.Trigger)
	if err != nil {
		b.errorf("validation.trigger", "unknown mode %q (want ALL or ANY)", raw.Trigger)
	} else {
		v.Mode = mode
	}
	v.Rules, v.Upstreams = b.validationRules(raw.Rules, p)
	if v.Mode == rule.Any && len(raw.Rules) == 0 {
		// ANY over no rules can never pass: every run would end in
		// VALIDATION_EXHAUSTED.
		b.errorf("validation.rules", "trigger ANY needs at least one rule, or validation can never pass")
	}
	return v
}

const (
	defaultDriftField    = "count"
	defaultSensorTimeout = 2 * time.Hour
	maxLongDuration      = 7 * 24 * time.Hour // longer waits are mistakes, not plans
)

func (b *builder) postRun(raw *rawPostRun) *PostRun {
	if raw == nil {
		return nil
	}
	pr := &PostRun{
		Rules:         buildRules(b.d, b.at("postRun.rules"), raw.Rules),
		DriftField:    defaultDriftField,
		SensorTimeout: defaultSensorTimeout,
	}
	if raw.DriftField != nil {
		if *raw.DriftField == "" {
			b.errorf("postRun.driftField", "must not be empty (omit it for the default %q)", defaultDriftField)
		}
		pr.DriftField = *raw.DriftField
	}
	if raw.DriftThreshold != nil {
		if *raw.DriftThreshold < 0 {
			b.errorf("postRun.driftThreshold", "must be 0 or more, got %v", *raw.DriftThreshold)
		}
		pr.DriftThreshold = *raw.DriftThreshold
	}
	if raw.SensorTimeout != nil {
		b.durationIn("postRun.sensorTimeout", *raw.SensorTimeout, time.Minute, maxLongDuration)
		pr.SensorTimeout = *raw.SensorTimeout
	}
	if raw.Evaluation != nil {
		b.errorf("postRun.evaluation", "not supported: post-run rules are checked as post-run sensors arrive, until postRun.sensorTimeout; remove it")
	}
	return pr
}

// isMapping reports whether n is a mapping, recording an error when it is
// not: semantic checks on a document that is a list or nothing would only
// add noise ("schedule: missing") to the one real error.
// decodeDoc decodes the document at n, which must be a mapping (a what),
// into its raw form R and builds it under path: nil when the document or
// its building reports an error to d.
func decodeDoc[R, T any](d *confdec.Decoder, n *yaml.Node, path, what string, opt Options, build func(*builder, *R) *T) *T {
	before := d.ErrorCount()
	if !isMapping(d, n, path, what) {
		return nil
	}
	var raw R
	d.Decode(n, path, &raw)
	v := build(&builder{d: d, path: path, opt: opt}, &raw)
	if d.ErrorCount() > before {
		return nil
	}
	return v
}

func isMapping(d *confdec.Decoder, n *yaml.Node, path, what string) bool {
	rn := d.Resolve(n)
	switch {
	case rn == nil:
		d.Errorf(n, path, "empty %s: want a mapping", what)
		return false
	case rn.Kind != yaml.MappingNode:
		d.Errorf(rn, path, "want a %s (a mapping), got %s", what, confdec.Describe(rn))
		return false
	}
	return true
}
