package console_test

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/alert/alerttest"
	"github.com/interlockhq/interlock/internal/alert/console"
)

// writer is a console: it can break.
type writer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	broken bool
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return 0, errors.New("write /dev/stdout: broken pipe")
	}
	return w.buf.Write(p)
}

func (w *writer) lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Split(strings.TrimSuffix(w.buf.String(), "\n"), "\n")
}

func TestContract(t *testing.T) {
	alerttest.Run(t, func(t *testing.T) *alerttest.Harness {
		w := &writer{}
		// The message is the last field; the samples' ids are not printed,
		// so recognise lines by the sample they render.
		byLine := map[string]string{}
		for _, e := range alerttest.Events() {
			byLine[strings.TrimSuffix(console.Line(alerttest.Alert(console.New(nil), e)), "\n")] = e.ID
		}
		return &alerttest.Harness{
			Sink: console.New(w),
			Set:  func(m alerttest.Mode) { w.broken = m != alerttest.OK },
			Received: func() []string {
				var ids []string
				for _, l := range w.lines() {
					if id, ok := byLine[l]; ok {
						ids = append(ids, id)
					}
				}
				return ids
			},
			Supports: func(m alerttest.Mode) bool { return m == alerttest.OK || m == alerttest.Rejected },
		}
	})
}

func TestLine(t *testing.T) {
	es := alerttest.Events()
	want := []string{
		"ERROR orders 2026-03-07 SLA_BREACH pipeline orders: SLA_BREACH",
		"WARNING orders 2026-03-07 SLA_WARNING pipeline orders: SLA_WARNING",
		"ERROR gold.daily-v2 2026-03-07T05 SCHEDULE_MISSED missed schedule for gold.daily-v2 on 2026-03-07T05",
		"INFO orders 2026-03-07 SLA_MET pipeline orders: SLA_MET",
		`ERROR orders - CONFIG_INVALID orders.yaml refused (1 error(s)); <!channel> & "quotes" second line`,
		"ERROR - - WATCHDOG_DEGRADED watchdog checks failed: missed-schedules",
	}
	w := &writer{}
	s := console.New(w)
	for _, e := range es[:len(want)] {
		if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
			t.Fatal(err)
		}
	}
	got := w.lines()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q\nwant      %q", i, got[i], want[i])
		}
	}
	e := es[1]
	e.Message = "evil\x1b[2Jclear\r\nnext"
	if got := console.Line(alerttest.Alert(s, e)); got != "WARNING orders 2026-03-07 SLA_WARNING evil[2Jclear next\n" {
		t.Errorf("control characters kept: %q", got)
	}
}
