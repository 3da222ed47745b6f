// Package targeting owns the targeting rule. A marquee.Condition is
// compiled once into a Cond, and a request's targeting fields once, at the
// edge, into a Viewer — genders and platforms as codes and bits, countries
// as the vocabulary's slots, ages as numbers — so that nothing downstream
// compares strings. The ad index builds its bitsets from Conds (the ad
// contract's list, where a field a query leaves out filters nothing);
// decisions match Conds against a Viewer (Matches: a field the request
// leaves out matches no restriction of it); reports classify platforms by
// the same codes. A new targeting dimension is a field of Cond and of
// Viewer, compiled here and matched here.
package targeting

import (
	"net/netip"
	"slices"

	"marquee"
)

// Gender codes; 0 is unknown (a viewer) or any (a query).
const (
	GenderM = 1 + iota
	GenderF
)

// Platform codes, in the order of marquee.Platforms, from 1; 0 is unknown
// or any.
const (
	PlatformAndroid = 1 + iota
	PlatformIOS
	PlatformWeb
	NumPlatforms = 3
)

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

// GenderName is the spelling of a gender code ("" for 0).
func GenderName(code int) string {
	switch code {
	case GenderM:
		return "M"
	case GenderF:
		return "F"
	}
	return ""
}

// PlatformCode returns the code of a platform name in any case, else 0.
// It does not allocate.
func PlatformCode[T ~string | ~[]byte](p T) int {
	for i, name := range marquee.Platforms {
		if equalFold(p, name) {
			return i + 1
		}
	}
	return 0
}

// PlatformName is the stored spelling of a platform code ("" for 0).
func PlatformName(code int) string {
	if code < 1 || code > NumPlatforms {
		return ""
	}
	return marquee.Platforms[code-1]
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

// Cond is a marquee.Condition compiled: an age range (MinAge..MaxAge when
// open; Aged says the condition names a bound), genders and platforms as
// bits (1<<code; 0: any) and countries as sorted slots (nil: any).
type Cond struct {
	AgeLo, AgeHi       uint8
	Aged               bool
	Genders, Platforms uint8
	Countries          []uint16
}

// Anyone is the condition that restricts nothing.
var Anyone = Cond{AgeLo: marquee.MinAge, AgeHi: marquee.MaxAge}

// Compile compiles a condition.
func Compile(c *marquee.Condition) Cond {
	out := Anyone
	if c.AgeStart != 0 {
		out.AgeLo, out.Aged = uint8(c.AgeStart), true
	}
	if c.AgeEnd != 0 {
		out.AgeHi, out.Aged = uint8(c.AgeEnd), true
	}
	for _, g := range c.Gender {
		out.Genders |= 1 << GenderCode(g)
	}
	for _, p := range c.Platform {
		out.Platforms |= 1 << PlatformCode(p)
	}
	if len(c.Country) > 0 {
		out.Countries = make([]uint16, 0, len(c.Country))
		for _, cc := range c.Country {
			if slot, ok := marquee.CountrySlot(cc); ok {
				out.Countries = append(out.Countries, uint16(slot))
			}
		}
		slices.Sort(out.Countries)
	}
	return out
}

// CompileAll compiles conditions (nil for none: everyone).
func CompileAll(conds []marquee.Condition) []Cond {
	if len(conds) == 0 {
		return nil
	}
	out := make([]Cond, len(conds))
	for i := range conds {
		out[i] = Compile(&conds[i])
	}
	return out
}

// Union is a condition that takes every viewer some ad of ads takes —
// each ad's conditions (nil: anyone) — joined dimension by dimension: a
// viewer it does not take, no ad takes, so that a decision can pass over
// a campaign without reading its ads. It takes more than the ads do (the
// dimensions are joined apart). nil when an ad takes anyone, or when the
// union restricts nothing.
func Union(ads [][]Cond) *Cond {
	if len(ads) == 0 {
		return nil
	}
	u := Cond{AgeLo: marquee.MaxAge, AgeHi: marquee.MinAge, Aged: true}
	gendersOpen, platformsOpen, countriesOpen := false, false, false
	countries := []uint16{}
	for _, conds := range ads {
		if len(conds) == 0 {
			return nil
		}
		for i := range conds {
			c := &conds[i]
			if !c.Aged {
				u.Aged = false
			} else {
				u.AgeLo, u.AgeHi = min(u.AgeLo, c.AgeLo), max(u.AgeHi, c.AgeHi)
			}
			gendersOpen = gendersOpen || c.Genders == 0
			u.Genders |= c.Genders
			platformsOpen = platformsOpen || c.Platforms == 0
			u.Platforms |= c.Platforms
			countriesOpen = countriesOpen || c.Countries == nil
			countries = append(countries, c.Countries...)
		}
	}
	if !u.Aged {
		u.AgeLo, u.AgeHi = Anyone.AgeLo, Anyone.AgeHi
	}
	if gendersOpen {
		u.Genders = 0
	}
	if platformsOpen {
		u.Platforms = 0
	}
	if !countriesOpen {
		slices.Sort(countries)
		u.Countries = slices.Compact(countries)
	}
	if !u.Aged && u.Genders == 0 && u.Platforms == 0 && u.Countries == nil {
		return nil
	}
	return &u
}

// Viewer is a request's targeting fields compiled once, at the edge:
// codes, 0 for a field the request leaves out (Country is a slot + 1);
// and what trees read, "" (or no address) where unknown: key-values sorted
// (SortKVs), the page's host and path, the referrer's host, the
// placement's site, the place below the country, the device, browser
// and OS (lower case), the primary language subtag and the address.
type Viewer struct {
	Age                           int
	Gender, Platform              int
	Country                       int
	KV                            []KV
	Host, Path, Referrer, Site    string
	Region, City, Metro           string
	Device, Browser, OS, Language string
	IP                            netip.Addr
}

// ViewerOf compiles targeting fields given as strings (an unknown value
// is left out).
func ViewerOf(age int, gender, country, platform string) Viewer {
	v := Viewer{Age: age, Gender: GenderCode(gender), Platform: PlatformCode(platform)}
	v.SetCountry(country)
	return v
}

// SetCountry sets the viewer's country from an ISO 3166-1 alpha-2 code
// (any case); false, and no country, when it is not one.
func (v *Viewer) SetCountry(code string) bool {
	slot, ok := marquee.CountrySlot(code)
	v.Country = 0
	if ok {
		v.Country = slot + 1
	}
	return ok
}

// CountryCode is the viewer's country as ISO 3166-1 alpha-2, or "".
func (v *Viewer) CountryCode() string {
	if v.Country == 0 {
		return ""
	}
	return marquee.CountryCode(v.Country - 1)
}

// Matches reports whether v meets c — decisions' rule: every field c
// restricts must match, and a field v leaves out matches no restriction
// of it (targeting fails closed: a campaign for US and CA never serves a
// viewer of unknown country).
func (c *Cond) Matches(v *Viewer) bool {
	return (!c.Aged || v.Age != 0 && v.Age >= int(c.AgeLo) && v.Age <= int(c.AgeHi)) &&
		(c.Genders == 0 || v.Gender != 0 && c.Genders&(1<<v.Gender) != 0) &&
		(c.Platforms == 0 || v.Platform != 0 && c.Platforms&(1<<v.Platform) != 0) &&
		(c.Countries == nil || v.Country != 0 && hasSlot(c.Countries, uint16(v.Country-1)))
}

func hasSlot(slots []uint16, s uint16) bool {
	if len(slots) <= 8 {
		return slices.Contains(slots, s)
	}
	_, ok := slices.BinarySearch(slots, s)
	return ok
}

// MatchesAny reports whether v meets any of conds (OR across them); no
// conditions match everyone.
func MatchesAny(conds []Cond, v *Viewer) bool {
	if len(conds) == 0 {
		return true
	}
	for i := range conds {
		if conds[i].Matches(v) {
			return true
		}
	}
	return false
}
