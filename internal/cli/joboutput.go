package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/textsafe"
)

// printJobOutput prints what the period's last finished job printed (the
// tail kept in its JOB_COMPLETED or JOB_FAILED event), indented under a
// heading. The text comes from a server: it is cleaned again so no
// terminal escape reaches the screen.
func printJobOutput(w io.Writer, o *engine.JobOutput) {
	if o == nil || o.Output == "" {
		return
	}
	what := "job"
	if o.Attempt > 0 {
		what = fmt.Sprintf("attempt %d", o.Attempt)
	}
	fmt.Fprintf(w, "last output of %s (%s at %s):\n", what, o.Event, when(&o.At))
	for _, l := range strings.Split(textsafe.Lines(o.Output), "\n") {
		fmt.Fprintf(w, "  | %s\n", l)
	}
}
