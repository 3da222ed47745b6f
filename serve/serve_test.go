package serve_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"marquee/ivt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
	"marquee/privacy"
	"marquee/serve"
	"marquee/store/sqlite"
	"marquee/tracking"
)

// sink keeps the lines written to it; while failing, it refuses them.
type sink struct {
	mu      sync.Mutex
	lines   []string
	failing bool
}

func (s *sink) Append(_ uint64, line []byte, _ int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing {
		return marquee.Errorf(marquee.KindUnavailable, "the disk is full")
	}
	s.lines = append(s.lines, string(line))
	return nil
}

func (s *sink) AppendID(dst []byte) []byte { return append(dst, "id"...) }

func (s *sink) fail(on bool) { s.mu.Lock(); s.failing = on; s.mu.Unlock() }

func (s *sink) written() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// world is a Service over one placement ("side") and campaigns by price
// model: campaign 1 CPM 2.00, campaign 2 CPC 0.50, campaign 3 CPA 5.00,
// each with a total budget of 100 and one ad whose click URL carries
// {clickId}; its clock stands still.
type world struct {
	svc    *serve.Service
	engine *delivery.Engine
	signer *tracking.Signer
	sink   *sink
	now    time.Time
}

func newWorld(t *testing.T) *world { return newWorldFiltered(t, nil) }

// newWorldFiltered is newWorld with the invalid-traffic filter f (nil:
// the defaults), its placement changed by each of edits.
func newWorldFiltered(t *testing.T, f *ivt.Filter, edits ...func(*marquee.PlacementInput)) *world {
	t.Helper()
	w := &world{sink: &sink{}, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	start, end := w.now.Add(-time.Hour), w.now.Add(90*24*time.Hour)
	ps := []marquee.Placement{{ID: 1, PlacementInput: marquee.PlacementInput{Name: "side", Types: marquee.CreativeTypes}}}
	for _, edit := range edits {
		edit(&ps[0].PlacementInput)
	}
	var cs []marquee.Campaign
	var ads []*marquee.Ad
	for i, pr := range []marquee.Price{{Model: "cpm", Amount: 2_000_000}, {Model: "cpc", Amount: 500_000}, {Model: "cpa", Amount: 5_000_000}} {
		id := int64(i + 1)
		cs = append(cs, marquee.Campaign{ID: id, State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 7, Name: string(pr.Model),
			StartAt: start, EndAt: end, Priority: marquee.PriorityStandard, Weight: 1, Price: &pr, Budget: &marquee.Budget{Total: 100_000_000}}})
		ads = append(ads, &marquee.Ad{ID: id, CampaignID: id, StartAt: start, EndAt: end, Title: string(pr.Model),
			Creative: &marquee.Creative{Type: marquee.CreativeNative, Title: "t", ClickURL: "https://shop.test/land?c={clickId}"}})
	}
	w.engine = delivery.New(counters.NewMemory(counters.DefaultMemory))
	w.engine.SetCampaigns(cs, ps)
	w.engine.PutAds(ads, nil, true)
	w.engine.SetBudgets(delivery.NewBudgets(counters.NewMemoryMoney(1000), time.Hour))
	if err := w.engine.Budgets().Sync(context.Background(), w.engine.Plan(), w.now); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	signer, err := tracking.NewSigner([]byte("a tracking key of 32 bytes......"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := privacy.NewPolicy(privacy.Balanced, []byte("a privacy key of 32 bytes......."), 0)
	if err != nil {
		t.Fatal(err)
	}
	w.signer = signer
	clock := func() time.Time { return w.now }
	w.svc = serve.New(serve.Config{Engine: w.engine, Signer: signer, Now: clock, Conversions: st, IVT: f,
		Lines:  serve.NewLines(w.sink, pol, nil),
		Ledger: serve.NewLedger(serve.LedgerConfig{Sink: w.sink, Engine: w.engine})})
	return w
}

// later moves the world's clock on past the invalid-traffic filter's
// least delays (ivt: a click after its impression, a conversion after
// its click).
func (w *world) later() { w.now = w.now.Add(3 * time.Second) }

func (w *world) edge() *serve.Edge {
	return &serve.Edge{Time: w.now, IP: netip.MustParseAddr("192.0.2.1"), UserAgent: []byte("Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"),
		Origin: []byte("https://ads.test")}
}

// token decides the slot "side" for campaign id's ad alone (the others
// paused by their budgets' being spent is not needed: each campaign's ad
// is found among the choices of enough decisions) and signs its token.
func (w *world) token(t *testing.T, campaign int64) []byte {
	t.Helper()
	for range 200 {
		in := serve.Input{GDPR: -1, Placements: []serve.SlotInput{{Placement: []byte("side")}}}
		d, err := w.svc.Decide(context.Background(), &in, w.edge(), serve.Options{})
		if err != nil {
			t.Fatalf("Decide = %v", err)
		}
		for _, ch := range d.Chosen[0] {
			if ch.Campaign.ID == campaign {
				tok, _ := d.Sign(nil, 0, ch)
				d.Release()
				return tok
			}
		}
		d.Release()
	}
	t.Fatalf("no decision chose campaign %d", campaign)
	return nil
}

// spent is what campaign id spent in all, in micro-units.
func (w *world) spent(t *testing.T, id int64) marquee.Micros {
	t.Helper()
	s, ok := w.engine.Budgets().SpentOf('c', id, time.UTC, w.now)
	if !ok {
		t.Fatalf("SpentOf(c, %d): no budget state", id)
	}
	return s.Total
}

// TestTrackBillsOnce: a verified event of the type its campaign's price
// bills costs the decision's price, once however often its URL fires, and
// only once its line (which carries the cost) is written; any other
// event bills nothing.
func TestTrackBillsOnce(t *testing.T) {
	cases := []struct {
		name     string
		campaign int64
		fire     []byte // the kinds fired, in order
		want     marquee.Micros
		lines    int
	}{
		{"a CPM impression bills a thousandth of the price", 1, []byte{tracking.Impression}, 2_000, 1},
		{"an impression fired three times bills once", 1, []byte{tracking.Impression, tracking.Impression, tracking.Impression}, 2_000, 1},
		{"a click of a CPM campaign bills nothing more", 1, []byte{tracking.Impression, tracking.Click}, 2_000, 2},
		{"a CPC click after its impression bills the price", 2, []byte{tracking.Impression, tracking.Click}, 500_000, 2},
		{"a CPC click without a counted impression is not verified: nothing", 2, []byte{tracking.Click}, 0, 1},
		{"a view of an unmeasured impression bills nothing", 1, []byte{tracking.View}, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			tok := w.token(t, c.campaign)
			for _, kind := range c.fire {
				w.later() // a person's click comes a while after the impression
				if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: kind, Token: tok}, w.edge()); err != nil {
					t.Fatalf("Track(%c) = %v", kind, err)
				}
			}
			if got := w.spent(t, c.campaign); got != c.want {
				t.Errorf("spent after %q = %d micro-units; want %d", c.fire, got, c.want)
			}
			lines := w.sink.written()
			if len(lines) != c.lines {
				t.Fatalf("lines written = %d; want %d: %q", len(lines), c.lines, lines)
			}
			billed := 0
			for _, l := range lines {
				if strings.Contains(l, `"cost":`) {
					billed++
				}
			}
			if want := min(1, int(c.want)); billed != want {
				t.Errorf("lines with a cost = %d; want %d: %q", billed, want, lines)
			}
		})
	}
}

// TestTrackUnwrittenIsUnbilled: an event the sink refuses bills nothing
// and is not marked counted, so that the retry counts and bills it once.
func TestTrackUnwrittenIsUnbilled(t *testing.T) {
	w := newWorld(t)
	tok := w.token(t, 1)
	w.sink.fail(true)
	if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Impression, Token: tok}, w.edge()); marquee.KindOf(err) != marquee.KindUnavailable {
		t.Fatalf("Track with the sink failing = %v; want unavailable", err)
	}
	if got := w.spent(t, 1); got != 0 {
		t.Fatalf("spent after an unwritten impression = %d; want 0", got)
	}
	w.sink.fail(false)
	for range 2 {
		if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Impression, Token: tok}, w.edge()); err != nil {
			t.Fatalf("Track (retry) = %v", err)
		}
	}
	if got := w.spent(t, 1); got != 2_000 {
		t.Fatalf("spent after the retry = %d; want 2000", got)
	}
}

// TestTrackRefusesForeignTokens: a token that is not ours, or changed,
// counts nothing.
func TestTrackRefusesForeignTokens(t *testing.T) {
	w := newWorld(t)
	tok := w.token(t, 1)
	bad := bytes.Clone(tok)
	bad[len(bad)/2] ^= 1
	for _, tk := range [][]byte{bad, []byte("nonsense")} {
		if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Impression, Token: tk}, w.edge()); err == nil {
			t.Errorf("Track(%q) = nil; want an error", tk)
		}
	}
	if n := len(w.sink.written()); n != 0 {
		t.Errorf("lines written for foreign tokens = %d; want 0", n)
	}
}

// TestConvertBillsByThePriceRule: a verified conversion of a CPA campaign
// bills the decision's price (marquee.Price.EventCost), a conversion of a
// CPM campaign bills nothing, and a second conversion of the same order
// is a duplicate that bills nothing more.
func TestConvertBillsByThePriceRule(t *testing.T) {
	for _, c := range []struct {
		campaign int64
		want     marquee.Micros // spent after the conversion, beyond the impression's
	}{{3, 5_000_000}, {1, 0}} {
		w := newWorld(t)
		clickID := w.clicked(t, c.campaign)
		before := w.spent(t, c.campaign)
		for i, counted := range []bool{true, false} { // the second a duplicate
			in := marquee.ConversionInput{ClickID: clickID, OrderID: "o-1", Value: 10_000_000}
			out, err := w.svc.Convert(context.Background(), w.edge(), &in, serve.Voucher{Postback: true}, marquee.Bounds{}, privacy.Verdict{})
			if err != nil || out.Counted != counted || out.Duplicate == counted {
				t.Fatalf("campaign %d: Convert #%d = %+v, %v; want counted %v, a duplicate %v", c.campaign, i+1, out, err, counted, !counted)
			}
		}
		if got := w.spent(t, c.campaign) - before; got != c.want {
			t.Errorf("campaign %d: a conversion billed %d micro-units; want %d", c.campaign, got, c.want)
		}
	}
}

// TestDecideNamesProblems: a request is checked against the plan with
// every problem named, and nothing is decided or counted.
func TestDecideNamesProblems(t *testing.T) {
	w := newWorld(t)
	in := serve.Input{GDPR: -1, Placements: []serve.SlotInput{{Placement: []byte("nowhere"), Count: serve.OptInt{N: 99, Set: true}}},
		Country: []byte("XX"), Age: serve.OptInt{N: 500, Set: true}}
	d, err := w.svc.Decide(context.Background(), &in, w.edge(), serve.Options{})
	if d != nil {
		t.Errorf("Decide of an invalid request = a decision; want none")
	}
	var e *marquee.Error
	if !errors.As(err, &e) || e.Kind != marquee.KindInvalid {
		t.Fatalf("Decide = %v; want an invalid request", err)
	}
	for _, field := range []string{"placements[0].placement", "placements[0].count", "country", "age"} {
		if _, ok := e.Problems[field]; !ok {
			t.Errorf("problems %v do not name %s", e.Problems, field)
		}
	}
}

// budget sets campaign id's total budget and syncs the budgets.
func (w *world) budget(t *testing.T, id int64, total marquee.Micros) {
	t.Helper()
	c, _ := w.engine.Plan().Campaign(id)
	cc := c.Campaign
	cc.Budget = &marquee.Budget{Total: total}
	w.engine.PatchCampaigns([]marquee.Campaign{cc}, nil, nil, nil)
	if err := w.engine.Budgets().Sync(context.Background(), w.engine.Plan(), w.now); err != nil {
		t.Fatal(err)
	}
}

// TestCollectedDecisionsBillNoMoreThanTheBudget: 200 decisions collected
// while the budget was whole, then fired, bill exactly the budget (5
// impressions of a CPM campaign, 2 clicks of a CPC one); every other
// event is delivered (verified, in the reports) and billed nothing, its
// line saying overBudget (issue: an anonymous client billed 20 times a
// budget this way).
func TestCollectedDecisionsBillNoMoreThanTheBudget(t *testing.T) {
	for _, c := range []struct {
		name     string
		campaign int64
		budget   marquee.Micros
		fire     []byte
		billed   int
	}{
		{"CPM", 1, 10_000, []byte{tracking.Impression}, 5},
		{"CPC", 2, 1_000_000, []byte{tracking.Impression, tracking.Click}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			// One address clicking all it is shown is what the click rules
			// stop (TestScriptsJudgedByAddress): off, to test the budget.
			w := newWorldFiltered(t, ivt.New(ivt.Config{CampaignClicks: -1, MaxClickRate: -1}))
			w.budget(t, c.campaign, c.budget)
			var toks [][]byte
			for range 200 {
				toks = append(toks, w.token(t, c.campaign))
			}
			for _, tok := range toks {
				for _, kind := range c.fire {
					w.later()
					if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: kind, Token: tok}, w.edge()); err != nil {
						t.Fatalf("Track(%c) = %v", kind, err)
					}
				}
			}
			if got := w.spent(t, c.campaign); got != c.budget {
				t.Errorf("spent = %d micro-units; want the budget, %d", got, c.budget)
			}
			billed, over, verified := 0, 0, 0
			for _, l := range w.sink.written() {
				billed += strings.Count(l, `"cost":`)
				over += strings.Count(l, `"unbilled":"overBudget"`)
				verified += strings.Count(l, `"verified":"1"`)
			}
			if billed != c.billed || over != 200-c.billed || verified != 200*len(c.fire) {
				t.Errorf("lines: %d billed, %d overBudget, %d verified; want %d, %d, %d", billed, over, verified, c.billed, 200-c.billed, 200*len(c.fire))
			}
			if _, cands := w.engine.Explain(context.Background(), &delivery.Request{Slots: []delivery.Slot{{Placement: "side", Count: 1}}}, w.now, rand.New(rand.NewPCG(1, 2)), nil); !stopped(cands, c.campaign) {
				t.Errorf("campaign %d after its budget was billed: %+v; want it stopped (%q)", c.campaign, cands, delivery.BudgetSpent)
			}
		})
	}
}

func stopped(cands [][]delivery.Candidate, campaign int64) bool {
	for _, cs := range cands {
		for _, c := range cs {
			if c.CampaignID == campaign && c.Status == delivery.BudgetSpent {
				return true
			}
		}
	}
	return false
}

// TestBotsAreNotBilled: a headless browser's impression (a bot's: the
// reports leave it out) is written unverified, billed nothing, with its
// reason; the human's after it bills.
func TestBotsAreNotBilled(t *testing.T) {
	w := newWorld(t)
	bot := w.edge()
	bot.UserAgent = []byte("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36")
	if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Impression, Token: w.token(t, 1)}, bot); err != nil {
		t.Fatal(err)
	}
	if got := w.spent(t, 1); got != 0 {
		t.Errorf("spent after a bot's impression = %d; want 0", got)
	}
	lines := w.sink.written()
	if len(lines) != 1 || strings.Contains(lines[0], `"verified"`) || strings.Contains(lines[0], `"cost"`) || !strings.Contains(lines[0], `"unbilled":"invalid"`) {
		t.Fatalf("the bot's line = %q; want unverified, no cost, unbilled invalid", lines)
	}
	if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Impression, Token: w.token(t, 1)}, w.edge()); err != nil {
		t.Fatal(err)
	}
	if got := w.spent(t, 1); got != 2_000 {
		t.Errorf("spent after a person's impression = %d; want 2000", got)
	}
}

// clicked fires an impression and a click of a decision of campaign id
// and returns the click's id.
func (w *world) clicked(t *testing.T, id int64) string {
	t.Helper()
	tok := w.token(t, id)
	if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Impression, Token: tok}, w.edge()); err != nil {
		t.Fatal(err)
	}
	w.later()
	target, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Click, Token: tok}, w.edge())
	if err != nil {
		t.Fatal(err)
	}
	w.later() // a person's conversion comes a while after the click
	_, clickID, ok := strings.Cut(target, "?c=")
	if !ok {
		t.Fatalf("click target %q has no click id", target)
	}
	return clickID
}

// TestConversionsTheAdvertiserVouchesFor: a conversion bills, moves goals
// and counts its value only when its advertiser vouched for it — a
// postback, or a pixel signed with its conversion secret. An unsigned
// pixel worth 10^9 (an anonymous client's) is counted unverified and
// bills nothing; it cannot claim an order id the advertiser's postback
// then brings; a wrong signature is a 400 naming sig; a vouched value
// above the campaign's attribution.maxValue a 400 naming value.
func TestConversionsTheAdvertiserVouchesFor(t *testing.T) {
	w := newWorld(t)
	c3, _ := w.engine.Plan().Campaign(3)
	cc := c3.Campaign
	cc.Attribution = &marquee.Attribution{PostClick: marquee.DefaultPostClick, PostView: marquee.DefaultPostView, MaxValue: 500_000_000}
	w.engine.PatchCampaigns([]marquee.Campaign{cc}, nil, nil, nil)
	w.engine.SetAdvertisers([]marquee.Advertiser{{ID: 7, State: marquee.StateActive, ConversionNonce: "n1"}})
	secret := w.signer.ConversionSecret("n1")
	convert := func(clickID, order, value, sig string, postback bool) (serve.Converted, error) {
		m, err := marquee.ParseMicros(value)
		if err != nil {
			t.Fatal(err)
		}
		in := marquee.ConversionInput{ClickID: clickID, OrderID: order, Value: m}
		return w.svc.Convert(context.Background(), w.edge(), &in, serve.Voucher{Postback: postback, Sig: []byte(sig), Value: []byte(value)}, marquee.Bounds{}, privacy.Verdict{})
	}
	const price = 5_000_000 // campaign 3's CPA

	click := w.clicked(t, 3)
	before := w.spent(t, 3)
	out, err := convert(click, "o-1", "999999999", "", false)
	if err != nil || !out.Counted || out.Verified {
		t.Fatalf("an unsigned pixel = %+v, %v; want counted, unverified", out, err)
	}
	if got := w.spent(t, 3) - before; got != 0 {
		t.Errorf("an unsigned pixel billed %d; want 0", got)
	}
	out, err = convert(click, "o-1", "49.90", "", true)
	if err != nil || !out.Counted || !out.Verified {
		t.Fatalf("the postback of the order an unsigned pixel named = %+v, %v; want counted, verified", out, err)
	}
	if got := w.spent(t, 3) - before; got != price {
		t.Errorf("the postback billed %d; want %d", got, price)
	}

	click = w.clicked(t, 3)
	if _, err := convert(click, "o-2", "20", tracking.SignConversion(w.signer.ConversionSecret("n0"), click, "o-2", "20"), false); marquee.KindOf(err) != marquee.KindInvalid || !strings.Contains(err.Error(), "sig") {
		t.Errorf("a pixel signed with another secret = %v; want a 400 naming sig", err)
	}
	if _, err := convert(click, "o-2", "999999999", tracking.SignConversion(secret, click, "o-2", "20"), false); marquee.KindOf(err) != marquee.KindInvalid {
		t.Errorf("a signed pixel whose value was changed = %v; want a 400", err)
	}
	if _, err := convert(click, "o-2", "501", tracking.SignConversion(secret, click, "o-2", "501"), false); marquee.KindOf(err) != marquee.KindInvalid || !strings.Contains(err.Error(), "value") {
		t.Errorf("a signed pixel above maxValue = %v; want a 400 naming value", err)
	}
	before = w.spent(t, 3)
	out, err = convert(click, "o-2", "20", tracking.SignConversion(secret, click, "o-2", "20"), false)
	if err != nil || !out.Counted || !out.Verified {
		t.Fatalf("a signed pixel = %+v, %v; want counted, verified", out, err)
	}
	if got := w.spent(t, 3) - before; got != price {
		t.Errorf("a signed pixel billed %d; want %d", got, price)
	}
	if out, _ := convert(click, "o-2", "20", "", true); !out.Duplicate || out.Counted {
		t.Errorf("the postback of a signed pixel's order = %+v; want a duplicate", out)
	}
	var verified, value int
	for _, l := range w.sink.written() {
		if strings.Contains(l, `"type":"conversion"`) && strings.Contains(l, `"verified":"1"`) {
			verified++
		}
		if strings.Contains(l, `"conversionValue":"999999999000000"`) && strings.Contains(l, `"verified"`) {
			value++
		}
	}
	if verified != 2 || value != 0 {
		t.Errorf("conversion lines: %d verified, %d forged values verified; want 2 and 0", verified, value)
	}
}

// TestBurstCreditedToTheBudget: an address past its events a minute is
// invalid traffic from then on, and what its impressions were billed in
// that minute before it went past is given back to the budget (and
// written as adjustment lines with a negative cost).
func TestBurstCreditedToTheBudget(t *testing.T) {
	a := newWorld(t) // decides: the tokens are signed alike in both worlds
	var toks [][]byte
	for range 5 {
		toks = append(toks, a.token(t, 1))
	}
	w := newWorldFiltered(t, ivt.New(ivt.Config{AddressEvents: 4}))
	for i, tok := range toks {
		if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Impression, Token: tok}, w.edge()); err != nil {
			t.Fatal(err)
		}
		if got, want := w.spent(t, 1), marquee.Micros(2_000*(i+1)); i < 4 && got != want {
			t.Fatalf("spent after impression %d = %d; want %d (CPM 2)", i+1, got, want)
		}
	}
	if got := w.spent(t, 1); got != 0 {
		t.Errorf("spent after the 5th impression, past 4 a minute = %d; want 0: the first four credited, the fifth invalid", got)
	}
	adjusted, velocity := 0, 0
	for _, l := range w.sink.written() {
		if strings.Contains(l, `"type":"adjustment"`) && strings.Contains(l, `"cost":"-2000000"`) && strings.Contains(l, `"ivt":"burst"`) {
			adjusted++
		}
		if strings.Contains(l, `"type":"impression"`) && strings.Contains(l, `"ivt":"velocity"`) && strings.Contains(l, `"unbilled":"invalid"`) {
			velocity++
		}
	}
	if adjusted != 4 || velocity != 1 {
		t.Errorf("lines: %d adjustments, %d velocity impressions; want 4 and 1: %q", adjusted, velocity, w.sink.written())
	}
}

// script is a plain script's clicks on campaign 2 (CPC 0.5), as the
// attack's Python: a new decision (and no user) each time, its
// impression, then its click 3 s later, n times, from the address addr
// gives for each.
func (w *world) script(t *testing.T, n int, addr func(i int) string) {
	t.Helper()
	for i := range n {
		tok := w.token(t, 2)
		e := w.edge()
		e.IP = netip.MustParseAddr(addr(i))
		if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Impression, Token: tok}, e); err != nil {
			t.Fatal(err)
		}
		w.later()
		e.Time = w.now
		if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Click, Token: tok}, e); err != nil {
			t.Fatal(err)
		}
	}
}

// count is how many written lines hold every one of parts.
func (w *world) count(parts ...string) int {
	n := 0
	for _, l := range w.sink.written() {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(l, p) }) {
			n++
		}
	}
	return n
}

// TestScriptsJudgedByAddress: a script that clicks every ad it is shown
// (a click rate no person has) is judged by its address — an IPv4 address,
// or an IPv6 /64 whatever low bits it rotates (a /56 with -ivt-ipv6-prefix
// 56) — past ten clicks an hour: its clicks are invalid (clickRate) and
// what it was billed that hour is credited through the Ledger, so that
// it spends nothing; and, with the click rate off, a campaign takes at
// most its clicks an hour from one address (clickLimit).
func TestScriptsJudgedByAddress(t *testing.T) {
	t.Parallel()
	v4 := func(int) string { return "198.51.100.7" }
	v6 := func(i int) string { return fmt.Sprintf("2001:db8:1:2:%x::%x", i*7919%0x10000, i+1) }
	v56 := func(i int) string { return fmt.Sprintf("2001:db8:1:%x::1", 0x200+i) }
	for _, c := range []struct {
		name string
		cfg  ivt.Config
		addr func(int) string
	}{
		{"one IPv4 address", ivt.Config{}, v4},
		{"one IPv6 /64", ivt.Config{}, v6},
		{"one IPv6 /56, -ivt-ipv6-prefix 56", ivt.Config{IPv6Prefix: 56}, v56},
	} {
		w := newWorldFiltered(t, ivt.New(c.cfg))
		w.script(t, 30, c.addr)
		if got := w.spent(t, 2); got != 0 {
			t.Errorf("%s: the script's 30 clicks spent %s; want 0 (10 judged by their rate, the 9 billed before credited)", c.name, got)
		}
		if n := w.count(`"type":"adjustment"`, `"adjusts":"click"`, `"cost":"-500000000"`); n != 9 {
			t.Errorf("%s: %d clicks credited; want the 9 billed before the 10th", c.name, n)
		}
		if n := w.count(`"type":"click"`, `"ivt":"clickRate"`, `"unbilled":"invalid"`); n != 21 {
			t.Errorf("%s: %d clicks judged by their rate; want 21 (the 10th on)", c.name, n)
		}
	}
	w := newWorldFiltered(t, ivt.New(ivt.Config{IPv6Prefix: 64}))
	w.script(t, 12, v56) // each of another /64: none judged
	if got := w.spent(t, 2); got != 6_000_000 {
		t.Errorf("12 clicks of 12 /64s spent %s; want 6, each billed", got)
	}
	w = newWorldFiltered(t, ivt.New(ivt.Config{MaxClickRate: -1}))
	w.script(t, 25, v4)
	if got := w.spent(t, 2); got != 10_000_000 {
		t.Errorf("25 clicks from one address with the click rate off spent %s; want 10: 20 billed (-ivt-campaign-clicks), 5 not", got)
	}
	if n := w.count(`"type":"click"`, `"ivt":"clickLimit"`, `"unbilled":"invalid"`); n != 5 {
		t.Errorf("%d clicks past the campaign's limit; want 5", n)
	}
}

// TestRenderProofs: an impression of a placement that asks for render
// proofs bills only with the proof of its own decision from the last 10
// to 15 minutes (docs/ivt.md#render-proofs); without one it is invalid
// traffic of its own reason, and its decision's click after it bills
// nothing either.
func TestRenderProofs(t *testing.T) {
	proofOf := func(w *world, tok []byte) []byte {
		t.Helper()
		p, err := w.svc.RenderProof(nil, tok)
		if err != nil {
			t.Fatalf("RenderProof = %v", err)
		}
		return p
	}
	cases := []struct {
		name  string
		proof func(w *world, tok []byte) []byte
		want  marquee.Micros // spent by the CPC campaign after an impression and a click
		why   string
	}{
		{"the decision's proof", proofOf, 500_000, ""},
		{"no proof", func(*world, []byte) []byte { return nil }, 0, "noRenderProof"},
		{"another decision's proof", func(w *world, _ []byte) []byte { return proofOf(w, w.token(t, 2)) }, 0, "noRenderProof"},
		{"a proof of 20 minutes ago", func(w *world, tok []byte) []byte {
			w.now = w.now.Add(-20 * time.Minute)
			defer func() { w.now = w.now.Add(20 * time.Minute) }()
			return proofOf(w, tok)
		}, 0, "noRenderProof"},
		{"a proof changed", func(w *world, tok []byte) []byte {
			p := proofOf(w, tok)
			p[0] ^= 1
			return p
		}, 0, "noRenderProof"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorldFiltered(t, nil, func(p *marquee.PlacementInput) { p.RenderProof = true })
			tok := w.token(t, 2)
			proof := c.proof(w, tok)
			w.now = w.now.Add(9 * time.Minute) // a proof holds 10 to 15 minutes
			for _, h := range []serve.Hit{{Kind: tracking.Impression, Token: tok, Proof: proof}, {Kind: tracking.Click, Token: tok}} {
				w.later()
				if _, err := w.svc.Track(context.Background(), &h, w.edge()); err != nil {
					t.Fatalf("Track(%c) = %v", h.Kind, err)
				}
			}
			if got := w.spent(t, 2); got != c.want {
				t.Errorf("spent = %d; want %d", got, c.want)
			}
			for _, l := range w.sink.written() {
				if c.why != "" && !strings.Contains(l, c.why) {
					t.Errorf("line %s; want it invalid: %s", l, c.why)
				}
				if c.why == "" && strings.Contains(l, "noRenderProof") {
					t.Errorf("line %s; want it valid", l)
				}
			}
		})
	}
	t.Run("a placement that does not ask bills without one", func(t *testing.T) {
		w := newWorld(t)
		tok := w.token(t, 1)
		if _, err := w.svc.Track(context.Background(), &serve.Hit{Kind: tracking.Impression, Token: tok}, w.edge()); err != nil {
			t.Fatal(err)
		}
		if got := w.spent(t, 1); got != 2_000 {
			t.Errorf("spent = %d; want 2000", got)
		}
	})
	t.Run("a preview's token has no proof", func(t *testing.T) {
		w := newWorld(t)
		tok := w.signer.Append(nil, &tracking.Payload{Placement: "side", Issued: w.now, Expires: w.now.Add(time.Hour)})
		if _, err := w.svc.RenderProof(nil, tok); !errors.Is(err, tracking.ErrBadToken) {
			t.Errorf("RenderProof(a preview's token) = %v; want %v", err, tracking.ErrBadToken)
		}
	})
}
