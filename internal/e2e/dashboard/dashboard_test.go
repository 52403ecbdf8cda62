package dashboard_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/interlockhq/interlock/internal/testenv/browser"
)

// rowStates reads the overview's rows: pipeline id → data-state.
func rowStates(b *browser.Browser) map[string]string {
	var rows map[string]string
	raw := browser.Eval[string](b, `JSON.stringify(Object.fromEntries(Array.from(document.querySelectorAll('tr[data-pipeline]'), r => [r.dataset.pipeline, r.dataset.state])))`)
	if err := json.Unmarshal([]byte(raw), &rows); err != nil {
		panic(err)
	}
	return rows
}

// linesJS is a JavaScript function counting the lines a range's boxes
// are drawn on (boxes of different font sizes on one line overlap).
const linesJS = `function lines(r) {
	const rs = Array.from(r.getClientRects()).filter(x => x.width > 0).sort((a, b) => a.top - b.top);
	let n = 0, bottom = -Infinity;
	for (const x of rs) { if (x.top >= bottom - 1) { n++; } bottom = Math.max(bottom, x.bottom); }
	return n;
}`

// wrappedJS lists the elements matching sel whose text runs over more
// than one line.
func wrappedJS(sel string) string {
	return `(() => { ` + linesJS + `
	return Array.from(document.querySelectorAll('` + sel + `')).filter(el => {
		if (!el.textContent.trim() || el.offsetParent === null) return false;
		const r = document.createRange(); r.selectNodeContents(el);
		return lines(r) > 1; }).map(el => (el.closest('tr') || {}).id + ' ' + el.className + ': ' + el.textContent.trim().slice(0, 40)); })()`
}

// brokenWordsJS lists the words of table cells drawn over two lines at a
// point between two letters or digits: a break inside a name or a number
// (free text may still break at its punctuation, as browsers do).
const brokenWordsJS = `(() => { ` + linesJS + `
	const out = [];
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, { acceptNode: n => n.parentElement.closest('td, th') && n.parentElement.offsetParent !== null ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT });
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		const re = /\S+/g; let m;
		while ((m = re.exec(n.data))) {
			const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
			if (lines(r) < 2) continue;
			// Where the line breaks: the first character on a lower line.
			let top = null, at = -1;
			for (let i = 0; i < m[0].length; i++) {
				const c = document.createRange(); c.setStart(n, m.index + i); c.setEnd(n, m.index + i + 1);
				const b = c.getBoundingClientRect();
				if (top === null) top = b.top; else if (b.top > top + 2) { at = i; break; }
			}
			const alnum = c => /[\p{L}\p{N}]/u.test(c || '');
			if (at > 0 && !(alnum(m[0][at - 1]) && alnum(m[0][at]))) continue;
			out.push(m[0] + ' (at ' + at + ')');
		}
	}
	return out.slice(0, 20);
})()`

// alerts are the alert dialogs the pages opened.
func alerts(b *browser.Browser) []browser.Dialog {
	var out []browser.Dialog
	for _, d := range b.Dialogs() {
		if d.Type != "confirm" {
			out = append(out, d)
		}
	}
	return out
}

// TestDashboard drives the dashboard of a serve without tokens (everyone
// is admin) in a real browser. The subtests share the fixture and run in
// order; the one that checks every state comes last, when the SLA
// instant has passed.
func TestDashboard(t *testing.T) {
	t.Parallel() // beside TestReadmePicture: both wait for an SLA instant
	b := browser.New(t)
	f := newFixture(t, false)

	t.Run("overview loads", func(t *testing.T) {
		b := b.For(t)
		b.Open(f.srv.URL + "/")
		if n := browser.Eval[int](b, `document.querySelectorAll('#board tr[data-pipeline]').length`); n != len(wantStates)+5 {
			t.Fatalf("the overview lists %d pipelines, want %d", n, len(wantStates)+5)
		}
		if role := browser.Eval[string](b, `document.body.dataset.role`); role != "admin" {
			t.Fatalf("without tokens the caller is %q, want admin", role)
		}
	})

	t.Run("rerun from the page", func(t *testing.T) {
		b := b.For(t)
		before := f.eventTypes(t, "rerun-me")["RERUN_ACCEPTED"]
		b.Open(f.srv.URL + "/ui/pipelines/rerun-me")
		b.Do(chromedp.SetValue(chromedp.ID("rerun-reason"), "browser test"))
		confirms := len(b.Dialogs())
		b.Do(chromedp.Click(chromedp.ID("action-rerun")))
		b.WaitFor("the rerun's answer", `['done', 'refused', 'error'].includes(document.getElementById('action-result').dataset.result)`)
		if r := browser.Eval[string](b, `document.getElementById('action-result').dataset.result + ': ' + document.getElementById('action-result').textContent`); !strings.HasPrefix(r, "done") {
			t.Fatalf("the rerun was not done: %s", r)
		}
		d := b.Dialogs()
		if len(d) != confirms+1 || d[len(d)-1].Type != "confirm" || !strings.Contains(d[len(d)-1].Message, "rerun-me") {
			t.Fatalf("the rerun asked %+v, want one confirmation naming the pipeline", d[confirms:])
		}
		eventually(t, "RERUN_ACCEPTED of rerun-me", func() bool { return f.eventTypes(t, "rerun-me")["RERUN_ACCEPTED"] == before+1 })
		// The result follows the rerun through the live updates (which
		// do not wipe it) to how it ended, linking to it.
		b.WaitFor("the rerun's end in the result", `document.getElementById('action-result').dataset.runState === 'FAILED_FINAL'`)
		got := browser.Eval[string](b, `document.getElementById('action-result').textContent + ' | ' + document.getElementById('rerun-attempt').getAttribute('href')`)
		if want := "Rerun accepted: " + f.period + " generation 1 failed (retries-exhausted)"; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " | /ui/pipelines/rerun-me/periods/"+f.period+"#lock") {
			t.Fatalf("the rerun's result reads %q, want %q… linking to the period's lock", got, want)
		}
		b.Screenshot("pipeline-rerun")
	})

	t.Run("backfill from the history grid", func(t *testing.T) {
		// paused-ops is paused: its backfill waits, so it is still running
		// when the page shows it, and the page's Cancel ends it.
		b := b.For(t)
		day, _ := time.Parse("2006-01-02", f.period)
		from, to := day.AddDate(0, 0, -3).Format("2006-01-02"), day.AddDate(0, 0, -1).Format("2006-01-02")
		b.Open(f.srv.URL + "/ui/pipelines/paused-ops")
		b.Do(chromedp.Click(chromedp.ID("action-backfill-open")),
			chromedp.SetValue(chromedp.ID("backfill-from"), from), chromedp.SetValue(chromedp.ID("backfill-to"), to),
			chromedp.SetValue(chromedp.ID("backfill-max-active"), "2"))
		confirms := len(b.Dialogs())
		b.Do(chromedp.Click(chromedp.ID("action-backfill")))
		b.WaitFor("the backfill's answer", `['done', 'refused', 'error'].includes(document.getElementById('backfill-result').dataset.result)`)
		if r := browser.Eval[string](b, `document.getElementById('backfill-result').textContent`); r != "Backfill 1 started: 3 of 3 periods to run." {
			t.Fatalf("the backfill said %q", r)
		}
		d := b.Dialogs()
		if len(d) != confirms+1 || !strings.Contains(d[len(d)-1].Message, "Backfill paused-ops from "+from+" to "+to+" (only missing, at most 2 at once)") {
			t.Fatalf("the backfill asked %+v, want one confirmation naming the pipeline and the range", d[confirms:])
		}
		b.WaitFor("the running backfill's progress", `!!document.querySelector('#backfills .backfill[data-backfill="1"][data-state="running"][data-total="3"]')`)
		b.Screenshot("pipeline-backfill")
		b.Do(chromedp.Click(chromedp.CSS(`#backfills .backfill[data-backfill="1"] button[data-action="cancel-backfill"]`)))
		b.WaitFor("the cancel's answer", `document.getElementById('backfill-result').dataset.result === 'done'`)
		b.WaitFor("the cancelled backfill", `!!document.querySelector('#backfills .backfill[data-backfill="1"][data-state="cancelled"]')`)
		if got := f.call(t, "GET", "/v1/pipelines/paused-ops/backfills/1", "", 200); !strings.Contains(got, `"state":"cancelled"`) {
			t.Fatalf("the API has the backfill %s", got)
		}
	})

	t.Run("the dependency graph draws its edges", func(t *testing.T) {
		b := b.For(t)
		b.Open(f.srv.URL + "/ui/graph")
		// The two pipelines with a dependency are drawn; the others are
		// chips beside the drawing.
		if n, alone := browser.Eval[int](b, `document.querySelectorAll('svg#graph g.graph-node').length`), browser.Eval[int](b, `document.querySelectorAll('#graph-alone a.chip').length`); n != 2 || n+alone != len(wantStates)+5 {
			t.Fatalf("the graph draws %d nodes and lists %d alone, want 2 and the other %d", n, alone, len(wantStates)+3)
		}
		// The edge's path runs from the right side of the upstream's box
		// to the left side of the downstream's, as the browser lays it out.
		geo := browser.Eval[string](b, `(() => {
			const path = document.querySelector('g.graph-edge[data-from="succeeded-job"][data-to="after-success"] path');
			if (!path) return 'no edge';
			const box = id => document.querySelector('g.graph-node[data-node="' + id + '"] rect').getBBox();
			const a = path.getPointAtLength(0), z = path.getPointAtLength(path.getTotalLength()), up = box('succeeded-job'), down = box('after-success');
			const ok = Math.abs(a.x - (up.x + up.width)) < 1 && Math.abs(z.x - down.x) < 1 &&
				a.y > up.y && a.y < up.y + up.height && z.y > down.y && z.y < down.y + down.height && path.getTotalLength() > 10;
			return ok ? 'ok' : JSON.stringify({a: [a.x, a.y], z: [z.x, z.y], up, down});
		})()`)
		if geo != "ok" {
			t.Fatalf("the edge succeeded-job -> after-success is not drawn between its nodes: %s", geo)
		}
		// Its label is drawn, on top: what is under its middle is the label.
		if got := browser.Eval[string](b, `(() => {
			const l = document.querySelector('text.graph-label[data-from="succeeded-job"][data-to="after-success"]');
			if (!l) return 'no label';
			const r = l.getBoundingClientRect();
			l.scrollIntoView({block: 'center', inline: 'center'});
			const q = l.getBoundingClientRect(), el = document.elementFromPoint(q.x + q.width / 2, q.y + q.height / 2);
			return el === l ? l.textContent : 'hidden under ' + (el && el.outerHTML.slice(0, 80));
		})()`); got != "same period" {
			t.Errorf("the edge's label: %s", got)
		}
		// A legend of the states, in the overview's colours; the live
		// indicator is in none of them.
		if n := browser.Eval[int](b, `document.querySelectorAll('#graph-legend .legend-swatch').length`); n != 12 {
			t.Errorf("the legend has %d swatches, want the 11 states and not running", n)
		}
		b.WaitFor("the live stream", `document.getElementById('live-status').dataset.live === 'on'`)
		if c := browser.Eval[string](b, `getComputedStyle(document.getElementById('live-status')).color`); greenish(c) {
			t.Errorf("the live indicator is %s, the overview's colour of succeeded", c)
		}
		// Focus on after-success: itself and its upstream only.
		b.Open(f.srv.URL + "/ui/pipelines/after-success")
		b.Do(chromedp.Click(chromedp.ID("graph-link")))
		b.WaitFor("the focused graph", `location.search === '?focus=after-success' && !!document.querySelector('g.graph-node.focused')`)
		if got := browser.Eval[string](b, `Array.from(document.querySelectorAll('g.graph-node'), g => g.dataset.node).sort().join(' ')`); got != "after-success succeeded-job" {
			t.Errorf("after-success's neighbourhood draws %q", got)
		}
		b.Open(f.srv.URL + "/ui/graph")
		if n := browser.Eval[int](b, `document.querySelectorAll('svg#graph g.graph-edge').length`); n != 1 {
			t.Fatalf("%d edges drawn, want 1", n)
		}
		if href := browser.Eval[string](b, `document.querySelector('g.graph-node[data-node="after-success"] a').getAttribute('href')`); href != "/ui/pipelines/after-success" {
			t.Fatalf("a node links to %q", href)
		}
		b.Screenshot("graph")
		b.Open(f.srv.URL + "/ui/pipelines/succeeded-job")
		if got := browser.Eval[string](b, `document.querySelector('#downstreams a[data-downstream]').getAttribute('href')`); got != "/ui/pipelines/after-success" {
			t.Fatalf("succeeded-job's downstreams link to %q", got)
		}
		b.Open(f.srv.URL + "/ui/pipelines/after-success")
		if got := browser.Eval[string](b, `document.querySelector('#upstreams a[data-upstream]').textContent + ' ' + document.querySelector('#nav-graph').getAttribute('href')`); got != "succeeded-job /ui/graph" {
			t.Fatalf("after-success's upstreams and the nav: %q", got)
		}
	})

	t.Run("silences: marked events, expire from the page", func(t *testing.T) {
		b := b.For(t)
		var s struct {
			ID string `json:"id"`
		}
		out := f.call(t, "POST", "/v1/silences", `{"pipelines": ["rerun-me"], "types": ["RERUN_ACCEPTED", "RERUN_REJECTED"], "duration": "1h", "comment": "browser test"}`, 201)
		if err := json.Unmarshal([]byte(out), &s); err != nil || s.ID == "" {
			t.Fatalf("POST /v1/silences: %v %s", err, out)
		}
		// A rerun now is answered (accepted or rejected) with an event the
		// silence covers: the event log shows it marked, with the comment.
		f.call(t, "POST", "/v1/pipelines/rerun-me/reruns", `{"period": "`+f.period+`", "reason": "silenced"}`, 200)
		b.Open(f.srv.URL + "/ui/events?pipeline=rerun-me")
		row := `document.querySelector('tr.silenced[data-silenced-by="` + s.ID + `"]')`
		b.WaitFor("a silenced event in the log", row+` !== null`)
		if text := browser.Eval[string](b, row+`.textContent`); !strings.Contains(text, "silenced by "+s.ID) || !strings.Contains(text, "browser test") {
			t.Fatalf("the silenced row says %q", text)
		}
		// The silences page lists it active; expiring it asks first, then
		// the API answers it ended.
		b.Open(f.srv.URL + "/ui/silences")
		if active := browser.Eval[string](b, `document.querySelector('tr[data-silence="`+s.ID+`"]').dataset.active`); active != "true" {
			t.Fatalf("the silences page shows %s active=%q", s.ID, active)
		}
		confirms := len(b.Dialogs())
		b.Do(chromedp.Click(chromedp.ID("expire-" + s.ID)))
		b.WaitFor("the expiry's answer", `['done', 'refused', 'error'].includes(document.getElementById('action-result').dataset.result)`)
		if r := browser.Eval[string](b, `document.getElementById('action-result').dataset.result + ': ' + document.getElementById('action-result').textContent`); !strings.HasPrefix(r, "done") {
			t.Fatalf("the expiry was not done: %s", r)
		}
		if d := b.Dialogs(); len(d) != confirms+1 || d[len(d)-1].Type != "confirm" || !strings.Contains(d[len(d)-1].Message, s.ID) {
			t.Fatalf("the expiry asked %+v, want one confirmation naming the silence", d[confirms:])
		}
		var list struct {
			Silences []struct {
				ID     string `json:"id"`
				Active bool   `json:"active"`
			} `json:"silences"`
		}
		if err := json.Unmarshal([]byte(f.call(t, "GET", "/v1/silences", "", 200)), &list); err != nil || len(list.Silences) != 1 || list.Silences[0].Active {
			t.Fatalf("after the expiry: %v %+v", err, list)
		}
		b.Screenshot("silences")
	})

	t.Run("silence a pipeline from its page, preview, extend", func(t *testing.T) {
		b := b.For(t)
		b.Open(f.srv.URL + "/ui/pipelines/failed-job")
		b.Do(chromedp.Click(chromedp.ID("action-silence-open")))
		b.WaitFor("the silence form, filled", `location.pathname === '/ui/silences' && document.getElementById('silence-pipelines').value === 'failed-job'`)
		// The preview: the pipeline and its open JOB_FAILED; limited to
		// SLA breaches, it covers no open condition (read as typed).
		if got := browser.Eval[string](b, `document.querySelector('#preview [data-reached]').textContent + ' ' + document.querySelector('#preview li[data-covered="failed-job"]').dataset.type`); got != "failed-job JOB_FAILED" {
			t.Fatalf("the preview reads %q", got)
		}
		b.Do(chromedp.SendKeys(chromedp.ID("silence-types"), "SLA_BREACH"))
		b.WaitFor("the preview to follow the types", `document.getElementById('preview').dataset.conditions === '0'`)
		b.Do(chromedp.Evaluate[chromedp.Void](`document.getElementById('silence-types').value = ''`), chromedp.SetValue(chromedp.ID("silence-comment"), "on it"))
		b.Do(chromedp.Click(chromedp.ID("action-silence")))
		b.WaitFor("the silence saved", `document.getElementById('silence-result').dataset.result === 'done'`)
		b.WaitFor("the silence listed", `!!document.querySelector('#silences tr[data-active="true"] .extend')`)
		first := browser.Eval[string](b, `document.querySelector('#silences tr[data-active="true"]').dataset.silence`)
		if got := browser.Eval[string](b, `document.querySelector('#silences tr[data-silence="`+first+`"] .silence-ends').textContent.trim().split(/\s+/).slice(0, 2).join(' ')`); got != "ends in" {
			t.Errorf("the silence's end reads %q", got)
		}
		// Extend it: the same matchers for 4 h, the first expired.
		b.Do(chromedp.Click(chromedp.ID("extend-" + first)))
		b.WaitFor("the extend form", `document.getElementById('silence-extend') && document.getElementById('silence-pipelines').value === 'failed-job'`)
		b.Do(chromedp.SetValue(chromedp.ID("silence-duration"), "4h"), chromedp.Click(chromedp.ID("action-silence")))
		b.WaitFor("the extension saved", `document.getElementById('silence-result').dataset.result === 'done'`)
		var list struct {
			Silences []struct {
				ID        string   `json:"id"`
				Active    bool     `json:"active"`
				Pipelines []string `json:"pipelines"`
				Comment   string   `json:"comment"`
			} `json:"silences"`
		}
		if err := json.Unmarshal([]byte(f.call(t, "GET", "/v1/silences", "", 200)), &list); err != nil {
			t.Fatal(err)
		}
		active := 0
		for _, s := range list.Silences {
			if s.ID == first && s.Active {
				t.Errorf("the extended silence %s is still active", first)
			}
			if s.ID != first && s.Active && slices.Equal(s.Pipelines, []string{"failed-job"}) && s.Comment == "on it" {
				active++
			}
		}
		if active != 1 {
			t.Errorf("after extending, %d active silence(s) of failed-job: %+v", active, list.Silences)
		}
		b.Screenshot("silences-form")
		// No live update wipes an action's result: none is inside a
		// section the pages re-read.
		for _, page := range []string{"/ui/silences", "/ui/pipelines/failed-job", "/ui/pipelines/failed-job/periods/" + f.period} {
			b.Open(f.srv.URL + page)
			if n := browser.Eval[int](b, `document.querySelectorAll('[data-live-section] .action-result').length`); n != 0 {
				t.Errorf("%s: %d action result(s) inside a live section", page, n)
			}
		}
	})

	t.Run("values are text, never markup", func(t *testing.T) {
		b := b.For(t)
		b.Open(f.srv.URL + "/")
		row := browser.Eval[string](b, `document.querySelector('tr[data-pipeline="xss-sensor"]').textContent`)
		if !strings.Contains(row, xssDesc) {
			t.Fatalf("the description does not show as text in its row: %q", row)
		}
		for _, page := range []string{"/ui/pipelines/xss-sensor", "/ui/pipelines/xss-job", "/ui/events"} {
			b.Open(f.srv.URL + page)
			text := browser.Eval[string](b, `document.body.innerText`)
			want := xssSensor
			if page != "/ui/pipelines/xss-sensor" {
				want = xssJob
			}
			if !strings.Contains(text, want) {
				t.Fatalf("%s does not show %q as text", page, want)
			}
			// No element came from the values: no <img>, no inline
			// <script>, no handler attribute.
			if n := browser.Eval[int](b, `document.querySelectorAll('img, script:not([src]), [onerror], [onmouseover]').length`); n != 0 {
				t.Fatalf("%s holds %d element(s) made from a value", page, n)
			}
		}
		b.Open(f.srv.URL + "/")
		if a := alerts(b); len(a) != 0 {
			t.Fatalf("a value ran as script: %+v", a)
		}
	})

	t.Run("a period page: the summary first, no empty verdict", func(t *testing.T) {
		b := b.For(t)
		b.Open(f.srv.URL + "/ui/pipelines/failed-job")
		line := browser.Eval[string](b, `document.getElementById('summary-line').textContent.replace(/\s+/g, ' ').trim()`)
		if !strings.HasPrefix(line, "failed for ") || !strings.Contains(line, "the job failed and its retry budget is used up") || !strings.HasSuffix(line, "load failed: 3 rows rejected") {
			t.Errorf("failed-job's summary line reads %q", line)
		}
		// The diagnosis, then the actions.
		if !browser.Eval[bool](b, `document.getElementById('why').getBoundingClientRect().top < document.getElementById('actions').getBoundingClientRect().top`) {
			t.Error("the actions come before the diagnosis")
		}
		// waiting-data has no validation rule: no verdict, not in green.
		b.Open(f.srv.URL + "/ui/pipelines/waiting-data")
		if v := browser.Eval[string](b, `document.getElementById('validation-verdict').dataset.verdict + ' ' + getComputedStyle(document.getElementById('validation-verdict')).color`); !strings.HasPrefix(v, "none ") || greenish(strings.TrimPrefix(v, "none ")) {
			t.Errorf("no rules, yet the verdict reads %q", v)
		}
		if n := browser.Eval[int](b, `Array.from(document.querySelectorAll('table')).filter(t => !t.tBodies[0] || t.tBodies[0].rows.length === 0).length`); n != 0 {
			t.Errorf("%d table(s) without rows", n)
		}
	})

	t.Run("a period the pipeline never runs is a 404 linking back", func(t *testing.T) {
		b := b.For(t)
		day, _ := time.Parse("2006-01-02", f.period)
		for _, period := range []string{f.period + "T05", day.AddDate(0, 0, 2).Format("2006-01-02")} {
			b.Open(f.srv.URL + "/ui/pipelines/failed-job/periods/" + period)
			if got := browser.Eval[string](b, `document.getElementById('error').dataset.status + ' ' + !!document.getElementById('action-rerun')`); got != "404 false" {
				t.Errorf("%s: %s", period, got)
			}
		}
		b.Do(chromedp.Click(chromedp.ID("error-back")))
		b.WaitFor("failed-job's page", `location.pathname === '/ui/pipelines/failed-job' && !!document.getElementById('summary-line')`)
	})

	t.Run("1400 px: periods, owners and times never wrap", func(t *testing.T) {
		b := b.For(t)
		b.Viewport(1400, 900)
		defer b.Viewport(browser.Width, browser.Height)
		for _, page := range []string{"/", "/?sort=owner"} {
			b.Open(f.srv.URL + page)
			if wrapped := browser.Eval[[]string](b, wrappedJS(`#board .c-period, #board .c-owner, #board time, #board .since, #board .last-success, #board .deadline`)); len(wrapped) > 0 {
				t.Errorf("%s at 1400 px: wrapped over lines: %v", page, wrapped)
			}
		}
		b.Open(f.srv.URL + "/")
		b.Screenshot("overview-1400px")
	})

	t.Run("the pages fit 390 px", func(t *testing.T) {
		b := b.For(t)
		b.Viewport(390, 844)
		defer b.Viewport(browser.Width, browser.Height)
		for _, page := range []string{"/", "/ui/pipelines/failed-job", "/ui/pipelines/failed-job/periods/" + f.period, "/ui/events", "/ui/health", "/ui/graph", "/ui/silences"} {
			b.Open(f.srv.URL + page)
			if w := browser.Eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
				t.Errorf("%s is %d px wide at a 390 px viewport: it scrolls sideways", page, w)
			}
			// No word of a table is broken over two lines; a table wider
			// than the screen scrolls inside its own box.
			if broken := browser.Eval[[]string](b, brokenWordsJS); len(broken) > 0 {
				t.Errorf("%s at 390 px: words broken mid-token in tables: %v", page, broken)
			}
			if loose := browser.Eval[[]string](b, `Array.from(document.querySelectorAll('table')).filter(t => {
				if (t.scrollWidth <= t.parentElement.clientWidth + 1) return false;
				for (let e = t.parentElement; e && e !== document.body; e = e.parentElement) if (['auto', 'scroll'].includes(getComputedStyle(e).overflowX)) return false;
				return true; }).map(t => t.id || t.className)`); len(loose) > 0 {
				t.Errorf("%s at 390 px: tables wider than the screen that do not scroll inside: %v", page, loose)
			}
		}
		b.Open(f.srv.URL + "/")
		b.Screenshot("overview-390px")
	})

	t.Run("every state", func(t *testing.T) {
		b := b.For(t)
		if wait := time.Until(f.slaAt.Add(time.Second)); wait > 0 {
			t.Logf("waiting %s for the SLA instant", wait.Round(time.Second))
			time.Sleep(wait)
		}
		b.Open(f.srv.URL + "/")
		got := rowStates(b)
		for id, want := range wantStates {
			if got[id] != want {
				t.Errorf("%s is %q on the overview, want %q", id, got[id], want)
			}
		}
		for _, want := range wantStates {
			sel := fmt.Sprintf(`document.getElementById('count-%s').dataset.count`, want)
			if n := browser.Eval[string](b, sel); n == "0" {
				t.Errorf("the count of %s is 0", want)
			}
		}
		// Most urgent first: the breached pipeline leads.
		if first := browser.Eval[string](b, `document.querySelector('#board tr[data-pipeline]').dataset.state`); first != "breached" {
			t.Errorf("the first row is %q, want breached (most urgent first)", first)
		}
		b.Screenshot("overview-states")
		// The problems view: breached, failed and at risk, as many as
		// its count says.
		b.Do(chromedp.Click(chromedp.ID("view-problems")))
		// The new document, parsed whole: its URL changes as it starts
		// to arrive, before the rows below the first are parsed.
		b.WaitFor("the problems view", `location.search.includes('state=') && document.readyState === 'complete'`)
		problems := rowStates(b)
		for id, s := range problems {
			if s != "breached" && s != "failed" && s != "at-risk" {
				t.Errorf("the problems view lists %s (%s)", id, s)
			}
		}
		if n := browser.Eval[string](b, `document.getElementById('view-problems').dataset.count`); n != fmt.Sprint(len(problems)) || len(problems) < 4 {
			t.Errorf("the problems view lists %d, its count says %s", len(problems), n)
		}
		// Filtered by state, the overview lists that state only.
		b.Open(f.srv.URL + "/?state=failed")
		for id, s := range rowStates(b) {
			if s != "failed" {
				t.Errorf("filtered on failed, the overview lists %s (%s)", id, s)
			}
		}
	})

	// Every page above ran its script without an uncaught exception and
	// broke no rule of the Content-Security-Policy (the pages have no
	// inline script or style).
	t.Run("no script error, no policy violation", func(t *testing.T) {
		for _, p := range b.Problems() {
			if strings.HasPrefix(p, "exception:") || strings.Contains(p, "Content Security Policy") {
				t.Errorf("a page: %s", p)
			}
		}
	})
}
