package jsonstr_test

import (
	"testing"

	"marquee/jsonstr"
)

// Inputs like the ones the event paths escape: a browser User-Agent (plain
// ASCII, the common case), and text with quotes, controls and non-ASCII.
var benchInputs = []struct{ name, s string }{
	{"user-agent", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36"},
	{"mixed", "Ünïcödé \"quoted\" text\twith\ncontrols, 中文 and emoji 😀 — then a long plain ASCII tail of thirty"},
}

func BenchmarkAppend(b *testing.B) {
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			s := []byte(in.s)
			dst := make([]byte, 0, 4*len(s))
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = jsonstr.Append(dst[:0], s)
			}
		})
	}
}

// Append into a buffer with room allocates nothing: the event paths call
// it into pooled buffers for every request.
func TestAppendAllocatesNothing(t *testing.T) {
	for _, in := range benchInputs {
		s := []byte(in.s)
		dst := make([]byte, 0, 4*len(s))
		if n := testing.AllocsPerRun(100, func() { dst, _ = jsonstr.Append(dst[:0], s) }); n != 0 {
			t.Errorf("Append(%s) allocates %v times a call; want 0", in.name, n)
		}
	}
}
