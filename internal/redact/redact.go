// Package redact keeps credentials and terminal escapes out of npuprof's
// outputs. Strings are redacted where they enter (the deployment script as
// it is read, the profile's ENV_VARIABLES), so every output made from them
// (JSON, text, HTML, JUnit, SARIF, the diffs) shows *** in place of the
// value; Terminal strips control and escape sequences from text bound for
// a terminal.
package redact

import (
	"strings"
	"unicode/utf8"

	"github.com/npuprof/npuprof/internal/lazyre"
)

// Mask replaces a credential's value.
const Mask = "***"

// SecretName reports whether an environment variable (or a key) named
// name carries a credential: *_TOKEN, *_KEY, *SECRET*, *PASSWORD* (any
// case), HF_TOKEN, TOKEN, KEY.
func SecretName(name string) bool {
	n := strings.ToUpper(name)
	return n == "TOKEN" || n == "KEY" || strings.HasSuffix(n, "_TOKEN") || strings.HasSuffix(n, "_KEY") ||
		strings.Contains(n, "SECRET") || strings.Contains(n, "PASSWORD") || strings.Contains(n, "PASSWD")
}

// SecretFlag reports whether a command-line flag (with or without its
// dashes) takes a credential: --api-key, --hf-token, any --*-key or
// --*-token, and any flag naming a secret or a password. --tokenizer or
// --max-num-batched-tokens are not.
func SecretFlag(flag string) bool {
	f := strings.ToLower(strings.TrimLeft(flag, "-"))
	f = strings.ReplaceAll(f, "_", "-")
	return f == "token" || f == "key" || strings.HasSuffix(f, "-key") || strings.HasSuffix(f, "-token") ||
		strings.Contains(f, "secret") || strings.Contains(f, "password") || strings.Contains(f, "passwd")
}

// Env is the value of the environment variable name as outputs show it:
// *** for a credential, URL passwords masked otherwise.
func Env(name, value string) string {
	if SecretName(name) && value != "" {
		return Mask
	}
	return URLs(value)
}

var reURLUserinfo = lazyre.New(`([A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'"]*):([^\s/@'"]+)@`)

// URLs masks the password of every URL with user:password@ in s.
func URLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return reURLUserinfo().ReplaceAllString(s, "${1}:"+Mask+"@")
}

// a shell word: quoted, or up to a space or a shell operator
const word = `("[^"]*"|'[^']*'|[^\s;&|<>()]+)`

var (
	reAssign = lazyre.New(`(^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=` + word)
	reFlag   = lazyre.New(`(^|\s)(--?[A-Za-z][A-Za-z0-9_-]*)(=|[ \t]+(?:\\\n[ \t]*)?)` + word)
)

// Script masks the credentials of a shell script (a deployment script):
// the value of an assignment to a credential variable (export HF_TOKEN=...),
// the value of a credential flag (--api-key ..., --api-key=...) and URL
// passwords. A value that is a reference ($NAME, "${NAME}") is not a
// credential and is kept. Quotes stay in place ("***"); line breaks are
// unchanged, so line numbers still hold.
func Script(s string) string {
	s = reAssign().ReplaceAllStringFunc(s, func(m string) string {
		sub := reAssign().FindStringSubmatch(m)
		if !SecretName(sub[2]) {
			return m
		}
		return sub[1] + sub[2] + "=" + maskWord(sub[3])
	})
	s = reFlag().ReplaceAllStringFunc(s, func(m string) string {
		sub := reFlag().FindStringSubmatch(m)
		if !SecretFlag(sub[2]) || strings.HasPrefix(sub[4], "-") {
			return m
		}
		return sub[1] + sub[2] + sub[3] + maskWord(sub[4])
	})
	return URLs(s)
}

// maskWord is w with its value masked, its quotes kept; a reference to a
// variable is kept as written.
func maskWord(w string) string {
	q := ""
	if len(w) >= 2 && (w[0] == '"' || w[0] == '\'') && w[len(w)-1] == w[0] {
		q, w = w[:1], w[1:len(w)-1]
	}
	if w == "" || strings.HasPrefix(w, "$") || w == Mask {
		return q + w + q
	}
	return q + Mask + q
}

// Terminal strips control and escape sequences from s: a CSI sequence
// (ESC [ ... final byte, clear screen, colours, cursor moves), an OSC,
// DCS, APC, PM or SOS string up to its terminator (BEL or ESC \), with its
// payload (an OSC 52 clipboard write), any other ESC pair, and every other
// C0 or C1 control character but newline and tab. Invalid UTF-8 is kept
// as it is (the writers replace it).
func Terminal(s string) string {
	if !needsTerminal(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == 0x1b:
			i = skipEscape(s, i+1)
		case r == 0x9b: // C1 CSI
			i = skipCSI(s, i+size)
		case r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f: // C1 OSC, DCS, SOS, PM, APC
			i = skipString(s, i+size)
		case c == '\n' || c == '\t':
			b.WriteByte(c)
			i++
		case c < 0x20 || c == 0x7f || (r >= 0x80 && r <= 0x9f && size == 2):
			i += size
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

func needsTerminal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0xc2 {
			return true
		}
	}
	return false
}

// skipEscape skips what follows an ESC at i.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	if s[i] >= 0x20 && s[i] < 0x7f {
		return i + 1
	}
	return i
}

// skipCSI skips a CSI sequence's parameters and intermediates up to its
// final byte.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		case c < 0x20 || c > 0x7e:
			return i // not part of the sequence: left to the caller
		}
		i++
	}
	return i
}

// skipString skips a control string up to BEL, ESC \ or ST (U+009C),
// or to the end of the line (a terminal would swallow it all the same).
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i
		case s[i] == '\n':
			return i
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + 2
		}
		i++
	}
	return i
}
