package walkref

import (
	"strings"
	"testing"
	"testing/iotest"
)

func TestEvents(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{`[]`, 0},
		{`[{"a": 1}]`, 1},
		{`[{"a": {"b": {}}}, {"c": [1, {"d": 2}]}]`, 2},
		{`[{"name": "x}, {\"y"}, {"name": "\\"}, {"n": "{"}]`, 3},
		{`[{"a": "\\\"}"}, {}]`, 2},
	} {
		// one byte at a time as well: state must carry across reads
		for _, r := range []string{"whole", "bytes"} {
			rd := strings.NewReader(tc.in)
			var got int64
			var err error
			if r == "bytes" {
				got, err = Events(iotest.OneByteReader(rd))
			} else {
				got, err = Events(rd)
			}
			if err != nil || got != tc.want {
				t.Errorf("%s %q: got %d, %v; want %d", r, tc.in, got, err, tc.want)
			}
		}
	}
}

func TestEventsReadError(t *testing.T) {
	if _, err := Events(iotest.ErrReader(iotest.ErrTimeout)); err == nil {
		t.Fatal("a read error must be returned")
	}
}
