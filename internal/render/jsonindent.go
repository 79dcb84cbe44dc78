package render

import (
	"bytes"
	"encoding/json"
	"strings"
)

// marshalIndent is json.MarshalIndent(v, prefix, indent): json.Marshal,
// then indentJSON instead of encoding/json's indenting, which runs its
// validating scanner over every byte (a state function call each) and
// cost ~50 instructions a byte of the document.
func marshalIndent(v any, prefix, indent string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return indentJSON(make([]byte, 0, 2*len(b)), b, prefix, indent), nil
}

// indentJSON appends src, the output of json.Marshal (valid JSON, no
// whitespace outside strings), to dst indented as json.Indent(dst, src,
// prefix, indent) does: a newline, prefix and one indent per level after
// each '{', '[' and ',' and before each '}' and ']' (empty objects and
// arrays stay "{}" and "[]"), and ": " after each key. Strings are
// copied whole. TestIndentJSONIsIndent compares the two.
func indentJSON(dst, src []byte, prefix, indent string) []byte {
	nl := newlines(prefix, indent)
	needIndent := false
	depth := 0
	for i := 0; i < len(src); {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			// none in json.Marshal's output; json.Indent drops them
			i++
			continue
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			dst = nl.add(dst, depth)
		}
		switch c {
		case '"':
			e := stringEnd(src, i+1)
			dst = append(dst, src[i:e]...)
			i = e
			continue
		case '{', '[':
			needIndent = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = nl.add(dst, depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				dst = nl.add(dst, depth)
			}
			dst = append(dst, c)
		default:
			// a number or a literal: up to the next punctuation
			j := i + 1
			for j < len(src) && !jsonPunct[src[j]] {
				j++
			}
			dst = append(dst, src[i:j]...)
			i = j
			continue
		}
		i++
	}
	return dst
}

// jsonPunct marks the bytes that end a number or literal.
var jsonPunct = [256]bool{',': true, ':': true, '{': true, '}': true, '[': true, ']': true, '"': true,
	' ': true, '\t': true, '\n': true, '\r': true}

// stringEnd returns the index after the closing quote of the string whose
// content starts at src[i] (len(src) when it is not closed).
func stringEnd(src []byte, i int) int {
	for {
		k := bytes.IndexByte(src[i:], '"')
		if k < 0 {
			return len(src)
		}
		k += i
		// escaped when an odd number of backslashes precede it
		n := 0
		for j := k - 1; j >= i && src[j] == '\\'; j-- {
			n++
		}
		if n&1 == 0 {
			return k + 1
		}
		i = k + 1
	}
}

// lineStarts appends what starts a line of the indented text: a
// newline, the prefix and depth indents, sliced from one string up to
// maxDepth (an append per indent was a third of indenting).
type lineStarts struct {
	s              string // "\n" + prefix + maxDepth indents
	prefix, indent string
}

const maxDepth = 24

func newlines(prefix, indent string) lineStarts {
	return lineStarts{"\n" + prefix + strings.Repeat(indent, maxDepth), prefix, indent}
}

// add appends a newline, the prefix and depth indents.
func (l lineStarts) add(dst []byte, depth int) []byte {
	if depth <= maxDepth {
		return append(dst, l.s[:1+len(l.prefix)+depth*len(l.indent)]...)
	}
	dst = append(dst, l.s...)
	for range depth - maxDepth {
		dst = append(dst, l.indent...)
	}
	return dst
}
