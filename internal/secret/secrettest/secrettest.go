// Package secrettest is the test side of redaction, shared by the trigger
// and alert contract kits: what a careless provider echoes of a secret
// (Echo) and whether a text shows a secret in any form a reader could use
// (Leak). It is written apart from package secret on purpose: a form
// that package forgot must still be found here.
package secrettest

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Forms are the wire forms of secret the kits look for (product spec §8):
// the value, JSON-escaped (as encoding/json writes it, with and without
// HTML escaping), URL-escaped (url.QueryEscape and url.PathEscape) and in
// base64 (standard and URL alphabets, padded and not).
func Forms(secret string) []string {
	out := []string{secret, jsonInner(secret, true), jsonInner(secret, false), url.QueryEscape(secret), url.PathEscape(secret)}
	return append(out, b64(secret)...)
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
// nothing (ESC, NUL, U+200B, U+2060, U+FEFF, a soft hyphen) and by a JSON
// escape of one: cleaning that drops them after redaction joins the
// halves, and a reader joins them anyway.
func Splits(secret string) []string {
	h := len(secret) / 2
	var out []string
	for _, sep := range []string{"\x1b", "\x00", "\u200b", "\u2060", "\ufeff", "\u00ad", `\u001b`, "\x1b\u200b\x00"} {
		out = append(out, secret[:h]+sep+secret[h:])
	}
	return out
}

// Echo is what a careless provider puts in an error answer or a failure
// message besides what it received: secret split by invisible
// characters, and every form of secret and of the user info (nil: none),
// one after the other. A runner that knows the secret must redact all of
// it. Messages are cut (an answer's first 512 bytes, an AWS message's
// 300), so the parts that test the most come first: the splits, the Basic
// header, base64 and JSON.
func Echo(secret string, userinfo *url.Userinfo) string {
	splits, forms := Splits(secret), Forms(secret)
	parts := []string{splits[0], splits[2], splits[6]}
	if p, ok := userinfo.Password(); ok && p != "" {
		parts = append(parts, "Basic "+base64.StdEncoding.EncodeToString([]byte(userinfo.Username()+":"+p)))
	}
	parts = append(parts, forms[5], forms[1])
	parts = append(parts, forms...)
	parts = append(parts, splits...)
	parts = append(parts, UserinfoForms(userinfo)...)
	return "echo: " + strings.Join(parts, " | ")
}

// Leak returns the first form of secret or userinfo (nil: none) that s
// shows, "" if none. s is read as a reader sees it too: with invisible
// characters and their JSON escapes removed.
func Leak(s, secret string, userinfo *url.Userinfo) string {
	forms := append(Forms(secret), UserinfoForms(userinfo)...)
	for _, text := range []string{s, Visible(s)} {
		for _, f := range forms {
			if f != "" && strings.Contains(text, f) {
				return f
			}
		}
	}
	return ""
}

var escape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}`)

// Visible is s without the characters that print as nothing (control
// characters other than line breaks and tabs, format characters,
// variation selectors and other default-ignorable code points) and
// without their \u and \x escapes, until none is left.
func Visible(s string) string {
	for {
		t := strings.Map(func(r rune) rune {
			if invisible(r) && r != '\n' && r != '\r' && r != '\t' {
				return -1
			}
			return r
		}, s)
		t = escape.ReplaceAllStringFunc(t, func(e string) string {
			n, err := strconv.ParseUint(e[2:], 16, 32)
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

func b64(s string) []string {
	b := []byte(s)
	return []string{
		base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
	}
}

func jsonInner(s string, html bool) string {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	_ = e.Encode(s)
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}
