package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/interlockhq/interlock/internal/engine"
)

// views renders each of xs with view, in order; never nil, so an empty
// list is answered as [] (a list field is never null).
func views[T, V any](xs []T, view func(T) V) []V {
	out := make([]V, 0, len(xs))
	for _, x := range xs {
		out = append(out, view(x))
	}
	return out
}

// answer is a route that takes no query parameter and answers what get
// reads, 200 (or get's error, as respond renders every error).
func answer[V any](get func(r *http.Request) (V, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := readQuery(r); err != nil {
			return err
		}
		v, err := get(r)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, v)
		return nil
	}
}

// handlerFunc is a route handler: it writes a success itself and returns
// an error for everything else, which respond turns into the one error
// shape of the API.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// Error codes: stable strings clients can switch on.
const (
	codeBadRequest           = "bad_request"
	codeInvalidJSON          = "invalid_json"
	codeInvalidSensor        = "invalid_sensor"
	codeBodyTooLarge         = "body_too_large"
	codeUnsupportedMediaType = "unsupported_media_type"
	codeUnauthorized         = "unauthorized"
	codeForbidden            = "forbidden"
	codeNotFound             = "not_found"
	codeConflict             = "conflict"
	codeUnknownPipeline      = "unknown_pipeline"
	codeUnknownSilence       = "unknown_silence"
	codeMethodNotAllowed     = "method_not_allowed"
	codeNotReady             = "not_ready"
	codeNotImplemented       = "not_implemented"
	codeUnavailable          = "unavailable"
	codeInternal             = "internal"
)

// apiError is an error with the status and code it is answered with. Its
// message goes to the client, so it never holds a secret or an internal
// detail.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// ErrorBody is the JSON shape of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// classify maps an error to its response. Engine sentinels carry messages
// written for the caller (they name the pipeline, the field, the value);
// anything else is internal and is answered without its detail.
func classify(err error) *apiError {
	var ae *apiError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &tooLarge):
		return errorf(http.StatusRequestEntityTooLarge, codeBodyTooLarge, "request body is larger than %d bytes (server.maxBodyBytes)", tooLarge.Limit)
	case errors.Is(err, engine.ErrUnknownPipeline):
		return errorf(http.StatusNotFound, codeUnknownPipeline, "%s", err.Error())
	case errors.Is(err, engine.ErrInvalidSensor):
		return errorf(http.StatusBadRequest, codeInvalidSensor, "%s", err.Error())
	case errors.Is(err, engine.ErrUnknownSilence):
		return errorf(http.StatusNotFound, codeUnknownSilence, "%s", err.Error())
	case errors.Is(err, engine.ErrInvalidRequest):
		return errorf(http.StatusBadRequest, codeBadRequest, "%s", err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errorf(http.StatusServiceUnavailable, codeUnavailable, "request cancelled before it completed")
	}
	return errorf(http.StatusInternalServerError, codeInternal, "internal error")
}

// writeJSON writes v with status. An encoding failure after the header is
// sent cannot be reported to the client; the request log shows the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body, _ = json.Marshal(ErrorBody{Error: ErrorDetail{Code: codeInternal, Message: "cannot encode the response"}})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, ErrorBody{Error: ErrorDetail{Code: e.code, Message: e.msg}})
}
