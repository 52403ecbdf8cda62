package lineage_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/interlockhq/interlock/internal/lineage"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// FuzzParse: no input makes Parse panic; an event it accepts has the
// fields every sensor write relies on, and maps to sensor data.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"eventTime":"2026-11-21T02:00:00Z","producer":"p","run":{"runId":"r"},"job":{"namespace":"n","name":"j"},"outputs":[{"namespace":"d","name":"t","outputFacets":{"outputStatistics":{"rowCount":9223372036854775807}}},{"namespace":"d","name":"t","outputFacets":{"outputStatistics":{"rowCount":9}}}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"run":null}`))
	src := pipeline.LineageSource{Key: "k", Dataset: &pipeline.LineageName{Namespace: "d", Name: "t"}}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := lineage.Parse(body)
		if err != nil {
			return
		}
		if ev.RunID == "" || ev.Job.Name == "" || ev.Job.Namespace == "" || ev.Producer == "" || ev.Time.IsZero() || ev.Type == "" {
			t.Fatalf("accepted an event without a required field: %+v", ev)
		}
		data := lineage.SensorData(src, ev)
		if lineage.Stale(&data, data) != true {
			t.Fatal("an event is not stale against itself")
		}
		if n, ok := data.Get("rowCount"); ok {
			if v, _ := n.Int(); v < 0 {
				t.Fatalf("rowCount %d", v)
			}
		}
	})
}
