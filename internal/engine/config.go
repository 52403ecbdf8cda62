package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
)

// ApplyConfig loads a pipeline document as a reload does: a valid document
// is stored as the pipeline's new version and takes effect at once; an
// invalid one is refused with a CONFIG_INVALID event and the last valid
// version keeps running (product spec §3 item 1). The returned error is the
// document's confdec.Errors when it is invalid.
func (e *Engine) ApplyConfig(ctx context.Context, file string, doc []byte) (_ *pipeline.Pipeline, err error) {
	ctx, span := e.startSpan(ctx, spanConfig, attrConfigFile.String(file))
	defer func() { endSpan(span, err) }()
	all, err := e.calendars(ctx)
	if err != nil {
		return nil, err
	}
	p, err := pipeline.ParsePipeline(file, doc, e.parseOptions(all, true))
	if err == nil {
		var refused error
		if refused, err = e.activate(ctx, p, doc); err != nil {
			return p, err
		}
		err = refused // its upstreams close a cycle (decide.CycleCheck)
	}
	if err != nil {
		e.configInvalid(ctx, file, doc, err)
		return nil, err
	}
	// The file is valid again: breaking it later, even the same way, is news.
	e.clearConfigInvalid(ctx, file, doc)
	return p, nil
}

// RefuseConfig refuses a document for a reason only its caller can see
// (say, another file defines the same pipeline): CONFIG_INVALID, once per
// content, as for an invalid document.
func (e *Engine) RefuseConfig(ctx context.Context, file string, doc []byte, cause error) {
	e.configInvalid(ctx, file, doc, cause)
}

// configInvalidMarker is where CONFIG_INVALID of file is remembered, so a
// refused file is reported once per content, not once per process (a
// restart, each `interlock watchdog --once`).
func configInvalidMarker(file string, doc []byte) (run.Key, string, string) {
	name := sha256.Sum256([]byte(file))
	content := sha256.Sum256(doc)
	return run.Key{PipelineID: PipelineIDOf(file, doc)}, run.ConfigInvalidMarker(hex.EncodeToString(name[:8])).String(), hex.EncodeToString(content[:])
}

func (e *Engine) clearConfigInvalid(ctx context.Context, file string, doc []byte) {
	key, kind, _ := configInvalidMarker(file, doc)
	err := e.retry(ctx, "config accepted "+file, func(ctx context.Context) error {
		f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.ConfigRefusal(key.PipelineID) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		if err := decideOutcome(ctx, b, func(f *decide.Facts) (*decide.Outcome, error) {
			return decide.ConfigAccepted(key, kind, f, e.clk.Now())
		}); err != nil {
			return err
		}
		return b.commit(ctx)
	})
	if err != nil {
		e.log.WarnContext(ctx, "cannot clear the CONFIG_INVALID marker", "file", file, "err", err)
	}
}

// configInvalid records CONFIG_INVALID (decide.ConfigRefusal), once per
// content. The pipeline id is read from the document when it can be, so
// the event lands on the right pipeline.
func (e *Engine) configInvalid(ctx context.Context, file string, doc []byte, cause error) {
	key, kind, sum := configInvalidMarker(file, doc)
	msgs := []string{cause.Error()}
	var errs confdec.Errors
	if errors.As(cause, &errs) {
		msgs = msgs[:0]
		for _, x := range errs {
			msgs = append(msgs, x.Error())
		}
	}
	var reported bool
	err := e.retry(ctx, "config refusal "+file, func(ctx context.Context) error {
		f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.ConfigRefusal(key.PipelineID) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.ConfigRefusalIn{File: file, Key: key, Kind: kind, Sum: sum, Msgs: msgs, Env: b.env()}
		reported, err = decideWith(ctx, b, decide.ConfigRefusal, in, e.clk.Now())
		if err != nil || reported {
			return err
		}
		return b.commit(ctx)
	})
	if reported {
		e.log.DebugContext(ctx, "pipeline config still refused; already reported", "file", file)
		return
	}
	if err != nil {
		e.log.ErrorContext(ctx, "cannot record CONFIG_INVALID", "file", file, "err", err)
	}
	e.log.WarnContext(ctx, "pipeline config refused", "file", file, "errors", len(msgs), "first", msgs[0])
}

// PipelineIDOf reads pipeline.id from a pipeline document, also from one
// that is otherwise invalid; "" when it cannot.
func PipelineIDOf(file string, doc []byte) string {
	root, err := confdec.ParseDocument(file, doc)
	if err != nil {
		return ""
	}
	return pipeline.IDOf(root)
}

// activate stores a validated pipeline as its current version (unless the
// stored version is identical) and sets its timers: the next cron tick,
// the next period's start, and the SLA timers of the periods open now —
// the current one, and earlier ones whose warning or breach is still ahead
// (sla.TimersToArm). A pipeline seen for the first time starts from
// now: no alert is raised for an SLA time that passed before it was
// loaded. Every process sees the new version at its next decision: they
// read the row, not a copy of it. A config whose upstream rules close a
// cycle with the pipelines running is refused (decide.CycleCheck: the
// error is its confdec.Errors), answered as refused apart from a failure.
func (e *Engine) activate(ctx context.Context, p *pipeline.Pipeline, doc []byte) (refused, err error) {
	err = e.retry(ctx, "activate "+p.ID, func(ctx context.Context) error {
		now := e.clk.Now()
		// The first-load time the SLA needs are named with is judged on
		// the stored row's config: resolved beside the batch when the
		// core asks (a removed row's is not resolved by the rounds), then
		// named again.
		var resolve []string
		need := func(f *facts, _ needs.Configs) needs.Set {
			var n needs.Set
			n, resolve = decide.ConfigLoadNeeds(p, f.Facts, now)
			return n
		}
		f, err := e.loadFacts(ctx, need)
		if err != nil {
			return err
		}
		for _, id := range resolve {
			if _, err := f.config(ctx, id); err != nil {
				return err
			}
		}
		if err := f.rounds(ctx, need); err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.ConfigLoadIn{Config: p, Doc: doc, Env: b.env()}
		// The configs of the pipelines running (the cycle check's), the
		// pipeline's own first.
		ids := []string{p.ID}
		for _, row := range f.AllPipelines {
			ids = append(ids, row.ID)
		}
		if err := f.resolve(ctx, ids...); err != nil {
			return err
		}
		loaded, err := decideWith(ctx, b, decide.ConfigLoad, in, now)
		if err != nil {
			return err
		}
		if refused = loaded.Refused; loaded.Kept || refused != nil {
			return nil
		}
		if err := b.commit(ctx); err != nil {
			return err
		}
		if loaded.Restored {
			return nil
		}
		next := loaded.Row
		if len(p.Schedule.CalendarNames()) == 0 {
			// The parse is the stored version's: the next decision names
			// its needs with it in one round (facts.go).
			e.parsedConfig(next, p, nil)
		}
		e.log.InfoContext(ctx, "pipeline config loaded", "pipeline", p.ID, "version", next.ConfigVersion, "file", p.Source.File)
		return nil
	})
	return refused, err
}
