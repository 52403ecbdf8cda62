// Package project finds and loads the configuration files of an Interlock
// project — interlock.yaml, calendars, pipelines and scenario files — and
// validates them together, so that `validate` and `serve` judge a project
// the same way. It reads files; it decides nothing about runs.
package project

import "gopkg.in/yaml.v3"

// Kind is what a configuration file holds, recognised from its content.
type Kind string

// The kinds of file.
const (
	KindPipeline Kind = "pipeline"
	KindCalendar Kind = "calendar"
	KindSettings Kind = "settings"
	KindScenario Kind = "scenario"
	KindUnknown  Kind = "unknown"
)

var settingsKeys = []string{"store", "server", "watchdog", "rules", "triggers", "alerts", "maintenance"}

// DetectKind tells the kind of a parsed YAML document from its top-level
// keys: `pipeline:` → pipeline; `timeline:`, `expect:` or `start:`+`end:` →
// scenario; any interlock.yaml section → settings; `name:` with `days:` or
// `dates:` → calendar.
func DetectKind(doc *yaml.Node) Kind {
	n := doc
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return KindUnknown
	}
	keys := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys[n.Content[i].Value] = n.Content[i+1]
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("pipeline"):
		return KindPipeline
	case has("timeline") || has("expect") || (has("start") && has("end")):
		return KindScenario
	}
	for _, k := range settingsKeys {
		if has(k) {
			return KindSettings
		}
	}
	// `pipelines:` and `calendars:` as paths belong to interlock.yaml; as
	// lists they belong to a scenario, which the checks above caught.
	if p, ok := keys["pipelines"]; ok && p.Kind == yaml.ScalarNode {
		return KindSettings
	}
	if c, ok := keys["calendars"]; ok && c.Kind == yaml.ScalarNode {
		return KindSettings
	}
	if has("name") && (has("days") || has("dates")) {
		return KindCalendar
	}
	return KindUnknown
}
