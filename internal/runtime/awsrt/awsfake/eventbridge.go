package awsfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
)

// EventBridge is a fake of EventBridge's PutEvents (AWS JSON 1.1, target
// AWSEvents.PutEvents). It checks a request as EventBridge does (1 to 10
// entries, at most 256 KB by EventBridge's size formula, each entry with a
// source, a detail-type, a JSON-object detail and a known bus), gives each
// accepted entry an event id, keeps it as the event a rule's target
// receives, and hands it to the routes whose match takes it. Chosen
// entries can be failed (SetFail), as PutEvents fails entries: the call
// succeeds with FailedEntryCount and per-entry ErrorCode.
type EventBridge struct {
	*httptest.Server
	clk clock.Clock

	mu       sync.Mutex
	buses    map[string]bool
	events   []BusEvent
	calls    int
	seq      int
	fail     func(Entry) string
	onAccept func([]BusEvent)
	routes   []route
	latency  time.Duration
}

// Entry is one PutEvents request entry as received.
type Entry struct {
	Source       string   `json:"Source"`
	DetailType   string   `json:"DetailType"`
	Detail       string   `json:"Detail"`
	EventBusName string   `json:"EventBusName"`
	Resources    []string `json:"Resources"`
	Time         *float64 `json:"Time"` // epoch seconds
}

// BusEvent is an event EventBridge accepted, as a rule's target receives
// it.
type BusEvent struct {
	ID         string
	Bus        string
	Source     string
	DetailType string
	Time       time.Time
	Detail     json.RawMessage
	// JSON is the whole event as delivered to a target (an SQS message
	// body, a Lambda payload): version, id, detail-type, source, account,
	// time, region, resources, detail.
	JSON []byte
}

type route struct {
	match   func(BusEvent) bool
	deliver func(BusEvent)
}

// MaxRequestSize is PutEvents' limit on the total size of a request's
// entries.
const MaxRequestSize = 256 * 1024

// NewEventBridge starts a fake with the named custom buses; it is closed
// when the test ends. clk gives the time of entries sent without one
// (nil: the real clock).
func NewEventBridge(t testing.TB, clk clock.Clock, buses ...string) *EventBridge {
	if clk == nil {
		clk = clock.Real{}
	}
	f := &EventBridge{clk: clk, buses: map[string]bool{}}
	for _, b := range buses {
		f.buses[b] = true
	}
	f.Server = httptest.NewServer(jsonService{version: "1.1", prefix: "AWSEvents", ops: map[string]func(context.Context, []byte) (any, *apiError){
		"PutEvents": f.putEvents,
	}})
	t.Cleanup(f.Close)
	return f
}

// SetFail makes every following entry for which fail returns an error
// code fail with it ("" accepts the entry); nil accepts every valid entry.
// fail is called with the fake's lock held: it must not call the fake.
func (f *EventBridge) SetFail(fail func(Entry) string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

// SetLatency makes every following PutEvents call wait d before it looks
// at its entries. A caller that goes away meanwhile (its connection
// closed: the process died) has nothing accepted, as a request that never
// reached EventBridge.
func (f *EventBridge) SetLatency(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latency = d
}

// OnAccept calls hook with the entries a PutEvents call accepted, after
// they are kept and routed and before the answer is written (a test can
// stop the caller there). nil removes it.
func (f *EventBridge) OnAccept(hook func([]BusEvent)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onAccept = hook
}

// Route hands every accepted event that match takes to deliver, as a
// rule with a target does; deliver runs before PutEvents answers.
func (f *EventBridge) Route(match func(BusEvent) bool, deliver func(BusEvent)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes = append(f.routes, route{match: match, deliver: deliver})
}

// Events returns the accepted events, in order.
func (f *EventBridge) Events() []BusEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]BusEvent(nil), f.events...)
}

// Calls is how many PutEvents calls the fake answered (refused ones too).
func (f *EventBridge) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

type putEventsResultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

func (f *EventBridge) putEvents(ctx context.Context, body []byte) (any, *apiError) {
	var in struct {
		Entries []Entry `json:"Entries"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	latency := f.latency
	f.mu.Unlock()
	if latency > 0 {
		t := time.NewTimer(latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, &apiError{status: 499, code: "RequestAbandoned", msg: "the caller went away"}
		}
	}
	f.mu.Lock()
	f.calls++
	if n := len(in.Entries); n < 1 || n > 10 {
		f.mu.Unlock()
		return nil, validation("1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and 10 (got %d)", n)
	}
	size := 0
	for _, e := range in.Entries {
		size += entrySize(e)
	}
	if size > MaxRequestSize {
		f.mu.Unlock()
		return nil, validation("Total size of the entries in the request is over the limit (%d bytes).", size)
	}
	results := make([]putEventsResultEntry, len(in.Entries))
	var accepted []BusEvent
	failed := 0
	for i, e := range in.Entries {
		code, msg := f.check(e)
		if code != "" {
			results[i] = putEventsResultEntry{ErrorCode: code, ErrorMessage: msg}
			failed++
			continue
		}
		ev := f.accept(e)
		results[i] = putEventsResultEntry{EventID: ev.ID}
		accepted = append(accepted, ev)
	}
	var deliveries []func()
	for _, ev := range accepted {
		for _, r := range f.routes {
			if r.match(ev) {
				deliveries = append(deliveries, func() { r.deliver(ev) })
			}
		}
	}
	hook := f.onAccept
	f.mu.Unlock()
	for _, d := range deliveries {
		d()
	}
	if hook != nil && len(accepted) > 0 {
		hook(accepted)
	}
	return map[string]any{"FailedEntryCount": failed, "Entries": results}, nil
}

// check returns the error code and message of an entry EventBridge would
// fail, or "".
func (f *EventBridge) check(e Entry) (string, string) {
	switch {
	case e.Source == "":
		return "InvalidArgument", "Parameter Source is not valid. Reason: Source is a required argument."
	case e.DetailType == "":
		return "InvalidArgument", "Parameter DetailType is not valid. Reason: DetailType is a required argument."
	case e.Detail == "":
		return "InvalidArgument", "Parameter Detail is not valid. Reason: Detail is a required argument."
	case !isObject(e.Detail):
		return "MalformedDetail", "Detail is malformed."
	}
	bus := e.EventBusName
	if bus == "" {
		bus = "default"
	}
	if bus != "default" && !f.buses[bus] {
		return "NotFoundException", "Event bus " + bus + " does not exist."
	}
	if f.fail != nil {
		if code := f.fail(e); code != "" {
			return code, "injected failure"
		}
	}
	return "", ""
}

func isObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// accept keeps e as an event; the lock is held.
func (f *EventBridge) accept(e Entry) BusEvent {
	f.seq++
	at := f.clk.Now().UTC()
	if e.Time != nil {
		sec := int64(*e.Time)
		at = time.Unix(sec, int64((*e.Time-float64(sec))*1e9)).UTC()
	}
	bus := e.EventBusName
	if bus == "" {
		bus = "default"
	}
	ev := BusEvent{
		ID:     fmt.Sprintf("0b5e4c3a-%04x-4000-8000-%012x", f.seq>>16&0xffff, f.seq),
		Bus:    bus,
		Source: e.Source, DetailType: e.DetailType,
		Time:   at.Truncate(time.Second),
		Detail: json.RawMessage(e.Detail),
	}
	resources := e.Resources
	if resources == nil {
		resources = []string{}
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, []byte(e.Detail))
	ev.JSON, _ = json.Marshal(map[string]any{
		"version": "0", "id": ev.ID, "detail-type": ev.DetailType, "source": ev.Source,
		"account": Account, "time": ev.Time.Format(time.RFC3339), "region": Region,
		"resources": resources, "detail": json.RawMessage(compact.Bytes()),
	})
	f.events = append(f.events, ev)
	return ev
}

// entrySize is EventBridge's size of an entry ("Calculating Amazon
// EventBridge PutEvents event entry size"): 14 bytes for a Time, plus the
// UTF-8 bytes of Source, DetailType, Detail and each resource.
func entrySize(e Entry) int {
	n := len(e.Source) + len(e.DetailType) + len(e.Detail)
	if e.Time != nil {
		n += 14
	}
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}
