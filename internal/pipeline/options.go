package pipeline

import (
	"path"
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
)

// DefaultEnvAllow is the default server.envAllow: only variables meant
// for Interlock may be read into a trigger's config.
var DefaultEnvAllow = []string{"INTERLOCK_*"}

// Options is what a pipeline document is checked against besides itself.
type Options struct {
	// Calendars are the named calendars schedule.include/exclude may
	// refer to (LoadCalendarDir). A name not in it is an error.
	Calendars map[string]schedule.Calendar
	// EnvAllow are the glob patterns (path.Match syntax) a ${env:NAME}
	// template variable must match (server.envAllow). nil means
	// DefaultEnvAllow; an empty non-nil list allows no variable at all.
	EnvAllow []string
	// Retention is the settings' retention; a pipeline whose history
	// window (HistoryWindow) is longer is refused. Zero means
	// DefaultRetention.
	Retention time.Duration
}

func (o Options) envAllow() []string {
	if o.EnvAllow == nil {
		return DefaultEnvAllow
	}
	return o.EnvAllow
}

// EnvAllowed reports whether the environment variable name matches one of
// patterns (path.Match syntax; a malformed pattern matches nothing).
func EnvAllowed(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, name); err == nil && ok {
			return true
		}
	}
	return false
}
