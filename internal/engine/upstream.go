package engine

import (
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// Pipelines that depend on pipelines (docs/dependencies.md): the
// downstreams, upstream and release timers are decided by package
// decide (decide.Timer); a config's load writes its entries in its
// upstreams' downstream indexes (below).

// downstreamIndex writes p's entries in its upstreams' downstream indexes
// and drops those of upstreams its previous config had and this one does
// not (prev may be nil).
func (b *batch) downstreamIndex(p, prev *pipeline.Pipeline) {
	put, drop := deps.IndexChanges(p, prev)
	for _, u := range put {
		b.Marker(store.Marker{Key: run.Key{PipelineID: u}, Kind: run.DownstreamMarker(p.ID).String(), At: b.Now}, false)
	}
	for _, u := range drop {
		b.C.MarkerDeletes = append(b.C.MarkerDeletes, store.MarkerDelete{Key: run.Key{PipelineID: u}, Kind: run.DownstreamMarker(p.ID).String()})
	}
}
