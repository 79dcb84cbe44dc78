package main

import (
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/render"
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
{{wrappedFlagsZH . .LocalFlags}}{{end}}{{if .HasAvailableInheritedFlags}}

全局参数：
{{wrappedFlagsZH . .InheritedFlags}}{{end}}{{with .Long}}

说明：
{{wrapText $ .}}{{end}}{{if .HasAvailableSubCommands}}

运行 "{{.CommandPath}} [command] --help" 查看某个命令的详细说明。{{end}}
`

func init() {
	cobra.AddTemplateFunc("wrappedFlagsZH", func(c *cobra.Command, fs *pflag.FlagSet) string {
		s := zhDefault(strings.TrimRight(fs.FlagUsagesWrapped(widthOf(c)), "\n"))
		return wrapWide(s, widthOf(c))
	})
}

// reDefault is pflag's " (default VALUE)" suffix of a usage, the value
// possibly wrapped to the next line.
var reDefault = regexp.MustCompile(`\s+\(default\s+([^()]*)\)`)

// zhDefault puts pflag's "(default VALUE)" suffixes in Chinese:
// "（默认：VALUE）", the value as it was.
func zhDefault(s string) string {
	return reDefault.ReplaceAllStringFunc(s, func(m string) string {
		v := reDefault.FindStringSubmatch(m)[1]
		return "（默认：" + strings.Join(strings.Fields(v), " ") + "）"
	})
}

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

	// BEGIN the commands' descriptions, examples and flags
	// analyze LONG
	"Analyze reads a profile and prints what it measured.\n\nPATH is a trace_view.json file (only that file is measured; the rank folder\naround it, if any, still gives the rank and its groups), an\nASCEND_PROFILER_OUTPUT folder, one\n*_ascend_pt folder (text or db export), an msprof PROF_* folder (text or db\nexport), a profiler database (ascend_pytorch_profiler_*.db, msprof_*.db), or a\nfolder holding one of those per rank, in any mix (up to two levels down), or\nthe folder an 'npuprof export' wrote (read back without parsing JSON again;\nthe same numbers). Several export folders (PATH PATH..., a glob, or a\nfolder of them: one export per node) are merged from their node tables,\nwithout reading a device task. Any text input may be gzip- or zstd-compressed\n(trace_view.json.gz, kernel_details.csv.zst, ...). PATH may also be a\ndocument saved by --format json-full: it is rendered again as the profile\nwas (its findings stand; the rule flags are not applied again).\n\nRanks are parsed and analyzed in parallel, --workers at a time: a rank's\nparse is held only while it is analyzed, so memory grows with --workers;\nwhat a finished rank keeps for the cross-rank passes and the document (its\nresults and collective arrival times) grows with the rank count (see\n'npuprof docs performance'). Missing, duplicate (the newest folder is kept) and\nunknown ranks, and ranks with different step sets, are reported as notes,\nnever fatal. Nothing is ever written into PATH; -o writes where you say.\n\nOutputs: --format NAME is the output -o writes (text by default); --format\nNAME=FILE, repeatable, writes one more output to FILE in the same run\n(json, json-full, html, junit, sarif; --html FILE is --format html=FILE).\n\nPer rank it reports the time breakdown (computing, communication not\noverlapped, free), collectives by type and by group (tp/ep/dp, from\nparallel_group_info), MoeInitRouting* and the Cumsum kernels in the MoE routing\npath (and whether they ran on the AI CPU), EVENT_WAIT per stream, and the top\ncompute kernels. Across ranks it matches every collective, names the rank\nthat arrived last and how long the others waited, and names slow ranks\n(computing or free time a robust outlier: median and MAD over ranks). A\nmetric that cannot be measured from the files present is listed as\nunavailable with the reason, never reported as 0.\n\nExpert load: GroupedMatmul time and tokens per rank of the ep group give the\nEP-rank skew from the trace alone. Per-expert loads come from --experts PATH\n(MindIE {decode|prefill}_{rank}.csv dumps with model_gen_config.json and\n{stage}_global_deployment.json, a layer,expert,tokens CSV, or a vLLM-Ascend /\nvLLM log with expert-imbalance lines), or from dumps or a CSV placed inside\nPATH (in it or one folder below). See 'npuprof docs experts'.\n\n\nThen the rules run (built-in, plus --rules FILE): findings with the exact fix\nand the estimated saving come first, sorted by saving. --deploy FILE reads\nyour deployment script for facts (tp, expert parallel, FLASHCOMM1, capture\nsizes, max-num-seqs, env) and gives each finding a diff against it; --fact\nNAME=VALUE sets one (e.g. concurrency=25). Use 'npuprof check' to gate CI.": "analyze 读取一个 profile 并打印它测得的内容。\n\nPATH 可以是一个 trace_view.json 文件（只测量该文件；它所在的 rank 目录\n若存在，仍给出 rank 及其通信组）、一个 ASCEND_PROFILER_OUTPUT 目录、\n一个 *_ascend_pt 目录（text 或 db 导出）、一个 msprof PROF_* 目录\n（text 或 db 导出）、一个 profiler 数据库（ascend_pytorch_profiler_*.db、\nmsprof_*.db），或每个 rank 各放一个上述内容的目录，可任意混合（最多两层\n深），也可以是 'npuprof export' 写出的目录（读回时不再解析 JSON；数字\n相同）。多个导出目录（PATH PATH...、一个 glob，或包含它们的目录：每个\n节点一个导出）按其节点表合并，不读取任何设备任务。任何文本输入都可以\n用 gzip 或 zstd 压缩（trace_view.json.gz、kernel_details.csv.zst 等）。\nPATH 也可以是 --format json-full 保存的文档：它会像原 profile 一样再次\n渲染（其问题保持不变；规则相关参数不再应用）。\n\n各 rank 并行解析和分析，每次 --workers 个：一个 rank 的解析结果只在分析\n它时保留，所以内存随 --workers 增长；已完成的 rank 为跨 rank 分析和文档\n保留的内容（其结果和集合通信到达时间）随 rank 数增长（见\n'npuprof docs performance'）。缺失、重复（保留最新的目录）和未知的\nrank，以及 step 集合不同的 rank，都作为提示报告，从不致命。从不向 PATH\n中写入任何内容；-o 写到你指定的位置。\n\n输出：--format NAME 是 -o 写出的输出（默认 text）；--format NAME=FILE\n可重复，在同一次运行中把另一种输出写到 FILE（json、json-full、html、\njunit、sarif；--html FILE 即 --format html=FILE）。\n\n对每个 rank，它报告时间分解（计算、未被掩盖的通信、空闲）、按类型和按\n通信组（tp/ep/dp，取自 parallel_group_info）的集合通信、MoE 路由路径中\n的 MoeInitRouting* 和 Cumsum 算子（以及它们是否运行在 AI CPU 上）、每个\nstream 的 EVENT_WAIT，以及耗时最多的计算算子。跨 rank 时，它匹配每个\n集合通信，指出最后到达的 rank 以及其他 rank 等待了多久，并指出慢 rank\n（计算或空闲时间是稳健离群值：按各 rank 的中位数和 MAD）。无法从现有\n文件测量的指标列为不可用并给出原因，从不报告为 0。\n\n专家负载：ep 组中每个 rank 的 GroupedMatmul 时间和 token 数仅凭 trace\n就能给出 EP rank 间的倾斜。逐专家负载来自 --experts PATH（MindIE 的\n{decode|prefill}_{rank}.csv dump，附带 model_gen_config.json 和\n{stage}_global_deployment.json；一个 layer,expert,tokens CSV；或带有专家\n不均衡行的 vLLM-Ascend / vLLM 日志），或来自放在 PATH 中（其中或下一层\n目录）的 dump 或 CSV。见 'npuprof docs experts'。\n\n\n然后运行规则（内置规则，加上 --rules FILE）：带有确切修复和预计节省的\n问题排在最前，按节省排序。--deploy FILE 从你的部署脚本读取部署信息\n（tp、专家并行、FLASHCOMM1、capture sizes、max-num-seqs、环境变量），\n并为每个问题给出针对它的 diff；--fact NAME=VALUE 设置一项（例如\nconcurrency=25）。用 'npuprof check' 做 CI 门禁。",
	// analyze EXAMPLE
	"  # Summarize an 8-rank vLLM-Ascend capture\n  $ npuprof analyze ./profiles/\n\n  # The JSON document for tools and CI\n  $ npuprof analyze ./profiles/ --format json -o analysis.json\n\n  # The summary, the document with its detail and the HTML report in one run\n  $ npuprof analyze ./profiles/ --format json-full=run.json --format html=report.html\n\n  # A saved document (--format json-full) renders as the profile did\n  $ npuprof analyze run.json\n\n  # Also write the self-contained HTML report\n  $ npuprof analyze ./profiles/ --html report.html\n\n  # With MindIE expert-load dumps kept next to the profile\n  $ npuprof analyze ./profiles/ --experts ./expert_hotspot/\n\n  # With the serving context from vLLM's log and a bench result\n  $ npuprof analyze ./profiles/ --vllm-log server.log --vllm-bench bench.json\n\n  # Findings as a diff against the deployment script\n  $ npuprof analyze ./profiles/ --deploy serve.sh --fact concurrency=25\n\n  # One rank's text export only\n  $ npuprof analyze ./dp0_pp0_tp0_rank0_1234_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT": "  # 汇总一次 8 rank 的 vLLM-Ascend 采集\n  $ npuprof analyze ./profiles/\n\n  # 供工具和 CI 使用的 JSON 文档\n  $ npuprof analyze ./profiles/ --format json -o analysis.json\n\n  # 一次运行得到摘要、带 detail 的文档和 HTML 报告\n  $ npuprof analyze ./profiles/ --format json-full=run.json --format html=report.html\n\n  # 保存的文档（--format json-full）像原 profile 一样渲染\n  $ npuprof analyze run.json\n\n  # 同时写出自包含的 HTML 报告\n  $ npuprof analyze ./profiles/ --html report.html\n\n  # 使用放在 profile 旁边的 MindIE 专家负载 dump\n  $ npuprof analyze ./profiles/ --experts ./expert_hotspot/\n\n  # 使用 vLLM 日志中的服务上下文和一个 bench 结果\n  $ npuprof analyze ./profiles/ --vllm-log server.log --vllm-bench bench.json\n\n  # 问题以针对部署脚本的 diff 给出\n  $ npuprof analyze ./profiles/ --deploy serve.sh --fact concurrency=25\n\n  # 只分析一个 rank 的 text 导出\n  $ npuprof analyze ./dp0_pp0_tp0_rank0_1234_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT",
	// analyze FLAG debug
	"print per-pass timings on standard error": "在标准错误上打印每个 pass 的耗时",
	// analyze FLAG deploy
	"the deployment script (`FILE`: export lines and `vllm serve ...`): its facts are used (a value vLLM would refuse, e.g. an unknown cudagraph_mode, is a warning naming the line, and that fact stays unknown) and each finding carries a diff against it": "部署脚本（`FILE`：export 行和 vllm serve 命令）：使用其中的部署信息（vLLM 会拒绝的值，例如未知的 cudagraph_mode，会给出指明该行的警告，该项部署信息保持未知），每个问题都附带针对它的 diff",
	// analyze FLAG experts
	"per-expert load input: a `PATH` to MindIE dumps, a layer,expert,tokens CSV or a vLLM-Ascend log (default: dumps found inside the profile folder)": "逐专家负载输入：MindIE dump 的 `PATH`、一个 layer,expert,tokens CSV 或一个 vLLM-Ascend 日志（默认：profile 目录中找到的 dump）",
	// analyze FLAG fact
	"set or override a fact, `NAME=VALUE` (e.g. concurrency=25, vllm_ascend_version=v0.13.0rc2, cudagraph_mode=FULL_DECODE_ONLY: one of vLLM's NONE, PIECEWISE, FULL, FULL_DECODE_ONLY, FULL_AND_PIECEWISE); repeatable": "设置或覆盖一项部署信息，`NAME=VALUE`（例如 concurrency=25、vllm_ascend_version=v0.13.0rc2、cudagraph_mode=FULL_DECODE_ONLY：取 vLLM 的 NONE、PIECEWISE、FULL、FULL_DECODE_ONLY、FULL_AND_PIECEWISE 之一）；可重复",
	// analyze FLAG format
	"output format: text (a readable summary for terminals and CI logs); json (the npuprof.analysis/v1 document (stable keys, for tools and CI)); json-full (the document with its detail: what text and html show beyond json, so that the saved file renders as the profile does); html (the self-contained HTML report); junit (a JUnit XML report, one test case per rule); sarif (a SARIF 2.1.0 log, one result per finding); default text. `NAME[=FILE]`, repeatable: NAME=FILE writes one more output to FILE, NAME alone is the output -o names": "输出格式：text（供终端和 CI 日志阅读的摘要）；json（npuprof.analysis/v1 文档，键稳定，供工具和 CI 使用）；json-full（带 detail 的文档：text 和 html 比 json 多显示的内容，使保存的文件能像原 profile 一样渲染）；html（自包含的 HTML 报告）；junit（JUnit XML 报告，每条规则一个测试用例）；sarif（SARIF 2.1.0 日志，每个问题一个结果）；默认 text。`NAME[=FILE]`，可重复：NAME=FILE 把另一种输出写到 FILE，单独的 NAME 是 -o 指定的输出",
	// analyze FLAG html
	"also write the self-contained HTML report to `FILE` (see `npuprof report`; --format html=FILE)": "同时把自包含的 HTML 报告写到 `FILE`（见 npuprof report；即 --format html=FILE）",
	// analyze FLAG service
	"read MS Service Profiler's parse output (request.csv, batch.csv, kvcache.csv, forward.csv or profiler.db) from `DIR`: request latency, batches, DP load, KV cache (default: a service folder in the profile folder, up to two levels down)": "从 `DIR` 读取 MS Service Profiler 的解析输出（request.csv、batch.csv、kvcache.csv、forward.csv 或 profiler.db）：请求时延、批次、DP 负载、KV cache（默认：profile 目录中最多两层深的 service 目录）",
	// analyze FLAG vllm-bench
	"read the results of vllm bench serve from `FILE` (its printed summary or --save-result JSON): concurrency, output throughput, TTFT, TPOT": "从 `FILE` 读取 vllm bench serve 的结果（其打印的摘要或 --save-result JSON）：并发数、输出吞吐、TTFT、TPOT",
	// analyze FLAG vllm-log
	"read the serving context (throughput, running/waiting requests, KV-cache usage, prefix- and multimodal-cache hit rates) from vLLM's server log `FILE`; by default a *.log holding vLLM statistics lines in the profile folder (or one level down) is used": "从 vLLM 的服务日志 `FILE` 读取服务上下文（吞吐、运行/等待中的请求、KV cache 使用率、前缀缓存和多模态缓存命中率）；默认使用 profile 目录（或下一层）中含有 vLLM 统计行的 *.log",
	// END the commands' descriptions, examples and flags
}
