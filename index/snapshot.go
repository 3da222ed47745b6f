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
// when it was built, in (endAt, id) order, with one bitset per targeted
// dimension value. It is never mutated after it is built, so any number of
// goroutines may query it without locking.
type Snapshot struct {
	built   time.Time
	entries []*entry
	endAt   []int64 // entries[i].endAt, contiguous for the binary search
	startAt []int64

	// For each dimension, the ads that accept a value (nil when none does)
	// and the ads that accept every value.
	ages        [marquee.MaxAge + 1]bitset
	ageAny      bitset
	genders     [3]bitset
	genderAny   bitset
	platforms   [numPlatforms + 1]bitset
	platformAny bitset
	countries   [marquee.CountrySlots]bitset
	countryAny  bitset

	inexact bitset // ads whose bitset match must be confirmed per condition
}

// Len returns the number of ads in the snapshot (active and scheduled).
func (s *Snapshot) Len() int { return len(s.entries) }

// Built returns when the snapshot was built.
func (s *Snapshot) Built() time.Time { return s.built }

// build makes a snapshot of entries, which must be sorted by (endAt, id).
func build(entries []*entry, now time.Time) *Snapshot {
	n := len(entries)
	s := &Snapshot{
		built:       now,
		entries:     entries,
		endAt:       make([]int64, n),
		startAt:     make([]int64, n),
		ageAny:      newBitset(n),
		genderAny:   newBitset(n),
		platformAny: newBitset(n),
		countryAny:  newBitset(n),
		inexact:     newBitset(n),
	}
	lazy := func(b *bitset) bitset {
		if *b == nil {
			*b = newBitset(n)
		}
		return *b
	}
	for i, e := range entries {
		s.endAt[i], s.startAt[i] = e.endAt, e.startAt
		if !e.exact() {
			s.inexact.set(i)
		}
		if e.ageAny {
			s.ageAny.set(i)
		} else {
			for w, word := range e.ages {
				for word != 0 {
					age := w*64 + bits.TrailingZeros64(word)
					word &= word - 1
					lazy(&s.ages[age]).set(i)
				}
			}
		}
		if e.genderAny {
			s.genderAny.set(i)
		} else {
			setMask(e.genders, s.genders[:], i, lazy)
		}
		if e.platformAny {
			s.platformAny.set(i)
		} else {
			setMask(e.platforms, s.platforms[:], i, lazy)
		}
		if e.countryAny {
			s.countryAny.set(i)
		} else {
			for _, c := range e.countries {
				lazy(&s.countries[c]).set(i)
			}
		}
	}
	return s
}

func setMask(mask uint8, sets []bitset, i int, lazy func(*bitset) bitset) {
	for v := range sets {
		if mask&(1<<v) != 0 {
			lazy(&sets[v]).set(i)
		}
	}
}

// firstLive returns the position of the first ad with endAt > now.
func (s *Snapshot) firstLive(now int64) int {
	lo, hi := 0, len(s.endAt)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.endAt[m] > now {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// candidates returns word wi of the set of ads the bitsets admit for q.
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

// each calls visit for the ads that match q and are active at now
// (startAt < now < endAt, unix nanoseconds), in (endAt, id) order, after
// skipping q.Offset of them, until q.Limit have been visited.
// It costs O(offset+limit) words in the common case and allocates nothing.
func (s *Snapshot) each(q *Query, now int64, visit func(e *entry)) {
	n := len(s.entries)
	p := s.firstLive(now)
	if p >= n || q.Limit <= 0 {
		return
	}
	skip, left := q.Offset, q.Limit
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
			if s.startAt[i] >= now {
				continue // scheduled
			}
			e := s.entries[i]
			if s.inexact.has(i) && !e.matches(q) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			visit(e)
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
	first := true
	s.each(q, now.UnixNano(), func(e *entry) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, e.item...)
	})
	return dst
}

// AppendIDs appends the ids of the page q selects at instant now to dst.
func (s *Snapshot) AppendIDs(dst []int64, q *Query, now time.Time) []int64 {
	s.each(q, now.UnixNano(), func(e *entry) { dst = append(dst, e.id) })
	return dst
}
