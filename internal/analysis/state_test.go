package analysis

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/pipeline/gather"
	"github.com/npuprof/npuprof/internal/testutil"
)

// A rank's state (what `npuprof export` writes for the merge) decodes to
// the rank's results: the record field for field, and every pass's result
// equal but for the caches a result rebuilds (the replay line's op
// classes and copy-on-write flags, the wait pairs' name table, which the
// released model's waits indexed). The groups are the caller's, shared;
// a pass the caller does not keep is not decoded.
func TestStateRoundTrip(t *testing.T) {
	dir, _ := testutil.GenerateTiny(t)
	set, err := gather.Models(context.Background(), dir, gather.Options{})
	require.NoError(t, err)
	for _, r := range set.Ranks {
		rr := AnalyzeRank(r)
		rr.ReleaseModel()
		st, err := EncodeState(rr)
		require.NoError(t, err)
		got, err := DecodeState(st, rr.Groups, nil)
		require.NoError(t, err)
		require.Equal(t, rr.Metrics, got.Metrics)
		require.Equal(t, rr.Unavailable, got.Unavailable)
		require.Equal(t, rr.Sources.Map(), got.Sources.Map())
		require.Equal(t, rr.Warnings, got.Warnings)
		require.Equal(t, rr.Env, got.Env)
		require.Equal(t, rr.Groups, got.Groups)
		require.Equal(t, len(rr.results), len(got.results))
		for i, e := range rr.results {
			g := got.results[i]
			require.Equal(t, e.pass, g.pass)
			switch e.pass {
			case ReplayPass, WaitPairPass:
				require.Equal(t, reflect.TypeOf(e.res), reflect.TypeOf(g.res), e.pass.Name)
			default:
				require.Equal(t, e.res, g.res, "rank %d, pass %s", rr.Rank, e.pass.Name)
			}
		}
		require.Equal(t, CollectivesOf(rr).Ops, CollectivesOf(got).Ops)
		require.Equal(t, CollectivesOf(rr).N, CollectivesOf(got).N)
		require.Equal(t, ReplayOf(rr).StepItems(0), ReplayOf(got).StepItems(0))

		lean, err := DecodeState(st, rr.Groups, func(p *Pass) bool { return p != TimelineSamplePass })
		require.NoError(t, err)
		require.Nil(t, TimelineSampleOf(lean))
		require.NotNil(t, TimelineSampleOf(got))
	}
}
