package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The progress line, on a fake terminal: bytes read over all ranks and the
// ranks finished, redrawn in place; nothing before the delay; erased at
// the end only when drawn.
func TestProgressLine(t *testing.T) {
	require.Equal(t, "reading profiles: 1.50 GB read, 3/64 ranks finished", progressText(3<<29, 3, 64))
	require.Equal(t, "reading profiles: 512 B read, first rank in progress", progressText(512, 0, 0))
	require.Equal(t, "reading profiles: 2.0 KB read, 0/1 ranks finished", progressText(2048, 0, 1))
	require.Equal(t, "12.3 MB", byteSize(12900000))

	var w bytes.Buffer
	p := newProgressLine(&w, 0)
	p.read.Store(5 << 20)
	p.rankDone(1, 4, "r1")
	p.read.Store(7 << 20)
	p.rankDone(2, 4, "r2")
	p.rankDone(4, 4, "r4") // the last rank: nothing to draw, the line goes
	p.finish()
	require.Equal(t, "\rreading profiles: 5.0 MB read, 1/4 ranks finished\x1b[K"+
		"\rreading profiles: 7.0 MB read, 2/4 ranks finished\x1b[K\r\x1b[K", w.String())

	// one large rank: the ticks redraw the bytes before any rank ends
	w.Reset()
	p = newProgressLine(&w, 0)
	p.read.Store(300 << 20)
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.drawn
	}, 5*time.Second, 10*time.Millisecond)
	p.finish()
	require.Contains(t, w.String(), "\rreading profiles: 300.0 MB read, first rank in progress\x1b[K")

	w.Reset()
	p = newProgressLine(&w, time.Hour)
	p.read.Store(1 << 30)
	p.rankDone(1, 2, "r1")
	p.finish()
	require.Empty(t, w.String(), "quick work draws nothing")
}
