package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"marquee/tracking"
)

// TestPublisherSeesItsNetRevenue: a site with a revenue share of 0.7; a
// publisher's account bound to it reads, in every report it may, its
// net revenue — what its placements' ads earned × 0.7 — called revenue,
// and never the advertiser's conversions, their value or ROAS, nor a
// spend; the team reads the gross spend and the conversion. (Before: a
// publisher login saw the advertisers' conversion values and ROAS, and
// its money was "revenue" on one page and "spend" on another.)
func TestPublisherSeesItsNetRevenue(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "100ms", "-currency", "EUR")
	flight := flightJSON(-time.Hour, 48*time.Hour)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","site":"mysite"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"mysite","domains":["News.example"],"revenueShare":1.5}`), 400,
		`{"error":"invalid site","problems":{"revenueShare":"must be a number from 0 to 1 (0.7: 70% of what its placements earn)"}}`)
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"mysite","domains":["News.example"],"revenueShare":0.7}`), 201, "")
	in.campaign(`{"advertiserId":"1","name":"cpm",` + flight + `,"price":{"model":"cpm","amount":10}}`)
	in.expect(in.admin("POST", "/api/v1/ad", `{"title":"a",`+flight+`,"campaignId":"1","creative":{"type":"native","title":"t","clickUrl":"https://acme.test/?c={clickId}"}}`), 201, "")
	advKey, _ := in.keyFrom(`{"name":"acme","scopes":["conversions:write","reports:read"],"advertisers":[1]}`)
	pubKey, _ := in.keyFrom(`{"name":"mysite","scopes":["campaigns:read","reports:read"],"sites":["mysite"]}`)
	var secret struct{ Secret string }
	json.Unmarshal([]byte(in.do("POST", "/api/v1/advertisers/1/conversion-secret", advKey, "application/json", "").body), &secret)

	for i := range 10 {
		r := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"div":"d","placement":"side"}],"url":"https://news.example/story"}`) // a page of the site (its domains bind it)
		var got struct {
			Decisions map[string][]struct{ ImpressionURL, ClickURL string }
		}
		if json.Unmarshal([]byte(r.body), &got); len(got.Decisions["d"]) != 1 {
			t.Fatalf("decision = %d %s", r.status, r.body)
		}
		fire(t, got.Decisions["d"][0].ImpressionURL)
		if i == 0 {
			loc, _ := url.Parse(fire(t, got.Decisions["d"][0].ClickURL).Header.Get("Location"))
			c := loc.Query().Get("c")
			fire(t, in.url+"/conversion?clickId="+c+"&orderId=o-1&value=99&sig="+tracking.SignConversion(secret.Secret, c, "o-1", "99"))
		}
	}
	q := "/api/v1/reports?by=placement&granularity=total"
	eventually(t, 5*time.Second, func() string {
		if r := in.admin("GET", q, ""); !strings.Contains(r.body, `"impressions":10,`) || !strings.Contains(r.body, `"conversions":1,`) ||
			!strings.Contains(r.body, `"spend":0.1,`) || !strings.Contains(r.body, `"roas":990`) {
			return "the team's report: " + r.body
		}
		return ""
	})
	for _, path := range []string{q, q + "&format=csv", "/api/v1/placements/side/stats"} {
		r := in.do("GET", path, pubKey, "", "")
		if r.status != 200 || strings.Contains(r.body, "spend") || strings.Contains(r.body, "roas") || strings.Contains(r.body, `"conversions":1`) ||
			strings.Contains(r.body, "conversion value") || strings.Contains(r.body, `"conversionValue":99`) {
			t.Errorf("the publisher's %s = %d %s; want no spend, ROAS, conversions or their value", path, r.status, r.body)
		}
	}
	if r := in.do("GET", q, pubKey, "", ""); !strings.Contains(r.body, `"revenue":0.07,"ecpm":7}`) {
		t.Errorf("the publisher's report = %s; want its net revenue 0.07 (0.1 × 0.7), eCPM 7", r.body)
	}
	if r := in.do("GET", q+"&format=csv", pubKey, "", ""); !strings.Contains(r.body, "revenue (EUR),ecpm (EUR)") || !strings.Contains(r.body, ",0.07,7") {
		t.Errorf("the publisher's CSV = %s; want revenue 0.07 and eCPM 7", r.body)
	}
	if r := in.do("GET", "/api/v1/sites", pubKey, "", ""); r.status != 200 || !strings.Contains(r.body, `"revenueShare":0.7`) || !strings.Contains(r.body, `"domains":["news.example"]`) {
		t.Errorf("the publisher's sites = %d %s", r.status, r.body)
	}
	if r := in.do("POST", "/api/v1/sites", pubKey, "application/json", `{"name":"x","revenueShare":1}`); r.status != 403 {
		t.Errorf("a publisher making a site = %d; want 403", r.status)
	}

	// The statement the publisher is paid from: its net revenue, as its
	// reports count it; numbered, one a period.
	today := time.Now().UTC().Truncate(24 * time.Hour)
	period := `"from":"` + today.Add(-24*time.Hour).Format(time.RFC3339) + `","to":"` + today.Add(24*time.Hour).Format(time.RFC3339) + `"`
	in.expect(in.admin("POST", "/api/v1/statements", `{"site":"nosuch",`+period+`}`), 400,
		`{"error":"invalid statement","problems":{"site":"is not a site's name (POST /api/v1/sites gives a site its revenue share)"}}`)
	st := in.admin("POST", "/api/v1/statements", `{"site":"mysite",`+period+`}`)
	var doc struct {
		ID, Number, Kind, Site string
		Total, Gross           json.Number
		Placements             []struct {
			Placement  string
			Gross, Net json.Number
		}
	}
	if json.Unmarshal([]byte(st.body), &doc); st.status != 201 || doc.Kind != "statement" || doc.Total != "0.07" || doc.Gross != "0.1" ||
		len(doc.Placements) != 1 || doc.Placements[0].Placement != "side" || doc.Placements[0].Net != "0.07" {
		t.Fatalf("statement = %d %s; want 201, net 0.07 of gross 0.1 on side", st.status, st.body)
	}
	if r := in.admin("POST", "/api/v1/statements", `{"site":"mysite",`+period+`}`); r.status != 409 {
		t.Errorf("a second statement of the period = %d; want 409", r.status)
	}
	if r := in.do("GET", "/api/v1/statements", pubKey, "", ""); r.status != 200 || !strings.Contains(r.body, doc.Number) {
		t.Errorf("the publisher's statements = %d %s", r.status, r.body)
	}
	if r := in.do("GET", "/api/v1/statements/"+doc.ID+"?format=csv", pubKey, "", ""); r.status != 200 || !strings.Contains(r.body, "placement,1,side,10,0.1,0.07") {
		t.Errorf("the statement's CSV = %d %s", r.status, r.body)
	}
	if r := in.do("GET", "/api/v1/statements/"+doc.ID+"?format=pdf", pubKey, "", ""); r.status != 200 || !strings.HasPrefix(r.body, "%PDF-") {
		t.Errorf("the statement's PDF = %d", r.status)
	}
	if r := in.admin("GET", "/api/v1/invoices/"+doc.ID, ""); r.status != 404 {
		t.Errorf("a statement read as an invoice = %d; want 404", r.status)
	}
}

// TestSellersJSONAndAdsTxt: with -seller-domain, GET /sellers.json (no
// credential) lists every site as sellers.json 1.0 says — seller ids in
// the order sites were made, never given again after a deletion, a
// confidential site without its name and domain — and a site's publisher
// reads the ads.txt line of its own site only; without -seller-domain
// there is no sellers.json (404) and no line (409).
func TestSellersJSONAndAdsTxt(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-seller-domain", "Ads.Example.net", "-seller-name", "Example Ads",
		"-seller-contact", "sellers@example.net", "-seller-cert-id", "f08c47fec0942fa0")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"news","domains":["news.example"],"revenueShare":0.7}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"gone","domains":[],"revenueShare":0.7}`), 201, "")
	in.expect(in.admin("DELETE", "/api/v1/sites/gone", ""), 204, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"hidden","domains":["hidden.example"],"revenueShare":0.5,"sellerType":"INTERMEDIARY","confidential":true}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"x","revenueShare":0.5,"sellerType":"publisher","sellerId":"1"}`), 400,
		`{"error":"invalid site","problems":{"sellerId":"unknown field","sellerType":"must be PUBLISHER, INTERMEDIARY or BOTH (as sellers.json names them)"}}`)
	var site struct{ SellerID, SellerType string }
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/sites/hidden", "").body), &site)
	if site.SellerID != "3" || site.SellerType != "INTERMEDIARY" {
		t.Errorf("site hidden = %+v; want seller id 3 (2 was the deleted site's), INTERMEDIARY", site)
	}

	r := in.do("GET", "/sellers.json", "", "", "")
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || !strings.Contains(r.header.Get("Cache-Control"), "public") {
		t.Fatalf("GET /sellers.json = %d %v %s", r.status, r.header, r.body)
	}
	var doc struct {
		ContactEmail string `json:"contact_email"`
		Version      string `json:"version"`
		Identifiers  []struct{ Name, Value string }
		Sellers      []map[string]any `json:"sellers"`
	}
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != "1.0" || doc.ContactEmail != "sellers@example.net" || len(doc.Identifiers) != 1 || doc.Identifiers[0].Value != "f08c47fec0942fa0" {
		t.Errorf("sellers.json = %s; want version 1.0, the contact and the TAG-ID", r.body)
	}
	want := []map[string]any{
		{"seller_id": "1", "name": "news", "domain": "news.example", "seller_type": "PUBLISHER"},
		{"seller_id": "3", "seller_type": "INTERMEDIARY", "is_confidential": float64(1)},
	}
	if got, _ := json.Marshal(doc.Sellers); string(got) != func() string { b, _ := json.Marshal(want); return string(b) }() {
		t.Errorf("sellers = %s; want %v", got, want)
	}

	pub, _ := in.keyFrom(`{"name":"news","scopes":["campaigns:read"],"sites":["news"]}`)
	r = in.do("GET", "/api/v1/sites/news/ads.txt", pub, "", "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") ||
		r.body != "# Example Ads (ads.example.net)\nads.example.net, 1, DIRECT, f08c47fec0942fa0\n" {
		t.Errorf("the publisher's ads.txt line = %d %q", r.status, r.body)
	}
	in.expect(in.do("GET", "/api/v1/sites/hidden/ads.txt", pub, "", ""), 404, "")
	in.expect(in.do("GET", "/api/v1/sites/news/ads.txt", "", "", ""), 401, "")

	bare := start(t, t.TempDir(), nil)
	bare.expect(bare.admin("POST", "/api/v1/sites", `{"name":"news","domains":["news.example"],"revenueShare":0.7}`), 201, "")
	bare.expect(bare.do("GET", "/sellers.json", "", "", ""), 404, "")
	bare.expect(bare.admin("GET", "/api/v1/sites/news/ads.txt", ""), 409, "")
}

// TestAdsTxtCheckOnAsk: the team, or a site's publisher, asks for its
// ads.txt to be checked: the answer is the site with its check (its
// domains' files read from -ads-txt-url), kept on the site; asked again
// within a minute, a 429 with Retry-After; without -seller-domain, 409.
func TestAdsTxtCheckOnAsk(t *testing.T) {
	t.Parallel()
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/news.example/ads.txt":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "# news\ngoogle.com, pub-1, DIRECT\nADS.EXAMPLE.NET, 1, DIRECT\n")
		case "/m.blog.example/ads.txt", "/blog.example/ads.txt":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "google.com, pub-1, DIRECT\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer files.Close()
	in := start(t, t.TempDir(), nil, "-seller-domain", "ads.example.net", "-ads-txt-url", files.URL+"/{domain}/ads.txt", "-ads-txt-allow-private")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"news","domains":["news.example"],"revenueShare":0.7}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/sites", `{"name":"blog","domains":["m.blog.example","gone.example"],"revenueShare":0.7}`), 201, "")
	pub, _ := in.keyFrom(`{"name":"news","scopes":["campaigns:read"],"sites":["news"]}`)
	type check struct {
		AdsTxt struct {
			Status  string
			Domains []struct{ Domain, Status, Line, Error string }
		}
	}
	var got check
	r := in.do("POST", "/api/v1/sites/news/ads-txt/check", pub, "", "")
	if json.Unmarshal([]byte(r.body), &got); r.status != 200 || got.AdsTxt.Status != "authorized" || len(got.AdsTxt.Domains) != 1 || got.AdsTxt.Domains[0].Line != "ADS.EXAMPLE.NET, 1, DIRECT" {
		t.Errorf("the publisher's check = %d %s; want authorized by its line", r.status, r.body)
	}
	r = in.do("POST", "/api/v1/sites/news/ads-txt/check", pub, "", "")
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Errorf("a check again at once = %d %v %s; want 429 with Retry-After", r.status, r.header, r.body)
	}
	in.expect(in.do("POST", "/api/v1/sites/blog/ads-txt/check", pub, "", ""), 404, "")
	r = in.admin("POST", "/api/v1/sites/blog/ads-txt/check", "")
	if json.Unmarshal([]byte(r.body), &got); r.status != 200 || got.AdsTxt.Status != "notListed" || len(got.AdsTxt.Domains) != 2 ||
		got.AdsTxt.Domains[0].Status != "notListed" || got.AdsTxt.Domains[1].Status != "missing" {
		t.Errorf("the team's check of blog = %d %s; want notListed (its root's file), missing", r.status, r.body)
	}
	if r := in.admin("GET", "/api/v1/sites/news", ""); !strings.Contains(r.body, `"adsTxt":{"status":"authorized"`) {
		t.Errorf("the site read back = %s; want its check", r.body)
	}

	bare := start(t, t.TempDir(), nil)
	bare.expect(bare.admin("POST", "/api/v1/sites", `{"name":"news","domains":["news.example"],"revenueShare":0.7}`), 201, "")
	bare.expect(bare.admin("POST", "/api/v1/sites/news/ads-txt/check", ""), 409, "")
}
