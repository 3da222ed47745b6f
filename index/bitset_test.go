package index

import (
	"math/rand/v2"
	"testing"
)

func TestCopyBits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		srcLen, dstLen := 1+r.IntN(400), 1+r.IntN(400)
		src := newBitset(srcLen)
		for i := range src {
			src[i] = r.Uint64()
		}
		from, to := r.IntN(srcLen), r.IntN(dstLen)
		n := r.IntN(min(srcLen-from, dstLen-to) + 1)
		dst := newBitset(dstLen)
		copyBits(dst, to, src, from, n)
		for i := range dstLen {
			want := i >= to && i < to+n && src[(from+i-to)>>6]&(1<<(uint(from+i-to)&63)) != 0
			if got := dst[i>>6]&(1<<(uint(i)&63)) != 0; got != want {
				t.Fatalf("copyBits(to %d, from %d, n %d): bit %d = %v; want %v", to, from, n, i, got, want)
			}
		}
	}
}
