package main

import (
	"github.com/npuprof/npuprof/internal/lang"
	"sync"
)

// messageText is a message format of export or eplb plan in language l.
func messageText(l, format string) string {
	if z, ok := zhMessages()[format]; ok && l == lang.ZH {
		return z
	}
	return format
}

// exportText is one of export's messages in the locale's language.
func exportText(io *streams, format string) string { return messageText(lang.Or(io.lang), format) }

// zhMessages is the Chinese of the messages of export and of eplb plan's
// summary (printPlan).
var zhMessages = sync.OnceValue(func() map[string]string {
	return map[string]string{
		// export
		"exported %d/%d ranks (%s)": "已导出 %d/%d 个 rank（%s）",
		"exported %d rank(s) of %s to %s (%d tables, %s/<table>/rank=N/part-0.parquet; schema %s)\n": "已把 %[2]s 的 %[1]d 个 rank 导出到 %[3]s（%[4]d 张表，%[5]s/<table>/rank=N/part-0.parquet；schema %[6]s）\n",
		"exported %d rank(s) of %s to %s (%d node tables, %s/<table>/part-RUN.parquet; schema %s)\n": "已把 %[2]s 的 %[1]d 个 rank 导出到 %[3]s（%[4]d 张节点表，%[5]s/<table>/part-RUN.parquet；schema %[6]s）\n",
		"exported the service profile %s to %s/service_requests and %s/service_batches\n":            "已把服务化性能数据 %s 导出到 %s/service_requests 和 %s/service_batches\n",

		// eplb plan
		"EPLB plan for %s%s: %d MoE layers, %d experts, EP size %d, %d redundant -> %d slots per rank\n": "%s%s 的 EPLB 方案：%d 个 MoE 层，%d 个专家，EP 大小 %d，%d 个冗余 -> 每 rank %d 个槽位\n",
		"every layer has 0 tokens: nothing to balance\n":                                                 "每层都是 0 个 token：无需均衡\n",
		"predicted max/mean rank load\tbefore (%s)\tafter\n":                                             "预测的 rank 负载最大/均值\t之前（%s）\t之后\n",
		"  worst layer\t%.3f\t%.3f\n":                                                                    "  最差层\t%.3f\t%.3f\n",
		"  mean over layers\t%.3f\t%.3f\n":                                                               "  各层均值\t%.3f\t%.3f\n",
		"  slowest rank, all layers\t%s tokens\t%s tokens (%+.1f%%)\n":                                   "  最慢 rank，所有层\t%s 个 token\t%s 个 token（%+.1f%%）\n",
		"note: %s\n": "注意：%s\n",
		"note: input layers %d..%d are written as MoE layers 0..%d in order\n": "注意：输入的第 %d..%d 层按顺序写为 MoE 层 0..%d\n",
		"wrote %s: %d layers x %d ranks x %d slots (vLLM-Ascend expert map)\n": "已写出 %s：%d 层 x %d 个 rank x %d 个槽位（vLLM-Ascend 专家映射）\n",
		"serve with: --enable-expert-parallel --additional-config '%s'\n":      "启动服务时使用：--enable-expert-parallel --additional-config '%s'\n",
		"  (%s)\n": "  （%s）\n",
	}
})
