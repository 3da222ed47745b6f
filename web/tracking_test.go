package web_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/collector"
	"marquee/counters"
	"marquee/delivery"
	"marquee/index"
	"marquee/serve"
	"marquee/tracking"
	"marquee/web"
)

// flakySink is an event sink that refuses the first fail appends as a
// full spool does (503), then keeps every line.
type flakySink struct {
	mu    sync.Mutex
	fail  int
	lines []string
}

func (s *flakySink) Append(_ uint64, lines []byte, _ int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return collector.ErrFull
	}
	for l := range strings.Lines(string(lines)) {
		s.lines = append(s.lines, l)
	}
	return nil
}

func (s *flakySink) AppendID(dst []byte) []byte { return append(dst, "id"...) }

func (s *flakySink) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.lines) }

// trackingServer decides over one campaign of one ad in placement side,
// its events into sink.
func trackingServer(t *testing.T, sink serve.EventSink) fasthttp.RequestHandler {
	now := time.Now()
	ps := []marquee.Placement{{ID: 1, PlacementInput: marquee.PlacementInput{Name: "side", Types: marquee.CreativeTypes}}}
	cs := []marquee.Campaign{{ID: 1, State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 1, Name: "c",
		StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Priority: marquee.Priorities[1], Weight: 1}}}
	ads := []*marquee.Ad{{ID: 1, CampaignID: 1, StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Title: "a",
		Creative: &marquee.Creative{Type: marquee.CreativeNative, Title: "t", ClickURL: "https://a.test/"}}}
	e := delivery.New(counters.NewMemory(counters.DefaultMemory))
	e.SetCampaigns(cs, ps)
	e.PutAds(ads, nil, true)
	signer, _ := tracking.NewSigner([]byte("a tracking key of 32 bytes......"), nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return web.NewServer(web.Config{}, web.Deps{Log: log, Now: time.Now, Index: index.New(time.Now),
		Serve: service(serve.Config{Engine: e, Signer: signer, Now: time.Now}, serve.LedgerConfig{Sink: sink}), Registry: prometheus.NewRegistry()}).Handler()
}

// send sends method path to h and returns the status and body.
func send(h fasthttp.RequestHandler, method, path string) (int, []byte) {
	var ctx fasthttp.RequestCtx
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(path)
	ctx.Request.Header.SetUserAgent("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)")
	h(&ctx)
	return ctx.Response.StatusCode(), append([]byte(nil), ctx.Response.Body()...)
}

// A tracking URL whose event could not be written (a full spool: 503) is
// not marked counted: the retry the 503 asks for records it, once; a
// HEAD records nothing.
func TestTrackingCountedOnceWritten(t *testing.T) {
	sink := &flakySink{fail: 1}
	h := trackingServer(t, sink)
	status, body := send(h, "GET", "/api/v1/decisions?placement=side")
	var got struct {
		Decisions map[string][]struct{ ImpressionURL, ClickURL string }
	}
	if json.Unmarshal(body, &got); status != 200 || len(got.Decisions["side"]) != 1 {
		t.Fatalf("decision = %d %s", status, body)
	}
	path := func(u string) string { return u[strings.Index(u, "/t/"):] }
	imp := path(got.Decisions["side"][0].ImpressionURL)
	if status, _ := send(h, "HEAD", imp); status != 204 || sink.count() != 0 {
		t.Fatalf("HEAD of the impression URL = %d with %d events written; want 204 and none", status, sink.count())
	}
	if status, body := send(h, "GET", imp); status != 503 || sink.count() != 0 {
		t.Fatalf("impression URL on a full spool = %d %s; want 503, nothing written", status, body)
	}
	for range 3 {
		if status, body := send(h, "GET", imp); status != 204 {
			t.Fatalf("the retry = %d %s; want 204", status, body)
		}
	}
	if n := sink.count(); n != 1 || !strings.Contains(sink.lines[0], `"type":"impression"`) {
		t.Fatalf("after the 503 and three retries, %d events: %q; want the impression once", n, sink.lines)
	}
	if status, _ := send(h, "HEAD", path(got.Decisions["side"][0].ClickURL)); status != 302 || sink.count() != 1 {
		t.Fatalf("HEAD of the click URL = %d, %d events; want 302 and no click written", status, sink.count())
	}
}
