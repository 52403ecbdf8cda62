package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// readRequest reads the body (readJSONBody) and decodes it into a T
// (decodeJSON; optional: an empty body is the zero T).
func readRequest[T any](s *server, w http.ResponseWriter, r *http.Request, optional bool) (T, error) {
	var req T
	body, err := s.readJSONBody(w, r)
	if err == nil {
		err = decodeJSON(body, &req, optional)
	}
	return req, err
}

// pipelineRequest is an action on one running pipeline (runningPipeline)
// and its body (readRequest), checked in that order.
func pipelineRequest[T any](s *server, w http.ResponseWriter, r *http.Request, optional bool) (string, T, error) {
	id, err := s.runningPipeline(r)
	if err != nil {
		var zero T
		return "", zero, err
	}
	req, err := readRequest[T](s, w, r, optional)
	return id, req, err
}

// readJSONBody reads the body of a route that takes JSON: first its
// declared encoding (checkContentEncoding) and type (checkContentType),
// then at most server.maxBodyBytes of it; a larger body is a
// *http.MaxBytesError, answered 413.
func (s *server) readJSONBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if err := checkContentEncoding(r); err != nil {
		// RFC 7694: a 415 for a content coding says which are accepted.
		w.Header().Set("Accept-Encoding", "identity")
		return nil, err
	}
	if err := checkContentType(r); err != nil {
		return nil, err
	}
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

// checkContentEncoding refuses a body declared as encoded (415): the API
// decodes no content coding, so a gzip or deflate body would otherwise be
// read, or stored, as the bytes it happens to be — and a plain body
// labelled gzip is a client bug worth saying so. No Content-Encoding, an
// empty one, or identity is accepted.
func checkContentEncoding(r *http.Request) error {
	for _, v := range r.Header.Values("Content-Encoding") {
		for coding := range strings.SplitSeq(v, ",") {
			coding = strings.TrimSpace(coding)
			if coding == "" || strings.EqualFold(coding, "identity") {
				continue
			}
			return errorf(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "Content-Encoding %q is not supported: send the body uncompressed, with no Content-Encoding header (or identity)", coding)
		}
	}
	return nil
}

// checkContentType refuses a body declared as anything but UTF-8 JSON
// (415): application/json or application/*+json, with any parameters but
// a charset other than utf-8. No Content-Type (or an empty one) is JSON,
// for curl -d and the like. A form or text body that happens to parse as
// JSON was not meant as this request, so it is not guessed at.
func checkContentType(r *http.Request) error {
	values := r.Header.Values("Content-Type")
	if len(values) > 1 {
		return errorf(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "Content-Type is given %d times; give it once, as application/json", len(values))
	}
	if len(values) == 0 || strings.TrimSpace(values[0]) == "" {
		return nil
	}
	mt, params, err := mime.ParseMediaType(values[0])
	if err != nil {
		return errorf(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "Content-Type does not parse (%s): send application/json", strings.TrimPrefix(err.Error(), "mime: "))
	}
	sub, isApp := strings.CutPrefix(mt, "application/")
	if !isApp || (sub != "json" && (!strings.HasSuffix(sub, "+json") || sub == "+json")) {
		return errorf(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "Content-Type %q is not a JSON media type: send application/json (or no Content-Type)", mt)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return errorf(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "charset %q: the body must be UTF-8 (charset=utf-8, or no charset)", cs)
	}
	return nil
}

// decodeJSON decodes a request body into dst (a pointer to a struct)
// strictly: one JSON object, read as strictly as a sensor body
// (sensor.ReadJSON: no invalid UTF-8, no key given twice, no control
// character in a key), whose field names are exactly the json names of
// dst's fields — encoding/json alone would keep the last of two "period"
// keys, take "PERIOD" for "period" and turn invalid UTF-8 into U+FFFD
// before any check saw it. An empty body is allowed when optional (dst
// keeps its zero value).
func decodeJSON(body []byte, dst any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return errorf(http.StatusBadRequest, codeInvalidJSON, "request body is empty: want a JSON object")
	}
	// Syntax errors are described by encoding/json, with the byte where
	// they are; bytes that are not UTF-8 are ReadJSON's to name.
	if utf8.Valid(body) && !json.Valid(body) {
		var v any
		return errorf(http.StatusBadRequest, codeInvalidJSON, "%s", jsonProblem(json.Unmarshal(body, &v)))
	}
	v, err := sensor.ReadJSON(body)
	if err != nil {
		return errorf(http.StatusBadRequest, codeInvalidJSON, "%s", err.Error())
	}
	obj, ok := v.Object()
	if !ok {
		return errorf(http.StatusBadRequest, codeInvalidJSON, "body must be a JSON object, got %s", v.Kind())
	}
	names := jsonNames(dst)
	for _, k := range obj.Keys() {
		if slices.Contains(names, k) {
			continue
		}
		for _, n := range names {
			if strings.EqualFold(n, k) {
				return errorf(http.StatusBadRequest, codeInvalidJSON, "unknown field %q: field names are case-sensitive (did you mean %q?)", k, n)
			}
		}
		if len(names) == 0 {
			return errorf(http.StatusBadRequest, codeInvalidJSON, "unknown field %q: this route takes an empty object", k)
		}
		return errorf(http.StatusBadRequest, codeInvalidJSON, "unknown field %q (known: %s)", k, strings.Join(names, ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return errorf(http.StatusBadRequest, codeInvalidJSON, "%s", jsonProblem(err))
	}
	return nil
}

// jsonNames lists the JSON field names of the struct dst points to, as
// its json tags spell them; an embedded struct without a json name
// (silence.Written) gives its own fields, as encoding/json reads them.
func jsonNames(dst any) []string {
	t := reflect.TypeOf(dst)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-":
		case name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
			names = append(names, jsonNames(reflect.New(f.Type).Interface())...)
		case name == "":
			names = append(names, f.Name)
		default:
			names = append(names, name)
		}
	}
	return names
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

// readQuery is how every /v1 route reads its query string: strictly, so a
// typo is an error rather than a silently unfiltered answer. A query that
// does not parse is refused whole (r.URL.Query() would drop the pairs it
// cannot read, ?pipeline=a%zz among them, and answer for every pipeline),
// and so is a parameter the route does not know (?pipline=). Every
// parameter a route takes narrows or places its answer, so one given
// without a value (?pipeline=, ?pipeline) is refused too: read as "no
// filter", ?pipeline=$UNSET would answer for every pipeline.
func readQuery(r *http.Request, known ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		hint := ""
		var esc url.EscapeError
		switch {
		case errors.As(err, &esc):
			hint = " (a literal % is written %25)"
		case strings.Contains(r.URL.RawQuery, ";"):
			hint = " (parameters are separated by &, and a literal ; is written %3B)"
		}
		return nil, errorf(http.StatusBadRequest, codeBadRequest, "malformed query string: %v%s; nothing was answered, as dropping the part that does not parse could widen the answer", err, hint)
	}
	for name := range q {
		if !slices.Contains(known, name) {
			if len(known) == 0 {
				return nil, errorf(http.StatusBadRequest, codeBadRequest, "unknown query parameter %q: this route takes none", name)
			}
			return nil, errorf(http.StatusBadRequest, codeBadRequest, "unknown query parameter %q (known: %s)", name, strings.Join(known, ", "))
		}
	}
	for _, name := range known {
		if slices.Contains(q[name], "") {
			return nil, errorf(http.StatusBadRequest, codeBadRequest, "query parameter %q is empty: give it a value or leave it out", name)
		}
	}
	return q, nil
}

// onlyParam reads the query of a route that takes one parameter
// (readQuery) and returns it (single): "" when it is left out.
func onlyParam(r *http.Request, name string) (string, error) {
	q, err := readQuery(r, name)
	if err != nil {
		return "", err
	}
	return single(q, name)
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

// runningPipeline is the {id} of a route on one pipeline that takes no
// query, once the query is checked and the pipeline is known to run.
func (s *server) runningPipeline(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if _, err := readQuery(r); err != nil {
		return "", err
	}
	_, _, err := s.loaded(r.Context(), id)
	return id, err
}

// loaded returns a pipeline the engine runs: its config and stored row,
// as read from the store now (engine.ErrUnknownPipeline when none runs).
func (s *server) loaded(ctx context.Context, id string) (*pipeline.Pipeline, store.Pipeline, error) {
	return s.eng.Pipeline(ctx, id)
}
