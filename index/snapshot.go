package index

import (
	"math"
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
// its rows does (OR across conditions) — counted once, at its first
// matching row.
type Snapshot struct {
	built time.Time

	ids []int64 // per ad, in order
	// items is the index's arena as it was at the build: every ad's list
	// item followed by a comma; ad i's is items[itemOff[i]:itemEnd[i]]. The
	// arena is append-only, so snapshots share it and a write copies no
	// item.
	items            []byte
	itemOff, itemEnd []uint32

	adRow    []int32 // per ad: its first row
	rowAd    []int32 // per row: its ad
	rowEnd   []int64 // per row: its ad's endAt (unix ns), for the binary search
	rowStart []int64 // per row: its ad's startAt
	cont     bitset  // rows that are not their ad's first row
	sched    bitset  // rows whose ad had not started when the snapshot was built
	builtNs  int64   // built, unix ns
	// nextStart is the earliest startAt among sched rows (math.MaxInt64 if
	// none): from then on a rebuild makes queries cheaper (see Index.Refresh).
	nextStart int64

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

// newSnapshot returns an empty snapshot of the arena built at now with room
// for ads and rows; its always-present bitsets cover rows.
func newSnapshot(now time.Time, arena []byte, ads, rows int) *Snapshot {
	return &Snapshot{
		built:       now,
		builtNs:     now.UnixNano(),
		nextStart:   math.MaxInt64,
		ids:         make([]int64, 0, ads),
		items:       arena,
		itemOff:     make([]uint32, 0, ads),
		itemEnd:     make([]uint32, 0, ads),
		adRow:       make([]int32, 0, ads),
		rowAd:       make([]int32, 0, rows),
		rowEnd:      make([]int64, 0, rows),
		rowStart:    make([]int64, 0, rows),
		ageAny:      newBitset(rows),
		genderAny:   newBitset(rows),
		platformAny: newBitset(rows),
		countryAny:  newBitset(rows),
		cont:        newBitset(rows),
		sched:       newBitset(rows),
	}
}

// lazy returns *b, allocating it for the snapshot's rows if it is nil.
func (s *Snapshot) lazy(b *bitset) bitset {
	if *b == nil {
		*b = newBitset(cap(s.rowAd))
	}
	return *b
}

// appendEntry appends an ad and its rows, setting every bit but the
// per-age ones: it hands each row's closed age range to ages.
func (s *Snapshot) appendEntry(e *entry, ages func(row int, lo, hi uint8)) {
	ad := len(s.ids)
	s.ids = append(s.ids, e.id)
	s.itemOff = append(s.itemOff, e.itemOff)
	s.itemEnd = append(s.itemEnd, e.itemEnd)
	s.adRow = append(s.adRow, int32(len(s.rowAd)))
	for c := range e.conds {
		cd := &e.conds[c]
		row := len(s.rowAd)
		s.rowAd = append(s.rowAd, int32(ad))
		s.rowEnd = append(s.rowEnd, e.endAt)
		s.rowStart = append(s.rowStart, e.startAt)
		if c != 0 {
			s.cont.set(row)
		}
		if e.startAt >= s.builtNs {
			s.sched.set(row)
			s.nextStart = min(s.nextStart, e.startAt)
		}
		if cd.ageLo == marquee.MinAge && cd.ageHi == marquee.MaxAge {
			s.ageAny.set(row)
		} else {
			ages(row, cd.ageLo, cd.ageHi)
		}
		setMask(cd.genders, s.genders[:], s.genderAny, row, s.lazy)
		setMask(cd.platforms, s.platforms[:], s.platformAny, row, s.lazy)
		if cd.countries == nil {
			s.countryAny.set(row)
		}
		for _, cc := range cd.countries {
			s.lazy(&s.countries[cc]).set(row)
		}
	}
}

// build makes a snapshot of entries, which must be sorted by (endAt, id)
// and placed in arena.
func build(entries []*entry, arena []byte, now time.Time) *Snapshot {
	rows := 0
	for _, e := range entries {
		rows += len(e.conds)
	}
	s := newSnapshot(now, arena, len(entries), rows)
	// Rows whose age range starts (ends) at each age; ages[a] is derived
	// from them below, in two passes of word ORs, instead of setting one
	// bit per age in every row's range.
	var startsAt, endsAt [marquee.MaxAge + 1]bitset
	ranges := func(row int, lo, hi uint8) {
		s.lazy(&startsAt[lo]).set(row)
		s.lazy(&endsAt[hi]).set(row)
	}
	for _, e := range entries {
		s.appendEntry(e, ranges)
	}
	s.buildAges(&startsAt, &endsAt, rows)
	return s
}

// buildAges sets ages[a] to the rows with ageLo ≤ a ≤ ageHi: the rows whose
// range ends at or after a (an OR running down from 100), AND the rows whose
// range starts at or before a (an OR running up from 1). Ages no range
// covers stay nil.
func (s *Snapshot) buildAges(startsAt, endsAt *[marquee.MaxAge + 1]bitset, rows int) {
	var acc bitset
	for a := marquee.MaxAge; a >= marquee.MinAge; a-- {
		if endsAt[a] != nil {
			if acc == nil {
				acc = newBitset(rows)
			}
			orInto(acc, endsAt[a])
		}
		if acc != nil {
			s.ages[a] = append(bitset(nil), acc...)
		}
	}
	acc = nil
	for a := marquee.MinAge; a <= marquee.MaxAge; a++ {
		if startsAt[a] != nil {
			if acc == nil {
				acc = newBitset(rows)
			}
			orInto(acc, startsAt[a])
		}
		switch {
		case s.ages[a] == nil:
		case acc == nil:
			s.ages[a] = nil
		default:
			andInto(s.ages[a], acc)
		}
	}
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

// filter is one dimension of a query: the rows that accept the asked
// value, and the rows open on the dimension.
type filter struct{ val, open bitset }

// filters resolves q's dimensions to their bitsets once per query. A value
// no row restricts to has only the open rows.
func (s *Snapshot) filters(q *Query, fs *[4]filter) int {
	n := 0
	add := func(val, open bitset) {
		if val == nil {
			val = open
		}
		fs[n] = filter{val, open}
		n++
	}
	if q.Age != 0 {
		add(s.ages[q.Age], s.ageAny)
	}
	if q.Gender != 0 {
		add(s.genders[q.Gender], s.genderAny)
	}
	if q.Platform != 0 {
		add(s.platforms[q.Platform], s.platformAny)
	}
	if q.Country != 0 {
		add(s.countries[q.Country-1], s.countryAny)
	}
	return n
}

// each calls visit with the ads (by position) that match q and are active
// at now (startAt < now < endAt, unix nanoseconds), in (endAt, id) order,
// after skipping q.Offset of them, until q.Limit have been visited.
//
// It works a word (64 rows) at a time: AND the filters' bitsets, drop rows
// of ads already counted at an earlier row, drop rows not started yet, then
// skip the whole word by its popcount or visit its rows. It costs
// O(offset/64 + limit) in the common case and allocates nothing.
func (s *Snapshot) each(q *Query, now int64, visit func(ad int32)) {
	n := len(s.rowAd)
	p := s.firstLive(now) // an ad boundary: an ad's rows share its endAt
	if p >= n || q.Limit <= 0 {
		return
	}
	var fs [4]filter
	nf := s.filters(q, &fs)
	// Rows outside sched started before the build; before the build
	// instant, any row may not have started.
	checkAll := now < s.builtNs
	skip, left := q.Offset, q.Limit
	nw := (n + 63) >> 6
	var carry uint64 // 1 when the previous word's last row matched or follows a match of its ad
	m := ^uint64(0) << (uint(p) & 63)
	for wi := p >> 6; wi < nw; wi, m = wi+1, ^uint64(0) {
		for k := range nf {
			m &= fs[k].val[wi] | fs[k].open[wi]
		}
		if wi == nw-1 && n&63 != 0 {
			m &= 1<<(uint(n)&63) - 1
		}
		// dup: continuation rows after a matching row of the same ad.
		cont := s.cont[wi]
		dup := (m<<1 | carry) & cont
		for {
			next := dup | (dup<<1)&cont
			if next == dup {
				break
			}
			dup = next
		}
		carry = (m | dup) >> 63
		w := m &^ dup
		check := w & s.sched[wi]
		if checkAll {
			check = w
		}
		for ; check != 0; check &= check - 1 {
			b := bits.TrailingZeros64(check)
			if s.rowStart[wi<<6+b] >= now {
				w &^= 1 << uint(b)
			}
		}
		if c := bits.OnesCount64(w); skip >= c {
			skip -= c
			continue
		}
		for ; w != 0; w &= w - 1 {
			if skip > 0 {
				skip--
				continue
			}
			visit(s.rowAd[wi<<6+bits.TrailingZeros64(w)])
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
	start := len(dst)
	s.each(q, now.UnixNano(), func(ad int32) {
		dst = append(dst, s.items[s.itemOff[ad]:s.itemEnd[ad]]...) // the item and its comma
	})
	if len(dst) > start {
		dst = dst[:len(dst)-1] // the last comma
	}
	return dst
}

// AppendIDs appends the ids of the page q selects at instant now to dst.
func (s *Snapshot) AppendIDs(dst []int64, q *Query, now time.Time) []int64 {
	s.each(q, now.UnixNano(), func(ad int32) { dst = append(dst, s.ids[ad]) })
	return dst
}
