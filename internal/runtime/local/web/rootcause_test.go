package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// A downstream event blocked by broken's failed period is marked "blocked
// by" with a link to the root period on the events page and on its own
// period's timeline, and the root's period page lists it under its
// timeline (from the root's blocked markers) until it is released.
func TestBlockedEventsUnderTheirRoot(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	root := deps.BlockedBy{PipelineID: "broken", ScheduleID: "stream", Date: today, Reason: deps.BlockFailed}
	e := event.Event{ID: "ev-down-breach", Time: now, Type: event.SLABreach, PipelineID: "orders", ScheduleID: "stream", Date: today,
		Message: "SLA deadline passed", Detail: deps.BlockedDetail(run.Detail("deadline", "10:00"), root)}
	c := deps.BlockedOf(nil, e)
	f.commit(t, store.Change{Events: []event.Event{e},
		Markers: []store.MarkerWrite{{Marker: store.Marker{Key: root.Key(), Kind: run.BlockedMarker(c.Down, c.Type).String(), At: now, Detail: c.MarkerDetail()}}}})
	link := `data-blocked-by="broken">blocked by <a href="/ui/pipelines/broken/periods/2026-03-10">broken 2026-03-10</a> (failed)`
	if body := f.page(t, "/ui/events?pipeline=orders", http.StatusOK); !strings.Contains(body, link) {
		t.Error("the events page does not mark the blocked event with its root")
	}
	if body := f.page(t, "/ui/pipelines/orders/periods/"+today, http.StatusOK); !strings.Contains(body, link) {
		t.Error("the downstream period's timeline does not mark the blocked event")
	}
	body := f.page(t, "/ui/pipelines/broken/periods/"+today, http.StatusOK)
	if !strings.Contains(body, `id="blocked-downstream"`) || !strings.Contains(body, `<a href="/ui/pipelines/orders/periods/2026-03-10">orders 2026-03-10</a> <span class="ev-type">SLA_BREACH</span>`) {
		t.Error("the root's period page does not list the blocked downstream problem")
	}
	if body := f.page(t, "/ui/pipelines/broken/periods/2026-03-09", http.StatusOK); strings.Contains(body, `id="blocked-downstream"`) {
		t.Error("another period of the root lists it too")
	}
	if body := f.page(t, "/ui/events?pipeline=broken", http.StatusOK); strings.Contains(body, `class="blocked-by"`) {
		t.Error("an unblocked event is marked blocked")
	}
}
