package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/interlockhq/interlock/internal/confdec"
)

// ErrTemplate is wrapped by every template error.
var ErrTemplate = errors.New("invalid template")

// TemplateVars are the values of one run's template variables (product
// spec §3 item 13).
type TemplateVars struct {
	Pipeline string // ${PIPELINE}: the pipeline id
	Schedule string // ${SCHEDULE}: "cron" or "stream"
	Date     string // ${DATE}: the period's date, YYYY-MM-DD
	Hour     string // ${HOUR}: "00"–"23" for an hourly period, "" for a daily one
	RunID    string // ${RUN_ID}
}

// templateVarNames lists the run variables; ${env:NAME} is the other form.
var templateVarNames = []string{"PIPELINE", "SCHEDULE", "DATE", "HOUR", "RUN_ID"}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// FilePrefix marks a file secret in the lookup function given to
// ExpandTemplate: ${file:/run/secrets/token} is looked up as
// "file:/run/secrets/token", so one hook (which redaction already wraps)
// serves environment and file secrets alike.
const FilePrefix = "file:"

// ExpandTemplate replaces the template variables in s. "${" starts a
// variable and "}" ends it; "$${" is a literal "${"; any other "$" is
// literal. An unknown variable, a malformed reference, an unset
// environment variable or an unreadable secret file is an error, never an
// empty string: a trigger must not call a URL with a hole in it. env looks
// up an environment variable, or with FilePrefix a secret file (nil: none
// is set); the env allow-list was enforced at load.
func ExpandTemplate(s string, vars TemplateVars, env func(string) (string, bool)) (string, error) {
	return scanTemplate(s, func(ref string) (string, error) {
		if path, ok := strings.CutPrefix(ref, FilePrefix); ok {
			if err := checkSecretFile(ref, path); err != nil {
				return "", err
			}
			if env != nil {
				if v, ok := env(FilePrefix + path); ok {
					return v, nil
				}
			}
			return "", fmt.Errorf("%w: ${%s}: secret file %s cannot be read", ErrTemplate, ref, path)
		}
		name, isEnv, err := parseRef(ref)
		if err != nil {
			return "", err
		}
		if isEnv {
			if env != nil {
				if v, ok := env(name); ok {
					return v, nil
				}
			}
			return "", fmt.Errorf("%w: ${env:%s}: environment variable %s is not set", ErrTemplate, name, name)
		}
		switch name {
		case "PIPELINE":
			return vars.Pipeline, nil
		case "SCHEDULE":
			return vars.Schedule, nil
		case "DATE":
			return vars.Date, nil
		case "HOUR":
			return vars.Hour, nil
		default: // RUN_ID; parseRef admits nothing else
			return vars.RunID, nil
		}
	})
}

// CheckTemplate reports the first problem with the template variables in
// s: unknown variables, malformed references, and ${env:NAME} whose NAME
// matches none of envAllow.
func CheckTemplate(s string, envAllow []string) error {
	_, err := sampleTemplate(s, envAllow)
	return err
}

// sampleTemplate checks s and returns it with every variable replaced by
// "0", which keeps a JSON body with templates JSON (`{"n": ${HOUR}}`,
// `{"d": "${DATE}"}`) so its syntax can be checked at load.
func sampleTemplate(s string, envAllow []string) (string, error) {
	return scanTemplate(s, func(ref string) (string, error) {
		if path, ok := strings.CutPrefix(ref, FilePrefix); ok {
			if err := checkSecretFile(ref, path); err != nil {
				return "", err
			}
			return "0", nil
		}
		name, isEnv, err := parseRef(ref)
		if err != nil {
			return "", err
		}
		if isEnv && !EnvAllowed(name, envAllow) {
			return "", fmt.Errorf("%w: ${env:%s}: environment variable %s is not allowed by server.envAllow (%s)",
				ErrTemplate, name, name, strings.Join(envAllow, ", "))
		}
		return "0", nil
	})
}

// EnvRefs lists the environment variables s refers to as ${env:NAME}, in
// order, each once; malformed references are left to CheckTemplate.
func EnvRefs(s string) []string {
	var names []string
	_, _ = scanTemplate(s, func(ref string) (string, error) {
		if name, isEnv, err := parseRef(ref); err == nil && isEnv && !slices.Contains(names, name) {
			names = append(names, name)
		}
		return "", nil
	})
	return names
}

func scanTemplate(s string, subst func(ref string) (string, error)) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("%w: %q has no closing }", ErrTemplate, s[i:])
			}
			v, err := subst(s[i+2 : i+2+end])
			if err != nil {
				return "", err
			}
			b.WriteString(v)
			i += end + 3
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), nil
}

// checkSecretFile accepts absolute, clean paths only: a relative path
// would depend on serve's working directory.
func checkSecretFile(ref, path string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return fmt.Errorf("%w: ${%s}: a secret file must be an absolute, clean path like /run/secrets/token", ErrTemplate, ref)
	}
	return nil
}

func parseRef(ref string) (name string, isEnv bool, err error) {
	if n, ok := strings.CutPrefix(ref, "env:"); ok {
		if !envName.MatchString(n) {
			return "", false, fmt.Errorf("%w: ${%s}: %q is not an environment variable name", ErrTemplate, ref, n)
		}
		return n, true, nil
	}
	for _, v := range templateVarNames {
		if ref == v {
			return ref, false, nil
		}
	}
	known := strings.Join(templateVarNames, ", ") + ", env:NAME, file:/PATH"
	if ref == "" {
		return "", false, fmt.Errorf("%w: empty variable ${} (want one of %s)", ErrTemplate, known)
	}
	if s := confdec.Suggest(ref, templateVarNames); s != "" {
		return "", false, fmt.Errorf("%w: unknown variable ${%s}, did you mean ${%s}?", ErrTemplate, ref, s)
	}
	return "", false, fmt.Errorf("%w: unknown variable ${%s} (want one of %s; write $${ for a literal ${)", ErrTemplate, ref, known)
}
