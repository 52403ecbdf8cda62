// Package pgurl checks the form of a PostgreSQL store URL without
// connecting, and redacts its password for messages. It is a leaf (no
// interlock imports) so the settings loader can check interlock.yaml's
// store: field with the rules the store's driver (pgx) applies.
package pgurl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrBad: a store URL is not one Open can use.
var ErrBad = errors.New("bad PostgreSQL URL")

// Check reports whether raw is a PostgreSQL URL Open can use, without
// connecting: the scheme postgres:// or postgresql://, a host, a database
// name, and parameters pgx understands. interlock.yaml's loading (`validate`, `serve`) and postgres.Open call it; the
// error never repeats a password.
func Check(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBad, redactErr(err, raw))
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("%w: %s: the scheme must be postgres:// or postgresql://", ErrBad, Redact(raw))
	}
	if u.Opaque != "" {
		return fmt.Errorf("%w: %s: want postgres://host/database", ErrBad, Redact(raw))
	}
	if u.Host == "" && u.Query().Get("host") == "" {
		return fmt.Errorf("%w: %s: no host (want postgres://user@host:port/database)", ErrBad, Redact(raw))
	}
	if db := strings.TrimPrefix(u.Path, "/"); db == "" && u.Query().Get("dbname") == "" {
		return fmt.Errorf("%w: %s: no database name (want postgres://user@host:port/database)", ErrBad, Redact(raw))
	} else if strings.Contains(db, "/") {
		return fmt.Errorf("%w: %s: the database name %q has a slash", ErrBad, Redact(raw), db)
	}
	if _, err := pgxpool.ParseConfig(raw); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBad, Redact(raw), redactErr(err, raw))
	}
	return nil
}

// Redact returns raw with its password replaced, for messages and logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// redactErr is err's text with any password of raw taken out: url.Parse
// and pgx quote the URL they failed on.
func redactErr(err error, raw string) string {
	msg := err.Error()
	if u, perr := url.Parse(raw); perr == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
		}
	}
	return msg
}
