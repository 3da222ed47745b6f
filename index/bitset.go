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
