package model

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Sources writes the bytes encoding/json writes for the map it replaces
// (sorted keys, HTML and invalid UTF-8 escaped), reads them back, and
// answers lookups like the map.
func TestSourcesLikeTheMap(t *testing.T) {
	m := map[string]string{
		"kernel.compute.time_us": "ASCEND_PROFILER_OUTPUT/trace_view.json",
		"steps":                  "ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
		"hccl.total.count":       "ASCEND_PROFILER_OUTPUT/trace_view.json",
		"a<b>&c":                 "dir\u2028with \"quotes\" and \xff",
		"empty":                  "",
		"tab\there, del\x7f":     "back\\slash/é",
	}
	s := NewSources(m)
	delete(m, "empty") // an empty file is no source
	want, err := json.Marshal(m)
	require.NoError(t, err)
	got, err := json.Marshal(s)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	wantIndent, _ := json.MarshalIndent(struct {
		S map[string]string `json:"sources,omitempty"`
	}{m}, "  ", "  ")
	gotIndent, _ := json.MarshalIndent(struct {
		S Sources `json:"sources,omitzero"`
	}{s}, "  ", "  ")
	require.Equal(t, string(wantIndent), string(gotIndent))

	require.Equal(t, 5, s.Len())
	require.Equal(t, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv", s.Get("steps"))
	_, ok := s.Lookup("empty")
	require.False(t, ok)
	require.Equal(t, "", s.Get("nope"))
	require.Equal(t, m, s.Map())

	var back Sources
	var wantBack map[string]string // \xff read back as U+FFFD
	require.NoError(t, json.Unmarshal(got, &back))
	require.NoError(t, json.Unmarshal(want, &wantBack))
	require.Equal(t, wantBack, back.Map())

	empty, _ := json.Marshal(struct {
		S Sources `json:"sources,omitzero"`
	}{NewSources(nil)})
	require.Equal(t, `{}`, string(empty))
}

// Two ranks with the same metrics share one name list, and keep only
// their own file indexes.
func TestSourcesShareNames(t *testing.T) {
	a := NewSources(map[string]string{"x.count": "rank0/trace_view.json", "x.time_us": "rank0/kernel_details.csv"})
	b := NewSources(map[string]string{"x.count": "rank1/trace_view.json", "x.time_us": "rank1/kernel_details.csv"})
	require.Same(t, &a.names[0], &b.names[0])
	require.Equal(t, "rank1/kernel_details.csv", b.Get("x.time_us"))
	require.Equal(t, "rank0/trace_view.json", a.Get("x.count"))
	c := NewSources(map[string]string{"x.count": "f", "y": "f"})
	require.NotSame(t, &a.names[0], &c.names[0])
	require.Equal(t, []string{"f"}, c.files)
}
