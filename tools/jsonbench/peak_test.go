package jsonbench

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// peakHeap samples the live heap every few milliseconds.
type peakHeap struct {
	max  atomic.Uint64
	done chan struct{}
	quit chan struct{}
}

func (p *peakHeap) start() {
	p.done, p.quit = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		var ms runtime.MemStats
		for {
			select {
			case <-p.quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > p.max.Load() {
				p.max.Store(ms.HeapAlloc)
			}
		}
	}()
}

func (p *peakHeap) stop() uint64 {
	close(p.quit)
	<-p.done
	return p.max.Load()
}

func appendFloat(b []byte, f float64) []byte { return strconv.AppendFloat(b, f, 'f', -1, 64) }
