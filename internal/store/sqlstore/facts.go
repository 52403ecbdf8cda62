package sqlstore

import (
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// A Read is one statement of a backend's Facts and what puts its rows
// into the Facts.
type Read struct {
	Query string
	Args  []any
	// Put scans the statement's rows, or takes its error, into the Facts.
	// The caller closes the rows.
	Put func(rows Rows, err error) error
}

// ReadInto is a Read whose rows, scanned by scan, go to put; what names
// them in errors.
func ReadInto[T any](d *Dialect, what, query string, args []any, scan func(Scanner) (T, error), put func(T)) Read {
	return Read{Query: query, Args: args, Put: func(rows Rows, err error) error {
		vs, err := List(d, rows, err, scan, what)
		for _, v := range vs {
			put(v)
		}
		return err
	}}
}

// PipelineListQuery is PipelineList's statement: every pipeline, by id.
const PipelineListQuery = `SELECT ` + PipelineCols + ` FROM pipelines ORDER BY id`

// BackfillListQuery is BackfillList's statement: a pipeline's backfills,
// oldest request first.
func (d *Dialect) BackfillListQuery(pipelineID string) (string, []any) {
	w := Where{D: d}
	w.Add("pipeline_id = ?", pipelineID)
	return `SELECT ` + BackfillCols + ` FROM backfills` + w.String() + ` ORDER BY requested_at, id`, w.Args
}

// RangeReads are the statements of q's range reads but its event pages
// (RunLists, SensorPrefixes, SensorsChanged, Backfills, AllPipelines),
// each its single read's own statement, filling f under the params they
// were asked with.
func (d *Dialect) RangeReads(q store.FactsQuery, f *store.Facts) []Read {
	var reads []Read
	for _, p := range q.RunLists {
		query, args := d.RunListQuery(p)
		reads = append(reads, ReadInto(d, "runs", query, args, ScanRun, func(x run.Run) { f.RunLists[p] = append(f.RunLists[p], x) }))
	}
	for _, p := range q.SensorPrefixes {
		query, args := d.SensorListPrefixQuery(p)
		reads = append(reads, ReadInto(d, "sensors of "+p.PipelineID+" starting with "+p.Prefix, query, args, d.ScanSensor,
			func(x store.Sensor) { f.SensorPrefixes[p] = append(f.SensorPrefixes[p], x) }))
	}
	for _, p := range q.SensorsChanged {
		query, args := d.SensorListChangedQuery(p)
		reads = append(reads, ReadInto(d, "changed sensors", query, args, d.ScanSensor,
			func(x store.Sensor) { f.SensorsChanged[p] = append(f.SensorsChanged[p], x) }))
	}
	for _, id := range q.Backfills {
		query, args := d.BackfillListQuery(id)
		reads = append(reads, ReadInto(d, "backfills of "+id, query, args, ScanBackfill,
			func(x store.Backfill) { f.Backfills[id] = append(f.Backfills[id], x) }))
	}
	if q.AllPipelines {
		reads = append(reads, ReadInto(d, "pipelines", PipelineListQuery, nil, ScanPipeline,
			func(x store.Pipeline) { f.AllPipelines = append(f.AllPipelines, x) }))
	}
	return reads
}
