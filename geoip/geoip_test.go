package geoip_test

import (
	"net/netip"
	"testing"

	"marquee/geoip"
	"marquee/geoip/geoiptest"
)

// TestCountry: an address in a network of the database has its country,
// IPv4 and IPv6 alike; one outside, none; a Country database places
// nothing below the country.
func TestCountry(t *testing.T) {
	db, err := geoip.Open(geoiptest.Write(t, map[string]string{"81.2.69.0/24": "TW", "2a02:c7f::/32": "JP"}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for ip, want := range map[string]string{"81.2.69.9": "TW", "2a02:c7f::1": "JP", "8.8.8.8": ""} {
		if got := db.Country(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Country(%s) = %q; want %q", ip, got, want)
		}
	}
	if r, c, m := db.Place(netip.MustParseAddr("81.2.69.9")); r != "" || c != "" || m != "" {
		t.Errorf("Place in a Country database = %q, %q, %q; want nothing", r, c, m)
	}
	var none *geoip.DB
	if got := none.Country(netip.MustParseAddr("81.2.69.9")); got != "" {
		t.Errorf("a nil DB's Country = %q; want \"\"", got)
	}
}

// TestBuiltin: the vendored database places the registries' own
// addresses — whose countries do not move — in their countries, IPv4 and
// IPv6, and knows no private or loopback address.
func TestBuiltin(t *testing.T) {
	db, err := geoip.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for ip, want := range map[string]string{
		"193.0.6.139":               "NL", // RIPE NCC, Amsterdam
		"2001:67c:2e8:22::c100:68b": "NL",
		"202.12.29.205":             "AU", // APNIC, Brisbane
		"200.3.14.10":               "UY", // LACNIC, Montevideo
		"127.0.0.1":                 "",
		"10.1.2.3":                  "",
		"::1":                       "",
	} {
		if got := db.Country(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Country(%s) = %q; want %q", ip, got, want)
		}
	}
}

func BenchmarkBuiltinCountry(b *testing.B) {
	db, err := geoip.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	ips := []netip.Addr{netip.MustParseAddr("193.0.6.139"), netip.MustParseAddr("2001:67c:2e8:22::c100:68b"), netip.MustParseAddr("81.2.69.9")}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		db.Country(ips[i%len(ips)])
	}
}
