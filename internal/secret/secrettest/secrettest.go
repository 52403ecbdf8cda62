// Package secrettest is the test side of redaction, shared by the trigger
// and alert contract kits: what a careless provider echoes of a secret
// (Echo) and whether a text shows a secret in any form a reader could use
// (Leak). It is written apart from package secret on purpose, and so are
// its encoders: they are written here by hand after what other languages
// print (Python, JavaScript, PHP, Java, shells, HTML templates), not with
// the Go encoders package secret was first written against, so that a
// form that package does not know is still found here.
package secrettest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Encoders are the wire forms of a secret the kits check, by name: each
// turns the secret into what an encoder prints of it. Most are written
// here by hand after encoders other than Go's.
var Encoders = []struct {
	Name   string
	Encode func(string) string
}{
	{"python urllib.parse.quote", func(s string) string { return percent(s, alnum+"_.-~/", false, false) }},
	{"javascript encodeURIComponent", func(s string) string { return percent(s, alnum+"-_.!~*'()", false, false) }},
	{"percent-encoded, lower-case hex", func(s string) string { return percent(s, alnum, true, false) }},
	{"form-encoded, + for a space, lower-case hex", func(s string) string { return percent(s, alnum+"-_.*", true, true) }},
	{"php json_encode (\\/ and \\u00e9)", func(s string) string { return jsonEscape(s, jsonStyle{slash: true, ascii: true}) }},
	{"json of json", func(s string) string { return jsonEscape(jsonEscape(s, jsonStyle{}), jsonStyle{}) }},
	{"json of json of json, with \\/", func(s string) string {
		st := jsonStyle{slash: true}
		return jsonEscape(jsonEscape(jsonEscape(s, st), st), st)
	}},
	{"json, every punctuation as \\u00XX (upper-case)", func(s string) string {
		return jsonEscape(s, jsonStyle{punct: true, upper: true, ascii: true})
	}},
	{"html escaped (&quot; &#39; &amp;)", htmlEscape},
	{"html escaped twice (&amp;quot;)", func(s string) string { return htmlEscape(htmlEscape(s)) }},
	{"html numeric references (&#039; &#x2F;)", htmlNumeric},
	{"html escaped in go json (\\u0026quot;)", func(s string) string {
		return jsonEscape(htmlEscape(s), jsonStyle{htmlSafe: true})
	}},
	{"python repr (backslash doubled)", func(s string) string { return pythonRepr(s, false) }},
	{"python ascii() (\\xe9 \\U0001f600)", func(s string) string { return pythonRepr(s, true) }},
	{"shell printf %q (backslash before punctuation)", shellEscape},
	{"json in a url (%5C%22)", func(s string) string { return percent(jsonEscape(s, jsonStyle{}), alnum, false, false) }},
	{"url-encoded twice (%2522)", func(s string) string { return percent(percent(s, alnum, false, false), alnum, false, false) }},
	{"a mixture, one encoder per character", mixture},
	// The Go encoders (the fakes are Go programs).
	{"go encoding/json", func(s string) string { return goJSON(s, true) }},
	{"go encoding/json without html escaping", func(s string) string { return goJSON(s, false) }},
	{"go url.QueryEscape", url.QueryEscape},
	{"go url.PathEscape", url.PathEscape},
}

// Forms are the wire forms of secret the kits look for (product spec §8):
// the value, what each of Encoders makes of it, and base64 (standard and
// URL alphabets, padded and not).
func Forms(secret string) []string {
	out := []string{secret}
	for _, e := range Encoders {
		out = append(out, e.Encode(secret))
	}
	out = append(out, b64(secret)...)
	return compact(out)
}

// UserinfoForms are the wire forms of a URL's user info: its password's
// Forms (the user name's when there is no password), and base64 of
// "user:password" as a Basic Authorization header carries it.
func UserinfoForms(u *url.Userinfo) []string {
	if u == nil {
		return nil
	}
	p, _ := u.Password()
	cred := p
	if p == "" {
		cred = u.Username()
	}
	return append(Forms(cred), b64(u.Username()+":"+p)...)
}

// Splits are secret split in the middle by characters that print as
// nothing (ESC, NUL, U+200B, U+2060, U+FEFF, a soft hyphen) and by an
// escape of one, as JSON prints it once or twice: cleaning that drops
// them after redaction joins the halves, and a reader joins them anyway.
func Splits(secret string) []string {
	h := len(secret) / 2
	for h > 0 && !utf8.RuneStart(secret[h]) {
		h--
	}
	var out []string
	for _, sep := range []string{"\x1b", "\x00", "\u200b", "\u2060", "\ufeff", "\u00ad", `\u001b`, "\x1b\u200b\x00", `\\u200b`} {
		out = append(out, secret[:h]+sep+secret[h:])
	}
	return out
}

// Parts are what Echo joins: secret split by invisible characters, the
// Basic header of the user info (nil: none), and every form of secret and
// of the user info. Messages are cut (an answer's first 512 bytes, an AWS
// message's 300), so the parts that test the most come first: splits,
// the Basic header, then the forms other languages print.
func Parts(secret string, userinfo *url.Userinfo) []string {
	splits := Splits(secret)
	parts := []string{splits[0], splits[2], splits[6]}
	if p, ok := userinfo.Password(); ok && p != "" {
		parts = append(parts, "Basic "+base64.StdEncoding.EncodeToString([]byte(userinfo.Username()+":"+p)))
	}
	parts = append(parts, Forms(secret)...)
	parts = append(parts, splits...)
	parts = append(parts, UserinfoForms(userinfo)...)
	return compact(parts)
}

// Echo is what a careless provider puts in an error answer or a failure
// message besides what it received: Parts, one after the other. A runner
// that knows the secret must redact all of it.
func Echo(secret string, userinfo *url.Userinfo) string { return EchoFrom(secret, userinfo, 0) }

// EchoFrom is Echo beginning with part i of Parts (modulo their number),
// the parts before it moved to the end: a kit that asks for each i in turn
// sees each part at the start of a message that is cut.
func EchoFrom(secret string, userinfo *url.Userinfo, i int) string {
	parts := Parts(secret, userinfo)
	i %= len(parts)
	return "echo: " + strings.Join(append(parts[i:], parts[:i]...), " | ")
}

// Leak returns the first form of secret or userinfo (nil: none) that s
// shows, "" if none. s is read as a reader sees it too: with invisible
// characters and their escapes removed (Visible), and decoded, again and
// again, by decoders written here (percent-encoding, backslash escapes)
// and Go's html.UnescapeString, so that a form none of Encoders makes is
// still found if it decodes to the secret.
func Leak(s, secret string, userinfo *url.Userinfo) string {
	forms := append(Forms(secret), UserinfoForms(userinfo)...)
	plain := []string{secret}
	plain = append(plain, b64(secret)...)
	if userinfo != nil {
		p, _ := userinfo.Password()
		if p == "" {
			p = userinfo.Username()
		}
		plain = append(append(plain, p), b64(userinfo.Username()+":"+p)...)
	}
	for _, text := range []string{s, Visible(s), visibleDeep(s)} {
		for _, f := range forms {
			if f != "" && strings.Contains(text, f) {
				return f
			}
		}
		t := text
		for range 8 {
			d := Visible(unbackslash(unpercent(html.UnescapeString(t))))
			if d == t {
				break
			}
			t = d
			for _, f := range plain {
				if f == "" {
					continue
				}
				if strings.Contains(t, f) || strings.Contains(f, " ") && strings.Contains(strings.ReplaceAll(t, "+", " "), f) {
					return fmt.Sprintf("%s (decoded from the text)", f)
				}
			}
		}
	}
	return ""
}

var (
	escape     = regexp.MustCompile(`\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}`)
	deepEscape = regexp.MustCompile(`\\+(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2})`)
)

// Visible is s without the characters that print as nothing (control
// characters other than line breaks and tabs, format characters,
// variation selectors and other default-ignorable code points) and
// without their \u and \x escapes, until none is left.
func Visible(s string) string { return visible(s, escape) }

// visibleDeep is Visible that also drops every backslash before such an
// escape (an escape escaped again, "\\u200b"). Which reading is right
// depends on whether the backslash before belongs to the secret, so Leak
// reads both.
func visibleDeep(s string) string { return visible(s, deepEscape) }

func visible(s string, escape *regexp.Regexp) string {
	for {
		t := strings.Map(func(r rune) rune {
			if invisible(r) && r != '\n' && r != '\r' && r != '\t' {
				return -1
			}
			return r
		}, s)
		t = escape.ReplaceAllStringFunc(t, func(e string) string {
			i := strings.LastIndexByte(e, '\\')
			n, err := strconv.ParseUint(e[i+2:], 16, 32)
			if err == nil && invisible(rune(n)) && n != '\n' && n != '\r' && n != '\t' {
				return ""
			}
			return e
		})
		if t == s {
			return s
		}
		s = t
	}
}

func invisible(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// percent writes each byte of s outside safe as %XX, in lower- or
// upper-case hex, and with plus a space as "+".
func percent(s, safe string, lower, plus bool) string {
	const upperHex, lowerHex = "0123456789ABCDEF", "0123456789abcdef"
	hex := upperHex
	if lower {
		hex = lowerHex
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte(safe, c) >= 0:
			b.WriteByte(c)
		case plus && c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

type jsonStyle struct {
	slash    bool // "/" as "\/" (PHP, some Java)
	ascii    bool // everything past ASCII as \uXXXX (surrogate pairs past the BMP)
	punct    bool // every punctuation character as \u00XX
	upper    bool // upper-case hex
	htmlSafe bool // & < > as \u0026 \u003c \u003e
}

// shortEscapes are the control characters JSON and Python both write as
// a backslash and a letter.
var shortEscapes = map[rune]string{'\n': `\n`, '\r': `\r`, '\t': `\t`}

// eachRune builds a string from s, writing each rune with write: every
// escaper below is one rule for a rune.
func eachRune(s string, write func(b *strings.Builder, r rune)) string {
	var b strings.Builder
	for _, r := range s {
		write(&b, r)
	}
	return b.String()
}

// jsonEscape is s as the inside of a JSON string.
func jsonEscape(s string, st jsonStyle) string {
	u := func(b *strings.Builder, r rune) {
		f := `\u%04x`
		if st.upper {
			f = `\u%04X`
		}
		fmt.Fprintf(b, f, r)
	}
	return eachRune(s, func(b *strings.Builder, r rune) {
		switch {
		case r == '"':
			if st.punct {
				u(b, r)
			} else {
				b.WriteString(`\"`)
			}
		case r == '\\':
			b.WriteString(`\\`)
		case r == '/' && st.slash:
			b.WriteString(`\/`)
		case shortEscapes[r] != "":
			b.WriteString(shortEscapes[r])
		case r < 0x20 || r == 0x7f:
			u(b, r)
		case st.htmlSafe && (r == '&' || r == '<' || r == '>'):
			u(b, r)
		case st.punct && r < utf8.RuneSelf && strings.IndexRune(alnum, r) < 0:
			u(b, r)
		case st.ascii && r > 0xFFFF:
			r -= 0x10000
			u(b, 0xD800+(r>>10))
			u(b, 0xDC00+(r&0x3FF))
		case st.ascii && r >= utf8.RuneSelf:
			u(b, r)
		default:
			b.WriteRune(r)
		}
	})
}

// htmlEscape is s as HTML templates escape text.
func htmlEscape(s string) string {
	return eachRune(s, func(b *strings.Builder, r rune) {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		default:
			b.WriteRune(r)
		}
	})
}

// htmlNumeric writes every character but letters and digits as a numeric
// character reference: decimal with a leading zero below 128, as PHP
// writes &#039;, and hex past ASCII.
func htmlNumeric(s string) string {
	return eachRune(s, func(b *strings.Builder, r rune) {
		switch {
		case r < utf8.RuneSelf && strings.IndexRune(alnum, r) >= 0:
			b.WriteRune(r)
		case r < utf8.RuneSelf:
			fmt.Fprintf(b, "&#%03d;", r)
		default:
			fmt.Fprintf(b, "&#x%X;", r)
		}
	})
}

// pythonRepr is the inside of Python's repr() of s (ascii: of ascii()):
// quoted with ' unless s holds a ' and no ", the quote and the backslash
// escaped, control characters as \n or \xXX, and with ascii everything
// past ASCII as \xXX, \uXXXX or \UXXXXXXXX.
func pythonRepr(s string, ascii bool) string {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	return eachRune(s, func(b *strings.Builder, r rune) {
		switch {
		case r == '\\' || r == quote:
			b.WriteRune('\\')
			b.WriteRune(r)
		case shortEscapes[r] != "":
			b.WriteString(shortEscapes[r])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case ascii && r > 0xFFFF:
			fmt.Fprintf(b, `\U%08x`, r)
		case ascii && r > 0xFF:
			fmt.Fprintf(b, `\u%04x`, r)
		case ascii && r >= utf8.RuneSelf:
			fmt.Fprintf(b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	})
}

// shellEscape puts a backslash before every ASCII character but letters,
// digits and "-_./", as bash's printf %q does.
func shellEscape(s string) string {
	return eachRune(s, func(b *strings.Builder, r rune) {
		if r < utf8.RuneSelf && strings.IndexRune(alnum+"-_./", r) < 0 {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	})
}

// mixture spells each character of s a different way in turn: as it is,
// percent-encoded in lower case, as an upper-case \u escape, as a decimal
// and as a hex HTML reference, after three backslashes (JSON of JSON),
// and a backslash doubled.
func mixture(s string) string {
	var b strings.Builder
	i := 0
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case i%6 == 0:
			b.WriteRune(r)
		case i%6 == 1:
			b.WriteString(percent(string(r), "", true, false))
		case i%6 == 2:
			if r > 0xFFFF {
				fmt.Fprintf(&b, `\u%04X\u%04X`, 0xD800+(r-0x10000)>>10, 0xDC00+(r-0x10000)&0x3FF)
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		case i%6 == 3:
			fmt.Fprintf(&b, "&#%d;", r)
		case i%6 == 4:
			fmt.Fprintf(&b, "&#x%x;", r)
		default:
			if r < utf8.RuneSelf && strings.IndexRune(alnum, r) < 0 {
				b.WriteString(`\\\`)
			}
			b.WriteRune(r)
		}
		i++
	}
	return b.String()
}

// unpercent decodes every valid %XX of s ("+" is left alone).
func unpercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// unbackslash decodes the backslash escapes of s as JSON, JavaScript,
// Python and shells write them: \uXXXX (and surrogate pairs), \UXXXXXXXX,
// \xXX (the UTF-8 bytes of a character when they form one, else the code
// point), \n \r \t, and a backslash before anything else stands for that.
// Other text is left as it is.
func unbackslash(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		c := s[i+1]
		hex := func(at, n int) (uint64, bool) {
			if at+n > len(s) {
				return 0, false
			}
			v, err := strconv.ParseUint(s[at:at+n], 16, 32)
			return v, err == nil
		}
		switch c {
		case 'u':
			v, ok := hex(i+2, 4)
			if !ok {
				b.WriteByte('\\')
				continue
			}
			i += 5
			if v >= 0xD800 && v < 0xDC00 && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if lo, ok := hex(i+3, 4); ok && lo >= 0xDC00 && lo < 0xE000 {
					b.WriteRune(rune(0x10000 + (v-0xD800)<<10 + (lo - 0xDC00)))
					i += 6
					continue
				}
			}
			b.WriteRune(rune(v))
		case 'U':
			v, ok := hex(i+2, 8)
			if !ok {
				b.WriteByte('\\')
				continue
			}
			b.WriteRune(rune(v))
			i += 9
		case 'x':
			var bs []byte
			j := i
			for j+3 < len(s) && s[j] == '\\' && s[j+1] == 'x' {
				v, ok := hex(j+2, 2)
				if !ok {
					break
				}
				bs, j = append(bs, byte(v)), j+4
			}
			if len(bs) == 0 {
				b.WriteByte('\\')
				continue
			}
			if utf8.Valid(bs) {
				b.Write(bs)
			} else {
				for _, c := range bs {
					b.WriteRune(rune(c))
				}
			}
			i = j - 1
		case 'n':
			b.WriteByte('\n')
			i++
		case 'r':
			b.WriteByte('\r')
			i++
		case 't':
			b.WriteByte('\t')
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func b64(s string) []string {
	b := []byte(s)
	return []string{
		base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
	}
}

func goJSON(s string, html bool) string {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	_ = e.Encode(s)
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

// compact drops repeated forms, keeping the first of each.
func compact(forms []string) []string {
	var out []string
	for _, f := range forms {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}
