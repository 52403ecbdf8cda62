package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
)

func TestSettingsMaintenance(t *testing.T) {
	s, err := ParseSettings("interlock.yaml", []byte(`
maintenance:
  - {name: nightly, cron: "0 2 * * *", duration: 2h, timezone: America/New_York, pipelines: ["gold-*"], levels: [error], comment: warehouse vacuum}
  - {name: sunday, cron: "0 0 * * 0", duration: 1d, owners: [analytics]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Maintenance) != 2 {
		t.Fatalf("windows = %+v", s.Maintenance)
	}
	w := s.Maintenance[0]
	if w.ID() != "maintenance:nightly" || w.Duration != 2*time.Hour || w.Location.String() != "America/New_York" ||
		w.Levels[0] != event.LevelError || w.Comment != "warehouse vacuum" {
		t.Fatalf("window = %+v", w)
	}
	if s.Maintenance[1].Duration != 24*time.Hour || s.Maintenance[1].Location != time.UTC {
		t.Fatalf("window 1 = %+v", s.Maintenance[1])
	}
}

func TestSettingsMaintenanceErrors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"bad cron", `{name: a, cron: "61 * * * *", duration: 1h, pipelines: [x]}`, "interlock.yaml:3: maintenance[0].cron: "},
		{"bad zone", `{name: a, cron: "@daily", duration: 1h, timezone: Mars/X, pipelines: [x]}`, "maintenance[0].timezone: unknown time zone"},
		{"long duration", `{name: a, cron: "@daily", duration: 8d, pipelines: [x]}`, "maintenance[0].duration: "},
		{"no matcher", `{name: a, cron: "@daily", duration: 1h}`, "maintenance[0]: at least one of pipelines"},
		{"unknown type", `{name: a, cron: "@daily", duration: 1h, types: [SLA_BRAECH]}`, "maintenance[0].types[0]: unknown event type"},
		{"missing duration", `{name: a, cron: "@daily", pipelines: [x]}`, "maintenance[0].duration"},
		{"unknown field", `{name: a, cron: "@daily", duration: 1h, pipelines: [x], until: x}`, "maintenance[0].until: unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSettings("interlock.yaml", []byte("\nmaintenance:\n  - "+c.doc+"\n"))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	_, err := ParseSettings("interlock.yaml", []byte(`
maintenance:
  - {name: a, cron: "@daily", duration: 1h, pipelines: [x]}
  - {name: a, cron: "@daily", duration: 1h, pipelines: [y]}
`))
	if err == nil || !strings.Contains(err.Error(), `maintenance[1].name: "a" is also the name of maintenance[0]`) {
		t.Fatalf("duplicate name: %v", err)
	}
}
