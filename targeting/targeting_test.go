package targeting_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"marquee"
	"marquee/targeting"
)

// someOf is a random subset of from, each value in it one time in three.
func someOf(r *rand.Rand, from []string) []string {
	var out []string
	for _, v := range from {
		if r.IntN(3) == 0 {
			out = append(out, v)
		}
	}
	return out
}

// TestMatchesAgainstReference checks the compiled rule against the
// condition's plain reading, over random conditions and viewers: every
// field a condition restricts must hold, a field the viewer leaves out
// meets no restriction of it, and no conditions take everyone.
func TestMatchesAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	countries := []string{"TW", "US", "CA", "DE", "JP", "FR", "BR", "IN", "NG", "AU"}
	some := func(from []string) []string { return someOf(r, from) }
	pick := func(from []string) string {
		if r.IntN(4) == 0 {
			return "" // left out
		}
		return from[r.IntN(len(from))]
	}
	for round := range 20000 {
		conds := make([]marquee.Condition, r.IntN(3))
		for i := range conds {
			c := &conds[i]
			if r.IntN(2) == 0 {
				c.AgeStart = 1 + r.IntN(60)
			}
			if r.IntN(2) == 0 {
				c.AgeEnd = max(c.AgeStart, 1) + r.IntN(40)
			}
			c.Gender, c.Platform, c.Country = some([]string{"M", "F"}), some(marquee.Platforms), some(countries)
		}
		age := 0
		if r.IntN(4) != 0 {
			age = 1 + r.IntN(100)
		}
		gender, platform, country := pick([]string{"M", "F"}), pick(marquee.Platforms), pick(countries)
		want := len(conds) == 0
		for _, c := range conds {
			if (c.AgeStart == 0 && c.AgeEnd == 0 || age != 0 && (c.AgeStart == 0 || age >= c.AgeStart) && (c.AgeEnd == 0 || age <= c.AgeEnd)) &&
				(len(c.Gender) == 0 || slices.Contains(c.Gender, gender)) &&
				(len(c.Platform) == 0 || slices.Contains(c.Platform, platform)) &&
				(len(c.Country) == 0 || slices.Contains(c.Country, country)) {
				want = true
			}
		}
		v := targeting.ViewerOf(age, gender, country, platform)
		if got := targeting.MatchesAny(targeting.CompileAll(conds), &v); got != want {
			t.Fatalf("round %d: MatchesAny(%+v, age %d %q %q %q) = %v; want %v", round, conds, age, gender, country, platform, got, want)
		}
	}
}

// TestViewerRoundTrip: a viewer's codes give back the strings they were
// compiled from; unknown values are left out.
func TestViewerRoundTrip(t *testing.T) {
	v := targeting.ViewerOf(30, "F", "TW", "ios")
	if v.CountryCode() != "TW" || targeting.GenderName(v.Gender) != "F" || targeting.PlatformName(v.Platform) != "ios" || v.Age != 30 {
		t.Errorf("ViewerOf(30, F, TW, ios) = %+v; its codes read back %q %q %q", v, v.CountryCode(), targeting.GenderName(v.Gender), targeting.PlatformName(v.Platform))
	}
	if u := targeting.ViewerOf(0, "X", "ZZZ", "palm"); !reflect.DeepEqual(u, targeting.Viewer{}) {
		t.Errorf("ViewerOf of unknown values = %+v; want every field left out", u)
	}
	if targeting.PlatformCode("IOS") != targeting.PlatformIOS || targeting.PlatformCode([]byte("Web")) != targeting.PlatformWeb {
		t.Errorf("PlatformCode is not case-blind")
	}
}

// TestUnionTakesWhatAnyAdTakes: for random ads' conditions and random
// viewers, a viewer some ad takes, their Union takes (a decision that
// passes over a campaign by its union misses none of its ads); and the
// union rules some viewers out when every ad restricts a dimension.
func TestUnionTakesWhatAnyAdTakes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	countries := []string{"TW", "JP", "DE", "FR", "US", "GB", "BR", "IN", "ID", "KR"}
	pick := func(from []string) []string { return someOf(r, from) }
	cond := func() marquee.Condition {
		var c marquee.Condition
		if r.IntN(2) == 0 {
			c.AgeStart = 13 + r.IntN(30)
			c.AgeEnd = c.AgeStart + r.IntN(30)
		}
		if r.IntN(2) == 0 {
			c.Gender = pick([]string{"F", "M"})
		}
		if r.IntN(2) == 0 {
			c.Platform = pick([]string{"ios", "android", "web"})
		}
		if r.IntN(2) == 0 {
			c.Country = pick(countries)
		}
		return c
	}
	ruledOut := 0
	for range 2000 {
		ads := make([][]targeting.Cond, 1+r.IntN(4))
		for i := range ads {
			var conds []marquee.Condition
			for range r.IntN(3) {
				conds = append(conds, cond())
			}
			ads[i] = targeting.CompileAll(conds)
		}
		u := targeting.Union(ads)
		for range 20 {
			var v targeting.Viewer
			if r.IntN(4) > 0 {
				v = targeting.ViewerOf(13+r.IntN(60), []string{"", "F", "M"}[r.IntN(3)], []string{"", "TW", "JP", "DE", "US", "ZA"}[r.IntN(6)],
					[]string{"", "ios", "android", "web"}[r.IntN(4)])
			}
			some := false
			for _, conds := range ads {
				some = some || targeting.MatchesAny(conds, &v)
			}
			takes := u == nil || u.Matches(&v)
			if some && !takes {
				t.Fatalf("Union(%+v) = %+v does not take %+v, which an ad takes", ads, u, v)
			}
			if !takes {
				ruledOut++
			}
		}
	}
	if ruledOut == 0 {
		t.Fatal("no union ruled out any viewer: it rules out nothing")
	}
}
