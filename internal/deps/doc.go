// Package deps decides for pipelines that depend on pipelines
// (docs/dependencies.md, docs/root-cause.md): which upstream periods a
// period waits for and back, the direct downstreams, an upstream rule's
// verdict and how it combines with the sensor rules, what an upstream's
// success does to a downstream period, the dependency graph, the root
// cause of a downstream problem and its release, the lineage parent; and
// the alert conditions those releases and a silence's end ask about:
// which events open a condition, whether one still holds on its period's
// facts (ConditionFacts), and what a held condition is let go as.
//
// It never reads a store (the engine loads the upstreams' runs and the
// periods' ConditionFacts) and never reads the clock.
package deps
