package emf

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func doc() Document {
	return Document{
		Timestamp:  time.Date(2099, 3, 7, 6, 0, 0, 123456789, time.UTC),
		Directives: []Directive{{Namespace: "Interlock", Dimensions: [][]string{{"Environment", "Function"}, {"Environment"}}, Metrics: []Metric{{Name: "A", Unit: Count}, {Name: "B", Unit: Count}}}},
		Dimensions: map[string]string{"Environment": "prod", "Function": "watchdog"},
		Values:     map[string]float64{"A": 2, "B": 0},
	}
}

// TestWriteThenParse: a written document is one line that parses back
// to the same values, its timestamp in whole milliseconds.
func TestWriteThenParse(t *testing.T) {
	var buf bytes.Buffer
	if err := doc().Write(&buf); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("not one line: %q", line)
	}
	if !strings.Contains(line, `"Timestamp":4076546400123`) {
		t.Fatalf("timestamp not in ms: %s", line)
	}
	d, err := Parse([]byte(strings.TrimSpace(line)))
	if err != nil {
		t.Fatal(err)
	}
	if d.Values["A"] != 2 || d.Values["B"] != 0 || d.Dimensions["Function"] != "watchdog" || !d.Timestamp.Equal(time.UnixMilli(4076546400123)) {
		t.Fatalf("parsed %+v", d)
	}
	if got := strings.Join(d.Names(), ","); got != "A,B" {
		t.Fatalf("names %s", got)
	}
}

// TestCheckRefusesWhatCloudWatchWouldDrop: each way a document breaks
// the specification is refused before it is written, naming the member.
func TestCheckRefusesWhatCloudWatchWouldDrop(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*Document)
		want string
	}{
		"no timestamp":         {func(d *Document) { d.Timestamp = time.Time{} }, "timestamp"},
		"no directive":         {func(d *Document) { d.Directives = nil }, "directive"},
		"no namespace":         {func(d *Document) { d.Directives[0].Namespace = "" }, "namespace"},
		"metric without value": {func(d *Document) { delete(d.Values, "B") }, `"B"`},
		"missing dimension":    {func(d *Document) { delete(d.Dimensions, "Environment") }, `"Environment"`},
		"empty dimension":      {func(d *Document) { d.Dimensions["Function"] = "" }, `"Function"`},
		"not finite":           {func(d *Document) { d.Values["A"] = math.Inf(1) }, `"A"`},
		"dimension is metric":  {func(d *Document) { d.Dimensions["A"] = "x" }, `"A"`},
		"too many metrics": {func(d *Document) {
			for i := range MaxMetrics {
				n := string(rune('a'+i%26)) + strings.Repeat("x", i/26)
				d.Directives[0].Metrics = append(d.Directives[0].Metrics, Metric{Name: n})
				d.Values[n] = 1
			}
		}, "metrics"},
	} {
		d := doc()
		d.Dimensions = map[string]string{"Environment": "prod", "Function": "watchdog"}
		d.Values = map[string]float64{"A": 2, "B": 0}
		tc.edit(&d)
		var buf bytes.Buffer
		err := d.Write(&buf)
		if err == nil || !strings.Contains(err.Error(), tc.want) || buf.Len() != 0 {
			t.Errorf("%s: %v (wrote %q), want an error naming %s", name, err, buf.String(), tc.want)
		}
	}
}

// TestParseRefusesLinesThatAreNotEMF: a plain log line, a metric that is
// not a number, a dimension that is not a string, a fractional timestamp.
func TestParseRefusesLinesThatAreNotEMF(t *testing.T) {
	for _, line := range []string{
		`{"level":"INFO","msg":"watchdog pass"}`,
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"I","Dimensions":[["F"]],"Metrics":[{"Name":"A"}]}]},"F":"x","A":"1"}`,
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"I","Dimensions":[["F"]],"Metrics":[{"Name":"A"}]}]},"F":1,"A":1}`,
		`{"_aws":{"Timestamp":1.5,"CloudWatchMetrics":[{"Namespace":"I","Dimensions":[["F"]],"Metrics":[{"Name":"A"}]}]},"F":"x","A":1}`,
		`not json`,
	} {
		if _, err := Parse([]byte(line)); err == nil {
			t.Errorf("%s: parsed", line)
		}
	}
}
