package marquee_test

import (
	"strings"
	"testing"
	"time"

	"marquee"
)

// badInput is a body that must be refused naming field with msg.
type badInput struct{ body, field, msg string }

func refuses[T any](t *testing.T, name string, parse func([]byte) (T, error), cases []badInput) {
	t.Helper()
	for _, c := range cases {
		_, err := parse([]byte(c.body))
		if inv := marquee.AsError(err); inv == nil || inv.Kind != marquee.KindInvalid || !strings.Contains(inv.Problems[c.field], c.msg) {
			t.Errorf("%s(%s) = %v; want %s: …%s…", name, c.body, err, c.field, c.msg)
		}
	}
}

const flight = `"advertiserId":"1","name":"C","startAt":"2026-01-01T00:00:00Z","endAt":"2027-01-01T00:00:00Z"`

func TestParseCampaignInput(t *testing.T) {
	in, err := marquee.ParseCampaignInput([]byte(`{` + flight + `}`))
	if err != nil || in.AdvertiserID != 1 || in.Priority != "standard" || in.Weight != 1 || in.Pacing != "asap" || in.Goal != nil {
		t.Fatalf("defaults = %+v, %v; want standard, weight 1, asap, no goal", in, err)
	}
	in, err = marquee.ParseCampaignInput([]byte(`{` + flight + `,"goal":{"metric":"impressions","daily":10},"price":{"model":"flat","amount":"1000.50"}}`))
	if err != nil || in.Pacing != "even" || in.Goal.Daily != 10 || in.Price.Amount != "1000.5" {
		t.Fatalf("a goal = %+v, %v; want even pacing by default, amount 1000.5", in, err)
	}
	refuses(t, "ParseCampaignInput", marquee.ParseCampaignInput, []badInput{
		{`{}`, "advertiserId", "required"},
		{`{}`, "name", "required"},
		{`{}`, "startAt", "required"},
		{`{"advertiserId":"x"}`, "advertiserId", "advertiser's id"},
		{`{` + flight + `,"name":"  "}`, "name", "empty"},
		{`{` + flight + `,"endAt":"2025-01-01T00:00:00Z"}`, "endAt", "after startAt"},
		{`{` + flight + `,"priority":"gold"}`, "priority", "sponsorship, standard, remnant, house"},
		{`{` + flight + `,"weight":0}`, "weight", "1 to 1000"},
		{`{` + flight + `,"weight":1001}`, "weight", "1 to 1000"},
		{`{` + flight + `,"goal":{"metric":"impressions","total":0}}`, "goal.total", "positive"},
		{`{` + flight + `,"goal":{"metric":"views","total":5}}`, "goal.metric", "impressions, clicks, conversions"},
		{`{` + flight + `,"goal":{"metric":"clicks"}}`, "goal", "total, a daily amount"},
		{`{` + flight + `,"goal":{"metric":"clicks","total":5,"daily":6}}`, "goal.daily", "more than the total"},
		{`{` + flight + `,"goal":{"metric":"clicks","total":5,"x":1}}`, "goal.x", "unknown field"},
		{`{` + flight + `,"pacing":"even"}`, "pacing", "set a goal"},
		{`{` + flight + `,"pacing":"fast"}`, "pacing", "even, asap"},
		{`{` + flight + `,"frequencyCap":{"count":3,"window":"2h"}}`, "frequencyCap.window", "1h, 24h, 7d, flight"},
		{`{` + flight + `,"frequencyCap":{"window":"1h"}}`, "frequencyCap.count", "required"},
		{`{` + flight + `,"price":{"model":"cpx","amount":1}}`, "price.model", "cpm, cpc, cpa, flat"},
		{`{` + flight + `,"price":{"model":"cpm","amount":-1}}`, "price.amount", "decimal"},
		{`{` + flight + `,"price":{"model":"cpm","amount":"1e3"}}`, "price.amount", "decimal"},
		{`{` + flight + `,"conditions":[{"country":["XX"]}]}`, "conditions[0].country[0]", "XX"},
		{`{` + flight + `,"keywords":["ok",""]}`, "keywords[1]", "1 to 64"},
		{`{` + flight + `,"keywords":"sports"}`, "keywords", "array"},
		{`{` + flight + `,"state":"active"}`, "state", "unknown field"},
	})
}

func TestParseAdvertiserAndPlacement(t *testing.T) {
	if in, err := marquee.ParseAdvertiserInput([]byte(`{"name":" Acme "}`)); err != nil || in.Name != "Acme" {
		t.Fatalf("ParseAdvertiserInput = %+v, %v", in, err)
	}
	refuses(t, "ParseAdvertiserInput", marquee.ParseAdvertiserInput, []badInput{
		{`{}`, "name", "required"},
		{`{"name":"` + strings.Repeat("a", 201) + `"}`, "name", "at most 200"},
		{`{"name":"a\u0007b"}`, "name", "control"},
		{`{"name":"a","notes":5}`, "notes", "string"},
	})
	in, err := marquee.ParsePlacementInput([]byte(`{"name":"home-top","sizes":["728x90","300x250","300x250"],"types":["image","html"],"defaultAdId":"3"}`))
	if err != nil || len(in.Sizes) != 2 || in.Sizes[0] != "300x250" || len(in.Types) != 2 || in.DefaultAdID != 3 {
		t.Fatalf("ParsePlacementInput = %+v, %v", in, err)
	}
	if in, _ := marquee.ParsePlacementInput([]byte(`{"name":"p"}`)); len(in.Types) != 4 {
		t.Errorf("default types = %v; want every type", in.Types)
	}
	refuses(t, "ParsePlacementInput", marquee.ParsePlacementInput, []badInput{
		{`{}`, "name", "required"},
		{`{"name":"home top"}`, "name", "a-z, 0-9"},
		{`{"name":"Home"}`, "name", "a-z, 0-9"},
		{`{"name":"p","sizes":["300 x 250"]}`, "sizes[0]", "WIDTHxHEIGHT"},
		{`{"name":"p","sizes":["5000x10"]}`, "sizes[0]", "WIDTHxHEIGHT"},
		{`{"name":"p","types":["audio"]}`, "types[0]", "image, html, native, video"},
		{`{"name":"p","types":[]}`, "types", "non-empty"},
		{`{"name":"p","defaultAdId":"zero"}`, "defaultAdId", "ad's id"},
	})
}

func TestAdCreatives(t *testing.T) {
	const ad = `"title":"A","startAt":"2026-01-01T00:00:00Z","endAt":"2027-01-01T00:00:00Z"`
	asset := "/assets/" + strings.Repeat("ab", 32) + ".png"
	in, err := marquee.ParseAdInput([]byte(`{` + ad + `,"campaignId":7,"placements":["home-top","home-top","side"],
		"creative":{"type":"image","width":300,"height":250,"image":"` + asset + `","clickUrl":"https://x.test/?utm={placement}"}}`))
	if err != nil || in.CampaignID != 7 || len(in.Placements) != 2 || in.Creative.Image != asset || in.Creative.Size() != "300x250" {
		t.Fatalf("ParseAdInput = %+v, %v", in, err)
	}
	// The original contract's answer is untouched by what an ad lacks.
	plain, _ := marquee.ParseAdInput([]byte(`{` + ad + `}`))
	j, _ := plain.Ad(1, "", time.Time{}, time.Time{}).MarshalJSON()
	if strings.Contains(string(j), "campaign") || strings.Contains(string(j), "creative") || strings.Contains(string(j), "placements") {
		t.Errorf("an ad without the new fields renders %s", j)
	}
	refuses(t, "ParseAdInput", marquee.ParseAdInput, []badInput{
		{`{` + ad + `,"campaignId":"x"}`, "campaignId", "campaign's id"},
		{`{` + ad + `,"placements":["Home Top"]}`, "placements[0]", "a-z"},
		{`{` + ad + `,"creative":{"type":"audio"}}`, "creative.type", "image, html, native, video"},
		{`{` + ad + `,"creative":{"type":"image","image":"` + asset + `"}}`, "creative.width", "required"},
		{`{` + ad + `,"creative":{"type":"image","width":300,"height":250,"image":"https://cdn.test/a.png"}}`, "creative.image", "uploaded asset"},
		{`{` + ad + `,"creative":{"type":"image","width":300,"height":250,"image":"` + asset + `","html":"<b>"}}`, "creative.html", "not a field of an image creative"},
		{`{` + ad + `,"creative":{"type":"html","width":300,"height":250,"html":"  "}}`, "creative.html", "empty"},
		{`{` + ad + `,"creative":{"type":"html","width":0,"height":250,"html":"x"}}`, "creative.width", "1 to 4000"},
		{`{` + ad + `,"creative":{"type":"native","body":"b"}}`, "creative.title", "required"},
		{`{` + ad + `,"creative":{"type":"native","title":"t","imageUrl":"javascript:x"}}`, "creative.imageUrl", "http or https"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/avi","durationMs":1000}}`, "creative.mimeType", "video/mp4"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"ftp://v.test/a.mp4","mimeType":"video/mp4","durationMs":1000}}`, "creative.mediaUrl", "http or https"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4"}}`, "creative.durationMs", "required"},
		{`{` + ad + `,"creative":{"type":"html","width":1,"height":1,"html":"x","clickUrl":"javascript:alert(1)"}}`, "creative.clickUrl", "http or https"},
	})
}
