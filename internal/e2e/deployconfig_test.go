package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeployConfigLoadsAnAWSDeployment: `interlock deploy-config` (the
// built binary) validates the files as `validate` does and refuses them all
// when one is invalid — nothing written, each error with file and line; a
// pipeline whose job call cannot finish inside the orchestrator's
// invocation (--orchestrator-timeout) is invalid there —
// then loads valid ones into the deployment's control table, says what
// changed, is a no-op the second time, and with --prune stops a pipeline no
// file defines any more.
func TestDeployConfigLoadsAnAWSDeployment(t *testing.T) {
	ctx := t.Context()
	st, server := awsDeployment(t)

	dir := t.TempDir()
	write := writer(t, dir)
	const orders = "pipeline: {id: orders}\nschedule:\n  trigger: {key: orders-landed, check: equals, field: status, value: ready}\n  exclude: {calendar: closures}\njob: {type: command, config: {command: [\"true\"], timeout: 1m}}\n"
	const refunds = "pipeline: {id: refunds}\nschedule:\n  trigger: {key: refunds-landed, check: exists}\njob: {type: command, config: {command: [\"true\"], timeout: 1m}}\n"
	write("calendars/closures.yaml", "name: closures\ndates: [\"2099-12-25\"]\n")
	write("pipelines/orders.yaml", orders)
	write("pipelines/refunds.yaml", refunds)
	// One invalid file among valid ones: a typo on line 3.
	write("pipelines/broken.yaml", "pipeline: {id: broken}\nschedule:\n  triger: {key: x, check: exists}\njob: {type: command, config: {command: [\"true\"]}}\n")

	code, out, errOut := cli(t, dir, "deploy-config", "calendars", "pipelines", "--server", server)
	if code != 1 || !strings.Contains(out, "pipelines/broken.yaml:3") || !strings.Contains(errOut, "nothing was written") {
		t.Fatalf("an invalid file: exit %d, want 1 naming pipelines/broken.yaml:3\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if rows, err := st.PipelineList(ctx); err != nil || len(rows) != 0 {
		t.Fatalf("after a refused deploy-config the store holds %d pipeline(s) (%v): want none", len(rows), err)
	}
	if cals, err := st.CalendarList(ctx); err != nil || len(cals) != 0 {
		t.Fatalf("after a refused deploy-config the store holds %d calendar(s) (%v): want none", len(cals), err)
	}

	if err := os.Remove(filepath.Join(dir, "pipelines/broken.yaml")); err != nil {
		t.Fatal(err)
	}

	// A job call that cannot finish inside the orchestrator's invocation
	// (5 minutes by default, 15 s kept to record the answer): refused like
	// an invalid file, naming the file, the line and the field.
	write("pipelines/slow.yaml", "pipeline: {id: slow}\nschedule:\n  trigger: {key: k, check: exists}\njob:\n  type: http\n  config:\n    url: https://example.com/run\n    timeout: 10m\n")
	code, out, errOut = cli(t, dir, "deploy-config", "calendars", "pipelines", "--server", server)
	if code != 1 || !strings.Contains(out, "pipelines/slow.yaml:8") || !strings.Contains(out, "job.config.timeout") || !strings.Contains(out, "4m45s or less") || !strings.Contains(errOut, "nothing was written") {
		t.Fatalf("a job call longer than the orchestrator: exit %d, want 1 naming pipelines/slow.yaml:8 and job.config.timeout\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// A command job that sets no timeout may run an hour.
	write("pipelines/slow.yaml", "pipeline: {id: slow}\nschedule:\n  trigger: {key: k, check: exists}\njob: {type: command, config: {command: [\"true\"]}}\n")
	if code, out, _ = cli(t, dir, "deploy-config", "calendars", "pipelines", "--server", server, "--orchestrator-timeout", "15m"); code != 1 || !strings.Contains(out, "pipelines/slow.yaml:4") || !strings.Contains(out, "default, 1h0m0s") {
		t.Fatalf("a command job with the default timeout: exit %d, want 1 naming pipelines/slow.yaml:4\n%s", code, out)
	}
	if rows, err := st.PipelineList(ctx); err != nil || len(rows) != 0 {
		t.Fatalf("after a refused deploy-config the store holds %d pipeline(s) (%v): want none", len(rows), err)
	}
	if err := os.Remove(filepath.Join(dir, "pipelines/slow.yaml")); err != nil {
		t.Fatal(err)
	}
	out = mustCLI(t, dir, 0, "deploy-config", "calendars", "pipelines", "--server", server)
	for _, want := range []string{"calendar closures: created", "pipeline orders: created from pipelines/orders.yaml", "pipeline refunds: created", ": 3 change(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the first load does not say %q:\n%s", want, out)
		}
	}
	row, err := st.PipelineGet(ctx, "orders")
	if err != nil || string(row.Doc) != orders {
		t.Fatalf("the stored orders pipeline is %q (%v)", row.Doc, err)
	}

	// The same files again: nothing changes.
	out = mustCLI(t, dir, 0, "deploy-config", "calendars", "pipelines", "--server", server)
	if !strings.Contains(out, "pipeline orders: unchanged") || !strings.Contains(out, ": 0 change(s)") {
		t.Errorf("a second load of the same files:\n%s", out)
	}

	// A changed pipeline and a removed one, with --prune.
	write("pipelines/orders.yaml", strings.Replace(orders, "value: ready", "value: done", 1))
	if err := os.Remove(filepath.Join(dir, "pipelines/refunds.yaml")); err != nil {
		t.Fatal(err)
	}
	out = mustCLI(t, dir, 0, "deploy-config", "calendars", "pipelines", "--server", server, "--prune")
	if !strings.Contains(out, "pipeline orders: updated") || !strings.Contains(out, "pipeline refunds: stopped") {
		t.Errorf("an update with --prune:\n%s", out)
	}
	if row, err := st.PipelineGet(ctx, "refunds"); err != nil || row.RemovedAt.IsZero() {
		t.Errorf("refunds after --prune: removed at %v (%v), want removed", row.RemovedAt, err)
	}

	// Usage errors write nothing either.
	for _, args := range [][]string{
		{"deploy-config", "pipelines", "--server", server, "--orchestrator-timeout", "16m"},
		{"deploy-config", "pipelines", "--server", server, "--orchestrator-timeout", "10s"},
		{"deploy-config", "pipelines"},
		{"deploy-config", "pipelines", "--server", "http://127.0.0.1:7070"},
		{"deploy-config", "--server", server},
	} {
		if code, _, _ := cli(t, dir, args...); code != 2 {
			t.Errorf("interlock %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
}
