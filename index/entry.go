package index

import (
	"encoding/json"
	"slices"

	"marquee"
)

// Dimension codes shared by Query and the compiled conditions. Zero always
// means "any".
const (
	GenderM = 1 + iota
	GenderF
)

// Platform codes, in the order of marquee.Platforms, starting at 1.
const (
	PlatformAndroid = 1 + iota
	PlatformIOS
	PlatformWeb
	numPlatforms = 3
)

// cond is a compiled marquee.Condition. A zero mask or nil slice means any.
type cond struct {
	ageLo, ageHi uint8    // inclusive, 1..100
	genders      uint8    // bit 1<<GenderM | 1<<GenderF
	platforms    uint8    // bit 1<<Platform*
	countries    []uint16 // sorted country slots
}

func (c *cond) matches(q *Query) bool {
	if q.Age != 0 && (q.Age < int(c.ageLo) || q.Age > int(c.ageHi)) {
		return false
	}
	if q.Gender != 0 && c.genders != 0 && c.genders&(1<<q.Gender) == 0 {
		return false
	}
	if q.Platform != 0 && c.platforms != 0 && c.platforms&(1<<q.Platform) == 0 {
		return false
	}
	if q.Country != 0 && c.countries != nil {
		if _, found := slices.BinarySearch(c.countries, uint16(q.Country-1)); !found {
			return false
		}
	}
	return true
}

// entry is one ad as the index holds it: its sort key, its pre-rendered list
// item, and its targeting compiled twice — per condition (exact check) and as
// the union over conditions (bitsets). Entries are immutable once built.
type entry struct {
	id             int64
	startAt, endAt int64 // unix nanoseconds
	item           []byte
	conds          []cond // nil: matches everyone

	// Union over conds; "any" means some condition leaves the dimension open.
	ageAny, genderAny, platformAny, countryAny bool
	ages                                       [2]uint64 // bit a: age a accepted
	genders, platforms                         uint8
	countries                                  []uint16
}

func newEntry(a *marquee.Ad) *entry {
	e := &entry{
		id:      a.ID,
		startAt: a.StartAt.UnixNano(),
		endAt:   a.EndAt.UnixNano(),
		item:    renderItem(a),
	}
	if len(a.Conditions) == 0 {
		e.ageAny, e.genderAny, e.platformAny, e.countryAny = true, true, true, true
		return e
	}
	e.conds = make([]cond, len(a.Conditions))
	for i := range a.Conditions {
		c := compile(&a.Conditions[i])
		e.conds[i] = c
		if c.ageLo == marquee.MinAge && c.ageHi == marquee.MaxAge {
			e.ageAny = true
		}
		for age := int(c.ageLo); age <= int(c.ageHi); age++ {
			e.ages[age>>6] |= 1 << (uint(age) & 63)
		}
		e.genderAny = e.genderAny || c.genders == 0
		e.platformAny = e.platformAny || c.platforms == 0
		e.countryAny = e.countryAny || c.countries == nil
		e.genders |= c.genders
		e.platforms |= c.platforms
		e.countries = append(e.countries, c.countries...)
	}
	slices.Sort(e.countries)
	e.countries = slices.Compact(e.countries)
	return e
}

// exact reports whether the bitsets alone decide a match for this entry:
// true when it has at most one condition, since then the union is the
// condition itself.
func (e *entry) exact() bool { return len(e.conds) <= 1 }

func (e *entry) matches(q *Query) bool {
	if e.conds == nil {
		return true
	}
	for i := range e.conds {
		if e.conds[i].matches(q) {
			return true
		}
	}
	return false
}

func compile(c *marquee.Condition) cond {
	out := cond{ageLo: marquee.MinAge, ageHi: marquee.MaxAge}
	if c.AgeStart != 0 {
		out.ageLo = uint8(c.AgeStart)
	}
	if c.AgeEnd != 0 {
		out.ageHi = uint8(c.AgeEnd)
	}
	for _, g := range c.Gender {
		out.genders |= 1 << GenderCode(g)
	}
	for _, p := range c.Platform {
		out.platforms |= 1 << PlatformCode(p)
	}
	for _, cc := range c.Country {
		slot, _ := marquee.CountrySlot(cc)
		out.countries = append(out.countries, uint16(slot))
	}
	slices.Sort(out.countries)
	return out
}

// GenderCode returns GenderM or GenderF for "M" or "F", else 0.
func GenderCode[T ~string | ~[]byte](g T) int {
	switch string(g) {
	case "M":
		return GenderM
	case "F":
		return GenderF
	}
	return 0
}

// PlatformCode returns the Platform* code of a platform name in any case,
// else 0. It does not allocate.
func PlatformCode[T ~string | ~[]byte](p T) int {
	for i, name := range marquee.Platforms {
		if equalFold(p, name) {
			return i + 1
		}
	}
	return 0
}

func equalFold[T ~string | ~[]byte](a T, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := a[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != b[i] {
			return false
		}
	}
	return true
}

// renderItem renders the list item of an ad exactly as GET /api/v1/ad
// returns it.
func renderItem(a *marquee.Ad) []byte {
	title, _ := json.Marshal(a.Title) // a string always marshals
	b := make([]byte, 0, len(title)+48)
	b = append(b, `{"title":`...)
	b = append(b, title...)
	b = append(b, `,"endAt":"`...)
	b = a.EndAt.UTC().AppendFormat(b, marquee.TimeLayout)
	return append(b, `"}`...)
}

// less orders entries by (endAt, id): the order of GET /api/v1/ad.
func less(a, b *entry) bool {
	if a.endAt != b.endAt {
		return a.endAt < b.endAt
	}
	return a.id < b.id
}

func cmpEntries(a, b *entry) int {
	switch {
	case less(a, b):
		return -1
	case less(b, a):
		return 1
	}
	return 0
}
