package api_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// noRuns fails when the pipeline has any run: a refused write must not
// have started one.
func noRuns(t *testing.T, f *fixture, id string) {
	t.Helper()
	if runs := want[runList](t, f.do(t, "GET", "/v1/pipelines/"+id+"/runs", "", ""), http.StatusOK); len(runs.Runs) != 0 {
		t.Fatalf("%s has runs %+v", id, runs.Runs)
	}
}

// TestSensorPeriodBeyondTheBoundsIs400: a sensor naming a period far
// ahead (by its date field or its key suffix) was a 500, the store being
// unable to hold year 9999's instants. It is a 400 naming the field and
// the bound, a week after today in the pipeline's zone, and nothing is
// stored or started. The last day within the bound is accepted.
func TestSensorPeriodBeyondTheBoundsIs400(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, c := range []struct{ pipeline, key, body, mentions string }{
		{"orders", "orders-landed", `{"date": "2300-01-01"}`, `field "date" names period 2300-01-01, more than 7 days ahead of today (2026-03-10 in UTC)`},
		{"orders", "orders-landed", `{"date": "9999-12-31"}`, `field "date" names period 9999-12-31`},
		{"orders", "orders-landed", `{"data": {"date": "99991231", "hour": 23}}`, `field "date" names period 9999-12-31T23`},
		{"orders", "orders-landed#99991231", `{}`, `key suffix #99991231 names period 9999-12-31`},
		{"orders", "orders-landed#2026-03-18T00", `{}`, `the latest period a sensor may name now is 2026-03-17`},
		{"orders", "other#23000101", `{"count": 1}`, `key suffix #23000101`}, // not a trigger key: refused all the same
		{"orders", "orders-landed#19691231", `{}`, `key suffix #19691231 names period 1969-12-31, before 1970-01-01`},
		{"orders", "orders-landed", `{"date": "0001-01-01"}`, `before 1970-01-01`},
		{"nightly", "landed", `{"date": "9999-12-31"}`, `(2026-03-10 in America/New_York)`},
	} {
		t.Run(c.key+" "+c.body, func(t *testing.T) {
			msg := wantError(t, f.do(t, "PUT", "/v1/pipelines/"+c.pipeline+"/sensors/"+c.key, "", c.body), http.StatusBadRequest, "invalid_sensor")
			if !strings.Contains(msg, c.mentions) {
				t.Fatalf("message %q does not mention %q", msg, c.mentions)
			}
		})
	}
	noRuns(t, f, "orders")
	noRuns(t, f, "nightly")
	if list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", "", ""), http.StatusOK); len(list.Sensors) != 0 {
		t.Fatalf("refused writes were stored: %+v", list.Sensors)
	}

	// The edges are inside: seven days ahead, and the epoch.
	for _, c := range []struct{ key, body, period string }{
		{"orders-landed", `{"date": "2026-03-17"}`, "2026-03-17"},
		{"orders-landed#20260317T23", `{}`, "2026-03-17T23"},
		{"orders-landed#19700101", `{}`, "1970-01-01"},
	} {
		got := want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/"+c.key, "", c.body), http.StatusOK)
		if got.Period != c.period {
			t.Fatalf("%s %s: period %s, want %s", c.key, c.body, got.Period, c.period)
		}
	}
}

// TestMalformedPeriodSuffixIs400: a key whose suffix starts like a date
// but is no period was a plain key that still matched its trigger key
// (a raw prefix match), so its period became today's and today's run
// started. It is a 400 naming the suffix, and nothing is stored or
// started; a key with another suffix ("orders-landed#eu") is still a
// plain key, and does not match the trigger key "orders-landed" either:
// the prefix does not reach across a '#'.
func TestMalformedPeriodSuffixIs400(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, c := range []struct{ key, mentions string }{
		{"orders-landed#20260230", `key suffix #20260230 starts like a date but is not a period`},
		{"orders-landed#20260310T24", `hour must be two digits, 00 to 23`},
		{"orders-landed#20260310T7", `hour must be two digits`},
		{"orders-landed#2026-3-10", `#2026-3-10 starts like a date`},
		{"orders-landed#20261310", `does not exist`},
		{"%2320260310", `no base key`}, // "#20260310"
		// Near misses found by a black-box review, each of which answered
		// 200 with today's period and started today's run.
		{"orders-landed#2026-03-09T05:00", `key suffix #2026-03-09T05:00 starts like a date but is not a period`},
		{"orders-landed#2026-03-10T", `key suffix #2026-03-10T starts like a date`},
		{"orders-landed#20260310T05Z", `key suffix #20260310T05Z starts like a date`},
		{"orders-landed#2026-03-10%2005", `key suffix #2026-03-10 05 starts like a date`},
		{"orders-landed#2026031", `key suffix #2026031 starts like a date`},
		{"orders-landed#202603100", `key suffix #202603100 starts like a date`},
		{"orders-landed#2026%2F03%2F10", `key suffix #2026/03/10 starts like a date`},
		{"orders-landed#2026031007", `key suffix #2026031007 starts like a date`},
		{"orders-landed#202603", `key suffix #202603 starts like a date`},
	} {
		t.Run(c.key, func(t *testing.T) {
			msg := wantError(t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/"+strings.ReplaceAll(c.key, "#", "%23"), "", `{"ok": true}`), http.StatusBadRequest, "invalid_sensor")
			if !strings.Contains(msg, c.mentions) {
				t.Fatalf("message %q does not mention %q", msg, c.mentions)
			}
		})
	}
	noRuns(t, f, "orders")
	if list := want[sensorList](t, f.do(t, "GET", "/v1/pipelines/orders/sensors", "", ""), http.StatusOK); len(list.Sensors) != 0 {
		t.Fatalf("refused writes were stored: %+v", list.Sensors)
	}

	for _, key := range []string{"orders-landed#eu", "orders-landed#2026-Q1", "orders-landed#12345"} {
		got := want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/"+strings.ReplaceAll(key, "#", "%23"), "", `{"ok": true}`), http.StatusOK)
		if got.Key != key || got.Period != "2026-03-10" {
			t.Fatalf("plain key %s: %+v", key, got)
		}
	}
	noRuns(t, f, "orders") // a plain key with a '#' is not the trigger key
	// The trigger key with a period suffix, or none, starts its period.
	got := want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed%2320260309", "", `{"ok": true}`), http.StatusOK)
	if got.Period != "2026-03-09" {
		t.Fatalf("per-period trigger key: %+v", got)
	}
	if runs := want[runList](t, f.do(t, "GET", "/v1/pipelines/orders/runs", "", ""), http.StatusOK); len(runs.Runs) != 1 || runs.Runs[0].Period != "2026-03-09" {
		t.Fatalf("runs after the trigger key: %+v", runs.Runs)
	}
}

// TestPauseUntilBeyondAYearIs400: pause --until 9999-12-31T23:59:59Z was a
// 500. A pause may end at most a year after now; the API says so naming
// the field, and the engine refuses it too for any other caller.
func TestPauseUntilBeyondAYearIs400(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, c := range []struct{ until, mentions string }{
		{"9999-12-31T23:59:59Z", `field "until": 9999-12-31T23:59:59Z is more than a year ahead (at most 2027-03-10T08:00:00Z)`},
		{"2300-01-01T00:00:00Z", `more than a year ahead`},
		{"2027-03-10T08:00:01Z", `more than a year ahead`},
		{"2027-03-10T09:00:01+01:00", `more than a year ahead`},
		{"0001-01-01T00:00:00Z", `is not in the future`},
	} {
		msg := wantError(t, f.do(t, "POST", "/v1/pipelines/orders/pause", "", `{"until": "`+c.until+`"}`), http.StatusBadRequest, "bad_request")
		if !strings.Contains(msg, c.mentions) {
			t.Fatalf("until %s: message %q does not mention %q", c.until, msg, c.mentions)
		}
	}
	if v := want[pipelineView](t, f.do(t, "GET", "/v1/pipelines/orders", "", ""), http.StatusOK); v.Paused {
		t.Fatal("a refused pause paused the pipeline")
	}
	err := f.eng.Pause(t.Context(), "orders", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), "test")
	if !errors.Is(err, engine.ErrInvalidRequest) {
		t.Fatalf("engine.Pause until 9999: %v, want ErrInvalidRequest", err)
	}
	v := want[pipelineView](t, f.do(t, "POST", "/v1/pipelines/orders/pause", "", `{"until": "2027-03-10T08:00:00Z"}`), http.StatusOK)
	if !v.Paused || v.PausedUntil == nil || !v.PausedUntil.Equal(t0.AddDate(1, 0, 0)) {
		t.Fatalf("a pause of exactly a year: %+v", v)
	}
}

// TestRerunBeforeTheEpochIs400: a rerun of a period long past was
// accepted (a run for 0001-01-01); periods start at 1970-01-01.
func TestRerunBeforeTheEpochIs400(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, period := range []string{"0001-01-01", "1600-01-01", "1969-12-31T23"} {
		msg := wantError(t, f.do(t, "POST", "/v1/pipelines/orders/reruns", "", `{"period": "`+period+`"}`), http.StatusBadRequest, "bad_request")
		if !strings.Contains(msg, "before 1970-01-01") {
			t.Fatalf("%s: message %q", period, msg)
		}
	}
	noRuns(t, f, "orders")
	if evs, _ := f.st.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.RerunAccepted, event.RerunRejected}}); len(evs.Events) != 0 {
		t.Fatalf("refused reruns were decided: %v", evs)
	}
	got := want[rerunAnswer](t, f.do(t, "POST", "/v1/pipelines/orders/reruns", "", `{"period": "1970-01-01"}`), http.StatusOK)
	if !got.Accepted {
		t.Fatalf("rerun of the epoch: %+v", got)
	}
}

// TestFarInstantsInReadsAreNot500: the reads that take an instant or a
// period answer without an internal error at the far ends too.
func TestFarInstantsInReadsAreNot500(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, target := range []string{
		"/v1/events?since=0001-01-01T00:00:00Z",
		"/v1/events?since=9999-12-31T23:59:59Z",
		"/v1/events?since=36500d",
		"/v1/pipelines/orders/runs?period=9999-12-31",
		"/v1/pipelines/orders/runs?period=0001-01-01",
		"/v1/pipelines/orders/explain?period=9999-12-31T23",
		"/v1/pipelines/nightly/explain?period=0001-01-01",
	} {
		if rec := f.do(t, "GET", target, "", ""); rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s", target, rec.Code, rec.Body)
		}
	}
	if rec := f.do(t, "GET", "/v1/events?since=36501d", "", ""); rec.Code != http.StatusBadRequest {
		t.Errorf("since a duration past what time can count: %d %s", rec.Code, rec.Body)
	}
}
