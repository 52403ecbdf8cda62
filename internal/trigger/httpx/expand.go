package httpx

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Expander expands one call's templates (product spec §3 item 13) and
// holds what must stay secret in Secrets.
type Expander struct {
	Secrets *Secrets
	vars    pipeline.TemplateVars
	env     func(string) (string, bool)
}

// NewJobExpander expands the templates of req, reading ${env:NAME} and
// ${file:…} through lookup (nil: os.LookupEnv). Its Secrets are what
// secret.FromJob finds in req's whole config: the values that carry a
// credential, wherever this call uses them — not a value used only as the
// URL's scheme, host or port (a path may carry a webhook's token) — and
// every header value. Runners use this one.
func NewJobExpander(req trigger.Request, lookup func(string) (string, bool)) *Expander {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	s, env := secret.FromJob(pipeline.JobType(req.Type), req.Config, req.Vars, lookup)
	return &Expander{Secrets: s, vars: req.Vars, env: env}
}

// NewExpander expands with vars and reads ${env:NAME} through lookup (nil:
// os.LookupEnv), with no config to classify: every value it reads is a
// secret.
func NewExpander(vars pipeline.TemplateVars, lookup func(string) (string, bool)) *Expander {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	s := &Secrets{}
	return &Expander{Secrets: s, vars: vars, env: func(name string) (string, bool) {
		v, ok := lookup(name)
		if ok {
			s.Add(v)
		}
		return v, ok
	}}
}

// Str expands the template s of job.config.field.
func (e *Expander) Str(field, s string) (string, error) {
	v, err := pipeline.ExpandTemplate(s, e.vars, e.env)
	if err != nil {
		return "", fmt.Errorf("job.config.%s: %w", field, err)
	}
	return v, nil
}

// Map expands the values of job.config.field.
func (e *Expander) Map(field string, m map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) { // the first error is stable
		v, err := e.Str(field+"."+k, m[k])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// Header expands job.config.field into request headers. Every value is
// secret: the schema refuses literal credentials only for headers it
// recognises by name, and a value is cheap to hide.
func (e *Expander) Header(field string, m map[string]string) (http.Header, error) {
	vals, err := e.Map(field, m)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for k, v := range vals {
		h.Set(k, v)
		e.Secrets.AddHeader(k, v)
	}
	return h, nil
}
