package model

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every value reads back as appended: µs from the block's base in 4
// bytes while they fit, the column wide from the first that does not.
func TestNsColumnExact(t *testing.T) {
	epoch := int64(1763604000123456000)
	cases := []struct {
		name string
		vals []int64
		wide bool
	}{
		{"times", []int64{epoch, epoch + 1_250_000, NoServiceValue, epoch - 3_000, epoch + 34*60e9}, false},
		{"durations", []int64{12_345_000, 0, NoServiceValue, 7_000, 2_147_483_647_000}, false},
		{"unmeasured first", []int64{NoServiceValue, NoServiceValue, 5_000, 9_000}, false},
		{"below the microsecond", []int64{epoch, epoch + 1_250_001, epoch + 7_000}, true},
		{"36 minutes from the base", []int64{epoch, epoch + 36*60e9, epoch + 1_000}, true},
		{"int32 edge", []int64{0, math.MinInt32 * 1000, 5_000}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var col NsColumn
			col.Grow(len(c.vals))
			for _, v := range c.vals {
				col.Append(v)
			}
			require.Equal(t, c.vals, col.Values())
			require.Equal(t, c.wide, col.Wide())
			require.Equal(t, len(c.vals), col.Len())
		})
	}
}

// A new block has its own base: times hours apart stay 4 bytes a value
// when each block of nsBlock values spans less than 35 minutes.
func TestNsColumnBlocks(t *testing.T) {
	var col NsColumn
	const n = 3*nsBlock + 17
	col.Grow(n)
	us := &col.us[:1][0]
	want := make([]int64, n)
	for i := range want {
		want[i] = 1763604000000000000 + int64(i)*400_000_000 // 0.4 s apart: 10 hours in all
		if i%97 == 0 {
			want[i] = NoServiceValue
		}
		col.Append(want[i])
	}
	require.False(t, col.Wide())
	require.Equal(t, want, col.Values())
	require.Same(t, us, &col.us[0], "sized once")
}
