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

func TestSecretsRefuseLargeSpecialAndProcFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, MaxSecretFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, make([]byte, MaxSecretFile), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "environ")
	if err := os.Symlink("/proc/self/environ", link); err != nil {
		t.Fatal(err)
	}
	look := Secrets(func(string) (string, bool) { return "", false })
	if _, ok := look(pipeline.FilePrefix + exact); !ok {
		t.Fatal("a file of exactly MaxSecretFile bytes was refused")
	}
	for _, path := range []string{big, "/dev/zero", "/proc/self/environ", link, dir} {
		if v, ok := look(pipeline.FilePrefix + path); ok {
			t.Errorf("%s was read (%d bytes)", path, len(v))
		}
	}
}
