package parser

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/parser/model"
)

// readAll reads every source Detect finds under path, one after the
// other and in Detect's order, with opts' BytesRead: what this package
// offers (detection, reading one rank); numbering and deduplicating the
// ranks is internal/pipeline/gather's, tested there.
func readAll(t testing.TB, path string, bytesRead ...*atomic.Int64) []*model.Rank {
	t.Helper()
	srcs, err := Detect(path)
	require.NoError(t, err)
	out := make([]*model.Rank, len(srcs))
	for i, src := range srcs {
		if len(bytesRead) > 0 {
			src.BytesRead = bytesRead[0]
		}
		out[i], err = ParseRank(src)
		require.NoError(t, err, src.Root)
	}
	return out
}
