package main

import (
	"bytes"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/render"

	"github.com/npuprof/npuprof/internal/lang"
)

// The progress line, on a fake terminal: bytes read over all ranks and the
// ranks finished, redrawn in place; nothing before the delay; erased at
// the end only when drawn.
func TestProgressLine(t *testing.T) {
	require.Equal(t, "reading profiles: 3/64 ranks, 1.50 GB read", progressText(3<<29, 0, 3, 64, 0))
	require.Equal(t, "reading profiles: first rank in progress, 512 B read", progressText(512, 0, 0, 0, 0))
	require.Equal(t, "reading profiles: 0/1 ranks, 2.0 KB read", progressText(2048, 0, 0, 1, 0))
	require.Equal(t, "12.3 MB", byteSize(12900000))
	// with the total: X of Y in Y's unit, and the time left from the share read
	require.Equal(t, "reading profiles: 16/64 ranks, 1.50 of 6.00 GB, 30s left", progressText(3<<29, 12<<29, 16, 64, 10*time.Second))
	require.Equal(t, "reading profiles: 16/64 ranks, 256.0 of 1024.0 MB, 3m00s left", progressText(256<<20, 1<<30-1, 16, 64, time.Minute))
	// more read than counted (a file the total missed): the ranks' share
	require.Equal(t, "reading profiles: 1/4 ranks, 2.0 KB read, 3s left", progressText(2048, 1024, 1, 4, time.Second+time.Millisecond))
	// cut to the terminal, one column short
	require.Equal(t, "reading profiles: 16/64 ranks, 1.50 of…", cutTo(progressText(3<<29, 12<<29, 16, 64, 10*time.Second), 40))
	require.Equal(t, 39, utf8.RuneCountInString(cutTo(progressText(3<<29, 12<<29, 16, 64, 10*time.Second), 40)))

	// in Chinese (a zh locale), cut by display width
	zh := progressIn(lang.ZH, progressText(3<<29, 12<<29, 16, 64, 10*time.Second))
	require.Equal(t, "读取 profile：16/64 个 rank，已读 1.50 / 6.00 GB，剩余 30s", zh)
	require.Equal(t, "读取 profile：正在读取第一个 rank，已读 512 B", progressIn(lang.ZH, progressText(512, 0, 0, 0, 0)))
	require.Equal(t, 39, render.DisplayWidth(cutTo(zh, 40)), cutTo(zh, 40))

	var w bytes.Buffer
	p := newProgressLine(&w, 0, 0)
	p.read.Store(5 << 20)
	p.rankDone(1, 4, "r1")
	p.read.Store(7 << 20)
	p.rankDone(2, 4, "r2")
	p.rankDone(4, 4, "r4") // the last rank: nothing to draw, the line goes
	p.finish()
	require.Equal(t, "\rreading profiles: 1/4 ranks, 5.0 MB read\x1b[K"+
		"\rreading profiles: 2/4 ranks, 7.0 MB read\x1b[K\r\x1b[K", w.String())

	// one large rank: the ticks redraw the bytes before any rank ends
	w.Reset()
	p = newProgressLine(&w, 0, 0)
	p.read.Store(300 << 20)
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.drawn
	}, 5*time.Second, 10*time.Millisecond)
	p.finish()
	require.Contains(t, w.String(), "\rreading profiles: first rank in progress, 300.0 MB read\x1b[K")

	w.Reset()
	p = newProgressLine(&w, time.Hour, 0)
	p.read.Store(1 << 30)
	p.rankDone(1, 2, "r1")
	p.finish()
	require.Empty(t, w.String(), "quick work draws nothing")
}
