package web

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
)

// pageNames are the page templates; each is parsed with the layout.
var pageNames = []string{"overview", "pipeline", "events", "health", "graph", "silences", "error"}

// parsePages parses each page with the layout and the shared partials.
func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("base").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(templateFS, "templates/"+name+".html"); err != nil {
			return nil, fmt.Errorf("web: template %s: %w", name, err)
		}
		out[name] = t
	}
	out["fragment-row"] = out["overview"]
	out["fragment-preview"] = out["silences"]
	return out, nil
}

var funcs = template.FuncMap{
	"zoned": zoned,
	"utc":   utcText,
	"iso":   iso,
	"until": untilText,
	"ago":   agoText,
	// for is how long since t: "2h 5m".
	"for":   func(t, now time.Time) string { return durText(now.Sub(t)) },
	"dur":   durText,
	"value": valueText,
	"level": func(e event.Event) string { return string(e.Level()) },
	// blocked is the root an event is blocked by (docs/root-cause.md), or nil.
	"blocked": func(e event.Event) *deps.BlockedBy {
		if b, ok := deps.BlockedByOf(e); ok {
			return &b
		}
		return nil
	},
	"pipeURL": func(id string) string { return "/ui/pipelines/" + url.PathEscape(id) },
	"periodURL": func(id, period string) string {
		return "/ui/pipelines/" + url.PathEscape(id) + "/periods/" + url.PathEscape(period)
	},
	"cellTitle": func(c cellView) string {
		s := c.Period + ": " + string(c.State)
		if c.SLA != "" {
			s += ", SLA " + string(c.SLA)
		}
		if c.Reruns > 0 {
			s += fmt.Sprintf(", %d rerun(s)", c.Reruns)
		}
		return s
	},
	"deref": func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	},
	"fields": detailFields,
	// clock is an instant as a row shows it: its time of day (UTC) when
	// it is on now's date, else its date and time.
	"clock": func(t, now time.Time) string {
		if t.UTC().Format(time.DateOnly) == now.UTC().Format(time.DateOnly) {
			return t.UTC().Format("15:04:05Z")
		}
		return t.UTC().Format("2006-01-02 15:04Z")
	},
	// seq is the numbers from a to b.
	"seq": func(a, b int) []int {
		var out []int
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
		return out
	},
	// dlCell is a deadline and the zone its local column reads it in.
	"dlCell": func(at time.Time, zone string, utcOnly bool) dlCell {
		return dlCell{At: at, Zone: zone, UTCOnly: utcOnly}
	},
	"detail": func(e event.Event) string {
		if e.Detail.Len() == 0 {
			return ""
		}
		b, err := e.Detail.MarshalJSON()
		if err != nil {
			return ""
		}
		return string(b)
	},
	"sub": func(a, b int) int { return a - b },
}

// zoned renders an instant in zone with UTC beside it:
// "2026-03-10 09:00 America/New_York (13:00Z)". An unknown zone renders
// UTC alone.
func zoned(t time.Time, zone string) string {
	if t.IsZero() {
		return "—"
	}
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil || loc == time.UTC {
		return utcText(t)
	}
	local, u := t.In(loc), t.UTC()
	out := local.Format("2006-01-02 15:04") + " " + zone
	if u.Format(time.DateOnly) == local.Format(time.DateOnly) {
		return out + " (" + u.Format("15:04") + "Z)"
	}
	return out + " (" + u.Format("2006-01-02 15:04") + "Z)"
}

func utcText(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// iso is the machine form of an instant, for datetime and data- attributes.
func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// untilText is a countdown as the server renders it ("in 2h 5m"); the
// page's script keeps it ticking.
func untilText(t, now time.Time) string {
	d := t.Sub(now)
	if d < 0 {
		return durText(-d) + " ago"
	}
	return "in " + durText(d)
}

func agoText(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + durText(-d)
	}
	return durText(d) + " ago"
}

// durText renders a duration for people: the two largest units.
func durText(d time.Duration) string {
	d = d.Round(time.Second)
	days := int(d / (24 * time.Hour))
	d -= time.Duration(days) * 24 * time.Hour
	hours := int(d / time.Hour)
	d -= time.Duration(hours) * time.Hour
	mins := int(d / time.Minute)
	secs := int((d - time.Duration(mins)*time.Minute) / time.Second)
	switch {
	case days > 0:
		return fmt.Sprintf("%dd %dh", days, hours)
	case hours > 0:
		return fmt.Sprintf("%dh %dm", hours, mins)
	case mins > 0:
		return fmt.Sprintf("%dm %ds", mins, secs)
	}
	return fmt.Sprintf("%ds", secs)
}

func valueText(v *sensor.Value) string {
	if v == nil {
		return "—"
	}
	s := v.String()
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// detailField is one field of an event's detail, its value as text.
type detailField struct{ Key, Value string }

// detailFields lists an event's detail, field by field in key order: the
// row shows them on one line, folded, and in full when opened.
func detailFields(e event.Event) []detailField {
	keys := e.Detail.Keys()
	out := make([]detailField, 0, len(keys))
	for _, k := range keys {
		v, _ := e.Detail.Get(k)
		text := v.String()
		if str, ok := v.Str(); ok {
			text = str
		}
		out = append(out, detailField{Key: k, Value: text})
	}
	return out
}

// dlCell is a deadline's local column: none when the page has one column
// (a UTC pipeline).
type dlCell struct {
	At      time.Time
	Zone    string
	UTCOnly bool
}
