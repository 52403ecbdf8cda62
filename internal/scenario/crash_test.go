package scenario

import (
	"strings"
	"testing"
)

// TestJobCrash: a job plan may stop the process during its trigger call,
// after the job system received it or before; anything else is an error
// naming the field.
func TestJobCrash(t *testing.T) {
	with := func(crash string) string {
		return strings.Replace(minimal, "timeline:", "jobs:\n  p:\n    - {duration: 5m, crash: "+crash+"}\n    - {duration: 5m}\ntimeline:", 1)
	}
	for _, c := range []Crash{CrashAfterStart, CrashBeforeStart} {
		sc, err := Parse("m.yaml", []byte(with(string(c))))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if got := sc.Jobs["p"]; len(got) != 2 || got[0].Crash != c || got[1].Crash != "" {
			t.Fatalf("%s: jobs %+v", c, got)
		}
	}
	_, err := Parse("m.yaml", []byte(with("sometimes")))
	if err == nil || !strings.Contains(err.Error(), `jobs.p[0].crash: unknown crash "sometimes" (want after-start or before-start)`) {
		t.Fatalf("err = %v", err)
	}
}
