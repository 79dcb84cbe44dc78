package traceview

import "testing"

// hasTransportKey finds the key wherever it is, and only the key.
func TestHasTransportKey(t *testing.T) {
	for args, want := range map[string]bool{
		`{"transport type": "LOCAL"}`:                        true,
		`{"task type": "Notify_Wait", "transport type":"X"}`: true,
		`"transport type"`:                                   true,
		`{"transport typeize(Byte)": 1}`:                     false,
		`{"transport pype": "LOCAL", "data type": "y"}`:      false,
		`{"alg_type": "MESH", "data_type": "BFP16"}`:         false,
		`transport type"`:                                    false,
		`y`:                                                  false,
		``:                                                   false,
	} {
		if got := hasTransportKey([]byte(args)); got != want {
			t.Errorf("%s: %v, want %v", args, got, want)
		}
	}
}

// hasCtrl finds a byte below 0x20 anywhere, in a word or the tail, and
// nothing else (not 0x20, 0x7f or bytes of 0x80 and above).
func TestHasCtrl(t *testing.T) {
	for i := 0; i < 20; i++ {
		for _, c := range []byte{0, 5, '\t', 0x1f} {
			b := []byte("AI_VECTOR_CORE_AI_CORE")[:i+1]
			b[i] = c
			if !hasCtrl(string(b)) {
				t.Errorf("%q: no control byte found", b)
			}
		}
	}
	for _, s := range []string{"", " ", "AI_VECTOR_CORE", "hcom_allGather__115_0_1", "\x7f\x80\xff\xf0 !~", "中文名字 with spaces"} {
		if hasCtrl(s) {
			t.Errorf("%q: a control byte found", s)
		}
	}
}
