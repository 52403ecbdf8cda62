package slack

import (
	"strings"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/textsafe"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Emoji is the marker of an event in Slack: ✅ for the all-clear events
// (SLA_MET, *_RECOVERED, JOB_COMPLETED), otherwise by level — 🔴 error,
// 🟡 warning, ℹ️ info.
func Emoji(e event.Event) string {
	if alert.IsAllClear(e.Type) {
		return "✅"
	}
	switch e.Level() {
	case event.LevelError:
		return "🔴"
	case event.LevelWarning:
		return "🟡"
	}
	return "ℹ️"
}

// maxText is the limit of a section block's text.
const maxText = 3000

// Text renders e as Block Kit mrkdwn (reference §7.1, with the message
// kept):
//
//	<emoji> *TYPE* | pipeline | date
//	message
//	Deadline d (breachAt) · Status: s · Source: src · Cron: `expr`
//	→ actionHint
//
// Empty parts are left out. Text taken from events is escaped (&, <, >),
// so a message cannot mention @channel or forge a link; the cron
// expression is code, so its asterisks do not turn into bold.
func Text(e event.Event) string {
	var lines []string
	lines = append(lines, header(e))
	if e.Message != "" {
		lines = append(lines, escape(e.Message))
	}
	d := e.Detail
	var facts []string
	deadline, breachAt := field(d, "deadline"), field(d, "breachAt")
	switch {
	case deadline != "" && breachAt != "" && breachAt != deadline:
		facts = append(facts, "Deadline "+escape(deadline)+" ("+escape(breachAt)+")")
	case deadline != "":
		facts = append(facts, "Deadline "+escape(deadline))
	case breachAt != "":
		facts = append(facts, "Breach at "+escape(breachAt))
	}
	if s := field(d, "status"); s != "" {
		facts = append(facts, "Status: "+escape(s))
	}
	if s := field(d, "source"); s != "" {
		facts = append(facts, "Source: "+escape(s))
	}
	if s := field(d, "cron"); s != "" {
		facts = append(facts, "Cron: `"+strings.ReplaceAll(escape(s), "`", "'")+"`")
	}
	if len(facts) > 0 {
		lines = append(lines, strings.Join(facts, " · "))
	}
	if s := field(d, "actionHint"); s != "" {
		lines = append(lines, "→ "+escape(s))
	}
	if b, ok := deps.BlockedByOf(e); ok {
		lines = append(lines, "⛓ Blocked by *"+escape(b.PipelineID)+"* "+escape(b.Date)+" ("+escape(string(b.Reason))+"): not paged on its own")
	}
	return truncate(strings.Join(lines, "\n"), maxText)
}

func header(e event.Event) string {
	parts := []string{Emoji(e) + " *" + escape(string(e.Type)) + "*"}
	if e.PipelineID != "" {
		parts = append(parts, escape(e.PipelineID))
	}
	if e.Date != "" {
		parts = append(parts, escape(e.Date))
	}
	return strings.Join(parts, " | ")
}

// Fallback is the plain text of e: what notifications and clients without
// blocks show.
func Fallback(e event.Event) string {
	parts := []string{string(e.Type)}
	if e.PipelineID != "" {
		parts = append(parts, e.PipelineID)
	}
	if e.Date != "" {
		parts = append(parts, e.Date)
	}
	s := strings.Join(parts, " | ")
	if e.Message != "" {
		s += ": " + e.Message
	}
	return truncate(escape(s), maxText)
}

func field(o sensor.Object, name string) string {
	v, ok := o.Get(name)
	if !ok || v.IsNull() {
		return ""
	}
	if s, ok := v.Str(); ok {
		return s
	}
	return v.String()
}

// escape applies Slack's required escaping of text.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func truncate(s string, n int) string { return textsafe.Truncate(s, n) }
