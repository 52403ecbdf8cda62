package silence

import (
	"path"
	"slices"
)

// Reaches reports whether m can cover some event of the pipeline
// pipelineID, whose owner is owner: its pipeline globs (if any) match the
// id and its owners (if any) name the owner. Its types and levels say
// which of the pipeline's events; an empty m reaches nothing. The
// dashboard badges the pipelines a silence reaches and previews them
// before one is saved.
func (m Matchers) Reaches(pipelineID, owner string) bool {
	if m.Empty() {
		return false
	}
	if len(m.Pipelines) > 0 && !slices.ContainsFunc(m.Pipelines, func(g string) bool {
		ok, err := path.Match(g, pipelineID)
		return ok && err == nil
	}) {
		return false
	}
	return len(m.Owners) == 0 || slices.Contains(m.Owners, owner)
}
