package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// TestOpenChecksTheStoreWithItsDriver: the settings loader checks only a
// PostgreSQL URL's form (the pure core links no driver); Open asks the
// driver about the parameters and reports at the store: line, before
// connecting anywhere.
func TestOpenChecksTheStoreWithItsDriver(t *testing.T) {
	file := filepath.Join(t.TempDir(), "i.yaml")
	if err := os.WriteFile(file, []byte("# the store\nstore: postgres://h/db?sslmode=sometimes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	if _, err := pipeline.ParseSettings(file, data); err != nil {
		t.Fatalf("ParseSettings = %v; the form is right, the parameter is the driver's to refuse", err)
	}
	_, err := app.Open(context.Background(), file, app.Options{})
	want := file + `:2: store: bad PostgreSQL URL: postgres://h/db?sslmode=sometimes: `
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, confdec.ErrInvalid) {
		t.Fatalf("Open = %v, want an invalid configuration starting %q", err, want)
	}
	if err := app.CheckStoreURL(pipeline.Store{Driver: pipeline.StorePostgres, DSN: "postgres://h/db?sslmode=require"}); err != nil {
		t.Errorf("CheckStoreURL(sslmode=require) = %v", err)
	}
	if err := app.CheckStoreURL(pipeline.Store{Driver: pipeline.StoreSQLite, DSN: "x.db"}); err != nil {
		t.Errorf("CheckStoreURL(sqlite) = %v", err)
	}
}
