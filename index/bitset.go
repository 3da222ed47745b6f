package index

// bitset is a fixed-size set of positions in a Snapshot, 64 to a word. A nil
// bitset is the empty set.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int) { b[i>>6] |= 1 << (uint(i) & 63) }

// orInto sets dst to dst ∪ src; they have the same length.
func orInto(dst, src bitset) {
	for i := range dst {
		dst[i] |= src[i]
	}
}

// andInto sets dst to dst ∩ src; they have the same length.
func andInto(dst, src bitset) {
	for i := range dst {
		dst[i] &= src[i]
	}
}

// copyBits ORs the n bits of src starting at bit from into dst starting at
// bit to, a run of up to 64 bits at a time.
func copyBits(dst bitset, to int, src bitset, from, n int) {
	for n > 0 {
		k := min(64-from&63, 64-to&63, n)
		w := src[from>>6] >> (uint(from) & 63)
		if k < 64 {
			w &= 1<<uint(k) - 1
		}
		dst[to>>6] |= w << (uint(to) & 63)
		from, to, n = from+k, to+k, n-k
	}
}
