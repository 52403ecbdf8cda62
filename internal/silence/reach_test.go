package silence

import (
	"testing"

	"github.com/interlockhq/interlock/internal/event"
)

func TestMatchersReaches(t *testing.T) {
	cases := []struct {
		name      string
		m         Matchers
		id, owner string
		want      bool
	}{
		{"a glob on the id", Matchers{Pipelines: []string{"gold-*"}}, "gold-revenue", "finance", true},
		{"a glob that does not match", Matchers{Pipelines: []string{"gold-*"}}, "silver-orders", "finance", false},
		{"an owner", Matchers{Owners: []string{"finance"}}, "ledger", "finance", true},
		{"another owner", Matchers{Owners: []string{"finance"}}, "ledger", "treasury", false},
		{"glob and owner: both", Matchers{Pipelines: []string{"*l*"}, Owners: []string{"finance"}}, "alpha", "platform", false},
		{"types only: every pipeline, some events", Matchers{Types: []event.Type{event.SLAWarning}}, "any", "", true},
		{"empty: nothing", Matchers{}, "any", "", false},
	}
	for _, c := range cases {
		if got := c.m.Reaches(c.id, c.owner); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
