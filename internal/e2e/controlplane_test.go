package e2e_test

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// TestControlPlaneOnDynamoDB: `interlock serve --store dynamodb://…` (the
// built binary, on DynamoDB Local) is an AWS deployment's control plane.
// It refuses the settings that would double the deployment's work, says
// its mode in its start-up line and /v1/health, and every API command of
// the CLI works against it unchanged (--server http://…): status lists the
// pipelines deploy-config loaded; pause --until, resume, a rerun, a
// backfill and a silence commit through the engine into the tables, what
// they arm stored as timers for the deployment's functions; events and
// events --follow read the tables, including events another process (a
// function) committed. It runs no timers (an armed step timer stays, due),
// no watchdog (no pass recorded) and no alert sink.
func TestControlPlaneOnDynamoDB(t *testing.T) {
	ctx := t.Context()
	st, deployment := awsDeployment(t)

	dir := t.TempDir()
	write := projectWriter(t, dir)
	write("pipelines/gold.yaml", "pipeline: {id: gold, owner: analytics}\nschedule:\n  trigger: {key: upstream, check: equals, field: status, value: ready}\njob: {type: command, config: {command: [\"true\"], timeout: 1m}}\n")
	write("pipelines/silver.yaml", "pipeline: {id: silver, owner: analytics}\nschedule:\n  trigger: {key: upstream, check: exists}\njob: {type: command, config: {command: [\"true\"], timeout: 1m}}\n")
	mustCLI(t, dir, 0, "deploy-config", "pipelines", "--server", deployment)

	// Settings a control plane would double or ignore are refused, each
	// named; so is a dynamodb:// store for a command that would run the
	// deployment's watchdog.
	write("doubling.yaml", "alerts: [{type: console}]\nwatchdog: {interval: 1m}\npipelines: ./defs\n")
	code, out, errOut := cli(t, dir, "serve", "--config", "doubling.yaml", "--addr", "127.0.0.1:0", "--store", deployment)
	if code == 0 || !strings.Contains(errOut, "doubling.yaml: alerts:") || !strings.Contains(errOut, "doubling.yaml: watchdog:") || !strings.Contains(errOut, "doubling.yaml: pipelines:") {
		t.Fatalf("serve on a dynamodb:// store with alerts, watchdog and pipelines set: exit %d, want non-zero naming each\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	write("aws.yaml", "store: "+deployment+"\n")
	if code, _, errOut := cli(t, dir, "watchdog", "--once", "--config", "aws.yaml"); code == 0 || !strings.Contains(errOut, "control plane") {
		t.Fatalf("watchdog --once on a deployment's tables: exit %d, want refused\n%s", code, errOut)
	}

	// A control plane needs no project: it starts in an empty directory.
	srv := start(t, t.TempDir(), nil, "--store", deployment)
	defer srv.stop(t)
	startLine := regexp.MustCompile(`interlock serving.*mode=control-plane`)
	eventually(t, "serve's start-up line to say mode=control-plane", func() bool { return startLine.MatchString(srv.out.String()) })
	code, body := request(t, "GET", srv.url+"/v1/health", "", "")
	health := decode[struct {
		Mode     string `json:"mode"`
		Sinks    []any  `json:"sinks"`
		Watchdog struct {
			LastPass *time.Time `json:"lastPass"`
		} `json:"watchdog"`
	}](t, "GET /v1/health", body)
	if code != 200 || health.Mode != "control-plane" || len(health.Sinks) != 0 {
		t.Fatalf("GET /v1/health: %d %s", code, body)
	}

	api := []string{"--server", srv.url}
	cmd := func(want int, args ...string) string {
		t.Helper()
		return mustCLI(t, dir, want, append(args, api...)...)
	}

	// status lists the deployed pipelines.
	list := decode[struct{ Pipelines []pipelineDoc }](t, "status --output json", cmd(0, "status", "--output", "json"))
	if len(list.Pipelines) != 2 || list.Pipelines[0].ID != "gold" || list.Pipelines[1].ID != "silver" {
		t.Fatalf("status --output json: %+v", list.Pipelines)
	}
	period := list.Pipelines[0].CurrentPeriod
	// The dashboard's overview renders them, from the tables.
	if code, page := request(t, "GET", srv.url+"/", "", ""); code != 200 || !strings.Contains(page, `/ui/pipelines/gold`) || !strings.Contains(page, `/ui/pipelines/silver`) {
		t.Fatalf("the dashboard's overview: %d, want links to gold and silver:\n%s", code, page)
	}

	// events --follow (the CLI) reads the tables: it shows what this
	// serve commits and, below, what another process commits.
	follow := followEvents(t, dir, srv.url)

	// pause --until: the pipeline row and the resume timer the
	// deployment's functions realise.
	cmd(0, "pause", "gold", "--until", "2h")
	row, err := st.PipelineGet(ctx, "gold")
	if err != nil || !row.Paused || time.Until(row.PausedUntil) < 90*time.Minute {
		t.Fatalf("gold after pause --until 2h: paused %v until %v (%v)", row.Paused, row.PausedUntil, err)
	}
	if tm, err := st.TimerGet(ctx, "resume/gold"); err != nil || !tm.DueAt.Equal(row.PausedUntil) {
		t.Fatalf("the resume timer of the pause: %+v (%v), want due %v", tm, err, row.PausedUntil)
	}
	// Trigger data while paused is stored and starts nothing.
	cmd(0, "sensor", "put", "gold", "upstream", `{"status": "ready"}`)
	if runs, err := st.RunList(ctx, store.RunListParams{PipelineID: "gold"}); err != nil || len(runs) != 0 {
		t.Fatalf("runs of paused gold: %d (%v), want none", len(runs), err)
	}
	// resume: the timer goes, and the period that got data during the
	// pause starts — its run stored with the step timer the router turns
	// into an execution.
	if out := cmd(0, "resume", "gold"); strings.TrimSpace(out) != "gold resumed" {
		t.Fatalf("resume gold printed %q", out)
	}
	if row, err := st.PipelineGet(ctx, "gold"); err != nil || row.Paused {
		t.Fatalf("gold after resume: paused %v (%v)", row.Paused, err)
	}
	if _, err := st.TimerGet(ctx, "resume/gold"); err == nil {
		t.Fatal("the resume timer is still stored after resume")
	}
	step := stepTimerOf(t, st, "gold", period)
	if r, err := st.RunGet(ctx, step.Run); err != nil || r.Key.Period != period {
		t.Fatalf("gold's run of %s after resume: %+v (%v)", period, r, err)
	}
	// explain reads the period from the tables: its trigger sensor, seen.
	if out := cmd(0, "explain", "gold"); !strings.Contains(out, "gold, period "+period) || !strings.Contains(out, "upstream") {
		t.Fatalf("explain gold:\n%s", out)
	}

	// A rerun request of a period with no run: accepted, its run stored
	// with a step timer.
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
	if out := cmd(0, "rerun", "silver", "--period", yesterday, "--reason", "reprocess"); !strings.Contains(out, "accepted") {
		t.Fatalf("rerun silver printed %q", out)
	}
	stepTimerOf(t, st, "silver", yesterday)

	// A backfill request shows in backfill status, stored with its bound.
	day := func(n int) string { return time.Now().UTC().AddDate(0, 0, -n).Format("2006-01-02") }
	cmd(0, "backfill", "silver", "--from", day(5), "--to", day(3), "--only", "all", "--max-active", "1", "--detach")
	if out := cmd(0, "backfill", "status", "silver", "1"); !strings.Contains(out, "backfill 1 of silver") {
		t.Fatalf("backfill status silver 1 printed %q", out)
	}
	if bf, err := st.BackfillGet(ctx, "silver", "1"); err != nil || bf.MaxActive != 1 || bf.From != day(5) || bf.To != day(3) || bf.State != backfill.Running {
		t.Fatalf("the stored backfill: %+v (%v)", bf, err)
	}
	if _, err := st.TimerGet(ctx, "backfill/silver"); err != nil {
		t.Fatalf("the backfill's timer: %v", err)
	}
	if out := cmd(0, "backfill", "cancel", "silver", "1"); !strings.HasPrefix(out, "backfill 1 of silver cancelled") {
		t.Fatalf("backfill cancel printed %q", out)
	}
	if bf, err := st.BackfillGet(ctx, "silver", "1"); err != nil || bf.State != backfill.Cancelled {
		t.Fatalf("the stored backfill after cancel: %+v (%v)", bf, err)
	}

	// silence add, list, expire.
	out = cmd(0, "silence", "add", "--pipeline", "gold", "--duration", "2h", "--comment", "control plane")
	m := regexp.MustCompile(`^silence (\S+) until (\S+)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("silence add printed %q", out)
	}
	id := m[1]
	if list := cmd(0, "silence", "list"); !regexpLine(list, `^`+regexp.QuoteMeta(id)+`\s+active\s.*pipeline=gold`) {
		t.Fatalf("silence list does not show %s active:\n%s", id, list)
	}
	if sl, err := st.SilenceGet(ctx, id); err != nil || sl.Comment != "control plane" || !sl.ExpiredAt.IsZero() {
		t.Fatalf("the stored silence: %+v (%v)", sl, err)
	}
	if out := cmd(0, "silence", "expire", id); !strings.HasPrefix(out, "silence "+id+" ended at ") {
		t.Fatalf("silence expire printed %q", out)
	}
	if sl, err := st.SilenceGet(ctx, id); err != nil || sl.ExpiredAt.IsZero() {
		t.Fatalf("the stored silence after expire: %+v (%v)", sl, err)
	}
	if list := cmd(0, "silence", "list", "--all"); !regexpLine(list, `^`+regexp.QuoteMeta(id)+`\s+ended\s`) {
		t.Fatalf("silence list --all does not show %s ended:\n%s", id, list)
	}

	// events shows what was committed.
	seen := map[string]bool{}
	for _, e := range jsonEvents(t, cmd(0, "events", "--output", "json", "--limit", "1000")) {
		seen[e.Detail.PipelineID+" "+e.Type] = true
	}
	for _, want := range []string{"gold PIPELINE_PAUSED", "gold PIPELINE_RESUMED", "silver RERUN_ACCEPTED"} {
		if !seen[want] {
			t.Errorf("events does not show %s: %v", want, seen)
		}
	}

	// The dashboard's live tail (the event stream) opened now starts at
	// the log's end (the shards' counters), and shows what another
	// process and this serve commit after.
	tail := openStream(t, srv.url)
	var end store.Cursor // the log read forward to its end
	for {
		page, err := st.EventList(ctx, store.EventListParams{After: end, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		end = page.Next
		if len(page.Events) < 1000 {
			break
		}
	}
	if tail.from != end.String() {
		t.Errorf("the live tail starts at %s, want the log's end %s", tail.from, end.String())
	}

	// A function's commit (another process on the tables) reaches both
	// through the tables.
	other := engine.New(engine.Options{Store: st, Clock: clock.Real{}, Passive: true})
	if err := other.Pause(ctx, "silver", time.Time{}, "a function"); err != nil {
		t.Fatal(err)
	}
	follow.waitFor(t, "gold PIPELINE_PAUSED", "gold PIPELINE_RESUMED", "silver PIPELINE_PAUSED")
	cmd(0, "pause", "gold")
	tail.waitFor(t, "silver PIPELINE_PAUSED", "gold PIPELINE_PAUSED")

	// Nothing ran the timers or the watchdog here: the step timer of
	// gold's run is still stored as armed, though due, and no watchdog
	// pass is recorded.
	if tm, err := st.TimerGet(ctx, step.Key); err != nil || !tm.DueAt.Equal(step.DueAt) || time.Now().Before(tm.DueAt) {
		t.Errorf("gold's step timer: %+v (%v), want it stored as armed (%v) and due: a control plane runs no timers", tm, err, step.DueAt)
	}
	if _, err := st.MarkerGet(ctx, run.Key{}, run.MarkerWatchdogPass); err == nil {
		t.Error("a watchdog pass is recorded: a control plane runs no watchdog")
	}
}

// stepTimerOf returns the step timer armed for a pipeline's period.
func stepTimerOf(t *testing.T, st store.Store, pipelineID, period string) store.Timer {
	t.Helper()
	timers, err := st.TimerList(t.Context(), store.TimerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range timers {
		if engine.IsStepTimerKey(tm.Key) && tm.Run.PipelineID == pipelineID && tm.Run.Period == period {
			return tm
		}
	}
	t.Fatalf("no step timer for %s %s among %+v", pipelineID, period, timers)
	return store.Timer{}
}

// follower is a running `interlock events --follow --output json`.
type follower struct {
	lines chan string
}

// followEvents starts `events --follow` against the API: it prints the
// log from its start, then what is committed.
func followEvents(t *testing.T, dir, url string) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, binary, "events", "--follow", "--output", "json", "--server", url)
	c.Dir = dir
	c.Env = append(os.Environ(), "INTERLOCK_TOKEN=")
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	f := &follower{lines: make(chan string, 1000)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
		close(f.lines)
	}()
	t.Cleanup(func() { cancel(); _ = c.Wait() })
	return f
}

// waitFor reads the follower's events until each of want ("PIPELINE
// TYPE") was seen.
func (f *follower) waitFor(t *testing.T, want ...string) {
	t.Helper()
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	deadline := time.After(60 * time.Second)
	for len(missing) > 0 {
		select {
		case l, ok := <-f.lines:
			if !ok {
				t.Fatalf("events --follow ended; still missing %v", missing)
			}
			if l == "" {
				continue
			}
			e := decode[eventLine](t, "an events --follow line", l)
			delete(missing, e.Detail.PipelineID+" "+e.Type)
		case <-deadline:
			t.Fatalf("events --follow did not show %v", missing)
		}
	}
}

// tail is an open GET /v1/events/stream, the dashboard's live tail.
type tail struct {
	follower
	from string // the cursor the stream said it starts from
}

// openStream opens the event stream and reads its first message, which
// says where it starts.
func openStream(t *testing.T, base string) *tail {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/events/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/events/stream: %s", resp.Status)
	}
	t.Cleanup(func() { resp.Body.Close() })
	tl := &tail{follower: follower{lines: make(chan string, 1000)}}
	sc := bufio.NewScanner(resp.Body)
	for tl.from == "" && sc.Scan() {
		if from, ok := strings.CutPrefix(sc.Text(), ": stream from "); ok {
			tl.from = from
		}
	}
	if tl.from == "" {
		t.Fatalf("the event stream ended before saying where it starts: %v", sc.Err())
	}
	go func() {
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				tl.lines <- data
			}
		}
		close(tl.lines)
	}()
	return tl
}

// TestCLIOnAWSTables: every API command of the CLI works against an AWS
// deployment with `--server dynamodb://…` and nothing else running: the
// built binary opens the tables with the caller's AWS credentials and
// serves the command in-process with the control plane's handler — status
// lists the pipelines deploy-config loaded, pause --until and resume
// commit the pause and the timer the deployment realises, a rerun stores
// its run and step timer, a backfill shows in backfill status, silences
// are added, listed and expired, and events reads it all from the tables.
func TestCLIOnAWSTables(t *testing.T) {
	ctx := t.Context()
	st, deployment := awsDeployment(t)
	dir := t.TempDir()
	write := projectWriter(t, dir)
	write("pipelines/gold.yaml", "pipeline: {id: gold, owner: analytics}\nschedule:\n  trigger: {key: upstream, check: exists}\njob: {type: command, config: {command: [\"true\"], timeout: 1m}}\n")
	mustCLI(t, dir, 0, "deploy-config", "pipelines", "--server", deployment)
	cmd := func(want int, args ...string) string {
		t.Helper()
		return mustCLI(t, dir, want, append(args, "--server", deployment)...)
	}

	list := decode[struct{ Pipelines []pipelineDoc }](t, "status --output json", cmd(0, "status", "--output", "json"))
	if len(list.Pipelines) != 1 || list.Pipelines[0].ID != "gold" {
		t.Fatalf("status --output json on the tables: %+v", list.Pipelines)
	}
	cmd(0, "pause", "gold", "--until", "2h")
	row, err := st.PipelineGet(ctx, "gold")
	if err != nil || !row.Paused {
		t.Fatalf("gold after pause on the tables: paused %v (%v)", row.Paused, err)
	}
	if tm, err := st.TimerGet(ctx, "resume/gold"); err != nil || !tm.DueAt.Equal(row.PausedUntil) {
		t.Fatalf("the pause's resume timer: %+v (%v)", tm, err)
	}
	if out := cmd(0, "resume", "gold"); strings.TrimSpace(out) != "gold resumed" {
		t.Fatalf("resume gold printed %q", out)
	}
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
	if out := cmd(0, "rerun", "gold", "--period", yesterday, "--reason", "reprocess"); !strings.Contains(out, "accepted") {
		t.Fatalf("rerun gold printed %q", out)
	}
	stepTimerOf(t, st, "gold", yesterday)
	day := func(n int) string { return time.Now().UTC().AddDate(0, 0, -n).Format("2006-01-02") }
	cmd(0, "backfill", "gold", "--from", day(5), "--to", day(3), "--only", "all", "--max-active", "1", "--detach")
	if out := cmd(0, "backfill", "status", "gold", "1"); !strings.Contains(out, "backfill 1 of gold") {
		t.Fatalf("backfill status on the tables:\n%s", out)
	}
	cmd(0, "silence", "add", "--id", "on-call-1", "--pipeline", "gold", "--duration", "1h", "--comment", "on call")
	if out := cmd(0, "silence", "list"); !strings.Contains(out, "on call") || !strings.Contains(out, "on-call-1") {
		t.Fatalf("silence list on the tables:\n%s", out)
	}
	// A second silence of that name (a retried command) is refused (exit
	// 1, the reason on stderr), printing no silence.
	if out := cmd(1, "silence", "add", "--id", "on-call-1", "--pipeline", "gold", "--duration", "1h"); strings.Contains(out, "on-call-1") {
		t.Fatalf("a second silence on-call-1:\n%s", out)
	}
	if out := cmd(0, "events", "--pipeline", "gold"); !strings.Contains(out, "PIPELINE_PAUSED") || !strings.Contains(out, "PIPELINE_RESUMED") || !strings.Contains(out, "RERUN_ACCEPTED") {
		t.Fatalf("events on the tables:\n%s", out)
	}
	// A deployment that cannot be reached is an error of the run, not of
	// the flags.
	mustCLI(t, dir, 3, "status", "--server", "dynamodb://nowhere?endpoint=http://127.0.0.1:1")
}

// awsDeployment creates an AWS deployment's tables on DynamoDB Local,
// points the SDK's default configuration (the binary's too) at it, and
// returns the store on them and their store URL.
func awsDeployment(t *testing.T) (*ddbstore.Store, string) {
	t.Helper()
	endpoint := ddblocal.Endpoint(t)
	c := ddblocal.Client(t)
	prefix := ddblocal.Prefix(t)
	tables := ddbstore.TablesFor(prefix)
	if err := ddbstore.CreateTables(t.Context(), c, tables); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ddbstore.DeleteTables(context.Background(), c, tables) })
	st, err := ddbstore.Open(t.Context(), ddbstore.Config{Client: c, Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "ddblocal", "AWS_SECRET_ACCESS_KEY": "ddblocal", "AWS_REGION": ddblocal.Region, "AWS_EC2_METADATA_DISABLED": "true"} {
		t.Setenv(k, v)
	}
	return st, "dynamodb://" + prefix + "?endpoint=" + endpoint
}
