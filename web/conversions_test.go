package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/attribution"
	"marquee/counters"
	"marquee/delivery"
	"marquee/index"
	"marquee/reports"
	"marquee/serve"
	"marquee/store/sqlite"
	"marquee/tracking"
	"marquee/web"
)

// convWorld is a server with one CPA campaign (advertiser 7, CPA 5 EUR,
// the default windows) whose ad's click URL carries {clickId}, its clock
// set by the test, its events in sink.
type convWorld struct {
	h      fasthttp.RequestHandler
	secret string // advertiser 7's conversion secret
	sink   *flakySink
	mu     sync.Mutex
	now    time.Time
	e      *delivery.Engine
}

func (w *convWorld) clock() time.Time { w.mu.Lock(); defer w.mu.Unlock(); return w.now }
func (w *convWorld) set(t time.Time)  { w.mu.Lock(); w.now = t; w.mu.Unlock() }

func newConvWorld(t *testing.T) *convWorld {
	w := &convWorld{sink: &flakySink{}, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	start, end := w.now.Add(-time.Hour), w.now.Add(90*24*time.Hour)
	ps := []marquee.Placement{{ID: 1, PlacementInput: marquee.PlacementInput{Name: "side", Types: marquee.CreativeTypes}}}
	cs := []marquee.Campaign{{ID: 1, State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 7, Name: "c",
		StartAt: start, EndAt: end, Priority: marquee.PriorityStandard, Weight: 1, Price: &marquee.Price{Model: "cpa", Amount: 5_000_000}}}}
	ads := []*marquee.Ad{{ID: 1, CampaignID: 1, StartAt: start, EndAt: end, Title: "a",
		Creative: &marquee.Creative{Type: marquee.CreativeNative, Title: "t", ClickURL: "https://shop.test/land?c={clickId}"}}}
	w.e = delivery.New(counters.NewMemory(counters.DefaultMemory))
	w.e.SetCampaigns(cs, ps)
	w.e.PutAds(ads, nil, true)
	money := counters.NewMemoryMoney(1000)
	w.e.SetBudgets(delivery.NewBudgets(money, time.Hour))
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	signer, _ := tracking.NewSigner([]byte("a tracking key of 32 bytes......"), nil)
	w.e.SetAdvertisers([]marquee.Advertiser{{ID: 7, State: marquee.StateActive, ConversionNonce: "n7"}})
	w.secret = signer.ConversionSecret("n7")
	rp := reports.NewReporter(st, 0)
	rp.Currency = "EUR"
	w.h = web.NewServer(web.Config{}, web.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: w.clock, Index: index.New(w.clock),
		Serve: service(serve.Config{Engine: w.e, Signer: signer, Now: w.clock, Touches: attribution.NewRecorder(money), Conversions: st, Currency: rp.Currency},
			serve.LedgerConfig{Sink: w.sink}),
		Registry: prometheus.NewRegistry(), Store: st, Reports: rp, Auth: nil}).Handler()
	return w
}

// decide asks for an ad for user (may be "") and returns its impression
// and click URLs' paths.
func (w *convWorld) decide(t *testing.T, user string) (imp, click string) {
	t.Helper()
	q := "/api/v1/decisions?placement=side"
	if user != "" {
		q += "&user=" + user
	}
	status, body := send(w.h, "GET", q)
	var got struct {
		Decisions map[string][]struct{ ImpressionURL, ClickURL string }
	}
	if json.Unmarshal(body, &got); status != 200 || len(got.Decisions["side"]) != 1 {
		t.Fatalf("decision = %d %s", status, body)
	}
	path := func(u string) string { return u[strings.Index(u, "/t/"):] }
	return path(got.Decisions["side"][0].ImpressionURL), path(got.Decisions["side"][0].ClickURL)
}

// clickID fires the click URL and returns the click id its landing page
// got.
func (w *convWorld) clickID(t *testing.T, click string) string {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(click)
	ctx.Request.Header.SetUserAgent("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)")
	w.h(&ctx)
	loc, err := url.Parse(string(ctx.Response.Header.Peek("Location")))
	if ctx.Response.StatusCode() != 302 || err != nil || loc.Query().Get("c") == "" {
		t.Fatalf("click = %d to %q; want a redirect with the click id", ctx.Response.StatusCode(), ctx.Response.Header.Peek("Location"))
	}
	return loc.Query().Get("c")
}

// pixel fires the conversion pixel with query q, signed with advertiser
// 7's secret (its server's signature of the click id, order id and value).
func (w *convWorld) pixel(q string) (int, string) {
	v, _ := url.ParseQuery(q)
	return w.unsigned(q + "&sig=" + tracking.SignConversion(w.secret, v.Get("clickId"), v.Get("orderId"), v.Get("value")))
}

// unsigned fires the conversion pixel with query q as it is.
func (w *convWorld) unsigned(q string) (int, string) {
	status, body := send(w.h, "GET", "/conversion?"+q)
	return status, string(body)
}

// conversions are the conversion lines written, as maps.
func (w *convWorld) conversions() []map[string]string {
	w.sink.mu.Lock()
	defer w.sink.mu.Unlock()
	var out []map[string]string
	for _, l := range w.sink.lines {
		var m map[string]string
		if json.Unmarshal([]byte(l), &m) == nil && m["type"] == "conversion" {
			out = append(out, m)
		}
	}
	return out
}

// TestAttributionWindows: a conversion 29 days after its click is the
// click's; one 31 days after is nobody's; the same order id counts once,
// and the pixel converts a click once whatever its orders; a
// changed click id is refused and counts nothing; a conversion of a
// consenting user with no click in its window goes to the user's last
// impression within a day, not after; without consent, only the click id
// attributes.
func TestAttributionWindows(t *testing.T) {
	w := newConvWorld(t)
	day := 24 * time.Hour
	imp, click := w.decide(t, "")
	send(w.h, "GET", imp)
	w.set(w.clock().Add(3 * time.Second)) // a person clicks a while after the impression
	id := w.clickID(t, click)
	t0 := w.clock()

	w.set(t0.Add(29 * day))
	if status, body := w.pixel("clickId=" + id + "&orderId=A1&value=12.5&currency=eur"); status != 204 {
		t.Fatalf("pixel 29 days after the click = %d %s; want 204", status, body)
	}
	conv := w.conversions()
	if len(conv) != 1 || conv[0]["attribution"] != "click" || conv[0]["ad"] != "1" || conv[0]["verified"] != "1" || conv[0]["cost"] != "5000000000" ||
		conv[0]["conversionValue"] != "12500000" || conv[0]["orderId"] != "A1" {
		t.Fatalf("conversion 29 days after the click = %v; want one post-click, verified, costing the CPA 5 (in nano-units), worth 12.5", conv)
	}
	if status, _ := w.pixel("clickId=" + id + "&orderId=A1&value=12.5"); status != 204 || len(w.conversions()) != 1 {
		t.Fatalf("the same order again = %d, %d conversions written; want it counted once", status, len(w.conversions()))
	}
	if status, _ := w.pixel("clickId=" + id + "&orderId=A9&value=500"); status != 204 || len(w.conversions()) != 1 {
		t.Fatalf("another order of the same click from the pixel = %d, %d conversions written; want none more (a pixel converts a click once)", status, len(w.conversions()))
	}
	if status, body := w.pixel("clickId=" + id + "&orderId=A2&currency=USD"); status != 400 || !strings.Contains(body, `"currency"`) || len(w.conversions()) != 1 {
		t.Fatalf("a conversion in USD = %d %s; want 400 naming currency, nothing counted", status, body)
	}
	bad := []byte(id)
	bad[len(bad)/2] ^= 0x01
	if status, body := w.pixel("clickId=" + string(bad) + "&orderId=A3"); status != 400 || !strings.Contains(body, `"clickId"`) || len(w.conversions()) != 1 {
		t.Fatalf("a tampered click id = %d %s; want 400 naming clickId, nothing counted", status, body)
	}

	w.set(t0.Add(31 * day))
	if status, _ := w.pixel("clickId=" + id + "&orderId=A4"); status != 204 {
		t.Fatalf("pixel 31 days after the click = %d; want 204", status)
	}
	if conv := w.conversions(); len(conv) != 2 || conv[1]["attribution"] != "" || conv[1]["ad"] != "" {
		t.Fatalf("conversion 31 days after the click = %v; want it written unattributed (no ad, no attribution)", conv[len(conv)-1])
	}

	// Post-view: a user's impression 23 hours before, no click.
	imp, _ = w.decide(t, "u-42")
	send(w.h, "GET", imp)
	w.set(w.clock().Add(23 * time.Hour))
	if status, _ := w.pixel("userKey=u-42&advertiserId=7&orderId=B1"); status != 204 {
		t.Fatalf("post-view pixel = %d", status)
	}
	conv = w.conversions()
	if last := conv[len(conv)-1]; last["attribution"] != "view" || last["ad"] != "1" || last["verified"] != "" || last["cost"] != "" {
		t.Fatalf("post-view conversion from the pixel = %v; want attributed to the impression, unverified (a pixel cannot vouch for a user key), no cost", last)
	}
	// From the pixel, that impression converts once.
	before := len(w.conversions())
	if w.pixel("userKey=u-42&advertiserId=7&orderId=B9"); len(w.conversions()) != before {
		t.Fatalf("a second order of the same impression from the pixel was written: %v", w.conversions()[before:])
	}
	// A click 31 days old does not stop post-view: the click id fails its
	// window, the user's newer impression is within its own.
	imp, _ = w.decide(t, "u-42")
	send(w.h, "GET", imp)
	if status, _ := w.pixel("clickId=" + id + "&userKey=u-42&orderId=B2"); status != 204 || len(w.conversions()) != before+1 {
		t.Fatalf("post-view with an old click id = %d, %d lines more; want one", status, len(w.conversions())-before)
	}
	if last := w.conversions()[len(w.conversions())-1]; last["attribution"] != "view" {
		t.Fatalf("an old click and a fresh impression = %v; want post-view", last)
	}
	w.set(w.clock().Add(25 * time.Hour)) // 25 hours after the user's last impression
	w.pixel("userKey=u-42&advertiserId=7&orderId=B3")
	if last := w.conversions()[len(w.conversions())-1]; last["attribution"] != "" {
		t.Fatalf("25 hours after the impression = %v; want nothing attributed", last)
	}
	// Without consent (Sec-GPC), the user key is not used.
	imp, _ = w.decide(t, "u-43")
	send(w.h, "GET", imp)
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/conversion?userKey=u-43&advertiserId=7&orderId=C1")
	ctx.Request.Header.Set("Sec-GPC", "1")
	w.h(&ctx)
	if last := w.conversions()[len(w.conversions())-1]; ctx.Response.StatusCode() != 204 || last["attribution"] != "" {
		t.Fatalf("a post-view conversion under Sec-GPC = %d %v; want nothing attributed", ctx.Response.StatusCode(), last)
	}
}
