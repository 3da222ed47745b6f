package linkroute_test

import (
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/text/language"

	"marquee"
	"marquee/linkroute"
)

const (
	iphone  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15"
	android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36"
	desktop = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
)

// geo places 203.0.113.0/24 in Germany and knows nothing else.
type geo struct{}

func (geo) Country(ip netip.Addr) string {
	if netip.MustParsePrefix("203.0.113.0/24").Contains(ip) {
		return "DE"
	}
	return ""
}

func args(q string) *fasthttp.Args {
	var a fasthttp.Args
	a.Parse(q)
	return &a
}

var now = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

func TestMatches(t *testing.T) {
	de := netip.MustParseAddr("203.0.113.7")
	for _, c := range []struct {
		name string
		when marquee.RuleWhen
		v    linkroute.Visitor
		want bool
	}{
		{"ios on an iPhone", marquee.RuleWhen{Platforms: []string{"ios"}}, linkroute.Visitor{UA: []byte(iphone)}, true},
		{"ios on Android", marquee.RuleWhen{Platforms: []string{"ios"}}, linkroute.Visitor{UA: []byte(android)}, false},
		{"android or desktop on Firefox", marquee.RuleWhen{Platforms: []string{"android", "desktop"}}, linkroute.Visitor{UA: []byte(desktop)}, true},
		{"desktop with no User-Agent", marquee.RuleWhen{Platforms: []string{"desktop"}}, linkroute.Visitor{}, true},
		{"language", marquee.RuleWhen{Languages: []string{"de"}}, linkroute.Visitor{AcceptLanguage: []byte("fr-CH, de-AT;q=0.7")}, true},
		{"language refused by q=0", marquee.RuleWhen{Languages: []string{"de"}}, linkroute.Visitor{AcceptLanguage: []byte("fr, de;q=0")}, false},
		{"no Accept-Language", marquee.RuleWhen{Languages: []string{"de"}}, linkroute.Visitor{}, false},
		{"country by GeoIP", marquee.RuleWhen{Countries: []string{"AT", "DE"}}, linkroute.Visitor{IP: de, Geo: geo{}}, true},
		{"country unknown to GeoIP", marquee.RuleWhen{Countries: []string{"DE"}}, linkroute.Visitor{IP: netip.MustParseAddr("198.51.100.1"), Geo: geo{}}, false},
		{"country without GeoIP", marquee.RuleWhen{Countries: []string{"DE"}}, linkroute.Visitor{IP: de}, false},
		{"query", marquee.RuleWhen{Query: []marquee.QueryMatch{{Name: "src", Value: "mail"}}}, linkroute.Visitor{Query: args("a=1&src=mail")}, true},
		{"query, other value", marquee.RuleWhen{Query: []marquee.QueryMatch{{Name: "src", Value: "mail"}}}, linkroute.Visitor{Query: args("src=Mail")}, false},
		{"query, empty value", marquee.RuleWhen{Query: []marquee.QueryMatch{{Name: "src", Value: ""}}}, linkroute.Visitor{Query: args("src=")}, true},
		{"query, empty value, absent", marquee.RuleWhen{Query: []marquee.QueryMatch{{Name: "src", Value: ""}}}, linkroute.Visitor{Query: args("a=1")}, false},
		{"query, no query", marquee.RuleWhen{Query: []marquee.QueryMatch{{Name: "src", Value: "mail"}}}, linkroute.Visitor{}, false},
		{"in the window", marquee.RuleWhen{From: now.Add(-time.Hour), To: now.Add(time.Hour)}, linkroute.Visitor{Now: now}, true},
		{"at from", marquee.RuleWhen{From: now}, linkroute.Visitor{Now: now}, true},
		{"at to", marquee.RuleWhen{To: now}, linkroute.Visitor{Now: now}, false},
		{"before from", marquee.RuleWhen{From: now.Add(time.Second)}, linkroute.Visitor{Now: now}, false},
		{"all of them", marquee.RuleWhen{Platforms: []string{"ios"}, Languages: []string{"de"}, Countries: []string{"DE"},
			Query: []marquee.QueryMatch{{Name: "src", Value: "mail"}}, To: now.Add(time.Hour)},
			linkroute.Visitor{UA: []byte(iphone), AcceptLanguage: []byte("de-DE"), IP: de, Geo: geo{}, Query: args("src=mail"), Now: now}, true},
		{"all but the platform", marquee.RuleWhen{Platforms: []string{"android"}, Languages: []string{"de"}, Countries: []string{"DE"}},
			linkroute.Visitor{UA: []byte(iphone), AcceptLanguage: []byte("de-DE"), IP: de, Geo: geo{}, Now: now}, false},
	} {
		if got := linkroute.Matches(&c.when, &c.v); got != c.want {
			t.Errorf("%s: Matches(%+v) = %v; want %v", c.name, c.when, got, c.want)
		}
	}
}

// AcceptsAny agrees with golang.org/x/text's Accept-Language parser, used
// as the slow reference: a tag is accepted when the header names it, or
// a more specific tag of it, with a quality above 0.
func TestAcceptsAnyAgreesWithReference(t *testing.T) {
	ranges := []string{"en", "en-US", "EN-gb", "de", "de-AT", "pt-BR", "pt", "zh-Hant-TW", "fr-CH", "*", "es-419"}
	qs := []string{"", ";q=1", ";q=0.8", ";q=0", ";q=0.000", " ; q=0.5", ";q=0.001"}
	rules := [][]string{{"en"}, {"en-US"}, {"de", "fr"}, {"pt-BR"}, {"zh-Hant"}, {"es"}, {"it"}}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var parts []string
		for range 1 + r.IntN(4) {
			parts = append(parts, ranges[r.IntN(len(ranges))]+qs[r.IntN(len(qs))])
		}
		header := strings.Join(parts, ", ")
		tags := rules[r.IntN(len(rules))]
		if got, want := linkroute.AcceptsAny([]byte(header), tags), reference(t, header, tags); got != want {
			t.Fatalf("AcceptsAny(%q, %q) = %v; the reference says %v", header, tags, got, want)
		}
	}
}

func reference(t *testing.T, header string, tags []string) bool {
	accepted, q, err := language.ParseAcceptLanguage(header)
	if err != nil {
		t.Fatalf("reference parse of %q: %v", header, err)
	}
	for i, a := range accepted {
		s := strings.ToLower(a.String())
		for _, tag := range tags {
			tag = strings.ToLower(tag)
			if q[i] > 0 && s != "und" && (s == tag || strings.HasPrefix(s, tag+"-")) {
				return true
			}
		}
	}
	return false
}

func TestPickSharesByWeight(t *testing.T) {
	dests := []marquee.Destination{{URL: "https://a.test", Weight: 70}, {URL: "https://b.test", Weight: 0}, {URL: "https://c.test", Weight: 30}}
	n := [3]int{}
	r := rand.New(rand.NewPCG(3, 4))
	const visitors = 100_000
	for range visitors {
		ip := netip.AddrFrom4([4]byte{byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))})
		n[linkroute.Pick(dests, linkroute.Sticky(42, linkroute.VisitorHash(ip, []byte(desktop))))]++
	}
	if n[1] != 0 || n[0] < visitors*68/100 || n[0] > visitors*72/100 {
		t.Fatalf("shares of 100,000 visitors by weights 70/0/30 = %v; want about 70,000/0/30,000", n)
	}
	// A visitor keeps their destination; another link splits them anew.
	ip := netip.MustParseAddr("2001:db8::1")
	sticky := func(id int64, ip netip.Addr, ua string) uint64 {
		return linkroute.Sticky(id, linkroute.VisitorHash(ip, []byte(ua)))
	}
	h := sticky(42, ip, iphone)
	if again := sticky(42, netip.MustParseAddr("2001:db8:0::1"), strings.Clone(iphone)); again != h ||
		h == sticky(43, ip, iphone) || h == sticky(42, ip, android) {
		t.Fatal("Sticky: want the same hash for the same link, address and User-Agent, and another for another")
	}
}

// fiveRules is a link with 5 rules and 2 weighted destinations, the
// issue's benchmark link; a desktop visitor from nowhere in particular
// meets none of the rules and is split.
func fiveRules() *marquee.Link {
	return &marquee.Link{ID: 7, Code: "promo", URL: "https://example.com/", Redirect: 302,
		Rules: []marquee.LinkRule{
			{URL: "https://apps.example/ios", When: marquee.RuleWhen{Platforms: []string{"ios"}}},
			{URL: "https://apps.example/android", When: marquee.RuleWhen{Platforms: []string{"android"}}},
			{URL: "https://example.de/", When: marquee.RuleWhen{Languages: []string{"de"}}},
			{URL: "https://example.com/mail", When: marquee.RuleWhen{Query: []marquee.QueryMatch{{Name: "utm_source", Value: "newsletter"}}}},
			{URL: "https://example.com/sale", When: marquee.RuleWhen{From: now.Add(24 * time.Hour), To: now.Add(48 * time.Hour)}},
		},
		Destinations: []marquee.Destination{{URL: "https://example.com/a", Weight: 50}, {URL: "https://example.com/b", Weight: 50}}}
}

func TestChoose(t *testing.T) {
	l := fiveRules()
	for _, c := range []struct {
		v          linkroute.Visitor
		rule, dest int
		url        string
	}{
		{linkroute.Visitor{UA: []byte(iphone), AcceptLanguage: []byte("de"), Now: now}, 0, -1, "https://apps.example/ios"},
		{linkroute.Visitor{UA: []byte(desktop), AcceptLanguage: []byte("de"), Now: now}, 2, -1, "https://example.de/"},
		{linkroute.Visitor{UA: []byte(desktop), Query: args("utm_source=newsletter"), Now: now}, 3, -1, "https://example.com/mail"},
		{linkroute.Visitor{UA: []byte(desktop), Now: now.Add(30 * time.Hour)}, 4, -1, "https://example.com/sale"},
	} {
		if got := linkroute.Choose(l, &c.v); got.Rule != c.rule || got.Dest != c.dest || got.URL != c.url {
			t.Errorf("Choose(%s) = %+v; want rule %d, dest %d, %s", c.v.UA, got, c.rule, c.dest, c.url)
		}
	}
	v := linkroute.Visitor{UA: []byte(desktop), IP: netip.MustParseAddr("198.51.100.9"), Now: now}
	got := linkroute.Choose(l, &v)
	if got.Rule != -1 || got.Dest < 0 || got.URL != l.Destinations[got.Dest].URL {
		t.Errorf("Choose(no rule) = %+v; want a destination", got)
	}
	plain := &marquee.Link{URL: "https://plain.example"}
	if got := linkroute.Choose(plain, &v); got != (linkroute.Choice{URL: "https://plain.example", Rule: -1, Dest: -1}) {
		t.Errorf("Choose(a plain link) = %+v; want its url", got)
	}
}

// The rule evaluation of a redirect allocates nothing: 5 rules tried, a
// destination picked.
func TestChooseAllocatesNothing(t *testing.T) {
	l := fiveRules()
	v := linkroute.Visitor{UA: []byte(desktop), AcceptLanguage: []byte("en-GB,en;q=0.9,fr;q=0.5"), IP: netip.MustParseAddr("198.51.100.9"),
		Query: args("utm_source=twitter&utm_medium=social"), Now: now}
	if n := testing.AllocsPerRun(1000, func() { w := v; linkroute.Choose(l, &w) }); n != 0 {
		t.Fatalf("Choose through 5 rules to a destination allocates %v times; want 0", n)
	}
}

func BenchmarkChoose(b *testing.B) {
	l := fiveRules()
	v := linkroute.Visitor{UA: []byte(desktop), AcceptLanguage: []byte("en-GB,en;q=0.9,fr;q=0.5"), IP: netip.MustParseAddr("198.51.100.9"),
		Query: args("utm_source=twitter&utm_medium=social"), Now: now}
	b.ReportAllocs()
	for b.Loop() {
		w := v // a new request: nothing worked out yet
		linkroute.Choose(l, &w)
	}
}
