package delivery

import (
	"sync"
	"time"
)

// Counters count how often each user was served each campaign, for
// frequency caps. A decision counts at once (before the impression
// arrives): a capped campaign is never chosen more than its cap, whether
// or not its impressions are fired.
type Counters interface {
	// Count returns how many times user was served campaign since now −
	// within.
	Count(user uint64, campaign int64, within time.Duration, now time.Time) int
	// Add records that user was served campaign at now.
	Add(user uint64, campaign int64, now time.Time)
}

// window is the span of a cap window: "flight" is the campaign's flight
// so far.
func window(w string, c *Campaign) time.Duration {
	switch w {
	case "1h":
		return time.Hour
	case "24h":
		return 24 * time.Hour
	case "7d":
		return 7 * 24 * time.Hour
	}
	return c.EndAt.Sub(c.StartAt)
}

// maxKept is how many serves of a user and campaign Memory remembers: no
// cap counts more.
const maxKept = 64

// Memory counts in this process's memory: exact for one instance. Its
// methods are safe for concurrent use. Entries older than a week (or a
// flight) are dropped by Trim.
type Memory struct {
	shards [64]struct {
		mu sync.Mutex
		m  map[memKey][]int64 // unix nanoseconds of the last serves, oldest first
	}
}

type memKey struct {
	user     uint64
	campaign int64
}

// NewMemory returns empty in-memory counters.
func NewMemory() *Memory {
	m := &Memory{}
	for i := range m.shards {
		m.shards[i].m = map[memKey][]int64{}
	}
	return m
}

func (m *Memory) shard(user uint64) *struct {
	mu sync.Mutex
	m  map[memKey][]int64
} {
	return &m.shards[user%uint64(len(m.shards))]
}

// Count implements Counters.
func (m *Memory) Count(user uint64, campaign int64, within time.Duration, now time.Time) int {
	s := m.shard(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	since, n := now.Add(-within).UnixNano(), 0
	for _, t := range s.m[memKey{user, campaign}] {
		if t > since {
			n++
		}
	}
	return n
}

// Add implements Counters.
func (m *Memory) Add(user uint64, campaign int64, now time.Time) {
	s := m.shard(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := memKey{user, campaign}
	ts := append(s.m[k], now.UnixNano())
	if len(ts) > maxKept {
		ts = ts[len(ts)-maxKept:]
	}
	s.m[k] = ts
}

// Trim drops what no window reaches any more: serves older than keep.
func (m *Memory) Trim(keep time.Duration, now time.Time) {
	old := now.Add(-keep).UnixNano()
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		for k, ts := range s.m {
			if ts[len(ts)-1] <= old {
				delete(s.m, k)
			}
		}
		s.mu.Unlock()
	}
}
