package lang

import (
	"strings"
	"unicode"
)

// EnglishMinWords is how many English words in a row make a sentence for
// EnglishSentences: fewer are a name or a term ("profiler level", "AI
// CPU"), as many are prose a Chinese output must not hold.
const EnglishMinWords = 3

// EnglishSentences are the runs of at least EnglishMinWords English words
// in s: what a Chinese output (--lang zh) must not hold. A word is a
// token of ASCII letters only, all lower case or capitalised (Word), with
// surrounding punctuation and brackets trimmed; anything else ends a run:
// a Chinese character or mark, a number, a name with digits, capitals
// inside or an underscore (kernel, metric and rule names: MoeInitRouting,
// ledger.compute.time_us, comm-bound), a flag (--lang), a path (/models/x),
// an acronym (HCCL, EP) or a sentence's end (. ; : after a word). Names,
// flags, kernels and paths thus never count; prose does.
func EnglishSentences(s string) []string {
	var out []string
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		out = englishLine(out, line) // a line ends a run
	}
	return out
}

// englishLine appends the sentences of one line to out.
func englishLine(out []string, line string) []string {
	var run []string
	flush := func() {
		if len(run) >= EnglishMinWords {
			out = append(out, strings.Join(run, " "))
		}
		run = run[:0]
	}
	notASCII := func(r rune) bool { return r > unicode.MaxASCII }
	for _, field := range strings.Fields(line) {
		// a Chinese character or mark ends a run as a word that is not
		// English does
		for i, tok := range strings.FieldsFunc(field, notASCII) {
			if i > 0 || strings.IndexFunc(field, notASCII) == 0 {
				flush()
			}
			w, end := proseWord(tok)
			if w == "" {
				flush()
				continue
			}
			run = append(run, w)
			if end {
				flush()
			}
		}
		if strings.IndexFunc(field, notASCII) >= 0 {
			flush()
		}
	}
	flush()
	return out
}

// proseWord is tok as an English word ("" when it is not one) and whether
// a sentence or clause ends after it.
func proseWord(tok string) (string, bool) {
	const open, close = "([{\"'`<", ")]}\"'`>,.;:!?"
	w := strings.TrimLeft(tok, open)
	trimmed := strings.TrimRight(w, close)
	end := strings.ContainsAny(w[len(trimmed):], ".,;:!?)]}")
	w = trimmed
	if w == "" {
		return "", false
	}
	for i, r := range w {
		switch {
		case r >= 'a' && r <= 'z':
		case r == '\'' && i > 0: // don't, rank's
		case r >= 'A' && r <= 'Z' && i == 0:
		default:
			return "", false
		}
	}
	if (len(w) == 1 && w != "a" && w != "A" && w != "I") || w == "npuprof" {
		return "", false
	}
	return w, end
}
