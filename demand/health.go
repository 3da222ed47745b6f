package demand

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The circuit breaker: a partner whose last breakerWindow requests
// failed (a timeout, an error, a malformed answer) more often than not is
// paused for breakerPause, then asked once (a probe): an answer closes
// the breaker, a failure pauses it again.
const (
	breakerWindow = 20
	breakerPause  = 30 * time.Second
)

// state is a partner's health on this instance: its counts since start,
// its breaker and its rate.
type state struct {
	requests, bids, wins atomic.Int64
	dropped              [len(reasonIndex)]atomic.Int64

	mu        sync.Mutex
	outcomes  [breakerWindow]bool // true: failed; a ring
	next, n   int
	openUntil time.Time // the breaker is open until then (zero: closed)
	probing   bool      // a probe is out
	second    int64     // the second sent counts
	sent      int
}

// reasonIndex maps a reason to its counter.
var reasonIndex = [...]string{Timeout, Failed, BadResponse, UnknownImp, NoPrice, Currency, TooLarge, Blocked, Paused, OverQPS}

// admit says whether a request may go to the partner at now under its
// breaker and its qps (0: no limit): "" it may, else why not.
func (s *state) admit(now time.Time, qps int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.openUntil.IsZero() {
		if now.Before(s.openUntil) || s.probing {
			return Paused
		}
		s.probing = true // the pause is over: one probe
	}
	if qps > 0 {
		if sec := now.Unix(); sec != s.second {
			s.second, s.sent = sec, 0
		}
		if s.sent >= qps {
			return OverQPS
		}
		s.sent++
	}
	return ""
}

// drop counts n requests or bids dropped for why.
func (s *state) drop(why string, n int64) {
	if i := slices.Index(reasonIndex[:], why); i >= 0 {
		s.dropped[i].Add(n)
	}
}

// failed records a request that failed for why at now.
func (s *state) failed(now time.Time, why string) {
	s.drop(why, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.probing {
		s.probing, s.openUntil = false, now.Add(breakerPause)
		return
	}
	s.record(true)
	fails := 0
	for _, f := range s.outcomes[:s.n] {
		if f {
			fails++
		}
	}
	if s.n == breakerWindow && 2*fails > breakerWindow {
		s.openUntil, s.n, s.next = now.Add(breakerPause), 0, 0
	}
}

// succeeded records a request answered at now.
func (s *state) succeeded(time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.probing || !s.openUntil.IsZero() {
		s.probing, s.openUntil, s.n, s.next = false, time.Time{}, 0, 0
	}
	s.record(false)
}

func (s *state) record(failed bool) {
	s.outcomes[s.next] = failed
	s.next = (s.next + 1) % breakerWindow
	s.n = min(s.n+1, breakerWindow)
}

// Health is a partner's health on this instance since it started: the
// requests sent, the bids received and won, what was dropped by reason
// (requests not sent, failed, and bids refused), and whether its
// breaker has paused it (until when).
type Health struct {
	Requests    int64            `json:"requests"`
	Bids        int64            `json:"bids"`
	Wins        int64            `json:"wins"`
	Dropped     map[string]int64 `json:"dropped"`
	Paused      bool             `json:"paused"`
	PausedUntil *time.Time       `json:"pausedUntil,omitempty"`
}

// Health is partner name's health, nil when there is no such partner.
func (x *Exchange) Health(name string) *Health {
	for _, p := range *x.partners.Load() {
		if p.Name != name {
			continue
		}
		h := &Health{Requests: p.requests.Load(), Bids: p.bids.Load(), Wins: p.wins.Load(), Dropped: map[string]int64{}}
		for i, why := range reasonIndex {
			if n := p.dropped[i].Load(); n > 0 {
				h.Dropped[why] = n
			}
		}
		p.mu.Lock()
		if !p.openUntil.IsZero() {
			until := p.openUntil
			h.Paused, h.PausedUntil = true, &until
		}
		p.mu.Unlock()
		return h
	}
	return nil
}

// Won counts a win of partner name's (a decision chose its bid).
func (x *Exchange) Won(name string) {
	for _, p := range *x.partners.Load() {
		if p.Name == name {
			p.wins.Add(1)
			return
		}
	}
}
