package dynamodb

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// The items anyone writes, written with the SDK as a user would, read
// back through the store.

func TestSensorInboxWrittenByAnyone(t *testing.T) {
	st := newStore(t)
	ctx := t.Context()
	put := func(it map[string]types.AttributeValue) {
		t.Helper()
		if _, err := st.c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.t.Control), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	want := mustParseBody(t, `{"count": 9007199254740993, "status": "ready", "ratio": 1e-7}`)
	fields := map[string]types.AttributeValue{"count": n("9007199254740993"), "status": s("ready"), "ratio": n("1e-7")}
	put(withKeys("PIPELINE#orders", "SENSOR#flat", fields))
	put(withKeys("PIPELINE#orders", "SENSOR#wrapped", map[string]types.AttributeValue{"data": m(fields)}))
	put(withKeys("PIPELINE#orders", "SENSOR#bad", map[string]types.AttributeValue{"data": s("ready")}))
	for _, key := range []string{"flat", "wrapped"} {
		got, err := st.SensorItemGet(ctx, "orders", key)
		if err != nil || !got.Equal(want) {
			t.Fatalf("SensorItemGet(%s) = %s, %v; want %s", key, jsonOf(got), err, jsonOf(want))
		}
	}
	var ie *ItemError
	if _, err := st.SensorItemGet(ctx, "orders", "bad"); !errors.As(err, &ie) || ie.SK != "SENSOR#bad" {
		t.Fatalf("SensorItemGet of a bad item: %v, want an *ItemError naming it", err)
	}
	if _, err := st.SensorItemGet(ctx, "orders", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SensorItemGet of nothing: %v", err)
	}
	// Facts reads each inbox item as SensorItemGet does, beside the
	// sensor states of the same keys (none: the inbox is not the state).
	refs := []store.SensorRef{{PipelineID: "orders", Key: "flat"}, {PipelineID: "orders", Key: "wrapped"},
		{PipelineID: "orders", Key: "bad"}, {PipelineID: "orders", Key: "missing"}}
	f, err := st.Facts(ctx, store.FactsQuery{Inboxes: refs, Sensors: refs})
	if err != nil || len(f.Inboxes) != 4 || len(f.Sensors) != 0 {
		t.Fatalf("Facts of inbox items: %+v, %v", f, err)
	}
	for _, r := range refs[:2] {
		if it := f.Inboxes[r]; it.Err != nil || !it.Data.Equal(want) {
			t.Fatalf("Facts inbox %s = %s, %v; want %s", r.Key, jsonOf(it.Data), it.Err, jsonOf(want))
		}
	}
	if err := f.Inboxes[refs[2]].Err; !errors.As(err, &ie) || ie.SK != "SENSOR#bad" {
		t.Fatalf("Facts of a bad inbox item: %v; want an *ItemError naming it", err)
	}
	if err := f.Inboxes[refs[3]].Err; !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Facts of no inbox item: %v", err)
	}
	// The inbox is not the store's sensor state: nothing was committed.
	if _, err := st.SensorGet(ctx, "orders", "flat"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SensorGet after an inbox write: %v, want ErrNotFound", err)
	}

	// PutSensorItem writes what a user's PutItem under data would: the
	// numbers as their own text.
	data := mustParseBody(t, `{"rows": 1e6, "exact": 9007199254740993, "neg": -42.5, "s": "5", "n": null, "a": [1, {"b": []}], "o": {}}`)
	if err := st.PutSensorItem(ctx, "orders", "count#2030-01-02", data); err != nil {
		t.Fatal(err)
	}
	raw, err := st.get(ctx, st.t.Control, "PIPELINE#orders", "SENSOR#count#2030-01-02")
	if err != nil {
		t.Fatal(err)
	}
	inner, ok := raw["data"].(*types.AttributeValueMemberM)
	if !ok || textOfN(inner.Value["exact"]) != "9007199254740993" || len(raw) != 4 { // PK, SK, data, ttl
		t.Fatalf("PutSensorItem wrote %v", raw)
	}
	if got := textOfN(raw[attrTTL]); got != fmt.Sprint(time.Date(2030, 1, 3, 12, 0, 0, 0, time.UTC).Add(testRetention).Unix()) {
		t.Fatalf("ttl of a per-period inbox item: %s", got)
	}
	got, err := st.SensorItemGet(ctx, "orders", "count#2030-01-02")
	if err != nil || !got.Equal(data) {
		t.Fatalf("round trip: %s, %v; want %s", jsonOf(got), err, jsonOf(data))
	}
	// A number DynamoDB cannot hold is refused by it, with the item named.
	huge := sensor.NewObject(map[string]sensor.Value{"x": sensor.NumberValue(1e300)})
	if err := st.PutSensorItem(ctx, "orders", "huge", huge); err == nil || !strings.Contains(err.Error(), "orders/huge") {
		t.Fatalf("PutSensorItem of 1e300: %v, want DynamoDB's refusal naming the item", err)
	}
}

func textOfN(v types.AttributeValue) string {
	if x, ok := v.(*types.AttributeValueMemberN); ok {
		return x.Value
	}
	return ""
}

func TestJobReportsAndRerunRequestsRoundTrip(t *testing.T) {
	st := newStore(t)
	ctx := t.Context()
	at := time.Date(2030, 3, 10, 7, 30, 1, 123e6, time.UTC)
	rep := JobReport{PipelineID: "orders", ScheduleID: "daily", Period: "2030-03-10", Event: "fail", Category: "TRANSIENT",
		Message: "executor lost", RunID: "jr-1", At: at}
	if err := st.PutJobReport(ctx, rep); err != nil {
		t.Fatal(err)
	}
	items, err := st.queryAll(ctx, queryRange{table: st.t.JobLog, pk: "PIPELINE#orders"})
	if err != nil || len(items) != 1 {
		t.Fatalf("job log: %d items, %v", len(items), err)
	}
	got, err := Decode(RoleJobLog, keyOf(textOf(items[0][attrPK]), textOf(items[0][attrSK])), items[0])
	if err != nil {
		t.Fatal(err)
	}
	rep.ID = "JOB#daily#2030-03-10#" + fmt.Sprint(at.UnixMilli())
	if got != Record(rep) {
		t.Fatalf("decoded %#v\nwant %#v", got, rep)
	}

	req := RerunRequest{PipelineID: "orders", ScheduleID: "daily", Period: "2030-03-10", Reason: "late data", ID: "r-7"}
	if err := st.PutRerunRequest(ctx, req); err != nil {
		t.Fatal(err)
	}
	raw, err := st.get(ctx, st.t.Control, "PIPELINE#orders", "RERUN_REQUEST#daily#2030-03-10")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Decode(RoleControl, keyOf("PIPELINE#orders", "RERUN_REQUEST#daily#2030-03-10"), raw); err != nil || got != Record(req) {
		t.Fatalf("decoded %#v, %v; want %#v", got, err, req)
	}
}

// TestAppendExternalIsIdempotent: the event sink's events are stored once
// per id, in the log like any other, marked external.
func TestAppendExternalIsIdempotent(t *testing.T) {
	st := newStore(t)
	ctx := t.Context()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	alarm := func(id string) event.Event {
		return event.Event{ID: id, Type: event.InfraAlarm, Time: at, Message: "alarm " + id}
	}
	if err := st.Commit(ctx, store.Change{Events: []event.Event{{ID: "own", Type: event.WatchdogDegraded, Time: at}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendExternal(ctx, []event.Event{alarm("a1"), alarm("a2")}); err != nil {
		t.Fatal(err)
	}
	// Redelivered, and with a new one: only the new one is stored.
	if err := st.AppendExternal(ctx, []event.Event{alarm("a2"), alarm("a1"), alarm("a3")}); err != nil {
		t.Fatal(err)
	}
	// Another process (another Store) delivering it again.
	if err := openOn(t, st.c, st.t).AppendExternal(ctx, []event.Event{alarm("a3")}); err != nil {
		t.Fatal(err)
	}
	page, err := st.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, e := range page.Events {
		ids = append(ids, e.ID)
		if e.Seq != int64(i+1) {
			t.Errorf("%s at seq %d, want %d", e.ID, e.Seq, i+1)
		}
	}
	if strings.Join(ids, ",") != "own,a1,a2,a3" {
		t.Fatalf("log %v, want own,a1,a2,a3 once each", ids)
	}
	// The stream shows which are external.
	items, err := st.queryAll(ctx, queryRange{table: st.t.Events, pk: eventPK(store.EventShard(""))})
	if err != nil {
		t.Fatal(err)
	}
	external := map[string]bool{}
	for _, it := range items {
		rec, err := Decode(RoleEvents, keyOf(textOf(it[attrPK]), textOf(it[attrSK])), it)
		if err != nil {
			t.Fatal(err)
		}
		ei := rec.(EventItem)
		external[ei.Event.ID] = ei.External
	}
	if fmt.Sprint(external) != "map[a1:true a2:true a3:true own:false]" {
		t.Fatalf("external flags %v", external)
	}
	if err := st.AppendExternal(ctx, []event.Event{{Type: event.InfraAlarm, Time: at}}); err == nil {
		t.Fatal("an external event with no id: want an error")
	}
}
