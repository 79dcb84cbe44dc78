package rulefmt

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/npuprof/npuprof/internal/lang"
)

// texts is the rule's block in language l (nil: English, or no block). A
// built-in rule's Chinese that fails to load (the test suite loads every
// one) fails the rule's title and fix with the problem, as a built-in
// template that fails to compile does.
func (r *Rule) texts(l string) *Texts {
	t, err := r.textsErr(l)
	if err != nil {
		broken := &Template{lazy: &lazy[[]Part]{build: func() ([]Part, error) { return nil, err }}}
		return &Texts{Title: broken, Fix: broken}
	}
	return t
}

// textsErr is texts with the problems of a built-in rule's Chinese, read
// and compiled on first use.
func (r *Rule) textsErr(l string) (*Texts, error) {
	if l != lang.ZH {
		return nil, nil
	}
	if r.zhLazy != nil {
		return r.zhLazy.get()
	}
	return r.zh, nil
}

// lazyTexts gives the rules of file their Chinese from zhFile, which read
// returns when first needed.
func (s *Set) lazyTexts(file, zhFile string, read func() ([]byte, error)) {
	blocks := &lazy[*textsFile]{build: func() (*textsFile, error) { return readTexts(zhFile, read, s, file) }}
	for _, r := range s.Rules {
		if r.File != file {
			continue
		}
		if r.zh != nil {
			r.zhLazy = &lazy[*Texts]{build: func() (*Texts, error) {
				return nil, fmt.Errorf("%s: rule %s: Chinese texts given twice, in its zh: block and in %s", file, r.ID, zhFile)
			}}
			continue
		}
		r.zhLazy = &lazy[*Texts]{build: func() (*Texts, error) {
			tf, err := blocks.get()
			if err != nil || tf == nil || tf.blocks[r.ID] == nil {
				return nil, err
			}
			l := &loader{file: zhFile, lines: tf.lines}
			c := &compiler{l: l, rule: r, what: "rule " + r.ID, scope: -1}
			t := c.texts(tf.blocks[r.ID], lang.ZH)
			if len(l.problems) > 0 {
				return nil, errors.New(strings.Join(l.problems, "; "))
			}
			return t, nil
		}}
	}
}

// textsFile is a decoded built-in texts file.
type textsFile struct {
	blocks map[string]*yaml.Node // by rule id
	lines  []string
}

// readTexts reads and decodes the texts file of file's rules: a mapping
// whose keys are their ids. No file: no texts.
func readTexts(zhFile string, read func() ([]byte, error), s *Set, file string) (*textsFile, error) {
	data, err := read()
	if err != nil {
		return nil, nil // TestBuiltinRulesHaveChinese fails
	}
	var ids []string
	for _, r := range s.Rules {
		if r.File == file {
			ids = append(ids, r.ID)
		}
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, errors.New(syntaxProblem(zhFile, data, err))
	}
	l := &loader{file: zhFile}
	tf := &textsFile{lines: strings.Split(string(data), "\n")}
	if len(doc.Content) == 1 {
		tf.blocks = l.mapping(doc.Content[0], "texts of "+path.Base(file), ids)
	} else {
		l.errf(&doc, "expected a mapping of rule id to texts")
	}
	if len(l.problems) > 0 {
		return nil, errors.New(strings.Join(l.problems, "; "))
	}
	return tf, nil
}

// TitleIn is the rule's title template in language l: its zh: title, else
// the English one.
func (r *Rule) TitleIn(l string) *Template {
	if t := r.texts(l); t != nil && t.Title != nil {
		return t.Title
	}
	return r.Title
}

// FixIn is the rule's fix template in language l.
func (r *Rule) FixIn(l string) *Template {
	if t := r.texts(l); t != nil && t.Fix != nil {
		return t.Fix
	}
	return r.Fix
}

// SummaryIn is the rule's summary in language l.
func (r *Rule) SummaryIn(l string) string {
	if t := r.texts(l); t != nil && t.Summary != "" {
		return t.Summary
	}
	return r.Summary
}

// WhyIn is the rule's explanation in language l.
func (r *Rule) WhyIn(l string) string {
	if t := r.texts(l); t != nil && t.Why != "" {
		return t.Why
	}
	return r.Why
}

// NoteIn is evidence item es's note template in language l.
func (r *Rule) NoteIn(es EvidenceSpec, l string) *Template {
	if t := r.texts(l); t != nil && t.Notes[es.Metric] != nil {
		return t.Notes[es.Metric]
	}
	return es.Note
}
