package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"marquee"
	"marquee/store/sqlite"
	"marquee/webhooks"
)

var key = []byte("a server key of at least 16 bytes")

func openStore(t *testing.T) *sqlite.Store {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// dispatcher returns a started Dispatcher over st with fast timings.
func dispatcher(t *testing.T, st *sqlite.Store, cfg webhooks.Config) *webhooks.Dispatcher {
	cfg.Key = key
	if cfg.BatchWait == 0 {
		cfg.BatchWait = 20 * time.Millisecond
	}
	if cfg.FirstRetry == 0 {
		cfg.FirstRetry = 5 * time.Millisecond
	}
	d, err := webhooks.New(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

func create(t *testing.T, st *sqlite.Store, d *webhooks.Dispatcher, in marquee.WebhookInput) (marquee.Webhook, string) {
	nonce := webhooks.NewNonce()
	w, err := st.CreateWebhook(context.Background(), in, nonce)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	return w, webhooks.Secret(key, nonce)
}

var lines atomic.Int64

// line is an event line of type typ the server vouches for ("verified"),
// with the fields extra (",\"k\":\"v\""), its id e<n>.
func line(typ, extra string) string { return rawLine(typ, `,"verified":"1"`+extra) }

// rawLine is line without "verified": a beacon's event.
func rawLine(typ, extra string) string {
	return fmt.Sprintf(`{"receivedAt":"2026-11-26T10:00:00.000000000Z","id":"e%d","ip":"1.2.3.4","ua":"x","type":"%s"%s}`+"\n", lines.Add(1), typ, extra)
}

// received is what a receiver got: bodies in order, each checked.
type received struct {
	mu     sync.Mutex
	bodies []string
	errs   []string
}

func (r *received) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, b := range r.bodies {
		var p struct {
			Type string
			Data struct {
				Events []struct{ ID string }
			}
		}
		json.Unmarshal([]byte(b), &p)
		for _, e := range p.Data.Events {
			out = append(out, e.ID)
		}
	}
	return out
}

// A delivery carries the events the webhook asked for (its types, its
// link), signed: the receiver checks it with the Standard Webhooks
// library's Verify, the specification's reference procedure.
func TestDeliverySignedAndFiltered(t *testing.T) {
	st := openStore(t)
	d := dispatcher(t, st, webhooks.Config{AllowPrivate: true})
	var got received
	var secret atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		wh, err := standardwebhooks.NewWebhook(secret.Load().(string))
		if err == nil {
			err = wh.Verify(body, r.Header)
		}
		got.mu.Lock()
		if err != nil {
			got.errs = append(got.errs, err.Error())
		}
		got.bodies = append(got.bodies, string(body))
		got.mu.Unlock()
	}))
	defer srv.Close()
	_, s := create(t, st, d, marquee.WebhookInput{URL: srv.URL + "/hook", Events: []string{"click", "conversion"}, Link: "promo"})
	secret.Store(s)
	first := lines.Load() + 1
	d.Written("f", 0, []byte(line("click", `,"code":"promo"`)+line("click", `,"code":"other"`)+line("impression", `,"code":"promo"`)+
		line("conversion", `,"code":"promo","n":"2"`)+"not json\n"))
	deadline := time.Now().Add(10 * time.Second)
	for len(got.events()) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // nothing else may come
	if ev, want := strings.Join(got.events(), " "), fmt.Sprintf("e%d e%d", first, first+3); ev != want {
		t.Fatalf("delivered %q; want %q: the click and the conversion of promo", ev, want)
	}
	got.mu.Lock()
	defer got.mu.Unlock()
	if len(got.errs) > 0 {
		t.Fatalf("the receiver's signature check failed: %v", got.errs)
	}
	if !strings.Contains(got.bodies[0], `"type":"marquee.events"`) || !strings.Contains(got.bodies[0], `"code":"promo"`) || strings.Contains(strings.Join(got.bodies, ""), `"other"`) {
		t.Fatalf("bodies %q; want marquee.events of promo only", got.bodies)
	}
	// A secret of another webhook does not verify.
	wh, _ := standardwebhooks.NewWebhook(webhooks.Secret(key, "another nonce"))
	h := http.Header{}
	h.Set("webhook-id", "msg_x")
	h.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()))
	sig, _ := wh.Sign("msg_x", time.Now(), []byte(got.bodies[0]))
	h.Set("webhook-signature", sig)
	right, _ := standardwebhooks.NewWebhook(s)
	if right.Verify([]byte(got.bodies[0]), h) == nil {
		t.Fatal("a body signed with another webhook's secret verified")
	}
}

// A receiver that fails the first attempts gets the batch again, the
// same message, until it takes it; every attempt is in the delivery log.
func TestRetriedUntilTaken(t *testing.T) {
	st := openStore(t)
	d := dispatcher(t, st, webhooks.Config{AllowPrivate: true})
	var calls atomic.Int32
	var ids sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids.Store(r.Header.Get("webhook-id"), true)
		if calls.Add(1) <= 2 {
			w.WriteHeader(503)
		}
	}))
	defer srv.Close()
	wh, _ := create(t, st, d, marquee.WebhookInput{URL: srv.URL, Events: []string{"click"}})
	d.Written("f", 0, []byte(line("click", `,"code":"a"`)))
	var log []marquee.WebhookDelivery
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		log, _ = st.WebhookDeliveries(context.Background(), wh.ID, 10)
		if len(log) >= 3 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(log) != 3 || log[0].Status != 200 || log[0].Attempt != 3 || log[1].Status != 503 || log[2].Attempt != 1 || log[2].Error != "status 503" {
		t.Fatalf("delivery log %+v; want two 503s then a 200", log)
	}
	n := 0
	ids.Range(func(any, any) bool { n++; return true })
	if n != 1 || log[0].MessageID != log[2].MessageID {
		t.Fatalf("%d message ids over the attempts; want one (a retry is the same message)", n)
	}
}

// A receiver that never succeeds has its webhook disabled after
// RetryFor, with the reason; its owner sees it in the store.
func TestDisabledAfterRepeatedFailure(t *testing.T) {
	st := openStore(t)
	d := dispatcher(t, st, webhooks.Config{AllowPrivate: true, RetryFor: 100 * time.Millisecond})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer srv.Close()
	wh, _ := create(t, st, d, marquee.WebhookInput{URL: srv.URL, Events: []string{"impression"}})
	d.Written("f", 0, []byte(line("impression", "")))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if w, _ := st.Webhook(context.Background(), wh.ID); w.State == marquee.WebhookDisabled {
			if !strings.Contains(w.DisabledReason, "status 500") {
				t.Fatalf("disabled for %q; want the last failure named", w.DisabledReason)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the webhook was not disabled after its receiver failed for RetryFor")
}

// A slow receiver holds only its own deliveries: the collector's calls
// return while it hangs, and its queue stays bounded.
func TestSlowReceiverHoldsNothingElse(t *testing.T) {
	st := openStore(t)
	d := dispatcher(t, st, webhooks.Config{AllowPrivate: true, QueueEvents: 50, BatchEvents: 10, Timeout: 30 * time.Second})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	create(t, st, d, marquee.WebhookInput{URL: srv.URL, Events: []string{"click"}})
	// While the receiver hangs on the first batch, 1,000 more events are
	// written: every call returns (the test would hang otherwise).
	for i := range 1000 {
		d.Written("f", 0, []byte(line("click", fmt.Sprintf(`,"n":"%d"`, i))))
	}
}

// Deliveries may not reach loopback, private or link-local addresses
// (the cloud metadata address among them) unless allowed.
func TestServerSideRequestForgeryRefused(t *testing.T) {
	st := openStore(t)
	d := dispatcher(t, st, webhooks.Config{Timeout: 2 * time.Second})
	var hit atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit.Store(true) }))
	defer srv.Close()
	for _, u := range []string{srv.URL, "http://169.254.169.254/latest/meta-data/", "http://localhost:" + strings.Split(srv.URL, ":")[2], "http://[::1]:1/"} {
		w, _ := create(t, st, d, marquee.WebhookInput{URL: u, Events: []string{"click"}})
		del, err := d.Test(context.Background(), w.ID)
		if err != nil || del.Status != 0 || !strings.Contains(del.Error, "server-side request forgery") {
			t.Errorf("Test(%s) = %+v, %v; want refused before connecting", u, del, err)
		}
	}
	if hit.Load() {
		t.Fatal("the loopback receiver was called")
	}
	for _, c := range []struct {
		addr      string
		forbidden bool
	}{{"127.0.0.1", true}, {"10.1.2.3", true}, {"172.16.0.1", true}, {"192.168.1.1", true}, {"169.254.169.254", true},
		{"100.64.0.1", true}, {"0.0.0.0", true}, {"::1", true}, {"fe80::1", true}, {"fc00::1", true}, {"::ffff:127.0.0.1", true},
		{"224.0.0.1", true}, {"93.184.216.34", false}, {"2606:2800:220:1::", false},
		// IPv6 that carries a forbidden IPv4 address to a gateway.
		{"64:ff9b::7f00:1", true}, {"64:ff9b::a9fe:a9fe", true}, {"64:ff9b::5db8:d822", false}, {"64:ff9b:1::1", true},
		{"2002:7f00:1::", true}, {"2002:a00:1::1", true}, {"2002:5db8:d822::1", false},
		{"::7f00:1", true}, {"::a9fe:a9fe", true}, {"::ffff:0:7f00:1", true}, {"fec0::1", true},
		{"2001:0:5db8:d822::80ff:fffe", true}, {"2001:0:5db8:d822::a247:2bdd", false}} {
		if got := webhooks.Forbidden(netip.MustParseAddr(c.addr)); got != c.forbidden {
			t.Errorf("Forbidden(%s) = %v; want %v", c.addr, got, c.forbidden)
		}
	}
}

// A webhook gets only the events the server vouches for — a decision's
// verified events, a redirect's clicks — unless it asks for the others
// ("unverified"): an anonymous beacon naming a campaign, or a click whose
// impression did not count, reaches only such a webhook.
func TestOnlyVouchedEventsByDefault(t *testing.T) {
	st := openStore(t)
	d := dispatcher(t, st, webhooks.Config{AllowPrivate: true})
	receiver := func() (*received, *httptest.Server) {
		var got received
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			got.mu.Lock()
			got.bodies = append(got.bodies, string(body))
			got.mu.Unlock()
		}))
		t.Cleanup(srv.Close)
		return &got, srv
	}
	vouched, vsrv := receiver()
	every, esrv := receiver()
	create(t, st, d, marquee.WebhookInput{URL: vsrv.URL, Events: []string{"click", "impression"}})
	create(t, st, d, marquee.WebhookInput{URL: esrv.URL, Events: []string{"click", "impression"}, Unverified: true})
	first := lines.Load() + 1
	d.Written("f", 0, []byte(line("impression", `,"ad":"1","campaign":"8"`)+ // a decision's impression
		rawLine("click", `,"campaign":"8"`)+ // an anonymous beacon
		rawLine("click", `,"ad":"1","campaign":"8"`)+ // a click whose impression did not count
		rawLine("click", `,"redirected":"1","code":"promo"`))) // a redirect's click
	deadline := time.Now().Add(10 * time.Second)
	for (len(vouched.events()) < 2 || len(every.events()) < 4) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // nothing else may come
	if got, want := strings.Join(vouched.events(), " "), fmt.Sprintf("e%d e%d", first, first+3); got != want {
		t.Errorf("a webhook by default got %q; want %q: the decision's impression and the redirect's click", got, want)
	}
	if got, want := strings.Join(every.events(), " "), fmt.Sprintf("e%d e%d e%d e%d", first, first+1, first+2, first+3); got != want {
		t.Errorf("a webhook asking for unverified events got %q; want all four, %q", got, want)
	}
}

// A site's quality alarm reaches the webhooks that ask for site.quality
// — the network's event, for webhooks without a target — and no other:
// not one for clicks only, nor (refused at creation) one for a campaign.
func TestSiteQualityAlarm(t *testing.T) {
	st := openStore(t)
	d := dispatcher(t, st, webhooks.Config{AllowPrivate: true})
	bodies := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies <- r.URL.Path + " " + string(body)
	}))
	defer srv.Close()
	create(t, st, d, marquee.WebhookInput{URL: srv.URL + "/quality", Events: []string{"site.quality"}})
	create(t, st, d, marquee.WebhookInput{URL: srv.URL + "/clicks", Events: []string{"click"}})
	if p := (marquee.WebhookInput{URL: "https://hooks.example/", Events: []string{"site.quality"}, CampaignID: 3}).Check(false); p["events"] == "" {
		t.Errorf("a campaign's webhook asking for site.quality: problems %v; want events named", p)
	}
	hour := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	d.SiteQualityAlarm("news", marquee.QualityAlarm{SiteQuality: marquee.SiteQuality{From: hour, To: hour.Add(time.Hour), Requests: 700, InvalidRequests: 300,
		Invalid: map[string]int64{"datacenter": 300}, InvalidRate: 0.3}, Threshold: 0.2, MinRequests: 1000})
	select {
	case b := <-bodies:
		want := `/quality {"type":"marquee.events","timestamp":`
		if !strings.HasPrefix(b, want) || !strings.Contains(b, `"events":[{"type":"site.quality","site":"news","from":"2026-12-07T09:00:00Z","to":"2026-12-07T10:00:00Z","requests":700,"invalidRequests":300,"invalid":{"datacenter":300},"invalidRate":0.3,"threshold":0.2,"minRequests":1000}]`) {
			t.Errorf("delivered %s; want the alarm's figures to /quality", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no alarm delivered")
	}
	select {
	case b := <-bodies:
		t.Errorf("also delivered %s; want only /quality", b)
	case <-time.After(100 * time.Millisecond):
	}
}
