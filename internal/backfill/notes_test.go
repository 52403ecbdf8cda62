package backfill

import (
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

func TestNotes(t *testing.T) {
	c := Counts{Pending: 1, Active: 2, Skipped: 3, Succeeded: 4, Failed: 5}
	begun := Begun{From: "2026-03-02", To: "2026-03-04", Periods: make([]Period, 3), WouldRun: 2}
	cases := []struct {
		note   run.Note
		typ    event.Type
		msg    string
		detail string
	}{
		{RequestedNote("7", "ops", Request{Only: OnlyMissing, MaxActive: 2, Reverse: true}, begun), event.BackfillRequested,
			"backfill 7 requested by ops: 2026-03-02..2026-03-04, only missing, 2 of 3 periods would run, at most 2 at once",
			`{"backfill":"7","from":"2026-03-02","maxActive":2,"only":"missing","periods":3,"requestedBy":"ops","reverse":true,"to":"2026-03-04","wouldRun":2}`},
		{CancelledNote("7", "ops", c), event.BackfillCancelled, "backfill 7 cancelled by ops: 1 periods not started; 2 running finish",
			`{"active":2,"backfill":"7","cancelledBy":"ops","failed":5,"pending":1,"skipped":3,"succeeded":4}`},
		{CompletedNote("7", c), event.BackfillCompleted, "backfill 7 completed: 4 succeeded, 5 failed, 3 skipped",
			`{"backfill":"7","failed":5,"skipped":3,"succeeded":4}`},
		{StartedNote("7", "2026-03-03", "no run", true), event.BackfillPeriodStarted, "backfill 7 started 2026-03-03: no run",
			`{"backfill":"7","reason":"no run","rerun":true}`},
		{SkippedNote("7", "2026-03-03", "in progress"), event.BackfillPeriodSkipped, "backfill 7 skipped 2026-03-03: in progress",
			`{"backfill":"7","reason":"in progress"}`},
	}
	for _, c := range cases {
		d, err := c.note.Detail.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if c.note.Type != c.typ || c.note.Message != c.msg || string(d) != c.detail {
			t.Errorf("note %s %q %s\nwant %s %q %s", c.note.Type, c.note.Message, d, c.typ, c.msg, c.detail)
		}
	}
}
