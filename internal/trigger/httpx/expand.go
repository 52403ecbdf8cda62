package httpx

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// Expander expands one call's templates (product spec §3 item 13) and
// records what must stay secret: every ${env:…} value it reads and every
// header value it builds.
type Expander struct {
	Secrets *Secrets
	vars    pipeline.TemplateVars
	env     func(string) (string, bool)
}

// NewExpander expands with vars and reads ${env:NAME} through lookup (nil:
// os.LookupEnv).
func NewExpander(vars pipeline.TemplateVars, lookup func(string) (string, bool)) *Expander {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	s := &Secrets{}
	return &Expander{Secrets: s, vars: vars, env: s.Lookup(lookup)}
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
		e.Secrets.Add(v)
	}
	return h, nil
}
