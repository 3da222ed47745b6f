package delivery

import (
	"slices"
	"time"

	"marquee"
)

// cond is a marquee.Condition compiled for matching without strings: the
// genders and platforms it takes as bits, its countries as a bitset over
// the vocabulary's country slots (nil: any), and its ages (0: unbounded).
type cond struct {
	ageLo, ageHi       int
	genders, platforms uint8
	countries          *[(marquee.CountrySlots + 63) / 64]uint64
}

// compile compiles conditions once, when the plan is built.
func compile(conds []marquee.Condition) []cond {
	if len(conds) == 0 {
		return nil
	}
	out := make([]cond, len(conds))
	for i, c := range conds {
		out[i] = cond{ageLo: c.AgeStart, ageHi: c.AgeEnd}
		for _, g := range c.Gender {
			out[i].genders |= genderBit(g)
		}
		for _, p := range c.Platform {
			out[i].platforms |= platformBit(p)
		}
		if len(c.Country) > 0 {
			out[i].countries = new([(marquee.CountrySlots + 63) / 64]uint64)
			for _, code := range c.Country {
				if slot, ok := marquee.CountrySlot(code); ok {
					out[i].countries[slot/64] |= 1 << (slot % 64)
				}
			}
		}
	}
	return out
}

func genderBit(g string) uint8 {
	switch g {
	case "M":
		return 1
	case "F":
		return 2
	}
	return 0
}

func platformBit(p string) uint8 {
	if i := slices.Index(marquee.Platforms, p); i >= 0 {
		return 1 << i
	}
	return 0
}

// viewer is a request's targeting fields as cond matches them: 0 (or a
// negative country) for a field the request leaves out.
type viewer struct {
	age              int
	gender, platform uint8
	country          int
}

func viewerOf(r *Request) viewer {
	v := viewer{age: r.Age, gender: genderBit(r.Gender), platform: platformBit(r.Platform), country: -1}
	if slot, ok := marquee.CountrySlot(r.Country); ok {
		v.country = slot
	}
	return v
}

// matchesAny reports whether v matches any of conds: every field a
// condition restricts must match (OR across conditions), and a field the
// request leaves out matches no restriction of it — targeting fails
// closed, so that a campaign for US and CA never serves a viewer of
// unknown country (the server fills country from GeoIP and platform from
// the User-Agent where it can). This is decisions' rule; the ad
// contract's list (package index) keeps its own, where a field left out
// filters nothing. No conditions match everyone.
func matchesAny(conds []cond, v *viewer) bool {
	if len(conds) == 0 {
		return true
	}
	for i := range conds {
		c := &conds[i]
		if (c.ageLo == 0 && c.ageHi == 0 || v.age != 0 && (c.ageLo == 0 || v.age >= c.ageLo) && (c.ageHi == 0 || v.age <= c.ageHi)) &&
			(c.genders == 0 || c.genders&v.gender != 0) &&
			(c.platforms == 0 || c.platforms&v.platform != 0) &&
			(c.countries == nil || v.country >= 0 && c.countries[v.country/64]&(1<<(v.country%64)) != 0) {
			return true
		}
	}
	return false
}

// span is a flight or an ad's window in unix nanoseconds, compared
// without time.Time's monotonic clock logic.
type span struct{ start, end int64 }

func spanOf(start, end time.Time) span { return span{start.UnixNano(), end.UnixNano()} }

// has reports whether start < at < end.
func (s span) has(at int64) bool { return s.start < at && at < s.end }
