package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// SensorWritten is the answer to a sensor write.
type SensorWritten struct {
	PipelineID string    `json:"pipelineId"`
	Key        string    `json:"key"`
	Changed    bool      `json:"changed"` // new data; false for an identical re-write
	Period     string    `json:"period"`  // the period the write was judged for
	ReceivedAt time.Time `json:"receivedAt"`
}

// putSensor stores a sensor (flat or wrapped body) and answers only once
// the engine has committed it and its consequences durably.
func (s *server) putSensor(w http.ResponseWriter, r *http.Request) error {
	id, err := s.runningPipeline(r)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	if err := engine.CheckSensorKey(key); err != nil {
		return err
	}
	body, err := s.readJSONBody(w, r)
	if err != nil {
		return err
	}
	data, err := parseSensor(body)
	if err != nil {
		return err
	}
	elapsed := stopwatch()
	res, err := s.eng.PutSensor(r.Context(), id, key, data)
	if err != nil {
		return err
	}
	s.metrics.ObserveSensorWrite(id, res.Changed, elapsed())
	writeJSON(w, http.StatusOK, SensorWritten{
		PipelineID: id,
		Key:        key,
		Changed:    res.Changed,
		Period:     res.Period,
		ReceivedAt: res.Sensor.WrittenAt.UTC(),
	})
	return nil
}

// SensorView is a stored sensor.
type SensorView struct {
	Key       string        `json:"key"`
	Data      sensor.Object `json:"data"`
	Version   int64         `json:"version"`
	ChangedAt time.Time     `json:"changedAt"` // when this content was first received
	WrittenAt time.Time     `json:"writtenAt"` // the last write, identical or not
}

type SensorList struct {
	PipelineID string       `json:"pipelineId"`
	Sensors    []SensorView `json:"sensors"`
}

// listSensors returns a pipeline's stored sensors, by key.
func (s *server) listSensors(w http.ResponseWriter, r *http.Request) error {
	id, err := s.runningPipeline(r)
	if err != nil {
		return err
	}
	stored, err := s.eng.Store().SensorList(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, SensorList{PipelineID: id, Sensors: views(stored, func(x store.Sensor) SensorView {
		return SensorView{Key: x.Key, Data: x.Data, Version: x.Version, ChangedAt: x.ChangedAt.UTC(), WrittenAt: x.WrittenAt.UTC()}
	})})
	return nil
}

// parseSensor reads a sensor body. Syntax errors are described here, with
// the byte where they are; the rest (invalid UTF-8, a key given twice, not
// an object, too deep) is sensor.ParseBody's to say, so the API refuses
// exactly what the sensor package refuses.
func parseSensor(body []byte) (sensor.Object, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return sensor.Object{}, errorf(http.StatusBadRequest, codeInvalidSensor, `request body is empty: want a JSON object, flat ({"count": 5}) or wrapped ({"data": {"count": 5}})`)
	}
	// Bytes that are not UTF-8 are named as such by ParseBody, rather than
	// as the invalid character json.Valid would see outside a string.
	if utf8.Valid(body) && !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		return sensor.Object{}, errorf(http.StatusBadRequest, codeInvalidSensor, "%s", jsonProblem(err))
	}
	data, err := sensor.ParseBody(body)
	if err != nil {
		return sensor.Object{}, errorf(http.StatusBadRequest, codeInvalidSensor, "%s", err.Error())
	}
	return data, nil
}
