package awsrt

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
)

// busJSON is e as a target receives it after the outbox put it on the bus.
func busJSON(t *testing.T, e event.Event) []byte {
	t.Helper()
	entry, err := entryOf(e, testBus)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{
		"version": "0", "id": "eb-assigned-id", "detail-type": aws.ToString(entry.DetailType), "source": aws.ToString(entry.Source),
		"account": "123456789012", "time": e.Time.UTC().Format(time.RFC3339), "region": "us-east-1", "resources": []string{},
		"detail": json.RawMessage(aws.ToString(entry.Detail)),
	})
	return b
}

func TestAnEventRoundTripsThroughTheBus(t *testing.T) {
	for _, e := range slaEvents() {
		be, err := ParseBusEvent(busJSON(t, e))
		if err != nil {
			t.Fatal(err)
		}
		got, origin, err := be.Event(t0.Add(99 * time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if origin != FromOutbox || got.ID != e.ID || !got.Time.Equal(e.Time) || got.Type != e.Type || got.PipelineID != e.PipelineID ||
			got.ScheduleID != e.ScheduleID || got.Date != e.Date || got.Message != e.Message || !got.Detail.Equal(e.Detail) {
			t.Fatalf("round trip:\nsent %+v\ngot  %+v (origin %d)", e, got, origin)
		}
	}
	// The seed's shape, with the event id, on the bus.
	entry, _ := entryOf(slaEvents()[0], testBus)
	var d map[string]json.RawMessage
	if err := json.Unmarshal([]byte(aws.ToString(entry.Detail)), &d); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"eventId", "pipelineId", "scheduleId", "date", "message", "timestamp", "level", "detail"} {
		if _, ok := d[k]; !ok {
			t.Errorf("detail has no %s: %s", k, aws.ToString(entry.Detail))
		}
	}
	if aws.ToString(entry.Source) != "interlock" || aws.ToString(entry.DetailType) != "SLA_WARNING" || aws.ToString(entry.EventBusName) != testBus {
		t.Fatalf("entry %+v", entry)
	}
}

func TestExternalEventsBecomeEvents(t *testing.T) {
	now := t0.Add(5 * time.Hour)
	cases := []struct {
		name, body string
		want       event.Event
	}{{
		name: "INFRA_ALARM from the input transformer",
		body: `{"id":"alarm-1","source":"interlock","detail-type":"INFRA_ALARM","time":"2099-03-07T07:00:00Z",
			"detail":{"pipelineId":"INFRASTRUCTURE","message":"prod-interlock-dlq: ALARM — 1 message"}}`,
		want: event.Event{ID: "alarm-1", Type: event.InfraAlarm, PipelineID: "INFRASTRUCTURE", Message: "prod-interlock-dlq: ALARM — 1 message", Time: t0.Add(time.Hour)},
	}, {
		name: "a raw CloudWatch alarm state change",
		body: `{"version":"0","id":"cw-1","source":"aws.cloudwatch","detail-type":"CloudWatch Alarm State Change","time":"2099-03-07T07:30:00Z",
			"detail":{"alarmName":"prod-interlock-errors","state":{"value":"ALARM","reason":"Threshold Crossed"},"previousState":{"value":"OK"}}}`,
		want: event.Event{ID: "cw-1", Type: event.InfraAlarm, PipelineID: "INFRASTRUCTURE", Message: "prod-interlock-errors: ALARM — Threshold Crossed", Time: t0.Add(90 * time.Minute),
			Detail: sensor.NewObject(map[string]sensor.Value{"source": sensor.StringValue("cloudwatch"), "status": sensor.StringValue("ALARM"), "alarm": sensor.StringValue("prod-interlock-errors")})},
	}, {
		name: "another source, no time",
		body: `{"id":"glue-1","source":"aws.glue","detail-type":"Glue Job State Change","detail":{"jobName":"x","pipelineId":"orders","message":7}}`,
		want: event.Event{ID: "glue-1", Type: "Glue Job State Change", PipelineID: "orders", Time: now,
			Detail: sensor.NewObject(map[string]sensor.Value{"jobName": sensor.StringValue("x"), "pipelineId": sensor.StringValue("orders"), "message": sensor.IntValue(7)})},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be, err := ParseBusEvent([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got, origin, err := be.Event(now)
			if err != nil {
				t.Fatal(err)
			}
			w := c.want
			if origin != External || got.ID != w.ID || got.Type != w.Type || got.PipelineID != w.PipelineID || got.Message != w.Message ||
				!got.Time.Equal(w.Time) || !got.Detail.Equal(w.Detail) {
				t.Fatalf("got %+v (origin %d)\nwant %+v", got, origin, w)
			}
		})
	}
}

func TestAnExternalEventWithoutAnIDGetsOneFromItsContent(t *testing.T) {
	a := `{"source":"interlock","detail-type":"INFRA_ALARM","time":"2099-03-07T07:00:00Z","detail":{"pipelineId":"INFRASTRUCTURE","message":"m"}}`
	b := `{ "detail": {"message":"m", "pipelineId":"INFRASTRUCTURE"}, "time":"2099-03-07T07:00:00Z", "detail-type":"INFRA_ALARM", "source":"interlock" }`
	c := strings.Replace(a, `"message":"m"`, `"message":"n"`, 1)
	id := func(s string) string {
		be, err := ParseBusEvent([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		e, _, err := be.Event(t0)
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	if id(a) != id(b) || id(a) == id(c) || !strings.HasPrefix(id(a), "ext-") {
		t.Fatalf("ids %s %s %s", id(a), id(b), id(c))
	}
}

func TestABusEventThatCannotBeReadIsNamed(t *testing.T) {
	cases := map[string]string{
		``:                                 "invalid JSON",
		`[1]`:                              "not a JSON object",
		`{"detail-type":"X","detail":{}}`:  "source is missing",
		`{"source":"s","detail":{}}`:       "detail-type is missing",
		`{"source":"s","detail-type":"X"}`: "detail is missing",
		`{"source":"s","detail-type":"X","detail":"str"}`:                        "detail is not a JSON object",
		`{"source":"s","detail-type":"X","detail":{},"time":"yesterday"}`:        `time "yesterday"`,
		`{"source":"s","source":"t","detail-type":"X","detail":{}}`:              "source",
		`{"source":"interlock","detail-type":"X","detail":{"timestamp":"noon"}}`: "detail.timestamp",
		`{"source":"interlock","detail-type":"X","detail":{"detail":[1]}}`:       "detail.detail",
		`{"source":"interlock","detail-type":"X","detail":{"eventId":5}}`:        "detail of a interlock event",
	}
	for body, want := range cases {
		be, err := ParseBusEvent([]byte(body))
		if err == nil {
			_, _, err = be.Event(t0)
		}
		if err == nil || !errors.Is(err, ErrBadBusEvent) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want one naming %q", body, err, want)
		}
	}
}

func TestAnEventTooBigForTheBusGoesWithoutItsDetail(t *testing.T) {
	e := slaEvents()[0]
	e.Detail = sensor.NewObject(map[string]sensor.Value{"blob": sensor.StringValue(strings.Repeat("x", 300*1024))})
	e.Message = strings.Repeat("m", 10000)
	entry, err := entryOf(e, testBus)
	if err != nil {
		t.Fatal(err)
	}
	if n := entrySize(entry); n > MaxEntrySize {
		t.Fatalf("entry of %d bytes", n)
	}
	be, err := ParseBusEvent(busJSON(t, e))
	if err != nil {
		t.Fatal(err)
	}
	got, origin, err := be.Event(t0)
	if err != nil || origin != FromOutbox || got.ID != e.ID || got.Detail.Len() != 0 || len(got.Message) > 4096+8 ||
		!strings.Contains(aws.ToString(entry.Detail), `"truncated":true`) {
		t.Fatalf("got %+v, %v", got, err)
	}
	// A small event is whole.
	small, _ := entryOf(slaEvents()[0], testBus)
	if strings.Contains(aws.ToString(small.Detail), "truncated") {
		t.Fatal("a small event was truncated")
	}
}

func FuzzBusEvent(f *testing.F) {
	for _, e := range slaEvents() {
		f.Add(busJSON(&testing.T{}, e))
	}
	f.Add([]byte(`{"id":"cw-1","source":"aws.cloudwatch","detail-type":"CloudWatch Alarm State Change","detail":{"state":{"value":1}}}`))
	f.Add([]byte(`{"source":"interlock","detail-type":"INFRA_ALARM","detail":{"detail":null,"timestamp":""}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		be, err := ParseBusEvent(b)
		if err != nil {
			if !errors.Is(err, ErrBadBusEvent) {
				t.Fatalf("error not wrapping ErrBadBusEvent: %v", err)
			}
			return
		}
		e, _, err := be.Event(t0)
		if err != nil {
			return
		}
		if e.ID == "" || e.Type == "" || e.Time.IsZero() {
			t.Fatalf("an event without id, type or time: %+v", e)
		}
	})
}
