// Package counters keeps what frequency caps count: when each user was
// served each capped campaign, and which caps each user has reached.
// Memory keeps it in this process (exact for one instance), in a bounded
// cache; Redis in a Redis server shared by every instance, where a serve
// is taken atomically (a Lua script), so that instances deciding at once
// never exceed a cap. Both meet one contract, run by counterstest.
//
// What a decision reads is the user's reached caps (Reached), one entry
// per campaign the user may not see now, sorted by campaign; the serves
// themselves are never copied out, so a decision's cost grows with the
// caps a user reached, not with their serves.
package counters

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"marquee"
)

// Keep is how many serves of one user and campaign are remembered: no
// cap counts more (a cap stored before the API refused larger counts is
// held at Keep).
const Keep = marquee.MaxCapCount

// Horizon is how long the longest fixed cap window (7 days) lasts, and a
// day more: an erasure covers it. (A "flight" cap keeps a user's serves
// for its flight.)
const Horizon = 8 * 24 * time.Hour

// Take is a serve of a capped campaign a decision asks for: refused when
// the user had Count serves of Campaign within Within.
type Take struct {
	Campaign int64
	Count    int
	Within   time.Duration
}

// Reached is a cap a user has reached: Campaign's cap of Count serves
// Within, reached until Until (unix ns), when the oldest of those serves
// leaves the window.
type Reached struct {
	Campaign int64
	Until    int64
	Count    int
	Within   time.Duration
}

// Blocks reports whether reached (sorted by campaign, as the counters
// answer it) says the user may not be served campaign, capped at count
// serves within, at now (unix ns). A reached cap taken under another cap
// (the campaign's was edited since) blocks nothing: the next take decides.
func Blocks(reached []Reached, campaign int64, count int, within time.Duration, now int64) bool {
	i, ok := slices.BinarySearchFunc(reached, campaign, func(r Reached, c int64) int { return cmp.Compare(r.Campaign, c) })
	return ok && reached[i].Holds(count, within, now)
}

// Holds reports whether r is the campaign's cap of count serves within
// (not one taken under a cap since edited) and still reached at now
// (unix ns).
func (r *Reached) Holds(count int, within time.Duration, now int64) bool {
	return r.Count == count && r.Within == within && r.Until > now
}

// DefaultMemory is the memory Memory's serves take at most unless the
// operator says otherwise (-caps-memory).
const DefaultMemory = 256 << 20

// Memory keeps the serves in this process, in at most a given number of
// bytes (by a weigher that TestMemoryBound holds to the heap). Past it, a
// take forgets users as Redis's approximated LRU does: of a few users
// drawn at random from the taker's shard (samples), the one served
// longest ago. An evicted user's caps start again from nothing. Trim
// forgets the users whose caps' windows have all passed. Safe for
// concurrent use.
//
// (otter, the bounded cache the keyed caches use, was measured here
// first: its admission and maintenance took 1.3 µs of a 1.6 µs decision;
// sampled eviction costs nothing until the limit is reached.)
type Memory struct {
	shards    [64]shard
	evictions atomic.Uint64
}

// A shard keeps its users' histories and what they weigh, within its
// share of the limit.
type shard struct {
	mu           sync.Mutex
	m            map[uint64]*history
	bytes, limit int64
}

// history is one user's serves, free of pointers but its two arrays
// (what the garbage collector scans): the caps, one a capped campaign,
// sorted by campaign; the serves, sorted by campaign then time.
type history struct {
	caps   []capState
	serves []serve
	last   int64 // the last take, unix ns
	end    int64 // when every cap's window has passed since its last serve, unix ns
	// memo is what the decisions derived from the reached caps
	// (Remember), until the next take; memoBytes is its weight.
	memo      any
	memoBytes int64
}

// capState is the cap a user's serves of a campaign were last taken
// under (count within), and until when it is reached (≤ any now: not
// reached).
type capState struct {
	campaign, until int64
	within          time.Duration
	count           int
}

// serve is a serve of a campaign at a time (unix ns).
type serve struct{ campaign, at int64 }

// Bytes a user's history costs beyond its arrays: its slot in the map
// and the arrays' rounding (TestMemoryBound checks the weigher against the
// heap).
const userBytes = 120

func (h *history) weight() int64 {
	return int64(userBytes+32*cap(h.caps)+16*cap(h.serves)) + h.memoBytes
}

// samples is how many users an eviction draws: Redis draws 5 into a
// pool of candidates; 10 without a pool kept 99% of the users who came
// back through a flood of new ones (TestMemoryBound), 5 kept 97%.
const samples = 10

// NewMemory returns empty in-memory counters that keep at most maxBytes
// of serves (DefaultMemory is a default).
func NewMemory(maxBytes int64) *Memory {
	m := &Memory{}
	for i := range m.shards {
		m.shards[i] = shard{m: map[uint64]*history{}, limit: max(maxBytes/int64(len(m.shards)), 1)}
	}
	return m
}

func (m *Memory) shard(user uint64) *shard { return &m.shards[user%uint64(len(m.shards))] }

// Users is how many users' serves are kept.
func (m *Memory) Users() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// Bytes is what the kept serves weigh, by the weigher's count.
func (m *Memory) Bytes() int64 {
	var n int64
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.bytes
		s.mu.Unlock()
	}
	return n
}

// Evictions is how many users the limit has made Memory forget.
func (m *Memory) Evictions() uint64 { return m.evictions.Load() }

// Reached appends to into the caps user has reached at now, sorted by
// campaign.
func (m *Memory) Reached(_ context.Context, user uint64, now time.Time, into []Reached) ([]Reached, error) {
	s := m.shard(user)
	s.mu.Lock()
	if h := s.m[user]; h != nil {
		into = h.reached(now.UnixNano(), into)
	}
	s.mu.Unlock()
	return into, nil
}

func (h *history) reached(now int64, into []Reached) []Reached {
	for _, c := range h.caps {
		if c.until > now {
			into = append(into, Reached{Campaign: c.campaign, Until: c.until, Count: c.count, Within: c.within})
		}
	}
	return into
}

// Forget drops every serve of user (an erased subject) and returns how
// many there were.
func (m *Memory) Forget(_ context.Context, user uint64) (int, error) {
	s := m.shard(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.m[user]
	if h == nil {
		return 0, nil
	}
	s.bytes -= h.weight()
	delete(s.m, user)
	return len(h.serves), nil
}

// Take records, for each of takes, a serve of its campaign to user at now
// unless the cap is reached, and sets took[i] (took has the length of
// takes) to the user's serves of it within the window once taken (at
// least 1), or 0 when refused. The takes are one atomic step. When a take
// is refused, it appends the user's reached caps to reached (what a
// decision needs to choose again) and returns it.
func (m *Memory) Take(_ context.Context, user uint64, now time.Time, takes []Take, took []int, reached []Reached) ([]Reached, error) {
	at := now.UnixNano()
	s := m.shard(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.m[user]
	var before int64
	if h != nil {
		before = h.weight()
	} else {
		h = &history{caps: make([]capState, 0, len(takes)), serves: make([]serve, 0, len(takes))}
		s.m[user] = h
	}
	refused := false
	for i, t := range takes {
		if took[i] = h.take(t, at); took[i] == 0 {
			refused = true
		}
	}
	h.last, h.memo, h.memoBytes = at, nil, 0
	if refused {
		reached = h.reached(at, reached)
	}
	s.bytes += h.weight() - before
	for s.bytes > s.limit && len(s.m) > 1 {
		m.evict(s, user, at)
	}
	return reached, nil
}

// evict forgets one user of s other than keep: of samples drawn at random,
// one whose windows have all passed, else the one served longest ago.
func (m *Memory) evict(s *shard, keep uint64, at int64) {
	var victim uint64
	var oldest *history
	n := 0
	for u, h := range s.m { // a map's order is random: the first few are a sample
		if u == keep {
			continue
		}
		if n == 0 || h.last < oldest.last || h.end <= at {
			victim, oldest = u, h
		}
		if n++; n == samples || h.end <= at {
			break
		}
	}
	if n > 0 {
		s.bytes -= oldest.weight()
		delete(s.m, victim)
		m.evictions.Add(1)
	}
}

// Trim forgets the users whose caps' windows have all passed at now.
func (m *Memory) Trim(now time.Time) {
	at := now.UnixNano()
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		for u, h := range s.m {
			if h.end <= at {
				s.bytes -= h.weight()
				delete(s.m, u)
			}
		}
		s.mu.Unlock()
	}
}

// take takes one serve at at: the serves within its window once taken,
// or 0 when refused.
func (h *history) take(t Take, at int64) int {
	ci, found := slices.BinarySearchFunc(h.caps, t.Campaign, capOf)
	if !found {
		h.sweep(at)
		ci, _ = slices.BinarySearchFunc(h.caps, t.Campaign, capOf)
		h.caps = slices.Insert(h.caps, ci, capState{campaign: t.Campaign})
	}
	c := &h.caps[ci]
	c.count, c.within = t.Count, t.Within
	// The campaign's serves are serves[from:to]; those at or before since
	// have left the window and are dropped.
	from, _ := slices.BinarySearchFunc(h.serves, serve{t.Campaign, 0}, cmpServe)
	since := at - int64(t.Within)
	old, _ := slices.BinarySearchFunc(h.serves[from:], serve{t.Campaign, since + 1}, cmpServe)
	h.serves = slices.Delete(h.serves, from, from+old)
	to, _ := slices.BinarySearchFunc(h.serves[from:], serve{t.Campaign + 1, 0}, cmpServe)
	to += from
	limit := min(t.Count, Keep)
	took := 0
	if to-from < limit {
		h.serves = slices.Insert(h.serves, to, serve{t.Campaign, at})
		to++
		took = to - from
	}
	c.until = 0
	if to-from >= limit {
		c.until = h.serves[to-limit].at + int64(t.Within)
	}
	h.end = max(h.end, h.serves[to-1].at+int64(t.Within))
	return took
}

// capOf orders a user's caps by campaign (for binary searches).
func capOf(c capState, campaign int64) int { return cmp.Compare(c.campaign, campaign) }

func cmpServe(a, b serve) int {
	if c := cmp.Compare(a.campaign, b.campaign); c != 0 {
		return c
	}
	return cmp.Compare(a.at, b.at)
}

// sweep drops the caps, and their serves, whose serves have all left
// their window at at.
func (h *history) sweep(at int64) {
	gone := func(c *capState) bool { return c.until <= at && h.lastOf(c.campaign) <= at-int64(c.within) }
	if !slices.ContainsFunc(h.caps, func(c capState) bool { return gone(&c) }) {
		return
	}
	h.serves = slices.DeleteFunc(h.serves, func(s serve) bool {
		i, ok := slices.BinarySearchFunc(h.caps, s.campaign, capOf)
		return ok && gone(&h.caps[i])
	})
	h.caps = slices.DeleteFunc(h.caps, func(c capState) bool { return h.lastOf(c.campaign) == 0 })
}

// lastOf is the last serve of campaign (0: none).
func (h *history) lastOf(campaign int64) int64 {
	i, _ := slices.BinarySearchFunc(h.serves, serve{campaign + 1, 0}, cmpServe)
	if i == 0 || h.serves[i-1].campaign != campaign {
		return 0
	}
	return h.serves[i-1].at
}

// InProcess reports that Memory answers in this process: reading a user's
// reached caps costs a lock, not a round trip, so a decision reads them
// before choosing.
func (*Memory) InProcess() bool { return true }

// Recall returns the memo Remember kept for user since their last take,
// or, without one, appends the caps user has reached at now to into.
func (m *Memory) Recall(user uint64, now time.Time, into []Reached) (memo any, reached []Reached) {
	s := m.shard(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.m[user]
	switch {
	case h == nil:
		return nil, into
	case h.memo != nil:
		return h.memo, into
	}
	return nil, h.reached(now.UnixNano(), into)
}

// Remember keeps memo, weighing bytes, with user's serves until their
// next take (or their eviction): what a decision derived from their
// reached caps, so that the next decisions need not derive it again. A
// user without serves keeps nothing.
func (m *Memory) Remember(user uint64, memo any, bytes int) {
	s := m.shard(user)
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.m[user]; h != nil {
		s.bytes += int64(bytes) - h.memoBytes
		h.memo, h.memoBytes = memo, int64(bytes)
	}
}
