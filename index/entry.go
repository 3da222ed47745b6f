package index

import (
	"bytes"
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

// entry is one ad as the index's master copy holds it: its sort key, its
// pre-rendered list item and its compiled conditions. Only the index's
// builder (under bmu) reads an entry; a chunk build points item at the
// chunk's copy of it, so the bytes are held once.
type entry struct {
	id             int64
	startAt, endAt int64  // unix nanoseconds
	item           []byte // the rendered item, without a comma
	conds          []cond // never empty: no condition is one open cond
}

// anyone is the condition of an ad without conditions.
var anyone = []cond{{ageLo: marquee.MinAge, ageHi: marquee.MaxAge}}

func newEntry(a *marquee.Ad) *entry {
	e := &entry{
		id:      a.ID,
		startAt: a.StartAt.UnixNano(),
		endAt:   a.EndAt.UnixNano(),
		item:    renderItem(a),
		conds:   anyone,
	}
	if len(a.Conditions) > 0 {
		e.conds = make([]cond, len(a.Conditions))
		for i := range a.Conditions {
			e.conds[i] = compile(&a.Conditions[i])
		}
	}
	return e
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
	var title bytes.Buffer
	enc := json.NewEncoder(&title)
	enc.SetEscapeHTML(false) // as every other response: "<" stays "<"
	enc.Encode(a.Title)      // a string always encodes
	b := make([]byte, 0, title.Len()+48)
	b = append(b, `{"title":`...)
	b = append(b, bytes.TrimSuffix(title.Bytes(), []byte("\n"))...)
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
