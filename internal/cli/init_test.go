package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitScaffoldIsValidAndSimulates: what init creates validates and its
// scenario passes, so a newcomer's first two commands work.
func TestInitScaffoldIsValidAndSimulates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	code, out, errOut := run(t, "init", dir)
	if code != ExitOK || !strings.Contains(out, "created") {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	for _, f := range []string{"interlock.yaml", "pipelines/example.yaml", "calendars/holidays.yaml", "scenarios/example.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	code, out, _ = run(t, "validate", "--config", filepath.Join(dir, "interlock.yaml"))
	if code != ExitOK {
		t.Fatalf("validate the scaffold: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "simulate", "--quiet", filepath.Join(dir, "scenarios", "example.yaml"))
	if code != ExitOK || !strings.Contains(out, "1 passed, 0 failed") {
		t.Fatalf("simulate the scaffold: exit %d\n%s", code, out)
	}
	// A second init refuses to overwrite, naming the files.
	code, _, errOut = run(t, "init", dir)
	if code != ExitFailed || !strings.Contains(errOut, "interlock.yaml") || !strings.Contains(errOut, "--force") {
		t.Fatalf("second init: exit %d %s", code, errOut)
	}
	if code, _, _ = run(t, "init", "--force", dir); code != ExitOK {
		t.Fatalf("init --force: exit %d", code)
	}
}
