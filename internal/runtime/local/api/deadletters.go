package api

import (
	"net/http"

	"github.com/interlockhq/interlock/internal/alert"
)

// DeadLetterList answers GET /v1/alerts/dead-letters.
type DeadLetterList struct {
	DeadLetters []alert.DeadLetter `json:"deadLetters"`
}

// listDeadLetters lists the alerts no sink accepted: after the retries,
// or at once for a permanent refusal. They stay until an operator acts.
func (s *server) listDeadLetters(r *http.Request) (DeadLetterList, error) {
	out := DeadLetterList{DeadLetters: []alert.DeadLetter{}}
	if s.dead != nil {
		dls, err := s.dead(r.Context())
		if err != nil {
			return DeadLetterList{}, err
		}
		if dls != nil {
			out.DeadLetters = dls
		}
	}
	return out, nil
}
