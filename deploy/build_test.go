package deploy

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestBuildIsReproducible builds one function twice with build.sh, into two
// directories, and requires byte-identical packages holding exactly an
// executable `bootstrap`. It builds for linux/arm64: a cold build cache
// costs ~30 s (the dependencies compiled for arm64), a warm one two links.
func TestBuildIsReproducible(t *testing.T) {
	t.Parallel() // beside the package's other builds and terraform runs
	if testing.Short() {
		t.Skip("builds a Lambda function twice")
	}
	const fn = "event-publisher"
	var zips [][]byte
	for range 2 {
		dist := t.TempDir()
		cmd := exec.Command("sh", "build.sh", dist)
		cmd.Env = append(os.Environ(), "FUNCTIONS="+fn)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build.sh: %v\n%s", err, out)
		}
		// A different mtime on the binary must not change the package.
		b, err := os.ReadFile(filepath.Join(dist, fn+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		zips = append(zips, b)
	}
	if !bytes.Equal(zips[0], zips[1]) {
		t.Fatalf("two builds of %s made different packages (%d and %d bytes)", fn, len(zips[0]), len(zips[1]))
	}
	zr, err := zip.NewReader(bytes.NewReader(zips[0]), int64(len(zips[0])))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 || zr.File[0].Name != "bootstrap" {
		var names []string
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		t.Fatalf("the package holds %q, want exactly [bootstrap]", names)
	}
	f := zr.File[0]
	if f.Mode().Perm()&0o111 == 0 {
		t.Errorf("bootstrap's mode is %v: Lambda cannot execute it", f.Mode())
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	head := make([]byte, 20)
	if _, err := rc.Read(head); err != nil {
		t.Fatal(err)
	}
	// An ELF executable for AArch64 (e_machine 183 at offset 18).
	if !bytes.HasPrefix(head, []byte("\x7fELF")) || head[18] != 183 {
		t.Errorf("bootstrap is not a linux/arm64 executable (header % x)", head)
	}
}
