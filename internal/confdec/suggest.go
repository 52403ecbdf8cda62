package confdec

import (
	"sort"
	"strconv"
	"strings"
)

// Suggest returns the candidate closest to name when it is close enough to
// be a plausible typo (case, '_' or '-' differences, a truncated name, or
// a small edit distance), else "".
func Suggest(name string, candidates []string) string {
	norm := normalize(name)
	limit := max(1, min(3, len(norm)/3))
	best, bestDist := "", -1
	for _, c := range candidates {
		nc := normalize(c)
		d := levenshtein(norm, nc)
		// A truncated or extended name (maxRetry, timeouts) is plausible
		// even when its edit distance is large.
		p := commonPrefix(norm, nc)
		plausible := d <= limit || p >= 4 && p >= min(len(norm), len(nc))-1
		if plausible && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// OneOf renders candidates for "(want one of a, b, c)" messages.
func OneOf(candidates []string) string {
	return strings.Join(candidates, ", ")
}

// Unknown builds the message for a value that is not among candidates:
// `unknown job type "htp", did you mean "http"?` or
// `unknown job type "x" (want one of a, b)`.
func Unknown(what, value string, candidates []string) string {
	if s := Suggest(value, candidates); s != "" {
		return "unknown " + what + " " + strconv.Quote(value) + ", did you mean " + strconv.Quote(s) + "?"
	}
	return "unknown " + what + " " + strconv.Quote(value) + " (want one of " + OneOf(candidates) + ")"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func normalize(s string) string {
	s = strings.ToLower(s)
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(s)
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
