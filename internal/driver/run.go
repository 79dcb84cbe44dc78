// Package driver runs one npuprof command from a request to its
// finished document: a Request in (analyze's, check's, report's), the
// results document and the gate's verdict out; diff's two sides compared
// (Diff); the rule set described (ListRules, ExplainRule) and an expert
// placement planned (PlanEPLB). cmd/npuprof reads flags into a request,
// calls the driver and writes the outputs; it imports none of the rules,
// the plan, the deployment reader or the document builder.
package driver

// The run of analyze, check and report (Run), in this order: the load and
// the passes, the serving context, the rules and the baseline, the
// deployment facts, the evaluation, the plan and its budgets, the one
// fix-application step (script diffs and code patches, after the plan),
// the document, check's refusals and verdict, the baseline comparison and
// the list of what failed to run (exit 3).

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/npuprof/npuprof/internal/infile"
	"github.com/npuprof/npuprof/internal/inputs/vllmserve"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/codepatch"
	"github.com/npuprof/npuprof/internal/compare"
	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/fix"
	"github.com/npuprof/npuprof/internal/pipeline"
	"github.com/npuprof/npuprof/internal/plan"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/results/diff"
	"github.com/npuprof/npuprof/internal/results/metric"
	"github.com/npuprof/npuprof/internal/rules"
)

// Request is one run: the profile and how it is read, its serving
// context, the rules and the deployment they judge, the baseline and the
// gate. The zero values are analyze's defaults.
type Request struct {
	Path string
	// Load is how the ranks are read (workers, expert-load input,
	// progress); Analyze's options. Loading, when set, is called before the
	// profile is read (to draw its progress: it may set the options'
	// Progress and BytesRead) and returns what to call once it is.
	Load    pipeline.Options
	Loading func(*pipeline.Options) (done func())
	Serving vllmserve.Inputs
	Rules   RuleSelection
	// Budgets are check's --budget texts, added to the rule set.
	Budgets []string
	// Deploy is the deployment script (--deploy) and the line of the
	// `vllm serve` command to read (--deploy-line, 0: the last).
	Deploy     string
	DeployLine int
	// Facts are --fact NAME=VALUE settings.
	Facts []string
	// Source is the vllm-ascend source tree (--source) code fixes patch.
	Source string
	// Lang is the language of the findings' texts ("" English).
	Lang string
	// Baseline is a saved document (check --baseline) budgets compare
	// with; the run's document is compared with it too.
	Baseline string
	// Gate is check's (--fail-on, --partial-findings); nil for analyze
	// and report. A gated run refuses a profile with no device data and
	// a rule set of which nothing could be evaluated.
	Gate *results.Gate
	// Detail adds to the document what the terminal summary and the HTML
	// report show beyond the JSON contract (an output that reads it is
	// written).
	Detail bool

	script *deploy.Script // read by Check
}

// RuleSelection names the rule files and which rules run (--rules,
// --disable, --only, --no-builtin).
type RuleSelection struct {
	Files         []string
	Disable, Only []string
	NoBuiltin     bool
}

// Result is a finished run.
type Result struct {
	// Doc is the results document every output is written from.
	Doc *results.Document
	// Verdict is the gate's, nil without one.
	Verdict *results.Verdict
	// Baseline is the comparison with Request.Baseline (also in the
	// document as baseline_diff), nil without one.
	Baseline *diff.Result
	// Failed is the internal error naming the passes and rules that failed
	// to run (exit 3), nil when none did. The outputs are written first.
	Failed error

	res *analysis.Result
}

// Check refuses, before the profile is read, what the request's flags
// name wrongly: a --source that is no folder, a bad --deploy-line, a
// --deploy script that cannot be read or starts no vLLM, and --budget
// without --baseline.
func (r *Request) Check() error {
	if r.Source != "" {
		if st, err := os.Stat(r.Source); err != nil || !st.IsDir() {
			return usageErr("--source %s: not a folder (expected a vllm-ascend checkout or the vllm_ascend package folder)", r.Source)
		}
	}
	if needsBaseline(r.Budgets) && r.Baseline == "" {
		return usageErr("--budget needs --baseline OLD.json (the document to compare with)")
	}
	if r.script != nil {
		return nil
	}
	if r.DeployLine < 0 {
		return usageErr("--deploy-line %d: out of range: expected %s", r.DeployLine, "a line number of the --deploy script, 1 or more")
	}
	if r.Deploy == "" {
		if r.DeployLine != 0 {
			return usageErr("--deploy-line needs --deploy FILE (the script whose line it names)")
		}
		return nil
	}
	s, err := deploy.ReadFile(r.Deploy)
	if err != nil {
		return usageErr("--deploy: %v", err)
	}
	if s.Serve == nil {
		return usageErr("--deploy %s: no `vllm serve` command found (expected a shell script that starts vLLM)", r.Deploy)
	}
	if r.DeployLine != 0 {
		if err := s.Select(r.DeployLine); err != nil {
			return usageErr("--deploy-line: %v", err)
		}
	}
	r.script = s
	return nil
}

// Run runs req: the profile, its serving context, the rules and the
// baseline (read first under a gate), their evaluation and the rest (see
// the file comment). A saved document in place of the profile is read,
// not judged again (saved).
func Run(ctx context.Context, req *Request) (*Result, error) {
	var err error
	if err = req.Check(); err != nil {
		return nil, err
	}
	if st, err := os.Stat(req.Path); err == nil && st.Mode().IsRegular() && IsDocument(req.Path) {
		return saved(req)
	}
	var in *ruleInputs
	if req.Gate != nil {
		// check: a wrong rule file or baseline fails a CI job before the
		// profile is read
		if in, err = readRuleInputs(req); err != nil {
			return nil, err
		}
	}
	res, err := load(ctx, req.Path, req.Load, req.Loading)
	if err != nil {
		return nil, err
	}
	defer pipeline.TuneGCAfterLoad()()
	if err := loadServing(res, req.Path, req.Serving); err != nil {
		return nil, err
	}
	if in == nil {
		// analyze, report: read after the profile, so that the collection
		// that follows the load does not mark the rule set
		if in, err = readRuleInputs(req); err != nil {
			return nil, err
		}
	}
	rep, facts, err := judge(res, in.set, req, in.baseline)
	if err != nil {
		return nil, err
	}
	run := &Result{Doc: assemble.NewContract(res, rep, facts), res: res}
	run.Failed = failures(run.Doc)
	assemble.AddRuleSet(run.Doc, in.set) // SARIF describes every rule evaluated
	run.Doc.Run = results.RunInfo{Gate: req.Gate, Deploy: req.Deploy, RuleTimes: rep.Times}
	if err := run.judgeGate(res.Path); err != nil {
		return nil, err
	}
	if err := run.compare(in.baseDoc); err != nil {
		return nil, err
	}
	if req.Detail {
		// every output reads the document from here on, and the detail
		// copies what the writers show of the passes' results
		assemble.AddDetailReleasing(run.Doc, res)
	}
	return run, nil
}

// judgeGate is check's, under the document's gate (none: nothing to do):
// it refuses a profile (at path) in which no rank has device data and a
// rule set of which nothing could be evaluated, then judges the findings.
func (r *Result) judgeGate(path string) error {
	gate := r.Doc.Run.Gate
	if gate == nil {
		return nil
	}
	if err := nothingMeasured(path, r.Doc); err != nil {
		return err
	}
	if err := nothingEvaluated(r.Doc.Rules); err != nil {
		return err
	}
	v := gate.JudgeDocument(r.Doc)
	r.Verdict = &v
	return nil
}

// ruleInputs are the rule set (the rules, the selection, the budgets) and
// the baseline document budgets compare with (nil without --baseline).
type ruleInputs struct {
	set      *rules.Set
	baseline *results.Baseline
	baseDoc  *results.Document
}

// readRuleInputs reads the rules and the baseline of req.
func readRuleInputs(req *Request) (*ruleInputs, error) {
	set, err := LoadRules(req.Rules)
	if err != nil {
		return nil, err
	}
	if err := rules.AddBudgets(set, req.Budgets); err != nil {
		return nil, err
	}
	in := &ruleInputs{set: set}
	if req.Baseline != "" {
		if in.baseDoc, err = ReadDocument(req.Baseline, "--baseline: "); err != nil {
			return nil, err
		}
		in.baseline = compare.Baseline(in.baseDoc, req.Baseline)
	}
	return in, nil
}

// compare sets the comparison with the baseline document (nil: none): the
// same comparison engine as npuprof diff, what changed since the baseline,
// shown under the findings.
func (r *Result) compare(base *results.Document) error {
	if base == nil {
		return nil
	}
	r.Baseline = compare.Compare(base, r.Doc, compare.Options{Kernels: 5})
	raw, err := json.Marshal(r.Baseline)
	if err != nil {
		return err
	}
	r.Doc.BaselineDiff = raw
	return nil
}

// saved is the run of a saved document (npuprof analyze --format json or
// json-full): its findings, rule outcomes, facts and failures stand (the
// rule, deployment and serving flags are not applied again); the gate
// judges its findings and --baseline compares with it. An output that reads the
// detail needs a document written with it (--format json-full).
func saved(req *Request) (*Result, error) {
	doc, err := ReadDocument(req.Path, "")
	if err != nil {
		return nil, err
	}
	if req.Detail && !doc.Detail.Built {
		return nil, usageErr("%s: the document has no detail, which the terminal summary and the HTML report read: write it with --format json-full, or give the profile", req.Path)
	}
	doc.Run = results.RunInfo{Gate: req.Gate, Deploy: req.Deploy}
	run := &Result{Doc: doc, Failed: failures(doc)}
	if err := run.judgeGate(req.Path); err != nil {
		return nil, err
	}
	if req.Baseline != "" {
		base, err := ReadDocument(req.Baseline, "--baseline: ")
		if err != nil {
			return nil, err
		}
		if err := run.compare(base); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// load analyzes the profile at path (Analyze, with the garbage collector
// tuned for a read-back export); loading, when set, sees the options
// first and its done is called once the profile is read.
func load(ctx context.Context, path string, opts pipeline.Options, loading func(*pipeline.Options) func()) (*analysis.Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if loading != nil {
		defer loading(&opts)()
	}
	restore := pipeline.TuneGCFor(path)
	defer restore()
	return pipeline.Analyze(ctx, path, opts)
}

// LoadRules loads the built-in rules and the rule files and applies the
// selection (the files' disable/only/no_builtin keys, then the flags);
// problems in the files are input errors that list every file:line:col,
// an unknown rule id in a flag a usage error.
func LoadRules(sel RuleSelection) (*rules.Set, error) {
	set, err := rules.Load(sel.Files...)
	if err != nil {
		return nil, err
	}
	for _, s := range []rules.Selection{{Disable: sel.Disable, Source: "--disable"}, {Only: sel.Only, Source: "--only"}, {NoBuiltin: sel.NoBuiltin, Source: "--no-builtin"}} {
		if err := set.Select(s); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// judge reads the deployment facts, runs the rules, builds the plan,
// judges the plan's budgets and applies the fixes, once, to the script
// and the source tree.
func judge(res *analysis.Result, set *rules.Set, req *Request, baseline *results.Baseline) (*rules.Report, *rules.FactSet, error) {
	var dep *rules.Deployment
	if req.script != nil {
		facts, invalid := req.script.FactsChecked()
		dep = rules.NewDeployment(req.script.Path, facts, invalid)
	}
	facts, err := rules.BuildFacts(res, dep, req.Facts)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	srcWarnings := sourceVersion(req.Source, facts)
	in := &rules.Input{Result: res, Facts: facts, Baseline: baseline, Lang: req.Lang}
	rep := rules.Evaluate(set, in)
	plan.Build(res, rep)
	var lines []string
	if req.script != nil {
		lines = req.script.Lines
	}
	plan.AddHostTuning(rep, lines)
	// a capture at a smaller batch than the concurrency: the decode and
	// the rules again at the target batch
	plan.AddWhatIf(res, set, in, rep)
	rep.EvalPlanBudgets(set, in)
	var ed rules.Editor
	if req.script != nil {
		ed = req.script
	}
	var patch rules.Patcher
	if req.Source != "" {
		patch = func(ps fix.PatchSpec) (results.CodePatch, error) { return codepatch.Make(req.Source, ps) }
	}
	rep.ApplyFixes(ed, patch)
	rep.Warnings = append(rep.Warnings, deployWarnings(req)...)
	// a value of the user's script npuprof cannot use (an unknown
	// cudagraph_mode) does not fail the run: the reports say it
	rep.Warnings = append(rep.Warnings, facts.Warnings()...)
	rep.Warnings = append(rep.Warnings, srcWarnings...)
	return rep, facts, nil
}

// sourceVersion makes the release of the --source tree (its _version.py,
// codepatch.TreeVersion) the vllm_ascend_version fact when neither the
// profile, the script nor --fact says it: the tree is the one the fixes
// patch, mostly the installed package. A tree of another release than the
// deployment's, or whose _version.py names no release, is said in a
// warning (the fact stays as it was).
func sourceVersion(dir string, fs *rules.FactSet) []string {
	if dir == "" {
		return nil
	}
	v, file, err := codepatch.TreeVersion(dir)
	if err != nil {
		return []string{fmt.Sprintf("--source %s: %v; the vLLM-Ascend version is not taken from it", dir, err)}
	}
	if v == "" {
		return nil
	}
	tag := "v" + strings.TrimPrefix(v, "v")
	if _, err := rules.ParseVersion(tag); err != nil {
		return []string{fmt.Sprintf("--source %s: %s says %s, not a release: the vLLM-Ascend version is not taken from it", dir, file, v)}
	}
	src := "--source: " + filepath.Join(dir, filepath.FromSlash(file))
	cur, ok := fs.Get("vllm_ascend_version")
	if !ok {
		if err := fs.Set("vllm_ascend_version", tag, src); err != nil {
			return []string{fmt.Sprintf("--source %s: %v", dir, err)}
		}
		return nil
	}
	if s, isStr := cur.Value.(string); isStr {
		if c, err := rules.CompareVersions(s, tag); err == nil && c != 0 {
			return []string{fmt.Sprintf("--source %s is vLLM-Ascend %s (%s) and the deployment runs %s (%s): the code patches are of the tree's code", dir, tag, file, s, cur.Source)}
		}
	}
	return nil
}

// deployWarnings are what the reports say about the --deploy script:
// several `vllm serve` commands, and which one was read.
func deployWarnings(req *Request) []string {
	s := req.script
	if s == nil {
		return nil
	}
	unread := s.Unread()
	w := s.Warning()
	if w == "" {
		return unread
	}
	if s.Selected {
		w += fmt.Sprintf(" (--deploy-line %d)", req.DeployLine)
	} else {
		w += "; pick another with --deploy-line N (any line of it)"
	}
	return append([]string{w}, unread...)
}

// needsBaseline reports whether a budget compares with the baseline: one
// whose bound names it (baseline, baseline_metric), but not one on the fix
// plan's predicted change ("service.ttft.p99_ms <= 500" needs none).
func needsBaseline(budgets []string) bool {
	for _, b := range budgets {
		b = strings.TrimSpace(b)
		if !strings.HasPrefix(b, rules.PlanMetricStepTimeChangePct) && strings.Contains(b, "baseline") {
			return true
		}
	}
	return false
}

// nothingMeasured is check's refusal to pass on a profile in which no
// rank has device data (a capture that lost it would turn CI green): a
// usage error (exit 2), naming what was missing. A service profile with
// a metric measured is something to check.
func nothingMeasured(path string, doc *results.Document) error {
	if s := doc.Service; s != nil && len(s.Metrics) > 0 {
		return nil
	}
	ranks := doc.Ranks
	var why []string
	for i := range ranks {
		w, none := metric.NoDeviceData(ranks[i].Metrics, ranks[i].Unavailable)
		if !none {
			return nil
		}
		if len(why) < 3 {
			why = append(why, fmt.Sprintf("rank %d: %s", ranks[i].Rank, w))
		}
	}
	if len(ranks) > len(why) {
		why = append(why, fmt.Sprintf("and %d more rank(s)", len(ranks)-len(why)))
	}
	return usageErr("%s: nothing to check: no rank has device data (%s)", path, strings.Join(why, "; "))
}

// nothingEvaluated refuses a check in which no rule or budget could be
// evaluated: a usage error (exit 2), naming the first reasons.
func nothingEvaluated(outcomes []results.Outcome) error {
	var why []string
	for _, o := range outcomes {
		switch o.Status {
		case results.StatusFired, results.StatusClear:
			return nil
		}
		if len(why) < 3 {
			why = append(why, o.Rule+": "+o.Reason)
		}
	}
	return usageErr("nothing to check: none of the %d rule(s) could be evaluated (%s)", len(outcomes), strings.Join(why, "; "))
}

// failures is the internal error (exit 3) naming the passes that failed
// on the first document with a failed pass (its errors), else the rules
// that failed to run on the first document with one (its rules of status
// failed); nil documents are skipped, nil when nothing failed.
func failures(docs ...*results.Document) error {
	for _, doc := range docs {
		if doc != nil {
			var msgs []string
			for _, e := range doc.Errors {
				msgs = append(msgs, firstLine(e.Error()))
			}
			if err := failed("analysis pass(es) failed", msgs); err != nil {
				return err
			}
		}
	}
	for _, doc := range docs {
		if doc == nil {
			continue
		}
		var msgs []string
		for _, o := range doc.Rules {
			if o.Status == results.StatusFailed {
				msgs = append(msgs, o.Rule+": "+firstLine(o.Reason))
			}
		}
		if err := failed("rule(s) failed to run", msgs); err != nil {
			return err
		}
	}
	return nil
}

// PassFailures is the internal error (exit 3) naming the passes that
// failed on a rank (export's), nil when none did.
func PassFailures(errs []analysis.PassError) error {
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, firstLine(e.Error()))
	}
	return failed("analysis pass(es) failed", msgs)
}

func failed(what string, msgs []string) error {
	if len(msgs) == 0 {
		return nil
	}
	return errkind.Errorf(errkind.Internal, "%d %s: %s", len(msgs), what, strings.Join(msgs, "; "))
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func usageErr(format string, args ...any) error {
	return errkind.Errorf(errkind.Usage, format, args...)
}

// WriteTimings writes --debug's per-pass timings (none for a saved
// document: no pass ran).
func (r *Result) WriteTimings(w io.Writer) {
	if r.res == nil {
		return
	}
	for _, rr := range r.res.Ranks {
		for _, t := range rr.Timings {
			fmt.Fprintf(w, "rank %d pass %-10s %v\n", t.Rank, t.Pass, t.Duration)
		}
	}
	if r.res.Cluster != nil {
		for _, t := range r.res.Cluster.Timings {
			fmt.Fprintf(w, "cluster pass %-10s %v\n", t.Pass, t.Duration)
		}
	}
}

// ReadDocument reads a saved results document; a problem is a usage
// error, its message after prefix.
func ReadDocument(path, prefix string) (*results.Document, error) {
	f, err := infile.Open(path, infile.Document, infile.Opts{})
	if err != nil {
		return nil, usageErr("%s%v", prefix, err)
	}
	defer f.Close()
	doc, err := results.Read(f, path)
	if err != nil {
		return nil, usageErr("%s%v", prefix, err)
	}
	return doc, nil
}

// loadServing reads the serving context of the profile at path (vLLM's log
// and bench results, internal/inputs/vllmserve) and attaches it to res, with the
// note on a log found in the profile folder.
func loadServing(res *analysis.Result, path string, in vllmserve.Inputs) error {
	c, note, err := vllmserve.ForProfile(path, in)
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	if c != nil {
		res.Serving = c
	}
	return err
}
