package lang

import (
	"embed"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/npuprof/npuprof/internal/lazyre"
)

// A phrase table translates the messages npuprof composes from data (an
// unavailable metric's reason, a prediction's basis, a fact's source, a
// rule's not-evaluated reason, a note on the input): each key is the
// English as the code writes it, a printf format whose %s, %d, %v, %q and
// %g take the data; each value is the language's text with the same verbs
// in the same order (%[n]s reorders). A message matching no key whole is
// cut at its first ": ", "; " or " (...)" and each part translated, so
// "fact X unknown: give it with --fact X=... (it comes from: --vllm-log)"
// is three phrases. Text a %s took is translated too (a reason quoted in
// a phrase), a number or a name stays.
type phraseTable struct {
	once    sync.Once
	src     map[string]string
	phrases []phrase
}

type phrase struct {
	re *regexp.Regexp
	to string
	// open: the key ends with a verb, whose text runs to the end of the
	// message; it never takes a clause after a top-level "; " (a
	// message's own, optional next sentence, translated by its own key)
	open bool
}

// reFormatVerb is one verb of a phrase key.
var reFormatVerb = lazyre.New(`%[-+# 0]*\d*(?:\.\d+)?[sdvqgf]`)

func (t *phraseTable) compile() {
	keys := make([]string, 0, len(t.src))
	for en := range t.src {
		keys = append(keys, en)
	}
	// the longest first: a specific phrase before a general one
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	for _, en := range keys {
		to := t.src[en]
		var b strings.Builder
		b.WriteString("^")
		last := 0
		for _, m := range reFormatVerb().FindAllStringIndex(en, -1) {
			b.WriteString(regexp.QuoteMeta(strings.ReplaceAll(en[last:m[0]], "%%", "%")))
			switch en[m[1]-1] {
			case 'd':
				b.WriteString(`(-?[0-9][0-9,]*)`)
			case 'g', 'f':
				b.WriteString(`(-?[0-9][0-9.,e+-]*)`)
			default:
				b.WriteString(`(.+?)`)
			}
			last = m[1]
		}
		b.WriteString(regexp.QuoteMeta(strings.ReplaceAll(en[last:], "%%", "%")))
		b.WriteString("$")
		open := last > 0 && last == len(en)
		t.phrases = append(t.phrases, phrase{regexp.MustCompile(`(?s)` + b.String()), reFormatVerb().ReplaceAllStringFunc(to, verbAsString), open})
	}
}

// verbAsString makes a value's verb take the captured text: %d, %.1f →
// %s (an explicit index kept).
func verbAsString(v string) string { return "%s" }

// Translate is s in language l: s itself in English, or in Chinese by the
// phrase table (a part matching no phrase stays as it is).
func Translate(l, s string) string {
	if l != ZH || !strings.Contains(s, " ") {
		return s // every phrase has a space: a name or a number stays
	}
	zhTable.once.Do(func() { zhTable.src = zhPhrases(); zhTable.compile() })
	return zhTable.translate(s, 0)
}

func (t *phraseTable) translate(s string, depth int) string {
	if depth > 64 || s == "" {
		return s
	}
	for _, p := range t.phrases {
		m := p.re.FindStringSubmatch(s)
		if m == nil || !balanced(m[1:]) || p.open && hasTopClause(m[len(m)-1]) {
			continue
		}
		args := make([]any, len(m)-1)
		for i, a := range m[1:] {
			args[i] = t.translate(a, depth+1)
		}
		return fmt.Sprintf(p.to, args...)
	}
	// cut at the first separator outside brackets and translate each
	// part; when English is left, at the last "; " (a sentence of its own
	// follows it) if that leaves less
	cut := func(i int, sep string) (string, bool) {
		head, tail := t.translate(s[:i], depth+1), t.translate(s[i+len(sep):], depth+1)
		return head + zhSep(sep, head, tail) + tail, head != s[:i] || tail != s[i+len(sep):]
	}
	if i, sep := indexTop(s); i > 0 {
		first, ok := cut(i, sep)
		if j, semi := lastClause(s); j > i && len(EnglishSentences(first)) > 0 {
			if alt, altOK := cut(j, semi); altOK && len(EnglishSentences(alt)) < len(EnglishSentences(first)) {
				return alt
			}
		}
		if ok {
			return first
		}
	}
	if strings.HasSuffix(s, ")") {
		if i := openOfLast(s); i > 0 && s[i-1] == ' ' {
			head, in := t.translate(s[:i-1], depth+1), t.translate(s[i+1:len(s)-1], depth+1)
			if head != s[:i-1] || in != s[i+1:len(s)-1] {
				return head + "（" + in + "）"
			}
		}
	}
	return s
}

// balanced reports whether every text a verb took closes the brackets it
// opens (a %s never takes half of a bracket and what follows it).
func balanced(args []string) bool {
	for _, a := range args {
		depth := 0
		for i := 0; i < len(a); i++ {
			if depth += bracket(a[i]); depth < 0 {
				return false
			}
		}
		if depth != 0 {
			return false
		}
	}
	return true
}

// hasTopClause reports whether s holds "; " outside brackets: a next
// sentence.
func hasTopClause(s string) bool {
	i, _ := lastClause(s)
	return i >= 0
}

// separators are where a message matching no phrase is cut, with their
// Chinese.
var separators = [][2]string{{"; ", "；"}, {": ", "："}, {"：", "："}, {", ", "，"}, {"；", "；"}}

// indexTop is the index of the first separator in s outside brackets,
// and the separator, or -1.
func indexTop(s string) (int, string) {
	first, firstSep := -1, ""
	eachTop(s, func(i int) {
		for _, sep := range separators {
			if first < 0 && strings.HasPrefix(s[i:], sep[0]) {
				first, firstSep = i, sep[0]
			}
		}
	})
	return first, firstSep
}

// lastClause is the index of the last "; " in s outside brackets, and
// the separator, or -1.
func lastClause(s string) (int, string) {
	at, sep := -1, ""
	eachTop(s, func(i int) {
		for _, p := range []string{"; ", "；"} {
			if strings.HasPrefix(s[i:], p) {
				at, sep = i, p
			}
		}
	})
	return at, sep
}

// eachTop calls f with every index of s outside brackets that is not a
// bracket itself, in order.
func eachTop(s string, f func(i int)) {
	depth := 0
	for i := 0; i < len(s); i++ {
		d := bracket(s[i])
		if depth += d; d == 0 && depth == 0 {
			f(i)
		}
	}
}

// bracket is what c does to the depth of brackets: 1 opens, -1 closes, 0
// neither.
func bracket(c byte) int {
	switch c {
	case '(', '[', '{':
		return 1
	case ')', ']', '}':
		return -1
	}
	return 0
}

// openOfLast is the index of the bracket that the closing ) ending s
// opens, or -1.
func openOfLast(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// zhSep is the separator between two translated parts: the Chinese mark
// when either is Chinese, else the English one.
func zhSep(en, a, b string) string {
	if HasHan(a) || HasHan(b) {
		for _, sep := range separators {
			if sep[0] == en {
				return sep[1]
			}
		}
	}
	return en
}

// TranslateWith is s in Chinese by the phrase table src (keys and
// values as zhPhrases'), compiled once per table: a package's own
// phrases (the report's notes) beside the shared ones.
func TranslateWith(src map[string]string, s string) string {
	if !strings.Contains(s, " ") || len(src) == 0 {
		return s
	}
	tablesMu.Lock()
	t, ok := tables[reflectKey(src)]
	if !ok {
		t = &phraseTable{src: src}
		tables[reflectKey(src)] = t
	}
	tablesMu.Unlock()
	t.once.Do(t.compile)
	return t.translate(s, 0)
}

var (
	tablesMu sync.Mutex
	tables   = map[uintptr]*phraseTable{}
)

// reflectKey identifies a map by its address.
func reflectKey(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }

// zhFiles is the Chinese catalog of phrases (catalog.go's format).
//
//go:embed zh/phrases.txt
var zhFiles embed.FS

// zhPhrases is the Chinese phrase table: the messages the analysis, the
// readers, the facts, the rules engine and the plan compose from data,
// keyed by their English exactly as written (verbs in order; a Chinese
// text that reorders them uses %[n]s). TestZHPhrases checks the verbs; the
// zh outputs' test (cmd/npuprof) that none of them stays English.
var zhPhrases = CatalogOf(zhFiles, "zh/phrases.txt")

// zhTable is the Chinese phrase table, compiled from zhPhrases on first use.
var zhTable = &phraseTable{}

// Phrases is the language's phrase table (nil for English): for the test
// that every key is a message the code still writes.
func Phrases(l string) map[string]string {
	if l == ZH {
		return zhPhrases()
	}
	return nil
}
