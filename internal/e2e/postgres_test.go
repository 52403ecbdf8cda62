package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/testenv/pglocal"
)

// TestServeOnPostgres: `serve --store postgres://…` keeps its state in
// PostgreSQL (the settings' store: is another, unused file): concurrent
// sensor writes trigger the job once, the run survives a kill -9 and a
// restart on the same database, and the rows are in the database.
func TestServeOnPostgres(t *testing.T) {
	t.Parallel()
	u := pglocal.URL(t)
	airflow := newFakeAirflow(t)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"interlock.yaml": `store: sqlite:./not-this.db
pipelines: ./pipelines
server:
  tokens:
    - {name: etl, role: writer, tokenEnv: INTERLOCK_WRITER_TOKEN}
triggers: {allowAddresses: [127.0.0.1/32]}
`,
		"pipelines/gold.yaml": airflowPipeline("gold", airflow.URL),
	} {
		projectWriter(t, dir)(name, body)
	}
	env := []string{"INTERLOCK_WRITER_TOKEN=writer-secret-1"}
	srv := start(t, dir, env, "--store", u)

	put := srv.url + "/v1/pipelines/gold/sensors/upstream"
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if code, body := request(t, "PUT", put, "writer-secret-1", fmt.Sprintf(`{"n": %d}`, i)); code != 200 {
				t.Errorf("sensor write: %d %s", code, body)
			}
		})
	}
	wg.Wait()
	eventually(t, "the job to start", func() bool { return airflow.count() == 1 })
	srv.kill9(t)
	airflow.set("success")
	srv = start(t, dir, env, "--store", u)
	eventually(t, "JOB_COMPLETED after the restart", func() bool { return eventTypes(t, srv, "writer-secret-1")["JOB_COMPLETED"] == 1 })
	if n := airflow.count(); n != 1 {
		t.Fatalf("the DAG was started %d times, want 1", n)
	}
	srv.stop(t)

	if _, err := os.Stat(filepath.Join(dir, "not-this.db")); err == nil {
		t.Fatal("serve --store postgres://… opened the settings' SQLite file too")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var runs, triggered int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM runs WHERE pipeline_id = 'gold' AND NOT active`).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM events WHERE pipeline_id = 'gold' AND type = 'JOB_TRIGGERED'`).Scan(&triggered); err != nil {
		t.Fatal(err)
	}
	if runs != 1 || triggered != 1 {
		t.Fatalf("in PostgreSQL: %d finished runs and %d JOB_TRIGGERED events, want 1 and 1", runs, triggered)
	}
}
