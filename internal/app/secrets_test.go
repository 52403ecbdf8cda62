package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
)

func TestSecretsReadFilesAndEnv(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "token")
	if err := os.WriteFile(f, []byte("s3cr3t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(name string) (string, bool) { return "from-env", name == "INTERLOCK_X" }
	look := Secrets(env)
	if v, ok := look(pipeline.FilePrefix + f); !ok || v != "s3cr3t" {
		t.Fatalf("file secret = %q %v", v, ok)
	}
	if _, ok := look(pipeline.FilePrefix + filepath.Join(dir, "missing")); ok {
		t.Fatal("a missing file was found")
	}
	if v, ok := look("INTERLOCK_X"); !ok || v != "from-env" {
		t.Fatalf("env = %q %v", v, ok)
	}
	got, err := pipeline.ExpandTemplate("Bearer ${file:"+f+"}", pipeline.TemplateVars{}, look)
	if err != nil || got != "Bearer s3cr3t" {
		t.Fatalf("expanded = %q %v", got, err)
	}
}
