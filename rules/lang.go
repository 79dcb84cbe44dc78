package rules

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
		broken := &Template{lazy: &lazy[[]tmplPart]{build: func() ([]tmplPart, error) { return nil, err }}}
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

// builtinTexts gives the rules of built-in file their Chinese texts from
// builtinFS's name (a mapping of rule id to the keys of a zh: block), read
// and compiled only when a rule's Chinese is first asked for: the English
// run pays nothing for them.
func (s *Set) builtinTexts(file, name string) {
	s.lazyTexts(file, "rules/"+name, func() ([]byte, error) { return builtinFS.ReadFile(name) })
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
			c := &compiler{l: l, rule: r, what: "rule " + r.ID}
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
		return nil, fmt.Errorf("%s: %s", zhFile, strings.TrimPrefix(err.Error(), "yaml: "))
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

// noteIn is evidence item es's note template in language l.
func (r *Rule) noteIn(es EvidenceSpec, l string) *Template {
	if t := r.texts(l); t != nil && t.Notes[es.Metric] != nil {
		return t.Notes[es.Metric]
	}
	return es.Note
}

// The texts the rule engine writes itself (evidence notes over ranks, a
// budget's finding), by language: format strings taking the same
// arguments in each.
const (
	msgSumOver = iota
	msgMostCommon
	msgMeanOf
	msgSavingNotEstimated
	msgBudgetTitle
	msgBudgetNow
	msgBudgetBaseline
	msgBudgetFix
	msgPlanBudgetTitle
	msgPlanBudgetNote
	msgPlanBudgetFix
	// the context functions' texts (contextfuncs.go, versions.go)
	msgGroup
	msgGroupUnknown
	msgCollectiveOps
	msgOfWindow
	msgAICPUKernel
	msgOfWaits
	msgThen
	msgAwaitCollective
	msgAwaitCollectiveGroup
	msgAwaitKernel
	msgAwaitMemcpy
	msgAwaitHost
	msgAlready
	msgAnd
	msgNoChanges
	msgListSep
)

var engineMsgs = map[string][]string{
	lang.EN: {
		msgSumOver:            "sum over ranks %s",
		msgMostCommon:         "(on %d of %d ranks) %s",
		msgMeanOf:             "(mean of %d ranks) %s",
		msgSavingNotEstimated: "saving not estimated: %s",
		msgBudgetTitle:        "%s is over budget: %s, budget %s %s (baseline %s)",
		msgBudgetNow:          "now (mean over ranks)",
		msgBudgetBaseline:     "baseline %s",
		msgBudgetFix:          "%s changed from %s to %s since the baseline (budget: %s). Compare the two analyses to find what changed.",
		msgPlanBudgetTitle:    "The fix plan predicts %+.2f%% step time, over budget %s %s",
		msgPlanBudgetNote:     "predicted by the fix plan",
		msgPlanBudgetFix:      "Apply the fix plan (%s): its deploy_diff and code patches, then capture again. Budget: %s.",

		msgGroup:                "%s (group %s)",
		msgGroupUnknown:         "%s (group not in parallel_group_info)",
		msgCollectiveOps:        "%s %s over %s ops",
		msgOfWindow:             ", %.1f%% of the window",
		msgAICPUKernel:          "%s ×%s (%s per rank)",
		msgOfWaits:              ", %.1f%% of its waits",
		msgThen:                 ", then %s, %.1f%%",
		msgAwaitCollective:      "the %s collectives (stream %d)",
		msgAwaitCollectiveGroup: "the %s collectives of group %s (stream %d)",
		msgAwaitKernel:          "%s kernels on side stream %d",
		msgAwaitMemcpy:          "memory copies on stream %d",
		msgAwaitHost:            "the host (no record on the device ended the wait)",
		msgAlready:              "%s %s (already)",
		msgAnd:                  "%s and %s",
		msgNoChanges:            "no listed changes",
		msgListSep:              "; ",
	},
	lang.ZH: {
		msgSumOver:            "各 rank 之和 %s",
		msgMostCommon:         "（%d/%d 个 rank 为此值）%s",
		msgMeanOf:             "（%d 个 rank 的均值）%s",
		msgSavingNotEstimated: "未估算收益：%s",
		msgBudgetTitle:        "%s 超出预算：当前 %s，预算 %s %s（基线 %s）",
		msgBudgetNow:          "当前值（各 rank 均值）",
		msgBudgetBaseline:     "基线 %s",
		msgBudgetFix:          "%s 自基线以来从 %s 变为 %s（预算：%s）。请对比两次分析，找出变化的原因。",
		msgPlanBudgetTitle:    "修复计划预测 step 时间变化 %+.2f%%，超出预算 %s %s",
		msgPlanBudgetNote:     "修复计划的预测值",
		msgPlanBudgetFix:      "按修复计划（%s）应用其 deploy_diff 和代码补丁，然后重新采集。预算：%s。",

		msgGroup:                "%s（%s 组）",
		msgGroupUnknown:         "%s（通信组不在 parallel_group_info 中）",
		msgCollectiveOps:        "%s %s，共 %s 次",
		msgOfWindow:             "，占窗口的 %.1f%%",
		msgAICPUKernel:          "%s ×%s（每 rank %s）",
		msgOfWaits:              "，占其等待时间的 %.1f%%",
		msgThen:                 "；其次是 %s，%.1f%%",
		msgAwaitCollective:      "%s 集合通信（stream %d）",
		msgAwaitCollectiveGroup: "%[2]s 组的 %[1]s 集合通信（stream %[3]d）",
		msgAwaitKernel:          "副 stream %[2]d 上的 %[1]s 算子",
		msgAwaitMemcpy:          "stream %d 上的内存拷贝",
		msgAwaitHost:            "host（device 上没有任何记录结束这些等待）",
		msgAlready:              "%s %s（已是此版本）",
		msgAnd:                  "%s 和 %s",
		msgNoChanges:            "版本表未列出变更",
		msgListSep:              "；",
	},
}

// msg is engine text id in the language of the evaluation.
func (st *state) msg(id int) string { return msg(st.in.Lang, id) }

// msg is engine text id in language l.
func msg(l string, id int) string {
	return engineMsgs[lang.Or(l)][id]
}
