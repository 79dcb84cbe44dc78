package render

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/results/assemble"
)

// The Chinese report (--lang zh) in Chromium: it loads and draws as the
// English one does (openReport: no error, no request, every chart
// painted, a screenshot), and its Chinese headings are drawn with a CJK
// font of the report's stack (the one .ci/run installs, fonts-noto-cjk),
// never a fallback's boxes: the platform fonts Chromium used for the
// glyphs of a heading are asked over DevTools (CSS.getPlatformFontsForNode).
func TestHTMLChineseReportInChromium(t *testing.T) {
	bctx := browser(t)
	doc := assemble.Doc(committedResult(t, "ep-fc1-cumsum"), nil)
	doc.Lang = lang.ZH
	file := writeReport(t, htmlInput{Doc: doc, Version: "dev"})
	rep := openReport(t, bctx, file, filepath.Join(artifactsDir(t), "report-ep-fc1-cumsum-zh.png"))
	rep.mu.Lock()
	require.Empty(t, rep.errors, "console errors, exceptions or dialogs")
	require.Empty(t, rep.requests, "network requests")
	rep.mu.Unlock()

	tab, cancel := chromedp.NewContext(bctx)
	defer cancel()
	tab, cancelT := context.WithTimeout(tab, 60*time.Second)
	defer cancelT()
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate((&url.URL{Scheme: "file", Path: file}).String()), chromedp.WaitReady("body")))
	_, err := chromedp.Call(tab, dom.Enable, dom.EnableParams{})
	require.NoError(t, err)
	_, err = chromedp.Call(tab, css.Enable, cdp.Empty{})
	require.NoError(t, err)
	d, err := chromedp.Call(tab, dom.GetDocument, dom.GetDocumentParams{})
	require.NoError(t, err)
	h, err := chromedp.Call(tab, dom.QuerySelector, dom.QuerySelectorParams{NodeID: d.Root.NodeID, Selector: "section#breakdown h2"})
	require.NoError(t, err)
	require.NotZero(t, h.NodeID, "the time breakdown's heading")
	text, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('section#breakdown h2').textContent`))
	require.NoError(t, err)
	require.True(t, lang.HasHan(text), text)
	fonts, err := chromedp.Call(tab, css.GetPlatformFontsForNode, css.GetPlatformFontsForNodeParams{NodeID: h.NodeID})
	require.NoError(t, err)
	var names []string
	cjk := false
	for _, f := range fonts.Fonts {
		names = append(names, f.FamilyName)
		for _, want := range []string{"CJK", "PingFang", "YaHei", "WenQuanYi", "Hei", "Song"} {
			cjk = cjk || (strings.Contains(f.FamilyName, want) && f.GlyphCount > 0)
		}
	}
	require.True(t, cjk, "the Chinese heading %q is drawn with a CJK font, not %v", text, names)
}
