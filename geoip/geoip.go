// Package geoip places visitors' addresses — a country, and below it a
// region, a city and a metro code — from a MaxMind-format database
// (-geoip; github.com/oschwald/maxminddb-golang), or, when the operator
// names none, from the IP-to-country database Marquee vendors (Builtin:
// third_party/ipdata, countries only). It is the one GeoIP of
// Marquee: decisions' viewers (serve), the link router's rules
// (linkroute) and the reports' countries (reports) all read it, each
// through the small interface it declares. geoiptest writes tiny
// databases for tests.
package geoip

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/oschwald/maxminddb-golang/v2"

	"marquee"
	"marquee/third_party/ipdata"
)

// DB finds the country of an address in a MaxMind-format database
// (GeoLite2-Country, GeoIP2-City, …). It is safe for concurrent use.
type DB struct{ db *maxminddb.Reader }

// Open opens the database at path.
func Open(path string) (*DB, error) {
	db, err := maxminddb.Open(path)
	if err != nil {
		return nil, err
	}
	return &DB{db: db}, nil
}

// Builtin opens the IP-to-country database Marquee vendors
// (third_party/ipdata: ip-location-db's geo-whois-asn-country, CC BY 4.0
// by the NRO), read in place from the binary: countries only (Place
// knows nothing).
func Builtin() (*DB, error) {
	db, err := maxminddb.OpenBytes(ipdata.Country)
	if err != nil {
		return nil, err
	}
	return &DB{db: db}, nil
}

// Places reports whether the database places addresses below the
// country (a City database: GeoIP2-City, GeoLite2-City); false on a nil
// DB and on the builtin one.
func (g *DB) Places() bool {
	return g != nil && strings.Contains(g.db.Metadata.DatabaseType, "City")
}

// Close closes the database.
func (g *DB) Close() error { return g.db.Close() }

// Country returns the ISO 3166-1 alpha-2 code of ip, or "" when the
// database does not know it.
func (g *DB) Country(ip netip.Addr) string {
	if g == nil {
		return ""
	}
	// MaxMind's records say {"country": {"iso_code"}}; ip-location-db's
	// (the builtin database's) {"country_code"}.
	var code string
	r := g.db.Lookup(ip)
	if r.DecodePath(&code, "country", "iso_code") != nil || code == "" && r.DecodePath(&code, "country_code") != nil {
		return ""
	}
	if _, ok := marquee.CountrySlot(code); !ok {
		return ""
	}
	return code
}

// Place returns where a City database (GeoIP2-City, GeoLite2-City)
// places ip below the country: the region as ISO 3166-2 ("US-CA", from
// its first subdivision), the city's English name in lower case and the
// metro (DMA) code; "" for what it does not know (a Country database
// knows none of them).
func (g *DB) Place(ip netip.Addr) (region, city, metro string) {
	var rec struct {
		Country struct {
			ISOCode string `maxminddb:"iso_code"`
		} `maxminddb:"country"`
		Subdivisions []struct {
			ISOCode string `maxminddb:"iso_code"`
		} `maxminddb:"subdivisions"`
		City struct {
			Names map[string]string `maxminddb:"names"`
		} `maxminddb:"city"`
		Location struct {
			MetroCode uint `maxminddb:"metro_code"`
		} `maxminddb:"location"`
	}
	if g == nil || g.db.Lookup(ip).Decode(&rec) != nil {
		return "", "", ""
	}
	if len(rec.Subdivisions) > 0 && rec.Subdivisions[0].ISOCode != "" && rec.Country.ISOCode != "" {
		region = strings.ToUpper(rec.Country.ISOCode + "-" + rec.Subdivisions[0].ISOCode)
	}
	city = strings.ToLower(rec.City.Names["en"])
	if rec.Location.MetroCode != 0 {
		metro = strconv.FormatUint(uint64(rec.Location.MetroCode), 10)
	}
	return region, city, metro
}
