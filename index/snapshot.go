package index

import (
	"math/bits"
	"time"

	"marquee"
)

// Query is a compiled GET /api/v1/ad request. A zero dimension field puts no
// filter on that dimension.
type Query struct {
	Offset   int // ≥ 0
	Limit    int // ≥ 1
	Age      int // 1..100
	Gender   int // GenderM, GenderF
	Country  int // marquee.CountrySlot + 1
	Platform int // Platform*
}

// Snapshot is an immutable view of every ad that was active or scheduled
// when it was built. It is never mutated after it is built, so any number
// of goroutines may query it without locking.
//
// Each condition object of an ad is one row; an ad without conditions is
// one open row. Rows are in (endAt, id) order, so the rows of one ad are
// adjacent. For every dimension value there is a bitset of the rows that
// accept it, and one of the rows open on that dimension; a row is one
// condition, so ANDing the bitsets is exact, and an ad matches when any of
// its rows does (OR across conditions) — counted once, at its first row.
type Snapshot struct {
	built time.Time

	ids   []int64  // per ad, in order
	items [][]byte // per ad: its list item, shared with the index's entries

	rowAd    []int32 // per row: its ad
	rowEnd   []int64 // per row: its ad's endAt (unix ns), for the binary search
	rowStart []int64 // per row: its ad's startAt

	ages        [marquee.MaxAge + 1]bitset // nil when no row has that age
	ageAny      bitset
	genders     [3]bitset
	genderAny   bitset
	platforms   [numPlatforms + 1]bitset
	platformAny bitset
	countries   [marquee.CountrySlots]bitset
	countryAny  bitset
}

// Len returns the number of ads in the snapshot (active and scheduled).
func (s *Snapshot) Len() int { return len(s.ids) }

// Built returns when the snapshot was built.
func (s *Snapshot) Built() time.Time { return s.built }

// build makes a snapshot of entries, which must be sorted by (endAt, id).
func build(entries []*entry, now time.Time) *Snapshot {
	rows := 0
	for _, e := range entries {
		rows += len(e.conds)
	}
	s := &Snapshot{
		built:       now,
		ids:         make([]int64, len(entries)),
		items:       make([][]byte, len(entries)),
		rowAd:       make([]int32, 0, rows),
		rowEnd:      make([]int64, 0, rows),
		rowStart:    make([]int64, 0, rows),
		ageAny:      newBitset(rows),
		genderAny:   newBitset(rows),
		platformAny: newBitset(rows),
		countryAny:  newBitset(rows),
	}
	lazy := func(b *bitset) bitset {
		if *b == nil {
			*b = newBitset(rows)
		}
		return *b
	}
	for ad, e := range entries {
		s.ids[ad], s.items[ad] = e.id, e.item
		for c := range e.conds {
			c := &e.conds[c]
			row := len(s.rowAd)
			s.rowAd = append(s.rowAd, int32(ad))
			s.rowEnd = append(s.rowEnd, e.endAt)
			s.rowStart = append(s.rowStart, e.startAt)
			if c.ageLo == marquee.MinAge && c.ageHi == marquee.MaxAge {
				s.ageAny.set(row)
			} else {
				for age := int(c.ageLo); age <= int(c.ageHi); age++ {
					lazy(&s.ages[age]).set(row)
				}
			}
			setMask(c.genders, s.genders[:], s.genderAny, row, lazy)
			setMask(c.platforms, s.platforms[:], s.platformAny, row, lazy)
			if c.countries == nil {
				s.countryAny.set(row)
			}
			for _, cc := range c.countries {
				lazy(&s.countries[cc]).set(row)
			}
		}
	}
	return s
}

// setMask sets row in the bitset of every value in mask, or in open when
// mask is empty.
func setMask(mask uint8, sets []bitset, open bitset, row int, lazy func(*bitset) bitset) {
	if mask == 0 {
		open.set(row)
		return
	}
	for v := range sets {
		if mask&(1<<v) != 0 {
			lazy(&sets[v]).set(row)
		}
	}
}

// firstLive returns the first row whose ad has endAt > now.
func (s *Snapshot) firstLive(now int64) int {
	lo, hi := 0, len(s.rowEnd)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.rowEnd[m] > now {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// candidates returns word wi of the set of rows that match q.
func (s *Snapshot) candidates(q *Query, wi int) uint64 {
	w := ^uint64(0)
	if q.Age != 0 {
		w &= s.ages[q.Age].word(wi) | s.ageAny[wi]
	}
	if q.Gender != 0 {
		w &= s.genders[q.Gender].word(wi) | s.genderAny[wi]
	}
	if q.Platform != 0 {
		w &= s.platforms[q.Platform].word(wi) | s.platformAny[wi]
	}
	if q.Country != 0 {
		w &= s.countries[q.Country-1].word(wi) | s.countryAny[wi]
	}
	return w
}

// each calls visit with the ads (by position) that match q and are active
// at now (startAt < now < endAt, unix nanoseconds), in (endAt, id) order,
// after skipping q.Offset of them, until q.Limit have been visited. It costs
// O(offset+limit) words in the common case and allocates nothing.
func (s *Snapshot) each(q *Query, now int64, visit func(ad int32)) {
	n := len(s.rowAd)
	p := s.firstLive(now)
	if p >= n || q.Limit <= 0 {
		return
	}
	skip, left := q.Offset, q.Limit
	last := int32(-1) // the last ad counted: its other rows are not counted again
	for wi := p >> 6; wi<<6 < n; wi++ {
		w := s.candidates(q, wi)
		if wi == p>>6 {
			w &= ^uint64(0) << (uint(p) & 63)
		}
		for w != 0 {
			i := wi<<6 + bits.TrailingZeros64(w)
			w &= w - 1
			if i >= n {
				return
			}
			ad := s.rowAd[i]
			if ad == last || s.rowStart[i] >= now { // counted, or scheduled
				continue
			}
			last = ad
			if skip > 0 {
				skip--
				continue
			}
			visit(ad)
			if left--; left == 0 {
				return
			}
		}
	}
}

// AppendPage appends the items of the page q selects at instant now to dst,
// as the comma-separated JSON objects that go between the brackets of
// {"items":[…]}, and returns the extended slice. It allocates nothing when
// dst has room.
func (s *Snapshot) AppendPage(dst []byte, q *Query, now time.Time) []byte {
	sep := false
	s.each(q, now.UnixNano(), func(ad int32) {
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		dst = append(dst, s.items[ad]...)
	})
	return dst
}

// AppendIDs appends the ids of the page q selects at instant now to dst.
func (s *Snapshot) AppendIDs(dst []int64, q *Query, now time.Time) []int64 {
	s.each(q, now.UnixNano(), func(ad int32) { dst = append(dst, s.ids[ad]) })
	return dst
}
