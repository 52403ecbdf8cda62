package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The writer never checkpoints; the checkpointer must keep the WAL from
// growing with everything ever written, even when commits come back to
// back and a PASSIVE checkpoint never finds the log fully copied: the log
// must start over, again and again.
func TestCheckpointerKeepsWALBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := open(t.Context(), path, syncNormal) // WAL, no fsync per commit
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const commits = 3000 // about 40,000 WAL pages: 160 MiB if never reset
	for i := range commits {
		if err := s.Commit(t.Context(), groupRun(fmt.Sprintf("d%05d", i), 0, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	// Commits are serial here: the checkpointer has read written.
	written := s.ckpt.written.Load()
	if written < 4*walMaxPages {
		t.Fatalf("only %d pages written: the test does not reach the WAL's bound", written)
	}
	// A frame is a page and a 24-byte header; one commit may go past the
	// bound before the writer catches up.
	if limit := int64(walMaxPages+100) * (4096 + 24); fi.Size() > limit {
		t.Fatalf("WAL is %d KiB after %d commits appended %d KiB, want at most %d KiB", fi.Size()>>10, commits, written*4, limit>>10)
	}
	if !present(t, s, "0") || !present(t, s, fmt.Sprint(commits-1)) {
		t.Fatal("commits missing")
	}
}
