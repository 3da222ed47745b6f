package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAdvertiserWorkspace: an advertiser's own login uploads an image,
// drafts a campaign for its advertiser (never another's, never the
// team's fields), changes it while a draft (keeping what the team set),
// adds an ad with the image (pending), submits the campaign — after which
// only the team changes it — and the team approves it: it serves.
func TestAdvertiserWorkspace(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil)
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Acme"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/advertisers", `{"name":"Other"}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/placements", `{"name":"side","sizes":["300x250"]}`), 201, "")
	in.expect(in.admin("POST", "/api/v1/users", `{"email":"adv@acme.test","role":"advertiser","advertisers":["1"],"password":"advertiser password"}`), 201, "")
	adv := in.signIn(t, `{"email":"adv@acme.test","password":"advertiser password"}`)

	// Its image: the raw bytes with its session (and the CSRF check).
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 300, 250)))
	req, _ := http.NewRequest("POST", in.url+"/api/v1/assets", bytes.NewReader(img.Bytes()))
	req.AddCookie(adv.cookie)
	req.Header.Set("X-CSRF-Token", adv.csrf)
	req.Header.Set("Origin", in.url)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var asset struct{ URL string }
	if json.Unmarshal(body, &asset); resp.StatusCode != 201 || !strings.HasPrefix(asset.URL, "/assets/") {
		t.Fatalf("the advertiser's upload = %d %s; want 201 with its url", resp.StatusCode, body)
	}

	flight := flightJSON(-time.Hour, 24*time.Hour)
	for _, c := range []struct{ body, field string }{
		{`{"advertiserId":"2","name":"Theirs",` + flight + `}`, "advertiserId"},
		{`{"advertiserId":"1","name":"Top",` + flight + `,"priority":"sponsorship","weight":50}`, "priority"},
		{`{"advertiserId":"1","name":"Top",` + flight + `,"labels":[{"name":"airline","exclusive":true}]}`, "labels"},
	} {
		if r := adv.do("POST", "/api/v1/campaigns", c.body); r.status != 400 || !strings.Contains(r.body, `"`+c.field+`"`) {
			t.Errorf("the advertiser's draft %s = %d %s; want 400 naming %s", c.body, r.status, r.body, c.field)
		}
	}
	draft := `{"advertiserId":"1","name":"Spring",` + flight + `,"budget":{"total":100},"price":{"model":"cpm","amount":2}}`
	r := adv.do("POST", "/api/v1/campaigns", draft)
	if r.status != 201 || !strings.Contains(r.body, `"state":"draft"`) || !strings.Contains(r.body, `"priority":"standard"`) {
		t.Fatalf("the advertiser's draft = %d %s; want 201, a standard draft", r.status, r.body)
	}
	// The team sets the tier; the advertiser's change keeps it.
	in.expect(in.admin("PUT", "/api/v1/campaigns/1", strings.Replace(draft, `"name"`, `"priority":"sponsorship","name"`, 1)), 200, "")
	if r := adv.do("PUT", "/api/v1/campaigns/1", strings.Replace(draft, "Spring", "Spring sale", 1)); r.status != 200 ||
		!strings.Contains(r.body, `"name":"Spring sale"`) || !strings.Contains(r.body, `"priority":"sponsorship"`) {
		t.Errorf("the advertiser's change = %d %s; want 200, renamed, the team's tier kept", r.status, r.body)
	}
	ad := `{"title":"Banner",` + flight + `,"campaignId":"1","creative":{"type":"image","width":300,"height":250,"image":"` + asset.URL + `","clickUrl":"https://acme.test/"}}`
	in.expect(adv.do("POST", "/api/v1/ad", ad), 201, "")
	if r := adv.do("GET", "/api/v1/ads", ""); !strings.Contains(r.body, `"state":"pending"`) {
		t.Errorf("the advertiser's ads = %d %s; want its ad pending", r.status, r.body)
	}
	if r := adv.do("POST", "/api/v1/campaigns/1/submit", ""); r.status != 200 || !strings.Contains(r.body, `"state":"pending"`) {
		t.Errorf("submit = %d %s; want 200 pending", r.status, r.body)
	}
	if r := adv.do("PUT", "/api/v1/campaigns/1", draft); r.status != 409 || !strings.Contains(r.body, "pending") {
		t.Errorf("the advertiser's change under review = %d %s; want 409 naming the state", r.status, r.body)
	}
	if r := adv.do("POST", "/api/v1/campaigns/1/approve", ""); r.status != 403 {
		t.Errorf("the advertiser approving its own = %d %s; want 403", r.status, r.body)
	}
	in.expect(in.admin("POST", "/api/v1/campaigns/1/approve", ""), 200, "")
	in.expect(in.admin("POST", "/api/v1/ad/1/approve", ""), 200, "")
	eventually(t, 5*time.Second, func() string {
		d := in.do("POST", "/api/v1/decisions", "", "application/json", `{"placements":[{"placement":"side"}]}`)
		if !strings.Contains(d.body, asset.URL) {
			return "the approved campaign does not serve its image: " + d.body
		}
		return ""
	})
	// Its change of the approved ad waits for approval again, and the
	// reviewer reads what was approved beside it.
	in.expect(adv.do("PUT", "/api/v1/ad/1", strings.Replace(ad, "https://acme.test/", "https://acme.test/sale", 1)), 200, "")
	var ads struct {
		Items []struct {
			State    string
			Creative struct{ ClickURL string }
			Review   struct {
				Action   string
				Approved struct {
					Creative struct{ ClickURL string }
				}
			}
		}
	}
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/ads?approval=pending", "").body), &ads)
	if len(ads.Items) != 1 || ads.Items[0].Creative.ClickURL != "https://acme.test/sale" || ads.Items[0].Review.Approved.Creative.ClickURL != "https://acme.test/" {
		t.Errorf("the changed ad = %+v; want it pending with its approved version's click URL beside", ads.Items)
	}
}
