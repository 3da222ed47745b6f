package marquee_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"marquee"
)

func TestParseLinkInput(t *testing.T) {
	in, err := marquee.ParseLinkInput([]byte(`{"url":"https://example.com/a","code":"x_Y-9","expiresAt":"2030-01-02T03:04:05.678+01:00","maxClicks":5,"redirect":308,"adId":"12"}`))
	want := marquee.LinkInput{Code: "x_Y-9", URL: "https://example.com/a", ExpiresAt: time.Date(2030, 1, 2, 2, 4, 5, 678e6, time.UTC),
		MaxClicks: 5, Redirect: 308, AdID: 12}
	if err != nil || !reflect.DeepEqual(in, want) {
		t.Fatalf("ParseLinkInput = %+v, %v; want %+v", in, err, want)
	}
	if in, _ := marquee.ParseLinkInput([]byte(`{"url":"http://a.b","adId":7}`)); in.Redirect != 302 || in.AdID != 7 || in.Code != "" {
		t.Fatalf("defaults: %+v; want redirect 302, adId 7, no code", in)
	}
	for _, c := range []struct{ body, field, msg string }{
		{`{"url":"https://x.test","code":"r"}`, "code", "reserved"},
		{`{"url":"https://x.test","code":"HEALTHZ"}`, "code", "reserved"},
		{`{"url":"https://x.test","code":"a/b"}`, "code", "A-Z"},
		{`{"url":"https://x.test","code":"` + strings.Repeat("a", 65) + `"}`, "code", "1-64"},
		{`{"url":"https://x.test","code":7}`, "code", "string"},
		{`{"url":"data:text/html,hi"}`, "url", "http or https"},
		{`{"url":"//example.com"}`, "url", "http or https"},
		{`{"url":"not a url"}`, "url", "must be an absolute http or https URL, such as https://example.com/page"},
		{`{"url":"https://x.test/a b"}`, "url", "spaces"},
		{`{"url":"http:///path"}`, "url", "host"},
		{`{"url":"https://x.test/` + strings.Repeat("a", 2048) + `"}`, "url", "2048"},
		{`{"url":"https://x.test/\u0000"}`, "url", "control"},
		{`{"url":"https://x.test","redirect":200}`, "redirect", "301"},
		{`{"url":"https://x.test","maxClicks":-1}`, "maxClicks", "positive"},
		{`{"url":"https://x.test","maxClicks":1.5}`, "maxClicks", "positive"},
		{`{"url":"https://x.test","adId":"0"}`, "adId", "ad id"},
		{`{"url":"https://x.test","expiresAt":"2030-01-02"}`, "expiresAt", "RFC 3339"},
		{`[]`, "body", "object"},
		{``, "body", "empty"},
		{`{"url":"https://x.test","domain":"https://go.x.test"}`, "domain", "not a hostname"},
		{`{"url":"https://x.test","domain":"go.x.test:8080"}`, "domain", "not a hostname"},
		{`{"url":"https://x.test","domain":"-go.x.test"}`, "domain", "not a hostname"},
		{`{"url":"https://x.test","title":""}`, "title", "empty"},
		{`{"url":"https://x.test","title":"` + strings.Repeat("é", 201) + `"}`, "title", "at most 200"},
		{`{"url":"https://x.test","tags":"a"}`, "tags", "array"},
		{`{"url":"https://x.test","tags":["a,b"]}`, "tags[0]", "commas"},
		{`{"url":"https://x.test","tags":["ok",""]}`, "tags[1]", "1 to 50"},
		{`{"url":"https://x.test","rules":{}}`, "rules", "array"},
		{`{"url":"https://x.test","rules":[{"when":{"device":"ios"},"url":"https://i.test"}]}`, "rules[0].when.device", "unknown field"},
		{`{"url":"https://x.test","rules":[{"when":{},"url":"https://i.test"}]}`, "rules[0].when", "at least one condition"},
		{`{"url":"https://x.test","rules":[{"when":{"language":["en","english-please"]},"url":"https://i.test"}]}`, "rules[0].when.language[1]", "BCP 47"},
		{`{"url":"https://x.test","rules":[{"when":{"platform":"windows"},"url":"https://i.test"}]}`, "rules[0].when.platform", "desktop"},
		{`{"url":"https://x.test","rules":[{"when":{"country":"XX"},"url":"https://i.test"}]}`, "rules[0].when.country", "ISO 3166"},
		{`{"url":"https://x.test","rules":[{"when":{"query":["a"]},"url":"https://i.test"}]}`, "rules[0].when.query", "object"},
		{`{"url":"https://x.test","rules":[{"when":{"from":"2030-01-02T00:00:00Z","to":"2030-01-01T00:00:00Z"},"url":"https://i.test"}]}`, "rules[0].when.to", "after from"},
		{`{"url":"https://x.test","rules":[{"when":{"platform":"ios"},"url":"javascript:alert(1)"}]}`, "rules[0].url", "http or https"},
		{`{"url":"https://x.test","rules":[{"when":{"platform":"ios"}}]}`, "rules[0].url", "required"},
		{`{"url":"https://x.test","rules":[{"url":"https://i.test"}]}`, "rules[0].when", "required"},
		{`{"destinations":[{"url":"https://a.test","weight":0},{"url":"https://b.test","weight":0}]}`, "destinations", "sum to a positive"},
		{`{"destinations":[{"url":"https://a.test","weight":-1},{"url":"https://b.test","weight":1}]}`, "destinations[0].weight", "0 to 1000"},
		{`{"destinations":[{"url":"https://a.test","weight":1.5},{"url":"https://b.test","weight":1}]}`, "destinations[0].weight", "integer"},
		{`{"destinations":[{"url":"https://a.test","weight":1}]}`, "destinations", "at least 2"},
		{`{"destinations":[{"url":"ftp://a.test","weight":1},{"url":"https://b.test","weight":1,"share":2}]}`, "destinations[1].share", "unknown field"},
		{`{"destinations":[{"url":"ftp://a.test","weight":1},{"url":"https://b.test","weight":1}]}`, "destinations[0].url", "http or https"},
	} {
		_, err := marquee.ParseLinkInput([]byte(c.body))
		if inv := marquee.AsError(err); inv == nil || inv.Kind != marquee.KindInvalid || !strings.Contains(inv.Problems[c.field], c.msg) {
			t.Errorf("ParseLinkInput(%s) = %v; want %s: …%s…", c.body, err, c.field, c.msg)
		}
	}
}

func TestCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 10_000 {
		c := marquee.NewCode()
		if len(c) != marquee.GeneratedCodeLen || marquee.CheckCode(c) != "" || strings.ContainsAny(c, "0O1lIio") || seen[c] {
			t.Fatalf("NewCode() = %q: want %d unambiguous, valid, new characters", c, marquee.GeneratedCodeLen)
		}
		seen[c] = true
	}
}

func TestParseLinkRulesAndSplits(t *testing.T) {
	body := `{"domain":"Go.Brand.Example.","title":" Spring sale ","tags":["Spring","promo","spring"],
		"rules":[{"when":{"platform":["iOS"],"language":["EN-us","pt-br"],"country":"de","query":{"utm_source":"mail","a":"1"},
			"from":"2030-01-01T00:00:00+01:00","to":"2030-02-01T00:00:00Z"},"url":"https://apps.example/ios"}],
		"destinations":[{"url":"https://a.example","weight":70},{"url":"https://b.example","weight":30}]}`
	in, err := marquee.ParseLinkInput([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := marquee.LinkInput{Domain: "go.brand.example", URL: "https://a.example", Title: "Spring sale", Tags: []string{"spring", "promo"},
		Rules: []marquee.LinkRule{{URL: "https://apps.example/ios", When: marquee.RuleWhen{
			Platforms: []string{"ios"}, Languages: []string{"en-US", "pt-BR"}, Countries: []string{"DE"},
			Query: []marquee.QueryMatch{{Name: "a", Value: "1"}, {Name: "utm_source", Value: "mail"}},
			From:  time.Date(2029, 12, 31, 23, 0, 0, 0, time.UTC), To: time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC)}}},
		Destinations: []marquee.Destination{{URL: "https://a.example", Weight: 70}, {URL: "https://b.example", Weight: 30}},
		Redirect:     302}
	if !reflect.DeepEqual(in, want) {
		t.Fatalf("ParseLinkInput =\n%+v; want\n%+v", in, want)
	}
	// A link renders with its fields, rules in the shape they are given
	// (ParseLinkInput reads its own output back as the same link).
	got, _ := json.Marshal(in.Link(1, 0, time.Unix(0, 0), time.Unix(0, 0)))
	for _, frag := range []string{`"domain":"go.brand.example"`, `"title":"Spring sale"`, `"tags":["spring","promo"]`,
		`"query":{"a":"1","utm_source":"mail"}`, `"from":"2029-12-31T23:00:00.000Z"`, `"destinations":[{"url":"https://a.example","weight":70}`} {
		if !strings.Contains(string(got), frag) {
			t.Errorf("link JSON %s lacks %s", got, frag)
		}
	}
	rules, _ := json.Marshal(in.Rules)
	dests, _ := json.Marshal(in.Destinations)
	again, err := marquee.ParseLinkInput([]byte(`{"url":"https://a.example","rules":` + string(rules) + `,"destinations":` + string(dests) + `}`))
	if err != nil || !reflect.DeepEqual(again.Rules, in.Rules) || !reflect.DeepEqual(again.Destinations, in.Destinations) {
		t.Fatalf("rules and destinations as rendered, sent back = %+v, %v; want %+v", again, err, in)
	}
	plain, _ := json.Marshal(marquee.Link{Code: "a", URL: "https://x.test"})
	for _, frag := range []string{`"domain":null`, `"tags":[]`, `"rules":[]`, `"destinations":[]`} {
		if !strings.Contains(string(plain), frag) {
			t.Errorf("plain link JSON %s lacks %s", plain, frag)
		}
	}
}

func TestLinkKey(t *testing.T) {
	for _, c := range []struct{ domain, code, key string }{{"", "abc", "abc"}, {"go.x.test", "abc", "go.x.test/abc"}} {
		if k := marquee.LinkKey(c.domain, c.code); k != c.key {
			t.Errorf("LinkKey(%q, %q) = %q; want %q", c.domain, c.code, k, c.key)
		}
		if d, code := marquee.SplitLinkKey(c.key); d != c.domain || code != c.code {
			t.Errorf("SplitLinkKey(%q) = %q, %q; want %q, %q", c.key, d, code, c.domain, c.code)
		}
	}
}
