package alert

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/interlockhq/interlock/internal/secret"
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

// Redact replaces every secret in s, in every form it takes on the wire
// (base64, JSON and URL escaping), with [redacted]: secret.Set.Redact,
// the one redaction every job type and sink shares. Secrets shorter than
// four characters are ignored: replacing them would shred ordinary text
// and they protect nothing. Text from outside (an answer, a transport
// error) goes through secret.Set.Line instead, which cleans first.
func Redact(s string, secrets ...string) string {
	var set secret.Set
	for _, sec := range secrets {
		set.Add(sec)
	}
	return set.Redact(s)
}
