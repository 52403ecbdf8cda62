package command

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/triggertest"
)

// TestContract runs the shared job-type contract against a real program:
// a script whose behaviour the harness switches through a mode file. The
// script prints the secret it is given, and then the secret split by
// control and format characters and in its wire forms
// (triggertest.Echo), on stdout and stderr, so the kit proves all of it
// is redacted from the output and the failure message.
func TestContract(t *testing.T) {
	triggertest.Run(t, func(t *testing.T) *triggertest.Harness {
		dir := t.TempDir()
		mode := filepath.Join(dir, "mode")
		script := filepath.Join(dir, "job.sh")
		const secret = `s3cr3t "command\token/+x`
		echo := filepath.Join(dir, "echo")
		if err := os.WriteFile(echo, []byte(triggertest.Echo(secret, nil)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		body := "#!/bin/sh\nm=$(cat " + mode + ")\necho \"token=$1\"\ncat " + echo + "\ncat " + echo + " >&2\n[ \"$m\" = start-ok ] && exit 0\nexit 3\n"
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		r := Runner{LookupEnv: func(name string) (string, bool) { return secret, name == "INTERLOCK_JOB_TOKEN" }}
		req := request(t, `{command: [/bin/sh, `+script+`, "${env:INTERLOCK_JOB_TOKEN}"]}`)
		return &triggertest.Harness{
			Runner:      r,
			NewRunner:   func() trigger.Runner { return r },
			Request:     req,
			Secret:      secret,
			Synchronous: true,
			Set: func(start, _ triggertest.Mode) {
				if err := os.WriteFile(mode, []byte(start), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			// A local program has no throttling or server errors, and no
			// status to poll: it is synchronous.
			Supports: func(m triggertest.Mode) bool {
				return m == triggertest.StartOK || m == triggertest.StartRejected
			},
		}
	})
}
