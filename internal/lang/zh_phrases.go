package lang

// zhPhrases is the Chinese phrase table (see phraseTable): the messages
// the analysis, the readers, the facts, the rules engine and the plan
// compose from data, keyed by their English exactly as written (verbs in
// order; a Chinese text that reorders them uses %[n]s). TestZHPhrases
// checks the verbs; the zh outputs' test (cmd/npuprof) that none of them
// stays English.
var zhPhrases = map[string]string{
	// inputs and readers
	"appended dumps in %d file(s) (%s)":                          "%d 个文件中有追加写入的 dump（%s）",
	"kept the last %d lines of each, dropped %d earlier line(s)": "每个文件保留最后 %d 行，丢弃了之前的 %d 行",
	"expert loads read from %s":                                  "专家负载读自 %s",
	"%d slice(s) belong to processes whose process_name metadata lies after byte %d, where the file is truncated; they could not be attributed": "%d 个 slice 属于 process_name 元数据位于第 %d 字节之后的进程，而文件在此处被截断；无法归属这些 slice",
	"%s is truncated":                           "%s 被截断",
	"it ends inside an event at byte %d":        "截断位置在第 %d 字节的一个事件中间",
	"analyzed the %d complete events before it": "分析了此前 %d 个完整事件",
	"%s is truncated at byte %d, before the HCCL process and thread metadata, so collectives cannot be identified": "%s 在第 %d 字节处被截断，早于 HCCL 进程和线程的元数据，因此无法识别集合通信",
	"%s has no kernel_details.csv":                                                      "%s 中没有 kernel_details.csv",
	"they are recorded in kernel_details.csv, which was not read":                       "它们记录在 kernel_details.csv 中，而该文件未被读取",
	"rank unknown (no profiler_info_{rank}.json, RANK_DEVICE_MAP or info.json rank_id)": "rank 未知（没有 profiler_info_{rank}.json、RANK_DEVICE_MAP 或 info.json 的 rank_id）",
	"reported as rank %d": "按 rank %d 报告",
	"no file of the rank names its device (a timeline's device id, a Device_id column, NPU:{id} in npu_module_mem.csv or memory_record.csv, PROF_*/device_{id}, RANK_DEVICE_MAP)": "该 rank 没有文件指明其设备（时间线的 device id、Device_id 列、npu_module_mem.csv 或 memory_record.csv 中的 NPU:{id}、PROF_*/device_{id}、RANK_DEVICE_MAP）",

	// unavailable metrics
	"metric %s unavailable":                                                   "指标 %s 不可用",
	"not measured on any rank":                                                "任何 rank 上都未测量",
	"no collective data":                                                      "没有集合通信数据",
	"no collective seen on two or more ranks":                                 "没有在两个或更多 rank 上出现的集合通信",
	"needs both compute kernels and collectives":                              "需要同时有计算算子和集合通信",
	"needs %s (compute kernels and collectives on the device timeline)":       "需要 %s（device 时间线上的计算算子和集合通信）",
	"needs at least 3 ranks to tell a slow rank from the others (have %d)":    "至少需要 3 个 rank 才能区分慢 rank（现有 %d 个）",
	"fewer than two MoE layers in the capture":                                "采集中的 MoE 层少于两个",
	"fewer than two decode steps":                                             "decode step 少于两个",
	"no ProfilerStep#N pair and no step boundary between MoE layers":          "没有成对的 ProfilerStep#N，MoE 层之间也没有 step 边界",
	"no ProfilerStep#N with device work (the capture has no torch_npu steps)": "没有带 device 工作的 ProfilerStep#N（采集中没有 torch_npu step）",
	"the timeline has no ProfilerStep#N ranges (profiled without torch_npu's schedule and prof.step(), or without the host (CPU) activity)":                                      "时间线上没有 ProfilerStep#N 区间（采集时没有使用 torch_npu 的 schedule 和 prof.step()，或没有采集 host（CPU）活动）",
	"no ProfilerStep#N and no decode-step boundaries (needs MoE layers with collectives and at least two decode steps) to tell the idle within steps from the idle between them": "没有 ProfilerStep#N，也没有 decode step 边界（需要带集合通信的 MoE 层和至少两个 decode step），无法区分 step 内的空闲和 step 之间的空闲",
	"%s left out": "%s 未计入",
	"the truncated trace ends before their device work does (the last kernel read starts at %s, before the step ends)":               "被截断的 trace 在其 device 工作结束之前就结束了（读到的最后一个算子开始于 %s，早于 step 结束）",
	"the truncated trace ends before their device work does (the last kernel or collective read starts at %s, before the step ends)": "被截断的 trace 在其 device 工作结束之前就结束了（读到的最后一个算子或集合通信开始于 %s，早于 step 结束）",
	"GroupedMatmul input shapes are not recorded":                                                                    "未记录 GroupedMatmul 的输入 shape",
	"attention kernels have no input shapes":                                                                         "attention 算子没有输入 shape",
	"no decode attention kernel (FusedInferAttentionScore, IncreFlashAttention, PagedAttention) in %s":               "%s 中没有 decode attention 算子（FusedInferAttentionScore、IncreFlashAttention、PagedAttention）",
	"a busy engine's ranks measured no %s":                                                                           "忙碌引擎的 rank 没有测到 %s",
	"no busy engine's rank measured %s":                                                                              "没有忙碌引擎的 rank 测到 %s",
	"no ep group in parallel_group_info (expert parallel off, or profiler_metadata.json missing)":                    "parallel_group_info 中没有 ep 组（专家并行关闭，或缺少 profiler_metadata.json）",
	"no ep group whose ranks ran MoE dispatch kernels (MoeDistributeDispatch*, DispatchFFNCombine, MoeTokenPermute)": "没有运行 MoE dispatch 算子（MoeDistributeDispatch*、DispatchFFNCombine、MoeTokenPermute）的 ep 组",
	"the AllGather dispatcher has none, or parallel_group_info has no ep group":                                      "AllGather dispatcher 不运行这些算子，或 parallel_group_info 中没有 ep 组",
	"no HCCL plane tasks in the profile (a Level1 trace_view.json records them on the HCCL process's Plane threads)": "profile 中没有 HCCL plane 任务（Level1 的 trace_view.json 把它们记录在 HCCL 进程的 Plane 线程上）",
	"no pipeline parallelism": "没有流水线并行",
	"no parallel_group_info pp group of more than one rank (or the ranks' pp groups disagree)": "parallel_group_info 中没有多于一个 rank 的 pp 组（或各 rank 的 pp 组不一致）",
	"no tp group in parallel_group_info (profiler_metadata.json)":                              "parallel_group_info（profiler_metadata.json）中没有 tp 组",
	"the engines (data-parallel replicas) cannot be told apart":                                "无法区分各引擎（数据并行副本）",
	"no per-expert loads":                     "没有逐专家的负载",
	"profiling data has no per-expert counts": "profiling 数据中没有逐专家的计数",
	"give --experts PATH (MindIE {decode|prefill}_{rank}.csv dumps or a layer,expert,tokens CSV) or put the dumps in the profile folder": "用 --experts PATH 给出（MindIE 的 {decode|prefill}_{rank}.csv dump，或 layer,expert,tokens 格式的 CSV），或把 dump 放进 profile 目录",

	// slow ranks
	"computing (kernel time) over the window is %s µs vs the median %s µs over ranks (%s, robust z %s)": "窗口内计算（算子时间）为 %s µs，各 rank 中位数为 %s µs（%s，稳健 z %s）",
	"arrived last at %d of %d collectives, peers waited %s µs for it":                                   "在 %d/%d 个集合通信中最后到达，其他 rank 共等待它 %s µs",

	// facts and workload
	"conflict: %s is %s in the profile (%s) but %s in %s (%s); the rules use %s, what ran": "冲突：%[1]s 在 profile 中为 %[2]s（%[3]s），但在 %[5]s 中为 %[4]s（%[6]s）；规则使用 %[7]s，即实际运行的值",
	"parallel_group_info group %s has %d ranks":                                            "parallel_group_info 中 %s 组有 %d 个 rank",
	"parallel_group_info has no ep group":                                                  "parallel_group_info 中没有 ep 组",
	"%d MoE layers opened by %s":                                                           "%d 个 MoE 层由 %s 开启",
	"vLLM worker folder name":                                                              "vLLM worker 目录名",
	"vLLM-Ascend custom ops":                                                               "vLLM-Ascend 自定义算子",
	"no sign of vLLM serving or of training in op names, environment variables or folder names": "算子名、环境变量和目录名中都没有 vLLM 服务或训练的迹象",
	"ranks analyzed":             "分析的 rank 数",
	"%s absent":                  "没有 %s",
	"fact %s unknown":            "部署信息 %s 未知",
	"give it with --fact %s=...": "用 --fact %s=... 给出",
	"it comes from":              "来源",
	"image tag %s":               "镜像标签 %s",
	"pip lines":                  "pip 行",

	"rank %d runs %d all-gather, %d reduce-scatter, %d all-reduce per MoE layer": "rank %d 每个 MoE 层运行 %d 次 all-gather、%d 次 reduce-scatter、%d 次 all-reduce",

	// check's verdict and its errors
	"%d finding(s)":                    "%d 个问题",
	"%d at or above %s":                "%d 个达到或高于 %s",
	"%d finding(s) at or above %s":     "%d 个问题达到或高于 %s",
	"%d of them from a truncated file": "其中 %d 个来自被截断的文件",
	"%d more from a truncated file, not gated: --partial-findings report": "另有 %d 个来自被截断的文件，未计入门禁：--partial-findings report",
	"%d budget(s) not evaluated":                                          "%d 个预算未评估",
	"no rank read whole":                                                  "没有完整读取的 rank",
	"no rank was read whole (all %d are partial: a file cut short or damaged), so the check cannot vouch for the capture": "没有完整读取的 rank（全部 %d 个都不完整：文件被截断或损坏），因此 check 无法为这次采集作保",
	"%s could not be evaluated":                   "%s 无法评估",
	"--allow-missing lets it pass":                "--allow-missing 可以让它通过",
	"%d of the %d ranks of the world are missing": "world 的 %[2]s 个 rank 中缺少 %[1]s 个",

	// a finding that read a truncated file (render.PartialCaveat)
	"partial input": "不完整输入",
	"%s measured over only the complete part of a file cut short": "%s 只在被截断文件的完整部分上测量",
	"used in %s": "用于 %s",
	"the saving is uncertain (neither a lower nor an upper bound)": "收益不确定（既不是下界也不是上界）",

	// rules
	"%s (rule applies to %s)": "%s（规则适用于 %s）",
	"workload %s":             "负载类型 %s",
	"condition not met":       "条件不满足",
	"a serving step's collectives depend on the layer before them; overlap needs another schedule (see comm-ep-flashcomm for the collectives one MoE layer runs)": "推理服务中一个 step 的集合通信依赖前一层的结果；要掩盖通信需要换一种调度（每个 MoE 层运行的集合通信见 comm-ep-flashcomm）",
	"needs the busy engines' main-stream compute (tp groups in parallel_group_info and the device timeline)":                                                      "需要忙碌引擎主 stream 上的计算（parallel_group_info 中的 tp 组和 device 时间线）",
	"the wait inside dispatch and combine needs two or more ranks of an ep group in the profile":                                                                  "dispatch 和 combine 内部的等待需要 profile 中同一 ep 组的两个或更多 rank",

	// the plan's bases and left-out reasons
	"not replayed (the fix has no replayable transform) and no saving estimate": "未重放（该修复没有可重放的变换），也没有收益估算",
	"nothing to bound it by":   "没有可用来界定它的量",
	"with %s (required) first": "先应用 %s（必需）",
	"gaps between a step's kernels set to %s (the documented default)":                                                            "step 内算子之间的间隙设为 %s（文档给出的默认值）",
	"the time between steps unchanged":                                                                                            "step 之间的时间不变",
	"collectives unchanged":                                                                                                       "集合通信不变",
	"%d kernels per rank and step rebatched from %d to %d tokens":                                                                 "每 rank 每 step 有 %d 个算子从 %d token 改按 %d token 计",
	"%d op(s) timed from the profile's own token counts (least squares)":                                                          "%d 个算子按 profile 自身的 token 数计时（最小二乘）",
	"%d from the per-op model (time ∝ 200 + tokens; matmuls ∝ 1000 + tokens)":                                                     "%d 个按单算子模型计时（时间 ∝ 200 + token 数；matmul ∝ 1000 + token 数）",
	"%d GroupedMatmul/SwiGlu per step at the EP group's mean token load (an ideal placement: an upper bound)":                     "每 step %d 个 GroupedMatmul/SwiGlu 按 EP 组的平均 token 负载计（理想放置：上界）",
	"%d GroupedMatmul/SwiGlu per step at the EP ranks' mean (no expert parallel: every rank computes every expert at 1/TP width)": "每 step %d 个 GroupedMatmul/SwiGlu 按 EP rank 的均值计（无专家并行：每个 rank 以 1/TP 宽度计算所有专家）",
	"%d all-gathers/reduce-scatters per rank and step become %d tp all-reduces of %s each (a tp reduce-scatter plus a tp all-gather of the same bytes: the profile has no tp all-reduce)": "每 rank 每 step 的 %d 次 all-gather/reduce-scatter 变为 %d 次 tp all-reduce，每次 %s（一次 tp reduce-scatter 加一次相同字节数的 tp all-gather：profile 中没有 tp all-reduce）",
	"kernels at %d tokens (one TP shard) back to %d":                                                    "%d token（一个 TP 分片）的算子恢复到 %d token",
	"removed %s Cumsum kernels after MoeInitRouting* per rank and step with the launch gap before each": "每 rank 每 step 去掉 MoeInitRouting* 之后的 %s 个 Cumsum 算子及各自之前的下发间隙",
}
