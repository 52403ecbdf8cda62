package pipeline

import (
	"net"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/interlockhq/interlock/internal/confdec"
)

// Server configures the local HTTP API.
type Server struct {
	Addr   string // host:port, default 127.0.0.1:7070
	Tokens []Token
	// EnvAllow are the globs ${env:NAME} in pipeline configs must match;
	// pass them on as Options.EnvAllow. Default [INTERLOCK_*].
	EnvAllow     []string
	MaxBodyBytes int64 // default 1 MiB
}

// Role is what a bearer token may do.
type Role string

// The roles, each including the ones before it.
const (
	RoleReader Role = "reader" // read pipelines, runs, events
	RoleWriter Role = "writer" // also write sensors
	// RoleOperator is the person on call: also rerun, pause, resume,
	// backfill, and silence the pipelines they name.
	RoleOperator Role = "operator"
	// RoleAdmin may do everything, also what reaches every pipeline at
	// once (a silence with no pipeline matcher, or one matching all).
	RoleAdmin Role = "admin"
)

// Roles lists the roles, least first.
func Roles() []Role { return []Role{RoleReader, RoleWriter, RoleOperator, RoleAdmin} }

// Includes reports whether r may do what need may: each role includes
// the ones before it in Roles. An unknown role includes nothing.
func (r Role) Includes(need Role) bool {
	have, want := slices.Index(Roles(), r), slices.Index(Roles(), need)
	return have >= 0 && want >= 0 && have >= want
}

// Token is an API bearer token. Its value is read from TokenEnv or
// TokenFile (exactly one is set), never written in the file.
type Token struct {
	Name      string
	Role      Role
	TokenEnv  string
	TokenFile string
}

type rawServer struct {
	Addr         *string    `yaml:"addr"`
	Tokens       []rawToken `yaml:"tokens"`
	EnvAllow     *[]string  `yaml:"envAllow"`
	MaxBodyBytes *int64     `yaml:"maxBodyBytes"`
}

type rawToken struct {
	Name      string `yaml:"name,required"`
	Role      string `yaml:"role,required"`
	TokenEnv  string `yaml:"tokenEnv"`
	TokenFile string `yaml:"tokenFile"`
}

func (b *builder) server(raw *rawServer, s *Server) {
	if raw.Addr != nil {
		s.Addr = *raw.Addr
	}
	host, port, err := net.SplitHostPort(s.Addr)
	if err != nil || !validPort(port) {
		b.errorf("server.addr", "%q: want host:port, e.g. 127.0.0.1:7070", s.Addr)
	} else if len(raw.Tokens) == 0 && !isLoopback(host) {
		// Product spec §5: with no token the API is for this machine only.
		b.errorf("server.addr", "%q is reachable from other machines, which needs server.tokens; without tokens bind to 127.0.0.1", s.Addr)
	}
	names := map[string]bool{}
	for i, t := range raw.Tokens {
		p := confdec.Index("server.tokens", i)
		tok := Token{Name: t.Name, Role: Role(strings.ToLower(t.Role)), TokenEnv: t.TokenEnv, TokenFile: t.TokenFile}
		if t.Name != "" && names[t.Name] {
			b.errorf(p+".name", "duplicate token name %q", t.Name)
		}
		names[t.Name] = true
		if t.Role != "" && !slices.Contains(Roles(), tok.Role) {
			b.errorf(p+".role", "%s", confdec.Unknown("role", t.Role, roleNames()))
		}
		b.secretSource(p, "tokenEnv", t.TokenEnv, "tokenFile", t.TokenFile)
		s.Tokens = append(s.Tokens, tok)
	}
	if raw.EnvAllow != nil {
		s.EnvAllow = []string{}
		for i, pat := range *raw.EnvAllow {
			if _, err := path.Match(pat, ""); err != nil || pat == "" {
				b.d.ErrorAt(confdec.Index(b.at("server.envAllow"), i), "malformed pattern %q (want e.g. INTERLOCK_*)", pat)
			}
			s.EnvAllow = append(s.EnvAllow, pat)
		}
	}
	if raw.MaxBodyBytes != nil {
		s.MaxBodyBytes = *raw.MaxBodyBytes
		if s.MaxBodyBytes < 1<<10 || s.MaxBodyBytes > 64<<20 {
			b.errorf("server.maxBodyBytes", "%d is out of range (want 1024 to 67108864)", s.MaxBodyBytes)
		}
	}
}

func roleNames() []string {
	var out []string
	for _, r := range Roles() {
		out = append(out, string(r))
	}
	return out
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && strconv.Itoa(n) == p && n >= 0 && n <= 65535
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// secretSource checks a credential given as an environment variable name
// or a file path: exactly one of the two.
func (b *builder) secretSource(p, envField, env, fileField, file string) {
	switch {
	case env != "" && file != "":
		b.errorf(p+"."+fileField, "set either %s or %s, not both", envField, fileField)
	case env == "" && file == "":
		b.errorf(p, "needs %s or %s", envField, fileField)
	case env != "" && !envName.MatchString(env):
		b.errorf(p+"."+envField, "%q is not an environment variable name", env)
	}
}
