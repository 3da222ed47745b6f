package index

import (
	"math"
	"math/bits"
	"time"
)

// bitsets returns a pointer to every bitset of s, always in the same order,
// so that two snapshots' lists pair up.
func (s *Snapshot) bitsets() []*bitset {
	var bs []*bitset
	for i := range s.ages {
		bs = append(bs, &s.ages[i])
	}
	for i := range s.genders {
		bs = append(bs, &s.genders[i])
	}
	for i := range s.platforms {
		bs = append(bs, &s.platforms[i])
	}
	for i := range s.countries {
		bs = append(bs, &s.countries[i])
	}
	return append(bs, &s.ageAny, &s.genderAny, &s.platformAny, &s.countryAny, &s.cont, &s.sched)
}

// firstRow returns the first row of ad, or the row count past the last ad.
func (s *Snapshot) firstRow(ad int) int {
	if ad == len(s.adRow) {
		return len(s.rowAd)
	}
	return int(s.adRow[ad])
}

// keyLess reports whether ad sorts before (endAt, id).
func (s *Snapshot) keyLess(ad int, endAt, id int64) bool {
	end := s.rowEnd[s.adRow[ad]]
	return end < endAt || end == endAt && s.ids[ad] < id
}

// insertionPoint returns the first ad at or after from that does not sort
// before e.
func (s *Snapshot) insertionPoint(from int, e *entry) int {
	lo, hi := from, len(s.ids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.keyLess(m, e.endAt, e.id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// position returns the position of entry e's ad in s, if s holds it.
func (s *Snapshot) position(e *entry) (int, bool) {
	i := s.insertionPoint(0, e)
	return i, i < len(s.ids) && s.ids[i] == e.id
}

// patch returns a snapshot built at now that holds old's ads except the
// expired ones and those at the positions in drop (ascending), plus the
// entries in add (sorted by (endAt, id), none expired at now, placed in
// arena, which extends old's). Runs of old ads are copied — arrays by
// slices, bitsets by shifted words — so a small change to a large catalog
// costs a few copies of its arrays, not a walk over every entry.
func patch(old *Snapshot, arena []byte, now time.Time, drop []int, add []*entry) *Snapshot {
	nowNs := now.UnixNano()
	n := len(old.ids)
	firstAd := n
	if p := old.firstLive(nowNs); p < len(old.rowAd) {
		firstAd = int(old.rowAd[p])
	}
	for len(drop) > 0 && drop[0] < firstAd {
		drop = drop[1:]
	}
	ads := n - firstAd - len(drop) + len(add)
	rows := len(old.rowAd) - old.firstRow(firstAd)
	for _, d := range drop {
		rows -= old.firstRow(d+1) - old.firstRow(d)
	}
	for _, e := range add {
		rows += len(e.conds)
	}
	s := newSnapshot(now, arena, ads, rows)
	pairs := pairBitsets(old, s)
	perAge := func(row int, lo, hi uint8) {
		for a := int(lo); a <= int(hi); a++ {
			s.lazy(&s.ages[a]).set(row)
		}
	}
	for oi := firstAd; oi < n || len(add) > 0; {
		end := n
		if len(drop) > 0 {
			end = drop[0]
		}
		ins := n
		if len(add) > 0 {
			ins = old.insertionPoint(oi, add[0])
		}
		end = min(end, ins)
		s.copyRun(old, oi, end, pairs)
		oi = end
		switch {
		case len(add) > 0 && ins == oi:
			s.appendEntry(add[0], perAge)
			add = add[1:]
		case len(drop) > 0 && drop[0] == oi:
			oi++
			drop = drop[1:]
		}
	}
	// Rows scheduled at old's build may have started since.
	s.nextStart = math.MaxInt64
	for wi, w := range s.sched {
		for ; w != 0; w &= w - 1 {
			row := wi<<6 + bits.TrailingZeros64(w)
			if start := s.rowStart[row]; start < s.builtNs {
				s.sched[wi] &^= 1 << (uint(row) & 63)
			} else {
				s.nextStart = min(s.nextStart, start)
			}
		}
	}
	return s
}

// pairBitsets pairs each non-empty bitset of old with its counterpart in s.
func pairBitsets(old, s *Snapshot) [][2]*bitset {
	var pairs [][2]*bitset
	ob, nb := old.bitsets(), s.bitsets()
	for i := range ob {
		if *ob[i] != nil {
			pairs = append(pairs, [2]*bitset{ob[i], nb[i]})
		}
	}
	return pairs
}

// copyRun appends old's ads [a0, a1) with their rows and bits; their items
// stay where they are in the arena.
func (s *Snapshot) copyRun(old *Snapshot, a0, a1 int, pairs [][2]*bitset) {
	if a0 >= a1 {
		return
	}
	r0, r1 := old.firstRow(a0), old.firstRow(a1)
	dstAd, dstRow := len(s.ids), len(s.rowAd)
	s.ids = append(s.ids, old.ids[a0:a1]...)
	s.itemOff = append(s.itemOff, old.itemOff[a0:a1]...)
	s.itemEnd = append(s.itemEnd, old.itemEnd[a0:a1]...)
	for _, row := range old.adRow[a0:a1] {
		s.adRow = append(s.adRow, row-int32(r0)+int32(dstRow))
	}
	for _, ad := range old.rowAd[r0:r1] {
		s.rowAd = append(s.rowAd, ad-int32(a0)+int32(dstAd))
	}
	s.rowEnd = append(s.rowEnd, old.rowEnd[r0:r1]...)
	s.rowStart = append(s.rowStart, old.rowStart[r0:r1]...)
	for _, p := range pairs {
		copyBits(s.lazy(p[1]), dstRow, *p[0], r0, r1-r0)
	}
}
