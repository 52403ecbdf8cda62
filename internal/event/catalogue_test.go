package event

import (
	"os"
	"path/filepath"
	"slices"
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

// TestEveryTypeHasAGroup: filters name groups (InGroup), so a type
// without one would be missed by every filter.
func TestEveryTypeHasAGroup(t *testing.T) {
	count := map[Group]int{}
	for _, typ := range Types() {
		s, _ := Lookup(typ)
		if !slices.Contains(Groups(), s.Group) {
			t.Errorf("%s: group %q is not listed", typ, s.Group)
		}
		count[s.Group]++
		if !InGroup(typ, s.Group) || InGroup(typ) {
			t.Errorf("InGroup(%s) disagrees with its spec", typ)
		}
	}
	for _, g := range Groups() {
		if count[g] == 0 {
			t.Errorf("group %s has no type", g)
		}
	}
	if InGroup("DRY_RUN_NOT_A_TYPE", GroupDryRun) {
		t.Error("InGroup accepted a type not in the catalogue")
	}
}

// TestGroupsFollowNames pins the groups whose names share a prefix to
// that prefix, both ways: the catalogue, not the name, decides, and this
// says the two agree.
func TestGroupsFollowNames(t *testing.T) {
	for _, typ := range Types() {
		for g, pfx := range map[Group]string{GroupDryRun: "DRY_RUN_", GroupBackfill: "BACKFILL_", GroupSilence: "SILENCE_"} {
			if InGroup(typ, g) != strings.HasPrefix(string(typ), pfx) {
				t.Errorf("%s: in %s = %v", typ, g, InGroup(typ, g))
			}
		}
	}
}
