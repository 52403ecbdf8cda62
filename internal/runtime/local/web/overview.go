package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/event"
)

// rowView is a pipeline's row on the overview.
type rowView struct {
	ID, Owner, Description string
	State                  board.State
	Period                 string
	Zone                   string
	Paused, DryRun         bool
	PausedUntil            *time.Time // nil: until resumed (or not paused)
	Deadline               *deadlineView
	LastEvent              *event.Event
	Cells                  []cellView
	// Since is when the period entered its state (stateSince); nil when
	// unknown.
	Since *time.Time
	// LastSuccess is the end of the newest successful run of the grid's
	// periods; nil: none in them.
	LastSuccess *time.Time
	// Reason says inline why the row is in its state ("" when it says
	// itself: succeeded, dry-run).
	Reason   string
	Silenced *silenceBadge
	Now      time.Time
}

// rowGroup is a run of rows under one heading: an owner when the
// overview is grouped by owner, else one group without a heading.
type rowGroup struct {
	Owner    string
	Heading  bool
	Count    int // the group's pipelines on this page
	Problems int // of them breached, failed or at risk
	Rows     []rowView
}

// cellView is a cell of the history grid.
type cellView struct {
	PipelineID string
	Period     string
	State      board.State
	SLA        board.SLAVerdictKind
	Reruns     int
}

// deadlineView is an instant counted down to.
type deadlineView struct {
	At   time.Time // UTC
	What string
	Zone string
	Now  time.Time
}

// stateCount is one of the overview's counts by state.
type stateCount struct {
	State    board.State
	Count    int
	Selected bool
	Href     string
}

type overviewPage struct {
	Counts   []stateCount
	Total    int // pipelines running
	Matching int // pipelines the filter keeps
	Problems int // pipelines breached, failed or at risk (following the search)
	Query    boardQuery
	StateArg string // the state filter as the form sends it
	Groups   []rowGroup
	Page     int
	Pages    int
	PrevHref string
	NextHref string
	AllHref  string
	// ProblemsHref is the problems view (breached, failed, at risk), or
	// the whole board when it is the view shown; ProblemsOn says so.
	ProblemsHref string
	ProblemsOn   bool
	// Axis labels the grid's columns: the first, middle and last periods.
	Axis []axisLabel
}

// axisLabel is a date under one column of the history grid.
type axisLabel struct {
	Col  int // 1-based grid column
	Text string
}

// overview is "/": every pipeline by urgency, filtered by ?q= (id or
// owner) and ?state= (one state or several, comma-separated), ordered by
// ?sort= (urgency, or owner: grouped by owner), ?page=N of the page size.
func (h *handler) overview(r *http.Request) (*view, error) {
	q := r.URL.Query()
	bq := boardQuery{Search: strings.TrimSpace(q.Get("q")), Sort: sortUrgency}
	if s := strings.TrimSpace(q.Get("state")); s != "" {
		for _, name := range strings.Split(s, ",") {
			name = strings.TrimSpace(name)
			if !stateOK(name) {
				return nil, badRequest("state %q is not a state (one of %s)", name, statesList())
			}
			if !slices.Contains(bq.States, board.State(name)) {
				bq.States = append(bq.States, board.State(name))
			}
		}
	}
	switch s := q.Get("sort"); s {
	case "", sortUrgency:
	case sortOwner:
		bq.Sort = sortOwner
	default:
		return nil, badRequest("sort %q: want urgency or owner", s)
	}
	page := 1
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, badRequest("page %q: want a page number from 1", s)
		}
		page = n
	}
	ctx := r.Context()
	now := h.eng.Now()
	all, err := h.board(ctx, now)
	if err != nil {
		return nil, err
	}
	counts := map[board.State]int{}
	var kept []*entry
	for i := range all {
		e := &all[i]
		// Counts follow the search, not the state filter, so every count
		// stays clickable.
		if (boardQuery{Search: bq.Search}).match(e) {
			counts[e.state]++
		}
		if bq.match(e) {
			kept = append(kept, e)
		}
	}
	sortBoard(kept, bq.Sort)
	out := overviewPage{Total: len(all), Matching: len(kept), Query: bq, Page: page, StateArg: joined(bq.States, ",")}
	for _, s := range problemStates {
		out.Problems += counts[s]
	}
	out.Pages = max(1, (len(kept)+h.pageSize-1)/h.pageSize)
	if page > out.Pages {
		return nil, notFound("page %d: there are %d page(s)", page, out.Pages)
	}
	link := func(states []board.State, page int) string {
		v := url.Values{}
		if bq.Search != "" {
			v.Set("q", bq.Search)
		}
		if len(states) > 0 {
			v.Set("state", joined(states, ","))
		}
		if bq.Sort != sortUrgency {
			v.Set("sort", bq.Sort)
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return "/"
		}
		return "/?" + v.Encode()
	}
	for _, s := range board.States() {
		// A count adds its state to the filter, or takes it out again.
		toggled := slices.DeleteFunc(slices.Clone(bq.States), func(x board.State) bool { return x == s })
		selected := len(toggled) < len(bq.States)
		if !selected {
			toggled = append(toggled, s)
		}
		out.Counts = append(out.Counts, stateCount{State: s, Count: counts[s], Selected: selected, Href: link(toggled, 1)})
	}
	out.AllHref = link(nil, 1)
	out.ProblemsOn = sameStates(bq.States, problemStates)
	out.ProblemsHref = link(problemStates, 1)
	if out.ProblemsOn {
		out.ProblemsHref = out.AllHref
	}
	if page > 1 {
		out.PrevHref = link(bq.States, page-1)
	}
	if page < out.Pages {
		out.NextHref = link(bq.States, page+1)
	}
	reach, err := h.silenceReachAt(ctx, now)
	if err != nil {
		return nil, err
	}
	lo := (page - 1) * h.pageSize
	hi := min(lo+h.pageSize, len(kept))
	for i := lo; i < hi; i++ {
		row, err := h.rowOf(ctx, kept[i], now, reach)
		if err != nil {
			return nil, err
		}
		grouped := bq.Sort == sortOwner
		if n := len(out.Groups); n == 0 || (grouped && out.Groups[n-1].Owner != row.Owner) {
			out.Groups = append(out.Groups, rowGroup{Owner: row.Owner, Heading: grouped})
		}
		g := &out.Groups[len(out.Groups)-1]
		g.Rows = append(g.Rows, row)
		g.Count++
		if slices.Contains(problemStates, row.State) {
			g.Problems++
		}
	}
	if len(out.Groups) > 0 && len(out.Groups[0].Rows) > 0 {
		out.Axis = axisOf(out.Groups[0].Rows[0].Cells)
	}
	return &view{name: "overview", title: "Pipelines", nav: "overview", data: out, live: "/v1/events/stream"}, nil
}

// sameStates reports whether a and b hold the same states.
func sameStates(a, b []board.State) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(s board.State) bool { return !slices.Contains(b, s) })
}

// axisOf labels the grid's first, middle and last columns with their
// periods (a date, or a day and hour), so a cell's date can be read off.
func axisOf(cells []cellView) []axisLabel {
	n := len(cells)
	if n == 0 {
		return nil
	}
	label := func(i int) axisLabel {
		p := cells[i].Period
		if len(p) >= 10 {
			p = p[5:] // MM-DD, or MM-DDTHH
		}
		return axisLabel{Col: i + 1, Text: strings.Replace(p, "T", " ", 1)}
	}
	out := []axisLabel{label(0)}
	if n > 2 {
		out = append(out, label(n/2))
	}
	if n > 1 {
		out = append(out, label(n-1))
	}
	return out
}

func statesList() string { return joined(board.States(), ", ") }

// joined joins names with sep.
func joined[T ~string](names []T, sep string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(string(n))
	}
	return b.String()
}
