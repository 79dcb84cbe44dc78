// Package lang names the languages npuprof writes (English and Chinese)
// and picks one from a --lang value or the locale.
package lang

import (
	"fmt"
	"strings"
	"unicode"
)

// The languages, as --lang and the JSON document's `lang` spell them.
const (
	EN = "en"
	ZH = "zh"
)

// Names are the allowed --lang values, in the order the help lists them.
var Names = []string{ZH, EN}

// Parse checks a --lang value: zh or en (case-insensitive).
func Parse(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case EN, ZH:
		return v, nil
	case "cn", "zh-cn", "zh_cn": // msprof-analyze's spelling, and the locale's
		return ZH, nil
	}
	return "", fmt.Errorf("%q: expected one of %s", s, strings.Join(Names, ", "))
}

// Or is l, or English when l is empty (a document written before `lang`).
func Or(l string) string {
	if l == ZH {
		return ZH
	}
	return EN
}

// FromLocale is the language of the locale's messages: the first of
// LC_ALL, LC_MESSAGES and LANG that is set (as POSIX orders them for
// messages) decides; zh, zh_* or zh-* gives Chinese, anything else (C,
// POSIX, en_US.UTF-8, none set) English.
func FromLocale(getenv func(string) string) string {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			if v == "zh" || strings.HasPrefix(v, "zh_") || strings.HasPrefix(v, "zh-") || strings.HasPrefix(v, "zh.") {
				return ZH
			}
			return EN
		}
	}
	return EN
}

// HasHan reports whether s holds a Chinese (Han) character.
func HasHan(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0
}
