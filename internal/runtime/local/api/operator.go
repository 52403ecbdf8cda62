package api

import (
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/run"
)

// maxReasonLen bounds a rerun reason; it ends up in events and alerts.
const maxReasonLen = 500

type RerunRequest struct {
	Period string `json:"period"`
	Reason string `json:"reason"`
}

type RerunAnswer struct {
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason,omitempty"` // why it was rejected
	Period   string `json:"period"`
}

// requestRerun asks the engine to run a period again. A rejection (budget,
// circuit breaker) is a verdict, not an error: 200 with accepted false and
// the reason.
func (s *server) requestRerun(w http.ResponseWriter, r *http.Request) error {
	id, req, err := pipelineRequest[RerunRequest](s, w, r, false)
	if err != nil {
		return err
	}
	if strings.TrimSpace(req.Period) == "" {
		return errorf(http.StatusBadRequest, codeBadRequest, "field \"period\" is required (YYYY-MM-DD or YYYY-MM-DDTHH)")
	}
	if err := checkReason(req.Reason); err != nil {
		return err
	}
	res, err := s.eng.RequestRerun(r.Context(), id, req.Period, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, RerunAnswer{Accepted: res.Accepted, Reason: res.Reason, Period: res.Period})
	return nil
}

func checkReason(reason string) error {
	switch {
	case !utf8.ValidString(reason):
		return errorf(http.StatusBadRequest, codeBadRequest, "field \"reason\" is not valid UTF-8")
	case utf8.RuneCountInString(reason) > maxReasonLen:
		return errorf(http.StatusBadRequest, codeBadRequest, "field \"reason\" is longer than %d characters", maxReasonLen)
	case strings.IndexFunc(reason, unicode.IsControl) >= 0:
		return errorf(http.StatusBadRequest, codeBadRequest, "field \"reason\" contains control characters")
	}
	return nil
}

type PauseRequest struct {
	// Until is when the pause ends by itself (RFC 3339); empty: until
	// resumed.
	Until string `json:"until"`
}

// pause stops new runs of a pipeline, until resumed or until the given
// instant, and answers with the pipeline's view. Pausing again replaces
// the end of the pause.
func (s *server) pause(w http.ResponseWriter, r *http.Request) error {
	id, req, err := pipelineRequest[PauseRequest](s, w, r, true)
	if err != nil {
		return err
	}
	var until time.Time
	if req.Until != "" {
		if until, err = time.Parse(time.RFC3339, req.Until); err != nil {
			return errorf(http.StatusBadRequest, codeBadRequest, "field \"until\" %q: want an RFC 3339 time such as 2026-03-10T18:00:00Z", req.Until)
		}
		// The engine checks it too (run.CheckPauseUntil: in the future, at
		// most a year ahead); this says it in the API's terms.
		if err := run.CheckPauseUntil(until, s.eng.Now()); err != nil {
			return errorf(http.StatusBadRequest, codeBadRequest, "field \"until\": %v", err)
		}
	}
	if err := s.eng.Pause(r.Context(), id, until, by(r)); err != nil {
		return err
	}
	return s.answerView(w, r, id)
}

// resume allows new runs again; resuming a pipeline that is not paused
// changes nothing. It answers with the pipeline's view.
func (s *server) resume(w http.ResponseWriter, r *http.Request) error {
	id, _, err := pipelineRequest[struct{}](s, w, r, true)
	if err != nil {
		return err
	}
	if err := s.eng.Resume(r.Context(), id, by(r)); err != nil {
		return err
	}
	return s.answerView(w, r, id)
}

func (s *server) answerView(w http.ResponseWriter, r *http.Request, id string) error {
	v, err := s.viewOf(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// by names who acted, for the PIPELINE_PAUSED/RESUMED events: the token's
// name, never its value.
func by(r *http.Request) string {
	if name := infoFrom(r.Context()).caller.name; name != "" {
		return "api:" + name
	}
	return "api"
}
