// Package sqlmigrate reads the numbered SQL migrations the SQL stores
// (SQLite, PostgreSQL) embed: each store applies them its own way, both
// read them alike. A migration is never edited once released: a change is
// a new file.
package sqlmigrate

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one schema step.
type Migration struct {
	Version int    // from the file name: 0001_init.sql is 1
	Name    string // the file name, recorded for people reading the table
	SQL     string
}

// Load reads the migrations of dir in order. Numbers must run 1, 2, 3 …
// with no gap or duplicate: a gap usually means a file was lost in a
// merge, and applying around it would give a schema no test has seen.
// Files not ending in .sql are ignored.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", name)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected number %d (numbers run 1, 2, 3 … with no gap or duplicate)", m.Name, i+1)
		}
	}
	return ms, nil
}
