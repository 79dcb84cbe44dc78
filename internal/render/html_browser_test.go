package render

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// The browser test opens reports in real headless Chromium over the
// DevTools protocol (chromedp) and checks what a person would see: the
// page loads with no console error, no exception and no dialog (a hostile
// op name must not run), it makes no network request, and every chart's
// canvas has pixels. It saves a screenshot of the top of each report.
//
// Chromium is found as $NPUPROF_CHROMIUM, chromium, chromium-browser or
// google-chrome. Without it the test skips, except under CI (CI=true),
// where .ci/run installs it and a skip would hide a broken report.

func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("NPUPROF_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("Chromium not found under CI: .ci/run must install it (apt-get install -y chromium chromium-driver)")
	}
	testutil.Skip(t, "the HTML report's browser test (render, InChromium)", "Chromium not found (install it with: apt-get install -y chromium chromium-driver, or set NPUPROF_CHROMIUM)")
	return ""
}

// artifactsDir is where screenshots go: $NPUPROF_ARTIFACTS, else the
// git-ignored out/test-artifacts at the repository root.
func artifactsDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("NPUPROF_ARTIFACTS")
	if d == "" {
		_, file, _, _ := runtime.Caller(0)
		d = filepath.Join(filepath.Dir(file), "..", "..", "out", "test-artifacts")
	}
	require.NoError(t, os.MkdirAll(d, 0o755))
	abs, err := filepath.Abs(d)
	require.NoError(t, err)
	return abs
}

// browser starts one headless Chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, shotHeight),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	// start the browser now (with no timeout), so a broken install fails here
	require.NoError(t, chromedp.Do(ctx), "start Chromium %s", exe)
	return ctx
}

// shotHeight is how much of the top of the report the screenshot shows:
// the header, the findings and the time breakdown of a typical report.
const shotHeight = 1500

type pageReport struct {
	mu       sync.Mutex
	errors   []string
	requests []string
	// sawPage: the report's own file:// load was seen, so the network
	// listener works and "no other request" means something.
	sawPage bool
}

func (r *pageReport) add(list *[]string, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*list = append(*list, s)
}

type chartCheck struct {
	ID      string `json:"id"`
	Width   int    `json:"w"`
	Height  int    `json:"h"`
	Painted int    `json:"painted"`
	Canvas  bool   `json:"canvas"`
}

// checkCharts is evaluated in the page: for each chart element, its
// canvas size and how many sampled pixels are not transparent.
const checkCharts = `(() => Array.from(document.querySelectorAll('div.chart')).map(el => {
  const c = el.querySelector('canvas');
  if (!c) return {id: el.id, canvas: false, w: 0, h: 0, painted: 0};
  const g = c.getContext('2d');
  const d = g.getImageData(0, 0, c.width, c.height).data;
  let painted = 0;
  for (let i = 3; i < d.length; i += 4 * 7) { if (d[i] !== 0) painted++; }
  return {id: el.id, canvas: true, w: c.width, h: c.height, painted};
}))()`

// openReport loads file in a new tab, waits for the charts, checks them,
// and saves a screenshot of the top of the page.
func openReport(t *testing.T, bctx context.Context, file, shot string) *pageReport {
	t.Helper()
	u := (&url.URL{Scheme: "file", Path: file}).String()
	rep := &pageReport{}
	var tab context.Context
	// The listener sees every event of the tab from its first command on.
	// It runs in the tab's read loop: it only records.
	tab, cancel := chromedp.NewContext(bctx, chromedp.WithListener(func(ev any) {
		switch e := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			if e.Type == cdpruntime.ConsoleAPICalledTypeError || e.Type == cdpruntime.ConsoleAPICalledTypeWarning || e.Type == cdpruntime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				rep.add(&rep.errors, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *cdpruntime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			rep.add(&rep.errors, "exception: "+msg)
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				rep.add(&rep.errors, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *page.EventJavascriptDialogOpening:
			rep.add(&rep.errors, "dialog opened: "+e.Message)
			go chromedp.Call(tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false}) //nolint:errcheck
		case *network.EventRequestWillBeSent:
			if e.Request.URL != u {
				rep.add(&rep.requests, e.Request.URL)
			} else {
				rep.mu.Lock()
				rep.sawPage = true
				rep.mu.Unlock()
			}
		}
	}))
	defer cancel()
	tab, cancelT := context.WithTimeout(tab, 90*time.Second)
	defer cancelT()

	t0 := time.Now()
	step := func(what string, err error) {
		t.Helper()
		require.NoError(t, err, what)
		t.Logf("%6dms %s", time.Since(t0).Milliseconds(), what)
	}
	step("open tab", chromedp.Do(tab))
	_, err := chromedp.Call(tab, network.Enable, network.EnableParams{})
	step("Network.enable", err)
	_, err = chromedp.Call(tab, cdplog.Enable, cdp.Empty{})
	step("Log.enable", err)
	_, err = chromedp.Call(tab, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 1280, Height: shotHeight, DeviceScaleFactor: 1})
	step("viewport", err)
	step("navigate", chromedp.Do(tab, chromedp.Navigate(u), chromedp.WaitReady("body")))
	want, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('div.chart').length`))
	step("count charts", err)
	_, err = chromedp.Run(tab, chromedp.Poll[bool](`window.npuprofCharts && window.npuprofCharts.length === document.querySelectorAll('div.chart').length`,
		chromedp.WithPollingTimeout(30*time.Second)))
	step("wait for the charts", err)
	step("first frame", chromedp.Do(tab, chromedp.Sleep(300*time.Millisecond))) // let ECharts paint
	checks, err := chromedp.Run(tab, chromedp.Evaluate[[]chartCheck](checkCharts))
	step("check canvases", err)
	loads, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('script[src],link,img,iframe,object,embed').length`))
	step("count loading elements", err)
	shotRes, err := chromedp.Call(tab, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng,
		Clip: &page.Viewport{X: 0, Y: 0, Width: 1280, Height: shotHeight, Scale: 1}})
	step("screenshot", err)

	require.Zero(t, loads, "no element loads anything")
	require.Positive(t, want, "the report has charts")
	require.Len(t, checks, want)
	for _, c := range checks {
		require.True(t, c.Canvas, "chart %s has no canvas", c.ID)
		require.True(t, c.Width > 100 && c.Height > 50, "chart %s canvas is %dx%d", c.ID, c.Width, c.Height)
		require.Greater(t, c.Painted, 50, "chart %s canvas is empty", c.ID)
	}
	require.NoError(t, os.WriteFile(shot, shotRes.Data, 0o644))
	t.Logf("screenshot of the top of the report: %s", shot)
	if os.Getenv("NPUPROF_FULL_SCREENSHOT") != "" {
		buf, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		step("full screenshot", err)
		p := strings.TrimSuffix(shot, ".png") + "-full.png"
		require.NoError(t, os.WriteFile(p, buf, 0o644))
		t.Logf("full-page screenshot: %s", p)
	}
	js, _ := json.Marshal(checks)
	t.Logf("%d charts drawn: %s", len(checks), js)
	return rep
}

func writeReport(t *testing.T, in htmlInput) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "report.html")
	fh, err := os.Create(f)
	require.NoError(t, err)
	require.NoError(t, writeHTML(fh, in))
	require.NoError(t, fh.Close())
	return f
}

func TestHTMLReportInChromium(t *testing.T) {
	bctx := browser(t)
	dir := artifactsDir(t)
	cases := []struct {
		name string
		in   func(t *testing.T) htmlInput
	}{
		{"synthetic-moe", func(t *testing.T) htmlInput {
			return htmlInput{Doc: assemble.Doc(synthResult(t, synth{ranks: 8, layers: 24, steps: 4, noHCCL: true}), synthFindings()),
				Experts: synthExperts(24, 32), Version: "test"}
		}},
		{"level1-2ranks", func(t *testing.T) htmlInput {
			return htmlInput{Doc: assemble.Doc(loadSample(t, level1), nil), Version: "test"}
		}},
		{"tracegen-ep-fc1-cumsum-steps", func(t *testing.T) htmlInput {
			s, _ := tracegen.Lookup("ep-fc1-cumsum-steps")
			s.CommJSON = false
			return htmlInput{Doc: assemble.Doc(genResult(t, s), nil), Version: "test"}
		}},
		// the committed trace the README's screenshot is taken from
		{"ep-fc1-cumsum", func(t *testing.T) htmlInput {
			return htmlInput{Doc: assemble.Doc(committedResult(t, "ep-fc1-cumsum"), nil), Version: "dev"}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := writeReport(t, c.in(t))
			rep := openReport(t, bctx, file, filepath.Join(dir, "report-"+c.name+".png"))
			rep.mu.Lock()
			defer rep.mu.Unlock()
			require.Empty(t, rep.errors, "console errors, exceptions or dialogs")
			require.Empty(t, rep.requests, "network requests")
			require.True(t, rep.sawPage, "the network listener saw the page load itself")
		})
	}
}

// TestHTMLCopyIsExact clicks every Copy button of a report in Chromium and
// checks that what reaches the clipboard is byte-identical to the JSON
// document's fix, diff and deploy_diff. The diffs are made by the deploy
// package from a CRLF script (with a tab), so each changed line ends in
// "\r\n": the displayed <pre> loses the CRs (HTML reads a CR as a newline)
// and used to be what was copied, which made the patch fail on the CRLF
// file. Headless Chromium cannot read the clipboard, so the test replaces
// navigator.clipboard.writeText with a recorder before clicking.
func TestHTMLCopyIsExact(t *testing.T) {
	bctx := browser(t)
	script := "#!/bin/sh\r\nexport VLLM_ASCEND_ENABLE_FLASHCOMM1=0\r\nvllm serve Qwen/Qwen3-235B-A22B \\\r\n\t--max-num-seqs 32 \\\r\n\t--enable-expert-parallel\r\n"
	s, err := deploy.Parse("serve.sh", script)
	require.NoError(t, err)
	diff1, err := s.Diff([]deploy.Edit{{Op: deploy.OpSetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1", Value: "1"}})
	require.NoError(t, err)
	diff2, err := s.Diff([]deploy.Edit{{Op: deploy.OpRemoveFlag, Name: "--enable-expert-parallel"}})
	require.NoError(t, err)
	all, err := s.Diff([]deploy.Edit{{Op: deploy.OpSetEnv, Name: "VLLM_ASCEND_ENABLE_FLASHCOMM1", Value: "1"}, {Op: deploy.OpRemoveFlag, Name: "--enable-expert-parallel"}})
	require.NoError(t, err)
	for _, d := range []string{diff1, diff2, all} {
		require.Contains(t, d, "\r\n", "the fixture is a CRLF diff")
	}
	findings := []results.Finding{
		{Rule: "comm-ep-flashcomm", Severity: results.SeverityHigh, Title: "FLASHCOMM1 off", SavingUs: results.Estimated(200),
			Fix: "export VLLM_ASCEND_ENABLE_FLASHCOMM1=1\r\n\tthen restart " + hostileName + "\n", Diff: diff1},
		{Rule: "parallel-strategy", Severity: results.SeverityMedium, Title: "EP off", SavingUs: results.Estimated(100), Fix: "drop --enable-expert-parallel", Diff: diff2},
	}
	// what the JSON document holds (a JSON round trip of each string)
	doc := func(v string) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var out string
		require.NoError(t, json.Unmarshal(b, &out))
		return out
	}
	rdoc := assemble.Doc(synthResult(t, synth{ranks: 2, layers: 4, steps: 2}), findings)
	rdoc.DeployDiff = all
	file := writeReport(t, htmlInput{Doc: rdoc, Version: "test"})
	u := (&url.URL{Scheme: "file", Path: file}).String()
	tab, cancel := chromedp.NewContext(bctx)
	defer cancel()
	tab, cancelT := context.WithTimeout(tab, 60*time.Second)
	defer cancelT()
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(u), chromedp.WaitReady("body")))
	type copied struct {
		ID   string `json:"id"`
		Text string `json:"text"`
		Pre  string `json:"pre"`
	}
	got, err := chromedp.Run(tab, chromedp.Evaluate[[]copied](`(async () => {
  let last = null;
  Object.defineProperty(navigator, 'clipboard', {configurable: true, value: {writeText: t => { last = t; return Promise.resolve(); }}});
  const out = [];
  for (const b of document.querySelectorAll('button.copy')) {
    last = null;
    b.click();
    await new Promise(r => setTimeout(r, 0));
    const id = b.getAttribute('data-copy');
    out.push({id, text: last, pre: document.getElementById(id).textContent});
  }
  return out;
})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	want := map[string]string{}
	// findings are shown largest saving first: 0 is FLASHCOMM1, 1 is EP
	want["fix-0"], want["diff-0"] = doc(findings[0].Fix), doc(findings[0].Diff)
	want["fix-1"], want["diff-1"] = doc(findings[1].Fix), doc(findings[1].Diff)
	want["deploy-diff"] = doc(all)
	seen := map[string]bool{}
	for _, c := range got {
		w, ok := want[c.ID]
		require.True(t, ok, "unexpected copy button %s", c.ID)
		require.Equal(t, w, c.Text, "copied text of %s is the JSON document's, byte for byte", c.ID)
		seen[c.ID] = true
		if strings.Contains(w, "\r") {
			require.NotContains(t, c.Pre, "\r", "the displayed %s has no CR (HTML drops them): copying it would lose them", c.ID)
		}
	}
	require.Len(t, seen, len(want), "every Copy button was clicked: %v", seen)
}
