package analysis

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// Two ranks' copies of one kernel name come back as one string, a clone
// of neither (a model's string may share an arena with others).
func TestKeepNameOneCopy(t *testing.T) {
	a := strings.Repeat("MatMulV2_keep_test", 2)
	b := strings.Repeat("MatMulV2_keep_test", 2)
	at := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	require.NotEqual(t, at(a), at(b))
	ka, kb := keepName(a), keepName(b)
	require.Equal(t, a, ka)
	require.Equal(t, at(ka), at(kb))
	require.NotEqual(t, at(a), at(ka))
}
