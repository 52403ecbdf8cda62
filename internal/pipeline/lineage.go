package pipeline

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/confdec"
)

// LineageSource is one entry of a pipeline's `lineage:` list: the
// OpenLineage run events it listens to, and the sensor key they are
// written under (docs/openlineage.md). An event of the named job, or one
// that writes the named dataset, becomes a sensor write of Key with the
// period's suffix ("orders-loaded#2026-11-27"), read by the rules as any
// other sensor.
type LineageSource struct {
	Key string
	// Job matches the event's job; Dataset one of its outputs. Exactly
	// one is set.
	Job     *LineageName
	Dataset *LineageName
}

// LineageName is an OpenLineage job or dataset identity.
type LineageName struct {
	Namespace string
	Name      string
}

func (n LineageName) String() string { return n.Namespace + "/" + n.Name }

// MaxLineageKey bounds a lineage source's key, leaving room under the
// sensor key bound (256) for the period suffix it is written with.
const MaxLineageKey = 200

type rawLineage struct {
	Key     string          `yaml:"key,required"`
	Job     *rawLineageName `yaml:"job"`
	Dataset *rawLineageName `yaml:"dataset"`
}

type rawLineageName struct {
	Namespace string `yaml:"namespace,required"`
	Name      string `yaml:"name,required"`
}

// lineage checks the `lineage:` list: each entry names a key and exactly
// one of job or dataset; no key is given twice (two sources writing one
// sensor would overwrite each other's events).
func (b *builder) lineage(raw []rawLineage) []LineageSource {
	if len(raw) == 0 {
		return nil
	}
	out := make([]LineageSource, 0, len(raw))
	seen := map[string]int{}
	for i, r := range raw {
		path := confdec.Index("lineage", i)
		src := LineageSource{Key: r.Key}
		if b.valid(path + ".key") {
			if msg := checkLineageKey(r.Key); msg != "" {
				b.errorf(path+".key", "%s", msg)
			} else if j, dup := seen[r.Key]; dup {
				b.errorf(path+".key", "%q is already the key of lineage[%d]: each source needs its own sensor key", r.Key, j)
			} else {
				seen[r.Key] = i
			}
		}
		switch {
		case r.Job != nil && r.Dataset != nil:
			b.errorf(path+".dataset", "give job or dataset, not both")
		case r.Job == nil && r.Dataset == nil && !b.failed(path+".job") && !b.failed(path+".dataset"):
			b.errorf(path, "needs job (namespace and name of the OpenLineage job) or dataset (namespace and name of a dataset it writes)")
		}
		src.Job = b.lineageName(path+".job", r.Job)
		src.Dataset = b.lineageName(path+".dataset", r.Dataset)
		out = append(out, src)
	}
	return out
}

func (b *builder) lineageName(path string, r *rawLineageName) *LineageName {
	if r == nil {
		return nil
	}
	for _, f := range []struct{ name, v string }{{"namespace", r.Namespace}, {"name", r.Name}} {
		if b.valid(path+"."+f.name) && strings.TrimSpace(f.v) == "" {
			b.errorf(path+"."+f.name, "must not be empty")
		}
	}
	return &LineageName{Namespace: r.Namespace, Name: r.Name}
}

// checkLineageKey says why key cannot be a lineage source's sensor key:
// the sensor-key rules, and no '#', since the period suffix is added to
// it.
func checkLineageKey(key string) string {
	switch {
	case key == "":
		return "must not be empty"
	case len(key) > MaxLineageKey:
		return fmt.Sprintf("is longer than %d bytes", MaxLineageKey)
	case !utf8.ValidString(key):
		return "is not valid UTF-8"
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return "contains control characters"
	case strings.Contains(key, "#"):
		return fmt.Sprintf("%q contains '#': the period suffix is added to it (%s#2026-11-27)", key, strings.SplitN(key, "#", 2)[0])
	}
	return ""
}
