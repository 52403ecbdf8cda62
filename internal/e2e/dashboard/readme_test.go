package dashboard_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/testenv/browser"
	"github.com/interlockhq/interlock/internal/testenv/serveproc"
)

// readmeProject is the project of the README's picture: pipelines as a
// data team names them, their owners, a few days of history (one failed
// day among them), and today one late and one failed. %[1]s is the time
// zone, %[2]s the late pipeline's SLA deadline, %[3]s the failed day,
// %[4]s today, %[5]s an SLA deadline three hours ahead.
var readmeProject = map[string]string{
	"raw-orders": `pipeline: {id: raw-orders, owner: ingest, description: "Orders landed from the shop database (CDC export)"}
schedule: {timezone: %[1]s, trigger: {key: orders-export, check: exists}}
job: {type: command, config: {command: ["true"]}}
`,
	"raw-clickstream": `pipeline: {id: raw-clickstream, owner: ingest, description: "Web and app events from the collector"}
schedule: {timezone: %[1]s, trigger: {key: events-landed, check: exists}}
job: {type: command, config: {command: ["true"]}}
`,
	"silver-sessions": `pipeline: {id: silver-sessions, owner: data-eng, description: "Sessionised clickstream"}
schedule: {timezone: %[1]s, trigger: {key: events-compacted, check: exists}}
job:
  type: command
  config: {command: ["/bin/sh", "-c", "test \"$0\" != %[3]s || { echo 'compaction left 3 partial files' >&2; exit 2; }", "${DATE}"]}
  maxCodeRetries: 0
`,
	"gold-revenue": `pipeline: {id: gold-revenue, owner: finance-analytics, description: "Daily revenue by market, for the finance dashboard"}
schedule: {timezone: %[1]s, trigger: {key: orders-reconciled, check: exists}}
sla: {deadline: "%[2]s"}
job: {type: command, config: {command: ["true"]}}
`,
	"marketing-attribution": `pipeline: {id: marketing-attribution, owner: marketing-analytics, description: "Multi-touch attribution of yesterday's conversions"}
schedule: {timezone: %[1]s, trigger: {key: sessions-ready, check: exists}}
job:
  type: command
  config: {command: ["/bin/sh", "-c", "test \"$0\" != %[4]s || { echo 'spend table missing for 2 channels' >&2; exit 3; }", "${DATE}"]}
  maxCodeRetries: 0
`,
	"ledger-export": `pipeline: {id: ledger-export, owner: finance, description: "General ledger export to the ERP"}
schedule: {timezone: %[1]s, trigger: {key: ledger-closed, check: exists}}
job:
  type: command
  config: {command: ["/bin/sh", "-c", "test \"$0\" != %[4]s || exec sleep 600", "${DATE}"], timeout: 20m}
`,
	"fx-rates": `pipeline: {id: fx-rates, owner: treasury, description: "ECB reference rates"}
schedule: {timezone: %[1]s, trigger: {key: rates-published, check: exists}}
sla: {deadline: "%[5]s"}
job: {type: command, config: {command: ["true"]}}
`,
	"inventory-snapshot": `pipeline: {id: inventory-snapshot, owner: supply-chain, description: "End-of-day stock per warehouse"}
schedule: {timezone: %[1]s, trigger: {key: wms-dump, check: exists}}
job: {type: command, config: {command: ["true"]}}
`,
}

// TestReadmePicture takes the README's picture of the overview
// (overview.png, written to docs/screenshots by make screenshots) from a
// project that reads like a real one, at 1400 px, where nothing of a row
// wraps; and checks the states it shows. It runs beside TestDashboard:
// both wait for an SLA instant.
func TestReadmePicture(t *testing.T) {
	t.Parallel()
	b := browser.New(t)
	dir := t.TempDir()
	zone, loc := noonZone(time.Now())
	now := time.Now().In(loc)
	slaAt := now.Add(10 * time.Second).Truncate(time.Minute).Add(time.Minute)
	today := now.Format("2006-01-02")
	day := func(n int) string { return now.AddDate(0, 0, n).Format("2006-01-02") }
	write(t, dir, "interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\nserver:\n  addr: 127.0.0.1:0\n")
	for id, doc := range readmeProject {
		write(t, dir, "pipelines/"+id+".yaml", fmt.Sprintf(doc, zone, slaAt.Format("15:04"), day(-2), today, slaAt.Add(3*time.Hour).Format("15:04")))
	}
	f := &fixture{srv: serveproc.Start(t, binary, dir, nil), zone: zone, period: today, slaAt: slaAt}
	t.Cleanup(func() { f.srv.Kill(t) }) // ledger-export's command is in its call

	// Four days of history: a backfill of each pipeline (silver-sessions
	// fails the day before yesterday), then today's data.
	for id := range readmeProject {
		f.call(t, "POST", "/v1/pipelines/"+id+"/backfills", fmt.Sprintf(`{"from": %q, "to": %q, "maxActive": 4}`, day(-4), day(-1)), 201)
	}
	for id, key := range map[string]string{"raw-orders": "orders-export", "raw-clickstream": "events-landed", "silver-sessions": "events-compacted",
		"marketing-attribution": "sessions-ready", "ledger-export": "ledger-closed", "inventory-snapshot": "wms-dump"} {
		f.sensor(t, id, key, `{"rows": 1}`)
	}
	for id, state := range map[string]string{"raw-orders": "COMPLETED", "marketing-attribution": "FAILED_FINAL", "ledger-export": "TRIGGERING", "inventory-snapshot": "COMPLETED"} {
		f.waitRun(t, id, state)
	}
	for id := range readmeProject {
		eventually(t, id+"'s backfill to end", func() bool {
			return strings.Contains(f.call(t, "GET", "/v1/pipelines/"+id+"/backfills/1", "", 200), `"state":"completed"`)
		})
	}
	if wait := time.Until(slaAt.Add(time.Second)); wait > 0 {
		time.Sleep(wait) // gold-revenue's SLA instant: it is late from then on
	}

	b.Viewport(1400, 900)
	b.Open(f.srv.URL + "/")
	want := map[string]string{"gold-revenue": "breached", "marketing-attribution": "failed", "ledger-export": "running",
		"fx-rates": "waiting", "raw-orders": "succeeded", "silver-sessions": "succeeded"}
	got := rowStates(b)
	for id, s := range want {
		if got[id] != s {
			t.Errorf("%s is %q, want %q", id, got[id], s)
		}
	}
	if cells := browser.Eval[string](b, `Array.from(document.querySelectorAll('#row-silver-sessions .cell')).slice(-5).map(c => c.dataset.state).join(' ')`); cells != "succeeded succeeded failed succeeded succeeded" {
		t.Errorf("silver-sessions' last five days read %q", cells)
	}
	if wrapped := browser.Eval[[]string](b, wrappedJS(`#board .c-id > a, #board .c-period, #board .c-owner, #board time, #board .since, #board .last-success, #board .deadline`)); len(wrapped) > 0 {
		t.Errorf("wrapped at 1400 px: %v", wrapped)
	}
	b.Screenshot("overview")
}
