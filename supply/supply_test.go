package supply_test

import (
	"encoding/json"
	"strings"
	"testing"

	"marquee"
	"marquee/supply"
)

func TestNetworkCheck(t *testing.T) {
	for _, c := range []struct {
		in      supply.Network
		domain  string
		problem string // in the error; "" none
	}{
		{supply.Network{}, "", ""},
		{supply.Network{Domain: "Ads.Example.NET."}, "ads.example.net", ""},
		{supply.Network{Domain: "ads.example.net", Name: "Example Ads", Contact: "sellers@example.net", CertID: "f08c47fec0942fa0"}, "ads.example.net", ""},
		{supply.Network{Name: "Example Ads"}, "", "need -seller-domain"},
		{supply.Network{Domain: "https://ads.example.net/"}, "", "-seller-domain"},
		{supply.Network{Domain: "ads.example.net", Contact: "not an email"}, "", "-seller-contact"},
		{supply.Network{Domain: "ads.example.net", CertID: "a, b"}, "", "-seller-cert-id"},
		{supply.Network{Domain: "ads.example.net", Name: "two\nlines"}, "", "-seller-name"},
	} {
		got, err := c.in.Check()
		switch {
		case c.problem == "" && (err != nil || got.Domain != c.domain):
			t.Errorf("Check(%+v) = %+v, %v; want domain %q", c.in, got, err, c.domain)
		case c.problem != "" && (err == nil || !strings.Contains(err.Error(), c.problem)):
			t.Errorf("Check(%+v) = %v; want an error naming %s", c.in, err, c.problem)
		}
	}
}

func TestAdsTxt(t *testing.T) {
	site := marquee.Site{Name: "news", SellerID: "7"}
	n := supply.Network{Domain: "ads.example.net"}
	if got, want := n.AdsTxt(site), "# ads.example.net\nads.example.net, 7, DIRECT\n"; got != want {
		t.Errorf("AdsTxt = %q; want %q", got, want)
	}
	n.Name, n.CertID = "Example Ads", "f08c47fec0942fa0"
	if got, want := n.AdsTxt(site), "# Example Ads (ads.example.net)\nads.example.net, 7, DIRECT, f08c47fec0942fa0\n"; got != want {
		t.Errorf("AdsTxt with a name and a TAG-ID = %q; want %q", got, want)
	}
	if got := (supply.Network{}).AdsTxt(site); got != "" {
		t.Errorf("AdsTxt of a network without a domain = %q; want none", got)
	}
}

// TestSellersJSON: the document has the fields sellers.json 1.0 defines,
// with their types (version a string, is_confidential 0 or 1), an entry
// a site by seller id as a number, and a confidential site's name and
// domain left out.
func TestSellersJSON(t *testing.T) {
	n := supply.Network{Domain: "ads.example.net", Contact: "sellers@example.net", CertID: "f08c47fec0942fa0"}
	sites := []marquee.Site{
		{Name: "news", Domains: []string{"news.example", "m.news.example"}, SellerID: "10", SellerType: marquee.SellerPublisher},
		{Name: "blog", Domains: []string{}, SellerID: "2", SellerType: marquee.SellerBoth},
		{Name: "secret", Domains: []string{"secret.example"}, SellerID: "9", SellerType: marquee.SellerIntermediary, Confidential: true},
	}
	var doc map[string]any
	if err := json.Unmarshal(n.SellersJSON(sites).Marshal(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["version"] != "1.0" || doc["contact_email"] != "sellers@example.net" {
		t.Errorf("version, contact_email = %v, %v; want \"1.0\", the contact", doc["version"], doc["contact_email"])
	}
	if ids, _ := json.Marshal(doc["identifiers"]); string(ids) != `[{"name":"TAG-ID","value":"f08c47fec0942fa0"}]` {
		t.Errorf("identifiers = %s; want the TAG-ID", ids)
	}
	got, _ := json.Marshal(doc["sellers"])
	want := `[{"domain":"","name":"blog","seller_id":"2","seller_type":"BOTH"},` +
		`{"is_confidential":1,"seller_id":"9","seller_type":"INTERMEDIARY"},` +
		`{"domain":"news.example","name":"news","seller_id":"10","seller_type":"PUBLISHER"}]`
	want = strings.Replace(want, `"domain":"",`, ``, 1) // a site without domains has none
	if string(got) != want {
		t.Errorf("sellers = %s\nwant      %s", got, want)
	}
	if empty := (supply.Network{Domain: "ads.example.net"}).SellersJSON(nil).Marshal(); string(empty) != `{"version":"1.0","sellers":[]}` {
		t.Errorf("sellers.json without sites = %s; want an empty list", empty)
	}
}
