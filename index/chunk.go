package index

import (
	"math"
	"math/bits"

	"marquee"
	"marquee/targeting"
)

// chunkAds is how many ads a chunk is cut to (a variable so that tests can
// make chunks small). A write rebuilds only the
// chunks its ads leave and enter, so it costs O(chunkAds) work and memory
// plus a copy of the chunk list (8 bytes a chunk); a query pays a few
// instructions for each chunk it crosses. At 1,000,000 ads that is ~1,000
// chunks of ~1,500 rows (24 words a bitset).
var chunkAds = 1024

// chunk is a run of adjacent ads of a Snapshot in (endAt, id) order, with
// their rows, list items and bitsets. A chunk is never mutated after it is
// built; snapshots share the chunks a write did not touch.
//
// Each condition object of an ad is one row; an ad without conditions is
// one open row. The rows of one ad are adjacent and in one chunk. For every
// dimension value there is a bitset of the rows that accept it, and one of
// the rows open on that dimension; a row is one condition, so ANDing the
// bitsets is exact, and an ad matches when any of its rows does (OR across
// conditions) — counted once, at its first matching row.
type chunk struct {
	// lo is the key (endAt, id) where the chunk's range starts: a chunk
	// holds the ads from its lo up to the next chunk's lo. The first
	// chunk's range starts at -∞ whatever its lo says.
	loEnd, loID int64
	builtNs     int64 // when the chunk was built, unix ns: sched is relative to it
	// nextStart is the earliest startAt among sched rows (math.MaxInt64 if
	// none): from then on a rebuild makes queries cheaper (see Index.Refresh).
	nextStart int64

	ids     []int64  // per ad, in order
	items   []byte   // every ad's list item followed by a comma
	itemOff []uint32 // per ad, and one past the last: ad i's item and comma are items[itemOff[i]:itemOff[i+1]]

	adRow    []int32 // per ad: its first row
	rowAd    []int32 // per row: its ad
	rowEnd   []int64 // per row: its ad's endAt (unix ns), for the binary search
	rowStart []int64 // per row: its ad's startAt
	cont     bitset  // rows that are not their ad's first row
	sched    bitset  // rows whose ad had not started when the chunk was built

	ages        [marquee.MaxAge + 1]bitset // nil when no row has that age
	ageAny      bitset
	genders     [3]bitset
	genderAny   bitset
	platforms   [targeting.NumPlatforms + 1]bitset
	platformAny bitset
	// countryAt[slot] is 1 + the index in countries of the slot's bitset,
	// or 0 when no row names that country.
	countryAt  [marquee.CountrySlots]uint16
	countries  []bitset
	countryAny bitset

	bytes int // memory held by the chunk, roughly
}

// slab hands out zeroed bitsets of one length from a few large
// allocations.
type slab struct {
	words int
	free  []uint64
	bytes int
}

func (s *slab) get() bitset {
	if len(s.free) < s.words {
		s.free = make([]uint64, s.words*32)
		s.bytes += 8 * len(s.free)
	}
	b := s.free[:s.words:s.words]
	s.free = s.free[s.words:]
	return b
}

// buildChunk makes a chunk of entries, which are sorted by (endAt, id), at
// instant now (unix ns). It points each entry's item at its copy in the
// chunk, so the bytes are held once.
func buildChunk(entries []*entry, now int64) *chunk {
	rows, size := 0, 0
	for _, e := range entries {
		rows += len(e.conds)
		size += len(e.item) + 1
	}
	c := &chunk{
		builtNs:   now,
		nextStart: math.MaxInt64,
		ids:       make([]int64, 0, len(entries)),
		items:     make([]byte, 0, size),
		itemOff:   make([]uint32, 0, len(entries)+1),
		adRow:     make([]int32, 0, len(entries)),
		rowAd:     make([]int32, 0, rows),
		rowEnd:    make([]int64, 0, rows),
		rowStart:  make([]int64, 0, rows),
	}
	if len(entries) > 0 {
		c.loEnd, c.loID = entries[0].endAt, entries[0].id
	}
	bs := &slab{words: (rows + 63) / 64}
	c.ageAny, c.genderAny, c.platformAny, c.countryAny, c.cont, c.sched = bs.get(), bs.get(), bs.get(), bs.get(), bs.get(), bs.get()
	lazy := func(b *bitset) bitset {
		if *b == nil {
			*b = bs.get()
		}
		return *b
	}
	// Rows whose age range starts (ends) at each age; ages[a] is derived
	// from them below, in two passes of word ORs, instead of setting one
	// bit per age in every row's range.
	scratch := &slab{words: bs.words}
	var startsAt, endsAt [marquee.MaxAge + 1]bitset
	for _, e := range entries {
		ad := len(c.ids)
		off := len(c.items)
		c.items = append(append(c.items, e.item...), ',')
		e.item = c.items[off : len(c.items)-1 : len(c.items)-1]
		c.ids = append(c.ids, e.id)
		c.itemOff = append(c.itemOff, uint32(off))
		c.adRow = append(c.adRow, int32(len(c.rowAd)))
		for i := range e.conds {
			cd := &e.conds[i]
			row := len(c.rowAd)
			c.rowAd = append(c.rowAd, int32(ad))
			c.rowEnd = append(c.rowEnd, e.endAt)
			c.rowStart = append(c.rowStart, e.startAt)
			if i != 0 {
				c.cont.set(row)
			}
			if e.startAt >= now {
				c.sched.set(row)
				c.nextStart = min(c.nextStart, e.startAt)
			}
			if cd.AgeLo == marquee.MinAge && cd.AgeHi == marquee.MaxAge {
				c.ageAny.set(row)
			} else {
				if startsAt[cd.AgeLo] == nil {
					startsAt[cd.AgeLo] = scratch.get()
				}
				if endsAt[cd.AgeHi] == nil {
					endsAt[cd.AgeHi] = scratch.get()
				}
				startsAt[cd.AgeLo].set(row)
				endsAt[cd.AgeHi].set(row)
			}
			setMask(cd.Genders, c.genders[:], c.genderAny, row, lazy)
			setMask(cd.Platforms, c.platforms[:], c.platformAny, row, lazy)
			if cd.Countries == nil {
				c.countryAny.set(row)
			}
			for _, slot := range cd.Countries {
				if c.countryAt[slot] == 0 {
					c.countries = append(c.countries, bs.get())
					c.countryAt[slot] = uint16(len(c.countries))
				}
				c.countries[c.countryAt[slot]-1].set(row)
			}
		}
	}
	c.itemOff = append(c.itemOff, uint32(len(c.items)))
	c.buildAges(&startsAt, &endsAt, bs)
	c.bytes = bs.bytes + cap(c.items) + 4*cap(c.itemOff) + 8*cap(c.ids) + 4*cap(c.adRow) +
		4*cap(c.rowAd) + 16*cap(c.rowEnd) + 24*cap(c.countries) + int(chunkHeaderBytes)
	return c
}

// chunkHeaderBytes is the size of a chunk's own struct, roughly: its
// fixed arrays of bitset headers and country indexes.
const chunkHeaderBytes = 24*(marquee.MaxAge+1+3+targeting.NumPlatforms+1) + 2*marquee.CountrySlots + 256

// buildAges sets ages[a] to the rows with ageLo ≤ a ≤ ageHi: the rows whose
// range ends at or after a (an OR running down from 100), AND the rows whose
// range starts at or before a (an OR running up from 1). Ages no range
// covers stay nil.
func (c *chunk) buildAges(startsAt, endsAt *[marquee.MaxAge + 1]bitset, bs *slab) {
	var acc bitset
	for a := marquee.MaxAge; a >= marquee.MinAge; a-- {
		if endsAt[a] != nil {
			if acc == nil {
				acc = endsAt[a]
			} else {
				orInto(acc, endsAt[a])
			}
		}
		if acc != nil {
			c.ages[a] = bs.get()
			copy(c.ages[a], acc)
		}
	}
	acc = nil
	for a := marquee.MinAge; a <= marquee.MaxAge; a++ {
		if startsAt[a] != nil {
			if acc == nil {
				acc = startsAt[a]
			} else {
				orInto(acc, startsAt[a])
			}
		}
		switch {
		case c.ages[a] == nil:
		case acc == nil:
			c.ages[a] = nil
		default:
			andInto(c.ages[a], acc)
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

// lastEnd returns the endAt of the chunk's last ad.
func (c *chunk) lastEnd() int64 { return c.rowEnd[len(c.rowEnd)-1] }

// firstLive returns the first row whose ad has endAt > now.
func (c *chunk) firstLive(now int64) int {
	lo, hi := 0, len(c.rowEnd)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.rowEnd[m] > now {
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

// filters resolves q's dimensions to the chunk's bitsets. A value no row
// restricts to has only the open rows.
func (c *chunk) filters(q *Query, fs *[4]filter) int {
	n := 0
	add := func(val, open bitset) {
		if val == nil {
			val = open
		}
		fs[n] = filter{val, open}
		n++
	}
	if q.Age != 0 {
		add(c.ages[q.Age], c.ageAny)
	}
	if q.Gender != 0 {
		add(c.genders[q.Gender], c.genderAny)
	}
	if q.Platform != 0 {
		add(c.platforms[q.Platform], c.platformAny)
	}
	if q.Country != 0 {
		var val bitset
		if i := c.countryAt[q.Country-1]; i != 0 {
			val = c.countries[i-1]
		}
		add(val, c.countryAny)
	}
	return n
}

// each visits the chunk's ads from row p on that match q and are active at
// now, as Snapshot.each does, after skipping skip of them, until left have
// been visited; it returns what remains of skip and left.
//
// It works a word (64 rows) at a time: AND the filters' bitsets, drop rows
// of ads already counted at an earlier row, drop rows not started yet, then
// skip the whole word by its popcount or visit its rows.
func (c *chunk) each(q *Query, now int64, p, skip, left int, visit func(c *chunk, ad int32)) (int, int) {
	n := len(c.rowAd)
	var fs [4]filter
	nf := c.filters(q, &fs)
	// Rows outside sched started before the build; before the build
	// instant, any row may not have started.
	checkAll := now < c.builtNs
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
		cont := c.cont[wi]
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
		check := w & c.sched[wi]
		if checkAll {
			check = w
		}
		for ; check != 0; check &= check - 1 {
			b := bits.TrailingZeros64(check)
			if c.rowStart[wi<<6+b] >= now {
				w &^= 1 << uint(b)
			}
		}
		if k := bits.OnesCount64(w); skip >= k {
			skip -= k
			continue
		}
		for ; w != 0; w &= w - 1 {
			if skip > 0 {
				skip--
				continue
			}
			visit(c, c.rowAd[wi<<6+bits.TrailingZeros64(w)])
			if left--; left == 0 {
				return 0, 0
			}
		}
	}
	return skip, left
}
