package main

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/render"
)

// zhHelpTemplate is helpTemplate in Chinese.
const zhHelpTemplate = `用法：{{if .Runnable}}
  {{zhUseLine .UseLine}}{{end}}{{if .HasAvailableSubCommands}}
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
		// unwrapped, then wrapped here: pflag counts a Chinese
		// character one column and breaks only at spaces
		s := zhDefault(strings.TrimRight(fs.FlagUsagesWrapped(0), "\n"))
		if col := usageColumn(s); col > 0 && col <= widthOf(c)-24 {
			return wrapAt(s, widthOf(c), col)
		}
		return wrapWide(zhDefault(strings.TrimRight(fs.FlagUsagesWrapped(widthOf(c)), "\n")), widthOf(c))
	})
	cobra.AddTemplateFunc("zhUseLine", func(s string) string { return strings.Replace(s, " [flags]", " [参数]", 1) })
}

// reDefault is pflag's " (default VALUE)" suffix of a usage, the value
// possibly wrapped to the next line.
var reDefault = lazyre.New(`\s+\(default\s+([^()]*)\)`)

// zhDefault puts pflag's "(default VALUE)" suffixes in Chinese:
// "（默认：VALUE）", the value as it was.
func zhDefault(s string) string {
	return reDefault().ReplaceAllStringFunc(s, func(m string) string {
		v := reDefault().FindStringSubmatch(m)[1]
		return "（默认：" + strings.Join(strings.Fields(v), " ") + "）"
	})
}

// localizeHelp puts the help of root and its commands in language l: the
// template, each command's summary and every flag's usage that zhHelp
// has, each command's description and examples that zhCommandHelp has,
// and the exit codes; a text they lack stays English (TestZHHelp lists
// what the root's help must have).
func localizeHelp(root *cobra.Command, l string) {
	if l != lang.ZH {
		return
	}
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	root.SetHelpTemplate(zhHelpTemplate)
	tr := func(s string) string {
		if z, ok := zhHelp()[s]; ok {
			return z
		}
		return s
	}
	for _, c := range allCmds(root) {
		c.InitDefaultHelpFlag()
		c.Short, c.Example = tr(c.Short), zhCommandText(c, helpExample, c.Example)
		if long, codes, ok := strings.Cut(c.Long, exitCodesHelp); ok && codes == "" {
			c.Long = zhCommandText(c, helpLong, long) + zhExitCodesHelp
		} else {
			c.Long = zhCommandText(c, helpLong, c.Long)
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

// usageColumn is the column the usages of pflag's unwrapped flag lines
// start at (the same on every line), 0 when s has none.
func usageColumn(s string) int {
	first, _, _ := strings.Cut(s, "\n")
	ind := len(first) - len(strings.TrimLeft(first, " "))
	gap := strings.Index(first[ind:], "  ")
	if gap < 0 {
		return 0
	}
	at := ind + gap
	return at + len(first[at:]) - len(strings.TrimLeft(first[at:], " "))
}

// wrapWide re-wraps the flag lines pflag could not (it breaks at spaces,
// and Chinese has none): a line wider than width columns (a Chinese
// character two) is cut at the last space or between two wide characters
// that fit, and continues at the usages' column.
func wrapWide(s string, width int) string {
	if !lang.HasHan(s) {
		return s
	}
	col := 0 // the usages' column: the indent of pflag's continuation lines
	for _, l := range strings.Split(s, "\n") {
		if n := len(l) - len(strings.TrimLeft(l, " ")); n > 8 && n > col {
			col = n
		}
	}
	return wrapAt(s, width, col)
}

// wrapAt wraps each line of s wider than width columns (a Chinese
// character two) at the last space or between two wide characters that
// fit, after column col; the rest continues at col.
func wrapAt(s string, width, col int) string {
	lines := strings.Split(s, "\n")
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
				wide := render.DisplayWidth(string(c)) == 2 && !strings.ContainsRune("（“", c) && !strings.ContainsRune("），。、；：”", r[min(i+1, len(r)-1)])
				if i+1 < len(r) && i+1 > col && (r[i+1] == ' ' || wide) {
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
// as the commands give it (a usage's `NAME` marks the value's name and
// stays).
var zhHelp = lang.CatalogOf(zhFiles, "zh/help.txt")

// A command's help text that zhCommandHelp translates: its description
// (Long, the exit codes apart) or its examples.
const (
	helpLong    = "Long"
	helpExample = "Example"
)

// helpKey names a command's help text: the command's path and the field.
type helpKey struct{ cmd, field string }

// zhHelpText is the Chinese of an English text with the English's
// fingerprint (helpPrint) when it was translated.
type zhHelpText struct{ print, zh string }

// helpPrint is the fingerprint of an English help text: the first 6 bytes
// of its SHA-256, in hex.
func helpPrint(en string) string {
	h := sha256.Sum256([]byte(en))
	return hex.EncodeToString(h[:6])
}

// zhCommandText is en, the help text field of c, in Chinese: the
// translation zhCommandHelp has for it when it was made from this very
// English, else en. An edit of the English changes its fingerprint, so its
// stale Chinese is dropped and TestZHHelpPrints names the text to
// translate again.
func zhCommandText(c *cobra.Command, field, en string) string {
	if z, ok := zhCommandHelp()[helpKey{c.CommandPath(), field}]; ok && z.print == helpPrint(en) {
		return z.zh
	}
	return en
}

// zhCommandHelp is the Chinese of the commands' descriptions and examples,
// by command path and field, each with the fingerprint of the English it
// translates (the English is the command's own, written once).
var zhCommandHelp = sync.OnceValue(func() map[helpKey]zhHelpText {
	return map[helpKey]zhHelpText{
		{"npuprof", helpLong}: {"c47a1a592d0b", `npuprof 读取华为昇腾 profiler 的输出（torch_npu 的 *_ascend_pt 目录，
text 或 db 导出，以及 msprof 的 PROF_* 目录，每个 rank 一个），
测量 vLLM-Ascend MoE 服务中重要的内容：按集合通信类型和通信组的通信、
MoE 路由中的 Cumsum、每个 stream 的 EVENT_WAIT、计算/通信/空闲的
时间分解和耗时最多的算子；然后由规则给出修复（参数、环境变量、配置
或代码修改），附带实测数字和预计节省。

退出码：
  0  正常
  1  check：有问题达到或高于 --fail-on
  2  用法或输入错误（参数错误，路径下没有 profile）
  3  内部错误：某个分析 pass 或规则运行失败`},
		{"npuprof", helpExample}: {"0bc8c90fa4b3", `  # 一次采集的摘要：每个 rank 一个 *_ascend_pt 目录，最多两层深
  $ npuprof analyze ./profiles/ --deploy serve.sh

  # HTML 报告，首先展示问题及其修复
  $ npuprof report ./profiles/ --deploy serve.sh -o report.html

  # 带 JUnit 和 SARIF 报告的 CI 门禁（有 high 级问题时退出码为 1）
  $ npuprof check ./profiles/ --fail-on high --junit npuprof.xml --sarif npuprof.sarif`},
		{"npuprof analyze", helpLong}: {"37dc2a2690c8", `analyze 读取一个 profile 并打印它测得的内容。

PATH 可以是一个 trace_view.json 文件（只测量该文件；它所在的 rank 目录
若存在，仍给出 rank 及其通信组）、一个 ASCEND_PROFILER_OUTPUT 目录、
一个 *_ascend_pt 目录（text 或 db 导出）、一个 msprof PROF_* 目录
（text 或 db 导出）、一个 profiler 数据库（ascend_pytorch_profiler_*.db、
msprof_*.db），或每个 rank 各放一个上述内容的目录，可任意混合（最多两层
深），也可以是 'npuprof export' 写出的目录（读回时不再解析 JSON；数字
相同）。多个导出目录（PATH PATH...、一个 glob，或包含它们的目录：每个
节点一个导出）按其节点表合并，不读取任何设备任务。任何文本输入都可以
用 gzip 或 zstd 压缩（trace_view.json.gz、kernel_details.csv.zst 等）。
PATH 也可以是 --format json-full 保存的文档：它会像原 profile 一样再次
渲染（其问题保持不变；规则相关参数不再应用）。

各 rank 并行解析和分析，每次 --workers 个：一个 rank 的解析结果只在分析
它时保留，所以内存随 --workers 增长；已完成的 rank 为跨 rank 分析和文档
保留的内容（其结果和集合通信到达时间）随 rank 数增长（见
'npuprof docs performance'）。缺失、重复（保留最新的目录）和未知的
rank，以及 step 集合不同的 rank，都作为提示报告，从不致命。从不向 PATH
中写入任何内容；-o 写到你指定的位置。

输出：--format NAME 是 -o 写出的输出（默认 text）；--format NAME=FILE
可重复，在同一次运行中把另一种输出写到 FILE（json、json-full、html、
junit、sarif；--html FILE 即 --format html=FILE）。

对每个 rank，它报告时间分解（计算、未被掩盖的通信、空闲）、按类型和按
通信组（tp/ep/dp，取自 parallel_group_info）的集合通信、MoE 路由路径中
的 MoeInitRouting* 和 Cumsum 算子（以及它们是否运行在 AI CPU 上）、每个
stream 的 EVENT_WAIT，以及耗时最多的计算算子。跨 rank 时，它匹配每个
集合通信，指出最后到达的 rank 以及其他 rank 等待了多久，并指出慢 rank
（计算或空闲时间是稳健离群值：按各 rank 的中位数和 MAD）。无法从现有
文件测量的指标列为不可用并给出原因，从不报告为 0。

专家负载：ep 组中每个 rank 的 GroupedMatmul 时间和 token 数仅凭 trace
就能给出 EP rank 间的倾斜。逐专家负载来自 --experts PATH（MindIE 的
{decode|prefill}_{rank}.csv dump，附带 model_gen_config.json 和
{stage}_global_deployment.json；一个 layer,expert,tokens CSV；或带有专家
不均衡行的 vLLM-Ascend / vLLM 日志），或来自放在 PATH 中（其中或下一层
目录）的 dump 或 CSV。见 'npuprof docs experts'。


然后运行规则（内置规则，加上 --rules FILE）：带有确切修复和预计节省的
问题排在最前，按节省排序。--deploy FILE 从你的部署脚本读取部署信息
（tp、专家并行、FLASHCOMM1、capture sizes、max-num-seqs、环境变量），
并为每个问题给出针对它的 diff；--fact NAME=VALUE 设置一项（例如
concurrency=25）。用 'npuprof check' 做 CI 门禁。`},
		{"npuprof analyze", helpExample}: {"e5faf6fda6b2", `  # 汇总一次 8 rank 的 vLLM-Ascend 采集
  $ npuprof analyze ./profiles/

  # 供工具和 CI 使用的 JSON 文档
  $ npuprof analyze ./profiles/ --format json -o analysis.json

  # 一次运行得到摘要、带 detail 的文档和 HTML 报告
  $ npuprof analyze ./profiles/ --format json-full=run.json --format html=report.html

  # 保存的文档（--format json-full）像原 profile 一样渲染
  $ npuprof analyze run.json

  # 同时写出自包含的 HTML 报告
  $ npuprof analyze ./profiles/ --html report.html

  # 使用放在 profile 旁边的 MindIE 专家负载 dump
  $ npuprof analyze ./profiles/ --experts ./expert_hotspot/

  # 使用 vLLM 日志中的服务上下文和一个 bench 结果
  $ npuprof analyze ./profiles/ --vllm-log server.log --vllm-bench bench.json

  # 问题以针对部署脚本的 diff 给出
  $ npuprof analyze ./profiles/ --deploy serve.sh --fact concurrency=25

  # 只分析一个 rank 的 text 导出
  $ npuprof analyze ./dp0_pp0_tp0_rank0_1234_20260101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT`},
		{"npuprof check", helpLong}: {"54eeb1a6cd25", `check 像 analyze 一样分析 profile，运行规则（内置规则、--rules 文件，以及
针对 --baseline 文档的预算），并以 CI 流水线可用于门禁的退出码退出：

  0  没有达到或高于 --fail-on 的问题
  1  有达到或高于 --fail-on 的问题（或者，使用 --require-all-ranks 时，
     profile 声明的 world 中有 rank 缺失）
  2  用法或输入错误（参数错误、规则文件不可读、没有 profile）
  3  某个分析 pass 或规则运行失败（会显示，从不跳过）

输入不在 profile 中的规则为“未评估”并给出原因；它不会使检查失败。

读取了被截断文件指标的问题（trace_view.json 或 kernel_details.csv 被
截断：该 rank 为 PARTIAL）会在每种输出中说明：哪个 rank、哪些指标、它们
是否决定了该问题（when）或其节省，以及其节省因此不确定。默认
（--partial-findings gate）它像其他问题一样参与门禁。使用
--partial-findings report 时它仍会显示，但不会使检查失败（JUnit：
system-out，不算失败；SARIF：level 为 note）：用于你知道被截断的采集，
而不是用来掩盖性能回退。--baseline 文档中有 rank 被截断的预算也是这样的
问题（其说明写作 "baseline rank N"）。见 'npuprof docs rules' 的
“Partial inputs”一节。

--junit 和 --sarif 为 CI 系统写出报告（每条规则一个测试用例 / 结果；
等同于 --format junit=FILE、--format sarif=FILE）；--format json 打印
带有问题和每条规则结果的 npuprof.analysis/v1 文档。--format 可重复：
NAME=FILE 再写出一种输出。

预算与保存的文档比较：规则文件的 "budgets:" 列表，或 --budget，例如
'hccl.allgather.time_us <= baseline * 1.05'，其中 baseline 是 --baseline
文件中同一指标（各 rank 的均值）。`},
		{"npuprof check", helpExample}: {"290ba017e591", `  # 有 high 级问题时使流水线失败
  $ npuprof check ./profiles/ --fail-on high --junit npuprof.xml

  # 带部署脚本：问题附带针对它的 diff
  $ npuprof check ./profiles/ --deploy serve.sh --fact concurrency=25 --sarif npuprof.sarif

  # 可能被截断的采集：报告其问题，只对完整输入做门禁
  $ npuprof check ./profiles/ --fail-on medium --partial-findings report

  # 以保存的分析为基线防止性能回退
  $ npuprof check ./profiles/ --baseline main.json --budget 'hccl.allgather.time_us <= baseline * 1.05'`},
		{"npuprof completion", helpLong}: {"c3486314877a", `为指定的 shell 生成 npuprof 的自动补全脚本。
生成的脚本如何使用，见各子命令的帮助。
`},
		{"npuprof completion bash", helpLong}: {"cbd82d751204", `为 bash 生成自动补全脚本。

该脚本依赖 'bash-completion' 软件包。
如果尚未安装，可以用操作系统的包管理器安装。

在当前 shell 会话中加载补全：

	source <(npuprof completion bash)

为以后每个新会话加载补全，执行一次：

#### Linux：

	npuprof completion bash > /etc/bash_completion.d/npuprof

#### macOS：

	npuprof completion bash > $(brew --prefix)/etc/bash_completion.d/npuprof

需要启动一个新的 shell 才能使设置生效。
`},
		{"npuprof completion fish", helpLong}: {"3e4c6a8e25e6", `为 fish 生成自动补全脚本。

在当前 shell 会话中加载补全：

	npuprof completion fish | source

为以后每个新会话加载补全，执行一次：

	npuprof completion fish > ~/.config/fish/completions/npuprof.fish

需要启动一个新的 shell 才能使设置生效。
`},
		{"npuprof completion powershell", helpLong}: {"7acc166887a7", `为 powershell 生成自动补全脚本。

在当前 shell 会话中加载补全：

	npuprof completion powershell | Out-String | Invoke-Expression

为以后每个新会话加载补全，把上面命令的输出加入你的 powershell profile。
`},
		{"npuprof completion zsh", helpLong}: {"72aa180e2869", `为 zsh 生成自动补全脚本。

如果你的环境中尚未启用 shell 补全，需要先启用它。可以执行一次：

	echo "autoload -U compinit; compinit" >> ~/.zshrc

在当前 shell 会话中加载补全：

	source <(npuprof completion zsh)

为以后每个新会话加载补全，执行一次：

#### Linux：

	npuprof completion zsh > "${fpath[1]}/_npuprof"

#### macOS：

	npuprof completion zsh > $(brew --prefix)/share/zsh/site-functions/_npuprof

需要启动一个新的 shell 才能使设置生效。
`},
		{"npuprof diff", helpLong}: {"a777ab9f32e9", `diff 比较同一负载的两次采集，即某项修改之前和之后。BEFORE 和 AFTER
各是一个 profile（analyze 能读的任何 PATH）或由
npuprof analyze --format json 保存的 JSON 文档。

它显示每 step 时间（所有 rank 所有 step 的均值）；已解决、新增或仍存在的
问题，以及每个已解决问题的预测节省（规则的 saving_us）与该规则所估计
指标的实测下降的对比；修改前一侧为每个已解决的修复及其计划预测的 decode
step 时间变化与实测值的对比（一起解决的修复一起测量：每个都列出其他的，
计划那一行说明其哪些步骤已应用，是对比的依据）；出现或消失的按类型和
通信组的集合通信；每 step 时间变化最大的计算算子（按算子类型和名称
匹配）；服务上下文（vLLM 日志、bench 结果）；每个 rank 的时间分解；以及
每个变化了的指标（各 rank 的均值，绝对值和 %）。每 step 的数字除以各侧的
step 数（ProfilerStep#N，否则 decode.steps.count），所以长度不同的采集
也能公平比较。

在被截断的文件上测量的一侧（profiler 未写完的 trace_view.json 或
kernel_details.csv：analyze 把该 rank 标为 partial）会显示，从不隐藏，
也从不当作精确值：diff 开头为每个被截断的 rank 给出一行（以 "!" 开头，
写明哪一侧、哪个 rank、哪个文件被截断），读取了其中某个值的每一行末尾带有
[partial: after rank 3]：step 均值、指标（有任一 rank 被截断时的跨 rank
指标）、集合通信、算子、问题（它读取了被截断的文件，其预测节省不确定，
其实测节省或已解决/新增状态依赖于它）。这样的变化可能来自截断，而非来自
两次运行：被截断的 AFTER 看起来更快，被截断的 BEFORE 使 AFTER 看起来更慢。
JSON 给出相同信息（before/after.partial[]，每行的 partial[]；见
'npuprof docs diff' 中关于被截断文件的 diff 一节），HTML 增加一列
“Partial input”。

diff 不做门禁：无论变化如何都以 0 退出（用法错误为 2，分析 pass 或规则
失败为 3）。要对变化做门禁，使用 npuprof check --baseline OLD.json
--budget '...'：从被截断的基线或采集读取的预算是 partial 问题，默认使
检查失败，只有使用 --partial-findings report 时才仅作显示。`},
		{"npuprof diff", helpExample}: {"9ca4406ac413", `  # 关闭 FLASHCOMM1 和专家并行之前与之后
  $ npuprof diff ./before/ ./after/

  # 以保存的基线对比新的采集，输出供工具使用的 JSON
  $ npuprof analyze ./before/ --format json -o before.json
  $ npuprof diff before.json ./after/ --format json -o diff.json

  # 自包含的 HTML diff
  $ npuprof diff before.json after.json --html diff.html`},
		{"npuprof docs", helpLong}: {"a5d994ae9868", `docs 打印 npuprof 文档的一页（Markdown，与仓库 docs/ 目录中的相同，帮助和
输出以 'npuprof docs TOPIC' 引用）。不带 TOPIC 时列出所有主题。`},
		{"npuprof eplb plan", helpLong}: {"9b5bc79962f7", `plan 读取逐专家的 token 负载，按 vLLM-Ascend 的 expert-map JSON 格式写出
专家放置（即 eplb_config.expert_map_path 加载的文件，与
expert_map_record_path 以及 MindIE 的 {stage}_global_deployment.json 格式
相同），并打印放置前后预测的 rank 负载最大值/均值。

--experts 是 MindIE dump 的目录（{decode|prefill}_{rank}.csv，附带
model_gen_config.json 和 {stage}_global_deployment.json）、一个 dump，或一个
layer,expert,tokens CSV（'npuprof docs experts'）。方案对每个 MoE 层：把
--redundant 个额外槽位分给每个副本 token 最多的专家，然后从最大的副本开始，
放到负载最小、有空槽位且没有该专家副本的 rank 上，再在能降低最忙 rank 负载
时交换副本（'npuprof docs eplb'）。每个专家至少放置一次，每个 rank 得到
(专家数 + 冗余数) / EP 大小 个槽位，没有 rank 持有同一专家两次。

“放置前”是与 dump 一起读到的专家映射（当它有 --ep-size 个 rank 时），否则
为 vLLM 默认的不带冗余专家的连续切分。预测把一个专家的 token 平均分到其
各副本上，与 vLLM-Ascend 的 EPLB worker 相同。方案写到 -o（为 "-" 时写到
标准输出）；摘要写到标准输出，方案写到标准输出时摘要写到标准错误。

启动服务的那一行采用 --vllm-ascend-version 所对应的形式：v0.13.0rc1 及以前
为顶层的 expert_map_path，从 v0.13.0rc2（#5533）起为
eplb_config.expert_map_path；不指定时给出最新的形式和另一种。--moe-layers
用模型检查映射：层数多于模型的 MoE 层数会被拒绝（对超出 moe_layer_count 的
层 id，vLLM-Ascend 的加载器会报 "Invalid EPLB Table"），层数较少则给出提示。`},
		{"npuprof eplb plan", helpExample}: {"042ed166b230", `  # 根据 MindIE dump 规划，每个 rank 一个冗余专家
  $ npuprof eplb plan --experts ./expert_hotspot/ -o expert_map.json

  # 根据 layer,expert,tokens CSV，16 个 EP rank，16 个冗余槽位
  $ npuprof eplb plan --experts moe_load.csv --ep-size 16 --redundant 16 -o expert_map.json

  # 用于 vLLM-Ascend v0.13.0rc1 部署 Qwen3-235B-A22B（94 个 MoE 层）
  $ npuprof eplb plan --experts moe_load.csv --ep-size 16 --vllm-ascend-version v0.13.0rc1 --moe-layers 94 -o expert_map.json

  # 然后用该方案启动服务（vLLM-Ascend 静态 EPLB；v0.13.0rc2 及以后）
  $ vllm serve Qwen/Qwen3-235B-A22B --enable-expert-parallel \
      --additional-config '{"eplb_config": {"expert_map_path": "/abs/path/expert_map.json"}}'
  # （v0.13.0rc1 及以前：
  #   --additional-config '{"expert_map_path": "/abs/path/expert_map.json"}'）`},
		{"npuprof export", helpLong}: {"95f51f9804b7", `export 读取一个 profile（analyze 接受的任何 PATH），把 npuprof 解析和测量
的内容写成 Parquet，每个表和 rank 一个文件，Hive 风格：

  OUTDIR/device_tasks/rank=3/part-0.parquet   每个设备任务
  OUTDIR/hccl_ops/rank=3/part-0.parquet       HCCL 大算子（类型、通信组）
  OUTDIR/framework_ops/rank=3/part-0.parquet  host 侧 torch 算子
  OUTDIR/steps/rank=3/part-0.parquet          ProfilerStep#N 及其时间分解
  OUTDIR/metrics/rank=3/part-0.parquet        JSON 文档的每个指标
  以及 links、comm_ops、step_trace、ranks（见 'npuprof docs parquet'，格式
  npuprof.parquet/v2）；有 service profile 时（--service DIR，或 profile
  目录中的 service 目录），还有 service_requests、service_batches、
  service_batch_dp、service_kvcache 和 service_forwards（各一个
  part-0.parquet），'npuprof analyze OUTDIR' 会读回它们。

此外，每次导出还写一次节点表：跨 rank 分析需要的每个已导出 rank 的内容
（rank_state、rank_metrics）及它们所在的并行通信组（groups），各一个文件
（OUTDIR/rank_state/part-RUN.parquet）。'npuprof analyze' 只凭这些就能
合并多个导出（不读取任何设备任务）：在每个节点上导出，复制节点表
（--summary-only 只写这些），然后运行 'npuprof analyze node*.pq'。

每个 rank 的目录按给出的形式记录（PATH 可以是相对路径），再基于当前目录
转为绝对路径，并附上本机主机名，这样在任何地方运行
'npuprof analyze OUTDIR' 都能说出该 rank 来自哪里：其 rank 的 "path" 为
OUTDIR，"exported_from" 包含 path、abs_path 和 host。

一台机器放不下的集群，在采集的地方逐 rank 导出（每个节点一个导出，都写到
共享存储上的同一个 OUTDIR：各 rank 是独立的分区），再用 DuckDB、Spark 或
Trino 作为一个数据集查询。'npuprof analyze OUTDIR' 读回导出时不再解析
JSON，打印相同的数字。各 rank 并行解析，每个 rank 解析完就写出其表，所以
内存随 --workers 增长，而不随 rank 数增长。已导出 rank 的现有分区会被
替换；其他 rank 保留。`},
		{"npuprof export", helpExample}: {"014a14abb58e", `  # 导出一次 8 rank 的采集
  $ npuprof export ./profiles/ -o ./pq

  # 大集群按节点导出，写入同一个共享目录
  $ npuprof export /data/prof/node07/ -o /shared/run42.pq

  # 用 DuckDB 查询全部：每个 rank 和类型的 HCCL 时间
  $ duckdb -c "SELECT rank, type, sum(dur_ns)/1e3 AS time_us FROM read_parquet('pq/hccl_ops/*/*.parquet', hive_partitioning=true) GROUP BY ALL ORDER BY ALL"`},
		{"npuprof help", helpLong}: {"ca1d65551cad", `help 提供应用中任意命令的帮助。
输入 npuprof help [命令路径] 查看完整说明。`},
		{"npuprof man", helpLong}: {"db6665c949c2", `为每个命令在 DIR 中写一个 man 手册页（make man）。`},
		{"npuprof report", helpLong}: {"7de85864edd8", `report 读取一个 profile（与 analyze 相同的 PATH 形式，包括 analyze
--format json-full 保存的文档），写出一个 HTML 文件：问题及其修复；问题
所用的部署信息及其来源（profile 的并行通信组和环境、--deploy、--fact、
服务上下文）；每个 rank 和每个 step 的时间分解；按集合通信类型和通信组的
通信；MoE 路由和 Cumsum；每个 stream 的 EVENT_WAIT；可排序的耗时最多算子
表；rank 倾斜热力图；专家负载（--experts 或 PATH 中的 dump 给出逐专家负载
时，为 layer x expert 热力图和每个 EP rank 的负载）；以及每个 rank 一个
代表性 step 的迷你时间线。

该文件可离线使用：图表库（Apache ECharts）、样式和数据都内联在其中，不发出
任何网络请求。其数字与 npuprof analyze --format json 中的相同。不带 -o 时
HTML 写到标准输出，除非标准输出是终端（此时 report 拒绝执行：请给出
-o FILE，或用 -o - 表示标准输出）。npuprof analyze PATH --html FILE
写出同样的文件。

每个修复、问题的 diff 和全部修复的 diff 都有一个复制按钮。它按 JSON 文档
中保存的内容逐字节复制文本（fix、diff、deploy_diff）：针对 CRLF 部署脚本
的 diff 保留其回车符，所以 patch -p1 能把它应用到原样的文件上（页面显示的
diff 不带回车符）。`},
		{"npuprof report", helpExample}: {"a37b93f503f8", `  # 写出一次 8 rank 采集的报告
  $ npuprof report ./profiles/ -o report.html

  # 一次运行得到终端摘要和报告
  $ npuprof analyze ./profiles/ --html report.html

  # 通过管道输出到别处
  $ npuprof report ./rank0_ascend_pt -q > rank0.html`},
		{"npuprof rules", helpLong}: {"1c8be154c919", `规则把测量结果变成带有确切修复的问题。内置规则嵌入在 npuprof 中；
--rules FILE 加入你自己的规则（'npuprof docs rules'）。`},
		{"npuprof rules explain", helpLong}: {"a573a07b8ce7", `解释一条规则：检查什么、表达式、阈值、修复方法和原因。`},
		{"npuprof rules list", helpLong}:    {"47c636166a48", `列出内置规则（以及 --rules 文件中的规则）。`},
		{"npuprof rules test", helpLong}: {"96eb32a1c20c", `每个用例文件指定一条规则并给出用例：每个 rank 和集群的指标、部署信息，
以及预期结果（fired 或 clear、严重级别、节省、rank）。有用例失败时退出码
为 1（'npuprof docs rules' 的“Testing a rule”一节）。`},
		{"npuprof version", helpLong}: {"d0964cfbd3e2", `version 打印 npuprof 的模块版本和构建该程序所用的 VCS 修订（make build
会写入修订；否则为 "revision unknown"）。每种输出（JSON 文档、HTML 报告、
JUnit、SARIF）也会写明它们。`},
	}
})
