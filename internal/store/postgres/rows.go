package postgres

import (
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Each record type's columns, scan and encode functions are sqlstore's
// (one place for both SQL stores); a commit encodes its rows with them,
// keeping the first error in its encoder.

func encodePipeline(e *encoder, p store.Pipeline) []any {
	return encodeRow(e, sqlstore.EncodePipeline, p)
}
func encodeSensor(e *encoder, s store.Sensor) []any { return encodeRow(e, sqlstore.EncodeSensor, s) }
func encodeRun(e *encoder, x run.Run) []any         { return encodeRow(e, sqlstore.EncodeRun, x) }
func encodeCalendar(e *encoder, c store.Calendar) []any {
	return encodeRow(e, sqlstore.EncodeCalendar, c)
}
