package engine

import (
	"context"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/eventid"

	"github.com/interlockhq/interlock/internal/run"
)

// batch is one decision's outcome (decide.Outcome: the writes of a
// single atomic commit) with the engine's side of it: the facts it reads
// and the ids its events are numbered from.
type batch struct {
	*decide.Outcome
	e *Engine
	// f are the stored facts the decision reads (facts.go): an input's
	// loaded facts, or read as asked.
	f *facts
	// ids numbers the batch's events (its decision calls ids.Next, in
	// package eventid: down, not back into the engine): from a block
	// reserved ahead when one is set, so decisions made at the same time
	// log their events of one instant in the order the blocks were
	// reserved; else fresh ids.
	ids eventid.Block
}

// env is what the batch gives each decision it makes: the engine's rule
// options and the batch's event numbering.
func (b *batch) env() decide.Env { return decide.Env{Rules: b.e.rules, NewID: b.ids.Next} }

// commitThen commits the batch (commit) and, once it is committed, calls
// committed: what the caller answers of a commit made.
func (b *batch) commitThen(ctx context.Context, committed func()) error {
	if err := b.commit(ctx); err != nil {
		return err
	}
	committed()
	return nil
}

// logs logs what a decision asked to log.
func (e *Engine) logs(ctx context.Context, ls []decide.Log) {
	for _, l := range ls {
		e.log.Log(ctx, l.Level, l.Msg, l.Args...)
	}
}

// commit writes the batch, on the condition that the pipeline facts it
// was decided on still hold (store.ErrConflict otherwise: the caller
// decides again on fresh facts). An empty batch commits nothing. The
// root causes of its events are looked up first (decide.RootCauses), in
// further rounds of its facts.
func (b *batch) commit(ctx context.Context) error {
	b.e.logs(ctx, b.TakeLogs())
	if b.C.Empty() {
		return nil
	}
	if err := b.f.decideOn(ctx, b.RootCauses); err != nil {
		return err
	}
	if err := b.e.st.Commit(ctx, b.Conditioned()); err != nil {
		return err
	}
	if len(b.C.Timers)+len(b.C.TimerDeletes) > 0 {
		b.e.notify()
	}
	if len(b.C.Events) > 0 && b.e.events != nil {
		b.e.events(b.C.Events)
	}
	return nil
}

// Timer kinds (store.Timer.Kind). Keys are run.TimerKey records
// (run/timerkey.go builds and reads them); a run has at most one step
// timer, whose kind says which step is due (the step entry points,
// steps.go). Every other kind is decide.Timer's; the watchdog lists the
// SLA breach timers.
const kindSLABreach = string(run.TimerSLABreach)

func stepTimerKey(k run.Key) string { return decide.StepTimerKey(k) }

// IsStepTimerKey reports whether a timer key is a run's step timer — for a
// runtime that learns of a removed timer by its key alone.
func IsStepTimerKey(key string) bool {
	k, err := run.ParseTimerKey(key)
	return err == nil && k.Family == run.TimerStep
}
func cronTimerKey(pipelineID string) string {
	return run.PipelineTimer(run.TimerCron, pipelineID).String()
}
