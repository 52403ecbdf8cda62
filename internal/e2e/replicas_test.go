package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/testenv/pglocal"
)

// TestReplicasOnPostgres: three `serve` processes share one PostgreSQL,
// each with its own copy of the project (as on three machines). Sensors
// for three pipelines are written to all three at once; each pipeline's
// DAG is started once. The replica running the watchdog is killed with
// kill -9 while the jobs run: the others finish the jobs (no second start),
// deliver every alert to the webhook once, and the watchdog's passes go on
// in another replica.
func TestReplicasOnPostgres(t *testing.T) {
	t.Parallel()
	u := pglocal.URL(t)
	airflow := newFakeAirflow(t)
	hook := newReceiver(t)
	pipelines := []string{"gold", "silver", "bronze"}
	var dirs []string
	for range 3 {
		dir := t.TempDir()
		files := map[string]string{
			"interlock.yaml": replicaSettings(fmt.Sprintf(`
  - {type: webhook, url: %q, secretEnv: INTERLOCK_HOOK_SECRET, match: {types: [VALIDATION_PASSED, JOB_TRIGGERED, JOB_COMPLETED]}}
`, hook.URL)),
		}
		for _, p := range pipelines {
			files["pipelines/"+p+".yaml"] = airflowPipeline(p, airflow.URL)
		}
		for name, body := range files {
			projectWriter(t, dir)(name, body)
		}
		dirs = append(dirs, dir)
	}
	env := []string{"INTERLOCK_WRITER_TOKEN=writer-secret-1", "INTERLOCK_HOOK_SECRET=hook-secret-1"}
	var srvs []*server
	for _, dir := range dirs {
		srvs = append(srvs, start(t, dir, env, "--store", u))
	}
	defer func() {
		for _, s := range srvs {
			if s != nil {
				s.stop(t)
			}
		}
	}()

	// Every sensor to every replica at once.
	var wg sync.WaitGroup
	for _, s := range srvs {
		for _, p := range pipelines {
			for i := range 3 {
				wg.Go(func() {
					if code, body := request(t, "PUT", s.url+"/v1/pipelines/"+p+"/sensors/upstream", "writer-secret-1", fmt.Sprintf(`{"n": %d}`, i)); code != 200 {
						t.Errorf("sensor write: %d %s", code, body)
					}
				})
			}
		}
	}
	wg.Wait()
	eventually(t, "the three jobs to start", func() bool { return airflow.count() == 3 })
	// Kill only once the start alerts are recorded as delivered (a process
	// killed between a send and its record sends again: at least once), so
	// that "once" below is what is tested.
	delivered := func() int {
		n := 0
		for _, s := range srvs {
			if s != nil {
				n += strings.Count(s.out.String(), "alert delivered")
			}
		}
		return n
	}
	eventually(t, "the start alerts to be delivered", func() bool { return delivered() >= 6 })

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var holder string
	eventually(t, "a watchdog lease", func() bool {
		return conn.QueryRow(ctx, `SELECT holder FROM leases WHERE name = 'watchdog'`).Scan(&holder) == nil
	})
	victim := slices.IndexFunc(dirs, func(d string) bool { return strings.HasSuffix(holder, filepath.Join(d, "interlock.yaml")) })
	if victim < 0 {
		t.Fatalf("the watchdog's lease is held by %q, none of the replicas %v", holder, dirs)
	}
	lastPass := func() int64 {
		var at int64
		err := conn.QueryRow(ctx, `SELECT at FROM markers WHERE kind = 'watchdog-pass'`).Scan(&at)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatal(err)
		}
		return at
	}
	before := lastPass()
	srvs[victim].kill9(t)
	killed := srvs[victim]
	srvs[victim] = nil

	airflow.set("success")
	alive := slices.DeleteFunc(slices.Clone(srvs), func(s *server) bool { return s == nil })
	eventually(t, "JOB_COMPLETED for every pipeline", func() bool {
		code, body := request(t, "GET", alive[0].url+"/v1/events?limit=1000", "writer-secret-1", "")
		return code == 200 && strings.Count(body, `"detail-type":"JOB_COMPLETED"`) == 3
	})
	if n := airflow.count(); n != 3 {
		t.Fatalf("%d DAG runs started, want 3 (one per pipeline)", n)
	}
	eventually(t, "a watchdog pass by another replica", func() bool { return lastPass() > before })
	var newHolder string
	if err := conn.QueryRow(ctx, `SELECT holder FROM leases WHERE name = 'watchdog'`).Scan(&newHolder); err != nil || newHolder == holder {
		t.Errorf("the watchdog's lease after the kill: %q (%v), want another replica's than %q", newHolder, err, holder)
	}

	// The dead replica's alerts wait for its sink lease to lapse
	// (alert.DefaultLeaseTTL, 30 s): a bound of its own, generous beside
	// the other tests of the package running at once.
	eventuallyWithin(t, 2*time.Minute, "every alert at the webhook", func() bool { return len(hook.received()) >= 9 })
	time.Sleep(2 * time.Second) // a duplicate would arrive now
	got := hook.received()
	seen := map[string]bool{}
	for _, g := range got {
		id, sig, _ := strings.Cut(g, " ")
		if id == "" || sig == "" || seen[id] {
			t.Errorf("webhook deliveries not once each and signed: %v", got)
			break
		}
		seen[id] = true
	}
	if len(got) != 9 {
		t.Errorf("webhook got %d deliveries, want 9 (3 pipelines × VALIDATION_PASSED, JOB_TRIGGERED, JOB_COMPLETED): %v", len(got), got)
	}
	if t.Failed() {
		for i, s := range append(alive, killed) {
			t.Logf("replica %d:\n%s", i, s.out.String())
		}
	}
}

// replicaSettings is the interlock.yaml of a replica in the replica tests:
// a writer token, triggers to loopback, a 10 s watchdog and the alerts
// given (YAML list items).
func replicaSettings(alerts string) string {
	return `pipelines: ./pipelines
server:
  tokens:
    - {name: etl, role: writer, tokenEnv: INTERLOCK_WRITER_TOKEN}
triggers: {allowAddresses: [127.0.0.1/32]}
watchdog: {interval: 10s}
alerts:` + alerts
}
