package decide

import (
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Root causes (docs/root-cause.md): every event an outcome holds is
// looked at before it is committed (RootCauses), so that is where a
// downstream problem is found blocked by its upstream's (deps.RootCause).
// The facts are the decision's — the upstreams' configs and their
// periods' facts — read in further rounds when the needs did not name
// them (not late: a root cause is found as it is found), never
// remembered.

// upstreams answers deps.RootCause from a decision's facts.
type upstreams struct {
	f    *Facts
	own  *pipeline.Pipeline // the decision's own config, as it read it
	keep bool               // a missing fact is a further round, not late
}

func (u upstreams) round(err error) error {
	if m, ok := AsMissing(err); ok && u.keep {
		m.AsRounds()
	}
	return err
}

func (u upstreams) Pipeline(id string) (*pipeline.Pipeline, error) {
	if u.own != nil && u.own.ID == id {
		return u.own, nil
	}
	lp, err := u.f.Pipeline(id)
	if err != nil || lp == nil {
		return nil, u.round(err)
	}
	return lp.P, nil
}

func (u upstreams) Facts(key run.Key) (deps.ConditionFacts, error) {
	f, err := ConditionFacts(u.f, key)
	return f, u.round(err)
}

// ConditionFacts are the condition facts of a period from the facts
// (store.ConditionFactsFrom): its pipeline's row, its run under either
// schedule id, its markers.
func ConditionFacts(f *Facts, key run.Key) (deps.ConditionFacts, error) {
	var row *store.Pipeline
	p, ok, err := f.PipelineRow(key.PipelineID)
	if err != nil {
		return deps.ConditionFacts{}, err
	}
	if ok {
		row = &p
	}
	var found *run.Run
	for i, k := range []run.Key{key, run.OtherSchedule(key)} {
		if i > 0 && k == key {
			break
		}
		r, err := f.Run(k)
		if err != nil {
			return deps.ConditionFacts{}, err
		}
		if r != nil {
			found = r
			break
		}
	}
	ms, err := f.MarkersOf(key)
	if err != nil {
		return deps.ConditionFacts{}, err
	}
	return store.ConditionFactsFrom(row, found, ms), nil
}

// RootCauses stores each problem event of the outcome that an upstream
// root explains as blocked by it (Detail.blockedBy, without released: a
// released alert explained by another root is blocked again), with the
// marker on the root's period its release reads. Every root is looked up
// before any event changes, so a *Missing answer leaves the outcome as
// it was.
func (o *Outcome) RootCauses() error {
	ups := upstreams{f: o.F, own: o.P, keep: true}
	type found struct {
		i    int
		p    *pipeline.Pipeline
		root deps.BlockedBy
	}
	var roots []found
	for i, e := range o.C.Events {
		if !deps.SeeksRoot(e) {
			continue
		}
		p, err := ups.Pipeline(e.PipelineID)
		if err != nil {
			return err
		}
		per, err := schedule.ParsePeriod(e.Date)
		if err != nil {
			continue
		}
		root, ok, err := deps.RootCause(ups, p, per, o.Now)
		if err != nil {
			return err
		}
		if ok {
			roots = append(roots, found{i, p, root})
		}
	}
	for _, r := range roots {
		e := &o.C.Events[r.i]
		e.Detail = deps.BlockedDetail(e.Detail, r.root)
		c := deps.BlockedOf(r.p, *e)
		o.PutMarker(store.Marker{Key: r.root.Key(), Kind: run.BlockedMarker(c.Down, c.Type).String(), At: o.Now, Detail: c.MarkerDetail()})
	}
	return nil
}
