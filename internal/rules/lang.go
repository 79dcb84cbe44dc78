package rules

import (
	"github.com/npuprof/npuprof/internal/lang"
)

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
	msgBudgetAbsTitle
	msgBudgetAbsFix
	msgPlanBudgetTitle
	msgPlanBudgetNote
	msgPlanBudgetFix
	msgPlanImpossibleTitle
	msgPlanImpossibleFix
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
	msgAnd3
	msgChangeDispatcher
	msgChangeModel
	msgChangeNothing
	msgChangeKernels
	msgChangeShrinks
	msgChangeNeedsOn
	msgNoChangesFit
	msgPerStepSuffix
)

var engineMsgs = map[string][]string{
	lang.EN: {
		msgSumOver:             "sum over ranks %s",
		msgMostCommon:          "(on %d of %d ranks) %s",
		msgMeanOf:              "(mean of %d ranks) %s",
		msgSavingNotEstimated:  "saving not estimated: %s",
		msgBudgetTitle:         "%s is over budget: %s, budget %s %s (baseline %s)",
		msgBudgetNow:           "now (mean over ranks)",
		msgBudgetBaseline:      "baseline %s",
		msgBudgetFix:           "%s changed from %s to %s since the baseline (budget: %s). Compare the two analyses to find what changed.",
		msgBudgetAbsTitle:      "%s is over budget: %s, budget %s %s",
		msgBudgetAbsFix:        "%s is %s (budget: %s). The findings above name what sets it.",
		msgPlanBudgetTitle:     "The fix plan predicts %+.2f%% step time, over budget %s %s",
		msgPlanBudgetNote:      "predicted by the fix plan",
		msgPlanBudgetFix:       "Apply the fix plan (%s): its deploy_diff and code patches, then capture again. Budget: %s.",
		msgPlanImpossibleTitle: "The fix plan holds an impossible step: %s",
		msgPlanImpossibleFix:   "The plan's prediction is not a step time, so no budget on it passes (%s): report the profile and the plan to npuprof's maintainers.",

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
		msgAnd3:                 "%s, %s and %s",
		msgChangeDispatcher:     "the %s dispatcher; this profile runs %s",
		msgChangeModel:          "%s; the model is %s",
		msgChangeNothing:        "nothing to shrink: %s measured 0",
		msgChangeKernels:        "%s",
		msgChangeShrinks:        "; would shrink %s",
		msgChangeNeedsOn:        "; needs %s on",
		msgNoChangesFit:         "none of its listed changes meets this profile",
		msgPerStepSuffix:        " per step",
	},
	lang.ZH: {
		msgSumOver:             "各 rank 之和 %s",
		msgMostCommon:          "（%d/%d 个 rank 为此值）%s",
		msgMeanOf:              "（%d 个 rank 的均值）%s",
		msgSavingNotEstimated:  "未估算收益：%s",
		msgBudgetTitle:         "%s 超出预算：当前 %s，预算 %s %s（基线 %s）",
		msgBudgetNow:           "当前值（各 rank 均值）",
		msgBudgetBaseline:      "基线 %s",
		msgBudgetFix:           "%s 自基线以来从 %s 变为 %s（预算：%s）。请对比两次分析，找出变化的原因。",
		msgBudgetAbsTitle:      "%s 超出预算：当前 %s，预算 %s %s",
		msgBudgetAbsFix:        "%s 为 %s（预算：%s）。上面的发现指出了影响它的因素。",
		msgPlanBudgetTitle:     "修复计划预测 step 时间变化 %+.2f%%，超出预算 %s %s",
		msgPlanBudgetNote:      "修复计划的预测值",
		msgPlanBudgetFix:       "按修复计划（%s）应用其 deploy_diff 和代码补丁，然后重新采集。预算：%s。",
		msgPlanImpossibleTitle: "修复计划含有不可能的 step：%s",
		msgPlanImpossibleFix:   "计划的预测不是一个 step 时间，因此其上的任何预算都不能通过（%s）：请把 profile 和计划报告给 npuprof 的维护者。",

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
		msgAnd3:                 "%s、%s 和 %s",
		msgChangeDispatcher:     "%s dispatcher；此 profile 运行的是 %s",
		msgChangeModel:          "%s；模型为 %s",
		msgChangeNothing:        "无可缩减：%s 测得为 0",
		msgChangeKernels:        "%s",
		msgChangeShrinks:        "；可缩减 %s",
		msgChangeNeedsOn:        "；需要开启 %s",
		msgNoChangesFit:         "其列出的变更都不适用于此 profile",
		msgPerStepSuffix:        "（每 step）",
	},
}

// msg is engine text id in the language of the evaluation.
func (st *state) msg(id int) string { return msg(st.in.Lang, id) }

// msg is engine text id in language l.
func msg(l string, id int) string {
	return engineMsgs[lang.Or(l)][id]
}
