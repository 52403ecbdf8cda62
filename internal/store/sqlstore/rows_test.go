package sqlstore

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// TestTimerArgsRefusesNoDueTime: a timer with no due time would never
// fire, or fire at once, depending on how the zero time is read; both SQL
// stores refuse it through TimerArgs, naming the backend and the timer.
func TestTimerArgsRefusesNoDueTime(t *testing.T) {
	d := &Dialect{Name: "sqlite"}
	for _, w := range []store.TimerWrite{
		{Timer: store.Timer{Key: "sla/orders", Run: run.Key{PipelineID: "orders"}}},
		{Timer: store.Timer{Key: "sla/orders"}, ExpectDueAt: new(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))},
	} {
		e := Encoder{D: d}
		TimerArgs(&e, w)
		if e.Err == nil || !strings.Contains(e.Err.Error(), "sqlite: write timer sla/orders: no due time") {
			t.Errorf("expect %v: error %v, want sqlite: write timer sla/orders: no due time", w.ExpectDueAt, e.Err)
		}
	}
	e := Encoder{D: d}
	if TimerArgs(&e, store.TimerWrite{Timer: store.Timer{Key: "k", DueAt: time.Unix(1, 0)}}); e.Err != nil {
		t.Errorf("a timer with a due time: %v", e.Err)
	}
}
