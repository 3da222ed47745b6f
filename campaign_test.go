package marquee_test

import (
	"slices"
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
	if err != nil || in.Pacing != "even" || in.Goal.Daily != 10 || in.Price.Amount != 1000_500_000 {
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
		{`{` + flight + `,"pacing":"even"}`, "pacing", "set one"},
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
	if in, _ := marquee.ParsePlacementInput([]byte(`{"name":"p"}`)); len(in.Types) != len(marquee.CreativeTypes)-1 || slices.Contains(in.Types, marquee.CreativeAudio) {
		t.Errorf("default types = %v; want every type but audio (a placement of an audio player names it)", in.Types)
	}
	if in, err := marquee.ParsePlacementInput([]byte(`{"name":"p","types":["audio"]}`)); err != nil || !slices.Equal(in.Types, []string{"audio"}) {
		t.Errorf("an audio placement = %v, %v", in.Types, err)
	}
	for _, c := range []struct {
		offset  string
		d, want time.Duration
	}{{"start", 0, 0}, {"end", 0, -1}, {"end", time.Hour, time.Hour}, {"50%", 0, -1}, {"25%", 20 * time.Minute, 5 * time.Minute},
		{"00:10:00", 0, 10 * time.Minute}, {"01:02:03.456", time.Minute, time.Hour + 2*time.Minute + 3456*time.Millisecond}} {
		if got := (marquee.AdBreak{Offset: c.offset, Ads: 1}).At(c.d); got != c.want {
			t.Errorf("AdBreak{%q}.At(%v) = %v; want %v", c.offset, c.d, got, c.want)
		}
	}
	if in, err := marquee.ParsePlacementInput([]byte(`{"name":"p","floor":1.5}`)); err != nil || in.Floor != 1_500_000 {
		t.Errorf("a floor of 1.5 = %v, %v; want 1.500000", in.Floor, err)
	}
	if in, err := marquee.ParsePlacementInput([]byte(`{"name":"p","expectedDailyRequests":250000}`)); err != nil || in.ExpectedDailyRequests != 250_000 {
		t.Errorf("expectedDailyRequests 250000 = %v, %v", in.ExpectedDailyRequests, err)
	}
	refuses(t, "ParsePlacementInput", marquee.ParsePlacementInput, []badInput{
		{`{}`, "name", "required"},
		{`{"name":"home top"}`, "name", "a-z, 0-9"},
		{`{"name":"Home"}`, "name", "a-z, 0-9"},
		{`{"name":"p","sizes":["300 x 250"]}`, "sizes[0]", "WIDTHxHEIGHT"},
		{`{"name":"p","sizes":["5000x10"]}`, "sizes[0]", "WIDTHxHEIGHT"},
		{`{"name":"p","types":["podcast"]}`, "types[0]", "image, html, native, video, tag, audio"},
		{`{"name":"p","types":[]}`, "types", "non-empty"},
		{`{"name":"p","adBreaks":"start"}`, "adBreaks", "a list"},
		{`{"name":"p","adBreaks":[{"offset":"00:70:00","ads":1}]}`, "adBreaks[0].offset", "a time into the content"},
		{`{"name":"p","adBreaks":[{"offset":"100%","ads":1}]}`, "adBreaks[0].offset", "a share"},
		{`{"name":"p","adBreaks":[{"offset":"end","ads":11}]}`, "adBreaks[0].ads", "1 to 10"},
		{`{"name":"p","adBreaks":[{"offset":"end","ads":2,"maxDurationMs":-1}]}`, "adBreaks[0].maxDurationMs", "0 (no limit)"},
		{`{"name":"p","maxDurationMs":3600001}`, "maxDurationMs", "0 (any) to 3600000"},
		{`{"name":"p","maxDurationMs":"30s"}`, "maxDurationMs", "in milliseconds"},
		{`{"name":"p","adBreaks":[{"offset":"end","ads":1},{"offset":"end","ads":2}]}`, "adBreaks[1].offset", "another break's"},
		{`{"name":"p","defaultAdId":"zero"}`, "defaultAdId", "ad's id"},
		{`{"name":"p","floor":-1}`, "floor", "must be a CPM"},
		{`{"name":"p","floor":"1.2345678"}`, "floor", "at most 6 decimals"},
		{`{"name":"p","expectedDailyRequests":-1}`, "expectedDailyRequests", "from 0"},
		{`{"name":"p","expectedDailyRequests":1.5}`, "expectedDailyRequests", "integer"},
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
		{`{` + ad + `,"creative":{"type":"radio"}}`, "creative.type", "image, html, native, video, tag, audio"},
		{`{` + ad + `,"creative":{"type":"audio","mediaUrl":"https://a.test/a.mp3","mimeType":"video/mp4","durationMs":30000}}`, "creative.mimeType", "audio/mpeg"},
		{`{` + ad + `,"creative":{"type":"audio","mediaUrl":"https://a.test/a.mp3","mimeType":"audio/mpeg","durationMs":30000,"width":300}}`, "creative.width", ""},
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
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"skipOffsetMs":15000}}`, "creative.skipOffsetMs", "less than durationMs"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"skipOffsetMs":-1}}`, "creative.skipOffsetMs", "from 0"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"universalAdId":"ABCD"}}`, "creative.universalAdId", "an object"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"universalAdId":{"registry":"ad-id.org"}}}`, "creative.universalAdId.value", "required"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"universalAdId":{"registry":" ","value":"x"}}}`, "creative.universalAdId.registry", "required"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"universalAdId":{"registry":"ad-id.org","value":"AB\u0001CD"}}}`, "creative.universalAdId.value", "without control characters"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"verifications":{}}}`, "creative.verifications", "a list"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"verifications":[{"url":"https://v.test/omid.js"}]}}`, "creative.verifications[0].vendor", "required"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"verifications":[{"vendor":"v","url":"javascript:x"}]}}`, "creative.verifications[0].url", "http or https"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"verifications":[{"vendor":"v","url":"https://v.test/a.js","parameters":"a\u0001b"}]}}`, "creative.verifications[0].parameters", "control"},
		{`{` + ad + `,"creative":{"type":"video","mediaUrl":"https://v.test/a.mp4","mimeType":"video/mp4","durationMs":15000,"verifications":[{"vendor":"v","url":"https://v.test/a.js","notExecutedUrl":"ftp://x/[REASON]"}]}}`, "creative.verifications[0].notExecutedUrl", "http or https"},
		{`{` + ad + `,"creative":{"type":"html","width":1,"height":1,"html":"x","clickUrl":"javascript:alert(1)"}}`, "creative.clickUrl", "http or https"},
	})
}

// TestParseTargeting: a campaign's targeting tree round-trips as given
// (keys and values normalised), and every bad node is named by its path.
func TestParseTargeting(t *testing.T) {
	in, err := marquee.ParseCampaignInput([]byte(`{` + flight + `,"timeZone":"America/New_York","targeting":{"all":[
		{"key":"Section","in":["Sports"," News "]},
		{"any":[{"key":"$device","in":["phone","TABLET"]},{"not":{"key":"pos","exists":true}}]},
		{"key":"score","gte":2,"lte":5},
		{"key":"$path","glob":["/sports/*"]},
		{"key":"$ip","notIn":["10.1.2.3/8","2001:db8::1"]},
		{"key":"$region","in":["us-ca"]},
		{"dayPart":{"days":["Mon","friday"],"from":"08:00","to":"20:00"}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	all := in.Targeting.All
	if len(all) != 7 || all[0].Key != "section" || strings.Join(all[0].In, ",") != "sports,news" ||
		strings.Join(all[1].Any[0].In, ",") != "phone,tablet" || !all[1].Any[1].Not.Exists ||
		*all[2].Gte != 2 || *all[2].Lte != 5 || strings.Join(all[4].NotIn, ",") != "10.0.0.0/8,2001:db8::1/128" ||
		all[5].In[0] != "US-CA" || strings.Join(all[6].DayPart.Days, ",") != "mon,fri" || in.TimeZone != "America/New_York" {
		t.Errorf("targeting = %+v; want keys and values normalised", in.Targeting)
	}
	deep := `{"all":[{"all":[{"all":[{"all":[{"key":"a","exists":true}]}]}]}]}`
	many := `{"key":"a","in":[` + strings.TrimSuffix(strings.Repeat(`"v",`, 101), ",") + `]}`
	refuses(t, "ParseCampaignInput", marquee.ParseCampaignInput, []badInput{
		{`{` + flight + `,"targeting":{"key":"section","is":["a"]}}`, "targeting.is", "unknown field"},
		{`{` + flight + `,"targeting":{"key":"section"}}`, "targeting", "needs an operator"},
		{`{` + flight + `,"targeting":{"key":"section","in":["a"],"notIn":["b"]}}`, "targeting", "one operator"},
		{`{` + flight + `,"targeting":{"key":"Sec tion","in":["a"]}}`, "targeting.key", "a-z, 0-9"},
		{`{` + flight + `,"targeting":{"key":"$planet","in":["mars"]}}`, "targeting.key", "unknown reserved key"},
		{`{` + flight + `,"targeting":` + deep + `}`, "targeting.all[0].all[0].all[0].all[0]", "too deep"},
		{`{` + flight + `,"targeting":` + many + `}`, "targeting.in", "at most 100"},
		{`{` + flight + `,"targeting":{"all":[]}}`, "targeting.all", "non-empty array"},
		{`{` + flight + `,"targeting":{"all":[{"key":"a","exists":true}],"any":[{"key":"a","exists":true}]}}`, "targeting", "has 2 of them"},
		{`{` + flight + `,"targeting":{"any":[{"key":"a","in":"x"}]}}`, "targeting.any[0].in", "array of strings"},
		{`{` + flight + `,"targeting":{"key":"$ip","in":["10.0.0.0/33"]}}`, "targeting.in[0]", "CIDR"},
		{`{` + flight + `,"targeting":{"key":"$device","in":["watch"]}}`, "targeting.in[0]", "desktop, phone, tablet, tv, bot"},
		{`{` + flight + `,"targeting":{"key":"$device","gte":1}}`, "targeting.gte", "not an operator of $device"},
		{`{` + flight + `,"targeting":{"key":"section","prefix":["/a"]}}`, "targeting.prefix", "not an operator of section"},
		{`{` + flight + `,"targeting":{"key":"score","gte":5,"lte":1}}`, "targeting.lte", "less than gte"},
		{`{` + flight + `,"targeting":{"key":"$path","in":["sports"]}}`, "targeting.in[0]", "starting with"},
		{`{` + flight + `,"targeting":{"key":"$region","in":["California"]}}`, "targeting.in[0]", "ISO 3166-2"},
		{`{` + flight + `,"targeting":{"key":"a","exists":false}}`, "targeting.exists", "must be true"},
		{`{` + flight + `,"targeting":{"dayPart":{"from":"8:00","to":"20:00"}}}`, "targeting.dayPart.from", "HH:MM"},
		{`{` + flight + `,"targeting":{"dayPart":{"from":"08:00","to":"24:30"}}}`, "targeting.dayPart.to", "HH:MM"},
		{`{` + flight + `,"targeting":{"dayPart":{"days":["someday"],"from":"08:00","to":"09:00"}}}`, "targeting.dayPart.days[0]", "sun, mon"},
		{`{` + flight + `,"targeting":{"dayPart":{"from":"08:00","to":"08:00"}}}`, "targeting.dayPart.to", "must differ"},
		{`{` + flight + `,"timeZone":"Mars/Olympus"}`, "timeZone", "unknown IANA time zone"},
	})
}
