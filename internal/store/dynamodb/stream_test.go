package dynamodb

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func m(v map[string]types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberM{Value: v}
}

func keys(pk, sk string) map[string]types.AttributeValue { return item{attrPK: s(pk), attrSK: s(sk)} }

// withKeys is an image: the keys and the given attributes.
func withKeys(pk, sk string, attrs map[string]types.AttributeValue) map[string]types.AttributeValue {
	it := keys(pk, sk)
	for k, v := range attrs {
		it[k] = v
	}
	return it
}

func mustParseBody(t *testing.T, body string) sensor.Object {
	t.Helper()
	o, err := sensor.ParseBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestDecodeSensorItems(t *testing.T) {
	// The same data, flat and under data, decodes the same, as the API's
	// two body shapes do; numbers keep their exact text.
	want := mustParseBody(t, `{"count": 9007199254740993, "ratio": 0.125, "tiny": 2.5e-7, "status": "ready", "ok": true,
		"none": null, "nested": {"parts": [1, "b", {"deep": -3.75}]}, "tags": ["a", "b"], "sizes": [1, 2, 10], "blob": "AAE="}`)
	fields := map[string]types.AttributeValue{
		"count":  n("9007199254740993"),
		"ratio":  n("0.125"),
		"tiny":   n("2.5E-7"),
		"status": s("ready"),
		"ok":     &types.AttributeValueMemberBOOL{Value: true},
		"none":   &types.AttributeValueMemberNULL{Value: true},
		"nested": m(map[string]types.AttributeValue{"parts": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			n("1"), s("b"), m(map[string]types.AttributeValue{"deep": n("-3.75")})}}}),
		"tags":  &types.AttributeValueMemberSS{Value: []string{"b", "a"}},
		"sizes": &types.AttributeValueMemberNS{Value: []string{"10", "2", "1"}},
		"blob":  &types.AttributeValueMemberB{Value: []byte{0, 1}},
	}
	flat := withKeys("PIPELINE#orders", "SENSOR#orders-count#2026-03-10", fields)
	flat[attrTTL] = n("1800000000") // a writer's ttl is not data
	wrapped := withKeys("PIPELINE#orders", "SENSOR#orders-count#2026-03-10", map[string]types.AttributeValue{"data": m(fields)})
	for name, image := range map[string]map[string]types.AttributeValue{"flat": flat, "under data": wrapped} {
		t.Run(name, func(t *testing.T) {
			rec, err := Decode(RoleControl, keys("PIPELINE#orders", "SENSOR#orders-count#2026-03-10"), image)
			if err != nil {
				t.Fatal(err)
			}
			si, ok := rec.(SensorItem)
			if !ok || si.PipelineID != "orders" || si.Key != "orders-count#2026-03-10" || si.Removed || !si.Data.Equal(want) {
				t.Fatalf("Decode = %+v %s\nwant data %s", si, jsonOf(si.Data), jsonOf(want))
			}
			v, _ := si.Data.Get("count")
			if i, ok := v.Int(); !ok || i != 9007199254740993 {
				t.Fatalf("count = %v: 2^53+1 did not survive", v)
			}
		})
	}

	t.Run("DataBesideOtherFieldsIsFlat", func(t *testing.T) {
		image := withKeys("PIPELINE#p", "SENSOR#k", map[string]types.AttributeValue{"data": m(nil), "n": n("1")})
		rec, err := Decode(RoleControl, keys("PIPELINE#p", "SENSOR#k"), image)
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.(SensorItem).Data; !got.Equal(mustParseBody(t, `{"data": {}, "n": 1}`)) {
			t.Fatalf("data %s", jsonOf(got))
		}
	})

	t.Run("Removed", func(t *testing.T) {
		rec, err := Decode(RoleControl, keys("PIPELINE#p", "SENSOR#k"), nil)
		si, ok := rec.(SensorItem)
		if err != nil || !ok || si.PipelineID != "p" || si.Key != "k" || !si.Removed || si.Data.Len() != 0 {
			t.Fatalf("Decode of a REMOVE = %#v, %v", rec, err)
		}
	})
}

func TestDecodeBadItemsNameTheItem(t *testing.T) {
	deep := n("1")
	for range 40 {
		deep = m(map[string]types.AttributeValue{"x": deep})
	}
	cases := []struct {
		name  string
		role  Role
		pk    string
		sk    string
		attrs map[string]types.AttributeValue
		why   string
	}{
		{"DataNotAMap", RoleControl, "PIPELINE#orders", "SENSOR#count", map[string]types.AttributeValue{"data": s("5")}, "not a map"},
		{"DataAList", RoleControl, "PIPELINE#orders", "SENSOR#count", map[string]types.AttributeValue{"data": &types.AttributeValueMemberL{}}, "a list"},
		{"BadNumber", RoleControl, "PIPELINE#orders", "SENSOR#count", map[string]types.AttributeValue{"n": n("0x10")}, "not a finite number"},
		{"ControlCharInName", RoleControl, "PIPELINE#orders", "SENSOR#count", map[string]types.AttributeValue{"a\nb": n("1")}, "control character"},
		{"TooDeep", RoleControl, "PIPELINE#orders", "SENSOR#count", map[string]types.AttributeValue{"deep": deep}, "deeper"},
		{"EmptySensorKey", RoleControl, "PIPELINE#orders", "SENSOR#", map[string]types.AttributeValue{"n": n("1")}, "empty"},
		{"JobWithoutPeriod", RoleJobLog, "PIPELINE#orders", "JOB#daily#1700000000000", map[string]types.AttributeValue{"event": s("success")}, "JOB#<schedule>#<period>#<epoch millis>"},
		{"JobBadMillis", RoleJobLog, "PIPELINE#orders", "JOB#daily#2026-03-10#soon", map[string]types.AttributeValue{"event": s("success")}, "epoch millis"},
		{"RerunWithoutPeriod", RoleControl, "PIPELINE#orders", "RERUN_REQUEST#daily", map[string]types.AttributeValue{"reason": s("x")}, "RERUN_REQUEST#<schedule>#<period>"},
		{"EventOfWrongTypes", RoleEvents, "EV#3", "00000000000000000001", map[string]types.AttributeValue{"seq": s("one")}, "seq"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, err := Decode(c.role, keys(c.pk, c.sk), withKeys(c.pk, c.sk, c.attrs))
			var ie *ItemError
			if !errors.As(err, &ie) {
				t.Fatalf("Decode = %#v, %v; want an *ItemError", rec, err)
			}
			if ie.PK != c.pk || ie.SK != c.sk || !strings.Contains(err.Error(), c.pk) || !strings.Contains(err.Error(), c.sk) || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("error %q (%+v): want it to name %s / %s and say %q", err, ie, c.pk, c.sk, c.why)
			}
			if strings.HasPrefix(c.pk, "PIPELINE#") && ie.PipelineID != "orders" {
				t.Fatalf("ItemError.PipelineID = %q, want orders", ie.PipelineID)
			}
		})
	}
	t.Run("KeysNotStrings", func(t *testing.T) {
		_, err := Decode(RoleControl, item{attrPK: n("1"), attrSK: s("x")}, nil)
		var ie *ItemError
		if !errors.As(err, &ie) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestDecodeOtherRecords(t *testing.T) {
	at := time.Date(2026, 3, 10, 7, 30, 0, 123e6, time.UTC)
	ev := event.Event{ID: "ev-1", Shard: 3, Seq: 12, Time: at, Type: "SOMETHING_NEW", PipelineID: "orders", ScheduleID: "daily",
		Date: "2026-03-10", Message: "m", Detail: mustParseBody(t, `{"n": 1}`)}
	st := &Store{retention: DefaultRetention}
	evImage := st.eventItem(ev, true).it
	timer := store.Timer{Key: "step/orders/daily/2026-03-10", Kind: "evaluate", Run: run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-10"},
		DueAt: at, Detail: mustParseBody(t, `{"attempt": 2}`)}
	timerImage := timerItem(timer)
	cases := []struct {
		name  string
		role  Role
		keys  map[string]types.AttributeValue
		image map[string]types.AttributeValue
		want  Record
	}{
		{"Config", RoleControl, keys("PIPELINE#orders", "CONFIG"), withKeys("PIPELINE#orders", "CONFIG", nil), ConfigItem{PipelineID: "orders"}},
		{"ConfigRemoved", RoleControl, keys("PIPELINE#orders", "CONFIG"), nil, ConfigItem{PipelineID: "orders"}},
		{"RerunRequest", RoleControl, keys("PIPELINE#orders", "RERUN_REQUEST#daily#2026-03-10"),
			withKeys("PIPELINE#orders", "RERUN_REQUEST#daily#2026-03-10", map[string]types.AttributeValue{"reason": s("late data"), "requestId": s("r-1")}),
			RerunRequest{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-10", Reason: "late data", ID: "r-1"}},
		{"JobReport", RoleJobLog, keys("PIPELINE#orders", "JOB#daily#2026-03-10#1773127800123"),
			withKeys("PIPELINE#orders", "JOB#daily#2026-03-10#1773127800123", map[string]types.AttributeValue{
				"event": s("fail"), "category": s("TRANSIENT"), "message": s("executor lost"), "runId": s("jr-1")}),
			JobReport{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-10", Event: "fail", Category: "TRANSIENT",
				Message: "executor lost", RunID: "jr-1", At: time.UnixMilli(1773127800123).UTC(), ID: "JOB#daily#2026-03-10#1773127800123"}},
		{"JobReportRemoved", RoleJobLog, keys("PIPELINE#orders", "JOB#daily#2026-03-10#1"), nil, Ignored{PK: "PIPELINE#orders", SK: "JOB#daily#2026-03-10#1"}},
		{"SensorState", RoleControl, keys("PIPELINE#orders", "SENSORSTATE#k"), withKeys("PIPELINE#orders", "SENSORSTATE#k", nil), Ignored{PK: "PIPELINE#orders", SK: "SENSORSTATE#k"}},
		{"Run", RoleControl, keys("PIPELINE#orders", "TRIGGER#daily#2026-03-10"), withKeys("PIPELINE#orders", "TRIGGER#daily#2026-03-10", nil), Ignored{PK: "PIPELINE#orders", SK: "TRIGGER#daily#2026-03-10"}},
		{"Timer", RoleControl, keys("TIMER#step/orders/daily/2026-03-10", "TIMER"), timerImage.it,
			TimerItem{Timer: timer}},
		{"TimerRemoved", RoleControl, keys("TIMER#step/orders/daily/2026-03-10", "TIMER"), nil,
			TimerItem{Timer: store.Timer{Key: "step/orders/daily/2026-03-10"}, Removed: true}},
		{"Calendar", RoleControl, keys("CALENDARS", "CALENDAR#holidays"), withKeys("CALENDARS", "CALENDAR#holidays", nil), Ignored{PK: "CALENDARS", SK: "CALENDAR#holidays"}},
		{"AlertConfig", RoleControl, keys("PROJECT", "ALERTS"), alertConfigItem(AlertConfig{Version: 2, YAML: "alerts: []\n"}).it, AlertConfigItem{}},
		{"Event", RoleEvents, keys("EV#3", eventSK(12)), evImage, EventItem{Event: ev, External: true}},
		{"Counter", RoleEvents, keys("EVSHARD#3", "COUNTER"), withKeys("EVSHARD#3", "COUNTER", map[string]types.AttributeValue{"seq": n("12")}), Ignored{PK: "EVSHARD#3", SK: "COUNTER"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode(c.role, c.keys, c.image)
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := got.(EventItem); ok {
				w := c.want.(EventItem)
				if !e.Event.Detail.Equal(w.Event.Detail) || e.External != w.External {
					t.Fatalf("event %#v, want %#v", e, w)
				}
				e.Event.Detail, w.Event.Detail = sensor.Object{}, sensor.Object{}
				if !reflect.DeepEqual(e.Event, w.Event) {
					t.Fatalf("event %#v, want %#v", e.Event, w.Event)
				}
				return
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Decode = %#v, want %#v", got, c.want)
			}
		})
	}
	t.Run("RerunRequestWithoutIDIsNamedByItsContent", func(t *testing.T) {
		k := keys("PIPELINE#orders", "RERUN_REQUEST#daily#2026-03-10")
		a, _ := Decode(RoleControl, k, withKeys("PIPELINE#orders", "RERUN_REQUEST#daily#2026-03-10", map[string]types.AttributeValue{"reason": s("a")}))
		again, _ := Decode(RoleControl, k, withKeys("PIPELINE#orders", "RERUN_REQUEST#daily#2026-03-10", map[string]types.AttributeValue{"reason": s("a")}))
		b, _ := Decode(RoleControl, k, withKeys("PIPELINE#orders", "RERUN_REQUEST#daily#2026-03-10", map[string]types.AttributeValue{"reason": s("b")}))
		if a.(RerunRequest).ID == "" || a.(RerunRequest).ID != again.(RerunRequest).ID || a.(RerunRequest).ID == b.(RerunRequest).ID {
			t.Fatalf("ids %q %q %q: want one per content", a.(RerunRequest).ID, again.(RerunRequest).ID, b.(RerunRequest).ID)
		}
	})
}

// lambdaRecord is a stream record as Lambda delivers it (JSON).
func lambdaRecord(t testing.TB, js string) events.DynamoDBEventRecord {
	t.Helper()
	var rec events.DynamoDBEventRecord
	if err := json.Unmarshal([]byte(js), &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestDecodeLambda(t *testing.T) {
	rec := lambdaRecord(t, `{"eventName":"INSERT","eventSourceARN":"arn:aws:dynamodb:us-east-1:123:table/prod-control/stream/2026",
		"dynamodb":{"Keys":{"PK":{"S":"PIPELINE#orders"},"SK":{"S":"SENSOR#count"}},
		"NewImage":{"PK":{"S":"PIPELINE#orders"},"SK":{"S":"SENSOR#count"},"data":{"M":{
			"n":{"N":"9007199254740993"},"f":{"N":"-0.5"},"s":{"S":"x"},"b":{"BOOL":false},"z":{"NULL":true},
			"l":{"L":[{"N":"1"},{"SS":["q","p"]}]},"ns":{"NS":["3","1"]},"bin":{"B":"AAE="},"bs":{"BS":["AQ==","AA=="]}}}}}}`)
	role, ok := RoleOf(TablesFor("prod"), rec.EventSourceArn)
	if !ok || role != RoleControl {
		t.Fatalf("RoleOf = %v, %v", role, ok)
	}
	got, err := DecodeLambda(role, rec)
	if err != nil {
		t.Fatal(err)
	}
	want := mustParseBody(t, `{"n": 9007199254740993, "f": -0.5, "s": "x", "b": false, "z": null, "l": [1, ["p", "q"]], "ns": [1, 3],
		"bin": "AAE=", "bs": ["AA==", "AQ=="]}`)
	if si := got.(SensorItem); !si.Data.Equal(want) || si.Key != "count" {
		t.Fatalf("DecodeLambda = %#v\ndata %s\nwant %s", got, jsonOf(si.Data), jsonOf(want))
	}

	removed := lambdaRecord(t, `{"eventName":"REMOVE","dynamodb":{"Keys":{"PK":{"S":"PIPELINE#orders"},"SK":{"S":"SENSOR#count"}},
		"OldImage":{"PK":{"S":"PIPELINE#orders"},"SK":{"S":"SENSOR#count"},"n":{"N":"1"}}}}`)
	if got, err := DecodeLambda(RoleControl, removed); err != nil || !got.(SensorItem).Removed || got.(SensorItem).Expired {
		t.Fatalf("REMOVE: %#v, %v", got, err)
	}
	// The same REMOVE by the table's TTL says so; a person's does not.
	expired := lambdaRecord(t, `{"eventName":"REMOVE","userIdentity":{"type":"Service","principalId":"dynamodb.amazonaws.com"},
		"dynamodb":{"Keys":{"PK":{"S":"PIPELINE#orders"},"SK":{"S":"SENSOR#count#2026-03-10"}}}}`)
	if got, err := DecodeLambda(RoleControl, expired); err != nil || !got.(SensorItem).Removed || !got.(SensorItem).Expired {
		t.Fatalf("REMOVE by the TTL: %#v, %v", got, err)
	}
	byUser := lambdaRecord(t, `{"eventName":"REMOVE","userIdentity":{"type":"Service","principalId":"lambda.amazonaws.com"},
		"dynamodb":{"Keys":{"PK":{"S":"PIPELINE#orders"},"SK":{"S":"SENSOR#count#2026-03-10"}}}}`)
	if got, err := DecodeLambda(RoleControl, byUser); err != nil || got.(SensorItem).Expired {
		t.Fatalf("REMOVE by another service: %#v, %v", got, err)
	}

	// A hand-built record with a zero attribute value (no JSON behind it)
	// is malformed, not a crash.
	bad := events.DynamoDBEventRecord{EventName: "INSERT"}
	bad.Change.Keys = map[string]events.DynamoDBAttributeValue{"PK": events.NewStringAttribute("PIPELINE#p"), "SK": events.NewStringAttribute("SENSOR#k")}
	bad.Change.NewImage = map[string]events.DynamoDBAttributeValue{"x": {}}
	var ie *ItemError
	if _, err := DecodeLambda(RoleControl, bad); !errors.As(err, &ie) || ie.SK != "SENSOR#k" {
		t.Fatalf("zero attribute: %v, want an *ItemError naming SENSOR#k", err)
	}
}

func TestRoleOf(t *testing.T) {
	tb := TablesFor("prod")
	for arn, want := range map[string]Role{
		"arn:aws:dynamodb:us-east-1:123:table/prod-control/stream/2026-03-10T00:00:00.000": RoleControl,
		"arn:aws:dynamodb:ddblocal:000000000000:table/prod-joblog/stream/x":                RoleJobLog,
		"arn:aws:dynamodb:eu-west-1:123:table/prod-events/stream/x":                        RoleEvents,
		"arn:aws:dynamodb:eu-west-1:123:table/prod-rerun/stream/x":                         0,
		"arn:aws:dynamodb:eu-west-1:123:table/other-control/stream/x":                      0,
		"arn:aws:dynamodb:eu-west-1:123:table/prod-control":                                0,
		"": 0,
	} {
		got, ok := RoleOf(tb, arn)
		if got != want || ok != (want != 0) {
			t.Errorf("RoleOf(%q) = %v, %v; want %v", arn, got, ok, want)
		}
	}
}

func TestParseURL(t *testing.T) {
	prefix, region, endpoint, err := ParseURL("dynamodb://prod-interlock?region=eu-west-1&endpoint=http://127.0.0.1:8000")
	if err != nil || prefix != "prod-interlock" || region != "eu-west-1" || endpoint != "http://127.0.0.1:8000" {
		t.Fatalf("ParseURL = %q %q %q %v", prefix, region, endpoint, err)
	}
	if p, r, e, err := ParseURL("dynamodb://prod"); err != nil || p != "prod" || r != "" || e != "" {
		t.Fatalf("ParseURL(dynamodb://prod) = %q %q %q %v", p, r, e, err)
	}
	for _, bad := range []string{"", "prod", "sqlite://x", "dynamodb://", "dynamodb://a b", "dynamodb://p/x", "dynamodb://p?zone=1",
		"dynamodb://p?region=a&region=b", "dynamodb://p?endpoint=localhost:8000", "dynamodb://u@p", "dynamodb://p:80"} {
		if _, _, _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q): want an error", bad)
		}
	}
}

func jsonOf(o sensor.Object) string {
	b, _ := o.MarshalJSON()
	return string(b)
}

func TestItemName(t *testing.T) {
	cases := []struct {
		r    Record
		want string
	}{
		{SensorItem{PipelineID: "orders", Key: "landed"}, "PIPELINE#orders / SENSOR#landed"},
		{RerunRequest{PipelineID: "orders", ScheduleID: "stream", Period: "2026-03-10"}, "PIPELINE#orders / RERUN_REQUEST#stream#2026-03-10"},
		{JobReport{PipelineID: "orders", ScheduleID: "stream", Period: "2026-03-10", At: time.UnixMilli(1773129600000)}, "PIPELINE#orders / JOB#stream#2026-03-10#1773129600000"},
		{ConfigItem{PipelineID: "orders"}, "PIPELINE#orders / CONFIG"},
		{EventItem{}, ""},
	}
	for _, c := range cases {
		if got := ItemName(c.r); got != c.want {
			t.Errorf("ItemName(%#v) = %q, want %q", c.r, got, c.want)
		}
	}
}
