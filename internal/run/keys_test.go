package run

import "testing"

// TestKeyHasPrefix pins how a trigger or post-run rule key (a prefix)
// matches sensor keys. A key "go#<suffix>" counted as the trigger key
// "go" whatever the suffix, so "go#2026-11-23T05:00" opened today's run;
// now a '#' suffix belongs to the base key only when it is a period.
func TestKeyHasPrefix(t *testing.T) {
	for _, c := range []struct {
		key, prefix string
		want        bool
	}{
		{"go", "go", true},
		{"go-v2", "go", true}, // documented: pick keys that are not prefixes of each other
		{"go#2026-11-23", "go", true},
		{"go#20261123T05", "go", true},
		{"go-v2#20261123T05", "go", true},
		{"go#2026-11-23T05:00", "go", false},
		{"go#2026-11-25T", "go", false},
		{"go#20261125T05Z", "go", false},
		{"go#2026-11-25 05", "go", false},
		{"go#2026112", "go", false},
		{"go#202611250", "go", false},
		{"go#2026/11/25", "go", false},
		{"go#20260230", "go", false}, // shaped, no date
		{"go#eu", "go", false},
		{"orders#eu", "orders", false},
		{"orders#eu", "orders#eu", true},
		{"orders#eu#2026-03-10", "orders#eu", true},
		{"orders#eu#2026-03-10", "orders", false},
		{"orders#eu-west", "orders#eu", true},
		{"orders#20260310#eu", "orders", false}, // the last '#' decides
		{"go", "go-v2", false},
		{"g", "go", false},
		{"#20260310", "", false},
		{"anything", "", false},
	} {
		if got := KeyHasPrefix(c.key, c.prefix); got != c.want {
			t.Errorf("KeyHasPrefix(%q, %q) = %v, want %v", c.key, c.prefix, got, c.want)
		}
	}
}

// TestTriggerAndPostRunKeysMatchAlike: both rule kinds use KeyHasPrefix.
func TestTriggerAndPostRunKeysMatchAlike(t *testing.T) {
	p := mustPipeline(t, `
pipeline: {id: p1}
schedule:
  trigger: {key: go, check: exists}
validation:
  rules: [{key: go, check: exists}]
postRun:
  rules: [{key: audit, check: exists}]
job: {type: command, config: {command: /bin/true}}
`)
	for key, want := range map[string]bool{"go": true, "go#2026-11-23": true, "go#2026-11-23T05:00": false, "go#eu": false, "audit": false} {
		if got := MatchesTrigger(p, key); got != want {
			t.Errorf("MatchesTrigger(%q) = %v, want %v", key, got, want)
		}
	}
	for key, want := range map[string]bool{"audit": true, "audit-2": true, "audit#20261123T05": true, "audit#eu": false, "go": false} {
		if _, got := MatchesPostRun(p, key); got != want {
			t.Errorf("MatchesPostRun(%q) = %v, want %v", key, got, want)
		}
	}
}
