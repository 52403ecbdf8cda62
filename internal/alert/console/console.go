// Package console is the console sink: one line per alert on a writer
// (standard output in serve),
//
//	LEVEL pipeline date TYPE message [blocked by ROOT DATE: REASON]
//
// with "-" for a missing pipeline or date and the message folded onto one
// line, so the output stays greppable and one alert is one line.
package console

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"

	"github.com/interlockhq/interlock/internal/alert"
)

// Name is the console sink's name.
const Name = "console"

// Sink writes alert lines to a writer.
type Sink struct {
	name string
	mu   sync.Mutex
	w    io.Writer
}

var _ alert.Sink = (*Sink)(nil)

// New returns a sink writing to w, named Name.
func New(w io.Writer) *Sink { return &Sink{name: Name, w: w} }

// Named returns a sink writing to w under another name (a second console
// route).
func Named(name string, w io.Writer) *Sink { return &Sink{name: name, w: w} }

// Name implements alert.Sink.
func (s *Sink) Name() string { return s.name }

// Deliver implements alert.Sink. A write error is permanent: the console
// does not come back.
func (s *Sink) Deliver(_ context.Context, a alert.Alert) (bool, error) {
	line := Line(a)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.w, line); err != nil {
		return false, fmt.Errorf("console: %w", err)
	}
	return false, nil
}

// Line is the text written for a, newline included.
func Line(a alert.Alert) string {
	e := a.Event
	line := fmt.Sprintf("%s %s %s %s %s", strings.ToUpper(string(a.Level())), orDash(e.PipelineID), orDash(e.Date),
		e.Type, strings.Join(strings.Fields(e.Message), " "))
	if b, ok := a.Blocked(); ok {
		line += fmt.Sprintf(" [blocked by %s %s: %s]", b.PipelineID, b.Date, b.Reason)
	}
	// Control characters (a terminal escape in a message) are dropped.
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, line)
	return strings.TrimRight(line, " ") + "\n"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
