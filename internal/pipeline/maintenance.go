package pipeline

import (
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/silence"
)

// rawMaintenance is one entry of interlock.yaml's maintenance: list: a
// recurring window during which matching events are stored and shown but
// not sent (internal/silence).
type rawMaintenance struct {
	Name            string         `yaml:"name,required"`
	Cron            string         `yaml:"cron,required"`
	Duration        *time.Duration `yaml:"duration,required"`
	Timezone        string         `yaml:"timezone"`
	silence.Written `yaml:",inline"`
	Comment         string `yaml:"comment"`
}

// maintenance checks the windows; each error names its entry's field
// (maintenance[0].cron: …), and two windows may not share a name (their
// silenced events name the window).
func (b *builder) maintenance(raws []rawMaintenance) []silence.Window {
	var out []silence.Window
	seen := map[string]int{}
	for i, r := range raws {
		p := confdec.Index("maintenance", i)
		if b.failed(p) {
			continue
		}
		ok := true
		if j, dup := seen[r.Name]; dup && r.Name != "" {
			b.errorf(p+".name", "%q is also the name of maintenance[%d]", r.Name, j)
			ok = false
		} else {
			seen[r.Name] = i
		}
		m, err := r.Written.Parse()
		if err != nil {
			b.fieldErrors(p, err)
			// Reported; the window's other fields are still checked, as
			// if it had a matcher.
			m, ok = silence.Matchers{Owners: []string{"-"}}, false
		}
		var d time.Duration
		if r.Duration != nil {
			d = *r.Duration
		}
		w, err := silence.NewWindow(r.Name, r.Cron, d, r.Timezone, m, r.Comment)
		if err != nil {
			b.fieldErrors(p, err)
			continue
		}
		if ok {
			out = append(out, w)
		}
	}
	return out
}

// fieldErrors reports silence's field errors under p; "matchers" (a
// window with none) is reported on the entry itself.
func (b *builder) fieldErrors(p string, err error) {
	for _, fe := range silence.FieldErrors(err) {
		field := fe.Field
		if field == "matchers" {
			b.errorf(p, "%s", fe.Msg)
			continue
		}
		b.errorf(p+"."+field, "%s", strings.TrimPrefix(fe.Msg, "invalid syntax: "))
	}
}
