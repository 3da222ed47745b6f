package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
	"marquee/index"
	"marquee/reports"
	"marquee/serve"
	"marquee/store/sqlite"
	"marquee/tracking"
	"marquee/web"
)

// forecastWorld is a server whose decisions count and sample their
// requests, flushed to the store by a tally each hour of its clock.
type forecastWorld struct {
	h     fasthttp.RequestHandler
	e     *delivery.Engine
	tally *reports.Tally
	mu    sync.Mutex
	now   time.Time
	ps    []marquee.Placement
	cs    []marquee.Campaign
	ads   []*marquee.Ad
}

func (w *forecastWorld) clock() time.Time { w.mu.Lock(); defer w.mu.Unlock(); return w.now }
func (w *forecastWorld) set(t time.Time)  { w.mu.Lock(); w.now = t; w.mu.Unlock() }

// book adds an active campaign of priority on platform ("": any) with an
// ad for placement home.
func (w *forecastWorld) book(name, priority, platform string, start, end time.Time, goal int64) int64 {
	id := int64(len(w.cs) + 1)
	in := marquee.CampaignInput{AdvertiserID: 1, Name: name, Priority: priority, Weight: 1, StartAt: start, EndAt: end, Pacing: marquee.PacingASAP}
	if platform != "" {
		in.Conditions = []marquee.Condition{{Platform: []string{platform}}}
	}
	if goal > 0 {
		in.Goal, in.Pacing = &marquee.Goal{Metric: "impressions", Total: goal}, marquee.PacingEven
	}
	w.cs = append(w.cs, marquee.Campaign{ID: id, State: marquee.StateActive, CampaignInput: in})
	w.ads = append(w.ads, &marquee.Ad{ID: id, CampaignID: id, Title: name, StartAt: start, EndAt: end,
		Creative: &marquee.Creative{Type: marquee.CreativeHTML, HTML: "x", Width: 300, Height: 250}})
	w.e.SetCampaigns(w.cs, w.ps)
	w.e.PutAds(w.ads, nil, true)
	return id
}

type storeResolver struct{ st *sqlite.Store }

func (storeResolver) AdExists(context.Context, int64) (bool, error) { return true, nil }
func (storeResolver) Link(context.Context, string) (marquee.Link, bool, error) {
	return marquee.Link{}, false, nil
}
func (storeResolver) CampaignAdvertiser(context.Context, int64) (int64, bool, error) {
	return 1, true, nil
}
func (storeResolver) PlacementID(context.Context, string) (int64, bool, error) { return 1, true, nil }

func newForecastWorld(t *testing.T) *forecastWorld {
	w := &forecastWorld{now: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}
	w.ps = []marquee.Placement{{ID: 1, PlacementInput: marquee.PlacementInput{Name: "home", Sizes: []string{"300x250"}, Types: marquee.CreativeTypes}}}
	w.e = delivery.New(counters.NewMemory(counters.DefaultMemory))
	w.e.SetCampaigns(nil, w.ps)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	signer, _ := tracking.NewSigner([]byte("a tracking key of 32 bytes......"), nil)
	reqs, samples := reports.NewRequests(), reports.NewSamples(20)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w.tally = reports.New(reports.Config{Store: st, Resolver: storeResolver{st}, Slot: "a", Log: quiet, Requests: reqs, Samples: samples}, nil)
	if err := w.tally.Recover(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	w.h = web.NewServer(web.Config{InsecureAdmin: true}, web.Deps{Log: quiet, Now: w.clock, Index: index.New(w.clock),
		Serve:    service(serve.Config{Engine: w.e, Signer: signer, Now: w.clock}, serve.LedgerConfig{Sink: &flakySink{}, Requests: reqs, Samples: samples}),
		Registry: prometheus.NewRegistry(), Store: st, Reports: reports.NewReporter(st, 0)}).Handler()
	return w
}

// traffic sends n decisions an hour for hours from the clock, half from
// iOS and half from the web, all from Taiwan, flushing each hour; it
// returns what each campaign (by id) won.
func (w *forecastWorld) traffic(t *testing.T, hours, n int) map[string]int {
	t.Helper()
	won := map[string]int{}
	for range hours {
		hour := w.clock()
		for i := range n {
			w.set(hour.Add(time.Duration(i) * time.Hour / time.Duration(n)))
			platform := []string{"ios", "web"}[i%2]
			status, body := send(w.h, "GET", "/api/v1/decisions?placement=home&country=TW&platform="+platform)
			var got struct {
				Decisions map[string][]struct{ CampaignID string }
			}
			if json.Unmarshal(body, &got); status != 200 {
				t.Fatalf("decision = %d %s", status, body)
			}
			for _, d := range got.Decisions["home"] {
				won[d.CampaignID]++
			}
		}
		w.set(hour.Add(time.Hour))
		if err := w.tally.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return won
}

func post(h fasthttp.RequestHandler, path, body string) (int, []byte) {
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod("POST")
	ctx.Request.SetRequestURI(path)
	ctx.Request.Header.SetContentType("application/json")
	ctx.Request.Header.SetUserAgent("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)") // a person's browser (package ivt)
	ctx.Request.SetBodyString(body)
	h(&ctx)
	return ctx.Response.StatusCode(), append([]byte(nil), ctx.Response.Body()...)
}

type forecastOut struct {
	Matching, Available, Delivery, Unsold struct{ Mean, Low, High float64 }
	Fits, Reason                          string
	Contending                            []struct {
		ID            string
		Name          string
		Shared, Takes float64
	}
	Tiers []struct {
		Priority string
		Takes    float64
	}
}

// TestForecastOverHTTP: a week of known traffic through the server
// (counted, sampled, flushed), then forecasts of the next two days: a
// standard campaign on iOS, where a sponsorship campaign takes every
// request, has none available and says why; one on the web, beside a
// booked standard campaign of the same weight, has half its requests —
// and once booked, the engine delivers it that within 10%; a targeting
// nothing matches forecasts 0 with a reason; a flight over is refused
// (400 naming campaign.endAt); the delivery risk flags the campaign whose
// goal the requests cannot meet.
func TestForecastOverHTTP(t *testing.T) {
	// perHour is the decisions an hour, half of them on the web. The
	// web campaign's share is a fair lottery: over 48·perHour/2 web
	// requests it wins a binomial count of standard deviation
	// √(12·perHour/2); at 100 an hour the 10% bound below is 4.9 of
	// those (with the forecast's own sampling error, about 4.5), where
	// 40 an hour made it 2.8 and failed about once in a hundred runs.
	const perHour = 100
	w := newForecastWorld(t)
	start := w.clock()
	end := start.Add(60 * 24 * time.Hour)
	w.book("sponsor", marquee.PrioritySponsorship, "ios", start, end, 0)
	w.book("standard", marquee.PriorityStandard, "", start, end, 0)
	w.traffic(t, 7*24, perHour)

	from := w.clock()
	flight := fmt.Sprintf(`"startAt":%q,"endAt":%q`, marquee.FormatTime(from), marquee.FormatTime(from.Add(48*time.Hour)))
	ask := func(campaign string) forecastOut {
		t.Helper()
		status, body := post(w.h, "/api/v1/forecasts", `{"campaign":{`+flight+`,`+campaign+`}}`)
		var out forecastOut
		if err := json.Unmarshal(body, &out); status != 200 || err != nil {
			t.Fatalf("forecast of %s = %d %s", campaign, status, body)
		}
		return out
	}
	matching := 48 * perHour / 2.0 // the requests of one platform over two days
	ios := ask(`"priority":"standard","conditions":[{"platform":["ios"]}]`)
	if math.Abs(ios.Matching.Mean-matching) > 0.1*matching || ios.Available.Mean != 0 || ios.Fits != "none" || !strings.Contains(ios.Reason, "sponsorship") {
		t.Errorf("iOS under a sponsorship: %+v; want %.0f matching, none available, a reason naming sponsorship", ios, matching)
	}
	if len(ios.Contending) == 0 || ios.Contending[0].Name != "sponsor" {
		t.Errorf("iOS contending %+v; want the sponsorship campaign first", ios.Contending)
	}
	web := ask(`"priority":"standard","conditions":[{"platform":["web"]}]`)
	if math.Abs(web.Available.Mean-matching/2) > 0.1*matching/2 || web.Fits != "guaranteed" {
		t.Errorf("web beside a standard campaign: %+v; want about %.0f available (half), guaranteed", web, matching/2)
	}
	if none := ask(`"conditions":[{"country":["JP"]}]`); none.Matching.Mean != 0 || none.Available.Mean != 0 || !strings.Contains(none.Reason, "matches its targeting") {
		t.Errorf("JP only: %+v; want 0 and a reason", none)
	}
	past := fmt.Sprintf(`{"campaign":{"startAt":%q,"endAt":%q}}`, marquee.FormatTime(from.Add(-72*time.Hour)), marquee.FormatTime(from.Add(-time.Hour)))
	if status, body := post(w.h, "/api/v1/forecasts", past); status != 400 || !strings.Contains(string(body), "campaign.endAt") {
		t.Errorf("a flight over = %d %s; want 400 naming campaign.endAt", status, body)
	}

	// Booked, the web campaign wins what the forecast said.
	id := w.book("web", marquee.PriorityStandard, "web", from, from.Add(48*time.Hour), 0)
	won := w.traffic(t, 48, perHour)
	if got := float64(won[fmt.Sprint(id)]); math.Abs(got-web.Available.Mean) > 0.1*got {
		t.Errorf("the engine delivered the web campaign %.0f; the forecast said %.0f (want within 10%%)", got, web.Available.Mean)
	}

	// A campaign whose goal is twice the requests it matches is at risk;
	// one with a small goal is not.
	from = w.clock()
	big := w.book("too big", marquee.PriorityStandard, "web", from, from.Add(48*time.Hour), int64(2*matching))
	small := w.book("small", marquee.PriorityStandard, "web", from, from.Add(48*time.Hour), 10)
	status, body := send(w.h, "GET", "/api/v1/forecasts/risk")
	var risk struct {
		Campaigns []struct {
			ID     string
			AtRisk bool
		}
	}
	if json.Unmarshal(body, &risk); status != 200 {
		t.Fatalf("risk = %d %s", status, body)
	}
	flagged := map[string]bool{}
	for _, c := range risk.Campaigns {
		flagged[c.ID] = c.AtRisk
	}
	if at, ok := flagged[fmt.Sprint(big)]; !ok || !at {
		t.Errorf("risk %s: campaign %d (goal twice its requests) not flagged", body, big)
	}
	if at, ok := flagged[fmt.Sprint(small)]; !ok || at {
		t.Errorf("risk %s: campaign %d (goal of 10) flagged or missing", body, small)
	}
}

// TestForecastBeforeHistory: on a fresh store, a placement that declares
// 2,400 requests a day forecasts a two-day flight at about 4,800 with low
// confidence and the reason; a placement declaring nothing answers that
// nothing is known ("unknown", never "none" beside no contender); the
// delivery risk never flags a campaign whose placements nothing is known
// of, flags one whose goal is twice the declared volume, and says what
// set each target. After a day of real requests (a tenth of the
// declared), the forecast moves toward them.
func TestForecastBeforeHistory(t *testing.T) {
	w := newForecastWorld(t)
	w.ps[0].ExpectedDailyRequests = 2400
	w.ps = append(w.ps, marquee.Placement{ID: 2, PlacementInput: marquee.PlacementInput{Name: "side", Sizes: []string{"300x250"}, Types: marquee.CreativeTypes}})
	w.e.SetCampaigns(w.cs, w.ps)
	from := w.clock()
	flight := fmt.Sprintf(`"startAt":%q,"endAt":%q`, marquee.FormatTime(from), marquee.FormatTime(from.Add(48*time.Hour)))
	ask := func(body string) (forecastOut, map[string]any) {
		t.Helper()
		status, b := post(w.h, "/api/v1/forecasts", body)
		var out forecastOut
		var raw map[string]any
		if json.Unmarshal(b, &out) != nil || json.Unmarshal(b, &raw) != nil || status != 200 {
			t.Fatalf("forecast %s = %d %s", body, status, b)
		}
		return out, raw
	}
	home, raw := ask(`{"campaign":{` + flight + `,"conditions":[{"platform":["ios"]}]},"placements":["home"]}`)
	if math.Abs(home.Matching.Mean-4800) > 100 || home.Fits != "guaranteed" || raw["confidence"] != "low" ||
		!strings.Contains(fmt.Sprint(raw["confidenceReason"]), "declared 2400 requests a day") || !strings.Contains(fmt.Sprint(raw["confidenceReason"]), "upper bound") {
		t.Errorf("home, declared 2,400 a day, before any request: %+v %v; want about 4,800 matching (an upper bound for a targeted campaign), guaranteed, low confidence saying why", home, raw)
	}
	if home.Matching.Low > 0.6*home.Matching.Mean || home.Matching.High < 1.4*home.Matching.Mean {
		t.Errorf("declared volume's range %+v; want ±50%%", home.Matching)
	}
	side, raw := ask(`{"campaign":{` + flight + `},"placements":["side"]}`)
	if side.Fits != "unknown" || raw["confidence"] != "low" || !strings.Contains(side.Reason, "expectedDailyRequests") {
		t.Errorf("side, nothing known: %+v %v; want fits unknown, low confidence, a reason naming expectedDailyRequests", side, raw)
	}

	big := w.book("too big", marquee.PriorityStandard, "", from, from.Add(24*time.Hour), 4800)
	small := w.book("small", marquee.PriorityStandard, "", from, from.Add(24*time.Hour), 100)
	blind := w.book("blind", marquee.PriorityStandard, "", from, from.Add(24*time.Hour), 100)
	w.ads[blind-1].Placements = []string{"side"}
	for _, id := range []int64{big, small} {
		w.ads[id-1].Placements = []string{"home"}
	}
	w.e.PutAds(w.ads, nil, true)
	status, body := send(w.h, "GET", "/api/v1/forecasts/risk")
	var risk struct {
		Campaigns []struct {
			ID                                       string
			AtRisk, Unknown                          bool
			TargetFrom, Confidence, ConfidenceReason string
		}
	}
	if json.Unmarshal(body, &risk); status != 200 || len(risk.Campaigns) != 3 {
		t.Fatalf("risk = %d %s; want three campaigns", status, body)
	}
	for _, c := range risk.Campaigns {
		want := c.ID == fmt.Sprint(big)
		if c.Unknown != (c.ID == fmt.Sprint(blind)) {
			t.Errorf("risk of %s: %+v; want unknown only for the campaign in side (nothing known)", c.ID, c)
		}
		if c.AtRisk != want || c.TargetFrom != "goal" || c.Confidence != "low" || c.ConfidenceReason == "" {
			t.Errorf("risk of %s: %+v; want at risk %v, target from its goal, low confidence with a reason", c.ID, c, want)
		}
	}

	// A day of real requests, 10 an hour (a tenth of the declared 100):
	// a day of three weeks weighs 1/21.
	w.traffic(t, 24, 10)
	w.set(w.clock().Add(2 * time.Minute)) // past the inventory's minute
	from = w.clock()
	flight = fmt.Sprintf(`"startAt":%q,"endAt":%q`, marquee.FormatTime(from), marquee.FormatTime(from.Add(48*time.Hour)))
	after, raw := ask(`{"campaign":{` + flight + `},"placements":["home"]}`)
	want := 48 * (10.0/21 + 100*20.0/21)
	if math.Abs(after.Matching.Mean-want) > 0.05*want || raw["confidence"] != "low" || !strings.Contains(fmt.Sprint(raw["confidenceReason"]), "24 hours of requests recorded") {
		t.Errorf("after a day: %+v %v; want about %.0f, low confidence naming the 24 hours", after.Matching, raw, want)
	}
}
