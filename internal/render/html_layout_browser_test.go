package render

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/analysis"
	"github.com/npuprof/npuprof/internal/deploy"
	"github.com/npuprof/npuprof/internal/plan"
	"github.com/npuprof/npuprof/internal/results"
	"github.com/npuprof/npuprof/internal/results/assemble"
	"github.com/npuprof/npuprof/internal/rules"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// The layout test opens reports in headless Chromium at the sizes people
// read them at and checks what the issue asked of the first screen, the
// cards, the charts and the docs links:
//   - at 1280×800 the first heading below the headline cards is the fix
//     plan's (or the findings' when there is no plan), inside the first
//     screen; the findings follow the plan, and the time breakdown follows
//     them, its chart the first chart of the page; the deployment facts,
//     groups and environment come after it, collapsed;
//   - at 1280 and 1920 px, with every <details> opened, no section is
//     wider than its content box, no element sticks out of its section
//     (a wide table scrolls inside its own box), and the page has no
//     horizontal scroll;
//   - every chart has an x and a y axis title, drawn inside the chart (the
//     chart's option rendered to SVG by ECharts itself), and a value axis
//     names its unit;
//   - a finding's "docs" link, clicked, lands on the in-page explanation
//     of its rule, opened and on screen, whose text is the rule's why; no
//     link is relative.

// ruledDoc runs the built-in rules (with the deployment script, when
// given, and the fix plan) on res and builds its document as `npuprof
// report` does: with the view and the rule set.
func ruledDoc(t *testing.T, res *analysis.Result, script string) (*results.Document, *rules.Set) {
	t.Helper()
	set, err := rules.Load()
	require.NoError(t, err)
	var dep *rules.Deployment
	var s *deploy.Script
	if script != "" {
		b, err := os.ReadFile(script)
		require.NoError(t, err)
		s, err = deploy.Parse(filepath.Base(script), string(b))
		require.NoError(t, err)
		facts, invalid := s.FactsChecked()
		dep = rules.NewDeployment(s.Path, facts, invalid)
	}
	facts, err := rules.BuildFacts(res, dep, nil)
	require.NoError(t, err)
	rep := rules.Evaluate(set, &rules.Input{Result: res, Facts: facts})
	plan.Build(res, rep)
	if s != nil {
		rep.ApplyFixes(s, nil)
	}
	doc := assemble.New(res, rep, facts)
	assemble.AddRuleSet(doc, set)
	return doc, set
}

func repoPath(t *testing.T, rel string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "..", rel))
	require.NoError(t, err)
	return abs
}

// firstScreen is evaluated at 1280×800, scrolled to the top.
const firstScreen = `(() => {
  const secs = Array.from(document.querySelectorAll('main > section')).map(s => s.id);
  const first = document.querySelector('#plan') ? 'plan' : 'findings';
  const h = document.querySelector('#' + first + ' h2').getBoundingClientRect();
  const chart = document.querySelector('div.chart');
  const closed = Array.from(document.querySelectorAll('#deployment details')).filter(d => !d.open).map(d => d.className);
  return {sections: secs, first, headingBottom: h.bottom, firstChart: chart ? chart.id : '',
    breakdownTop: document.querySelector('#chart-breakdown').getBoundingClientRect().top + window.scrollY, closed,
    viewport: window.innerHeight};
})()`

type firstScreenResult struct {
	Sections      []string `json:"sections"`
	First         string   `json:"first"`
	HeadingBottom float64  `json:"headingBottom"`
	FirstChart    string   `json:"firstChart"`
	BreakdownTop  float64  `json:"breakdownTop"`
	Closed        []string `json:"closed"`
	Viewport      int      `json:"viewport"`
}

// overflow opens every <details>, then lists what is wider than its box:
// a section whose content overflows it, an element that sticks out of its
// section's content box (unless inside a box that scrolls), and the page.
const overflow = `(() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const bad = [];
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '');
  const scrolls = el => { const s = getComputedStyle(el); return s.overflowX === 'auto' || s.overflowX === 'scroll' || s.overflowX === 'hidden'; };
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth) bad.push('page scrolls sideways: ' + doc.scrollWidth + ' > ' + doc.clientWidth);
  let checked = 0;
  for (const sec of document.querySelectorAll('main > section, .masthead, footer')) {
    if (sec.scrollWidth > sec.clientWidth) bad.push(name(sec) + ' scrollWidth ' + sec.scrollWidth + ' > clientWidth ' + sec.clientWidth);
    const r = sec.getBoundingClientRect();
    const walk = (el) => {
      for (const c of el.children) {
        const cr = c.getBoundingClientRect();
        checked++;
        if (cr.width > 0 && (cr.right > r.right + 0.5 || cr.left < r.left - 0.5)) {
          bad.push(name(c) + ' in ' + name(sec) + ' spans ' + Math.round(cr.left) + '..' + Math.round(cr.right) + ', its section ' + Math.round(r.left) + '..' + Math.round(r.right));
          continue;
        }
        if (scrolls(c)) continue; // what is inside scrolls in c's own box
        walk(c);
      }
    };
    walk(sec);
  }
  return {bad, checked};
})()`

type overflowResult struct {
	Bad     []string `json:"bad"`
	Checked int      `json:"checked"`
}

// axes renders each chart's option to SVG with ECharts (server-side
// rendering, the chart's own size) and finds its axis titles among the
// drawn texts, inside the chart.
const axes = `(() => Array.from(document.querySelectorAll('div.chart')).map(el => {
  const inst = echarts.getInstanceByDom(el);
  const opt = inst.getOption();
  const ax = k => (opt[k] && opt[k][0]) || {};
  const x = ax('xAxis'), y = ax('yAxis');
  const w = el.clientWidth, h = el.clientHeight;
  const ssr = echarts.init(null, null, {renderer: 'svg', ssr: true, width: w, height: h});
  ssr.setOption(opt);
  const svg = ssr.renderToSVGString();
  ssr.dispose();
  const box = document.createElement('div');
  box.style.cssText = 'position:absolute;left:0;top:0;width:' + w + 'px;height:' + h + 'px';
  box.innerHTML = svg;
  document.body.appendChild(box);
  const br = box.getBoundingClientRect();
  const drawn = {};
  for (const t of box.querySelectorAll('text')) {
    const r = t.getBoundingClientRect();
    const inside = r.left >= br.left - 1 && r.right <= br.right + 1 && r.top >= br.top - 1 && r.bottom <= br.bottom + 1;
    drawn[t.textContent] = drawn[t.textContent] || inside;
  }
  box.remove();
  return {id: el.id, x: x.name || '', y: y.name || '', xType: x.type || '', yType: y.type || '',
    xDrawn: !!drawn[x.name], yDrawn: !!drawn[y.name]};
}))()`

type axesResult struct {
	ID     string `json:"id"`
	X      string `json:"x"`
	Y      string `json:"y"`
	XType  string `json:"xType"`
	YType  string `json:"yType"`
	XDrawn bool   `json:"xDrawn"`
	YDrawn bool   `json:"yDrawn"`
}

// docsLinks clicks each finding's docs link and reports where it landed,
// once the (smooth) scroll has settled.
const docsLinks = `(async () => {
  document.documentElement.style.scrollBehavior = 'auto'; // land at once: the link, not the animation, is under test
  const out = [];
  const hrefs = Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'));
  for (const a of document.querySelectorAll('article.finding a.docs')) {
    a.click();
    let last = -1e9, top = 0, still = 0;
    for (let i = 0; i < 200 && still < 5; i++) {
      await new Promise(r => setTimeout(r, 30));
      const t = document.querySelector(a.getAttribute('href'));
      top = t ? t.getBoundingClientRect().top : -1;
      still = Math.abs(top - last) < 0.5 ? still + 1 : 0;
      last = top;
    }
    const t = document.querySelector(a.getAttribute('href'));
    out.push({rule: a.closest('article').querySelector('.rule').textContent, href: a.getAttribute('href'), hash: location.hash,
      found: !!t, open: !!(t && t.open), inRules: !!(t && t.closest('#rules')), top, text: t ? t.innerText : ''});
  }
  return {links: out, hrefs, viewport: window.innerHeight};
})()`

type docsResult struct {
	Links []struct {
		Rule   string  `json:"rule"`
		Href   string  `json:"href"`
		Hash   string  `json:"hash"`
		Found  bool    `json:"found"`
		Open   bool    `json:"open"`
		InRule bool    `json:"inRules"`
		Top    float64 `json:"top"`
		Text   string  `json:"text"`
	} `json:"links"`
	Hrefs    []string `json:"hrefs"`
	Viewport float64  `json:"viewport"`
}

// layoutTab opens file in a new tab at width×height and waits for the
// charts; close closes the tab (one tab at a time: a tab in the
// background is throttled).
func layoutTab(t *testing.T, bctx context.Context, file string, width, height int64) (tab context.Context, close func()) {
	t.Helper()
	tab, cancel := chromedp.NewContext(bctx)
	tab, cancelT := context.WithTimeout(tab, 90*time.Second)
	close = func() { cancelT(); cancel() }
	t.Cleanup(close)
	_, err := chromedp.Call(tab, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: width, Height: height, DeviceScaleFactor: 1})
	require.NoError(t, err)
	u := (&url.URL{Scheme: "file", Path: file}).String()
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(u), chromedp.WaitReady("body")))
	_, err = chromedp.Run(tab, chromedp.Poll[bool](`window.npuprofCharts && window.npuprofCharts.length === document.querySelectorAll('div.chart').length`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err)
	return tab, close
}

func TestHTMLLayoutInChromium(t *testing.T) {
	bctx := browser(t)
	dir := artifactsDir(t)
	cases := []struct {
		name string
		doc  func(t *testing.T) (*results.Document, *rules.Set)
	}{
		// the README's report: the committed trace with the field report's script
		{"ep-fc1-cumsum-deploy", func(t *testing.T) (*results.Document, *rules.Set) {
			return ruledDoc(t, committedResult(t, "ep-fc1-cumsum"), repoPath(t, "testdata/deploy/field-report-1.sh"))
		}},
		// a 64-rank cluster: 64-column pivots, many groups, 64 bars
		{"tracegen-64-ranks", func(t *testing.T) (*results.Document, *rules.Set) {
			s, _ := tracegen.Lookup("ep-fc1-cumsum-steps")
			s.Ranks, s.Layers, s.Steps, s.CommJSON = 64, 2, 4, false
			return ruledDoc(t, genResult(t, s), "")
		}},
	}
	plans := map[bool]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now()
			defer func() { t.Logf("%s checked in %v", c.name, time.Since(t0).Round(time.Millisecond)) }()
			doc, set := c.doc(t)
			t.Logf("document built in %v", time.Since(t0).Round(time.Millisecond))
			require.NotEmpty(t, doc.Findings)
			hasPlan := doc.Plan != nil && (len(doc.Plan.Steps) > 0 || len(doc.Plan.LeftOut) > 0)
			plans[hasPlan] = true
			file := writeReport(t, htmlInput{Doc: doc, Version: "test"})

			tab, closeTab := layoutTab(t, bctx, file, 1280, 800)
			fs, err := chromedp.Run(tab, chromedp.Evaluate[firstScreenResult](firstScreen))
			require.NoError(t, err)
			t.Logf("sections %v; %s heading ends at %.0f px; breakdown chart at %.0f px", fs.Sections, fs.First, fs.HeadingBottom, fs.BreakdownTop)
			shot, err := chromedp.Call(tab, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "layout-"+c.name+"-1280x800.png"), shot.Data, 0o644))
			want := []string{"header", "findings", "breakdown", "deployment"}
			if hasPlan {
				want = []string{"header", "plan", "findings", "breakdown", "deployment"}
				require.Equal(t, "plan", fs.First)
			} else {
				require.Equal(t, "findings", fs.First)
			}
			require.Equal(t, want, fs.Sections[:len(want)], "the plan (or the findings) first, then the time breakdown, then the deployment")
			require.Less(t, fs.HeadingBottom, float64(fs.Viewport), "the %s heading is on the first screen", fs.First)
			require.Equal(t, "chart-breakdown", fs.FirstChart, "the time-breakdown chart is the first chart")
			require.ElementsMatch(t, []string{"facts", "groups", "env"}, fs.Closed, "deployment facts, groups and environment are collapsed")
			closeTab()

			for _, width := range []int64{1920, 1280} {
				if width == 1280 {
					closeTab()
				}
				tab, closeTab = layoutTab(t, bctx, file, width, 1000)
				ov, err := chromedp.Run(tab, chromedp.Evaluate[overflowResult](overflow))
				require.NoError(t, err)
				require.Greater(t, ov.Checked, 200, "elements measured at %d px", width)
				require.Empty(t, ov.Bad, "at %d px wide, nothing is wider than its card", width)
				if width == 1280 && os.Getenv("NPUPROF_FULL_SCREENSHOT") != "" {
					buf, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(dir, "layout-"+c.name+"-full.png"), buf, 0o644))
				}
			}

			t.Logf("first screen and overflow checked at %v", time.Since(t0).Round(time.Millisecond))
			ax, err := chromedp.Run(tab, chromedp.Evaluate[[]axesResult](axes))
			require.NoError(t, err)
			require.NotEmpty(t, ax)
			for _, a := range ax {
				require.True(t, a.X != "" && a.Y != "", "chart %s has x and y axis titles: %+v", a.ID, a)
				require.True(t, a.XDrawn && a.YDrawn, "chart %s draws its axis titles inside the chart: %+v", a.ID, a)
				for _, v := range [][2]string{{a.XType, a.X}, {a.YType, a.Y}} {
					if v[0] == "value" {
						require.Regexp(t, `\((µs|ms|s)\)$|^tokens$`, v[1], "chart %s: a value axis names its unit", a.ID)
					}
				}
			}

			t.Logf("axes checked at %v", time.Since(t0).Round(time.Millisecond))
			closeTab()
			tab, _ = layoutTab(t, bctx, file, 1280, 800)
			dl, err := chromedp.Run(tab, chromedp.Evaluate[docsResult](docsLinks, chromedp.EvalAwaitPromise))
			require.NoError(t, err)
			for _, h := range dl.Hrefs {
				require.True(t, strings.HasPrefix(h, "#") || strings.HasPrefix(h, "https://"), "href %q is relative to wherever the file lies", h)
			}
			require.Len(t, dl.Links, len(doc.Findings), "every finding has a docs link")
			for _, l := range dl.Links {
				require.Equal(t, "#"+ruleAnchor(l.Rule), l.Href)
				require.Equal(t, l.Href, l.Hash, "the click followed the link")
				require.True(t, l.Found && l.Open && l.InRule, "%s: the link lands on the rule's opened explanation: %+v", l.Rule, l)
				require.True(t, l.Top >= -1 && l.Top < dl.Viewport, "%s: the explanation is on screen (top %.0f)", l.Rule, l.Top)
				r := set.Lookup(l.Rule)
				require.NotNil(t, r)
				require.Contains(t, strings.Join(strings.Fields(l.Text), " "), strings.Join(strings.Fields(r.Why), " "), "%s: the explanation is the rule's why", l.Rule)
			}
		})
	}
	require.Equal(t, map[bool]bool{true: true, false: true}, plans, "reports with and without a fix plan were checked")
}
