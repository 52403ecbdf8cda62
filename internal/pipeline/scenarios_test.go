package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/confdec"
)

// The product's example scenarios (copied from ../shared/scenarios into
// the repository, see simulate's TestSharedScenariosAreCurrent) embed
// pipeline documents; every one must load.
const sharedScenarios = "../../testdata/scenarios/shared"

func TestScenarioPipelinesValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sharedScenarios, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s", sharedScenarios)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs := scenarioPipelines(t, f, data)
			if len(docs) == 0 {
				t.Fatal("scenario has no inline pipelines")
			}
			d := confdec.NewDecoder(f)
			for i, n := range docs {
				p := DecodePipeline(d, n, confdec.Index("pipelines", i), Options{})
				if p == nil {
					continue
				}
				if p.ID == "" || p.Source.SHA256 == "" || p.Source.File != f {
					t.Errorf("pipelines[%d]: id %q, source %+v", i, p.ID, p.Source)
				}
			}
			if err := d.Err(); err != nil {
				t.Fatalf("scenario pipelines invalid:\n%v", err)
			}
		})
	}
}

// scenarioPipelines returns the inline pipeline documents of a scenario
// file (the `pipelines:` list; {file: …} references are skipped).
func scenarioPipelines(t *testing.T, file string, data []byte) []*yaml.Node {
	t.Helper()
	root, err := confdec.ParseDocument(file, data)
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		Pipelines []*yaml.Node `yaml:"pipelines"`
	}
	var rest map[string]*yaml.Node
	d := confdec.NewDecoder(file)
	d.Decode(root, "", &rest)
	d.Decode(rest["pipelines"], "pipelines", &top.Pipelines)
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	var out []*yaml.Node
	for _, n := range top.Pipelines {
		if n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "file" {
			continue
		}
		out = append(out, n)
	}
	return out
}
