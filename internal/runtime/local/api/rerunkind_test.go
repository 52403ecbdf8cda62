package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// TestRerunPeriodKindMatchesThePipeline: a rerun names a period of the
// kind the pipeline runs. A rerun of an hour of a daily trigger-only
// pipeline was accepted ({"accepted":true,"period":"…T06"}) and opened an
// hourly run nothing expected; only daily cron pipelines refused hours.
// Now every kind of pipeline refuses the other kind with a 400 naming
// what decides, and decides nothing.
func TestRerunPeriodKindMatchesThePipeline(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for file, doc := range map[string]string{
		"clicks.yaml": "pipeline: {id: clicks, owner: web}\nschedule: {cron: \"0 * * * *\"}\nvalidation: {rules: [{key: landed, check: exists}]}\njob: {type: glue, config: {jobName: clicks}}\n",
		"cdr.yaml":    "pipeline: {id: cdr, owner: telecom}\nschedule: {trigger: {key: hourly-status, check: exists}}\nvalidation: {rules: [{key: hourly-status, check: exists}]}\njob: {type: glue, config: {jobName: cdr}}\n",
	} {
		if _, err := f.eng.ApplyConfig(t.Context(), file, []byte(doc)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	// orders' trigger sensor names no period (today's date); cdr's names
	// an hour.
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", "", `{"ok": true}`), http.StatusOK)
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/cdr/sensors/hourly-status%2320260310T06", "", `{"ok": true}`), http.StatusOK)

	for _, c := range []struct{ pipeline, period, says string }{
		{"orders", "2026-03-09T06", "2026-03-09T06 is an hour, but pipeline orders runs daily periods (YYYY-MM-DD): its trigger sensors name dates, none an hour"},
		{"orders", "20260309T06", "is an hour, but pipeline orders runs daily periods"},
		{"nightly", "2026-03-09T06", "is an hour, but pipeline nightly runs daily periods (YYYY-MM-DD): its cron fires at most once a day"},
		{"clicks", "2026-03-09", "2026-03-09 is a date, but pipeline clicks runs hourly periods (YYYY-MM-DDTHH): its cron fires more than once a day"},
		{"cdr", "2026-03-09", "is a date, but pipeline cdr runs hourly periods (YYYY-MM-DDTHH): its trigger sensors name hours, none a date"},
	} {
		msg := wantError(t, f.do(t, "POST", "/v1/pipelines/"+c.pipeline+"/reruns", "", `{"period": "`+c.period+`"}`), http.StatusBadRequest, "bad_request")
		if !strings.Contains(msg, c.says) {
			t.Errorf("rerun of %s %s: message %q does not say %q", c.pipeline, c.period, msg, c.says)
		}
	}
	if evs, _ := f.st.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.RerunAccepted, event.RerunRejected}}); len(evs.Events) != 0 {
		t.Fatalf("refused reruns were decided: %v", evs)
	}
	for _, c := range []struct{ pipeline, period string }{
		{"orders", "2026-03-09"},
		{"nightly", "2026-03-09"},
		{"clicks", "2026-03-09T06"},
		{"cdr", "2026-03-10T05"},
	} {
		got := want[rerunAnswer](t, f.do(t, "POST", "/v1/pipelines/"+c.pipeline+"/reruns", "", `{"period": "`+c.period+`"}`), http.StatusOK)
		if !got.Accepted || got.Period != c.period {
			t.Errorf("rerun of %s %s: %+v", c.pipeline, c.period, got)
		}
	}
}
