package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/npuprof/npuprof/internal/lang"
	"github.com/npuprof/npuprof/internal/render"
)

// progressLine is the one line drawn on standard error (a terminal, no
// --quiet) while ranks are read: the bytes read over all ranks and the
// ranks finished, redrawn in place every tick and after each rank, so it
// moves while a single large rank is read. It appears only once the work
// has run for the streams' progress delay, and is erased when it ends.
type progressLine struct {
	w     io.Writer
	read  atomic.Int64
	total atomic.Int64 // the bytes to read (gather's BytesTotal); 0: unknown
	delay time.Duration
	start time.Time
	width int // the terminal's columns; 0: 100
	// lang is the line's language (the locale's: lang.ZH writes Chinese)
	lang string

	mu          sync.Mutex
	done, ranks int
	drawn       bool
	stop        chan struct{}
	ticks       sync.WaitGroup
}

// progressTick is how often the line is redrawn between ranks.
const progressTick = 200 * time.Millisecond

func newProgressLine(w io.Writer, delay time.Duration, width int) *progressLine {
	p := &progressLine{w: w, delay: delay, start: time.Now(), stop: make(chan struct{}), width: width}
	p.ticks.Add(1)
	go func() {
		defer p.ticks.Done()
		t := time.NewTicker(progressTick)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.draw()
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// rankDone is the pipeline's Progress callback.
func (p *progressLine) rankDone(done, total int, _ string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.ranks = done, total
	if done < total {
		p.draw()
	}
}

// draw writes the line when the delay has passed; p.mu is held.
func (p *progressLine) draw() {
	if time.Since(p.start) < p.delay || p.ranks == 0 && p.read.Load() == 0 {
		return
	}
	line := progressIn(p.lang, progressText(p.read.Load(), p.total.Load(), p.done, p.ranks, time.Since(p.start)))
	fmt.Fprintf(p.w, "\r%s\x1b[K", cutTo(line, p.width))
	p.drawn = true
}

// finish stops the ticks and erases the line if it was drawn.
func (p *progressLine) finish() {
	close(p.stop)
	p.ticks.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// progressText is the progress line: the ranks finished of all (before
// the first one ends their count is unknown), the bytes read of all (when
// their total is known) and the time left, from the share of the bytes
// read or, without it, of the ranks finished.
func progressText(read, total int64, done, ranks int, elapsed time.Duration) string {
	parts := []string{"first rank in progress"}
	if ranks > 0 {
		parts[0] = fmt.Sprintf("%d/%d ranks", done, ranks)
	}
	frac := 0.0
	if total > 0 && read <= total {
		parts = append(parts, bytesOf(read, total))
		frac = float64(read) / float64(total)
	} else {
		parts = append(parts, byteSize(read)+" read")
	}
	if frac == 0 && ranks > 0 {
		frac = float64(done) / float64(ranks)
	}
	if frac > 0.01 && frac < 1 && elapsed > time.Second {
		left := time.Duration(float64(elapsed) * (1 - frac) / frac)
		parts = append(parts, shortDuration(left)+" left")
	}
	return "reading profiles: " + strings.Join(parts, ", ")
}

// progressIn is the progress line in language l: in Chinese each of its
// parts by zhProgress.
func progressIn(l, line string) string {
	rest, ok := strings.CutPrefix(line, "reading profiles: ")
	if l != lang.ZH || !ok {
		return line
	}
	parts := strings.Split(rest, ", ")
	for i, s := range parts {
		parts[i] = lang.TranslateWith(zhProgress(), s)
	}
	return "读取 profile：" + strings.Join(parts, "，")
}

// zhProgress is the Chinese of the progress line's parts.
var zhProgress = lang.CatalogOf(zhFiles, "zh/progress.txt")

// bytesOf is "X of Y MB": both in the unit of the total.
func bytesOf(read, total int64) string {
	unit := byteSize(total)
	i := strings.LastIndexByte(unit, ' ')
	scale := map[string]float64{"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[unit[i+1:]]
	if unit[i+1:] == "B" {
		return fmt.Sprintf("%d of %s", read, unit)
	}
	prec := 1
	if unit[i+1:] == "GB" {
		prec = 2
	}
	return fmt.Sprintf("%.*f of %s", prec, float64(read)/scale, unit)
}

// shortDuration is d rounded for people: 45s, 3m20s, 1h05m.
func shortDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}

// cutTo is line within a terminal of width columns (0: 100), one column
// short of it so the terminal never wraps the line it redraws.
func cutTo(line string, width int) string {
	if width <= 0 {
		width = 100
	}
	if render.DisplayWidth(line) < width {
		return line
	}
	// a Chinese character takes two columns
	w := 0
	for i, r := range line {
		if w += render.DisplayWidth(string(r)); w > max(width-2, 1) {
			return line[:i] + "…"
		}
	}
	return line
}

// byteSize prints n bytes in B, KB, MB or GB (powers of 1024).
func byteSize(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return fmt.Sprintf("%d B", n)
	case n < k*k:
		return fmt.Sprintf("%.1f KB", float64(n)/k)
	case n < k*k*k:
		return fmt.Sprintf("%.1f MB", float64(n)/(k*k))
	}
	return fmt.Sprintf("%.2f GB", float64(n)/(k*k*k))
}
