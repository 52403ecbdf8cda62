package app

import (
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/store/postgres"
)

// CheckStore reports what the store's driver finds wrong with the store
// URL of settings, at the line of its store: field: the pure core checks
// only the URL's form (pipeline.ParseStore links no driver), so Open and
// `validate` ask the driver about its parameters here (a PostgreSQL
// sslmode or pool setting pgx does not know).
func CheckStore(settings *pipeline.Settings) error {
	if settings == nil {
		return nil
	}
	if err := CheckStoreURL(settings.Store); err != nil {
		return confdec.Errors{{File: settings.Source.File, Line: settings.StoreLine, Path: "store", Msg: err.Error()}}
	}
	return nil
}

// CheckStoreURL is the driver's check of st's URL without connecting
// (postgres.CheckURL); nil for the stores whose drivers check nothing
// before opening.
func CheckStoreURL(st pipeline.Store) error {
	if st.Driver != pipeline.StorePostgres {
		return nil
	}
	return postgres.CheckURL(st.DSN)
}
