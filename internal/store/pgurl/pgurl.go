// Package pgurl checks the form of a PostgreSQL store URL without
// connecting, and redacts its password for messages. It is a leaf with no
// driver (no interlock imports, no pgx), so the settings loader in the
// pure core can check interlock.yaml's store: field; the parameters only
// the driver knows are checked by postgres.CheckURL, which the app runs
// on the settings it opens and `validate` runs on every interlock.yaml.
package pgurl

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrBad: a store URL is not one Open can use.
var ErrBad = errors.New("bad PostgreSQL URL")

// Check reports whether raw has the form of a PostgreSQL URL Open can use,
// without connecting: the scheme postgres:// or postgresql://, a host and
// a database name. interlock.yaml's loading and postgres.CheckURL call it;
// the error never repeats a password.
func Check(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBad, RedactErr(err, raw))
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

// RedactErr is err's text with any password of raw taken out: url.Parse
// and pgx quote the URL they failed on.
func RedactErr(err error, raw string) string { return RedactIn(err.Error(), raw) }

// RedactIn is msg with any password of raw taken out: the one url.Parse
// reads, and, for a URL it refuses, the text between the first ':' and
// the last '@' of what follows "://". The gcpfn runtime's answers and
// CheckURL's errors both go through it.
func RedactIn(msg, raw string) string {
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
