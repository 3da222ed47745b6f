package jsonstr

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// plain8 agrees with the byte table on every byte value in every position.
func TestPlain8(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			var w [8]byte
			for i := range w {
				w[i] = 'a'
			}
			w[pos] = byte(c)
			if got, want := plain8(binary.LittleEndian.Uint64(w[:])), plainASCII[c]; got != want {
				t.Fatalf("plain8 with byte %#x at %d = %v; want %v", c, pos, got, want)
			}
		}
	}
}

// And on random words, where borrows between neighbouring bytes could fool
// a wrong formula.
func TestPlain8Random(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	specials := []byte{0, 0x1f, 0x20, '"', '!', '#', '\\', '[', ']', 0x7f, 0x80, 0xff, 'a'}
	for range 200_000 {
		var w [8]byte
		want := true
		for i := range w {
			if r.IntN(2) == 0 {
				w[i] = specials[r.IntN(len(specials))]
			} else {
				w[i] = byte(r.IntN(256))
			}
			want = want && plainASCII[w[i]]
		}
		if got := plain8(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("plain8(% x) = %v; want %v", w, got, want)
		}
	}
}
