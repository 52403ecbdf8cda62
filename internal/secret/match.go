package secret

import (
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/textsafe"
)

// span is a part of a text, [start, end) in bytes.
type span struct{ start, end int }

// matcher finds every part of a text that spells one of its forms (see
// spell.go), in one pass, whatever the number of forms.
//
// The text is decoded once: at each position, decoder.edges lists the
// characters a spelling beginning there can stand for, and where each
// ends. A thread is a form matched up to some character; it moves along
// the edges that read as the form's next character. Threads that reach
// the same position with the same form and progress have the same
// future, so only one is kept, with the earliest start, whose match
// covers the other's. The cost is linear in the text (times the threads
// alive at a position, which are few: a thread dies at the first
// character that does not read as the form's next one), and most of a
// text is skipped a byte at a time: a spelling begins with the character
// itself or with "%", "\", "&" or "+". The worst case is a secret that
// repeats itself ("aaaa…") in a text of the same, where a thread per
// character stays alive: a 256-byte one in 64 KiB costs about 170 ms
// (BenchmarkRedactAdversarial); a 64 KiB text of ordinary output with
// five secrets costs under 1 ms.
type matcher struct {
	forms  []mform
	offset []int // where each form's keys begin (see key)
	keys   int
	// Where the forms begin: by first character, and which bytes can
	// begin one of their spellings.
	ascii [utf8.RuneSelf][]int32
	other map[rune][]int32
	first [256]bool
	pool  sync.Pool // *machine
}

type mform struct {
	runes  []rune
	base64 bool // '+' also reads as '-', '/' as '_' (the URL alphabet)
}

func (f *mform) is(i int, r rune) bool {
	c := f.runes[i]
	return c == r || f.base64 && (c == '+' && r == '-' || c == '/' && r == '_')
}

// newMatcher returns the matcher of forms (nil if there are none).
func newMatcher(forms []form) *matcher {
	if len(forms) == 0 {
		return nil
	}
	m := &matcher{other: map[rune][]int32{}}
	m.first['%'], m.first['\\'], m.first['&'] = true, true, true
	for i, f := range forms {
		mf := mform{runes: []rune(f.text), base64: f.base64}
		m.forms = append(m.forms, mf)
		m.offset = append(m.offset, m.keys)
		m.keys += 2 * (len(mf.runes) + 1)
		starts := []rune{mf.runes[0]}
		if mf.is(0, '-') {
			starts = append(starts, '-')
		}
		if mf.is(0, '_') {
			starts = append(starts, '_')
		}
		for _, r := range starts {
			if r < utf8.RuneSelf {
				m.ascii[r] = append(m.ascii[r], int32(i))
			} else {
				m.other[r] = append(m.other[r], int32(i))
			}
			var b [utf8.UTFMax]byte
			utf8.EncodeRune(b[:], r)
			m.first[b[0]] = true
			if r == ' ' {
				m.first['+'] = true
			}
		}
	}
	m.pool.New = func() any { return &machine{seen: make([]seen, m.keys)} }
	return m
}

func (m *matcher) startsWith(r rune) []int32 {
	if r >= 0 && r < utf8.RuneSelf {
		return m.ascii[r]
	}
	return m.other[r]
}

// thread is form matched up to (not including) character idx since
// start. bs: the last character read was a backslash spelled as one,
// which more backslashes may follow (Python's repr and each layer of JSON
// double it).
type thread struct {
	form  int32
	idx   int32
	start int
	bs    bool
}

// window is how far ahead of the position being read the threads are kept
// in a ring; a spelling longer than that (a long run of backslashes) is
// kept aside in far.
const window = 64

type farThread struct {
	at int
	t  thread
}

type seen struct{ at, i int }

type machine struct {
	ring    [window][]thread
	far     []farThread
	seen    []seen // by key: the position a thread was last put at + 1, and its index there
	pending int
	spans   []span
	dec     decoder
}

func (m *matcher) key(t thread) int {
	k := m.offset[t.form] + 2*int(t.idx)
	if t.bs {
		k++
	}
	return k
}

// put makes t arrive at position at, unless an equal thread with an
// earlier start does.
func (m *matcher) put(mc *machine, at, from int, t thread) {
	if at-from >= window {
		for i := range mc.far {
			f := &mc.far[i]
			if f.at == at && f.t.form == t.form && f.t.idx == t.idx && f.t.bs == t.bs {
				f.t.start = min(f.t.start, t.start)
				return
			}
		}
		mc.far = append(mc.far, farThread{at, t})
		mc.pending++
		return
	}
	k := m.key(t)
	slot := &mc.ring[at%window]
	if s := mc.seen[k]; s.at == at+1 {
		(*slot)[s.i].start = min((*slot)[s.i].start, t.start)
		return
	}
	mc.seen[k] = seen{at + 1, len(*slot)}
	*slot = append(*slot, t)
	mc.pending++
}

// step moves t, at position p, along edge e.
func (m *matcher) step(mc *machine, p int, t thread, e edge) {
	f := &m.forms[t.form]
	if t.bs && e.unit { // one more backslash of the same one
		m.put(mc, e.end, p, t)
		if int(t.idx) == len(f.runes) {
			mc.spans = append(mc.spans, span{t.start, e.end})
		}
	}
	if int(t.idx) == len(f.runes) {
		return
	}
	if !f.is(int(t.idx), e.r) {
		if t.idx > 0 && invisible(e.r) {
			// A character that prints as nothing, in any spelling,
			// between two of the form's: a reader joins the halves.
			m.put(mc, e.end, p, thread{form: t.form, idx: t.idx, start: t.start})
		}
		return
	}
	n := thread{form: t.form, idx: t.idx + 1, start: t.start, bs: e.unit && e.r == '\\'}
	if int(n.idx) == len(f.runes) {
		mc.spans = append(mc.spans, span{n.start, e.end})
		if !n.bs {
			return
		}
	}
	m.put(mc, e.end, p, n)
}

// find returns, disjoint and in order, the parts of text some spelling of
// a form covers; parts that touch are joined. With anchored, it returns
// only the longest proper ending of a form in any spelling at the start
// of text (after what a cut inside a spelling leaves, cutFragments): the
// part of a secret a cut at the start left.
func (m *matcher) find(text string, anchored bool) []span {
	if m == nil || text == "" {
		return nil
	}
	mc := m.pool.Get().(*machine)
	defer m.pool.Put(mc)
	clear(mc.seen)
	for i := range mc.ring {
		mc.ring[i] = mc.ring[i][:0]
	}
	mc.far, mc.pending, mc.spans = mc.far[:0], 0, mc.spans[:0]
	mc.dec.reset(text)
	if anchored {
		for _, at := range append([]int{0}, cutFragments(text)...) {
			for fi, f := range m.forms {
				for idx := 1; idx < len(f.runes); idx++ {
					m.put(mc, at, at, thread{form: int32(fi), idx: int32(idx)})
				}
			}
		}
	}
	for p := 0; p < len(text); p++ {
		if mc.pending == 0 {
			if anchored {
				break
			}
			for p < len(text) && !m.first[text[p]] {
				p++
			}
			if p == len(text) {
				break
			}
		}
		if len(mc.far) > 0 {
			far := mc.far[:0]
			for _, f := range mc.far {
				if f.at == p {
					mc.pending--
					m.put(mc, p, p, f.t)
				} else {
					far = append(far, f)
				}
			}
			mc.far = far
		}
		slot := mc.ring[p%window]
		if len(slot) == 0 && (anchored || !m.first[text[p]]) {
			continue
		}
		if !utf8.RuneStart(text[p]) {
			// Inside a character: nothing begins here, and only a thread
			// put where a cut may have left (anchored) can have arrived.
			mc.pending -= len(slot)
			mc.ring[p%window] = slot[:0]
			continue
		}
		if c := text[p]; len(slot) == 0 && c < utf8.RuneSelf && c != '%' && c != '\\' && c != '&' && c != '+' {
			// Only the character itself begins here (the common case).
			for _, fi := range m.ascii[c] {
				m.step(mc, p, thread{form: fi, start: p}, edge{r: rune(c), end: p + 1})
			}
			continue
		}
		edges := mc.dec.edges(p)
		for _, t := range slot {
			for _, e := range edges {
				m.step(mc, p, t, e)
			}
		}
		mc.pending -= len(slot)
		mc.ring[p%window] = slot[:0]
		if anchored {
			continue
		}
		for _, e := range edges {
			for _, fi := range m.startsWith(e.r) {
				m.step(mc, p, thread{form: fi, start: p}, e)
			}
		}
	}
	spans := merge(mc.spans)
	if anchored {
		end := 0
		for _, s := range spans {
			if s.start == 0 {
				end = max(end, s.end)
			}
		}
		if end == 0 {
			return nil
		}
		return []span{{0, end}}
	}
	return slices.Clone(spans)
}

// invisible reports whether r prints as nothing (textsafe.Invisible) and
// is not a line break or a tab, which cleaning turns into a space: a
// secret split by one of those is shown split.
func invisible(r rune) bool {
	switch r {
	case '\n', '\r', '\t', '\v', '\f', 0x85, 0x2028, 0x2029:
		return false
	}
	return textsafe.Invisible(r)
}

// merge sorts spans and joins those that overlap or touch.
func merge(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && out[n-1].end >= s.start {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}
