package secret

import (
	"strings"
	"unicode/utf8"
)

// MaxSpelled bounds the length in bytes of a form matched in every
// spelling. A longer form (a certificate or a key read by ${file:}) is
// matched as it is and as the common encoders print it (literalForms):
// a pathological text could otherwise make matching cost its length
// times the form's, and no encoder ever seen prints a key that long
// character by character in a mixture of escapes.
const MaxSpelled = 256

// Spellings. Each character of a secret may appear in a text as itself or
// in any of the ways an encoder escapes one, each character on its own,
// so that a mixture of encoders, an encoder nobody listed, and text
// encoded several times are all matched. The spellings of a character
// are:
//
//   - percent-encoded, each byte of its UTF-8 encoding, hex digits in
//     either case ("%2b", "%2B", "%C3%A9"), "%25" repeated for each
//     further URL encoding ("%2522", up to maxLayers), and "+" for a
//     space;
//   - a backslash escape after a run of any number of backslashes (one
//     more layer of JSON or of a language's string literal doubles it:
//     "\\\"" is JSON of JSON), each backslash possibly percent-encoded (a
//     JSON string in a URL): \uXXXX (either case; a surrogate pair beyond
//     the BMP), \xXX (the code point below U+0100, as Python writes it, or
//     the bytes of its UTF-8 encoding one by one), \UXXXXXXXX, \u{X…}, a
//     punctuation character or a space after a backslash (\" \/ \' \$
//     \!, as JSON, PHP, Python and shells write them, itself possibly
//     percent-encoded), and \n \r \t \b \f \v \a \0 \e;
//   - a backslash as one or more backslashes (each possibly
//     percent-encoded): Python's repr doubles it;
//   - an HTML character reference after "&", or after a JSON \u0026 (Go's
//     JSON of an HTML-escaped text), with "amp;" repeated for each further
//     HTML escaping (up to maxLayers): &quot; &amp; &lt; &gt; &apos;
//     (any case), &#NN; and
//     &#xHH; (leading zeros allowed, as in PHP's &#039;).
//
// A spelling only ever reads as the one character it stands for, so a
// text is decoded once, position by position (decoder.edges), and every
// secret is matched against the decoded readings at once (matcher).

// edge is one reading of the text at a position: the character r,
// spelled up to end.
type edge struct {
	r    rune
	end  int
	unit bool // a single backslash, as it is or percent-encoded
}

// maxLayers bounds the layers of encoding read where each layer makes a
// spelling longer without a new "%", "\" or "&" (the "25" of "%2522", the
// "amp;" of "&amp;amp;quot;"), so that every spelling but a run of
// backslashes is short: eight layers is more than any text was ever
// encoded. A run of backslashes is read whatever its length.
const maxLayers = 8

// decoder reads the spellings that begin at each position of a text.
type decoder struct {
	text string
	// The run of backslashes a position is in, and what its escape reads
	// as: every backslash of a run begins the same escape, so a run is
	// read once, not once per backslash.
	runStart, runEnd int
	runEdges         []edge
	out              []edge
}

func (d *decoder) reset(text string) {
	d.text, d.runStart, d.runEnd, d.runEdges = text, 0, -1, d.runEdges[:0]
}

// edges are the readings of the text at p, which must be the start of a
// character. The result is valid until the next call.
func (d *decoder) edges(p int) []edge {
	t := d.text
	c := t[p]
	r, w := rune(c), 1
	if c >= utf8.RuneSelf {
		r, w = utf8.DecodeRuneInString(t[p:])
	}
	out := append(d.out[:0], edge{r: r, end: p + w, unit: c == '\\'})
	switch c {
	case '+':
		out = append(out, edge{r: ' ', end: p + 1})
	case '%':
		out = percent(t, p, out)
	case '&':
		out = reference(t, p+1, out)
	}
	if _, ok := backslash(t, p); ok {
		if p < d.runStart || p >= d.runEnd {
			e := backslashes(t, p)
			d.runStart, d.runEnd = p, e
			d.runEdges = escape(t, e, d.runEdges[:0])
		}
		out = append(out, d.runEdges...)
	}
	d.out = out
	return out
}

// backslash reads one backslash at i, as it is or percent-encoded.
func backslash(t string, i int) (end int, ok bool) {
	if i >= len(t) {
		return 0, false
	}
	if t[i] == '\\' {
		return i + 1, true
	}
	if t[i] == '%' {
		if b, end, ok := pctByte(t, i); ok && b == '\\' {
			return end, true
		}
	}
	return 0, false
}

// backslashes reads a run of backslashes from i, each as it is or
// percent-encoded, and returns where the run ends (i when there is none).
func backslashes(t string, i int) int {
	for {
		end, ok := backslash(t, i)
		if !ok {
			return i
		}
		i = end
	}
}

// pctByte reads a percent-encoded byte at i, as many times encoded as
// its "%25" say ("%2522" is '"').
func pctByte(t string, i int) (b byte, end int, ok bool) {
	if i >= len(t) || t[i] != '%' {
		return 0, 0, false
	}
	j := i + 1
	for n := 0; n < maxLayers && j+4 <= len(t) && t[j] == '2' && t[j+1] == '5' && isHex(t[j+2]) && isHex(t[j+3]); n++ {
		j += 2
	}
	v, ok := hexValue(t, j, 2)
	if !ok {
		return 0, 0, false
	}
	return byte(v), j + 2, true
}

// percent appends the readings of the percent-encoding at p: the byte it
// encodes, and for a UTF-8 lead byte, the character its continuation
// bytes complete (also read as the code point of the byte alone, as
// Latin-1 encoders write it). "%25" before a further encoded byte is also
// read as '%' followed by literal text ("%2522" is '"' or "%22").
func percent(t string, p int, out []edge) []edge {
	for j, n := p+1, 0; n < maxLayers && j+4 <= len(t) && t[j] == '2' && t[j+1] == '5' && isHex(t[j+2]) && isHex(t[j+3]); j, n = j+2, n+1 {
		out = append(out, edge{r: '%', end: j + 2})
	}
	b, end, ok := pctByte(t, p)
	if !ok {
		return out
	}
	out = append(out, edge{r: rune(b), end: end, unit: b == '\\'})
	if n := utf8Len(b); n > 1 {
		buf := []byte{b}
		for range n - 1 {
			c, e, ok := pctByte(t, end)
			if !ok {
				return out
			}
			buf, end = append(buf, c), e
		}
		if r, _ := utf8.DecodeRune(buf); r != utf8.RuneError {
			out = append(out, edge{r: r, end: end})
		}
	}
	return out
}

// escape appends the readings of the backslash escape at e, which a run
// of backslashes ends at.
func escape(t string, e int, out []edge) []edge {
	if e >= len(t) {
		return out
	}
	switch c := t[e]; c {
	case 'u':
		if e+1 < len(t) && t[e+1] == '{' {
			n := hexRun(t, e+2, 8)
			if n > 0 && e+2+n < len(t) && t[e+2+n] == '}' {
				if v, ok := hexValue(t, e+2, n); ok && validRune(v) {
					out = append(out, edge{r: rune(v), end: e + 3 + n})
				}
			}
			return out
		}
		v, ok := hexValue(t, e+1, 4)
		if !ok {
			return out
		}
		end := e + 5
		switch {
		case v >= 0xD800 && v < 0xDC00: // a high surrogate: its pair follows
			if j := backslashes(t, end); j > end && j < len(t) && t[j] == 'u' {
				if lo, ok := hexValue(t, j+1, 4); ok && lo >= 0xDC00 && lo < 0xE000 {
					out = append(out, edge{r: rune(0x10000 + (v-0xD800)<<10 + (lo - 0xDC00)), end: j + 5})
				}
			}
		case v >= 0xDC00 && v < 0xE000:
		default:
			out = append(out, edge{r: rune(v), end: end})
			if v == '&' {
				out = reference(t, end, out)
			}
		}
	case 'U':
		if v, ok := hexValue(t, e+1, 8); ok && validRune(v) {
			out = append(out, edge{r: rune(v), end: e + 9})
		}
	case 'x':
		v, ok := hexValue(t, e+1, 2)
		if !ok {
			return out
		}
		end := e + 3
		out = append(out, edge{r: rune(v), end: end})
		if n := utf8Len(byte(v)); n > 1 { // \xc3\xa9: UTF-8 bytes
			buf := []byte{byte(v)}
			for range n - 1 {
				j := backslashes(t, end)
				if j == end || j >= len(t) || t[j] != 'x' {
					return out
				}
				c, ok := hexValue(t, j+1, 2)
				if !ok {
					return out
				}
				buf, end = append(buf, byte(c)), j+3
			}
			if r, _ := utf8.DecodeRune(buf); r != utf8.RuneError {
				out = append(out, edge{r: r, end: end})
			}
		}
	case '%': // the escaped character percent-encoded: %5C%22
		if b, end, ok := pctByte(t, e); ok && (b == ' ' || isPunct(b)) {
			out = append(out, edge{r: rune(b), end: end})
		}
		out = append(out, edge{r: '%', end: e + 1})
	default:
		if r, ok := controls[c]; ok {
			return append(out, edge{r: r, end: e + 1})
		}
		if c == ' ' || isPunct(c) {
			return append(out, edge{r: rune(c), end: e + 1})
		}
	}
	return out
}

// controls are the backslash escapes of control characters.
var controls = map[byte]rune{'n': '\n', 'r': '\r', 't': '\t', 'b': '\b', 'f': '\f', 'v': '\v', 'a': '\a', '0': 0, 'e': 0x1b}

// named are the HTML character references the common escapers write.
var named = []struct {
	name string
	r    rune
}{{"quot;", '"'}, {"lt;", '<'}, {"gt;", '>'}, {"apos;", '\''}}

// reference appends the readings of the HTML character reference whose
// "&" ends at i: "&amp;" (possibly "&amp;amp;" and so on) is '&', and
// the reference after them is what it names.
func reference(t string, i int, out []edge) []edge {
	for range maxLayers {
		if !hasPrefixFold(t[i:], "amp;") {
			break
		}
		i += 4
		out = append(out, edge{r: '&', end: i})
	}
	for _, n := range named {
		if hasPrefixFold(t[i:], n.name) {
			return append(out, edge{r: n.r, end: i + len(n.name)})
		}
	}
	if i >= len(t) || t[i] != '#' {
		return out
	}
	i++
	base, digits := 10, 0
	if i < len(t) && (t[i] == 'x' || t[i] == 'X') {
		base, i = 16, i+1
	}
	var v uint64
	for ; digits < 10 && i+digits < len(t); digits++ {
		c := t[i+digits]
		d, ok := digit(c, base)
		if !ok {
			break
		}
		v = v*uint64(base) + d
	}
	i += digits
	if digits == 0 || i >= len(t) || t[i] != ';' || v > utf8.MaxRune || !validRune(v) {
		return out
	}
	return append(out, edge{r: rune(v), end: i + 1})
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func digit(c byte, base int) (uint64, bool) {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0'), true
	case base == 16 && c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10, true
	case base == 16 && c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

// hexValue reads exactly n hex digits at i.
func hexValue(t string, i, n int) (uint64, bool) {
	if i < 0 || i+n > len(t) {
		return 0, false
	}
	var v uint64
	for k := range n {
		d, ok := digit(t[i+k], 16)
		if !ok {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

// hexRun is the number of hex digits at i, at most max.
func hexRun(t string, i, max int) int {
	n := 0
	for n < max && i+n < len(t) && isHex(t[i+n]) {
		n++
	}
	return n
}

func validRune(v uint64) bool {
	return v <= utf8.MaxRune && !(v >= 0xD800 && v < 0xE000)
}

// utf8Len is the length of the UTF-8 sequence lead byte b begins (1 for
// ASCII or a byte that begins none).
func utf8Len(b byte) int {
	switch {
	case b >= 0xF0 && b < 0xF5:
		return 4
	case b >= 0xE0 && b < 0xF0:
		return 3
	case b >= 0xC2 && b < 0xE0:
		return 2
	}
	return 1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isPunct reports whether c is ASCII punctuation, which string escapers
// may put a backslash before.
func isPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
}

// cutFragments are the ends, at the start of text, of what a cut inside
// one spelling can leave: letters, digits and "#{};" (the rest of
// "\u00e9", "%C3%A9", "&#x27;", "&quot;" or "\u{1f600}" once the cut took
// their "\", "%" or "&"), at most maxFragment bytes, then the rest of a
// character cut inside its UTF-8 bytes, raw or escaped ("%A9" of
// "%C3%A9", "\xa9" of "\xc3\xa9"). Any end is tried: a cut text's first
// bytes are a fragment of a line anyway.
func cutFragments(t string) []int {
	ends := []int{0}
	for k := 0; k < maxFragment && k < len(t); k++ {
		c := t[k]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '{' || c == '}' || c == ';') {
			break
		}
		ends = append(ends, k+1)
	}
	for _, e := range ends {
		for range utf8.UTFMax - 1 {
			next, ok := continuation(t, e)
			if !ok {
				break
			}
			e = next
			ends = append(ends, e)
		}
	}
	return ends[1:]
}

// continuation reads a UTF-8 continuation byte at i: raw, percent-encoded
// or a \x escape.
func continuation(t string, i int) (end int, ok bool) {
	if i >= len(t) {
		return 0, false
	}
	if t[i] >= 0x80 && t[i] < 0xC0 {
		return i + 1, true
	}
	if b, end, ok := pctByte(t, i); ok && b >= 0x80 && b < 0xC0 {
		return end, true
	}
	if j := backslashes(t, i); j > i && j < len(t) && t[j] == 'x' {
		if v, ok := hexValue(t, j+1, 2); ok && v >= 0x80 && v < 0xC0 {
			return j + 3, true
		}
	}
	return 0, false
}

// maxFragment is the longest rest of a spelling a cut can leave
// ("U0001f600", "x0001F600;").
const maxFragment = 12
