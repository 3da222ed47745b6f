package collector

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync/atomic"
)

// IDs hands out event ids: 16 hex digits of a random number drawn once per
// process (unique across instances and restarts with overwhelming
// probability: 2^64), then a counter in base 36. Fast (one atomic add, no
// syscall), not cryptographic, never repeated within a process. Ids of one
// process sort in the order they were handed out when compared by length,
// then bytes.
type IDs struct {
	prefix [16]byte
	n      atomic.Uint64
}

// NewIDs returns a generator with a fresh random prefix.
func NewIDs() (*IDs, error) {
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("event ids: %w", err)
	}
	g := &IDs{}
	const hex = "0123456789abcdef"
	v := binary.BigEndian.Uint64(raw[:])
	for i := range g.prefix {
		g.prefix[15-i] = hex[v>>(4*i)&0xf]
	}
	return g, nil
}

// Append appends a new id to dst.
func (g *IDs) Append(dst []byte) []byte {
	dst = append(dst, g.prefix[:]...)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, g.n.Add(1), 36)
}
