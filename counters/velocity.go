package counters

import (
	"context"
	"strconv"
	"sync"
	"time"

	"marquee/ivt"
)

// Invalid-traffic velocity shared across instances (ivt.SharedCounts,
// docs/ivt.md#behaviour): each instance adds what it counted of a user or
// an address in a minute, and learns every instance's total.

// VelocityTTL is how long a minute's shared count is kept: past its
// minute, no instance reads it.
const VelocityTTL = 3 * time.Minute

// AddCounts adds each count's delta to its key's total of its minute —
// one Redis key per window, minute and key, expiring after VelocityTTL —
// in one pipeline, and sets each Total.
func (r *Redis) AddCounts(ctx context.Context, counts []ivt.Count) error {
	pipe := r.c.Pipeline()
	totals := make([]interface{ Val() int64 }, len(counts))
	buf := make([]byte, 0, len(r.prefix)+32)
	for i, c := range counts {
		buf = append(append(buf[:0], r.prefix...), c.Window, ':')
		buf = strconv.AppendInt(buf, c.Minute, 36)
		buf = append(buf, ':')
		buf = strconv.AppendUint(buf, c.Key, 36)
		k := string(buf)
		totals[i] = pipe.IncrBy(ctx, k, c.Delta)
		pipe.Expire(ctx, k, VelocityTTL)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	for i := range counts {
		counts[i].Total = totals[i].Val()
	}
	return nil
}

// MemoryCounts are shared counts in this process: what the Filters of
// one process share (tests of several instances in one process; the
// contract's reference). Safe for concurrent use; it forgets a minute's
// counts two minutes later.
type MemoryCounts struct {
	mu sync.Mutex
	m  map[velocityKey]int64
}

type velocityKey struct {
	window byte
	minute int64
	key    uint64
}

// AddCounts adds each count's delta to its key's total and sets each
// Total.
func (m *MemoryCounts) AddCounts(_ context.Context, counts []ivt.Count) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[velocityKey]int64{}
	}
	var newest int64
	for i := range counts {
		c := &counts[i]
		k := velocityKey{c.Window, c.Minute, c.Key}
		m.m[k] += c.Delta
		c.Total = m.m[k]
		newest = max(newest, c.Minute)
	}
	for k := range m.m {
		if k.minute < newest-2 {
			delete(m.m, k)
		}
	}
	return nil
}
