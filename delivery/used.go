// What a decision keeps while it fills its slots: the choices waiting
// for their serves, its scratch, and the set of what it used (ads,
// campaigns, competitive labels, a campaign's serves on the page) that
// the next slot's pick reads.

package delivery

import (
	"sync"

	"marquee"
	"marquee/counters"
	"marquee/targeting"
)

// pending is a choice for a slot, ok once its serve is taken (or needs
// none); reached says the serve brought the user to the cap.
type pending struct {
	slot        int
	ch          Choice
	ok, reached bool
	// follows is 1 + the index of the choice whose serve this one shares
	// (a roadblock's other slots count one serve): 0 for none.
	follows int
}

// scratch is what a decision lends the counters: the buffer the user's
// reached caps are read into, what they block, and its takes.
type scratch struct {
	bits    []uint64 // the eligible campaigns of a list's parts (pickParts)
	reached []counters.Reached
	blocked blockedSet
	takes   []counters.Take
	took    []int
}

// scratchPool holds decisions' scratch (the counters' calls are through
// an interface: buffers on the stack would move to the heap).
var scratchPool = sync.Pool{New: func() any {
	return &scratch{reached: make([]counters.Reached, 0, 32), takes: make([]counters.Take, 0, 16), took: make([]int, 0, 16)}
}}

// usedSet is what a request has chosen so far (a few ads at most), and
// the user's reached caps as the counters had them.
type usedSet struct {
	ads, campaigns []int64
	labels         []marquee.Label // the labels of the campaigns chosen (competitive exclusion)
	reached        []counters.Reached
	blocked        *blockedSet // reached in the plan's numbers (nil: none, or Explain's, which searches reached)
	memo           *blockMemo  // the user's memo, when blocked is its set
	leftOut        uint8       // why campaigns of the list weighed last were left out, beyond reasons no request changes: byViewer, byUsed
	viewerKey      uint64      // the request's targeting fields, when it has no keywords (keyed)
	keyed          bool
	capsDown       bool             // the counters could not be read: no capped campaign is served
	v              targeting.Viewer // the request's targeting fields, compiled (a copy: nothing escapes)
	at             int64            // the decision's time, unix ns
	wall           int64            // when it is made, unix ns (Request.Wall)
	bits           *[]uint64        // scratch of pickParts
	// filtered: the campaign checked now passed its list's filter, which
	// checked the indexed rules of its tree (the rest are left).
	filtered bool
	multiKV  bool // the slot's key-values name a key more than once
	// why is the furthest check a candidate of the slot's last pick
	// failed (marquee.Outcome's order): why the slot stays empty.
	why marquee.Outcome
	// clock is the decision's local time in the last time zone read (at
	// is one instant for the whole decision).
	clock targeting.Clock
	// room is what is left of the pod's duration of the slot being
	// filled, in milliseconds (0: no limit; see Slot.PodMs).
	room int
}

// roomOf is what is left of slot si's pod duration (s.PodMs) once the
// choices of pend for it that stand are counted — those judged ok, and
// the round's not yet judged (from on): 0 when the slot has no pod
// duration, -1 when nothing is left.
func roomOf(s *Slot, si int, pend []pending, from int) int {
	if s.PodMs == 0 {
		return 0
	}
	left := s.PodMs
	for i, q := range pend {
		if q.slot == si && (q.ok || i >= from) && q.ch.Ad != nil && q.ch.Ad.Creative != nil && marquee.IsLinear(q.ch.Ad.Creative.Type) {
			left -= q.ch.Ad.Creative.DurationMs
		}
	}
	if left <= 0 {
		return -1
	}
	return left
}

// note records that a candidate failed at check o (see why).
func (u *usedSet) note(o marquee.Outcome) {
	if o > u.why {
		u.why = o
	}
}

// full says whether campaign c has filled the slots of the request it may
// (its maxPerPage, 1 for a roadblock, which fills its slots itself).
func (u *usedSet) full(c *Campaign) bool {
	limit, n := 1, 0
	if c.Roadblock == "" {
		limit = max(c.MaxPerPage, 1)
	}
	for _, id := range u.campaigns {
		if id == c.ID {
			if n++; n >= limit {
				return true
			}
		}
	}
	return false
}

func (u *usedSet) add(ad, campaign int64) {
	u.ads, u.campaigns = append(u.ads, ad), append(u.campaigns, campaign)
}

// chose records choice ch: its ad, its campaign and its campaign's
// labels.
func (u *usedSet) chose(ch Choice) {
	u.add(ch.Ad.ID, ch.Campaign.ID)
	u.labels = append(u.labels, ch.Campaign.Labels...)
}

// draws is how many times pick draws a campaign by weight before it
// weighs the whole tier: with most campaigns eligible, one or two draws
// decide; with few, the full pass does.
const draws = 8
