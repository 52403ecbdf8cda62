package pipeline

import (
	"os"
	"path/filepath"
	"sort"
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
