package supply_test

import (
	"fmt"
	"strings"
	"testing"

	"marquee"
	"marquee/supply"
)

// A file as publishers write them: comments everywhere, odd case, CRLF
// and CR line ends, a byte order mark, variables, extension data and
// bad lines among good ones.
const publisherFile = "\xef\xbb\xbf# ads.txt of news.example\r\n" +
	"CONTACT=ads@news.example\r\n" +
	"subdomain = M.News.Example\r\n" +
	"OwnerDomain=news.example # the owner\r\n" +
	"MANAGERDOMAIN=manager.example,US\r\n" +
	"\r\n" +
	"google.com, pub-0000000000000001, DIRECT, f08c47fec0942fa0\n" +
	"  Ads.Example.NET ,7 , direct # our network, in odd case\n" +
	"appnexus.com, 12345, RESELLER;extension=data\r" +
	"bad line without commas\n" +
	"exchange.example, 1, PARTNER\n" +
	"exchange.example, , DIRECT\n" +
	", 2, DIRECT\n" +
	"a.example, 1, DIRECT, cert, extra\n" +
	"#only a comment\n" +
	"   \t  \n" +
	"placeholder.example.com, placeholder, DIRECT, placeholder"

func TestParseAdsTxt(t *testing.T) {
	f := supply.ParseAdsTxt([]byte(publisherFile))
	var recs []string
	for _, r := range f.Records {
		recs = append(recs, fmt.Sprintf("%d:%s|%s|%s|%s", r.Line, r.Domain, r.AccountID, r.Relationship, r.CertID))
	}
	want := []string{"7:google.com|pub-0000000000000001|DIRECT|f08c47fec0942fa0", "8:ads.example.net|7|DIRECT|",
		"9:appnexus.com|12345|RESELLER|", "17:placeholder.example.com|placeholder|DIRECT|placeholder"}
	if strings.Join(recs, "\n") != strings.Join(want, "\n") {
		t.Errorf("records =\n%s\nwant\n%s", strings.Join(recs, "\n"), strings.Join(want, "\n"))
	}
	var vars []string
	for _, v := range f.Variables {
		vars = append(vars, fmt.Sprintf("%d:%s=%s", v.Line, v.Name, v.Value))
	}
	if got, want := strings.Join(vars, " "), "2:CONTACT=ads@news.example 3:SUBDOMAIN=M.News.Example 4:OWNERDOMAIN=news.example 5:MANAGERDOMAIN=manager.example,US"; got != want {
		t.Errorf("variables = %s; want %s", got, want)
	}
	var bad []string
	for _, p := range f.Problems {
		bad = append(bad, fmt.Sprintf("%d:%s", p.Line, p.Text))
	}
	if got, want := strings.Join(bad, " | "), "10:bad line without commas | 11:exchange.example, 1, PARTNER | 12:exchange.example, , DIRECT | 13:, 2, DIRECT | 14:a.example, 1, DIRECT, cert, extra"; got != want {
		t.Errorf("lines skipped = %s; want %s", got, want)
	}
	if got := f.Subdomains(); len(got) != 1 || got[0] != "m.news.example" {
		t.Errorf("Subdomains = %v; want [m.news.example]", got)
	}
	if r, ok := f.Find("ads.example.net", "7"); !ok || r.Line != 8 {
		t.Errorf("Find(ads.example.net, 7) = %+v, %v; want line 8", r, ok)
	}
	for _, c := range [][2]string{{"ads.example.net", "8"}, {"other.example", "7"}, {"appnexus.com", "1234"}} {
		if r, ok := f.Find(c[0], c[1]); ok {
			t.Errorf("Find(%s, %s) = %+v; want none", c[0], c[1], r)
		}
	}
}

// TestAdsTxtRoundTrip: what Marquee tells a publisher to add, added to
// its file, authorises the network's seller id — and another site's id
// is not authorised by it.
func TestAdsTxtRoundTrip(t *testing.T) {
	n := supply.Network{Domain: "ads.example.net", Name: "Example Ads", CertID: "f08c47fec0942fa0"}
	file := "google.com, pub-1, DIRECT\n" + n.AdsTxt(marquee.Site{SellerID: "42"})
	f := supply.ParseAdsTxt([]byte(file))
	if r, ok := f.Find("ads.example.net", "42"); !ok || r.Relationship != "DIRECT" || r.CertID != "f08c47fec0942fa0" || len(f.Problems) != 0 {
		t.Errorf("the network's own line read back = %+v, %v (problems %v)", r, ok, f.Problems)
	}
	if _, ok := f.Find("ads.example.net", "4"); ok {
		t.Error("seller 4 authorised by seller 42's line")
	}
}

func FuzzParseAdsTxt(f *testing.F) {
	f.Add([]byte(publisherFile))
	f.Add([]byte("a=b=c\n,,,\n;;\n#\r\r\n"))
	f.Fuzz(func(t *testing.T, file []byte) {
		got := supply.ParseAdsTxt(file)
		for _, r := range got.Records {
			if r.Domain == "" || r.AccountID == "" || (r.Relationship != "DIRECT" && r.Relationship != "RESELLER") {
				t.Fatalf("record %+v of %q", r, file)
			}
		}
	})
}
