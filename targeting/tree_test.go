package targeting_test

import (
	"encoding/json"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"marquee"
	"marquee/targeting"
	"marquee/targeting/targetingtest"
)

// TestTreeAgainstReference checks compiled trees against the plain
// reading over random trees × viewers, in three time zones: Matches, and
// Why ("" exactly when it matches).
func TestTreeAgainstReference(t *testing.T) {
	g := targetingtest.Gen{R: rand.New(rand.NewPCG(43, 1))}
	zones := []string{"", "America/New_York", "Europe/Berlin"}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	matched := 0
	for round := range 20000 {
		tree, tz := g.Tree(1), zones[round%len(zones)]
		loc, err := marquee.ParseTimeZone(tz)
		if err != nil {
			t.Fatal(err)
		}
		c := targeting.CompileTree(&tree, loc)
		for range 3 {
			v := g.Viewer(start)
			if g.R.IntN(2) == 0 {
				v.Vals[marquee.KeySite] = []string{targetingtest.Sites[g.R.IntN(2)]}
			}
			cv := targetingtest.Compiled(v)
			want := targetingtest.Reference(&tree, v, loc)
			if got := c.Matches(&cv, v.At.UnixNano()); got != want {
				t.Fatalf("round %d: Matches(%s, %+v at %s %s) = %v; want %v", round, show(tree), v.Vals, v.At, tz, got, want)
			}
			if why := c.Why(&cv, v.At.UnixNano()); (why == "") != want {
				t.Fatalf("round %d: Why(%s, %+v) = %q; matches %v", round, show(tree), v.Vals, why, want)
			}
			if want {
				matched++
			}
		}
	}
	if matched < 6000 || matched > 54000 {
		t.Errorf("%d of 60000 matched: the generator tests too little of one side", matched)
	}
}

func show(t marquee.Targeting) string {
	b, _ := jsonMarshal(t)
	return string(b)
}

// The time zones of the tests' trees.
var newYork, berlin = mustZone("America/New_York"), mustZone("Europe/Berlin")

func mustZone(tz string) *time.Location {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		panic(err)
	}
	return loc
}

// TestDayPartsAcrossDST: a day-part is wall-clock time in its zone, on
// both sides of the spring-forward and fall-back hours.
func TestDayPartsAcrossDST(t *testing.T) {
	cases := []struct {
		tz, utc  string
		from, to string
		days     []string
		want     bool
	}{
		// New York springs forward on 2026-03-08 at 02:00 EST → 03:00 EDT.
		{"America/New_York", "2026-03-08T06:59:00Z", "01:00", "02:00", nil, true},  // 01:59 EST
		{"America/New_York", "2026-03-08T07:00:00Z", "03:00", "04:00", nil, true},  // 03:00 EDT
		{"America/New_York", "2026-03-08T07:00:00Z", "02:00", "03:00", nil, false}, // 02:xx does not exist that day
		{"America/New_York", "2026-03-09T13:00:00Z", "09:00", "10:00", nil, true},  // 09:00 EDT, not 08:00
		// …and falls back on 2026-11-01 at 02:00 EDT → 01:00 EST: 01:30 happens twice.
		{"America/New_York", "2026-11-01T05:30:00Z", "01:00", "02:00", nil, true},  // 01:30 EDT
		{"America/New_York", "2026-11-01T06:30:00Z", "01:00", "02:00", nil, true},  // 01:30 EST
		{"America/New_York", "2026-11-01T07:30:00Z", "01:00", "02:00", nil, false}, // 02:30 EST
		{"America/New_York", "2026-11-02T14:00:00Z", "09:00", "10:00", nil, true},  // 09:00 EST, not 10:00
		// Berlin springs forward on 2026-03-29 at 02:00 CET → 03:00 CEST
		// and falls back on 2026-10-25 at 03:00 CEST → 02:00 CET.
		{"Europe/Berlin", "2026-03-29T00:59:00Z", "01:00", "02:00", nil, true},  // 01:59 CET
		{"Europe/Berlin", "2026-03-29T01:00:00Z", "03:00", "04:00", nil, true},  // 03:00 CEST
		{"Europe/Berlin", "2026-03-30T06:00:00Z", "08:00", "09:00", nil, true},  // 08:00 CEST
		{"Europe/Berlin", "2026-10-25T00:30:00Z", "02:00", "03:00", nil, true},  // 02:30 CEST
		{"Europe/Berlin", "2026-10-25T01:30:00Z", "02:00", "03:00", nil, true},  // 02:30 CET
		{"Europe/Berlin", "2026-10-26T07:00:00Z", "08:00", "09:00", nil, true},  // 08:00 CET
		{"Europe/Berlin", "2026-10-26T07:00:00Z", "07:00", "08:00", nil, false}, // not 07:00
		// Days are local days: Saturday 23:10 in New York is Sunday in UTC.
		{"America/New_York", "2026-11-29T04:10:00Z", "08:00", "20:00", []string{"mon", "tue", "wed", "thu", "fri"}, false},
		{"America/New_York", "2026-11-29T04:10:00Z", "23:00", "24:00", []string{"sat"}, true},
		// Past midnight: Friday 22:00 to 02:00 takes Saturday 01:00.
		{"Europe/Berlin", "2026-11-28T00:00:00Z", "22:00", "02:00", []string{"fri"}, true},
		{"Europe/Berlin", "2026-11-29T00:00:00Z", "22:00", "02:00", []string{"fri"}, false},
	}
	for _, c := range cases {
		at, _ := time.Parse(time.RFC3339, c.utc)
		loc, _ := time.LoadLocation(c.tz)
		tree := targeting.CompileTree(&marquee.Targeting{DayPart: &marquee.DayPart{Days: c.days, From: c.from, To: c.to}}, loc)
		var v targeting.Viewer
		if got := tree.Matches(&v, at.UnixNano()); got != c.want {
			t.Errorf("day-part %v %s–%s %s at %s (%s) = %v; want %v", c.days, c.from, c.to, c.tz, c.utc, at.In(loc).Format("Mon 15:04 MST"), got, c.want)
		}
	}
}

// TestWhy names the rule that failed, in ad operations' words.
func TestWhy(t *testing.T) {
	at, _ := time.Parse(time.RFC3339, "2026-11-29T04:10:00Z") // Sat 23:10 in New York
	v := targeting.Viewer{KV: []targeting.KV{{Key: "section", Value: "sports"}}, Device: "phone"}
	for _, c := range []struct {
		tree marquee.Targeting
		want string
	}{
		{marquee.Targeting{Key: "section", In: []string{"news"}}, "kv section: sports not in [news]"},
		{marquee.Targeting{All: []marquee.Targeting{{Key: "$device", In: []string{"phone"}}, {Key: "pos", In: []string{"atf"}}}}, "kv pos: none sent not in [atf]"},
		{marquee.Targeting{DayPart: &marquee.DayPart{Days: []string{"mon", "tue", "wed", "thu", "fri"}, From: "08:00", To: "20:00"}},
			"day-part: Sat 23:10 America/New_York outside Mon,Tue,Wed,Thu,Fri 08:00–20:00"},
		{marquee.Targeting{Not: &marquee.Targeting{Key: "$device", In: []string{"phone"}}}, "not ($device in [phone]) matched"},
	} {
		if got := targeting.CompileTree(&c.tree, newYork).Why(&v, at.UnixNano()); got != c.want {
			t.Errorf("Why(%s) = %q; want %q", show(c.tree), got, c.want)
		}
	}
}

// TestMatchesAllocatesNothing: the evaluator runs per candidate.
func TestMatchesAllocatesNothing(t *testing.T) {
	gte := 2.0
	tree := targeting.CompileTree(&marquee.Targeting{All: []marquee.Targeting{
		{Key: "section", In: []string{"sports", "news"}},
		{Key: "score", Gte: &gte},
		{Key: "$path", Glob: []string{"/sports/*"}},
		{Key: "$ip", NotIn: []string{"10.0.0.0/8"}},
		{DayPart: &marquee.DayPart{From: "06:00", To: "23:00"}},
		{Any: []marquee.Targeting{{Key: "$device", In: []string{"phone", "tablet"}}, {Not: &marquee.Targeting{Key: "pos", Exists: true}}}},
	}}, berlin)
	v := targeting.Viewer{KV: []targeting.KV{{Key: "score", Value: "3"}, {Key: "section", Value: "sports"}}, Path: "/sports/nba",
		Device: "phone", IP: netip.MustParseAddr("8.8.8.8")}
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	if !tree.Matches(&v, at) {
		t.Fatal("the viewer should match")
	}
	if n := testing.AllocsPerRun(1000, func() { tree.Matches(&v, at) }); n != 0 {
		t.Errorf("Matches allocates %v times; want 0", n)
	}
}

func BenchmarkMatches(b *testing.B) {
	gte := 2.0
	tree := targeting.CompileTree(&marquee.Targeting{All: []marquee.Targeting{
		{Key: "section", In: []string{"sports", "news"}},
		{Key: "score", Gte: &gte},
		{Key: "$region", In: []string{"US-CA", "US-NY"}},
		{Key: "$device", In: []string{"phone", "tablet"}},
		{DayPart: &marquee.DayPart{From: "06:00", To: "23:00"}},
		{Not: &marquee.Targeting{Key: "pos", In: []string{"btf"}}},
	}}, newYork)
	v := targeting.Viewer{KV: []targeting.KV{{Key: "pos", Value: "atf"}, {Key: "score", Value: "3"}, {Key: "section", Value: "sports"}},
		Region: "US-CA", Device: "phone"}
	at := time.Date(2026, 6, 1, 16, 0, 0, 0, time.UTC).UnixNano()
	b.ReportAllocs()
	for b.Loop() {
		if !tree.Matches(&v, at) {
			b.Fatal("no match")
		}
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// TestFilterAgainstTrees: a filter never drops a tree the viewer meets,
// drops every tree whose top-level rules the viewer fails when those
// rules are all indexable (in, notIn, ranges), and for a tree it keeps,
// the rules it does not index decide (MatchesRest); over lists of 1 to
// 300 random trees.
func TestFilterAgainstTrees(t *testing.T) {
	g := targetingtest.Gen{R: rand.New(rand.NewPCG(43, 3))}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := range 300 {
		n := 1 + g.R.IntN(300)
		src := make([]marquee.Targeting, n)
		trees := make([]*targeting.Tree, n)
		for i := range trees {
			if g.R.IntN(6) != 0 {
				src[i] = g.Tree(1)
				trees[i] = targeting.CompileTree(&src[i], nil)
			}
		}
		f := targeting.NewFilter(trees)
		if f == nil {
			continue
		}
		bits, tmp := make([]uint64, f.Words()), make([]uint64, f.Words())
		for range 20 {
			v := targetingtest.Compiled(g.Viewer(start))
			count := f.Eligible(&v, bits, tmp)
			set := 0
			for i, tr := range trees {
				on := bits[i>>6]&(1<<(i&63)) != 0
				if on {
					set++
				}
				if !on && tr.Matches(&v, start.UnixNano()) {
					t.Fatalf("round %d: tree %d %s dropped; the viewer %+v meets it", round, i, show(src[i]), v)
				}
				if on && tr.MatchesRest(&v, start.UnixNano()) != tr.Matches(&v, start.UnixNano()) {
					t.Fatalf("round %d: tree %d %s kept: MatchesRest says %v, Matches %v", round, i, show(src[i]), !tr.Matches(&v, start.UnixNano()), tr.Matches(&v, start.UnixNano()))
				}
				if on && tr != nil && onlyIndexable(&src[i]) && !tr.Matches(&v, start.UnixNano()) {
					t.Fatalf("round %d: tree %d %s kept; the viewer %+v fails one of its in and notIn rules", round, i, show(src[i]), v)
				}
			}
			if set != count {
				t.Fatalf("round %d: Eligible says %d, sets %d", round, count, set)
			}
			if extra := bits[len(bits)-1] >> (n & 63); n&63 != 0 && extra != 0 {
				t.Fatalf("round %d: bits past the %d trees set", round, n)
			}
		}
	}
}

// onlyIndexable says whether every top-level rule of t is an in, a notIn
// or a range on one key each (no $ip), so that a filter is exact for it.
func onlyIndexable(t *marquee.Targeting) bool {
	rules := t.All
	if rules == nil {
		rules = []marquee.Targeting{*t}
	}
	seen := map[string]bool{}
	for _, r := range rules {
		if r.Key == "" || r.Key == marquee.KeyIP || r.In == nil && r.NotIn == nil && r.Gte == nil && r.Lte == nil || seen[r.Key] {
			return false
		}
		seen[r.Key] = true
	}
	return true
}
