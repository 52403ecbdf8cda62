package dynamodb

import (
	"fmt"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// BenchmarkCommit is a sensor decision's commit on DynamoDB Local: the
// sensor write (compare-and-swap), a run, an event and a timer in one
// TransactWriteItems.
func BenchmarkCommit(b *testing.B) {
	st := newStore(b)
	ctx := b.Context()
	data := sensor.NewObject(map[string]sensor.Value{"count": sensor.IntValue(1), "status": sensor.StringValue("ready")})
	b.ResetTimer()
	for i := range b.N {
		p := fmt.Sprintf("p%d", i%50)
		k := run.Key{PipelineID: p, ScheduleID: "daily", Period: fmt.Sprintf("2030-%02d-%02d", 1+i/50%12, 1+i/600%28)}
		err := st.Commit(ctx, store.Change{
			Sensors: []store.SensorWrite{{Sensor: store.Sensor{PipelineID: p, Key: fmt.Sprint("k", i), Data: data, ChangedAt: t2030, WrittenAt: t2030}}},
			Runs:    []store.RunWrite{{Run: newRunAt(k)}},
			Events:  []event.Event{{ID: fmt.Sprint("e", i), Type: event.ValidationPassed, PipelineID: p, Time: t2030}},
			Timers:  []store.TimerWrite{{Timer: store.Timer{Key: fmt.Sprint("t", i), Kind: "evaluate", Run: k, DueAt: t2030.Add(time.Minute)}}},
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSensorGetMany is a decision's sensor read: a rule key and its
// two per-period spellings, for 3 rules (9 keys, 6 of them stored), one
// BatchGetItem.
func BenchmarkSensorGetMany(b *testing.B) {
	st := newStore(b)
	ctx := b.Context()
	var keys []string
	var c store.Change
	for r := range 3 {
		for j, k := range []string{fmt.Sprint("rule", r), fmt.Sprintf("rule%d#2030-03-10", r), fmt.Sprintf("rule%d#20300310", r)} {
			keys = append(keys, k)
			if j < 2 {
				c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: "orders", Key: k,
					Data: sensor.NewObject(map[string]sensor.Value{"n": sensor.IntValue(int64(r))}), ChangedAt: t2030}})
			}
		}
	}
	if err := st.Commit(ctx, c); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		got, err := st.SensorGetMany(ctx, store.SensorGetManyParams{PipelineID: "orders", Keys: keys})
		if err != nil || len(got) != 6 {
			b.Fatalf("%d sensors, %v", len(got), err)
		}
	}
}
