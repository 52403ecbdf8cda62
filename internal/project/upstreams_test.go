package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUpstreamCycleAndUnknownUpstream(t *testing.T) {
	dir := t.TempDir()
	put := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc := func(id string, ups ...string) string {
		s := "pipeline: {id: " + id + "}\nschedule: {cron: '0 6 * * *'}\njob: {type: glue, config: {jobName: j}}\n"
		if len(ups) > 0 {
			s += "validation:\n  rules:\n"
			for _, u := range ups {
				s += "    - {check: upstream, pipeline: " + u + "}\n"
			}
		}
		return s
	}
	put("interlock.yaml", "pipelines: ./pipelines\n")
	put("pipelines/a.yaml", doc("a", "c"))
	put("pipelines/b.yaml", doc("b", "a"))
	put("pipelines/c.yaml", doc("c", "b", "ghost"))
	put("pipelines/d.yaml", doc("d", "a"))
	rep, err := Validate(nil, Options{SettingsFile: filepath.Join(dir, "interlock.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range rep.Files {
		for _, e := range f.Errors {
			got[filepath.Base(f.File)] = append(got[filepath.Base(f.File)], strings.TrimPrefix(e.Error(), f.File+":"))
		}
	}
	cycle := " validation.rules: upstream cycle: a -> b -> c -> a (a pipeline cannot wait for itself through its upstreams)"
	want := map[string][]string{
		"a.yaml": {"6:" + cycle},
		"b.yaml": {"6:" + cycle},
		"c.yaml": {"6:" + cycle, `7: validation.rules[1].pipeline: unknown upstream pipeline "ghost": no pipeline file of the project defines it`},
	}
	for _, f := range []string{"a.yaml", "b.yaml", "c.yaml", "d.yaml"} {
		if strings.Join(got[f], "\n") != strings.Join(want[f], "\n") {
			t.Errorf("%s: errors\n%s\nwant\n%s", f, strings.Join(got[f], "\n"), strings.Join(want[f], "\n"))
		}
	}
	// A few files alone: their upstreams may be elsewhere; a cycle among
	// them is still one.
	rep, err = Validate([]string{filepath.Join(dir, "pipelines", "d.yaml"), filepath.Join(dir, "pipelines", "c.yaml")}, Options{})
	if err != nil || !rep.Valid() {
		t.Fatalf("two files without their upstreams: %v %+v", err, rep)
	}
}
