package local

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"sync"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// reloader applies the project's pipeline files to the engine as they
// change. Only files whose content changed are applied again, so an
// invalid file is refused (CONFIG_INVALID) once, not on every look.
type reloader struct {
	a   *app.App
	log *slog.Logger

	mu     sync.Mutex
	hashes map[string][sha256.Size]byte
}

func newReloader(a *app.App, log *slog.Logger) *reloader {
	return &reloader{a: a, log: log, hashes: map[string][sha256.Size]byte{}}
}

// reload looks at every pipeline file once and returns how many were
// applied and how many refused.
func (r *reloader) reload(ctx context.Context) (applied, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	files, err := pipeline.PipelineFiles(r.a.Path(r.a.Settings.Pipelines))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.log.Error("listing pipeline files", "err", err)
		}
		return 0, 0
	}
	seen := map[string]bool{}
	for _, f := range files {
		seen[f] = true
		data, err := os.ReadFile(f)
		if err != nil {
			r.log.Error("reading pipeline file", "file", f, "err", err)
			continue
		}
		sum := sha256.Sum256(data)
		if prev, ok := r.hashes[f]; ok && prev == sum {
			continue
		}
		r.hashes[f] = sum
		if _, err := r.a.Engine.ApplyConfig(ctx, f, data); err != nil {
			refused++
			r.log.Warn("pipeline file refused; the previous version (if any) keeps running", "file", f, "err", err)
			continue
		}
		applied++
	}
	for f := range r.hashes {
		if !seen[f] {
			delete(r.hashes, f)
			r.log.Warn("pipeline file removed; its pipeline keeps its last configuration until restart", "file", f)
		}
	}
	return applied, refused
}
