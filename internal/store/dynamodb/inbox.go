package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// Writes anyone makes: the items a person's own PutItem would make, so
// Interlock's own tools (interlock sensor put against AWS, tests) write
// exactly what the docs tell users to write (docs/aws.md, "How to write
// sensors").

// PutSensorItem writes a sensor inbox item: PIPELINE#<id> / SENSOR#<key>,
// the data under `data` as a map of native values. A per-period key also
// gets the period's ttl, as docs/aws.md advises writers (the store's own
// sensor state expires anyway).
func (s *Store) PutSensorItem(ctx context.Context, pipelineID, key string, data sensor.Object) error {
	if key == "" {
		return errors.New("dynamodb: put sensor item: empty key")
	}
	w := newItem(pipelinePK(pipelineID), skSensorPrefix+key)
	w.it[aData] = &types.AttributeValueMemberM{Value: objectToNative(data)}
	if _, p, ok := schedule.SplitPeriodKey(key); ok {
		s.setPeriodTTL(w, p.String(), time.Time{})
	}
	return s.putItem(ctx, s.t.Control, "sensor item "+pipelineID+"/"+key, w)
}

// SensorItemGet reads a sensor inbox item, strongly consistent, and decodes
// it as Decode does; store.ErrNotFound when there is none, an *ItemError
// when it cannot be a sensor.
func (s *Store) SensorItemGet(ctx context.Context, pipelineID, key string) (sensor.Object, error) {
	it, err := s.get(ctx, s.t.Control, pipelinePK(pipelineID), skSensorPrefix+key)
	if err != nil {
		return sensor.Object{}, err
	}
	return decodeInbox(pipelineID, key, it)
}

// decodeInbox decodes a sensor inbox item as Decode does.
func decodeInbox(pipelineID, key string, it item) (sensor.Object, error) {
	rec, err := Decode(RoleControl, keyOf(pipelinePK(pipelineID), skSensorPrefix+key), it)
	if err != nil {
		return sensor.Object{}, err
	}
	si, ok := rec.(SensorItem)
	if !ok {
		return sensor.Object{}, fmt.Errorf("dynamodb: %s/%s is not a sensor item", pipelinePK(pipelineID), skSensorPrefix+key)
	}
	return si.Data, nil
}

// PutRerunRequest writes PIPELINE#<id> / RERUN_REQUEST#<schedule>#<period>
// with its reason (and requestId when r.ID is set), ttl of the period.
func (s *Store) PutRerunRequest(ctx context.Context, r RerunRequest) error {
	if r.ScheduleID == "" || r.Period == "" {
		return errors.New("dynamodb: put rerun request: schedule and period are required")
	}
	w := newItem(pipelinePK(r.PipelineID), rerunRequestSK(r.ScheduleID, r.Period))
	w.str("reason", r.Reason)
	w.str("requestId", r.ID)
	s.setPeriodTTL(w, r.Period, time.Time{})
	return s.putItem(ctx, s.t.Control, "rerun request "+r.PipelineID+"/"+r.ScheduleID+"/"+r.Period, w)
}

// PutJobReport writes a job-log item: PIPELINE#<id> /
// JOB#<schedule>#<period>#<At in epoch millis> with event, category,
// message and runId, ttl of the period.
func (s *Store) PutJobReport(ctx context.Context, r JobReport) error {
	if r.ScheduleID == "" || r.Period == "" || r.At.IsZero() {
		return errors.New("dynamodb: put job report: schedule, period and time are required")
	}
	w := newItem(pipelinePK(r.PipelineID), jobSK(r.ScheduleID, r.Period, r.At))
	w.str("event", r.Event)
	w.str("category", r.Category)
	w.str("message", r.Message)
	w.str("runId", r.RunID)
	s.setPeriodTTL(w, r.Period, r.At)
	return s.putItem(ctx, s.t.JobLog, "job report "+r.PipelineID+"/"+r.ScheduleID+"/"+r.Period, w)
}

func (s *Store) putItem(ctx context.Context, table, what string, w *itemWriter) error {
	if w.err != nil {
		return fmt.Errorf("dynamodb: %s: %w", what, w.err)
	}
	if _, err := s.c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: w.it}); err != nil {
		return wrapErr("put "+what, table, err)
	}
	return nil
}

// AppendExternal appends events from outside Interlock (the event sink) to
// the log, each marked external so the outbox does not publish it again,
// each once: an event whose ID was appended before stores nothing and is
// not an error. Each event is its own transaction — its id record
// EVID#<id> (if absent), its place in its shard and the shard's counter —
// so a batch half done by a crash is completed by its redelivery.
func (s *Store) AppendExternal(ctx context.Context, evs []event.Event) error {
	for _, e := range evs {
		if e.ID == "" {
			return fmt.Errorf("dynamodb: append external event of type %s at %s: the event has no id", e.Type, e.Time)
		}
		w := newItem(pkEventIDPrefix+e.ID, skEventID)
		w.str("id", e.ID)
		s.setTimeTTL(w, e.Time)
		a, err := put(s.t.Events, "external event id "+e.ID, w, condAbsent, nil)
		if err != nil {
			return err
		}
		a.dedup = true
		err = s.appendEvents(ctx, []action{a}, []event.Event{e}, true)
		if errors.Is(err, errDuplicate) {
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// errDuplicate: a dedup action's condition failed (the record it guards
// exists): the transaction was for something done before.
var errDuplicate = fmt.Errorf("%w: already stored", store.ErrConflict)
