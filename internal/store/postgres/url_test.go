package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/store/pgurl"
)

func TestCheckURL(t *testing.T) {
	for _, c := range []struct {
		url  string
		want string // a part of the error; "" accepts
	}{
		{"postgres://interlock:pw@db.internal:5432/interlock?sslmode=require", ""},
		{"postgresql://db/interlock", ""},
		{"postgres://u@127.0.0.1:5432/interlock?pool_max_conns=8&search_path=ops", ""},
		{"postgres:///interlock?host=/var/run/postgresql", ""},
		{"postgres://db:5432/?dbname=interlock", ""},
		{"postgres://db/interlock?default_query_exec_mode=exec", ""},
		{"postgres://db/interlock?default_query_exec_mode=never", "default_query_exec_mode"},
		{"mysql://db/interlock", "scheme"},
		{"postgres://db", "no database"},
		{"postgres://db/", "no database"},
		{"postgres:///interlock", "no host"},
		{"postgres://db/a/b", "slash"},
		{"postgres:db/interlock", "want postgres://host/database"},
		{"postgres://db:notaport/interlock", "invalid port"},
		{"postgres://db/interlock?sslmode=sometimes", "sslmode"},
		{"postgres://db/interlock?pool_max_conns=many", "pool_max_conns"},
		{"postgres://us er:p%zz@db/interlock", "invalid userinfo"},
	} {
		err := CheckURL(c.url)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckURL(%q) = %v, want ok", c.url, err)
		case c.want != "" && err == nil:
			t.Errorf("CheckURL(%q) accepted, want an error about %s", c.url, c.want)
		case c.want != "" && (!errors.Is(err, pgurl.ErrBad) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckURL(%q) = %v, want ErrBad about %s", c.url, err, c.want)
		}
	}
}

// TestCheckURLKeepsPasswordsOut: no message repeats a password.
func TestCheckURLKeepsPasswordsOut(t *testing.T) {
	for _, u := range []string{
		"mysql://u:s3cretpw@db/x",
		"postgres://u:s3cretpw@db",
		"postgres://u:s3cretpw@db:port/x",
		"postgres://u:s3cretpw@db/x?sslmode=bogus",
		"postgres://u@db/x?password=s3cretpw&sslmode=bogus",
	} {
		err := CheckURL(u)
		if err == nil {
			t.Fatalf("CheckURL(%q) accepted", u)
		}
		if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("CheckURL(%q) = %v: the password is in the message", u, err)
		}
	}
	if r := pgurl.Redact("postgres://u:s3cretpw@db/x?password=s3cretpw"); strings.Contains(r, "s3cretpw") {
		t.Errorf("Redact = %s", r)
	}
}

// FuzzCheckURL: any text is refused or accepted without a panic, an
// accepted one parses as Open would parse it, and a password in the input
// never appears in the error.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"postgres://u:pw@h:5432/db?sslmode=disable", "postgresql://h/db", "postgres://", "postgres:///db?host=/tmp",
		"postgres://u:pw@[::1]:5/db", "postgres://h/db?connect_timeout=x", "%", "postgres://u:p@ss@h/db"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := CheckURL(raw)
		_ = pgurl.Redact(raw)
		if err != nil {
			if !errors.Is(err, pgurl.ErrBad) {
				t.Fatalf("CheckURL(%q) = %v, not ErrBad", raw, err)
			}
			if i := strings.Index(raw, "://"); i >= 0 {
				rest := raw[i+3:]
				if at := strings.LastIndex(rest, "@"); at >= 0 {
					if _, pw, ok := strings.Cut(rest[:at], ":"); ok && len(pw) >= 6 && strings.Contains(err.Error(), pw) && !strings.Contains(strings.ReplaceAll(raw, pw, ""), pw) {
						t.Fatalf("CheckURL(%q) = %v: the password %q is in the message", raw, err, pw)
					}
				}
			}
		}
	})
}
