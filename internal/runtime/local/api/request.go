package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/store"
)

// readBody reads the request body, at most server.maxBodyBytes of it; a
// larger body is a *http.MaxBytesError, answered 413.
func (s *server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, err
		}
		return nil, errorf(http.StatusBadRequest, codeBadRequest, "cannot read the request body: %v", err)
	}
	return body, nil
}

// decodeJSON decodes a request body into dst strictly: one JSON object,
// no unknown fields, nothing after it. An empty body is allowed when
// optional (dst keeps its zero value).
func decodeJSON(body []byte, dst any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return errorf(http.StatusBadRequest, codeInvalidJSON, "request body is empty: want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return errorf(http.StatusBadRequest, codeInvalidJSON, "%s", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errorf(http.StatusBadRequest, codeInvalidJSON, "trailing content after the JSON object")
	}
	return nil
}

// jsonProblem says what is wrong with a body in the client's terms.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return "body must be a JSON object, got " + typeErr.Value
	case errors.As(err, &typeErr):
		return fmt.Sprintf("field %q: want %s, got %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("invalid JSON at byte %d: %s", syntaxErr.Offset, strings.TrimPrefix(syntaxErr.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "invalid JSON: the body ends in the middle of a value"
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field") {
		return msg
	}
	return "invalid JSON: " + msg
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	}
	return "a number"
}

// checkQuery refuses query parameters the route does not know, so a typo
// (?pipline=) is an error rather than a silently unfiltered answer.
func checkQuery(q url.Values, known ...string) error {
	for name := range q {
		if !slices.Contains(known, name) {
			if len(known) == 0 {
				return errorf(http.StatusBadRequest, codeBadRequest, "unknown query parameter %q: this route takes none", name)
			}
			return errorf(http.StatusBadRequest, codeBadRequest, "unknown query parameter %q (known: %s)", name, strings.Join(known, ", "))
		}
	}
	return nil
}

// single returns a query parameter that may be given at most once.
func single(q url.Values, name string) (string, error) {
	vs := q[name]
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
		return vs[0], nil
	}
	return "", errorf(http.StatusBadRequest, codeBadRequest, "query parameter %q is given %d times; give it once", name, len(vs))
}

// Paging bounds of list routes.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

// limitParam reads ?limit=: a positive whole number, capped at maxLimit
// (a larger one is served as maxLimit, and paging goes on from there).
func limitParam(q url.Values) (int, error) {
	s, err := single(q, "limit")
	if err != nil || s == "" {
		return defaultLimit, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, errorf(http.StatusBadRequest, codeBadRequest, "limit %q: want a whole number from 1 to %d", s, maxLimit)
	}
	return min(n, maxLimit), nil
}

// loaded returns a pipeline the engine runs: its config and stored row.
func (s *server) loaded(id string) (*pipeline.Pipeline, store.Pipeline, error) {
	p, row, ok := s.eng.Pipeline(id)
	if !ok {
		return nil, store.Pipeline{}, fmt.Errorf("%w %q", engine.ErrUnknownPipeline, id)
	}
	return p, row, nil
}
