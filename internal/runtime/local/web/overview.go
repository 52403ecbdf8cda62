package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// rowView is a pipeline's row on the overview.
type rowView struct {
	ID, Owner, Description string
	State                  run.BoardState
	Period                 string
	Zone                   string
	Paused, DryRun         bool
	Deadline               *deadlineView
	LastEvent              *event.Event
	Cells                  []cellView
}

// cellView is a cell of the history grid.
type cellView struct {
	PipelineID string
	Period     string
	State      run.BoardState
	SLA        run.SLAVerdictKind
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
	State    run.BoardState
	Count    int
	Selected bool
	Href     string
}

type overviewPage struct {
	Counts   []stateCount
	Total    int // pipelines running
	Matching int // pipelines the filter keeps
	Query    boardQuery
	Rows     []rowView
	Page     int
	Pages    int
	PrevHref string
	NextHref string
	AllHref  string
	States   []run.BoardState
}

// overview is "/": every pipeline by urgency, filtered by ?q= (id or
// owner) and ?state=, ?page=N of the page size.
func (h *handler) overview(r *http.Request) (*view, error) {
	q := r.URL.Query()
	bq := boardQuery{Search: strings.TrimSpace(q.Get("q"))}
	if s := q.Get("state"); s != "" {
		if !stateOK(s) {
			return nil, badRequest("state %q is not a state (one of %s)", s, statesList())
		}
		bq.State = run.BoardState(s)
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
	counts := map[run.BoardState]int{}
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
	sortBoard(kept)
	out := overviewPage{Total: len(all), Matching: len(kept), Query: bq, Page: page, States: run.BoardStates()}
	out.Pages = max(1, (len(kept)+h.pageSize-1)/h.pageSize)
	if page > out.Pages {
		return nil, notFound("page %d: there are %d page(s)", page, out.Pages)
	}
	link := func(state run.BoardState, page int) string {
		v := url.Values{}
		if bq.Search != "" {
			v.Set("q", bq.Search)
		}
		if state != "" {
			v.Set("state", string(state))
		}
		if page > 1 {
			v.Set("page", strconv.Itoa(page))
		}
		if len(v) == 0 {
			return "/"
		}
		return "/?" + v.Encode()
	}
	for _, s := range run.BoardStates() {
		href := link(s, 1)
		if bq.State == s {
			href = link("", 1) // a second click clears the filter
		}
		out.Counts = append(out.Counts, stateCount{State: s, Count: counts[s], Selected: bq.State == s, Href: href})
	}
	out.AllHref = link("", 1)
	if page > 1 {
		out.PrevHref = link(bq.State, page-1)
	}
	if page < out.Pages {
		out.NextHref = link(bq.State, page+1)
	}
	lo := (page - 1) * h.pageSize
	hi := min(lo+h.pageSize, len(kept))
	for i := lo; i < hi; i++ {
		row, err := h.rowOf(ctx, kept[i], now)
		if err != nil {
			return nil, err
		}
		out.Rows = append(out.Rows, row)
	}
	return &view{name: "overview", title: "Pipelines", nav: "overview", data: out, live: "/v1/events/stream"}, nil
}

func statesList() string { return joined(run.BoardStates(), ", ") }

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
