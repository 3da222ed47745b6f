package delivery_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
)

// budgetFleet is instances engines deciding over the same plan — a
// sponsorship campaign (1) with a budget, a standard one (2) without —
// their budgets in shared spend counters, on a clock the test sets.
type budgetFleet struct {
	engines []*delivery.Engine
	shared  delivery.SpendCounters
	clock   atomic.Int64 // unix ns
}

func (f *budgetFleet) now() time.Time { return time.Unix(0, f.clock.Load()) }

// cost is what an impression of campaign 1 costs: a CPM of 10.
const cost = marquee.Nanos(10_000_000)

func newBudgetFleet(t *testing.T, shared delivery.SpendCounters, instances int, budget marquee.Budget, tz string, start time.Time) *budgetFleet {
	f := &budgetFleet{shared: shared}
	f.clock.Store(start.UnixNano())
	from, to := start.Add(-24*time.Hour), start.Add(10*24*time.Hour)
	cs := []marquee.Campaign{
		{ID: 1, State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 1, Name: "budgeted", StartAt: from, EndAt: to,
			Priority: marquee.PrioritySponsorship, Weight: 1, Pacing: marquee.PacingASAP, TimeZone: tz, Budget: &budget,
			Price: &marquee.Price{Model: "cpm", Amount: 10_000_000}}},
		{ID: 2, State: marquee.StateActive, CampaignInput: marquee.CampaignInput{AdvertiserID: 2, Name: "unbudgeted", StartAt: from, EndAt: to,
			Priority: marquee.PriorityStandard, Weight: 1, Pacing: marquee.PacingASAP}},
	}
	var ads []*marquee.Ad
	for i := range cs {
		ads = append(ads, &marquee.Ad{ID: int64(i + 1), Title: "a", StartAt: from, EndAt: to, CampaignID: cs[i].ID,
			Creative: &marquee.Creative{Type: marquee.CreativeHTML, HTML: "x", Width: 300, Height: 250}})
	}
	for range instances {
		e := delivery.New(counters.NewMemory(counters.DefaultMemory))
		e.SetCampaigns(cs, []marquee.Placement{side})
		e.PutAds(ads, nil, true)
		e.SetBudgets(delivery.NewBudgets(shared, 2*time.Second))
		f.engines = append(f.engines, e)
	}
	return f
}

// sync syncs every instance at the fleet's clock.
func (f *budgetFleet) sync(t *testing.T) {
	t.Helper()
	for _, e := range f.engines {
		if err := e.Budgets().Sync(context.Background(), e.Plan(), f.now()); err != nil {
			t.Fatalf("Sync: %v", err)
		}
	}
}

// decide is instance i's choice for one slot of side: the campaign, or 0.
func (f *budgetFleet) decide(i int, rnd *rand.Rand) *delivery.Campaign {
	got := f.engines[i].Decide(context.Background(), &delivery.Request{Slots: slot("side", 1)}, f.now(), rnd)
	if len(got[0]) == 0 {
		return nil
	}
	return got[0][0].Campaign
}

// load runs every instance's deciders, each pausing between decisions,
// and syncs (every 100 ms, -budget-sync's default) until it billed
// budget and campaign 1 has not served on any instance for 300 ms since
// (a loaded machine's pause before then is not the campaign stopping):
// each decision of campaign 1 renders (Bill) at once. It returns
// campaign 1's impressions, those billed, and how long they took.
func (f *budgetFleet) load(t *testing.T, budget marquee.Micros, deciders int, pause time.Duration) (served, billed int64, took time.Duration) {
	var servedN, billedN atomic.Int64
	var last atomic.Int64 // wall ns of campaign 1's last serve
	stop := make(chan struct{})
	var wg sync.WaitGroup
	begin := time.Now()
	last.Store(begin.UnixNano())
	for i, e := range f.engines {
		wg.Go(func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					e.Budgets().Sync(context.Background(), e.Plan(), f.now())
					return
				case <-tick.C:
					e.Budgets().Sync(context.Background(), e.Plan(), f.now())
				}
			}
		})
		for d := range deciders {
			wg.Go(func() {
				rnd := rand.New(rand.NewPCG(uint64(i), uint64(d)))
				for {
					select {
					case <-stop:
						return
					default:
					}
					if c := f.decide(i, rnd); c != nil && c.ID == 1 {
						ok, err := e.Budgets().Bill(context.Background(), c, cost, f.now())
						if err != nil {
							t.Error(err)
							return
						}
						if ok {
							billedN.Add(1)
						}
						servedN.Add(1)
						last.Store(time.Now().UnixNano())
					}
					time.Sleep(pause)
				}
			})
		}
	}
	for (billedN.Load()*int64(cost) < int64(budget.Nanos()) || time.Since(time.Unix(0, last.Load())) < 300*time.Millisecond) && time.Since(begin) < 30*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	took = time.Unix(0, last.Load()).Sub(begin)
	close(stop)
	wg.Wait()
	return servedN.Load(), billedN.Load(), took
}

// spent reads a counter of the shared spend.
func (f *budgetFleet) spent(t *testing.T, key string) int64 {
	t.Helper()
	got, err := f.shared.AddSpend(context.Background(), nil, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	return got[0]
}

// sharedSpend is the spend counters of this test: Redis when
// MARQUEE_TEST_REDIS is set (three clients for three instances would be
// the same; one client under a prefix of the test's), else one memory.
func sharedSpend(t *testing.T) delivery.SpendCounters {
	url := os.Getenv("MARQUEE_TEST_REDIS")
	if url == "" {
		t.Log("MARQUEE_TEST_REDIS is not set: the instances share memory counters instead of Redis")
		return counters.NewMemoryMoney(100)
	}
	r, err := counters.NewRedis(url, fmt.Sprintf("marquee-test:%d:", rand.Uint64()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestBudgetDailyAcrossDST: three instances under concurrent load (about
// 2,000 impressions a second, so that the budget lasts seconds, as a
// real one lasts hours) bill a campaign exactly its daily budget (50, at
// a CPM of 10: 5,000 impressions) and never more, and stop it, the
// impressions delivered free past the budget at most 1% of the budget
// (an instance learns the total from each of its own bills); it stays stopped for the
// rest of the day in its time zone (New York) and serves again at the
// next local midnight — the day the clocks spring forward, a day of 23
// hours — where the budget stops it again; and again the day after.
func TestBudgetDailyAcrossDST(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	budget := marquee.Budget{Daily: 50_000_000}
	f := newBudgetFleet(t, sharedSpend(t), 3, budget, "America/New_York", time.Date(2026, 3, 7, 10, 0, 0, 0, ny))
	f.sync(t)
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, day := range []struct {
		name       string
		at         time.Time
		key        string
		midnightOf time.Time
	}{
		{"Saturday", time.Date(2026, 3, 7, 10, 0, 0, 0, ny), "c1:d20260307", time.Date(2026, 3, 8, 0, 0, 0, 0, ny)},
		{"Sunday (23 hours: DST begins)", time.Date(2026, 3, 8, 12, 0, 0, 0, ny), "c1:d20260308", time.Date(2026, 3, 9, 0, 0, 0, 0, ny)},
	} {
		f.clock.Store(day.at.UnixNano())
		f.sync(t)
		if c := f.decide(0, rnd); c == nil || c.ID != 1 {
			t.Fatalf("%s: before load, the budgeted campaign does not serve (%v)", day.name, c)
		}
		n, billed, took := f.load(t, budget.Daily, 3, 4*time.Millisecond) // about 2,000 impressions a second over the three
		spent := f.spent(t, day.key)
		rate := float64(n) / took.Seconds() // impressions a second, all instances
		free := (n - billed) * int64(cost)
		bound := int64(budget.Daily.Nanos()) / 100
		t.Logf("%s: %d impressions in %v (%.0f/s): billed %s of %s, delivered free %s (bound %s)", day.name, n, took.Round(time.Millisecond), rate,
			marquee.Nanos(spent).Micros(), budget.Daily, marquee.Nanos(free).Micros(), marquee.Nanos(bound).Micros())
		if spent != billed*int64(cost) || spent != int64(budget.Daily.Nanos()) {
			t.Errorf("%s: the counters hold %d nano-units; want the %d billed impressions × %d, exactly the budget %d", day.name, spent, billed, cost, budget.Daily.Nanos())
		}
		if free > bound {
			t.Errorf("%s: %d nano-units delivered past the budget; want at most %d (1%% of the budget)", day.name, free, bound)
		}
		for _, at := range []time.Time{day.midnightOf.Add(-time.Second), day.midnightOf} {
			f.clock.Store(at.UnixNano())
			f.sync(t)
			for i := range f.engines {
				got := f.decide(i, rnd)
				if wantServe := !at.Before(day.midnightOf); (got != nil && got.ID == 1) != wantServe {
					t.Errorf("%s: instance %d at %v serves campaign %v; want the budgeted campaign %v", day.name, i, at, got, map[bool]string{true: "serving", false: "stopped"}[wantServe])
				}
			}
		}
	}
}

// TestBudgetsFailClosed: when the spend counters cannot be reached, a
// budgeted campaign's events cannot be billed (an error: the tracking
// route answers 503 and the retry bills them) and spend nothing; it
// serves until -budget-stale (2 s here) has passed without a sync, then
// stops (the unbudgeted one fills the slot); when the counters are back,
// it bills and serves again.
func TestBudgetsFailClosed(t *testing.T) {
	port := freePort(t)
	redisUp := startRedis(t, port)
	r, err := counters.NewRedis("redis://127.0.0.1:"+strconv.Itoa(port)+"/0", "marquee-test:")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	f := newBudgetFleet(t, r, 1, marquee.Budget{Daily: 1_000_000_000}, "", start)
	f.sync(t)
	rnd := rand.New(rand.NewPCG(3, 4))
	e := f.engines[0]
	if c := f.decide(0, rnd); c == nil || c.ID != 1 {
		t.Fatalf("with Redis up: %v; want the budgeted campaign", c)
	}
	c1, _ := e.Plan().Campaign(1)
	if ok, err := e.Budgets().Bill(context.Background(), c1, cost, f.now()); !ok || err != nil {
		t.Fatalf("Bill with Redis up = %v, %v; want billed", ok, err)
	}
	redisUp.stop()
	for range 7 {
		if ok, err := e.Budgets().Bill(context.Background(), c1, cost, f.now()); ok || err == nil {
			t.Fatalf("Bill with Redis down = %v, %v; want an error, nothing billed", ok, err)
		}
	}
	f.clock.Store(start.Add(time.Second).UnixNano())
	if err := e.Budgets().Sync(context.Background(), e.Plan(), f.now()); err == nil {
		t.Fatal("Sync with Redis down: no error")
	}
	if c := f.decide(0, rnd); c == nil || c.ID != 1 {
		t.Fatalf("1 s after the last sync: %v; want the budgeted campaign still serving", c)
	}
	f.clock.Store(start.Add(2*time.Second + time.Millisecond).UnixNano())
	if c := f.decide(0, rnd); c == nil || c.ID != 2 {
		t.Fatalf("past -budget-stale without a sync: %v; want the unbudgeted campaign (the budgeted one stopped)", c)
	}
	explained := false
	_, cands := e.Explain(context.Background(), &delivery.Request{Slots: slot("side", 1)}, f.now(), rnd, nil)
	for _, c := range cands[0] {
		if c.CampaignID == 1 && c.Status == delivery.BudgetUnknown {
			explained = true
		}
	}
	if !explained {
		t.Errorf("explain = %+v; want campaign 1 %q", cands[0], delivery.BudgetUnknown)
	}
	startRedis(t, port)
	f.clock.Store(start.Add(3 * time.Second).UnixNano())
	if err := e.Budgets().Sync(context.Background(), e.Plan(), f.now()); err != nil {
		t.Fatalf("Sync with Redis back: %v", err)
	}
	if ok, err := e.Budgets().Bill(context.Background(), c1, cost, f.now()); !ok || err != nil {
		t.Fatalf("Bill with Redis back = %v, %v; want billed", ok, err)
	}
	if got := f.spent(t, "c1:d20260601"); got != int64(cost) { // a new Redis, empty: the reports' floors (SetReported) keep the first
		t.Errorf("spend after Redis came back = %d; want the one impression billed since, %d (none of the outage's)", got, cost)
	}
	if c := f.decide(0, rnd); c == nil || c.ID != 1 {
		t.Fatalf("with Redis back: %v; want the budgeted campaign serving again", c)
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type redisProc struct{ cmd *exec.Cmd }

func (p *redisProc) stop() { p.cmd.Process.Kill(); p.cmd.Wait() }

// startRedis runs a redis-server of this test's own on port (skipped
// where there is none), stopped at the test's end.
func startRedis(t *testing.T, port int) *redisProc {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server on PATH: the outage of the spend counters is not tested")
	}
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &redisProc{cmd}
	t.Cleanup(p.stop)
	for range 100 {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return nil
}

// TestEvenPacingToBudget: a campaign without a goal, paced evenly to a
// daily budget, serves while what it spent today is under the daily
// amount × the share of its day gone (plus one impression's cost), and
// waits when it is ahead; Explain says so.
func TestEvenPacingToBudget(t *testing.T) {
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	quarter := time.Date(2026, 5, 10, 6, 0, 0, 0, tokyo)                                                          // a quarter of the day in Tokyo
	f := newBudgetFleet(t, counters.NewMemoryMoney(10), 1, marquee.Budget{Daily: 400_000}, "Asia/Tokyo", quarter) // 0.4 a day: 40 impressions
	e := f.engines[0]
	c, _ := e.Plan().Campaign(1)
	even := *c
	even.Pacing = marquee.PacingEven
	cs := []marquee.Campaign{even.Campaign}
	e.PatchCampaigns(cs, nil, nil, nil)
	f.sync(t)
	rnd := rand.New(rand.NewPCG(5, 6))
	served := 0
	for range 100 {
		if got := f.decide(0, rnd); got != nil && got.ID == 1 {
			if ok, _ := e.Budgets().Bill(context.Background(), got, cost, f.now()); !ok {
				t.Fatal("an impression paced under the budget was not billed")
			}
			served++
		}
	}
	// A quarter of 40 impressions is 10; one more is allowed ahead.
	if served != 11 {
		t.Errorf("a quarter into the day, even pacing to a budget of 40 impressions served %d; want 11 (10 on the line, and one ahead)", served)
	}
	_, cands := e.Explain(context.Background(), &delivery.Request{Slots: slot("side", 1)}, f.now(), rnd, nil)
	ahead := false
	for _, c := range cands[0] {
		ahead = ahead || c.CampaignID == 1 && c.Status == delivery.AheadOfBudget
	}
	if !ahead {
		t.Errorf("explain = %+v; want campaign 1 %q", cands[0], delivery.AheadOfBudget)
	}
	f.clock.Store(quarter.Add(6 * time.Hour).UnixNano()) // half the day: 20 on the line
	f.sync(t)
	for range 100 {
		if got := f.decide(0, rnd); got != nil && got.ID == 1 {
			if ok, _ := e.Budgets().Bill(context.Background(), got, cost, f.now()); !ok {
				t.Fatal("an impression paced under the budget was not billed")
			}
			served++
		}
	}
	if served != 21 {
		t.Errorf("half the day: %d served in all; want 21", served)
	}
}

// TestAdvertiserBudget: an advertiser's daily budget (in its time zone)
// stops every campaign of its together once their spend reaches it; a
// campaign of another advertiser serves on.
func TestAdvertiserBudget(t *testing.T) {
	start := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	f := newBudgetFleet(t, counters.NewMemoryMoney(10), 1, marquee.Budget{Total: marquee.MaxAmount}, "", start)
	e := f.engines[0]
	c2, _ := e.Plan().Campaign(2)
	mine := c2.Campaign
	mine.AdvertiserID, mine.Price = 1, &marquee.Price{Model: "cpm", Amount: 10_000_000} // campaign 2 is advertiser 1's too now
	e.PatchCampaigns([]marquee.Campaign{mine}, nil, nil, nil)
	e.Budgets().SetAdvertisers([]marquee.Advertiser{{ID: 1, State: marquee.StateActive, AdvertiserSettings: marquee.AdvertiserSettings{
		Budget: &marquee.Budget{Daily: 100_000}, TimeZone: "Asia/Taipei"}}}) // 0.1: 10 impressions of either
	f.sync(t)
	rnd := rand.New(rand.NewPCG(7, 8))
	served := 0
	for range 50 {
		if c := f.decide(0, rnd); c != nil {
			if ok, _ := e.Budgets().Bill(context.Background(), c, cost, f.now()); !ok {
				t.Fatal("an impression served under the advertiser's budget was not billed")
			}
			served++
		}
	}
	if served != 10 {
		t.Errorf("served %d under an advertiser budget of 10 impressions; want 10", served)
	}
	if d, _ := e.Delivery(2, f.now()); d.Why != delivery.BudgetSpent || d.AdvertiserBudget == nil || d.AdvertiserBudget.SpentToday != 100_000 {
		t.Errorf("campaign 2's delivery = %+v; want stopped by its advertiser's budget, 0.1 spent today", d)
	}
	f.clock.Store(time.Date(2026, 7, 1, 15, 59, 59, 0, time.UTC).UnixNano()) // a second before midnight in Taipei
	f.sync(t)
	if c := f.decide(0, rnd); c != nil {
		t.Errorf("a second before the advertiser's next day: campaign %d served; want none", c.ID)
	}
	f.clock.Store(time.Date(2026, 7, 1, 16, 0, 1, 0, time.UTC).UnixNano()) // past midnight in Taipei
	f.sync(t)
	if c := f.decide(0, rnd); c == nil {
		t.Error("the advertiser's next day (in Taipei): nothing served; want its campaigns again")
	}
}

// TestPreviewAtAnotherTime: a preview of a healthy budgeted campaign three
// days ahead judges the spend counters' freshness when it is made (they
// answered a moment ago: it serves), not at the time it previews; a
// decision at that time with no Wall still finds them stale.
func TestPreviewAtAnotherTime(t *testing.T) {
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	f := newBudgetFleet(t, counters.NewMemoryMoney(10), 1, marquee.Budget{Daily: 1_000_000_000}, "UTC", start)
	f.sync(t)
	e, rnd := f.engines[0], rand.New(rand.NewPCG(1, 2))
	later := start.Add(72 * time.Hour)
	statusOf := func(r *delivery.Request) string {
		_, cands := e.Explain(context.Background(), r, later, rnd, nil)
		for _, c := range cands[0] {
			if c.CampaignID == 1 {
				return c.Status
			}
		}
		return "absent"
	}
	if got := statusOf(&delivery.Request{Slots: slot("side", 1), Preview: true, Wall: start.Add(time.Second)}); got != "chosen" {
		t.Errorf("a preview made now of three days ahead: campaign 1 %q; want chosen", got)
	}
	if got := statusOf(&delivery.Request{Slots: slot("side", 1)}); got != delivery.BudgetUnknown {
		t.Errorf("a decision three days after the last sync: campaign 1 %q; want %q", got, delivery.BudgetUnknown)
	}
}

// TestPrepaidBalance: a prepaid advertiser's campaigns serve and bill
// only what it was credited — none before a top-up (why: the balance),
// exactly its balance after one, on two instances sharing the counters —
// and spend given back (an invalid-traffic credit) returns to the balance
// and lets them serve again; a larger credit (a top-up read again) does
// too.
func TestPrepaidBalance(t *testing.T) {
	start := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	f := newBudgetFleet(t, counters.NewMemoryMoney(10), 2, marquee.Budget{Total: marquee.MaxAmount}, "", start)
	prepaid := func(credited marquee.Micros) {
		for _, e := range f.engines {
			e.Budgets().SetAdvertisers([]marquee.Advertiser{{ID: 1, State: marquee.StateActive, Credited: credited,
				AdvertiserSettings: marquee.AdvertiserSettings{Prepaid: true}}})
		}
		f.sync(t)
	}
	prepaid(0)
	e := f.engines[0]
	if d, _ := e.Delivery(1, f.now()); d.Why != delivery.BalanceSpent {
		t.Errorf("before any top-up: delivery = %+v; want why %q", d, delivery.BalanceSpent)
	}
	c1, _ := e.Plan().Campaign(1)
	if ok, _ := e.Budgets().Bill(context.Background(), c1, cost, f.now()); ok {
		t.Error("an impression billed before any top-up; want billed nothing")
	}
	prepaid(55_000) // 5.5 impressions' worth: 5 are billed
	rnd := rand.New(rand.NewPCG(3, 4))
	billed := 0
	for i := range 40 {
		if c := f.decide(i%2, rnd); c != nil && c.ID == 1 {
			if ok, _ := f.engines[(i+1)%2].Budgets().Bill(context.Background(), c, cost, f.now()); ok {
				billed++
			}
		}
	}
	f.sync(t)
	if billed != 5 {
		t.Errorf("billed %d impressions on a balance of 5.5; want 5", billed)
	}
	if d, _ := e.Delivery(1, f.now()); d.Why != delivery.BalanceSpent {
		t.Errorf("balance spent: delivery = %+v; want why %q", d, delivery.BalanceSpent)
	}
	if n, err := e.Budgets().AdvertiserTotal(context.Background(), 1); err != nil || n != 5*cost {
		t.Errorf("AdvertiserTotal = %d, %v; want %d", n, err, 5*cost)
	}
	e.Budgets().Bill(context.Background(), c1, -2*cost, f.now()) // two impressions found invalid: credited
	f.sync(t)
	if d, _ := e.Delivery(1, f.now()); d.Why != "" {
		t.Errorf("after a credit of invalid traffic: delivery = %+v; want serving", d)
	}
	for range 3 {
		e.Budgets().Bill(context.Background(), c1, cost, f.now())
	}
	prepaid(85_000)
	if d, _ := e.Delivery(1, f.now()); d.Why != "" {
		t.Errorf("after another top-up: delivery = %+v; want serving", d)
	}
}
