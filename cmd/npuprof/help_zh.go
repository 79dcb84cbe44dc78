package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/render"
)

// zhHelpTemplate is helpTemplate in Chinese.
const zhHelpTemplate = `用法：{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}

{{wrapText . .Short}}{{if .HasExample}}

示例：
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

可用命令：{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

参数：
{{wrappedFlags . .LocalFlags}}{{end}}{{if .HasAvailableInheritedFlags}}

全局参数：
{{wrappedFlags . .InheritedFlags}}{{end}}{{with .Long}}

说明：
{{wrapText $ .}}{{end}}{{if .HasAvailableSubCommands}}

运行 "{{.CommandPath}} [command] --help" 查看某个命令的详细说明。{{end}}
`

// localizeHelp puts the help of root and its commands in language l: the
// template, each command's summary and examples and every flag's usage
// that zhHelp has, and the exit codes; a text it lacks stays English
// (TestZHHelp lists what the root's help must have).
func localizeHelp(root *cobra.Command, l string) {
	if l != lang.ZH {
		return
	}
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	root.SetHelpTemplate(zhHelpTemplate)
	tr := func(s string) string {
		if z, ok := zhHelp[s]; ok {
			return z
		}
		return s
	}
	for _, c := range allCmds(root) {
		c.InitDefaultHelpFlag()
		c.Short, c.Example = tr(c.Short), tr(c.Example)
		if long, codes, ok := strings.Cut(c.Long, exitCodesHelp); ok && codes == "" {
			c.Long = tr(long) + zhExitCodesHelp
		} else {
			c.Long = tr(c.Long)
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			switch {
			case f.Name == "help":
				f.Usage = c.Name() + " 的帮助"
			case f.Name == "version" && c == root:
				f.Usage = "npuprof 的版本"
			default:
				f.Usage = tr(f.Usage)
			}
		})
	}
}

// wrapWide re-wraps the flag lines pflag could not (it breaks at spaces,
// and Chinese has none): a line wider than width columns (a Chinese
// character two) is cut at the last space or between two wide characters
// that fit, and continues at the usages' column.
func wrapWide(s string, width int) string {
	if !lang.HasHan(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	col := 0 // the usages' column: the indent of pflag's continuation lines
	for _, l := range lines {
		if n := len(l) - len(strings.TrimLeft(l, " ")); n > 8 && n > col {
			col = n
		}
	}
	var out []string
	for _, l := range lines {
		for render.DisplayWidth(l) > width {
			r := []rune(l)
			w, cut, lastBreak := 0, 0, 0
			for i, c := range r {
				w += render.DisplayWidth(string(c))
				if w > width {
					break
				}
				cut = i + 1
				if i+1 < len(r) && i+1 > col && (r[i+1] == ' ' || render.DisplayWidth(string(c)) == 2) {
					lastBreak = i + 1
				}
			}
			if lastBreak > 0 {
				cut = lastBreak
			}
			if cut <= col {
				break
			}
			out = append(out, strings.TrimRight(string(r[:cut]), " "))
			l = strings.Repeat(" ", col) + strings.TrimLeft(string(r[cut:]), " ")
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// zhExitCodesHelp is exitCodesHelp in Chinese.
const zhExitCodesHelp = `

退出码：
  0  正常
  2  用法或输入错误（参数错误，路径下没有 profile 或文件不可读）
  3  内部错误：某个分析 pass 或规则运行失败`

// zhHelp is the Chinese of the help's texts, keyed by the English exactly
// as the commands give it (a usage's ` + "`NAME`" + ` marks the value's name and
// stays).
var zhHelp = map[string]string{
	// the commands' summaries
	"Find where Ascend NPU inference time goes, and the exact fix":                                "找出昇腾 NPU 推理时间花在哪里，并给出确切的修复",
	"Measure communication, MoE routing, EVENT_WAIT and the time breakdown of a profile":          "测量 profile 的通信、MoE 路由、EVENT_WAIT 和时间分解",
	"Gate CI on a captured profile: exit 1 when findings reach --fail-on":                         "用采集的 profile 做 CI 门禁：问题达到 --fail-on 时退出码为 1",
	"Compare two profiles (or saved analyses): what changed, and did the fix do what it promised": "比较两个 profile（或保存的分析）：哪些变了，修复是否兑现了预测",
	"Expert-parallel load balancing: plan an expert placement from measured loads":                "专家并行负载均衡：根据实测负载规划专家放置",
	"Explain a rule: what it checks, the expression, thresholds, the fix, and why":                "解释一条规则：检查什么、表达式、阈值、修复方法和原因",
	"Generate the autocompletion script for bash":                                                 "生成 bash 的自动补全脚本",
	"Generate the autocompletion script for fish":                                                 "生成 fish 的自动补全脚本",
	"Generate the autocompletion script for powershell":                                           "生成 powershell 的自动补全脚本",
	"Generate the autocompletion script for the specified shell":                                  "生成指定 shell 的自动补全脚本",
	"Generate the autocompletion script for zsh":                                                  "生成 zsh 的自动补全脚本",
	"Help about any command":                                                              "任意命令的帮助",
	"List the built-in rules (and those of --rules files)":                                "列出内置规则（以及 --rules 文件中的规则）",
	"List the rules and explain what each checks":                                         "列出规则并解释每条检查什么",
	"Print npuprof's documentation, embedded in the binary":                               "打印内嵌在程序中的 npuprof 文档",
	"Print npuprof's version and the VCS revision it was built from":                      "打印 npuprof 的版本和构建所用的 VCS 修订",
	"Run rules on the cases of case files: given metrics and facts, the expected outcome": "在用例文件的用例上运行规则：给定指标和部署信息，检查预期结果",
	"Write a man page per command into DIR (make man)":                                    "为每个命令在 DIR 中写一个 man 手册页（make man）",
	"Write a vLLM-Ascend expert map that balances measured expert loads":                  "写出均衡实测专家负载的 vLLM-Ascend 专家映射",
	"Write the normalized model and metrics as Parquet tables, partitioned by rank":       "把规范化的模型和指标写成按 rank 分区的 Parquet 表",
	"Write the self-contained HTML findings report of a profile":                          "写出 profile 的自包含 HTML 问题报告",
	"disable completion descriptions":                                                     "不显示补全说明",

	// the root's description and examples
	`npuprof reads Huawei Ascend profiler output (torch_npu *_ascend_pt folders,
text or db export, and msprof PROF_* folders, one per rank) and measures what matters for MoE serving with vLLM-Ascend:
communication by collective type and group, the MoE routing Cumsum, EVENT_WAIT
per stream, the computing/communication/free breakdown, and the top kernels;
then rules name the fix (the flag, env var, config or code change) with the
measured numbers and the estimated saving.

Exit codes:
  0  ok
  1  check: findings at or above --fail-on
  2  usage or input error (bad flag, no profile at the path)
  3  internal error: an analysis pass or rule failed to run`: `npuprof 读取华为昇腾 profiler 的输出（torch_npu 的 *_ascend_pt 目录，
text 或 db 导出，以及 msprof 的 PROF_* 目录，每个 rank 一个），
测量 vLLM-Ascend MoE 服务中重要的内容：按集合通信类型和通信组的通信、
MoE 路由中的 Cumsum、每个 stream 的 EVENT_WAIT、计算/通信/空闲的
时间分解和耗时最多的算子；然后由规则给出修复（参数、环境变量、配置
或代码修改），附带实测数字和预计节省。

退出码：
  0  正常
  1  check：有问题达到或高于 --fail-on
  2  用法或输入错误（参数错误，路径下没有 profile）
  3  内部错误：某个分析 pass 或规则运行失败`,
	`  # The summary of a capture: one *_ascend_pt folder per rank, any depth up to two
  $ npuprof analyze ./profiles/ --deploy serve.sh

  # The HTML report, opening on the findings and their fixes
  $ npuprof report ./profiles/ --deploy serve.sh -o report.html

  # A CI gate with JUnit and SARIF reports (exit 1 on a high finding)
  $ npuprof check ./profiles/ --fail-on high --junit npuprof.xml --sarif npuprof.sarif`: `  # 一次采集的摘要：每个 rank 一个 *_ascend_pt 目录，最多两层深
  $ npuprof analyze ./profiles/ --deploy serve.sh

  # HTML 报告，首先展示问题及其修复
  $ npuprof report ./profiles/ --deploy serve.sh -o report.html

  # 带 JUnit 和 SARIF 报告的 CI 门禁（有 high 级问题时退出码为 1）
  $ npuprof check ./profiles/ --fail-on high --junit npuprof.xml --sarif npuprof.sarif`,

	// the flags several commands share
	"write the output to `FILE` instead of standard output":             "把输出写到 `FILE` 而不是标准输出",
	"no progress on standard error":                                     "不在标准错误上显示进度",
	"ranks parsed at once (0 = number of CPUs)":                         "同时解析的 rank 数（0 = CPU 数）",
	"ranks parsed at once (0 = number of CPUs); memory grows with this": "同时解析的 rank 数（0 = CPU 数）；内存随之增长",
	usageLang: "发现（规则标题、修复、依据说明）以及摘要和报告标签的语言：zh（或 cn）或 en（默认取自 locale：LC_ALL、LC_MESSAGES、LANG 中第一个已设置的；zh_* 为 zh）",
	"the language of the rules' explanations and fix templates: zh or en (default: from the locale, see analyze --help)": "规则说明和修复模板的语言：zh 或 en（默认取自 locale，见 analyze --help）",
	"also load the rules in `FILE`; repeatable":                                                                                                                                           "同时加载 `FILE` 中的规则；可重复",
	"also load the rules and budgets in `FILE` (YAML, see 'npuprof docs rules'); repeatable":                                                                                              "同时加载 `FILE` 中的规则和预算（YAML，见 'npuprof docs rules'）；可重复",
	"do not run the built-in rules (only those of --rules files)":                                                                                                                         "不运行内置规则（只运行 --rules 文件中的）",
	"do not run the rules (or budgets) `RULE[,RULE...]`: their status is disabled; repeatable":                                                                                            "不运行规则（或预算）`RULE[,RULE...]`：其状态为已禁用；可重复",
	"run only the rules `RULE[,RULE...]` (budgets still run); the others are disabled; repeatable":                                                                                        "只运行规则 `RULE[,RULE...]`（预算照常运行）；其余的禁用；可重复",
	"do not look for a vLLM log in the profile folder":                                                                                                                                    "不在 profile 目录中查找 vLLM 日志",
	"which MindIE dumps to read when both exist: decode (default) or prefill":                                                                                                             "两种都有时读取哪种 MindIE dump：decode（默认）或 prefill",
	"per-rank tables (--detail tables) above 16 ranks: summary (median, min, max and the outlier ranks) or all":                                                                           "超过 16 个 rank 时的逐 rank 表格（--detail tables）：summary（中位数、最小值、最大值和离群 rank）或 all",
	"per-step table (--detail tables): slowest (the 10 slowest steps, then mean, median, p90 and max) or all":                                                                             "逐 step 表格（--detail tables）：slowest（最慢的 10 个 step，然后是均值、中位数、p90 和最大值）或 all",
	"what the summary shows: summary (the plan, the findings' first lines, one line a section), tables (and each section's table) or all (and every fix and evidence whole)":              "摘要显示什么：summary（修复计划、问题的前几行、每部分一行）、tables（再加上每部分的表格）或 all（再加上完整的修复和依据）",
	"the vllm-ascend source (`DIR`: a checkout or the installed vllm_ascend package folder, only read): code fixes become unified diffs of its files":                                     "vllm-ascend 源码（`DIR`：一个 checkout 或已安装的 vllm_ascend 包目录，只读）：代码修复成为这些文件的统一 diff",
	"when the --deploy script starts several vllm serve commands, use the one on line `N` (any line it spans) for the facts and the diff (default: the last, with a warning naming each)": "当 --deploy 脚本启动多个 vllm serve 命令时，用第 `N` 行（该命令跨越的任意一行）上的那个来取部署信息和生成 diff（默认：最后一个，并给出列出每个命令的警告）",
}
