package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// chain builds pipelines from "down:up1,up2" specs.
func chain(t *testing.T, specs ...string) []*Pipeline {
	t.Helper()
	var out []*Pipeline
	for _, s := range specs {
		id, ups, _ := strings.Cut(s, ":")
		doc := fmt.Sprintf("pipeline: {id: %s}\nschedule: {cron: '0 6 * * *'}\njob: {type: command, config: {command: /bin/true}}\n", id)
		if ups != "" {
			doc += "validation:\n  rules:\n"
			for _, u := range strings.Split(ups, ",") {
				doc += fmt.Sprintf("    - {check: upstream, pipeline: %s}\n", u)
			}
		}
		p, err := ParsePipeline(id+".yaml", []byte(doc), Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestCycle(t *testing.T) {
	cases := []struct {
		name  string
		specs []string
		want  []string
	}{
		{"none", []string{"a", "b:a", "c:a,b"}, nil},
		{"two", []string{"a:b", "b:a"}, []string{"a", "b", "a"}},
		// b waits for a, c for b, a for c: a feeds b, b feeds c, c feeds a.
		{"three, named in the direction data flows", []string{"a:c", "b:a", "c:b", "d:a"}, []string{"a", "b", "c", "a"}},
		{"unknown upstreams are no edge", []string{"a:x", "b:a"}, nil},
		{"a cycle off the first pipeline", []string{"a", "b:c,a", "c:d", "d:c"}, []string{"c", "d", "c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := chain(t, c.specs...)
			got := Cycle(ps)
			if !slices.Equal(got, c.want) {
				t.Fatalf("Cycle = %v, want %v", got, c.want)
			}
			slices.Reverse(ps)
			if again := Cycle(ps); len(again) != len(got) {
				t.Errorf("in another order Cycle = %v, want one of %d ids", again, len(got))
			}
		})
	}
	err := CycleError([]string{"a", "b", "a"})
	if !errors.Is(err, ErrCycle) || !strings.Contains(err.Error(), "upstream cycle: a -> b -> a") {
		t.Errorf("CycleError = %v", err)
	}
}

func TestUpstreamsParsed(t *testing.T) {
	p, err := LoadPipelineFile("testdata/valid/upstream.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Upstream{{Pipeline: "orders", Rule: 0}, {Pipeline: "clicks", Offset: -1, AllHours: true, Rule: 1}}
	if !slices.Equal(p.Upstreams, want) || !slices.Equal(p.Validation.Upstreams, want) {
		t.Fatalf("Upstreams = %+v, want %+v", p.Upstreams, want)
	}
	if len(p.Validation.Rules) != 0 {
		t.Errorf("sensor rules = %+v, want none", p.Validation.Rules)
	}
	if got := p.UpstreamIDs(); !slices.Equal(got, []string{"clicks", "orders"}) {
		t.Errorf("UpstreamIDs = %v", got)
	}
}

func TestCycleThrough(t *testing.T) {
	cases := []struct {
		name    string
		p       string
		running []string
		want    []string
	}{
		{"no upstream rule closes none", "a", []string{"b:a"}, nil},
		{"closing one", "a:b", []string{"b:a"}, []string{"a", "b", "a"}},
		{"its own running version is replaced", "a", []string{"a:b", "b:a"}, nil},
		{"its own running version does not close one for it", "a:c", []string{"a:b", "b:a", "c"}, nil},
		{"no cycle", "c:a", []string{"a", "b:a"}, nil},
		{"a cycle among the others is not through it", "d:a", []string{"a", "b:c", "c:b"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := chain(t, append([]string{c.p}, c.running...)...)
			if got := CycleThrough(ps[0], ps[1:]); !slices.Equal(got, c.want) {
				t.Fatalf("CycleThrough = %v, want %v", got, c.want)
			}
		})
	}
}
