package sqlstore

import (
	"strconv"
	"strings"
)

// Where builds a statement's conjunction of optional filters. A condition
// is written with "?" for each of its arguments; on a dialect with
// numbered placeholders (PostgreSQL's $1, $2, …) Add numbers them after
// the arguments already in Args.
type Where struct {
	D     *Dialect
	conds []string
	Args  []any
}

// Add adds cond, whose "?"s stand for args in order.
func (w *Where) Add(cond string, args ...any) {
	for _, a := range args {
		w.Args = append(w.Args, a)
		if w.D.Numbered {
			cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.Args)), 1)
		}
	}
	w.conds = append(w.conds, cond)
}

// String is the WHERE clause, "" when there is no condition.
func (w *Where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// Limit is a LIMIT clause, its argument added last; n <= 0 means no
// limit, as the port's list parameters say.
func (w *Where) Limit(n int) string {
	if n <= 0 {
		return ""
	}
	w.Args = append(w.Args, n)
	if w.D.Numbered {
		return " LIMIT $" + strconv.Itoa(len(w.Args))
	}
	return " LIMIT ?"
}
