package render

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/results/metric"
)

// echartsHeatData is a heatmap's data as the report wrote it through
// go-echarts: []opts.HeatMapData encoded, decoded into maps (finish's round
// trip) and encoded again.
func echartsHeatData(t *testing.T, cells [][4]float64) []byte {
	data := make([]opts.HeatMapData, len(cells))
	for i, c := range cells {
		data[i] = opts.HeatMapData{Value: []any{int(c[0]), int(c[1]), c[2], c[3]}}
	}
	bs, err := json.Marshal(data)
	require.NoError(t, err)
	var decoded any
	require.NoError(t, json.Unmarshal(bs, &decoded))
	bs, err = json.Marshal(decoded)
	require.NoError(t, err)
	return bs
}

// The heatmap cells written without go-echarts are the bytes go-echarts
// and the map round trip wrote, numbers in encoding/json's every format.
func TestHeatCellsSameAsGoEcharts(t *testing.T) {
	cells := [][4]float64{
		{0, 0, 1, 1}, {1, 2047, 0.75, 123456.789}, {12, 3, 1.25, 1e-7}, {2, 5, 0.01, 1e21},
		{3, 6, -0.5, 2.5e-9}, {4, 7, 0, 9.99e20}, {5, 8, 1e-6, -1e22}, {6, 9, math.SmallestNonzeroFloat64, math.MaxFloat64},
		{7, 10, 100, 1e100}, {8, 11, 1.0000000000000002, 3e-300},
	}
	var h heatCells
	for _, c := range cells {
		h.add(int(c[0]), int(c[1]), c[2], c[3])
	}
	require.Equal(t, string(echartsHeatData(t, cells)), string(h.json()))
	var none heatCells
	require.Equal(t, "[]", string(none.json()))
	require.Panics(t, func() { h.add(0, 0, math.NaN(), 1) })
	require.Panics(t, func() { h.add(0, 0, 1, math.Inf(-1)) })
}

// The rank-skew heatmap's option holds its cells as their encoding, not
// as decoded maps of boxed numbers (~12 MiB at 2048 ranks), and its payload
// is the bytes of the go-echarts encoding of the same cells.
func TestSkewChartCellsEncodedOnce(t *testing.T) {
	var rms []rankMetrics
	for r := range 40 {
		rms = append(rms, rankMetrics{rank: r, m: map[string]float64{
			metric.MetricDeviceWindowUs: 1000 + float64(r*r)/3,
			metric.MetricFreeUs:         float64(r%7) * 0.1,
			metric.MetricHCCLTotalUs:    1e-7 * float64(r+1),
		}})
	}
	c := skewChart(rms)
	require.NotNil(t, c)
	series := listOf(c.Option["series"])
	require.Len(t, series, 1)
	raw, ok := series[0]["data"].(json.RawMessage)
	require.True(t, ok, "the cells are held as %T, not their encoding", series[0]["data"])

	var items []struct{ Value [4]float64 }
	require.NoError(t, json.Unmarshal(raw, &items))
	require.Len(t, items, 40*3)
	cells := make([][4]float64, len(items))
	for i, it := range items {
		cells[i] = it.Value
	}
	var decoded any
	require.NoError(t, json.Unmarshal(echartsHeatData(t, cells), &decoded))
	ref := &chartPayload{ID: c.ID, Kind: c.Kind, Option: map[string]any{}}
	for k, v := range c.Option {
		ref.Option[k] = v
	}
	refSeries := map[string]any{}
	for k, v := range series[0] {
		refSeries[k] = v
	}
	refSeries["data"] = decoded
	ref.Option["series"] = []any{refSeries}
	ref.seal()
	c.seal()
	require.Equal(t, string(ref.sealed), string(c.sealed))
}

// groupKey is the key fmt.Sprint made, so the group rows keep their order.
func TestGroupKeySameAsSprint(t *testing.T) {
	for _, members := range [][]int{nil, {}, {0}, {3, 1, 2}, {-1, 2047, 10}} {
		require.Equal(t, "dp\x00"+fmt.Sprint(members), string(groupKey([]byte("x"), "dp", members)[1:]))
	}
}
