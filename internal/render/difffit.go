package render

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
)

// fitSpec is how a table of the terminal diff gives way when its rows are
// wider than the terminal (fitTable).
type fitSpec struct {
	// indent opens each row (the header format carries its own).
	indent string
	// trail: every cell ends in a tab (a right-aligned table), the partial
	// tag after the last; else the tag follows the last cell.
	trail bool
	// name is the column whose cells too wide for the room the others
	// leave take a line of their own above their row; -1: none.
	name int
	// give are the columns that leave the table, the first first, each
	// row's cells of them then written on a line below it.
	give []int
}

// fitTable writes a table of the terminal diff: head its header format
// (tab-separated, translated whole), rows the cells of each row and tags
// the partial tag after each (tail; "" none), translated like ew.tf's
// arguments. Off a terminal the table is the rows as they are. On one,
// a table whose rows are wider than the terminal gives way, as spec says,
// until they fit: a name too long for its column goes on a line above its
// row, and the cells of a column that left go on a line below it, "header:
// cell" (those lines wrap, never cut); a row that still does not fit is cut
// with "…".
func (e *errWriter) fitTable(flags uint, head string, rows [][]string, tags []string, spec fitSpec) {
	for i, r := range rows {
		args := make([]any, len(r)+1)
		for j, c := range r {
			args[j] = c
		}
		args[len(r)] = tags[i]
		args = e.phrases(args)
		for j := range r {
			r[j] = args[j].(string)
		}
		tags[i] = args[len(r)].(string)
	}
	if e.wrap == nil {
		tw := e.table(flags)
		e.tf(tw, head)
		end := ""
		if spec.trail {
			end = "\t"
		}
		for i, r := range rows {
			fmt.Fprint(tw, spec.indent+strings.Join(r, "\t")+end+tags[i]+"\n")
		}
		tw.Flush()
		return
	}
	h := e.t(head)
	hIndent := h[:len(h)-len(strings.TrimLeft(h, " "))]
	heads := strings.Split(strings.TrimSuffix(strings.TrimSuffix(h[len(hIndent):], "\n"), "\t"), "\t")
	cols := make([]int, len(heads))
	for i := range cols {
		cols[i] = i
	}
	var l fitLayout
	for k := 0; ; k++ {
		l = e.layTable(flags, hIndent, heads, rows, tags, spec, cols, -1)
		if l.widest <= e.width {
			break
		}
		if spec.name >= 0 {
			// the room the other cells leave the name (its header's
			// width at least)
			hw := DisplayWidth(heads[spec.name])
			empty := e.layTable(flags, hIndent, heads, rows, tags, spec, cols, hw)
			if capped := e.layTable(flags, hIndent, heads, rows, tags, spec, cols, max(hw, e.width-empty.widest+hw)); capped.widest <= e.width {
				l = capped
				break
			}
		}
		if k == len(spec.give) {
			break // cut, as any table row wider than the terminal
		}
		cols = without(cols, spec.give[k])
	}
	nameIndent := spec.indent
	if nameIndent == "" {
		nameIndent = "  "
	}
	for i, line := range l.lines {
		if i > 0 && l.above[i-1] != "" {
			fmt.Fprint(e, nameIndent+l.above[i-1]+"\n")
		}
		fmt.Fprint(tableWriter{e}, line+"\n")
		if i > 0 {
			for _, b := range l.below[i-1] {
				fmt.Fprint(e, "      "+b+"\n")
			}
		}
	}
}

// fitLayout is a table laid out: its lines (the header's first), each
// row's line above it ("" none) and lines below it, and the widest line.
type fitLayout struct {
	lines, above []string
	below        [][]string
	widest       int
}

// layTable lays the table out with the columns cols, the name column's
// cells wider than nameCap (-1: any width) above their rows.
func (e *errWriter) layTable(flags uint, hIndent string, heads []string, rows [][]string, tags []string, spec fitSpec, cols []int, nameCap int) fitLayout {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 2, 4, 2, ' ', flags)
	end := ""
	if spec.trail {
		end = "\t"
	}
	fmt.Fprint(tw, hIndent+strings.Join(pickStr(heads, cols), "\t")+end+"\n")
	last := cols[len(cols)-1] == len(heads)-1
	l := fitLayout{above: make([]string, len(rows)), below: make([][]string, len(rows))}
	sep, semi := ": ", "; "
	if e.l.zh {
		sep, semi = "：", "；"
	}
	for i, r := range rows {
		cells := pickStr(r, cols)
		for j, c := range cols {
			if c == spec.name && nameCap >= 0 && DisplayWidth(cells[j]) > nameCap {
				l.above[i], cells[j] = cells[j], ""
			}
		}
		var moved []string
		for c := range heads {
			if !slices.Contains(cols, c) {
				moved = append(moved, heads[c]+sep+r[c])
			}
		}
		tag := tags[i]
		if !last {
			// one line, or one per cell when that is wider than the terminal
			moved[len(moved)-1] += tag
			if one := strings.Join(moved, semi); 6+DisplayWidth(one) <= e.width {
				moved = []string{one}
			}
			l.below[i], tag = moved, ""
		}
		fmt.Fprint(tw, spec.indent+strings.Join(cells, "\t")+end+tag+"\n")
	}
	tw.Flush()
	l.lines = strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	for _, line := range l.lines {
		l.widest = max(l.widest, DisplayWidth(strings.TrimRight(line, " ")))
	}
	return l
}

// pickStr is the cells of row at cols.
func pickStr(row []string, cols []int) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = row[c]
	}
	return out
}

// without is cols without c.
func without(cols []int, c int) []int {
	var out []int
	for _, x := range cols {
		if x != c {
			out = append(out, x)
		}
	}
	return out
}
