package main

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// progressLine is the one line drawn on standard error (a terminal, no
// --quiet) while ranks are read: the bytes read over all ranks and the
// ranks finished, redrawn in place every tick and after each rank, so it
// moves while a single large rank is read. It appears only once the work
// has run for the streams' progress delay, and is erased when it ends.
type progressLine struct {
	w     io.Writer
	read  atomic.Int64
	delay time.Duration
	start time.Time

	mu          sync.Mutex
	done, total int
	drawn       bool
	stop        chan struct{}
	ticks       sync.WaitGroup
}

// progressTick is how often the line is redrawn between ranks.
const progressTick = 200 * time.Millisecond

func newProgressLine(w io.Writer, delay time.Duration) *progressLine {
	p := &progressLine{w: w, delay: delay, start: time.Now(), stop: make(chan struct{})}
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
	p.done, p.total = done, total
	if done < total {
		p.draw()
	}
}

// draw writes the line when the delay has passed; p.mu is held.
func (p *progressLine) draw() {
	if time.Since(p.start) < p.delay || p.total == 0 && p.read.Load() == 0 {
		return
	}
	fmt.Fprintf(p.w, "\r%s\x1b[K", progressText(p.read.Load(), p.done, p.total))
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

// progressText is the progress line: bytes read over all ranks, and the
// ranks finished (their count is unknown until the first one ends).
func progressText(read int64, done, total int) string {
	ranks := "first rank in progress"
	if total > 0 {
		ranks = fmt.Sprintf("%d/%d ranks finished", done, total)
	}
	return fmt.Sprintf("reading profiles: %s read, %s", byteSize(read), ranks)
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
