package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/interlockhq/interlock/internal/store/pgurl"
)

// CheckURL reports whether raw is a PostgreSQL URL Open can use, without
// connecting: the form pgurl.Check requires (scheme, host, database) and
// parameters pgx understands. The settings loader checks only the form (it
// is in the pure core, which links no driver); the app runs CheckURL on
// the store it opens and `validate` on every interlock.yaml. The error
// wraps pgurl.ErrBad and never repeats a password.
func CheckURL(raw string) error {
	if err := pgurl.Check(raw); err != nil {
		return err
	}
	if _, err := pgxpool.ParseConfig(raw); err != nil {
		return fmt.Errorf("%w: %s: %v", pgurl.ErrBad, pgurl.Redact(raw), pgurl.RedactErr(err, raw))
	}
	return nil
}
