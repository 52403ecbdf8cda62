package pipeline

import (
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/confdec"
)

// JobConfig is a job's type-specific config, checked against its type's
// schema (JobSchema). Strings still hold their template variables;
// trigger adapters expand them per run with ExpandTemplate.
type JobConfig struct {
	values map[string]configValue
}

type configValue struct {
	str  string
	args []string
	m    map[string]string
	dur  time.Duration
}

// Has reports whether the field was set.
func (c JobConfig) Has(name string) bool {
	_, ok := c.values[name]
	return ok
}

// Str returns a KindString, KindURL, KindJSON or KindMethod field ("" if
// not set).
func (c JobConfig) Str(name string) string { return c.values[name].str }

// Args returns a KindArgs field as the argument list (nil if not set).
func (c JobConfig) Args(name string) []string { return slices.Clone(c.values[name].args) }

// Map returns a copy of a KindStringMap, KindHeaders or KindEnv field
// (nil if not set).
func (c JobConfig) Map(name string) map[string]string { return maps.Clone(c.values[name].m) }

// Duration returns a KindDuration field (0 if not set).
func (c JobConfig) Duration(name string) time.Duration { return c.values[name].dur }

// Names lists the fields that are set, sorted.
func (c JobConfig) Names() []string {
	return slices.Sorted(maps.Keys(c.values))
}

// maxConfigDuration bounds job.config durations (request and command
// timeouts): a longer one is a mistake, and the poll window is 24h max.
const maxConfigDuration = 24 * time.Hour

// decodeJobConfig checks n (job.config) against the schema of t.
func decodeJobConfig(d *confdec.Decoder, n *yaml.Node, path string, t JobType, envAllow []string) JobConfig {
	schema := jobSchemas[t]
	cfg := JobConfig{values: map[string]configValue{}}
	var raw map[string]*yaml.Node
	if n != nil {
		d.Decode(n, path, &raw)
	}
	byName := map[string]ConfigField{}
	names := make([]string, 0, len(schema))
	for _, f := range schema {
		byName[f.Name] = f
		names = append(names, f.Name)
	}
	keys := slices.Collect(maps.Keys(raw))
	sort.Slice(keys, func(i, j int) bool { // errors of one line in a stable order
		li, lj := d.Line(confdec.Key(path, keys[i])), d.Line(confdec.Key(path, keys[j]))
		return li < lj || li == lj && keys[i] < keys[j]
	})
	for _, k := range keys {
		p := confdec.Key(path, k)
		f, ok := byName[k]
		if !ok {
			if s := confdec.Suggest(k, names); s != "" {
				d.ErrorAt(p, "unknown field for job type %s, did you mean %q?", t, s)
			} else {
				d.ErrorAt(p, "unknown field for job type %s (want one of %s)", t, confdec.OneOf(names))
			}
			continue
		}
		if v, ok := decodeConfigField(d, raw[k], p, f, envAllow); ok {
			cfg.values[k] = v
		}
	}
	for _, f := range schema {
		_, present := raw[f.Name]
		if f.Required && (!present || raw[f.Name] == nil || d.Resolve(raw[f.Name]) == nil) {
			d.ErrorAt(confdec.Key(path, f.Name), "missing required field for job type %s", t)
		}
	}
	return cfg
}

func decodeConfigField(d *confdec.Decoder, n *yaml.Node, path string, f ConfigField, envAllow []string) (configValue, bool) {
	if d.Resolve(n) == nil {
		return configValue{}, false // null: absent; a required field is reported by the caller
	}
	before := d.ErrorCount()
	var v configValue
	checkStr := func(p, s string) string {
		sample, err := sampleTemplate(s, envAllow)
		if err != nil {
			d.ErrorAt(p, "%v", err)
		}
		return sample
	}
	switch f.Kind {
	case KindString, KindURL, KindJSON, KindMethod:
		d.Decode(n, path, &v.str)
		if d.ErrorCount() > before {
			return v, false
		}
		if strings.TrimSpace(v.str) == "" {
			d.ErrorAt(path, "must not be empty")
			return v, false
		}
		sample := checkStr(path, v.str)
		if d.ErrorCount() > before {
			return v, false // judging the shape of a broken template adds noise
		}
		switch f.Kind {
		case KindURL:
			checkURL(d, path, v.str, sample)
		case KindJSON:
			if !json.Valid([]byte(sample)) {
				d.ErrorAt(path, "not valid JSON (template variables count as a value)")
			}
		case KindMethod:
			m := strings.ToUpper(v.str)
			if !slices.Contains(HTTPMethods, m) {
				d.ErrorAt(path, "%s", confdec.Unknown("HTTP method", v.str, HTTPMethods))
			}
			v.str = m
		}
	case KindArgs:
		if rn := d.Resolve(n); rn.Kind == yaml.SequenceNode {
			d.Decode(n, path, &v.args)
		} else {
			var s string
			d.Decode(n, path, &s)
			v.args = strings.Fields(s)
		}
		if d.ErrorCount() > before {
			return v, false
		}
		if len(v.args) == 0 || strings.TrimSpace(v.args[0]) == "" {
			d.ErrorAt(path, "must name a program")
		}
		for i, a := range v.args {
			checkStr(confdec.Index(path, i), a)
		}
	case KindStringMap, KindHeaders, KindEnv:
		d.Decode(n, path, &v.m)
		if d.ErrorCount() > before {
			return v, false
		}
		for _, k := range slices.Sorted(maps.Keys(v.m)) {
			p := confdec.Key(path, k)
			checkStr(p, v.m[k])
			switch f.Kind {
			case KindHeaders:
				checkHeader(d, p, k, v.m[k])
			case KindEnv:
				if !envName.MatchString(k) {
					d.ErrorAt(p, "%q is not an environment variable name", k)
				}
			}
		}
	case KindDuration:
		d.Decode(n, path, &v.dur)
		if d.ErrorCount() > before {
			return v, false
		}
		if v.dur <= 0 || v.dur > maxConfigDuration {
			d.ErrorAt(path, "must be greater than 0 and at most 24h, got %s", v.dur)
		}
	}
	return v, d.ErrorCount() == before
}

// checkURL checks an absolute http(s) URL. sample is raw with template
// variables replaced, so "https://${env:INTERLOCK_HOST}/run" is judged as
// a URL with some host.
func checkURL(d *confdec.Decoder, path, raw, sample string) {
	u, err := url.Parse(sample)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.ErrorAt(path, "want an absolute http or https URL, got %q", raw)
		return
	}
	if _, hasPass := u.User.Password(); hasPass && !fromSecret(raw[:strings.LastIndex(raw, "@")+1]) {
		d.ErrorAt(path, "a password must not be written inline in a URL: take it from ${env:NAME} or ${file:/PATH}")
	}
}

// secretHeader reports whether a header carries a credential, by name.
// fromSecret reports whether a value takes its secret from the
// environment or a file rather than writing it inline.
func fromSecret(value string) bool {
	return strings.Contains(value, "${env:") || strings.Contains(value, "${"+FilePrefix)
}

func secretHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	for _, s := range []string{"token", "secret", "password", "api-key", "apikey", "x-auth"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// checkHeader refuses an inline secret: a credential in a pipeline file
// ends up in git, in config versions and in `interlock explain` output.
func checkHeader(d *confdec.Decoder, path, name, value string) {
	if name == "" || strings.ContainsAny(name, " \t\r\n:") {
		d.ErrorAt(path, "%q is not a valid header name", name)
		return
	}
	if secretHeader(name) && !fromSecret(value) {
		d.ErrorAt(path, "secret header %s must not be written inline: take it from the environment or a file, e.g. \"Bearer ${env:INTERLOCK_TOKEN}\" or \"Bearer ${file:/run/secrets/token}\"", name)
	}
}
