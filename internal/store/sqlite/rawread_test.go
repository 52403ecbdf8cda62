package sqlite

import (
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// A row read on the driver (rawread.go) scans into each kind of
// destination the scan functions use as database/sql's Rows.Scan does:
// the same values, and an error where it has one (a named bool type is
// one database/sql refuses every value for).
func TestRawRowsScanAsDatabaseSQL(t *testing.T) {
	ctx := t.Context()
	s := openScratch(t, filepath.Join(t.TempDir(), "scratch.db"))
	// Each value read into each destination below.
	exprs := []string{`'text'`, `''`, `42`, `-7`, `0`, `1`, `2`, `NULL`, `X'00ff'`, `'ü'`, `'12'`, `'{"a":"1"}'`,
		`1700000000000000123`, `9223372036854775807`, `2147483648`}
	dests := map[string]func() any{
		"string":      func() any { return new(string) },
		"*string":     func() any { return new(*string) },
		"int64":       func() any { return new(int64) },
		"int":         func() any { return new(int) },
		"int32":       func() any { return new(int32) },
		"bool":        func() any { return new(bool) },
		"[]byte":      func() any { return new([]byte) },
		"run.State":   func() any { return new(run.State) },
		"event.Type":  func() any { return new(event.Type) },
		"named int":   func() any { type n int; return new(n) },
		"named bool":  func() any { type b bool; return new(b) },
		"TimeCol":     func() any { return sqlstore.TimeCol{T: new(time.Time)} },
		"JSONCol map": func() any { m := map[string]string(nil); return sqlstore.JSONCol{Dst: &m} },
	}
	for name, dest := range dests {
		for _, expr := range exprs {
			query := `SELECT ` + expr
			scan := func(r interface{ Scan(...any) error }) (any, error) {
				d := dest()
				return d, r.Scan(d)
			}
			var want any
			var wantErr error
			rows, err := s.read.QueryContext(ctx, query)
			if err != nil {
				t.Fatal(err)
			}
			rows.Next()
			want, wantErr = scan(rows)
			rows.Close()

			var got any
			var gotErr error
			if err := s.read.onDriver(ctx, func(w *wtx) error {
				r, err := w.rows(query, nil)
				if err != nil {
					return err
				}
				defer r.Close()
				if !r.Next() {
					t.Fatalf("no row: %v", r.Err())
				}
				got, gotErr = scan(r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if (gotErr == nil) != (wantErr == nil) {
				t.Errorf("%s into %s: error %v, database/sql's %v", expr, name, gotErr, wantErr)
				continue
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%s into %s: %#v, database/sql's %#v", expr, name, deref(got), deref(want))
			}
		}
	}
}

func deref(v any) any {
	r := reflect.ValueOf(v)
	if r.Kind() == reflect.Pointer && !r.IsNil() {
		return r.Elem().Interface()
	}
	return v
}

var _ sql.Scanner = sqlstore.TimeCol{}

// A list read on the driver decodes a flat object's text once per query
// (rawRows.objectOnce): each row still gets its own text's value, whatever
// the rows before it held, and a nested object (whose arrays a caller
// could change) is decoded for each row that holds it.
func TestRawRowsDecodeEachTextOnce(t *testing.T) {
	s := openScratch(t, filepath.Join(t.TempDir(), "scratch.db"))
	obj := func(kv ...any) sensor.Object {
		m := map[string]sensor.Value{}
		for i := 0; i < len(kv); i += 2 {
			switch v := kv[i+1].(type) {
			case int:
				m[kv[i].(string)] = sensor.IntValue(int64(v))
			case string:
				m[kv[i].(string)] = sensor.StringValue(v)
			case sensor.Value:
				m[kv[i].(string)] = v
			}
		}
		return sensor.NewObject(m)
	}
	nested := obj("a", sensor.ArrayValue([]sensor.Value{sensor.IntValue(1)}))
	details := []sensor.Object{obj("n", 1), obj("n", 2), obj("n", 1), obj("n", 10), obj("why", "late"), nested, nested, {}, obj("n", 2)}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var c store.Change
	for i, d := range details {
		c.Markers = append(c.Markers, store.MarkerWrite{Marker: store.Marker{
			Key: run.Key{PipelineID: "p", ScheduleID: "daily", Period: "2026-03-01"}, Kind: string(rune('a' + i)), At: at, Detail: d}})
	}
	if err := s.Commit(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	got, err := s.MarkerList(t.Context(), store.MarkerListParams{PeriodFrom: "2026-03-01"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(details) {
		t.Fatalf("listed %d markers, want %d", len(got), len(details))
	}
	for i, m := range got {
		if !m.Detail.Equal(details[i]) {
			t.Errorf("marker %s: detail %v, want %v", m.Kind, m.Detail, details[i])
		}
	}
	a5, _ := got[5].Detail.Get("a")
	a6, _ := got[6].Detail.Get("a")
	x5, _ := a5.Array()
	x6, _ := a6.Array()
	if len(x5) == 0 || len(x6) == 0 || &x5[0] == &x6[0] {
		t.Errorf("two rows share a nested object's array: %v, %v", x5, x6)
	}
}
