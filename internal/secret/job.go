package secret

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// locators are the job.config fields, besides URLs, that only say where a
// job runs. A value read by nothing but them carries no credential.
var locators = map[pipeline.JobType][]string{
	pipeline.JobAirflow:       {"dagId"}, // a segment of the API's path
	pipeline.JobGlue:          {"region"},
	pipeline.JobEMR:           {"region"},
	pipeline.JobEMRServerless: {"region"},
	pipeline.JobStepFunction:  {"region"},
	pipeline.JobLambda:        {"region"},
}

// FromJob reads every template of a job's config, as one Start or Poll
// expands it, and returns the secrets of that call with the lookup the
// call must expand its templates with.
//
// A value a template reads (${env:…}, ${file:…}) is a secret unless each
// of its uses only says where the job is: a URL's scheme, host or port, or
// a locator field (an AWS region, an Airflow DAG id). A use in a header,
// a URL's user info, path, query or fragment, a body, arguments, a
// payload, a command or its environment carries a credential, and one
// such use is enough: a value used both as a host and in a header is a
// secret. A URL's path is no place of its own: webhook-style endpoints
// (Slack's /services/T…/B…/…, a generic /hooks/<token>) carry their key
// in it. A ${file:} value is always a secret. Besides the values,
// header values are secrets whole (any header may carry a credential),
// and so is a URL's user info with what a Basic header makes of it.
//
// Every field is read, whatever this call expands: a poll's answer may
// echo a value only the start sent. The lookup answers with the values
// read here, so what is redacted is what is sent even if a secret file
// changes meanwhile; a name the scan did not read is looked up in env and
// its value taken as a secret.
func FromJob(typ pipeline.JobType, cfg pipeline.JobConfig, vars pipeline.TemplateVars, env func(string) (string, bool)) (*Set, func(string) (string, bool)) {
	s := &Set{}
	r := &reader{env: env, seen: map[string]read{}}
	kinds := map[string]pipeline.ConfigKind{}
	fields, _ := pipeline.JobSchema(typ)
	for _, f := range fields {
		kinds[f.Name] = f.Kind
	}
	for _, name := range cfg.Names() {
		switch kind := kinds[name]; {
		case kind == pipeline.KindURL:
			out, reads := r.expand(cfg.Str(name), vars)
			s.addURLUses(out, reads)
		case kind == pipeline.KindHeaders:
			m := cfg.Map(name)
			for _, k := range slices.Sorted(maps.Keys(m)) {
				out, reads := r.expand(m[k], vars)
				s.AddHeader(k, out)
				s.addReads(reads)
			}
		case slices.Contains(locators[typ], name):
			_, reads := r.expand(cfg.Str(name), vars)
			s.addFiles(reads)
		default: // strings, JSON, maps, arguments, environments: carriers
			for _, t := range templates(cfg, name) {
				_, reads := r.expand(t, vars)
				s.addReads(reads)
			}
		}
	}
	return s, func(name string) (string, bool) {
		if v, ok := r.seen[name]; ok {
			return v.value, v.ok
		}
		v, ok := lookup(env, name)
		if ok {
			s.Add(v)
		}
		return v, ok
	}
}

// templates are the strings of field name, whatever its kind.
func templates(cfg pipeline.JobConfig, name string) []string {
	out := []string{cfg.Str(name)}
	out = append(out, cfg.Args(name)...)
	m := cfg.Map(name)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// read is one value a template read.
type read struct {
	name  string
	value string
	ok    bool
}

func (r read) file() bool { return strings.HasPrefix(r.name, pipeline.FilePrefix) }

// reader expands templates, remembering each value it reads once.
type reader struct {
	env  func(string) (string, bool)
	seen map[string]read
}

// expand expands t (an error leaves the rest unexpanded: the call itself
// reports it) and returns the values it read.
func (r *reader) expand(t string, vars pipeline.TemplateVars) (string, []read) {
	var reads []read
	out, _ := pipeline.ExpandTemplate(t, vars, func(name string) (string, bool) {
		v, seen := r.seen[name]
		if !seen {
			v.name = name
			v.value, v.ok = lookup(r.env, name)
			r.seen[name] = v
		}
		if v.ok {
			reads = append(reads, v)
		}
		return v.value, v.ok
	})
	return out, reads
}

func lookup(env func(string) (string, bool), name string) (string, bool) {
	if env == nil {
		return "", false
	}
	return env(name)
}

func (s *Set) addReads(reads []read) {
	for _, r := range reads {
		s.Add(r.value)
	}
}

func (s *Set) addFiles(reads []read) {
	for _, r := range reads {
		if r.file() {
			s.Add(r.value)
		}
	}
}

// addURLUses classifies the values read by a URL template whose
// expansion is raw: a value inside the scheme, host or port (and nowhere
// in the user info, path, query or fragment) says where the job is; any
// other is a secret, as is the user info itself.
func (s *Set) addURLUses(raw string, reads []read) {
	u, err := url.Parse(raw)
	if err != nil {
		s.addReads(reads) // cannot tell where a value went
		return
	}
	hidden := []string{u.Path, u.RawPath, u.EscapedPath(), u.RawQuery, u.Fragment, u.RawFragment, u.Opaque}
	if q, err := url.QueryUnescape(u.RawQuery); err == nil {
		hidden = append(hidden, q)
	}
	if u.User != nil {
		p, _ := u.User.Password()
		s.AddUserinfo(u.User.Username(), p)
		hidden = append(hidden, u.User.String(), u.User.Username(), p)
	}
	where := u.Scheme + "://" + u.Host
	for _, r := range reads {
		located := !r.file() && r.value != "" && strings.Contains(where, r.value) &&
			!slices.ContainsFunc(hidden, func(h string) bool { return h != "" && strings.Contains(h, r.value) })
		if !located {
			s.Add(r.value)
		}
	}
}
