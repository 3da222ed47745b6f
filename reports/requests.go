package reports

import (
	"math/rand/v2"
	"sync"

	"marquee"
	"marquee/reportrow"
)

// Requests counts decisions' slots by placement, UTC hour, country and
// device type, and what became of each (marquee.Outcome), in memory until
// a Tally's flush adds them to the store in its transaction. Count is
// safe from any goroutine and allocates nothing once a key was seen this
// flush period.
//
// How exact: a flush (every -reports-flush, and at shutdown) writes
// what was counted; a crash (kill -9) loses what was counted since the
// last flush, at most one flush period of requests. Request counts do
// not come from the event files (a line per slot would cost the collector
// a write per decision), so `marquee reports rebuild` keeps them.
type Requests struct {
	shards [requestShards]requestShard
}

// requestShards spreads Count's lock: a decision takes one shard's, picked
// at random, so that cores seldom wait for each other.
const requestShards = 16

type requestShard struct {
	mu sync.Mutex
	m  map[RequestKey]*[marquee.NumOutcomes]int64
	_  [40]byte // a cache line each
}

// RequestKey is what a slot's request is counted by.
type RequestKey struct {
	Placement int64
	Hour      int64 // unix seconds of the UTC hour's start
	Country   [2]byte
	Device    string // a device type (marquee.DeviceTypes), "" unknown
}

// NewRequests returns an empty count.
func NewRequests() *Requests {
	r := &Requests{}
	for i := range r.shards {
		r.shards[i].m = map[RequestKey]*[marquee.NumOutcomes]int64{}
	}
	return r
}

// Count counts one slot of k and its outcome.
func (r *Requests) Count(k RequestKey, o marquee.Outcome) {
	s := &r.shards[rand.Uint32()%requestShards]
	s.mu.Lock()
	c := s.m[k]
	if c == nil {
		c = new([marquee.NumOutcomes]int64)
		s.m[k] = c
	}
	c[o]++
	s.mu.Unlock()
}

// take returns what was counted since the last take, as rows, and starts
// over.
func (r *Requests) take() []reportrow.RequestRow {
	at := map[RequestKey]int{}
	var rows []reportrow.RequestRow
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		m := s.m
		s.m = make(map[RequestKey]*[marquee.NumOutcomes]int64, len(m))
		s.mu.Unlock()
		for k, c := range m {
			j, ok := at[k]
			if !ok {
				j = len(rows)
				at[k] = j
				rows = append(rows, reportrow.RequestRow{Hour: k.Hour, Placement: k.Placement, Country: countryOf(k.Country), Device: k.Device})
			}
			for o, n := range c {
				rows[j].Outcomes[o] += n
			}
		}
	}
	return rows
}

// countryOf is a request's country as report rows hold it: "ZZ" when
// unknown (as events'), else the ISO code.
func countryOf(c [2]byte) string {
	if c == ([2]byte{}) {
		return "ZZ"
	}
	return string(c[:])
}

// putBack returns rows a failed flush took.
func (r *Requests) putBack(rows []reportrow.RequestRow) {
	s := &r.shards[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, row := range rows {
		k := RequestKey{Placement: row.Placement, Hour: row.Hour, Device: row.Device}
		if row.Country != "ZZ" {
			copy(k.Country[:], row.Country)
		}
		c := s.m[k]
		if c == nil {
			c = new([marquee.NumOutcomes]int64)
			s.m[k] = c
		}
		for o, n := range row.Outcomes {
			c[o] += n
		}
	}
}
