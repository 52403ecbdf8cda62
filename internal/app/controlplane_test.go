package app_test

import (
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// TestControlPlaneConflicts: each setting a control plane would double
// (alerts, watchdog) or silently ignore (pipelines, calendars, maintenance)
// is named with its file; settings at their defaults, and those a control
// plane uses (server, retention), are none.
func TestControlPlaneConflicts(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // each a "file: field:" the error names; none: no error
	}{
		{"empty", "{}\n", nil},
		{"defaults written out", "pipelines: ./pipelines\ncalendars: ./calendars\nwatchdog: {interval: 5m, stuckRunThreshold: 30m}\n", nil},
		{"what a control plane uses", "server: {addr: 0.0.0.0:7070, tokens: [{name: ops, role: admin, tokenEnv: T}]}\nretention: 30d\n", nil},
		{"alerts", "alerts: [{type: console}]\n", []string{"i.yaml: alerts:"}},
		{"watchdog interval", "watchdog: {interval: 1m}\n", []string{"i.yaml: watchdog:"}},
		{"stuck threshold", "watchdog: {stuckRunThreshold: 1h}\n", []string{"i.yaml: watchdog:"}},
		{"pipelines", "pipelines: ./defs\n", []string{"i.yaml: pipelines:", "deploy-config"}},
		{"calendars", "calendars: ./cals\n", []string{"i.yaml: calendars:"}},
		{"maintenance", "maintenance: [{name: nightly, cron: \"0 2 * * *\", duration: 1h, pipelines: [\"*\"]}]\n", []string{"i.yaml: maintenance:"}},
		{"several", "alerts: [{type: console}]\npipelines: ./defs\n", []string{"i.yaml: alerts:", "i.yaml: pipelines:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := pipeline.ParseSettings("i.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			err = app.ControlPlaneConflicts("i.yaml", s)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("conflicts: %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no conflict, want %v", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}
