package sqlmigrate

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestLoadNames: the numbering rule, read alike by both SQL stores.
func TestLoadNames(t *testing.T) {
	names := []struct {
		name  string
		files []string
		want  string // error substring; "" for success
	}{
		{"Contiguous", []string{"0001_a.sql", "0002_b.sql", "0003_c.sql"}, ""},
		{"Gap", []string{"0001_a.sql", "0003_c.sql"}, "expected number 2"},
		{"Duplicate", []string{"0001_a.sql", "0001_b.sql"}, "expected number 2"},
		{"StartsAtTwo", []string{"0002_a.sql"}, "expected number 1"},
		{"NoNumber", []string{"init.sql"}, "NNNN_description"},
		{"OtherFilesIgnored", []string{"0001_a.sql", "README.md"}, ""},
	}
	for _, tc := range names {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for _, f := range tc.files {
				fsys["m/"+f] = &fstest.MapFile{Data: []byte("SELECT 1;")}
			}
			_, err := Load(fsys, "m")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}

}
