package reports

import (
	"sync"
	"sync/atomic"

	"marquee"
	"marquee/ivt"
	"marquee/privacy"
	"marquee/reportrow"
)

// Requests counts decisions' slots by placement, UTC hour, country and
// device type, and what became of each (marquee.Outcome), in memory until
// a Tally's flush adds them to the store in its transaction. Count is
// safe from any goroutine; it takes no lock and allocates nothing once
// its key was seen (the keys are few: an hour's placements × countries
// × device types), only an atomic add.
//
// How exact: a flush (every -reports-flush, and at shutdown) writes
// what was counted; a crash (kill -9) loses what was counted since the
// last flush, at most one flush period of requests. Request counts do
// not come from the event files (a line per slot would cost the collector
// a write per decision), so `marquee reports rebuild` keeps them.
type Requests struct {
	table atomic.Pointer[map[RequestKey]*requestCounts] // read without a lock; replaced, never changed, under mu
	mu    sync.Mutex
	// retired are the keys the last take dropped from the table: taken
	// once more by the next, for a Count that read them just before.
	retired map[RequestKey]*requestCounts
}

// The outcomes a report row counts are the vocabulary's, in its order
// (reportrow cannot import it).
var _ = [1]struct{}{}[reportrow.NumOutcomes-int(marquee.NumOutcomes)]

// The invalid reasons a report row counts are ivt's but Human, in its
// order.
var _ = [1]struct{}{}[reportrow.NumInvalid-int(ivt.NumReasons-1)]

// People's reports net the credits of bursts (reportrow.PeopleIVT).
var _ = [1]struct{}{}[int(ivt.Burst)-12]

// requestCounts are one key's counts by outcome (people's requests),
// then by invalid reason (ivt.Reason-1), each taken (swapped with 0) by
// the flush.
type requestCounts [marquee.NumOutcomes + reportrow.NumInvalid + reportrow.NumLimited]atomic.Int64

// limitedAt is where requestCounts' limited counts start.
const limitedAt = int(marquee.NumOutcomes) + reportrow.NumInvalid

// The signals a report row counts limited slots by are privacy's, in its
// order.
var _ = [1]struct{}{}[reportrow.NumLimited-len(privacy.SignalNames)]

// RequestKey is what a slot's request is counted by.
type RequestKey struct {
	Placement int64
	Hour      int64 // unix seconds of the UTC hour's start
	Country   [2]byte
	Device    uint8 // 1 + its index in marquee.DeviceTypes, 0 unknown
}

// DeviceCode is a device type's code in a RequestKey.
func DeviceCode(device string) uint8 {
	for i, d := range marquee.DeviceTypes {
		if d == device {
			return uint8(i + 1)
		}
	}
	return 0
}

// NewRequests returns an empty count.
func NewRequests() *Requests {
	r := &Requests{}
	r.table.Store(&map[RequestKey]*requestCounts{})
	return r
}

// Count counts one slot of k and its outcome.
func (r *Requests) Count(k RequestKey, o marquee.Outcome) {
	r.counts(k)[o].Add(1)
}

// CountInvalid counts one slot of k asked for by invalid traffic, by why
// (not Human): apart from people's requests and their outcomes.
func (r *Requests) CountInvalid(k RequestKey, why ivt.Reason) {
	if why != ivt.Human && why < ivt.NumReasons {
		r.counts(k)[int(marquee.NumOutcomes)+int(why)-1].Add(1)
	}
}

// CountLimited counts one slot of k of people's whose request's privacy
// signals (carried) denied an activity, under each signal carried.
func (r *Requests) CountLimited(k RequestKey, carried privacy.Carried) {
	if carried == 0 {
		return
	}
	c := r.counts(k)
	for i := range reportrow.NumLimited {
		if carried&(1<<i) != 0 {
			c[limitedAt+i].Add(1)
		}
	}
}

// counts is key k's counts, added to the table when k is new.
func (r *Requests) counts(k RequestKey) *requestCounts {
	if c := (*r.table.Load())[k]; c != nil {
		return c
	}
	return r.add(k)
}

// add adds key k to the table (a copy with it: keys are few and new ones
// rare) and returns its counts.
func (r *Requests) add(k RequestKey) *requestCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.table.Load()
	if c := old[k]; c != nil {
		return c
	}
	t := make(map[RequestKey]*requestCounts, len(old)+1)
	for key, c := range old {
		t[key] = c
	}
	c := new(requestCounts)
	t[k] = c
	r.table.Store(&t)
	return c
}

// keepHours is how long a key stays in the table after its hour: a
// decision counts the hour it is made in, so an older key is never
// counted again and can go.
const keepHours = 2

// take returns what was counted since the last take, as rows (each
// counter swapped with 0: nothing is lost to a Count running meanwhile),
// and retires the keys of hours no decision counts any more (taken once
// more by the next take, then dropped).
func (r *Requests) take() []reportrow.RequestRow {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := *r.table.Load()
	var rows []reportrow.RequestRow
	collect := func(k RequestKey, c *requestCounts) {
		row := reportrow.RequestRow{Hour: k.Hour, Placement: k.Placement, Country: countryOf(k.Country), Device: deviceOf(k.Device)}
		n := int64(0)
		for o := range row.Outcomes {
			row.Outcomes[o] = c[o].Swap(0)
			n += row.Outcomes[o]
		}
		for i := range row.Invalid {
			row.Invalid[i] = c[int(marquee.NumOutcomes)+i].Swap(0)
			n += row.Invalid[i]
		}
		for i := range row.Limited {
			row.Limited[i] = c[limitedAt+i].Swap(0)
			n += row.Limited[i]
		}
		if n > 0 {
			rows = append(rows, row)
		}
	}
	for k, c := range r.retired {
		collect(k, c)
	}
	r.retired = nil
	newest := int64(0)
	for k := range t {
		newest = max(newest, k.Hour)
	}
	keep := make(map[RequestKey]*requestCounts, len(t))
	for k, c := range t {
		collect(k, c)
		if k.Hour > newest-keepHours*3600 {
			keep[k] = c
		} else {
			if r.retired == nil {
				r.retired = map[RequestKey]*requestCounts{}
			}
			r.retired[k] = c
		}
	}
	if len(keep) < len(t) {
		r.table.Store(&keep)
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

// deviceOf is a device code's type ("" unknown).
func deviceOf(code uint8) string {
	if code == 0 || int(code) > len(marquee.DeviceTypes) {
		return ""
	}
	return marquee.DeviceTypes[code-1]
}

// putBack returns rows a failed flush took.
func (r *Requests) putBack(rows []reportrow.RequestRow) {
	for _, row := range rows {
		k := RequestKey{Placement: row.Placement, Hour: row.Hour, Device: DeviceCode(row.Device)}
		if row.Country != "ZZ" {
			copy(k.Country[:], row.Country)
		}
		c := r.counts(k)
		for o, n := range row.Outcomes {
			c[o].Add(n)
		}
		for i, n := range row.Invalid {
			c[int(marquee.NumOutcomes)+i].Add(n)
		}
		for i, n := range row.Limited {
			c[limitedAt+i].Add(n)
		}
	}
}
