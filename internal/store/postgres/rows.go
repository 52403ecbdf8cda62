package postgres

import (
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// Each record type's columns, scan and encode functions are sqlstore's
// (one place for both SQL stores); these are the names the statements
// here use.

const (
	pipelineCols = sqlstore.PipelineCols
	sensorCols   = sqlstore.SensorCols
	runCols      = sqlstore.RunCols
	ledgerCols   = sqlstore.LedgerCols
	baselineCols = sqlstore.BaselineCols
	markerCols   = sqlstore.MarkerCols
	timerCols    = sqlstore.TimerCols
	eventCols    = sqlstore.EventCols
)

var (
	scanPipeline = sqlstore.ScanPipeline
	scanSensor   = dialect.ScanSensor
	scanRun      = sqlstore.ScanRun
	scanLedger   = sqlstore.ScanLedger
	scanBaseline = sqlstore.ScanBaseline
	scanMarker   = sqlstore.ScanMarker
	scanTimer    = sqlstore.ScanTimer
	scanEvent    = sqlstore.ScanEvent
)

func encodePipeline(e *encoder, p store.Pipeline) []any {
	return encodeRow(e, sqlstore.EncodePipeline, p)
}
func encodeSensor(e *encoder, s store.Sensor) []any { return encodeRow(e, sqlstore.EncodeSensor, s) }
func encodeRun(e *encoder, x run.Run) []any         { return encodeRow(e, sqlstore.EncodeRun, x) }
func encodeCalendar(e *encoder, c store.Calendar) []any {
	return encodeRow(e, sqlstore.EncodeCalendar, c)
}
