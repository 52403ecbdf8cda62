package awsrt

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

// TestNamesStayTheSame pins the names and ids derived from hashes: a
// deployed system holds Scheduler schedules, execution names, stored
// rejection fingerprints and bus event ids made by an earlier version, so
// a change in how any of them is derived would orphan a schedule, start a
// second execution for one step or store an event twice.
func TestNamesStayTheSame(t *testing.T) {
	detail, err := sensor.ParseBody([]byte(`{"b": 2, "a": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	key := run.Key{PipelineID: "gold/sales", ScheduleID: "cron", Period: "2026-03-10"}
	at := time.Date(2026, 3, 10, 6, 0, 0, 0, time.UTC)
	for _, c := range []struct{ what, got, want string }{
		{"ScheduleName", ScheduleName("sla-breach/gold sales/cron/2026-03-10T06"), "sla-breach.gold.sales.cron.2026-03-10T06-41a568cf1d9f6f7e"},
		{"ScheduleName, long", ScheduleName(strings.Repeat("k", 80)), "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk-66edbde83cc90c1a"},
		{"executionName", executionName(key, 2, at, viaTimer), "gold_sales-cron-2026-03-10-g2-6adc7e4527949b7c"},
		{"executionName, continued", executionName(key, 2, at, viaContinue), "gold_sales-cron-2026-03-10-g2-e6d9333442d53187"},
		{"executionName, long", executionName(run.Key{PipelineID: strings.Repeat("p", 90), ScheduleID: "s", Period: "d"}, 1, at, viaTimer), "ppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp-517371251b59b893"},
		{"fingerprint", fingerprint(detail), "768ca668c0f84dd39bf269e2"},
		{"contentID", contentID(BusEvent{Source: "s", DetailType: "d", Time: "2026-03-10T06:00:00Z"}, detail), "ext-7f85be70960618ce4023386d439bc1a3"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
}
