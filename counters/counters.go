// Package counters keeps what frequency caps count: when each user was
// served each campaign. Memory keeps it in this process (exact for one
// instance); Redis in a Redis server shared by every instance, where a
// serve is taken atomically (a Lua script), so that instances deciding at
// once never exceed a cap. Both meet one contract, run by counterstest.
package counters

import (
	"context"
	"sync"
	"time"
)

// Keep is how many serves of one user and campaign are remembered: no
// cap counts more.
const Keep = 64

// Memory keeps the serves in this process. Safe for concurrent use.
type Memory struct {
	shards [64]shard
}

type shard struct {
	mu sync.Mutex
	m  map[uint64]map[int64][]int64 // user → campaign → unix ns, oldest first
}

// NewMemory returns empty in-memory counters.
func NewMemory() *Memory {
	m := &Memory{}
	for i := range m.shards {
		m.shards[i].m = map[uint64]map[int64][]int64{}
	}
	return m
}

func (m *Memory) shard(user uint64) *shard { return &m.shards[user%uint64(len(m.shards))] }

// Serve is one serve of a campaign to a user: the campaign's id and when
// (unix ns).
type Serve struct {
	Campaign, At int64
}

// Seen appends to into the times user was served each campaign (each
// campaign's serves oldest first): no allocation when into has room.
func (m *Memory) Seen(_ context.Context, user uint64, into []Serve) ([]Serve, error) {
	s := m.shard(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	for c, ts := range s.m[user] {
		for _, t := range ts {
			into = append(into, Serve{c, t})
		}
	}
	return into, nil
}

// Take records a serve of campaign to user at now unless user had count
// serves of it since now − within; it reports whether it did.
func (m *Memory) Take(_ context.Context, user uint64, campaign int64, count int, within time.Duration, now time.Time) (bool, error) {
	s := m.shard(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.m[user][campaign]
	since := now.Add(-within).UnixNano()
	if countAfter(ts, since) >= count {
		return false, nil
	}
	if s.m[user] == nil {
		s.m[user] = map[int64][]int64{}
	}
	if ts == nil {
		ts = make([]int64, 0, min(count, Keep)) // room for the cap's serves: no growing
	}
	ts = append(ts, now.UnixNano())
	s.m[user][campaign] = ts[max(0, len(ts)-Keep):]
	return true, nil
}

// Trim forgets the users whose last serve is older than keep.
func (m *Memory) Trim(keep time.Duration, now time.Time) {
	old := now.Add(-keep).UnixNano()
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		for u, cs := range s.m {
			last := int64(0)
			for _, ts := range cs {
				last = max(last, ts[len(ts)-1])
			}
			if last <= old {
				delete(s.m, u)
			}
		}
		s.mu.Unlock()
	}
}

// Within counts the serves of campaign in seen after now − within.
func Within(seen []Serve, campaign int64, within time.Duration, now time.Time) int {
	since, n := now.Add(-within).UnixNano(), 0
	for _, s := range seen {
		if s.Campaign == campaign && s.At > since {
			n++
		}
	}
	return n
}

// countAfter counts the serves of ts (unix ns) after since.
func countAfter(ts []int64, since int64) int {
	n := 0
	for _, t := range ts {
		if t > since {
			n++
		}
	}
	return n
}
