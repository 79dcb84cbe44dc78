package render

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/npuprof/npuprof/internal/results"
)

// The terminal summary fits a screen: per-step tables show the slowest
// steps and summary rows, per-rank tables of large clusters show summary
// rows and the outlier ranks, and every line fits TextWidth columns.
// TextOptions turn the caps off.

// TextWidth is the widest line of the terminal summary off a terminal, in
// columns; on one it is the terminal's width (results.TextOptions.Width).
const TextWidth = 100

// MinTextWidth is the narrowest width the summary is laid out for: a
// narrower terminal gets lines of this width.
const MinTextWidth = 60

// textWidth is the width the options ask for, within MinTextWidth and
// TextWidth when none is given.
func textWidth(o results.TextOptions) int {
	if o.Width <= 0 {
		return TextWidth
	}
	return max(o.Width, MinTextWidth)
}

// MaxStepRows is how many steps a per-step table lists (the slowest) before
// its mean, median, p90 and max rows; MaxRankRows is the rank count above
// which a per-rank table is summarised.
const (
	MaxStepRows = 10
	MaxRankRows = 16
	// MaxEPRows is how many ranks of the worst EP group the expert-load
	// section lists, slowest first (--ranks all lists each).
	MaxEPRows = 3
	// TopKernels is how many compute kernels the summary lists;
	// TopKernelsDetail how many --detail all lists.
	TopKernels       = 5
	TopKernelsDetail = 10
)

// stepRow is one step of a per-step table: its id, the cells after it and
// the value it is ranked by (the step time).
type stepRow struct {
	id    int
	cells []string
	key   float64
}

// slowestSteps returns the rows to list: all of them (in step order) when
// there are at most MaxStepRows or all is set, else the MaxStepRows with
// the largest key, in step order, and whether rows were left out.
func slowestSteps(rows []stepRow, all bool) ([]stepRow, bool) {
	if all || len(rows) <= MaxStepRows {
		return rows, false
	}
	top := append([]stepRow{}, rows...)
	sort.SliceStable(top, func(i, j int) bool { return top[i].key > top[j].key })
	top = top[:MaxStepRows]
	sort.Slice(top, func(i, j int) bool { return top[i].id < top[j].id })
	return top, true
}

// summaryStats are the mean, median, p90 and max of xs, in that order
// (nearest-rank percentiles; NaN values are left out; nil when none).
func summaryStats(xs []float64) []float64 {
	v := make([]float64, 0, len(xs))
	sum := 0.0
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
			sum += x
		}
	}
	if len(v) == 0 {
		return nil
	}
	sort.Float64s(v)
	rank := func(p float64) float64 { return v[max(0, int(math.Ceil(p*float64(len(v))))-1)] }
	return []float64{sum / float64(len(v)), rank(0.5), rank(0.9), v[len(v)-1]}
}

// minMedMax are the median, min and max of xs (NaN left out) and the
// indexes of the min and max; ok false when none.
func minMedMax(xs []float64) (med, lo, hi float64, iLo, iHi int, ok bool) {
	v := make([]float64, 0, len(xs))
	iLo, iHi = -1, -1
	for i, x := range xs {
		if math.IsNaN(x) {
			continue
		}
		v = append(v, x)
		if iLo < 0 || x < xs[iLo] {
			iLo = i
		}
		if iHi < 0 || x > xs[iHi] {
			iHi = i
		}
	}
	if len(v) == 0 {
		return 0, 0, 0, -1, -1, false
	}
	sort.Float64s(v)
	med = v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return med, xs[iLo], xs[iHi], iLo, iHi, true
}

// outliers returns the indexes of xs whose robust z-score (against the
// median and MAD) is above z, largest deviation first; none when the MAD
// is 0.
func outliers(xs []float64, z float64) []int {
	med, _, _, _, _, ok := minMedMax(xs)
	if !ok {
		return nil
	}
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - med)
		if math.IsNaN(x) {
			dev[i] = math.NaN()
		}
	}
	mad, _, _, _, _, _ := minMedMax(dev)
	if mad == 0 {
		return nil
	}
	var out []int
	for i, d := range dev {
		if !math.IsNaN(d) && d/(1.4826*mad) > z {
			out = append(out, i)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return dev[out[i]] > dev[out[j]] })
	return out
}

// wrapWriter wraps the lines written through it at width columns, at a
// space, continuing with the line's indent plus four spaces; a word wider
// than the line is cut.
type wrapWriter struct {
	w     io.Writer
	width int
	buf   []byte
	// ascii spells µs as us (a terminal whose locale is not UTF-8).
	ascii bool
	// cut, while a table is written, cuts a line wider than width (its
	// last cells) instead of wrapping it: a table row is never broken.
	cut bool
	// colour marks severities with ANSI colours (colourLine).
	colour bool
}

// units is line with µs spelled us when ww.ascii is set (the same width),
// and without the table cells' widePad.
func (ww *wrapWriter) units(line string) string {
	if strings.ContainsRune(line, widePad) {
		line = strings.ReplaceAll(line, string(widePad), "")
	}
	if ww.ascii {
		return strings.ReplaceAll(line, "µs", "us")
	}
	return line
}

func (ww *wrapWriter) Write(p []byte) (int, error) {
	ww.buf = append(ww.buf, p...)
	for {
		i := bytes.IndexByte(ww.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(ww.buf[:i])
		ww.buf = ww.buf[i+1:]
		out := ww.units(line)
		if ww.cut {
			out = cutLine(out, ww.width)
		} else {
			out = wrapLine(out, ww.width)
		}
		if ww.colour {
			out = colourLine(out)
		}
		if _, err := io.WriteString(ww.w, out+"\n"); err != nil {
			return 0, err
		}
	}
}

// Flush writes what is left after the last newline.
func (ww *wrapWriter) Flush() error {
	if len(ww.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(ww.w, wrapLine(ww.units(string(ww.buf)), ww.width))
	ww.buf = nil
	return err
}

// cutLine is line within width columns: a wider one is cut, ending in
// "…" (a table row: its cells stay in their columns).
func cutLine(line string, width int) string {
	line = strings.TrimRight(line, " ")
	if DisplayWidth(line) <= width {
		return line
	}
	r := []rune(line)
	return strings.TrimRight(string(r[:fitRunes(r, width-1)]), " ") + "…"
}

// severityColours are the ANSI colours of the findings' severities (and
// of a failed rule) on a terminal.
var severityColours = []struct{ tag, sgr string }{
	{"[HIGH]", "1;31"}, {"[MEDIUM]", "1;33"}, {"[LOW]", "36"}, {"[INFO]", "2"},
	{"FAILED:", "1;31"}, {"PARTIAL", "33"},
}

// colourLine colours the severity tag a line opens with (after its
// indent); a line without one is returned as it is. The escapes take no
// columns: the line was laid out before.
func colourLine(line string) string {
	body := strings.TrimLeft(line, " ")
	for _, c := range severityColours {
		if strings.HasPrefix(body, c.tag) {
			ind := line[:len(line)-len(body)]
			return ind + "\x1b[" + c.sgr + "m" + c.tag + "\x1b[0m" + body[len(c.tag):]
		}
	}
	return line
}

// wrapLine wraps one line at width columns (a wide rune, Chinese, takes
// two), at a space outside single quotes or between two characters of
// Chinese text: a quoted value ('{"cudagraph_mode": ...}') stays whole, so
// a flag can still be copied; a word or quoted value wider than the line
// is cut.
func wrapLine(line string, width int) string {
	line = strings.TrimRight(line, " ") // a left-aligned table pads its last cell
	if DisplayWidth(line) <= width {
		return line
	}
	indent := len(line) - len(strings.TrimLeft(line, " "))
	cont := strings.Repeat(" ", min(indent+4, width/2))
	var out []string
	first := true
	for DisplayWidth(line) > width {
		r := []rune(line)
		quoted := make([]bool, len(r))
		in := false
		for i, c := range r {
			if c == '\'' && !apostrophe(r, i) && (in || opensQuote(r, i)) {
				in = !in
			}
			quoted[i] = in
		}
		lo := len(cont)
		if first {
			lo = indent
		}
		fits := fitRunes(r, width)
		cut := breakAt(r, quoted, lo, fits)
		if cut <= lo+1 {
			cut = breakAt(r, nil, lo, fits) // a quote never closed: any space
		}
		if cut <= lo+1 {
			cut = fits // nowhere to break: cut the word
		}
		out = append(out, strings.TrimRight(string(r[:cut]), " "))
		line = cont + strings.TrimLeft(string(r[cut:]), " ")
		first = false
	}
	return strings.Join(append(out, line), "\n")
}

// fitRunes is how many runes of r fit in width columns (r is wider).
func fitRunes(r []rune, width int) int {
	w := 0
	for i, c := range r {
		if w += runeWidth(c); w > width {
			return i
		}
	}
	return len(r)
}

// breakAt is the last break at or before rune fits and after lo+1 that is
// not inside quotes (quoted nil: any): a space (dropped), or the place
// between two characters of Chinese text; lo+1 when there is none.
func breakAt(r []rune, quoted []bool, lo, fits int) int {
	cut := fits
	for cut > lo+1 && (!breakable(r, cut) || (quoted != nil && quoted[cut])) {
		cut--
	}
	return cut
}

// breakable reports whether a line may break before r[i]: at a space, or
// beside a wide rune, but never before closing or after opening
// punctuation.
func breakable(r []rune, i int) bool {
	if r[i] == ' ' {
		return true
	}
	a, b := r[i-1], r[i]
	return (isWide(a) || isWide(b)) && a != ' ' && !strings.ContainsRune("，。、；：！？）」』】》〉…,.;:!?)%", b) &&
		!strings.ContainsRune("（「『【《〈“‘(", a)
}

// opensQuote tells whether the ' at r[i] can open a quote: it follows
// the line's start or a character that is not a letter or digit (a space,
// "=", "("); after a letter it ends a plural possessive ("kernels' time").
func opensQuote(r []rune, i int) bool {
	return i == 0 || !(unicode.IsLetter(r[i-1]) || unicode.IsDigit(r[i-1]))
}

// apostrophe tells whether the ' at r[i] stands between two letters
// ("vLLM-Ascend's", "don't"): part of a word, not a quote.
func apostrophe(r []rune, i int) bool {
	return i > 0 && i+1 < len(r) && unicode.IsLetter(r[i-1]) && unicode.IsLetter(r[i+1])
}

// rankLabels names ranks by index into a rank list, at most limit of them:
// "rank 3" or "ranks 17, 20, 19 (+5 more)".
func rankLabels(ranks []int, idx []int, limit int) string {
	var s []string
	for i, x := range idx {
		if i == limit {
			break
		}
		s = append(s, strconv.Itoa(ranks[x]))
	}
	out := "rank " + strings.Join(s, ", ")
	if len(idx) > 1 {
		out = "ranks " + strings.Join(s, ", ")
	}
	if len(idx) > limit {
		out += fmt.Sprintf(" (+%d more)", len(idx)-limit)
	}
	return out
}

// rankTable is a per-rank table: one row per rank, or, above MaxRankRows
// ranks, its median, min and max rows and the outlier ranks.
type rankTable struct {
	header string // tab-separated, after "rank"
	ranks  []int
	cells  [][]string  // per rank, the cells after the rank
	vals   [][]float64 // per rank, each cell's value (NaN: none)
	format []func(float64) string
	// outlierBy is the column whose outliers are named, and what it is.
	outlierBy   int
	outlierWhat string
}

func (t *rankTable) add(rank int, cells []string, vals []float64) {
	t.ranks = append(t.ranks, rank)
	t.cells = append(t.cells, cells)
	t.vals = append(t.vals, vals)
}

func (t *rankTable) write(ew *errWriter, all bool) {
	tw := newTable(ew)
	fmt.Fprintf(tw, "rank\t%s\t\n", t.header)
	if all || len(t.ranks) <= MaxRankRows {
		for i, r := range t.ranks {
			fmt.Fprintf(tw, "%d\t%s\t\n", r, strings.Join(t.cells[i], "\t"))
		}
		tw.Flush()
		return
	}
	n := len(t.format)
	rows := [3][]string{make([]string, n), make([]string, n), make([]string, n)}
	col := make([]float64, len(t.ranks))
	var byCol []float64
	for c := 0; c < n; c++ {
		for i := range t.ranks {
			col[i] = math.NaN()
			if c < len(t.vals[i]) {
				col[i] = t.vals[i][c]
			}
		}
		if c == t.outlierBy {
			byCol = append([]float64{}, col...)
		}
		med, lo, hi, iLo, iHi, ok := minMedMax(col)
		if !ok {
			rows[0][c], rows[1][c], rows[2][c] = "n/a", "n/a", "n/a"
			continue
		}
		rows[0][c] = t.format[c](med)
		rows[1][c] = fmt.Sprintf("%s (r%d)", t.format[c](lo), t.ranks[iLo])
		rows[2][c] = fmt.Sprintf("%s (r%d)", t.format[c](hi), t.ranks[iHi])
	}
	for i, name := range []string{"median", "min", "max"} {
		fmt.Fprintf(tw, "%s\t%s\t\n", name, strings.Join(rows[i], "\t"))
	}
	tw.Flush()
	out := outliers(byCol, 3.5)
	who := "none"
	if len(out) > 0 {
		who = rankLabels(t.ranks, out, 4)
	}
	ew.printf("  %d ranks summarised (--ranks all lists each); outliers by %s: %s\n", len(t.ranks), t.outlierWhat, who)
}

// newTable is the summary's right-aligned table writer.
func newTable(ew *errWriter) *tabwriter.Writer { return ew.table(tabwriter.AlignRight) }

// table is a table writer over ew whose rows are cut, never wrapped, to
// the summary's width (flags: tabwriter's).
func (e *errWriter) table(flags uint) *tabwriter.Writer {
	return tabwriter.NewWriter(tableWriter{e}, 2, 4, 2, ' ', flags)
}

// tableWriter writes a table's rows through the errWriter in cut mode.
type tableWriter struct{ e *errWriter }

func (t tableWriter) Write(p []byte) (int, error) {
	if ww := t.e.wrap; ww != nil {
		ww.cut = true
		defer func() { ww.cut = false }()
	}
	return t.e.Write(p)
}

// line writes one line cut, never wrapped, to the summary's width (a
// section's one-line summary).
func (e *errWriter) line(format string, args ...any) {
	tw := tableWriter{e}
	fmt.Fprintf(tw, e.t(format), e.phrases(args)...)
}

// MaxFixLines is how many terminal lines a finding's fix shows in the
// summary (fixHead); --detail all shows the whole fix.
const MaxFixLines = 4

// fixHead is the first lines of a fix as the summary shows them, indented
// by indent: the opening lines through the first command block (the
// indented lines: flags, exports, bullets), within MaxFixLines wrapped
// lines. A command line is never cut: the block's first line is shown when
// it starts within the budget, and the block may run two lines over it. A
// line that introduces a block (ends in ":") is dropped when the block is
// not shown. rest is how many of the fix's lines are left out.
func fixHead(fix, indent string, width int) (head []string, rest int) {
	lines := strings.Split(strings.TrimSpace(fix), "\n")
	used, inBlock := 0, false
	for _, l := range lines {
		cmd := strings.HasPrefix(l, " ")
		if inBlock && !cmd {
			break // the first command block ended
		}
		n := strings.Count(wrapLine(indent+l, width), "\n") + 1
		fits := used+n <= MaxFixLines
		switch {
		case cmd && !inBlock:
			fits = used < MaxFixLines
		case cmd:
			fits = used+n <= MaxFixLines+2
		}
		if len(head) > 0 && !fits {
			break
		}
		head, used, inBlock = append(head, l), used+n, cmd
	}
	if k := len(head); k > 1 && k < len(lines) && (strings.HasSuffix(head[k-1], ":") || strings.HasSuffix(head[k-1], "：")) && !strings.HasPrefix(head[k-1], " ") {
		head = head[:k-1]
	}
	return head, len(lines) - len(head)
}

// MaxFixLineRunes is the longest line of a fix's source the summary
// shows whole; a longer one is cut, ending in "…", and the summary's note
// points to --detail all, which shows it whole (reflow).
const MaxFixLineRunes = 300

// fitLine is s cut (ending in "…") so that head+s+tail fits width
// columns: the summary's one-line provenance of a fact or the workload
// (--detail all shows it whole). s is kept whole when head and tail
// leave it fewer than 20 columns.
func fitLine(head, s, tail string, width int) string {
	room := width - DisplayWidth(head) - DisplayWidth(tail)
	if DisplayWidth(s) <= room || room < 20 {
		return s
	}
	return Safe(s, fitRunes([]rune(s), room-1))
}

// reflow is a fix's text with the soft line breaks of its paragraphs
// joined, each source line Safe, cut to most runes (0: whole; the terminal
// wraps it), and whether a line was cut: a YAML text broken mid-sentence is
// wrapped once, to the terminal's width. A line ending a sentence (or a
// colon before a capital: a lower-case word or Chinese text after a colon
// goes on with its sentence), a blank line, an indented line (a command),
// a list item and a diff line keep their breaks.
func reflow(fix string, most int) (string, bool) {
	lines := strings.Split(strings.TrimSpace(fix), "\n")
	out := make([]string, 0, len(lines))
	cut := false
	for i, l := range lines {
		cut = cut || (most > 0 && utf8.RuneCountInString(l) > most)
		l = Safe(l, most)
		if i > 0 && softBreak(lines[i-1], lines[i]) {
			prev := out[len(out)-1]
			sep := " "
			if a, b := []rune(prev), []rune(l); isWide(a[len(a)-1]) && isWide(b[0]) {
				sep = "" // Chinese text runs on without a space
			}
			out[len(out)-1] = prev + sep + l
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n"), cut
}

// softBreak reports whether the break between two lines of a fix falls
// inside a paragraph's sentence.
func softBreak(prev, next string) bool {
	if !prose(prev) || !prose(next) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(strings.TrimRight(prev, " "))
	first, _ := utf8.DecodeRuneInString(next)
	switch {
	case strings.ContainsRune(".!?。！？", last):
		return false
	case strings.ContainsRune(":：", last):
		// a lower-case word, or Chinese text (which has no capitals), goes
		// on with the colon's sentence
		return unicode.IsLower(first) || (last == '：' && isWide(first))
	}
	return true
}

// prose reports whether line is paragraph text: not blank, not indented,
// not a list item, a diff line or a fence.
func prose(line string) bool {
	if strings.TrimSpace(line) == "" || line[0] == ' ' || line[0] == '\t' {
		return false
	}
	for _, p := range []string{"- ", "* ", "+", "-", "@@", "```", "• "} {
		if strings.HasPrefix(line, p) {
			return false
		}
	}
	i := strings.IndexFunc(line, func(r rune) bool { return !unicode.IsDigit(r) })
	return i <= 0 || !strings.HasPrefix(line[i:], ". ") // a numbered item
}
