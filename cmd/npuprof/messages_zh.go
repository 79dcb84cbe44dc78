package main

import "github.com/npuprof/npuprof/internal/lang"

// exportText is one of export's messages in the locale's language.
func exportText(io *streams, format string) string {
	if z, ok := zhExport[format]; ok && lang.Or(io.lang) == lang.ZH {
		return z
	}
	return format
}

// zhExport is the Chinese of export's messages.
var zhExport = map[string]string{
	"exported %d/%d ranks (%s)": "已导出 %d/%d 个 rank（%s）",
	"exported %d rank(s) of %s to %s (%d tables, %s/<table>/rank=N/part-0.parquet; schema %s)\n": "已把 %[2]s 的 %[1]d 个 rank 导出到 %[3]s（%[4]d 张表，%[5]s/<table>/rank=N/part-0.parquet；schema %[6]s）\n",
	"exported %d rank(s) of %s to %s (%d node tables, %s/<table>/part-RUN.parquet; schema %s)\n": "已把 %[2]s 的 %[1]d 个 rank 导出到 %[3]s（%[4]d 张节点表，%[5]s/<table>/part-RUN.parquet；schema %[6]s）\n",
	"exported the service profile %s to %s/service_requests and %s/service_batches\n":            "已把服务化性能数据 %s 导出到 %s/service_requests 和 %s/service_batches\n",
}
