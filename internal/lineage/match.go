package lineage

import (
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// The fields of the sensor an event becomes (SensorData): what rules read.
const (
	FieldEventType        = "eventType"
	FieldEventTime        = "eventTime"
	FieldRunID            = "runId"
	FieldJobNamespace     = "jobNamespace"
	FieldJobName          = "jobName"
	FieldProducer         = "producer"
	FieldNominalStartTime = "nominalStartTime"
	FieldRowCount         = "rowCount"
	FieldBytes            = "bytes"
	FieldAssertions       = "assertions"
	FieldAssertionsFailed = "assertionsFailed"
)

// Matches lists the sources of p that ev matches, in config order: a job
// source when the event's job is the one named, a dataset source when the
// dataset named is one of the event's outputs (the job wrote it).
func Matches(p *pipeline.Pipeline, ev Event) []pipeline.LineageSource {
	var out []pipeline.LineageSource
	for _, src := range p.Lineage {
		if matches(src, ev) {
			out = append(out, src)
		}
	}
	return out
}

func matches(src pipeline.LineageSource, ev Event) bool {
	if src.Job != nil {
		return ev.Job == Name(*src.Job)
	}
	if src.Dataset != nil {
		for _, d := range ev.Outputs {
			if d.Name == Name(*src.Dataset) {
				return true
			}
		}
	}
	return false
}

// Period is the period ev reports on for p: the nominalTime facet's
// nominalStartTime when the event has one (the schedule's time, which is
// the period a scheduler means), else the event's time; read on the wall
// clock of p's schedule.timezone, an hour of it when p's periods are
// hours (pipeline.Hourly), else a day.
func Period(p *pipeline.Pipeline, ev Event) schedule.Period {
	at := ev.NominalStart
	if at.IsZero() {
		at = ev.Time
	}
	return schedule.PeriodAt(at, p.Schedule.Location, p.Hourly())
}

// SensorKey is the per-period sensor key an event of src is written
// under: its key with the period suffix, so each period keeps its own
// event and a backfilled period reads its own.
func SensorKey(src pipeline.LineageSource, per schedule.Period) string {
	return src.Key + "#" + per.String()
}

// SensorData is the sensor an event of src becomes. Every event carries
// eventType, eventTime, runId, jobNamespace, jobName and producer (and
// nominalStartTime when it has one). Of the datasets the source selects
// (a job source: all the event's; a dataset source: those of that
// namespace and name), rowCount and bytes sum the outputStatistics of the
// outputs, or, when no output reports them, the dataQualityMetrics of
// the inputs; assertions counts the dataQualityAssertions entries and
// assertionsFailed those that did not succeed. A field whose facet no
// selected dataset carries is absent, so a rule on it fails as "missing"
// rather than passing on a zero.
func SensorData(src pipeline.LineageSource, ev Event) sensor.Object {
	f := map[string]sensor.Value{
		FieldEventType:    sensor.StringValue(string(ev.Type)),
		FieldEventTime:    sensor.StringValue(ev.Time.UTC().Format(time.RFC3339Nano)),
		FieldRunID:        sensor.StringValue(ev.RunID),
		FieldJobNamespace: sensor.StringValue(ev.Job.Namespace),
		FieldJobName:      sensor.StringValue(ev.Job.Name),
		FieldProducer:     sensor.StringValue(ev.Producer),
	}
	if !ev.NominalStart.IsZero() {
		f[FieldNominalStartTime] = sensor.StringValue(ev.NominalStart.UTC().Format(time.RFC3339Nano))
	}
	outs := selected(src, ev.Outputs)
	ins := selected(src, ev.Inputs)
	rows, bytes, ok := sums(outs)
	if !ok {
		rows, bytes, _ = sums(ins)
	}
	if rows != nil {
		f[FieldRowCount] = sensor.IntValue(*rows)
	}
	if bytes != nil {
		f[FieldBytes] = sensor.IntValue(*bytes)
	}
	var total, failed int64
	seen := false
	for _, d := range append(ins, outs...) {
		if d.Assertions == nil {
			continue
		}
		seen = true
		for _, a := range d.Assertions {
			total++
			if !a.Success {
				failed++
			}
		}
	}
	if seen {
		f[FieldAssertions] = sensor.IntValue(total)
		f[FieldAssertionsFailed] = sensor.IntValue(failed)
	}
	return sensor.NewObject(f)
}

func selected(src pipeline.LineageSource, ds []Dataset) []Dataset {
	if src.Dataset == nil {
		return ds
	}
	var out []Dataset
	for _, d := range ds {
		if d.Name == Name(*src.Dataset) {
			out = append(out, d)
		}
	}
	return out
}

// sums adds the row counts and byte sizes of ds; ok when any reports
// either. A sum that would overflow stays at the largest value.
func sums(ds []Dataset) (rows, bytes *int64, ok bool) {
	add := func(acc **int64, n *int64) {
		if n == nil {
			return
		}
		ok = true
		if *acc == nil {
			v := int64(0)
			*acc = &v
		}
		if **acc > maxInt64-*n {
			**acc = maxInt64
			return
		}
		**acc += *n
	}
	for _, d := range ds {
		add(&rows, d.RowCount)
		add(&bytes, d.Bytes)
	}
	return rows, bytes, ok
}

const maxInt64 = 1<<63 - 1

// Stale reports whether an event's sensor data (SensorData) changes
// nothing against the sensor stored under its key, and must not be
// written: the same run's event of the same type (a replay: events are
// idempotent by run id and event type), a START or RUNNING of a run whose
// end is stored (events of one run may arrive out of order), or an event
// older than the stored one (a replay of an earlier run). stored is nil
// when nothing is stored; stored data that is no lineage event (written
// by a PUT) never makes an event stale.
func Stale(stored *sensor.Object, data sensor.Object) bool {
	if stored == nil {
		return false
	}
	oldRun, ok1 := str(*stored, FieldRunID)
	oldType, ok2 := str(*stored, FieldEventType)
	oldTime, ok3 := instantOf(*stored)
	newRun, _ := str(data, FieldRunID)
	newType, _ := str(data, FieldEventType)
	newTime, _ := instantOf(data)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	if oldRun == newRun && (oldType == newType || EventType(oldType).Terminal() && !EventType(newType).Terminal()) {
		return true
	}
	return newTime.Before(oldTime)
}

func str(o sensor.Object, field string) (string, bool) {
	v, ok := o.Get(field)
	if !ok {
		return "", false
	}
	return v.Str()
}

func instantOf(o sensor.Object) (time.Time, bool) {
	s, ok := str(o, FieldEventTime)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// EventRef names the run event a lineage sensor holds, for explain.
type EventRef struct {
	EventType string `json:"eventType"`
	RunID     string `json:"runId"`
	Job       string `json:"job"` // namespace/name
	Producer  string `json:"producer"`
	EventTime string `json:"eventTime"`
}

// EventOf reads the run event a stored sensor of p holds: ok when its
// key, less its period suffix, is one of p's lineage source keys and its
// data has the fields an event writes.
func EventOf(p *pipeline.Pipeline, key string, data sensor.Object) (EventRef, bool) {
	base, _, named := schedule.SplitPeriodKey(key)
	if !named {
		return EventRef{}, false
	}
	found := false
	for _, src := range p.Lineage {
		found = found || src.Key == base
	}
	var r EventRef
	var ok [6]bool
	r.EventType, ok[0] = str(data, FieldEventType)
	r.RunID, ok[1] = str(data, FieldRunID)
	ns, nsOK := str(data, FieldJobNamespace)
	name, nameOK := str(data, FieldJobName)
	r.Job, ok[2], ok[3] = ns+"/"+name, nsOK, nameOK
	r.Producer, ok[4] = str(data, FieldProducer)
	r.EventTime, ok[5] = str(data, FieldEventTime)
	for _, b := range ok {
		found = found && b
	}
	return r, found
}
