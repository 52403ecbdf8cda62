package file_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/alert/alerttest"
	"github.com/interlockhq/interlock/internal/alert/file"
	"github.com/interlockhq/interlock/internal/event"
)

func ids(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var env event.Envelope
		if err := json.Unmarshal(sc.Bytes(), &env); err != nil {
			t.Fatalf("line %q is not an envelope: %v", sc.Text(), err)
		}
		out = append(out, env.ID)
	}
	return out
}

func open(t *testing.T, path string) *file.Sink {
	t.Helper()
	s, err := file.Open(file.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	alerttest.Run(t, func(t *testing.T) *alerttest.Harness {
		path := filepath.Join(t.TempDir(), "alerts.jsonl")
		s := open(t, path)
		return &alerttest.Harness{
			Sink: s,
			Set: func(m alerttest.Mode) {
				if m == alerttest.Rejected {
					s.Close()
				}
			},
			Received: func() []string { return ids(t, path) },
			Supports: func(m alerttest.Mode) bool { return m == alerttest.OK || m == alerttest.Rejected },
		}
	})
}

func TestAppendsEnvelopes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alerts.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"older"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, path)
	e := alerttest.Events()[0]
	if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	want, _ := json.Marshal(e.Envelope())
	if len(lines) != 2 || lines[0] != `{"id":"older"}` || lines[1] != string(want) {
		t.Fatalf("file:\n%s\nwant the old line, then the envelope", b)
	}
	if s.Name() != "file:"+path {
		t.Errorf("Name = %q", s.Name())
	}
}

// After a restart the Deliverer may hand the file sink the alert it wrote
// last (the cursor had not moved yet): it is not written twice.
func TestRedeliveryOfTheLastLineIsSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alerts.jsonl")
	es := alerttest.Events()
	s := open(t, path)
	for _, e := range es[:2] {
		if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = open(t, path) // the restarted process
	for _, e := range es[1:3] {
		if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := ids(t, path), []string{es[0].ID, es[1].ID, es[2].ID}; !slices.Equal(got, want) {
		t.Fatalf("ids %q, want %q", got, want)
	}
}

func TestTornLastLineIsCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alerts.jsonl")
	es := alerttest.Events()
	whole, _ := json.Marshal(es[0].Envelope())
	torn, _ := json.Marshal(es[1].Envelope())
	if err := os.WriteFile(path, append(append(whole, '\n'), torn[:20]...), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, path)
	for _, e := range es[:3] { // es[0] is the last complete line: skipped
		if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := ids(t, path), []string{es[0].ID, es[1].ID, es[2].ID}; !slices.Equal(got, want) {
		t.Fatalf("ids %q, want %q", got, want)
	}
}

func TestUnwritablePathFailsAtOpen(t *testing.T) {
	dir := t.TempDir()
	if _, err := file.Open(file.Config{Path: filepath.Join(dir, "missing", "alerts.jsonl")}); err == nil {
		t.Error("a path in a missing directory opened")
	}
	if os.Geteuid() == 0 {
		t.Skip("root can write a read-only file")
	}
	ro := filepath.Join(dir, "ro.jsonl")
	if err := os.WriteFile(ro, nil, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := file.Open(file.Config{Path: ro}); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("read-only file: err = %v, want permission denied", err)
	}
}
