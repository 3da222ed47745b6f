// Package counters keeps what frequency caps count: when each user was
// served each campaign. Memory keeps it in this process (exact for one
// instance); Redis in a Redis server shared by every instance, where a
// serve is taken atomically (a Lua script), so that instances deciding at
// once never exceed a cap. Both meet one contract, run by counterstest.
package counters

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Keep is how many serves of one user and campaign are remembered: no
// cap counts more.
const Keep = 64

// Horizon is how long a serve is worth keeping: past every cap window but
// a flight's (7 days), and a day more. The server trims Memory to it and
// gives it to Redis as the keys' expiry; an erasure covers it.
const Horizon = 8 * 24 * time.Hour

// Memory keeps the serves in this process. Safe for concurrent use.
type Memory struct {
	shards [64]shard
}

// A shard keeps its users' serves in one slice each, in the order taken
// (oldest first): a decision's read of them is one copy.
type shard struct {
	mu sync.Mutex
	m  map[uint64][]Serve
}

// NewMemory returns empty in-memory counters.
func NewMemory() *Memory {
	m := &Memory{}
	for i := range m.shards {
		m.shards[i].m = map[uint64][]Serve{}
	}
	return m
}

func (m *Memory) shard(user uint64) *shard { return &m.shards[user%uint64(len(m.shards))] }

// Serve is one serve of a campaign to a user: the campaign's id and when
// (unix ns).
type Serve struct {
	Campaign, At int64
}

// Seen appends to into the times user was served each campaign (oldest
// first): no allocation when into has room.
func (m *Memory) Seen(_ context.Context, user uint64, into []Serve) ([]Serve, error) {
	s := m.shard(user)
	s.mu.Lock()
	into = append(into, s.m[user]...)
	s.mu.Unlock()
	return into, nil
}

// Forget drops every serve of user (an erased subject) and returns how
// many there were.
func (m *Memory) Forget(_ context.Context, user uint64) (int, error) {
	s := m.shard(user)
	s.mu.Lock()
	n := len(s.m[user])
	delete(s.m, user)
	s.mu.Unlock()
	return n, nil
}

// Take is a serve of a capped campaign a decision asks for: refused when
// the user had Count serves of Campaign within Within.
type Take struct {
	Campaign int64
	Count    int
	Within   time.Duration
}

// Take records, for each of takes, a serve of its campaign to user at now
// unless the cap is reached, and sets took[i] (took has the length of
// takes) to the user's serves of it within the window once taken (at
// least 1), or 0 when refused. Each take is atomic; past Keep serves of a
// campaign, the oldest is forgotten. When a take is refused, it appends
// the user's serves to seen (what a decision needs to choose again), and
// returns seen.
func (m *Memory) Take(_ context.Context, user uint64, now time.Time, takes []Take, took []int, seen []Serve) ([]Serve, error) {
	s := m.shard(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	mine, refused := s.m[user], false
	for i, t := range takes {
		n, kept, oldest := tally(mine, t.Campaign, now.Add(-t.Within).UnixNano())
		if n >= t.Count {
			took[i], refused = 0, true
			continue
		}
		if kept >= Keep {
			mine = slices.Delete(mine, oldest, oldest+1)
		}
		mine = append(mine, Serve{t.Campaign, now.UnixNano()})
		took[i] = n + 1
	}
	s.m[user] = mine
	if refused {
		seen = append(seen, mine...)
	}
	return seen, nil
}

// tally reads the serves of campaign in seen in one pass: how many are
// after since, how many there are, and where the oldest is (-1: none).
func tally(seen []Serve, campaign, since int64) (after, kept, oldest int) {
	oldest = -1
	for i, s := range seen {
		if s.Campaign != campaign {
			continue
		}
		if kept++; oldest < 0 {
			oldest = i
		}
		if s.At > since {
			after++
		}
	}
	return after, kept, oldest
}

// Trim forgets the users whose last serve is older than keep.
func (m *Memory) Trim(keep time.Duration, now time.Time) {
	old := now.Add(-keep).UnixNano()
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		for u, seen := range s.m {
			if len(seen) == 0 || seen[len(seen)-1].At <= old {
				delete(s.m, u)
			}
		}
		s.mu.Unlock()
	}
}

// Within counts the serves of campaign in seen after now − within.
func Within(seen []Serve, campaign int64, within time.Duration, now time.Time) int {
	n, _, _ := tally(seen, campaign, now.Add(-within).UnixNano())
	return n
}
