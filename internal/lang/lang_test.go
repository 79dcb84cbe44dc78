package lang

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// LC_ALL, then LC_MESSAGES, then LANG: the first one set decides.
func TestFromLocale(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, EN},
		{map[string]string{"LANG": "zh_CN.UTF-8"}, ZH},
		{map[string]string{"LANG": "zh_TW.Big5"}, ZH},
		{map[string]string{"LANG": "en_US.UTF-8"}, EN},
		{map[string]string{"LANG": "C"}, EN},
		{map[string]string{"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, ZH},
		{map[string]string{"LC_ALL": "C", "LC_MESSAGES": "zh_CN.UTF-8"}, EN},
		{map[string]string{"LC_ALL": "zh_CN.GB18030", "LANG": "en_US.UTF-8"}, ZH},
		{map[string]string{"LC_CTYPE": "zh_CN.UTF-8"}, EN}, // the character set, not the messages
		{map[string]string{"LANG": "zhx"}, EN},
	} {
		require.Equal(t, c.want, FromLocale(func(k string) string { return c.env[k] }), "%v", c.env)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]string{"zh": ZH, "ZH": ZH, "en": EN, " en ": EN, "cn": ZH, "CN": ZH, "zh-CN": ZH} {
		got, err := Parse(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := Parse("fr")
	require.EqualError(t, err, `"fr": expected one of zh, en`)
	require.Equal(t, EN, Or(""))
	require.Equal(t, ZH, Or(ZH))
}
