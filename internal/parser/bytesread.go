package parser

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// Source.BytesRead counts the bytes the readers of a rank take from its
// files (on disk: a compressed file counts its compressed bytes), so a
// progress display moves while one large rank is read. internal/pipeline/gather
// hands the counter to each Source; parseRank registers it for the rank it
// builds, and the readers (withFile, readTrace) find it by that rank.
var rankCounters sync.Map // *model.Rank -> *atomic.Int64

// counting registers n as r's counter until the returned func runs.
func counting(r *model.Rank, n *atomic.Int64) func() {
	if n == nil {
		return func() {}
	}
	rankCounters.Store(r, n)
	return func() { rankCounters.Delete(r) }
}

// counterOf is r's counter, nil when nothing counts.
func counterOf(r *model.Rank) *atomic.Int64 {
	if v, ok := rankCounters.Load(r); ok {
		return v.(*atomic.Int64)
	}
	return nil
}

// countedReaderAt adds what it reads to n.
type countedReaderAt struct {
	r io.ReaderAt
	n *atomic.Int64
}

func (c countedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	k, err := c.r.ReadAt(p, off)
	c.n.Add(int64(k))
	return k, err
}
