// Package emf writes and reads CloudWatch embedded metric format (EMF)
// documents: one JSON object per log line whose "_aws" member tells
// CloudWatch Logs which of its other members are metric values and which
// are dimensions, so metrics reach CloudWatch through the logs alone, with
// no PutMetricData call.
//
// It owns the format only: which metrics a function counts is its
// caller's. It never reads the time (the caller stamps each document) and
// never writes anywhere but the io.Writer it is given.
package emf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"
)

// Unit is a CloudWatch metric unit.
type Unit string

// The units Interlock's metrics use.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
)

// The format's limits (the specification's): metrics per directive,
// dimension keys per dimension set.
const (
	MaxMetrics    = 100
	MaxDimensions = 30
)

// Metric names one metric of a directive.
type Metric struct {
	Name string `json:"Name"`
	Unit Unit   `json:"Unit,omitempty"`
}

// Directive is a MetricDirective: the namespace, the dimension sets (each
// a list of root members whose string values are the dimensions) and the
// metrics (root members whose numeric values are the metric values).
type Directive struct {
	Namespace  string     `json:"Namespace"`
	Dimensions [][]string `json:"Dimensions"`
	Metrics    []Metric   `json:"Metrics"`
}

// Document is one EMF log line: when, the directives, the dimensions'
// values and the metrics' values.
type Document struct {
	Timestamp  time.Time
	Directives []Directive
	Dimensions map[string]string
	Values     map[string]float64
}

type metadata struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []Directive `json:"CloudWatchMetrics"`
}

// Check says what makes d not a valid document, naming the member: a
// directive without a namespace or metrics, too many metrics or
// dimensions, a dimension set naming a member d does not have, a metric
// without a finite value, a name used for both a dimension and a metric.
func (d Document) Check() error {
	if d.Timestamp.IsZero() {
		return errors.New("emf: the document has no timestamp")
	}
	if len(d.Directives) == 0 {
		return errors.New("emf: the document has no metric directive")
	}
	for k := range d.Dimensions {
		if _, ok := d.Values[k]; ok {
			return fmt.Errorf("emf: %q is both a dimension and a metric", k)
		}
		if k == "_aws" {
			return errors.New(`emf: "_aws" cannot be a dimension`)
		}
	}
	for i, dir := range d.Directives {
		if dir.Namespace == "" {
			return fmt.Errorf("emf: directive %d has no namespace", i)
		}
		if len(dir.Metrics) == 0 || len(dir.Metrics) > MaxMetrics {
			return fmt.Errorf("emf: directive %d has %d metrics (1 to %d)", i, len(dir.Metrics), MaxMetrics)
		}
		for _, set := range dir.Dimensions {
			if len(set) > MaxDimensions {
				return fmt.Errorf("emf: directive %d has a dimension set of %d keys (at most %d)", i, len(set), MaxDimensions)
			}
			for _, k := range set {
				if v, ok := d.Dimensions[k]; !ok || v == "" {
					return fmt.Errorf("emf: directive %d names dimension %q, which the document does not give", i, k)
				}
			}
		}
		for _, m := range dir.Metrics {
			if m.Name == "" {
				return fmt.Errorf("emf: directive %d has a metric without a name", i)
			}
			v, ok := d.Values[m.Name]
			if !ok {
				return fmt.Errorf("emf: directive %d names metric %q, which the document does not give", i, m.Name)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("emf: metric %q is %v, not a finite number", m.Name, v)
			}
		}
	}
	return nil
}

// Marshal returns d as one JSON object (no newline), after Check.
func (d Document) Marshal() ([]byte, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	root := make(map[string]any, 1+len(d.Dimensions)+len(d.Values))
	for k, v := range d.Dimensions {
		root[k] = v
	}
	for k, v := range d.Values {
		root[k] = v
	}
	root["_aws"] = metadata{Timestamp: d.Timestamp.UnixMilli(), CloudWatchMetrics: d.Directives}
	return json.Marshal(root)
}

// Write writes d to w as one line, in one Write call (so lines from
// concurrent writers to one file do not interleave).
func (d Document) Write(w io.Writer) error {
	b, err := d.Marshal()
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Parse reads one log line as an EMF document and checks it: the "_aws"
// member with a millisecond Timestamp and CloudWatchMetrics, every
// metric a number of the root, every dimension a string of the root.
// Root members no directive names are ignored, as CloudWatch ignores them.
func Parse(line []byte) (Document, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(line, &root); err != nil {
		return Document{}, fmt.Errorf("emf: not a JSON object: %w", err)
	}
	raw, ok := root["_aws"]
	if !ok {
		return Document{}, errors.New(`emf: no "_aws" member`)
	}
	var md struct {
		Timestamp         *json.Number `json:"Timestamp"`
		CloudWatchMetrics []Directive  `json:"CloudWatchMetrics"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&md); err != nil {
		return Document{}, fmt.Errorf(`emf: "_aws": %w`, err)
	}
	if md.Timestamp == nil {
		return Document{}, errors.New(`emf: "_aws" has no Timestamp`)
	}
	ms, err := md.Timestamp.Int64()
	if err != nil {
		return Document{}, fmt.Errorf(`emf: "_aws".Timestamp %s is not whole milliseconds`, md.Timestamp.String())
	}
	d := Document{Timestamp: time.UnixMilli(ms), Directives: md.CloudWatchMetrics, Dimensions: map[string]string{}, Values: map[string]float64{}}
	for _, dir := range md.CloudWatchMetrics {
		for _, set := range dir.Dimensions {
			for _, k := range set {
				var s string
				if err := json.Unmarshal(root[k], &s); err != nil {
					return Document{}, fmt.Errorf("emf: dimension %q is not a string member of the document", k)
				}
				d.Dimensions[k] = s
			}
		}
		for _, m := range dir.Metrics {
			var v float64
			if err := json.Unmarshal(root[m.Name], &v); err != nil {
				return Document{}, fmt.Errorf("emf: metric %q is not a number member of the document", m.Name)
			}
			d.Values[m.Name] = v
		}
	}
	return d, d.Check()
}

// Names lists the metric names of d's directives, sorted.
func (d Document) Names() []string {
	var out []string
	for _, dir := range d.Directives {
		for _, m := range dir.Metrics {
			out = append(out, m.Name)
		}
	}
	sort.Strings(out)
	return out
}
