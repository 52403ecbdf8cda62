package project

import (
	"fmt"
	"slices"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// upstreamErrors checks what no single pipeline file can know: that the
// pipelines' upstream rules form no cycle (pipeline.Cycle), and, when
// whole is set (a project validated, not a few files), that each rule
// names a pipeline some file defines. serve refuses a cycle the same way
// at load (CONFIG_INVALID); it runs a pipeline whose upstream is not
// loaded, whose rule then does not pass (its reason says so): at a load
// of many files, one may name a pipeline a later file defines.
func upstreamErrors(items []*loaded, parsed map[*loaded]*pipeline.Pipeline, whole bool) {
	var all []*pipeline.Pipeline
	byID := map[string]*loaded{}
	for _, it := range items {
		if p := parsed[it]; p != nil {
			all = append(all, p)
			byID[p.ID] = it
		}
	}
	if whole {
		for _, it := range items {
			p := parsed[it]
			if p == nil {
				continue
			}
			for _, u := range p.Upstreams {
				if _, ok := byID[u.Pipeline]; ok {
					continue
				}
				path := confdec.Index("validation.rules", u.Rule) + ".pipeline"
				it.rep.Errors = append(it.rep.Errors, confdec.Error{File: it.file, Line: lineOf(it.doc, "validation", "rules", u.Rule, "pipeline"), Path: path,
					Msg: fmt.Sprintf("unknown upstream pipeline %q: no pipeline file of the project defines it", u.Pipeline)})
			}
		}
	}
	if cycle := pipeline.Cycle(all); cycle != nil {
		msg := pipeline.CycleError(cycle).Error()
		for _, id := range slices.Compact(slices.Sorted(slices.Values(cycle))) {
			it := byID[id]
			it.rep.Errors = append(it.rep.Errors, confdec.Error{File: it.file, Line: lineOf(it.doc, "validation", "rules"), Path: "validation.rules", Msg: msg})
		}
	}
}
