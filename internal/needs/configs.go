package needs

import (
	"sync"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// The configs needs are named with are values of this package, not a
// caller's functions: naming an input's needs calls nothing back in the
// engine, so it reads nothing (internal/archtest's walk of a sensor write
// fails on a call from the core back into the engine).

// ConfigMap is configs known by pipeline id, filled before the needs are
// named (the engine's configs of the rows a round read); its Of is a
// Configs.
type ConfigMap map[string]*pipeline.Pipeline

// Of is the config of id (nil: not known, or not running).
func (m ConfigMap) Of(id string) *pipeline.Pipeline { return m[id] }

// ConfigCache is a process's parsed configs by pipeline id, whatever
// their version (the engine's parse cache keeps it): what an input's
// needs are first named with, before any row is read. Its Of is a
// Configs. Safe for concurrent use; the zero value is empty.
type ConfigCache struct {
	mu sync.RWMutex
	m  map[string]*pipeline.Pipeline
}

// Of is the config cached for id (nil: none).
func (c *ConfigCache) Of(id string) *pipeline.Pipeline {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[id]
}

// Put caches p as id's config.
func (c *ConfigCache) Put(id string, p *pipeline.Pipeline) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*pipeline.Pipeline{}
	}
	c.m[id] = p
}

// Drop forgets id's config.
func (c *ConfigCache) Drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}
