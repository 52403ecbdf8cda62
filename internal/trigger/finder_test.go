package trigger_test

import (
	"context"
	"errors"
	"testing"

	"github.com/interlockhq/interlock/internal/trigger"
)

type plain struct{}

func (plain) Start(context.Context, trigger.Request) (trigger.Started, error) {
	return trigger.Started{}, nil
}
func (plain) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{}, nil
}

type finding struct{ plain }

func (finding) Find(_ context.Context, req trigger.Request) (trigger.Started, bool, error) {
	return trigger.Started{JobRunID: "found-" + req.RunID}, true, nil
}

var (
	_ trigger.Finder = trigger.Registry{}
	_ trigger.Finder = trigger.Guard{}
)

// TestFindable: a job type can be looked up when its runner is a Finder,
// through a Registry and a Guard alike; the others say ErrNotFindable.
func TestFindable(t *testing.T) {
	reg := trigger.Registry{"airflow": finding{}, "glue": plain{}}
	guard := trigger.Guard{Next: reg}
	for _, r := range []trigger.Runner{reg, guard} {
		if !trigger.Findable(r, "airflow") || trigger.Findable(r, "glue") || trigger.Findable(r, "nope") {
			t.Fatalf("%T: findable airflow=%v glue=%v nope=%v", r, trigger.Findable(r, "airflow"), trigger.Findable(r, "glue"), trigger.Findable(r, "nope"))
		}
		f := r.(trigger.Finder)
		st, found, err := f.Find(t.Context(), trigger.Request{Type: "airflow", RunID: "x"})
		if err != nil || !found || st.JobRunID != "found-x" {
			t.Fatalf("%T: Find airflow = %+v %v %v", r, st, found, err)
		}
		if _, found, err := f.Find(t.Context(), trigger.Request{Type: "glue"}); !errors.Is(err, trigger.ErrNotFindable) || found {
			t.Fatalf("%T: Find glue = %v %v", r, found, err)
		}
	}
	if !trigger.Findable(finding{}, "any") || trigger.Findable(plain{}, "any") {
		t.Fatal("a single runner is findable when it is a Finder")
	}
	if _, _, err := reg.Find(t.Context(), trigger.Request{Type: "nope"}); !errors.Is(err, trigger.ErrUnknownType) {
		t.Fatalf("unknown type: %v", err)
	}
	if trigger.Findable(trigger.Guard{Next: plain{}}, "airflow") {
		t.Fatal("a guard around a runner that cannot find is findable")
	}
}

// TestGuardRefusesDryRunLookups: some lookups repeat an idempotent start,
// so a dry-run pipeline's are refused like its starts.
func TestGuardRefusesDryRunLookups(t *testing.T) {
	g := trigger.Guard{Next: trigger.Registry{"airflow": finding{}}}
	if _, found, err := g.Find(t.Context(), trigger.Request{Type: "airflow", DryRun: true}); !errors.Is(err, trigger.ErrDryRun) || found {
		t.Fatalf("Find of a dry-run = %v %v", found, err)
	}
}
