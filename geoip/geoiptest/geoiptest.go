// Package geoiptest writes small MaxMind-format databases for tests: the
// same kind of file -geoip takes, made with MaxMind's own writer.
package geoiptest

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// Write writes a GeoLite2-Country database mapping networks (CIDR) to
// countries (ISO 3166-1 alpha-2) under a temporary folder of t and
// returns its path.
func Write(t testing.TB, networks map[string]string) string {
	t.Helper()
	recs := map[string]mmdbtype.Map{}
	for cidr, iso := range networks {
		recs[cidr] = mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(iso)}}
	}
	return write(t, "GeoLite2-Country", recs)
}

// City is what a City database says of a network.
type City struct {
	Country, Subdivision, Name string // ISO 3166-1 alpha-2, the ISO 3166-2 part after the country's, English
	Metro                      uint   // a metro (DMA) code; 0: none
}

// WriteCity writes a GeoIP2-City database mapping networks (CIDR) to
// places under a temporary folder of t and returns its path.
func WriteCity(t testing.TB, networks map[string]City) string {
	t.Helper()
	recs := map[string]mmdbtype.Map{}
	for cidr, c := range networks {
		rec := mmdbtype.Map{
			"country":      mmdbtype.Map{"iso_code": mmdbtype.String(c.Country)},
			"subdivisions": mmdbtype.Slice{mmdbtype.Map{"iso_code": mmdbtype.String(c.Subdivision)}},
			"city":         mmdbtype.Map{"names": mmdbtype.Map{"en": mmdbtype.String(c.Name)}},
		}
		if c.Metro != 0 {
			rec["location"] = mmdbtype.Map{"metro_code": mmdbtype.Uint16(c.Metro)}
		}
		recs[cidr] = rec
	}
	return write(t, "GeoIP2-City", recs)
}

// write writes a database of kind (its DatabaseType) of the records by
// network (CIDR) and returns its path.
func write(t testing.TB, kind string, recs map[string]mmdbtype.Map) string {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: kind, RecordSize: 28})
	if err != nil {
		t.Fatal(err)
	}
	for cidr, rec := range recs {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Insert(n, rec); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "geo.mmdb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	return path
}
