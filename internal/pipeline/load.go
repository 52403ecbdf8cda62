package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/interlockhq/interlock/internal/confdec"
)

// PipelineFiles lists the pipeline files named by the settings'
// `pipelines` value: every *.yaml and *.yml file of a directory, or the
// files a glob pattern matches, sorted.
func PipelineFiles(dirOrGlob string) ([]string, error) {
	if fi, err := os.Stat(dirOrGlob); err == nil && fi.IsDir() {
		return yamlFiles(dirOrGlob)
	}
	files, err := filepath.Glob(dirOrGlob)
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// LoadPipelines loads every file PipelineFiles lists. It returns the
// valid pipelines and, when any file is invalid or two files share a
// pipeline id, confdec.Errors for all of them: `interlock validate`
// reports everything, `serve` keeps running the valid ones.
func LoadPipelines(dirOrGlob string, opt Options) ([]*Pipeline, error) {
	files, err := PipelineFiles(dirOrGlob)
	if err != nil {
		return nil, err
	}
	var (
		out  []*Pipeline
		errs confdec.Errors
		from = map[string]string{}
	)
	for _, f := range files {
		p, err := LoadPipelineFile(f, opt)
		if err != nil {
			errs = append(errs, confdec.AsErrors(f, err)...)
			continue
		}
		if prev, dup := from[p.ID]; dup {
			errs = append(errs, confdec.Error{File: f, Line: p.Source.idLine, Path: "pipeline.id",
				Msg: fmt.Sprintf("pipeline %q is already defined in %s", p.ID, prev)})
			continue
		}
		from[p.ID] = f
		out = append(out, p)
	}
	if len(errs) > 0 {
		return out, errs
	}
	return out, nil
}
