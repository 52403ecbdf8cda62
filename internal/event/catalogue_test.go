package event

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryTypeHasALevelAndSummary(t *testing.T) {
	levels := map[Level]bool{}
	for _, l := range Levels() {
		levels[l] = true
	}
	for _, typ := range Types() {
		s, ok := Lookup(typ)
		if !ok || !levels[s.Level] || s.Summary == "" || s.Type != typ {
			t.Errorf("%s: %+v", typ, s)
		}
	}
	if _, ok := Lookup("NOT_AN_EVENT"); ok {
		t.Error("Lookup accepted an unknown type")
	}
}

// TestLifecycleDocListsEveryType keeps the user documentation honest: every
// event type in the catalogue is described in docs/lifecycle.md.
func TestLifecycleDocListsEveryType(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "lifecycle.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range Types() {
		if !strings.Contains(string(doc), "`"+string(typ)+"`") {
			t.Errorf("docs/lifecycle.md does not describe %s", typ)
		}
	}
}

func TestEnvelope(t *testing.T) {
	e := Event{ID: "1", Type: SLABreach, PipelineID: "p", Date: "2026-03-10"}
	env := e.Envelope()
	if env.Source != "interlock" || env.DetailType != SLABreach || env.Detail.Level != LevelError || env.Detail.Detail != nil {
		t.Fatalf("envelope: %+v", env)
	}
	if (Event{Type: "UNKNOWN"}).Level() != LevelError {
		t.Fatal("unknown types must not be quietly low-level")
	}
}
