package api

import (
	"errors"
	"net/http"

	"github.com/interlockhq/interlock/internal/lineage"
)

// LineagePath is where OpenLineage's HTTP transport posts run events: its
// default endpoint under the configured URL (OPENLINEAGE_URL=http://host:port).
const LineagePath = "/api/v1/lineage"

const codeInvalidLineage = "invalid_lineage_event"

// LineageAccepted answers an OpenLineage event.
type LineageAccepted struct {
	// Matched is false when no pipeline listens to the event's job or
	// datasets: it was acknowledged and counted, not stored.
	Matched bool           `json:"matched"`
	Writes  []LineageWrote `json:"writes"`
}

// LineageWrote is the sensor write an event became for one pipeline.
type LineageWrote struct {
	PipelineID string `json:"pipelineId"`
	Key        string `json:"key"`
	Period     string `json:"period"`
	Changed    bool   `json:"changed"` // new data for the rules
	// Stale: a replay, or older than the event stored; nothing written.
	Stale bool `json:"stale"`
}

// postLineage reads an OpenLineage RunEvent and writes it, through the
// engine's sensor decision, to every pipeline source it matches. It
// answers 200 once every write is durable, 202 when nothing listens.
func (s *server) postLineage(w http.ResponseWriter, r *http.Request) error {
	if _, err := readQuery(r); err != nil {
		return err
	}
	body, err := s.readJSONBody(w, r)
	if err != nil {
		return err
	}
	ev, err := lineage.Parse(body)
	if err != nil {
		s.metrics.CountLineage(LineageInvalid)
		var fe *lineage.FieldError
		if errors.As(err, &fe) {
			return errorf(http.StatusBadRequest, codeInvalidLineage, "%s", fe.Error())
		}
		return err
	}
	writes, err := s.eng.PutLineage(r.Context(), ev)
	if err != nil {
		if ae := classify(err); ae.status == http.StatusBadRequest {
			s.metrics.CountLineage(LineageInvalid)
		}
		return err
	}
	out := LineageAccepted{Matched: len(writes) > 0, Writes: make([]LineageWrote, 0, len(writes))}
	outcome := LineageUnchanged
	for _, x := range writes {
		out.Writes = append(out.Writes, LineageWrote{PipelineID: x.PipelineID, Key: x.Key, Period: x.Period, Changed: x.Changed, Stale: x.Stale})
		if x.Changed {
			outcome = LineageWritten
		}
	}
	if !out.Matched {
		s.metrics.CountLineage(LineageUnmatched)
		writeJSON(w, http.StatusAccepted, out)
		return nil
	}
	s.metrics.CountLineage(outcome)
	writeJSON(w, http.StatusOK, out)
	return nil
}
