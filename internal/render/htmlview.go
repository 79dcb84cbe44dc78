package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/metric"
)

// The HTML view: everything the report template shows, built once from the
// results document. Every number that is a metric or a step field carries
// its exact JSON value (data-v), so tests and readers can check the page
// against `npuprof analyze --format json`. The view only selects, orders,
// formats and lays out; the few presentation derivations (shares) are
// named where they are made. Means of a layer position's occurrences
// (results.MoEDetail.Positions) and the mini timeline's downsampled boxes
// (results.TimelineSample) come from the analysis, which computes them
// while the model is alive, through the document's view.

// Caps that keep a report small (8 ranks × 94 layers × many steps stays
// well under 5 MB; ECharts itself is ~1.1 MB).
const (
	maxStepRowsTable   = 120                    // rows of the per-step table (all ranks)
	maxStepsChart      = 400                    // steps per rank in the per-step chart
	maxKernelRows      = 1500                   // rows of the top-kernels table
	maxWaitRows        = 24                     // rows of the longest-waits table
	maxWaitsPerRank    = 6                      // longest waits shown per rank
	maxLayerPositions  = metric.MoEMaxPositions // MoE layer positions in the per-layer charts
	maxTimelineRanks   = 16                     // ranks drawn in the mini timeline
	maxTimelineBoxes   = metric.SampleMaxBoxes  // boxes per rank in the mini timeline
	maxTextLen         = 300                    // op names and other trace text
	maxExpertHeatCells = 40000
)

// cell is one table cell. Metric cells carry the metric name, rank and the
// exact value (Raw) as data attributes.
type cell struct {
	Text   string
	Num    bool
	Rank   int
	Metric string // "" when not a metric cell
	Raw    string // exact value, strconv 'g' -1 (round-trips like JSON)
	Sort   string // sort key for non-metric numeric cells
	NA     string // unavailable: the reason
	Class  string
	// Sub are small secondary values shown under Text (pivot tables).
	Sub []cell
}

// pivot is a metric table with one row per key (collective type, group,
// stream) and one column per rank: compact for 8 ranks, scrolls for more.
type pivot struct {
	Corner string
	Cols   []string
	Rows   []pivotRow
}

type pivotRow struct {
	Label string
	Class string
	Cells iter.Seq[cell]
}

// rows are a table's rows, made one at a time while the page is written:
// the report of many ranks holds the row being written, not its tables'
// cells (a cell is ~150 bytes; 2048 ranks made ~20 MiB of them). A table
// without rows is nil, as the template's if reads it.
type rows = iter.Seq[[]cell]

// lazy is seq, or nil when it yields nothing (some is false).
func lazy[T any](some bool, seq iter.Seq[T]) iter.Seq[T] {
	if !some {
		return nil
	}
	return seq
}

type kv struct{ K, V string }

type htmlView struct {
	// l gives the fixed texts in the document's language; HTMLLang is
	// the page's lang attribute.
	l         labels
	HTMLLang  string
	Path      string
	Kind      string
	RankCount int
	// ManyRanks (above MaxRankRows ranks): the per-rank tables are
	// collapsed under their charts.
	ManyRanks      bool
	RankList       string
	Devices        string
	Levels         string
	TorchNPU       string
	CANN           string
	Version        string
	Revision       string
	EChartsVersion string
	EChartsNotice  string
	Cards          []kv
	Facts          []Fact
	Groups         []groupRow
	Env            []envRow
	Notes          []string

	Findings     []findingView
	FindingsNote string
	// RuleDocs are the explanations of the findings' rules (htmlrules.go).
	RuleDocs []*ruleDocView
	// Plan is the fix plan (nil when there is none to show).
	Plan       *planView
	DeployDiff []diffLine
	// DeployDiffCopy is the deploy diff as the Copy button copies it (copyText).
	DeployDiffCopy string

	Breakdown breakdownView
	Comm      commView
	MoE       moeView
	Wait      waitView
	Kernels   kernelsView
	Skew      skewView
	Experts   *expertView
	Service   *serviceView
	Timeline  timelineView

	Unmeasured []kv
	Problems   []string

	Charts []*chartPayload
}

type groupRow struct {
	Name, Size, Ranks, SeenOn string
}

type envRow struct {
	Name, Value, Ranks string
	Key                bool
}

type evidenceView struct {
	Metric, Value, Rank, Note string
	Raw                       string
	Partial                   string // "partial: rank 3 cut short", "" when whole
}

type findingView struct {
	Rule, Severity, SevClass, Title, Ranks, Saving, SavingRaw string
	Evidence                                                  []evidenceView
	Fix                                                       string
	// Docs is the rule's docs reference shown as text, when the report
	// has no explanation of the rule to link to (DocsID) and it is not an
	// absolute address (DocsURL).
	Docs, DocsID, DocsURL string
	// ID is the finding's element id; rule its rule id as the document has it.
	ID, rule string
	Diff     []diffLine
	// FixCopy and DiffCopy are what the Copy buttons put on the clipboard
	// (copyText): the finding's fix and diff byte for byte as the JSON
	// document holds them, while Fix and Diff are cleaned for display.
	FixCopy, DiffCopy string
	// DiffError says why the deployment script could not be edited,
	// CodePatchError why the --source tree could not be patched.
	DiffError, CodePatchError string
	// Predicted is the fix's predicted change ("" when none); Revisit
	// the what-if's word on a fix that gains only at a larger concurrency.
	Predicted, Revisit string
	// Partial is the finding's partial-input caveat ("" when its inputs
	// were whole); SavingUncertain marks a saving estimated from them.
	Partial         string
	SavingUncertain bool
}

type diffLine struct{ Text, Class string }

// copyText is s JSON-encoded for a Copy button's data-copy-text attribute:
// report.js puts JSON.parse of it on the clipboard, so the copied text is
// byte-identical to the JSON document's string (carriage returns of a CRLF
// deployment script, tabs and the last newline included; invalid UTF-8
// replaced as encoding/json replaces it in the document). The displayed
// <pre> is cleaned (cleanBlock) and cannot be copied as is: a CR in HTML
// text or in an attribute is read as a newline by every HTML parser.
func copyText(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return string(b)
}

func diffLines(d string) []diffLine {
	if strings.TrimSpace(d) == "" {
		return nil
	}
	var out []diffLine
	for _, l := range strings.Split(d, "\n") {
		c := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			c = "d-file"
		case strings.HasPrefix(l, "@@"):
			c = "d-hunk"
		case strings.HasPrefix(l, "+"):
			c = "d-add"
		case strings.HasPrefix(l, "-"):
			c = "d-del"
		}
		out = append(out, diffLine{Text: l, Class: c})
	}
	return out
}

type breakdownView struct {
	Rows      rows
	Chart     *chartPayload
	StepChart *chartPayload
	// LedgerChart is the step-time ledger, one stacked bar per step (nil:
	// no ledger).
	LedgerChart *chartPayload
	StepRows    [][]cell
	StepNote    string
	HaveSteps   bool
	// StepUnavailable: ranks whose per-step communication, overlap and
	// free are not measured, and why.
	StepUnavailable []kv
	StepSelect      []string
}

type commView struct {
	Unavailable []kv
	TypeChart   *chartPayload
	GroupChart  *chartPayload
	TypePivot   *pivot
	GroupPivot  *pivot
	PairRows    rows
	GroupNote   string
	Empty       bool
}

type moeView struct {
	Unavailable []kv
	None        bool
	Rows        rows
	Buckets     *chartPayload
	LayerChart  *chartPayload
	LayerHeat   *chartPayload
	GMMSkew     string
	LayerNote   string
}

type waitView struct {
	Unavailable []kv
	Chart       *chartPayload
	Streams     *pivot
	Longest     [][]cell
	LongestNote string
}

type kernelsView struct {
	Unavailable []kv
	Rows        rows
	Ranks       []string
	Note        string
}

type skewView struct {
	Chart *chartPayload
	Note  string
}

type expertView struct {
	Chart  *chartPayload
	Source string
	Note   string
	// Ranks is the per-EP-rank load bar chart (nil when no rank loads).
	Ranks     *chartPayload
	RanksNote string
	// Summary lines (imbalance, hot rank, predicted plan), already text.
	Summary []string
}

type timelineView struct {
	Charts []*chartPayload
	Note   string
	Legend []kv // class name -> color
}

func txt(s string) cell             { return cell{Text: s} }
func numc(s string, v float64) cell { return cell{Text: s, Num: true, Sort: raw(v)} }

// rankMetrics looks up one rank's metrics in the JSON document.
type rankMetrics struct {
	rank int
	m    map[string]float64
	na   map[string]string
}

func (r rankMetrics) get(metric string) (float64, bool) {
	v, ok := r.m[metric]
	return v, ok
}

// why returns the recorded reason a metric is unavailable, trying the
// metric itself, wildcard entries ("hccl.group.*") and the fallbacks.
func (r rankMetrics) why(metric string, fallback ...string) string {
	for _, k := range append([]string{metric}, fallback...) {
		if w, ok := r.na[k]; ok {
			return w
		}
	}
	for k, w := range r.na {
		if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(metric, p) {
			return w
		}
	}
	for k, w := range r.na {
		if strings.HasPrefix(k, "pass.") {
			return "analysis pass failed: " + w
		}
	}
	return "not measured"
}

func (r rankMetrics) cell(metric string, format func(float64) string, fallback ...string) cell {
	v, ok := r.m[metric]
	if !ok {
		return cell{Text: "unavailable", NA: cleanText(r.why(metric, fallback...), 0)}
	}
	return cell{Text: format(v), Num: true, Rank: r.rank, Metric: cleanText(metric, 0), Raw: raw(v)}
}

func (r rankMetrics) dur(metric string, fallback ...string) cell {
	return r.cell(metric, Dur, fallback...)
}

func (r rankMetrics) count(metric string, fallback ...string) cell {
	return r.cell(metric, intText, fallback...)
}

func rankLabel(rank int) string {
	if rank < 0 {
		return "rank ?"
	}
	return fmt.Sprintf("rank %d", rank)
}

func rankCell(rank int) cell {
	if rank < 0 {
		return cell{Text: "?", Num: true, Sort: "-1"}
	}
	return cell{Text: strconv.Itoa(rank), Num: true, Sort: strconv.Itoa(rank)}
}

// compactRanks prints 0,1,2,3,5 as "0–3, 5".
func compactRanks(rs []int) string {
	if len(rs) == 0 {
		return "–"
	}
	return joinRuns(rs, "–")
}

func distinct(vals []string) string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vals {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, cleanText(v, 80))
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "unknown"
	}
	return strings.Join(out, ", ")
}

// buildView assembles the HTML view from in.Doc.
func buildView(in htmlInput) *htmlView {
	doc := in.Doc
	v := &htmlView{
		l: labelsOf(doc), HTMLLang: "en",
		Path: cleanText(doc.Input.Path, 0), Kind: doc.Input.Kind,
		RankCount: len(doc.Ranks), ManyRanks: len(doc.Ranks) > MaxRankRows, Version: cleanText(in.Version, 40), EChartsVersion: EChartsVersion,
		EChartsNotice: echartsNotice,
	}
	if v.l.zh {
		v.HTMLLang = "zh-CN"
	}
	if t := doc.Tool; t != nil {
		v.Version, v.Revision = cleanText(t.Version, 80), cleanText(t.Revision, 80)
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	rms := make([]rankMetrics, len(doc.Ranks))
	var ranks []int
	var devices, levels, torch, cann []string
	for i, rd := range doc.Ranks {
		rms[i] = rankMetrics{rank: rd.Rank, m: rd.Metrics, na: rd.Unavailable}
		ranks = append(ranks, rd.Rank)
		if rd.Device != nil {
			devices = append(devices, fmt.Sprintf("%d", *rd.Device))
		}
		levels = append(levels, rd.ProfilerLevel)
		torch = append(torch, rd.TorchNPU)
		cann = append(cann, rd.CANN)
	}
	v.RankList = compactRanks(ranks)
	v.Devices = "unknown"
	if len(devices) > 0 {
		ds := make([]int, 0, len(devices))
		for _, d := range devices {
			n, _ := strconv.Atoi(d)
			ds = append(ds, n)
		}
		v.Devices = compactRanks(ds)
	}
	v.Levels, v.TorchNPU, v.CANN = distinct(levels), distinct(torch), distinct(cann)
	for _, n := range doc.Notes {
		v.Notes = append(v.Notes, cleanText(n, 0))
	}
	for _, w := range doc.Warnings {
		v.Notes = append(v.Notes, cleanText("warning: "+w, 0))
	}
	buildFacts(v, in)
	buildFindings(v, doc.Findings)
	buildRuleDocs(v, doc.Detail.RuleSet)
	buildPlan(v, doc.Plan)
	buildDeployDiff(v, doc.DeployDiff)
	buildBreakdown(v, doc, rms)
	buildComm(v, doc, rms)
	buildMoE(v, doc, rms)
	buildWait(v, doc, rms)
	buildKernels(v, doc, rms)
	buildSkew(v, rms)
	if in.Experts == nil {
		in.Experts = ExpertLoadsOf(doc)
	}
	if !in.Experts.empty() {
		v.Experts = buildExperts(v, in.Experts)
		buildExpertRanks(v, doc)
	}
	v.Service = buildService(v, doc.Service)
	buildTimeline(v, doc)
	buildUnmeasured(v, doc)

	v.Cards = headlineCards(doc, rms)
	for i := range v.Cards {
		v.Cards[i].K = v.l.t(v.Cards[i].K)
	}
	return v
}

// savingDur prints an estimated saving; "" when the rule gave none (the
// report says "no saving estimated", never "0.0µs").
func savingDur(us *float64) string {
	if us == nil {
		return ""
	}
	return Dur(*us)
}

// savingRaw is an estimated saving in µs for data-saving-us; "" when the
// rule gave none.
func savingRaw(us *float64) string {
	if us == nil {
		return ""
	}
	return raw(*us)
}

// headlineCards are the overview numbers: findings, and the spread over
// ranks (min–max) of the window and of the not-overlapped and free shares.
func headlineCards(doc *results.Document, rms []rankMetrics) []kv {
	fs := doc.Findings
	var cards []kv
	high := 0
	var best float64
	for _, f := range fs {
		if v, ok := f.Saving(); ok {
			best = max(best, v)
		}
		if f.Severity == results.SeverityHigh {
			high++
		}
	}
	fc := strconv.Itoa(len(fs))
	if high > 0 {
		fc += fmt.Sprintf(" (%d high)", high)
	}
	cards = append(cards, kv{"Findings", fc})
	if len(fs) > 0 {
		largest := "none estimated"
		if best > 0 {
			largest = Dur(best)
		}
		cards = append(cards, kv{"Largest est. saving", largest})
	}
	spread := func(label string, val func(r rankMetrics) (float64, bool), format func(float64) string) {
		lo, hi, n := math.Inf(1), math.Inf(-1), 0
		for _, r := range rms {
			if x, ok := val(r); ok {
				lo, hi, n = min(lo, x), max(hi, x), n+1
			}
		}
		switch {
		case n == 0:
			cards = append(cards, kv{label, "unavailable"})
		case format(lo) == format(hi):
			cards = append(cards, kv{label, format(lo)})
		default:
			cards = append(cards, kv{label, format(lo) + " – " + format(hi)})
		}
	}
	share := func(name string) func(r rankMetrics) (float64, bool) {
		return func(r rankMetrics) (float64, bool) {
			w, ok1 := r.get(metric.MetricDeviceWindowUs)
			x, ok2 := r.get(name)
			if !ok1 || !ok2 || w <= 0 {
				return 0, false
			}
			return x / w, true
		}
	}
	pctf := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	spread("Device window", func(r rankMetrics) (float64, bool) { return r.get(metric.MetricDeviceWindowUs) }, Dur)
	spread("Comm. not overlapped / window", share(metric.MetricCommNotOverlappedUs), pctf)
	spread("Free (idle) / window", share(metric.MetricFreeUs), pctf)
	steps := 0
	for i := range doc.Ranks {
		steps = max(steps, len(doc.Ranks[i].Steps))
	}
	if steps > 0 {
		cards = append(cards, kv{"Steps per rank", strconv.Itoa(steps)})
	}
	return cards
}

// buildFacts lists parallel groups (parallel_group_info) and env variables
// (profiler_metadata.json ENV_VARIABLES) over all ranks, plus in.Facts.
func buildFacts(v *htmlView, in htmlInput) {
	groups, env := factInputs(in.Doc)
	groupFacts(v, groups)
	groupRows(v, groups)
	envRows(v, env)
	// The serving context (vLLM log, bench result) follows the deployment facts.
	for _, f := range append(append([]Fact{}, in.Facts...), ServingFacts(in.Doc.Serving)...) {
		v.Facts = append(v.Facts, Fact{Name: cleanText(f.Name, 80), Value: cleanText(f.Value, maxTextLen), Source: cleanText(f.Source, maxTextLen)})
	}
}

// factGroup is one parallel group of profiler_metadata.json and the ranks
// whose metadata name it.
type factGroup struct {
	name, comm string
	size       int
	members    []int
	seen       []int
}

// factEnv is one environment variable's value and the ranks that have it.
type factEnv struct {
	name, value string
	ranks       []int
}

// factInputs gathers the ranks' parallel groups and environment, keyed by
// name and members (groups) or name and value (env).
func factInputs(doc *results.Document) (map[string]*factGroup, map[string]*factEnv) {
	groups := map[string]*factGroup{}
	env := map[string]*factEnv{}
	var key []byte
	for i := range doc.Ranks {
		rr := &doc.Ranks[i]
		for _, g := range rr.Detail.Groups {
			key = groupKey(key[:0], g.Name, g.GlobalRanks)
			e := groups[string(key)] // no copy: a group every rank names is one key, not one a rank
			if e == nil {
				e = &factGroup{name: g.Name, comm: g.Comm, size: len(g.GlobalRanks), members: g.GlobalRanks}
				groups[string(key)] = e
			}
			e.seen = append(e.seen, rr.Rank)
		}
		for k, val := range rr.Detail.Env {
			if val == "" {
				continue
			}
			key := k + "\x00" + val
			e := env[key]
			if e == nil {
				e = &factEnv{name: k, value: val}
				env[key] = e
			}
			e.ranks = append(e.ranks, rr.Rank)
		}
	}
	return groups, env
}

// groupKey appends a group's key to b: its name, NUL and its members as
// fmt.Sprint writes them ("[0 1 2]"), the order the group rows sort by.
func groupKey(b []byte, name string, members []int) []byte {
	b = append(append(b, name...), 0, '[')
	for i, r := range members {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(r), 10)
	}
	return append(b, ']')
}

// groupFacts turns the sizes of the well-known groups into facts.
func groupFacts(v *htmlView, groups map[string]*factGroup) {
	sizes := map[string]map[int]bool{}
	for _, g := range groups {
		n := strings.ToLower(g.name)
		if n == "tp" || n == "dp" || n == "ep" || n == "pp" {
			if sizes[n] == nil {
				sizes[n] = map[int]bool{}
			}
			sizes[n][g.size] = true
		}
	}
	for _, n := range []string{"tp", "dp", "ep", "pp"} {
		if len(sizes[n]) == 0 {
			continue
		}
		var ss []string
		for s := range sizes[n] {
			ss = append(ss, strconv.Itoa(s))
		}
		slices.Sort(ss)
		v.Facts = append(v.Facts, Fact{Name: strings.ToUpper(n) + " size", Value: strings.Join(ss, ", "),
			Source: "profiler_metadata.json parallel_group_info (group_name " + n + ", global_ranks)"})
	}
}

// groupRows lists the groups: one row per group name and size.
func groupRows(v *htmlView, groups map[string]*factGroup) {
	keys := slices.Sorted(maps.Keys(groups))
	// One row per group name and size: eight dp groups of one rank are one
	// row "8 groups", not eight.
	type row struct {
		name       string
		size, n    int
		members    []int
		seen       map[int]bool
		firstIndex int
	}
	var rows []*row
	byNameSize := map[string]*row{}
	for _, k := range keys {
		g := groups[k]
		rk := g.name + "\x00" + strconv.Itoa(g.size)
		r := byNameSize[rk]
		if r == nil {
			r = &row{name: g.name, size: g.size, members: g.members, seen: map[int]bool{}, firstIndex: len(rows)}
			byNameSize[rk] = r
			rows = append(rows, r)
		}
		r.n++
		for _, s := range g.seen {
			r.seen[s] = true
		}
	}
	for _, r := range rows {
		var seen []int
		for s := range r.seen {
			seen = append(seen, s)
		}
		members := cleanText(compactRanks(r.members), 200)
		if r.n > 1 {
			members = fmt.Sprintf("%d groups of %d", r.n, r.size)
		}
		v.Groups = append(v.Groups, groupRow{Name: cleanText(r.name, 60), Size: strconv.Itoa(r.size), Ranks: members, SeenOn: compactRanks(seen)})
	}
}

// envRows lists the environment, with FLASHCOMM1 as a fact.
func envRows(v *htmlView, env map[string]*factEnv) {
	ekeys := slices.Sorted(maps.Keys(env))
	for _, k := range ekeys {
		e := env[k]
		isKey := strings.Contains(e.name, "FLASHCOMM") || strings.HasPrefix(e.name, "VLLM") || strings.HasPrefix(e.name, "HCCL")
		v.Env = append(v.Env, envRow{Name: cleanText(e.name, 120), Value: cleanText(e.value, maxTextLen), Ranks: compactRanks(e.ranks), Key: isKey})
		if strings.Contains(e.name, "FLASHCOMM") && !strings.Contains(e.name, "FLASHCOMM2") {
			v.Facts = append(v.Facts, Fact{Name: "FLASHCOMM1", Value: cleanText(e.name+"="+e.value, 120),
				Source: "profiler_metadata.json ENV_VARIABLES (ranks " + compactRanks(e.ranks) + ")"})
		}
	}
}

func sevClass(s string) string {
	switch s {
	case results.SeverityHigh, results.SeverityMedium, results.SeverityLow, results.SeverityInfo:
		return "sev-" + s
	}
	return "sev-info"
}

// buildFindings orders findings by estimated saving (then severity, rule).
func buildFindings(v *htmlView, fs []results.Finding) {
	list := append([]results.Finding(nil), fs...)
	slices.SortStableFunc(list, func(a, b results.Finding) int {
		sa, _ := a.Saving() // no estimate orders as 0, as in the document
		sb, _ := b.Saving()
		return cmp.Or(cmp.Compare(sb, sa), cmp.Compare(results.SeverityRank(b.Severity), results.SeverityRank(a.Severity)), cmp.Compare(a.Rule, b.Rule))
	})
	for i, f := range list {
		fv := findingView{ID: fmt.Sprintf("finding-%d", i), rule: f.Rule, Rule: cleanText(f.Rule, 80), Severity: cleanText(strings.ToUpper(orDash(f.Severity)), 20), SevClass: sevClass(f.Severity),
			Title: cleanText(f.Title, 0), Ranks: compactRanks(f.Ranks), Saving: savingDur(f.SavingUs), SavingRaw: savingRaw(f.SavingUs),
			Fix: cleanBlock(f.Fix), Diff: diffLines(cleanBlock(f.Diff)), FixCopy: copyText(f.Fix), DiffCopy: copyText(f.Diff), DiffError: cleanText(f.DiffError, maxTextLen), CodePatchError: cleanText(f.CodePatchError, maxTextLen), Docs: cleanText(f.Docs, 0),
			Partial: cleanText(strings.TrimPrefix(PartialCaveat(&f), "partial input: "), 0), SavingUncertain: f.SavingUncertain}
		if len(f.Ranks) == 0 {
			fv.Ranks = "all"
		}
		if f.Predicted != nil {
			fv.Predicted = cleanText(predictedText(f.Predicted, v.l), 0)
		}
		fv.Revisit = cleanText(f.Revisit, 0)
		for _, e := range f.Evidence {
			ev := evidenceView{Metric: cleanText(e.Metric, 120), Raw: raw(e.Value), Note: cleanText(e.Note, maxTextLen)}
			switch strings.ToLower(e.Unit) {
			case "us", "µs":
				ev.Value = Dur(e.Value)
			case "ms":
				ev.Value = Dur(e.Value * 1000)
			case "", "count":
				if e.Value == math.Trunc(e.Value) && math.Abs(e.Value) < 1e15 {
					ev.Value = intText(e.Value)
				} else {
					ev.Value = strconv.FormatFloat(e.Value, 'g', 4, 64)
				}
			case "ratio", "share":
				ev.Value = fmt.Sprintf("%.1f%%", 100*e.Value)
			default:
				ev.Value = strconv.FormatFloat(e.Value, 'g', 4, 64) + " " + cleanText(e.Unit, 20)
			}
			if e.Rank != nil {
				ev.Rank = strconv.Itoa(*e.Rank)
			}
			if len(e.PartialRanks) > 0 {
				ev.Partial = "partial: rank " + rankList(e.PartialRanks) + " cut short"
			}
			fv.Evidence = append(fv.Evidence, ev)
		}
		v.Findings = append(v.Findings, fv)
	}
	if len(list) == 0 {
		v.FindingsNote = "No rule fired on this profile."
	}
}

// buildDeployDiff shows every fix as one diff against the --deploy script.
func buildDeployDiff(v *htmlView, d string) {
	v.DeployDiff = diffLines(cleanBlock(d))
	if v.DeployDiff != nil {
		v.DeployDiffCopy = copyText(d)
	}
}

func (v *htmlView) addChart(c *chartPayload) {
	if c != nil {
		v.l.localAxes(c)
		c.seal()
		v.Charts = append(v.Charts, c)
	}
}
