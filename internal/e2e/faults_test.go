package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/testenv/pglocal"
)

// EnvSoak, set to a duration ("5m"), runs TestReplicasUnderFaultsOnPostgres
// for that long with a replica killed every 20–40 s (make soak-postgres);
// unset, the test runs its short form (about 45 s of faults, a kill every
// 8–12 s), the one CI runs.
const EnvSoak = "INTERLOCK_SOAK"

// faultPlan is how long the writers run and how often a replica dies.
type faultPlan struct {
	duration         time.Duration
	killMin, killMax time.Duration
}

func planFaults(t *testing.T) faultPlan {
	t.Helper()
	if v := os.Getenv(EnvSoak); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			t.Fatalf("%s=%q: want a duration of at least 1m (5m, 10m)", EnvSoak, v)
		}
		return faultPlan{duration: d, killMin: 20 * time.Second, killMax: 40 * time.Second}
	}
	return faultPlan{duration: 45 * time.Second, killMin: 8 * time.Second, killMax: 12 * time.Second}
}

// faultPipelines are the pipelines every replica serves; each write names
// an hour of one of them (slot s: pipeline s%len, s/len hours back).
var faultPipelines = []string{"alpha", "beta", "gamma", "delta"}

const faultWriter = "writer-secret-1"

// replica is one of the three `serve` processes: its project directory,
// the process running now (nil while down), and the logs of all of them.
type replica struct {
	i    int
	dir  string
	mu   sync.Mutex
	srv  *server
	logs []*logBuffer
}

func (r *replica) current() *server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.srv
}

// stamped is a delivery and when it arrived.
type stamped struct {
	key string
	at  time.Time
}

// stampLog records deliveries with their arrival time.
type stampLog struct {
	mu  sync.Mutex
	got []stamped
}

func (l *stampLog) add(key string) {
	l.mu.Lock()
	l.got = append(l.got, stamped{key, time.Now()})
	l.mu.Unlock()
}

func (l *stampLog) all() []stamped {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// fault is a moment the test broke something: a duplicate delivery is
// allowed only across a SIGKILL (at least once: a process killed between a
// send and its record sends again).
type fault struct {
	what string
	at   time.Time
}

// TestReplicasUnderFaultsOnPostgres: three `serve` processes on one
// PostgreSQL of the test's own, sensor writers at a steady rate through all
// three, a webhook and a Slack sink, while a replica is SIGKILLed and
// restarted every 8–12 s (20–40 s with INTERLOCK_SOAK), PostgreSQL itself
// crashes once (as pg_ctl restart -m immediate) and one replica's
// connections are cut while it commits. Then: every acknowledged write is
// stored, every period with a stored write ran its job once, every event
// reached the webhook (a second copy only across a replica SIGKILLed), Slack got each
// post once, the watchdog ran in one replica at a time and raised no
// WATCHDOG_DEGRADED twice, and /readyz was false on every replica while the
// database was down.
func TestReplicasUnderFaultsOnPostgres(t *testing.T) {
	t.Parallel()
	plan := planFaults(t)
	pg := pglocal.StartOwn(t)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("fault schedule seed %d, %s of writes", seed, plan.duration)

	airflow := newFakeAirflow(t)
	airflow.set("success")
	var hookLog stampLog
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hookLog.add(r.Header.Get("X-Interlock-Event-Id"))
	}))
	t.Cleanup(hook.Close)
	slack := slacktest.New(t, "xoxb-fault-token")
	// Slack's fake keeps its posts in order; the proxy in front notes when
	// each arrived.
	var slackLog stampLog
	slackURL, _ := url.Parse(slack.URL)
	proxy := httputil.NewSingleHostReverseProxy(slackURL)
	var slackMu sync.Mutex
	slackFront := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxy.ServeHTTP(w, r)
		slackMu.Lock()
		defer slackMu.Unlock()
		posts := slack.Posts()
		for _, p := range posts[len(slackLog.all()):] {
			slackLog.add(p.Text)
		}
	}))
	t.Cleanup(slackFront.Close)

	reps := make([]*replica, 3)
	for i := range reps {
		dir := t.TempDir()
		write := projectWriter(t, dir)
		write("interlock.yaml", replicaSettings(fmt.Sprintf(`
  - {type: webhook, url: %q, secretEnv: INTERLOCK_HOOK_SECRET, match: {levels: [info, warning, error]}}
  - {type: slack, channel: C0FAULT, tokenEnv: SLACK_BOT_TOKEN, match: {types: [JOB_TRIGGERED]}}
`, hook.URL)))
		for _, p := range faultPipelines {
			write("pipelines/"+p+".yaml", fmt.Sprintf(`pipeline: {id: %s, owner: analytics}
schedule:
  trigger: {key: upstream, check: exists}
job:
  type: airflow
  config: {url: %q, dagId: gold}
  pollInterval: 1s
`, p, airflow.URL))
		}
		reps[i] = &replica{i: i, dir: dir}
	}
	env := []string{"INTERLOCK_WRITER_TOKEN=" + faultWriter, "INTERLOCK_HOOK_SECRET=hook-secret-1",
		"SLACK_BOT_TOKEN=xoxb-fault-token", "INTERLOCK_SLACK_API_URL=" + slackFront.URL + "/api/"}
	storeURL := func(r *replica) string { return pg.URL() + "&application_name=" + fmt.Sprintf("replica-%d", r.i) }
	up := func(r *replica) {
		s := start(t, r.dir, env, "--store", storeURL(r))
		r.mu.Lock()
		r.srv, r.logs = s, append(r.logs, s.out)
		r.mu.Unlock()
	}
	down := func(r *replica) {
		r.mu.Lock()
		s := r.srv
		r.srv = nil
		r.mu.Unlock()
		s.kill9(t)
	}
	for _, r := range reps {
		up(r)
	}
	defer func() {
		for _, r := range reps {
			if s := r.current(); s != nil {
				s.stop(t)
			}
		}
		if t.Failed() {
			for _, r := range reps {
				for j, l := range r.logs {
					t.Logf("replica %d, process %d, its warnings and errors:\n%s", r.i, j, lastBytes(warnings(l.String()), 8<<10))
				}
			}
		}
	}()

	// The writers: a slot every 250 ms; each of its three writes goes to
	// another replica, at once, for the same pipeline and hour.
	client := &http.Client{Timeout: 20 * time.Second}
	base := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	type write struct {
		pipeline, key string
		slot, rep     int
	}
	var (
		ackMu    sync.Mutex
		acked    []write
		attempts atomic.Int64
		stopW    = make(chan struct{})
		writers  sync.WaitGroup
	)
	put := func(w write) {
		attempts.Add(1)
		s := reps[w.rep].current()
		if s == nil {
			return
		}
		req, _ := http.NewRequest("PUT", s.url+"/v1/pipelines/"+w.pipeline+"/sensors/"+url.PathEscape(w.key),
			strings.NewReader(fmt.Sprintf(`{"slot": %d, "replica": %d}`, w.slot, w.rep)))
		req.Header.Set("Authorization", "Bearer "+faultWriter)
		resp, err := client.Do(req)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			ackMu.Lock()
			acked = append(acked, w)
			ackMu.Unlock()
		}
	}
	writers.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond) // the rate, not a wait
		defer tick.Stop()
		for slot := 0; ; slot++ {
			select {
			case <-stopW:
				return
			case <-tick.C:
			}
			p := faultPipelines[slot%len(faultPipelines)]
			hour := base.Add(-time.Duration(slot/len(faultPipelines)) * time.Hour).Format("20060102T15")
			for i := range reps {
				w := write{pipeline: p, key: fmt.Sprintf("upstream-r%d-s%d#%s", i, slot, hour), slot: slot, rep: i}
				writers.Go(func() { put(w) })
			}
		}
	})

	// The faults.
	var faults []fault
	note := func(what string) {
		faults = append(faults, fault{what, time.Now()})
		t.Logf("%s: %s", time.Now().UTC().Format("15:04:05.000"), what)
	}
	conn := func() *pgx.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, pg.URL())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	began := time.Now()
	end := began.Add(plan.duration)
	pgCrashAt := began.Add(plan.duration * 2 / 5)
	cutAt := began.Add(plan.duration * 13 / 20)
	pgCrashed, cut := false, false
	kills, restarts := 0, 0
	nextKill := began.Add(plan.killMin + time.Duration(rng.Int64N(int64(plan.killMax-plan.killMin))))
	for {
		now := time.Now()
		switch {
		case !pgCrashed && !now.Before(pgCrashAt):
			pgCrashed = true
			crashPostgres(t, pg, reps, note)
			restarts++
		case !cut && !now.Before(cutAt):
			cut = true
			cutConnections(t, conn(), reps, note)
		case !now.Before(nextKill):
			// The first kill takes the watchdog's holder and keeps it down
			// until another replica took the watchdog over (a replica
			// restarted at once keeps its leases); the second takes an
			// alert sink's holder, restarted at once.
			victim := rng.IntN(len(reps))
			c := conn()
			if kills < 2 {
				if h := leaseHolder(t, c, reps, []string{"watchdog", "alert-sink/%"}[kills]); h >= 0 {
					victim = h
				}
			}
			r := reps[victim]
			down(r)
			kills++
			note(fmt.Sprintf("replica %d killed (SIGKILL)", r.i))
			if kills == 1 {
				h := -1
				eventuallyWithin(t, time.Minute, "another replica to take the watchdog over", func() bool {
					h = leaseHolder(t, c, reps, "watchdog")
					return h >= 0 && h != r.i
				})
				note(fmt.Sprintf("replica %d took the watchdog over", h))
			}
			c.Close(context.Background())
			up(r)
			restarts++
			note(fmt.Sprintf("replica %d restarted", r.i))
			nextKill = time.Now().Add(plan.killMin + time.Duration(rng.Int64N(int64(plan.killMax-plan.killMin))))
		}
		if !time.Now().Before(end) {
			break
		}
		wake := slices.MinFunc([]time.Time{end, nextKill, pick(!pgCrashed, pgCrashAt, end), pick(!cut, cutAt, end)}, func(a, b time.Time) int { return a.Compare(b) })
		time.Sleep(time.Until(wake)) // the fault schedule itself
	}
	close(stopW)
	writers.Wait()
	ackMu.Lock()
	ackedWrites := slices.Clone(acked)
	ackMu.Unlock()

	// Everything settles: every period with a stored trigger sensor
	// completes its job, every event reaches the webhook, every
	// JOB_TRIGGERED reaches Slack.
	srv := reps[0].current()
	periods := func() map[string]bool { // pipeline/hour of every stored trigger sensor
		out := map[string]bool{}
		for _, p := range faultPipelines {
			for _, s := range listSensors(t, srv, p) {
				if _, h, ok := strings.Cut(s.Key, "#"); ok {
					out[p+"/"+hourPeriod(h)] = true
				}
			}
		}
		return out
	}
	var log []faultEvent
	settle := time.Now()
	why := ""
	defer func() {
		if t.Failed() && why != "" {
			t.Logf("not settled: %s", why)
		}
	}()
	eventuallyWithin(t, 3*time.Minute, "every stored period's job completed and every event delivered", func() bool {
		log = readEventLog(t, srv)
		done := map[string]bool{}
		slackWant := 0
		for _, e := range log {
			switch e.Type {
			case "JOB_COMPLETED":
				done[e.Detail.PipelineID+"/"+e.Detail.Date] = true
			case "JOB_TRIGGERED":
				slackWant++
			}
		}
		var open []string
		for k := range periods() {
			if !done[k] {
				open = append(open, k)
			}
		}
		hooked := map[string]bool{}
		for _, d := range hookLog.all() {
			hooked[d.key] = true
		}
		var unsent []string
		for _, e := range log {
			if !hooked[e.ID] {
				unsent = append(unsent, e.Type+" "+e.Detail.PipelineID+" "+e.Detail.Date)
			}
		}
		why = fmt.Sprintf("%d periods without JOB_COMPLETED %.10v, %d events not at the webhook %.10v, Slack %d posts of %d JOB_TRIGGERED",
			len(open), open, len(unsent), unsent, len(slackLog.all()), slackWant)
		return len(open) == 0 && len(unsent) == 0 && len(slackLog.all()) >= slackWant
	})
	settled := time.Since(settle)

	// Every acknowledged write is stored, with what was written.
	stored := map[string]map[string]json.RawMessage{}
	for _, p := range faultPipelines {
		stored[p] = map[string]json.RawMessage{}
		for _, s := range listSensors(t, srv, p) {
			stored[p][s.Key] = s.Data
		}
	}
	lost := 0
	for _, w := range ackedWrites {
		var got struct{ Slot, Replica int }
		data, ok := stored[w.pipeline][w.key]
		if !ok || json.Unmarshal(data, &got) != nil || got.Slot != w.slot || got.Replica != w.rep {
			lost++
			if lost <= 10 {
				t.Errorf("acknowledged write %s %s (slot %d via replica %d) is not stored as written: %s", w.pipeline, w.key, w.slot, w.rep, data)
			}
		}
	}

	// Each period triggered once per attempt, and the job API saw each
	// DAG run created once.
	triggered := map[string]int{}
	ids := map[string]int{}
	var degraded []string
	for _, e := range log {
		ids[e.ID]++
		switch e.Type {
		case "JOB_TRIGGERED":
			triggered[fmt.Sprintf("%s/%s attempt %d", e.Detail.PipelineID, e.Detail.Date, e.Detail.Detail.Attempt)]++
		case "WATCHDOG_DEGRADED":
			degraded = append(degraded, e.Detail.Detail.Failed)
		}
	}
	for k, n := range triggered {
		if n != 1 {
			t.Errorf("%s: JOB_TRIGGERED %d times, want once", k, n)
		}
	}
	if n := airflow.count(); n != len(triggered) {
		t.Errorf("the job API created %d DAG runs for %d triggered attempts", n, len(triggered))
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("event id %s is %d times in the log", id, n)
		}
	}
	for i := 1; i < len(degraded); i++ {
		if degraded[i] == degraded[i-1] {
			t.Errorf("WATCHDOG_DEGRADED raised twice in a row for %q: two watchdogs at once", degraded[i])
		}
	}

	// Deliveries: a second copy only across a replica's death (a process
	// that lives through PostgreSQL's crash or a cut connection records
	// what it sent instead of sending it again).
	crashes := slices.DeleteFunc(slices.Clone(faults), func(f fault) bool { return !strings.HasSuffix(f.what, "(SIGKILL)") })
	hookDups := duplicates(t, "webhook", hookLog.all(), crashes)
	slackDups := duplicates(t, "Slack", slackLog.all(), crashes)

	// The watchdog ran in one replica at a time: a handover needs a fault.
	passes := watchdogPasses(reps)
	handovers := 0
	for i := 1; i < len(passes); i++ {
		if passes[i].rep != passes[i-1].rep {
			handovers++
		}
	}
	if limit := len(faults) + 1; handovers > limit {
		t.Errorf("the watchdog's passes changed replica %d times over %d faults: more than one held it at once (%s)", handovers, len(faults), passes)
	}

	t.Logf("figures: %d writes attempted, %d acknowledged (%d lost), %d periods triggered (%d DAG runs), %d events (%d WATCHDOG_DEGRADED), "+
		"webhook %d deliveries (%d repeated across a crash), Slack %d posts (%d repeated), %d watchdog passes (%d handovers), "+
		"%d replica kills, %d restarts (PostgreSQL once), settled in %s",
		attempts.Load(), len(ackedWrites), lost, len(triggered), airflow.count(), len(log), len(degraded),
		len(hookLog.all()), hookDups, len(slackLog.all()), slackDups, len(passes), handovers, kills, restarts, settled.Round(time.Second))
}

func pick(cond bool, a, b time.Time) time.Time {
	if cond {
		return a
	}
	return b
}

// crashPostgres crashes PostgreSQL (immediate), checks that every replica's
// /readyz says not ready while it is down — waiting until each has said so
// — then starts it again and waits until every replica is ready again.
func crashPostgres(t *testing.T, pg *pglocal.Own, reps []*replica, note func(string)) {
	t.Helper()
	pg.Crash(t)
	note("PostgreSQL crashed (immediate)")
	unready := map[int]bool{}
	eventuallyWithin(t, time.Minute, "/readyz 503 on every replica while PostgreSQL is down", func() bool {
		for _, r := range reps {
			s := r.current()
			if s == nil || unready[r.i] {
				continue
			}
			switch code := readyz(s); code {
			case http.StatusServiceUnavailable:
				unready[r.i] = true
			case http.StatusOK:
				t.Errorf("replica %d: /readyz 200 while PostgreSQL is down", r.i)
				unready[r.i] = true
			}
		}
		return len(unready) == len(reps)
	})
	pg.Start(t)
	note("PostgreSQL restarted")
	eventuallyWithin(t, time.Minute, "/readyz 200 on every replica after PostgreSQL's restart", func() bool {
		for _, r := range reps {
			if s := r.current(); s != nil && readyz(s) != http.StatusOK {
				return false
			}
		}
		return true
	})
}

func readyz(s *server) int {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(s.url + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// leaseHolder is the replica holding the first lease whose name is LIKE
// pattern; -1 when none is held or its holder is none of reps.
func leaseHolder(t *testing.T, c *pgx.Conn, reps []*replica, pattern string) int {
	t.Helper()
	var holder string
	if err := c.QueryRow(context.Background(), `SELECT holder FROM leases WHERE name LIKE $1 ORDER BY name LIMIT 1`, pattern).Scan(&holder); err != nil {
		return -1
	}
	for _, r := range reps {
		if strings.HasSuffix(holder, filepath.Join(r.dir, "interlock.yaml")) {
			return r.i
		}
	}
	return -1
}

// cutConnections terminates the backends of the replica holding an alert
// sink's lease (its commits are deliveries' records) while writes flow,
// until one was cut mid-commit.
func cutConnections(t *testing.T, c *pgx.Conn, reps []*replica, note func(string)) {
	t.Helper()
	ctx := context.Background()
	defer c.Close(ctx)
	victim := max(0, leaseHolder(t, c, reps, "alert-sink/%"))
	app := fmt.Sprintf("replica-%d", victim)
	// Mid-commit: its transaction has written (it has an id) and not yet
	// committed. Watched closely (a commit is a round trip of a few
	// milliseconds), then the replica's other connections go too.
	terminate := func(cond string) int {
		var n int
		err := c.QueryRow(ctx, `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
			FROM pg_stat_activity WHERE application_name = $1 AND `+cond, app).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(time.Minute)
	busy := 0
	for busy == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no connection of %s was caught mid-commit within a minute", app)
		}
		busy = terminate("backend_xid IS NOT NULL")
	}
	total := busy + terminate("true")
	note(fmt.Sprintf("replica %d: %d connections cut (%d mid-commit)", victim, total, busy))
}

// duplicates fails for a delivery repeated with no crash between its
// copies, and returns how many were repeated across one.
func duplicates(t *testing.T, sink string, got []stamped, crashes []fault) int {
	t.Helper()
	first := map[string]time.Time{}
	n := 0
	for _, d := range got {
		at, seen := first[d.key]
		if !seen {
			first[d.key] = d.at
			continue
		}
		n++
		if !slices.ContainsFunc(crashes, func(f fault) bool { return !f.at.Before(at) && !f.at.After(d.at) }) {
			t.Errorf("%s: %q delivered again at %s (first at %s) with no crash between", sink, d.key, d.at.Format("15:04:05.000"), at.Format("15:04:05.000"))
		}
	}
	return n
}

type pass struct {
	rep int
	at  time.Time
}

func (p pass) String() string {
	return fmt.Sprintf("replica %d at %s", p.rep, p.at.Format("15:04:05.000"))
}

// watchdogPasses are the watchdog passes every process of every replica
// logged, in time order.
func watchdogPasses(reps []*replica) []pass {
	var out []pass
	for _, r := range reps {
		r.mu.Lock()
		logs := slices.Clone(r.logs)
		r.mu.Unlock()
		for _, l := range logs {
			sc := bufio.NewScanner(strings.NewReader(l.String()))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Text()
				if !strings.Contains(line, `msg="watchdog pass"`) {
					continue
				}
				v, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
				if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
					out = append(out, pass{r.i, at})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

type sensorView struct {
	Key  string          `json:"key"`
	Data json.RawMessage `json:"data"`
}

func listSensors(t *testing.T, s *server, pipeline string) []sensorView {
	t.Helper()
	code, body := request(t, "GET", s.url+"/v1/pipelines/"+pipeline+"/sensors", faultWriter, "")
	if code != 200 {
		t.Fatalf("sensors of %s: %d %s", pipeline, code, body)
	}
	var page struct {
		Sensors []sensorView `json:"sensors"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	return page.Sensors
}

// hourPeriod turns a key's hour suffix (20261127T05) into its period
// (2026-11-27T05).
func hourPeriod(h string) string {
	at, err := time.Parse("20060102T15", h)
	if err != nil {
		return h
	}
	return at.Format("2006-01-02T15")
}

type faultEvent struct {
	ID     string `json:"id"`
	Type   string `json:"detail-type"`
	Detail struct {
		PipelineID string `json:"pipelineId"`
		Date       string `json:"date"`
		Detail     struct {
			Attempt int    `json:"attempt"`
			Failed  string `json:"failed"`
		} `json:"detail"`
	} `json:"detail"`
}

// readEventLog reads the whole event log, page by page.
func readEventLog(t *testing.T, s *server) []faultEvent {
	t.Helper()
	var out []faultEvent
	after := ""
	for {
		u := s.url + "/v1/events?limit=1000"
		if after != "" {
			u += "&after=" + url.QueryEscape(after)
		}
		code, body := request(t, "GET", u, faultWriter, "")
		if code != 200 {
			t.Fatalf("events: %d %s", code, body)
		}
		var page struct {
			Events []faultEvent `json:"events"`
			Next   string       `json:"next"`
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Events...)
		if page.Next == "" || len(page.Events) == 0 {
			return out
		}
		after = page.Next
	}
}

// eventuallyWithin polls cond until it holds or d has passed.
func eventuallyWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(d)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out after %s waiting for %s", d, what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// warnings are the WARN and ERROR lines of a log.
func warnings(log string) string {
	var b strings.Builder
	for line := range strings.Lines(log) {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			b.WriteString(line)
		}
	}
	return b.String()
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
