package pipeline

import (
	"strings"
	"testing"
	"time"
)

// TestDeadlinesWithinRetention: a pipeline is refused when its latest
// "+Nd" deadline keeps a period's history in use longer than the
// retention it is loaded under, and accepted up to that limit.
func TestDeadlinesWithinRetention(t *testing.T) {
	const day = 24 * time.Hour
	doc := func(trigger, sla string) string {
		return "pipeline: {id: p}\nschedule:\n  cron: \"0 2 * * *\"\n  trigger: {key: up, check: exists, deadline: \"" + trigger +
			"\"}\nsla:\n  deadline: \"" + sla + "\"\njob: {type: glue, config: {jobName: gold}}\n"
	}
	for _, tc := range []struct {
		name         string
		trigger, sla string
		retention    time.Duration
		window       time.Duration
		err          string // "" when accepted
	}{
		{"same day deadlines", "10:00", "12:00", 0, 11 * day, ""},
		{"+79d fits the default", "+1d 02:00", "+79d 06:00", 0, 90 * day, ""},
		{"+80d does not", "+1d 02:00", "+80d 06:00", 0, 91 * day, "p.yaml:6: sla.deadline: +80d keeps a period's history in use for 91d, longer than retention (90d, interlock.yaml)"},
		{"the trigger deadline counts too", "+85d 02:00", "+1d 06:00", 0, 96 * day, "p.yaml:4: schedule.trigger.deadline: +85d"},
		{"a longer retention allows it", "+1d 02:00", "+80d 06:00", 91 * day, 91 * day, ""},
		{"a shorter retention refuses less", "+1d 02:00", "+2d 06:00", 11 * day, 13 * day, "p.yaml:6: sla.deadline: +2d keeps a period's history in use for 13d, longer than retention (11d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePipeline("p.yaml", []byte(doc(tc.trigger, tc.sla)), Options{Retention: tc.retention})
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v, want an error containing %q", err, tc.err)
			}
			if p != nil && p.HistoryWindow() != tc.window {
				t.Errorf("HistoryWindow = %v, want %v", p.HistoryWindow(), tc.window)
			}
		})
	}
	if MinRetention != 11*day {
		t.Errorf("MinRetention = %v: the window of a pipeline without +Nd deadlines is 11d", MinRetention)
	}
}
