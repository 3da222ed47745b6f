// Frequency caps in a decision: the caps a user reached, read once per
// decision (or from the memo kept with the user) as a bitset over the
// plan's capped campaigns.

package delivery

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"
	"time"

	"marquee/counters"
)

// blockedSet is a user's reached caps in a plan's numbers: a bit for each
// capped campaign the user may not be served now, and how many of each
// list's campaigns are blocked.
type blockedSet struct {
	bits   []uint64
	inList []int32
}

// memoCounters are counters that keep a memo with each user's serves,
// dropped at the user's next take (counters.Memory).
type memoCounters interface {
	// Recall returns the user's memo, or else appends their reached caps
	// at now to into.
	Recall(user uint64, now time.Time, into []counters.Reached) (memo any, reached []counters.Reached)
	// Remember keeps memo, of bytes, until the user's next take.
	Remember(user uint64, memo any, bytes int)
}

// blockMemo is a user's blocked set in plan number gen, true until until
// (unix ns: the first of its reached caps to end) or the user's next
// take; and, for each list of the plan, until when it has nothing for
// the user whatever the request (unix ns, 0: not known to). Decisions of
// the user share it: set is never mutated once remembered, exhausted
// only atomically.
type blockMemo struct {
	gen       uint64
	until     int64
	set       blockedSet
	exhausted []atomic.Int64
	forViewer []atomic.Pointer[viewerMark] // a list's viewerSlots, by the viewer's key
}

// exhaustFor is how long a list stays skipped for a user once every
// campaign in it was left out for reasons no request changes — the user
// reached its cap, pacing held it back, its flight is not on — and so how
// late, at most, a decision for that user sees a campaign that pacing
// lets serve again or whose flight starts.
const exhaustFor = 250 * time.Millisecond

// memoFrom is how many reached caps make a user's blocked set worth
// remembering: below it, building the set costs less than the memo
// weighs.
const memoFrom = 16

// blockedOf reads what user's reached caps block in plan at now (nil:
// nothing), the user's memo when there is one, and the reached caps read
// (none when a memo answered): from the user's memo when it is of this
// plan and still true, else from the counters, remembered when there are
// memoFrom or more.
func (e *Engine) blockedOf(ctx context.Context, plan *Plan, user uint64, now time.Time, sc *scratch) (*blockMemo, *blockedSet, []counters.Reached, error) {
	at, reached := now.UnixNano(), sc.reached[:0]
	var err error
	if e.memo != nil {
		var memo any
		memo, reached = e.memo.Recall(user, now, reached)
		if m, ok := memo.(*blockMemo); ok && m.gen == plan.gen && at < m.until {
			return m, &m.set, nil, nil
		} else if memo != nil {
			reached, err = e.counters.Reached(ctx, user, now, reached)
		}
	} else {
		reached, err = e.counters.Reached(ctx, user, now, reached)
	}
	if err != nil || len(reached) == 0 {
		return nil, nil, reached, err
	}
	if e.memo != nil && len(reached) >= memoFrom {
		m := &blockMemo{gen: plan.gen, exhausted: make([]atomic.Int64, plan.numLists), forViewer: make([]atomic.Pointer[viewerMark], plan.numLists*viewerSlots)}
		m.until = plan.block(&m.set, reached, at)
		e.memo.Remember(user, m, 64+8*len(m.set.bits)+(12+24*viewerSlots)*len(m.set.inList))
		return m, &m.set, reached, nil
	}
	plan.block(&sc.blocked, reached, at)
	return nil, &sc.blocked, reached, nil
}

// has says whether campaign number i (-1: not capped) is blocked.
func (b *blockedSet) has(i int32) bool { return i >= 0 && b.bits[i>>6]&(1<<(i&63)) != 0 }

// block sets b to what reached (sorted by campaign) blocks at at: each
// reached cap that is the campaign's cap now; it returns when the first
// of them ends (math.MaxInt64: none). Its cost is the smaller of
// len(reached) binary searches and one merge of reached with the plan's
// capped campaigns.
func (p *Plan) block(b *blockedSet, reached []counters.Reached, at int64) (until int64) {
	until = math.MaxInt64
	n := len(p.ids)
	b.bits = append(b.bits[:0], make([]uint64, (n+63)/64)...)
	b.inList = append(b.inList[:0], make([]int32, p.numLists)...)
	search := len(reached)*bits.Len(uint(n)) < n
	ids, caps, j := p.ids, p.caps, 0
	for i := range reached {
		r := &reached[i]
		if search {
			k, ok := slices.BinarySearch(ids[j:], r.Campaign)
			if j += k; !ok {
				continue
			}
		} else {
			for j < n && ids[j] < r.Campaign {
				j++
			}
			if j == n {
				break
			}
			if ids[j] != r.Campaign {
				continue
			}
		}
		if !r.Holds(caps[j].count, caps[j].within, at) {
			continue
		}
		b.bits[j>>6] |= 1 << (j & 63)
		for _, l := range p.inLists[p.listsAt[j]:p.listsAt[j+1]] {
			b.inList[l]++
		}
		until = min(until, r.Until)
	}
	return until
}

// reachedBy reads the caps r's user has reached at now (none without a
// user); capsDown says the counters could not be read.
func (e *Engine) reachedBy(ctx context.Context, r *Request, now time.Time) (reached []counters.Reached, capsDown bool) {
	if r.User == 0 {
		return nil, false
	}
	reached, err := e.counters.Reached(ctx, r.User, now, nil)
	return reached, err != nil
}

// skips says whether list number l had nothing for the user a moment ago,
// for any request or for one of u's targeting fields.
func (m *blockMemo) skips(l int32, u *usedSet) bool {
	if m.exhausted[l].Load() > u.at {
		return true
	}
	if !u.keyed {
		return false
	}
	mk := m.forViewer[int(l)*viewerSlots+int(u.viewerKey%viewerSlots)].Load()
	return mk != nil && mk.key == u.viewerKey && mk.until > u.at
}
