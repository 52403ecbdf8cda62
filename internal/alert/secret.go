package alert

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Secret yields a credential (a Slack bot token, a webhook signing
// secret). It is called for every delivery, so a rotated token file is
// picked up without a restart. Its error names where the secret should
// come from, never the secret.
type Secret func() (string, error)

// EnvSecret reads the secret from the environment variable name, through
// lookup (nil: os.LookupEnv). An unset or blank variable is an error.
func EnvSecret(name string, lookup func(string) (string, bool)) Secret {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return func() (string, error) {
		v, ok := lookup(name)
		v = strings.TrimSpace(v)
		switch {
		case !ok:
			return "", fmt.Errorf("environment variable %s is not set", name)
		case v == "":
			return "", fmt.Errorf("environment variable %s is empty", name)
		}
		return v, nil
	}
}

// FileSecret reads the secret from the file at path, trimmed (a mounted
// Kubernetes or Docker secret). A missing or blank file is an error.
func FileSecret(path string) Secret {
	return func() (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			// The *PathError names the file and the cause; it cannot hold
			// the content.
			var pe *os.PathError
			if errors.As(err, &pe) {
				return "", fmt.Errorf("read secret file %s: %v", path, pe.Err)
			}
			return "", fmt.Errorf("read secret file %s: %v", path, err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("secret file %s is empty", path)
		}
		return v, nil
	}
}

// StaticSecret is a secret known in advance (tests, embedding callers).
func StaticSecret(v string) Secret {
	return func() (string, error) {
		if v == "" {
			return "", errors.New("secret is empty")
		}
		return v, nil
	}
}

// Redact replaces every occurrence of each secret in s with [REDACTED].
// Secrets shorter than four characters are ignored: replacing them would
// shred ordinary text and they protect nothing.
func Redact(s string, secrets ...string) string {
	// Longest first: a secret inside another must not leave the rest of
	// the longer one visible.
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return s
}
