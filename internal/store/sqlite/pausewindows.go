package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/pause"

	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// pauseMarkerPrefix is the kind of the markers that held pause windows
// before 0009: "paused:" and the window's start (RFC3339, nanoseconds), the
// marker's time its end.
const pauseMarkerPrefix = "paused:"

// keepPauseWindows is migration 0009's data step: each pipeline's pause
// windows — those kept as markers, and the last pause its row bounds
// (paused_at, resumed_at) when it is not paused — go onto its row, oldest
// first and at most pause.MaxWindows; the markers are deleted. A
// window whose start cannot be read was ignored by every reader and is
// dropped.
func keepPauseWindows(ctx context.Context, tx *sql.Tx) error {
	windows := map[string][]pause.Window{}
	rows, err := tx.QueryContext(ctx, `SELECT pipeline_id, kind, at FROM markers WHERE kind LIKE 'paused:%'`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, kind string
		var end time.Time
		if err := rows.Scan(&id, &kind, sqlstore.TimeCol{T: &end}); err != nil {
			rows.Close()
			return err
		}
		from, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(kind, pauseMarkerPrefix))
		if err != nil {
			continue
		}
		windows[id] = append(windows[id], pause.Window{From: from.UTC(), To: end})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = tx.QueryContext(ctx, `SELECT id, paused_at, resumed_at FROM pipelines WHERE paused = 0 AND paused_at IS NOT NULL AND resumed_at IS NOT NULL`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var w pause.Window
		if err := rows.Scan(&id, sqlstore.TimeCol{T: &w.From}, sqlstore.TimeCol{T: &w.To}); err != nil {
			rows.Close()
			return err
		}
		if !slices.ContainsFunc(windows[id], func(x pause.Window) bool { return x.From.Equal(w.From) }) {
			windows[id] = append(windows[id], w)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for id, ws := range windows {
		slices.SortFunc(ws, func(a, b pause.Window) int { return a.To.Compare(b.To) })
		if len(ws) > pause.MaxWindows {
			ws = ws[len(ws)-pause.MaxWindows:]
		}
		e := sqlstore.Encoder{D: &dialect}
		v := e.PauseWindows(ws)
		if e.Err != nil {
			return e.Err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pipelines SET pause_windows = ? WHERE id = ?`, v, id); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM markers WHERE kind LIKE 'paused:%'`)
	return err
}
