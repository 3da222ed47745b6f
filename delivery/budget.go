package delivery

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"marquee"
	"marquee/counters"
)

// Budgets stop a campaign, or every campaign of an advertiser, once what
// it spent reaches its budget: each day (in its time zone) or over its
// life (docs/api.md#budgets). What is spent is what verified events cost
// at their decisions' prices (Bill, called by the Ledger); flat fees are
// agreed up front and count toward no budget.
//
// Billing never passes a budget: each billed event of a budgeted
// campaign or advertiser is settled in the shared counters (SpendCounters:
// Redis for many instances, memory for one) in one atomic step, and an
// event that would pass a budget is billed nothing (it is still
// delivered and counted; its line says overBudget). Decisions stop when
// what an instance read reaches a budget: its own settles tell it at
// once, and each Sync (every -budget-sync, 100 ms by default) reads back
// the totals of every budgeted campaign and advertiser, so the
// impressions delivered past a budget — free to the advertiser — are
// about one sync of the other instances' traffic plus the impressions of
// decisions already made (docs/benchmarks.md measures them with three
// instances). Spend of owners without a budget is batched into each
// Sync.
//
// The counters are not the durable record: the reports are. Each
// RefreshDelivered sets, from the reports, a floor under each total
// (SetReported), so that counters lost (Redis restarted, or this
// process, with memory counters) never let a campaign spend its budget
// twice. When a sync has not reached the counters for StaleAfter,
// budgeted campaigns stop (BudgetUnknown: fail closed) until one does;
// the spend of the failed syncs is kept and added by the next that
// works, so none is lost.
type Budgets struct {
	counters   SpendCounters
	staleAfter time.Duration

	// advertisers are the advertisers with a budget (SetAdvertisers,
	// PutAdvertisers): the one view delivery keeps of advertisers.
	advertisers atomic.Pointer[map[int64]*budgetOwner]
	// states hold the spend of each campaign and advertiser as of the
	// last sync, plus this instance's since; replaced by each sync.
	states   atomic.Pointer[map[ownerKey]*spendState]
	reported atomic.Pointer[map[ownerKey]spendFloor]
	synced   atomic.Int64 // unix ns of the last sync that reached the counters; 0: none yet

	mu      sync.Mutex
	pending map[spendKey]int64 // nano-units not yet added to the counters
}

// SpendCounters keep what campaigns and advertisers spent, shared by
// every instance (package counters: MemoryMoney for one instance, Redis
// for many): Add adds amounts and reads totals, in one step.
type SpendCounters interface {
	AddSpend(ctx context.Context, adds []counters.Add, reads []string) ([]int64, error)
	Settle(ctx context.Context, draws []counters.Draw, n int64) (bool, []int64, error)
}

// Why a campaign may not serve for its budget (Explain's words).
const (
	BudgetSpent   = "budget spent"
	AheadOfBudget = "ahead of even pacing to the budget"
	BudgetUnknown = "budget unknown: the spend counters cannot be reached"
	// BalanceSpent: a prepaid advertiser's balance is spent (or it has
	// not topped it up yet).
	BalanceSpent = "prepaid balance spent: the advertiser must add funds"
)

// DefaultStaleAfter is how long budgeted campaigns serve without a sync
// reaching the spend counters.
const DefaultStaleAfter = 2 * time.Second

// dayTTL is how long a day's spend counter is kept after its last add.
const dayTTL = 72 * time.Hour

// budgetOwner is an advertiser's budget as decisions read it; a prepaid
// advertiser's balance is one more limit on its total: credited, what
// its top-ups put in, in nano-units.
type budgetOwner struct {
	id       int64
	budget   marquee.Budget
	loc      *time.Location
	prepaid  bool
	credited int64
}

// ownerKey names a campaign ('c') or an advertiser ('a').
type ownerKey struct {
	kind byte
	id   int64
}

// spendKey is one counter: an owner's total (day 0) or one day's.
type spendKey struct {
	ownerKey
	day int64 // yyyymmdd in the owner's time zone; 0: the total
}

func (k spendKey) String() string {
	s := string(k.kind) + strconv.FormatInt(k.id, 10)
	if k.day == 0 {
		return s + ":t"
	}
	return s + ":d" + strconv.FormatInt(k.day, 10)
}

// spendState is an owner's spend: today's (of day, which runs from
// from to until, unix ns) and the total, in nano-units.
type spendState struct {
	day, today, total atomic.Int64
	from, until       int64 // set before the state is published
}

// spendFloor is what the reports say an owner spent: on day, and in all.
type spendFloor struct {
	day, today, total int64
}

// NewBudgets returns budgets kept in c, failing closed after staleAfter
// (0: DefaultStaleAfter) without a sync.
func NewBudgets(c SpendCounters, staleAfter time.Duration) *Budgets {
	if staleAfter <= 0 {
		staleAfter = DefaultStaleAfter
	}
	b := &Budgets{counters: c, staleAfter: staleAfter, pending: map[spendKey]int64{}}
	b.advertisers.Store(&map[int64]*budgetOwner{})
	b.states.Store(&map[ownerKey]*spendState{})
	b.reported.Store(&map[ownerKey]spendFloor{})
	return b
}

// SetBudgets gives the engine its budgets (nil: none are enforced, and
// Spend counts nothing).
func (e *Engine) SetBudgets(b *Budgets) { e.budgets = b }

// Budgets returns the engine's budgets (nil: none).
func (e *Engine) Budgets() *Budgets { return e.budgets }

// SetAdvertisers replaces the advertisers' budgets (those without one
// are left out).
func (b *Budgets) SetAdvertisers(as []marquee.Advertiser) {
	m := map[int64]*budgetOwner{}
	for i := range as {
		if o := ownerOf(&as[i]); o != nil {
			m[o.id] = o
		}
	}
	b.advertisers.Store(&m)
}

// PutAdvertisers changes the budgets of the advertisers of puts, and
// drops those of gone.
func (b *Budgets) PutAdvertisers(puts []marquee.Advertiser, gone []int64) {
	old := *b.advertisers.Load()
	m := make(map[int64]*budgetOwner, len(old)+len(puts))
	for id, o := range old {
		m[id] = o
	}
	for _, id := range gone {
		delete(m, id)
	}
	for i := range puts {
		delete(m, puts[i].ID)
		if o := ownerOf(&puts[i]); o != nil {
			m[o.id] = o
		}
	}
	b.advertisers.Store(&m)
}

func ownerOf(a *marquee.Advertiser) *budgetOwner {
	if (a.Budget == nil && !a.Prepaid) || a.State == marquee.StateArchived {
		return nil
	}
	loc, _ := marquee.ParseTimeZone(a.TimeZone)
	if loc == nil {
		loc = time.UTC
	}
	o := &budgetOwner{id: a.ID, loc: loc, prepaid: a.Prepaid, credited: int64(a.Credited.Nanos())}
	if a.Budget != nil {
		o.budget = *a.Budget
	}
	return o
}

// totalLimit is the most the owner's total spend may reach, in
// nano-units (counters.NoLimit: none): its total budget's, and a prepaid
// advertiser's balance — what it was credited, 0 before any top-up.
func (o *budgetOwner) totalLimit() int64 {
	l := limitOf(o.budget.Total)
	if o.prepaid && (l == counters.NoLimit || o.credited < l) {
		l = o.credited
	}
	return l
}

// Bill settles cost, what a verified event of campaign c at at costs,
// against every budget it draws on — c's total and daily budgets and its
// advertiser's — and reports whether it was billed: an event whose cost
// would take spend past one of them is billed nothing (false), however
// many instances bill at once, so billed spend never exceeds a budget.
// With a budget the cost is settled in the shared counters at once (one
// atomic step: SpendCounters.Settle), reading each total as at least what
// the reports say was spent; without any, it is added to what this
// instance reads at once and to the counters at the next Sync. An error
// (the counters cannot be reached) bills nothing and spends nothing.
// A negative cost refunds what a Bill of the same campaign and time took
// (an event whose line could not be written).
func (b *Budgets) Bill(ctx context.Context, c *Campaign, cost marquee.Nanos, at time.Time) (bool, error) {
	if cost == 0 {
		return true, nil
	}
	n := int64(cost)
	keys := [4]spendKey{{ownerKey{'c', c.ID}, 0}, {ownerKey{'c', c.ID}, marquee.DayNumber(at, c.loc)}}
	adv := (*b.advertisers.Load())[c.AdvertiserID]
	if adv != nil {
		keys[2], keys[3] = spendKey{ownerKey{'a', adv.id}, 0}, spendKey{ownerKey{'a', adv.id}, marquee.DayNumber(at, adv.loc)}
	} else { // counted for the advertiser all the same: a budget set later reads it
		a := ownerKey{'a', c.AdvertiserID}
		keys[2], keys[3] = spendKey{a, 0}, spendKey{a, marquee.DayNumber(at, time.UTC)}
	}
	if c.Budget == nil && adv == nil {
		b.spend(keys, n)
		return true, nil
	}
	limits := [4]int64{counters.NoLimit, counters.NoLimit, counters.NoLimit, counters.NoLimit}
	if c.Budget != nil && n > 0 {
		limits[0], limits[1] = limitOf(c.Budget.Total), limitOf(c.Budget.Daily)
	}
	if adv != nil && n > 0 {
		limits[2], limits[3] = adv.totalLimit(), limitOf(adv.budget.Daily)
	}
	floors := *b.reported.Load()
	var draws [4]counters.Draw
	for i, k := range keys {
		draws[i] = counters.Draw{Key: k.String(), Limit: limits[i]}
		if f, ok := floors[k.ownerKey]; ok {
			if k.day == 0 {
				draws[i].Floor = f.total
			} else if f.day == k.day {
				draws[i].Floor = f.today
			}
		}
		if k.day != 0 {
			draws[i].TTL = dayTTL
		}
	}
	ok, totals, err := b.counters.Settle(ctx, draws[:], n)
	if err != nil {
		if n < 0 { // a refund is not lost: the next Sync adds it
			b.spend(keys, n)
			return true, nil
		}
		return false, err
	}
	if n < 0 {
		b.addRead(keys, n)
		return true, nil
	}
	states := *b.states.Load() // what decisions read learns the totals at once, billed or not
	for i := 0; i < 4; i += 2 {
		if st := states[keys[i].ownerKey]; st != nil {
			raise(&st.total, totals[i])
			if st.day.Load() == keys[i+1].day {
				raise(&st.today, totals[i+1])
			}
		}
	}
	return ok, nil
}

// limitOf is a budget amount as a Draw's limit in nano-units (0: none).
func limitOf(m marquee.Micros) int64 {
	if m <= 0 {
		return counters.NoLimit
	}
	return int64(m.Nanos())
}

// raise sets v to n when n is more.
func raise(v *atomic.Int64, n int64) {
	for {
		old := v.Load()
		if n <= old || v.CompareAndSwap(old, n) {
			return
		}
	}
}

// spend adds n to the spend of keys (a campaign's total and day, its
// advertiser's total and day): at once to what this instance reads, and
// to the counters at the next Sync.
func (b *Budgets) spend(keys [4]spendKey, n int64) {
	b.mu.Lock()
	for _, key := range keys {
		b.pending[key] += n
	}
	b.mu.Unlock()
	b.addRead(keys, n)
}

// addRead adds n to what this instance reads of the spend of keys' owners
// (a campaign's and its advertiser's: keys[0] and keys[2], their days
// keys[1] and keys[3]).
func (b *Budgets) addRead(keys [4]spendKey, n int64) {
	states := *b.states.Load()
	for i := 0; i < 4; i += 2 {
		if st := states[keys[i].ownerKey]; st != nil {
			st.total.Add(n)
			if st.day.Load() == keys[i+1].day {
				st.today.Add(n)
			}
		}
	}
}

// Sync adds this instance's pending spend to the counters and reads back
// the totals of every budgeted campaign (of plan) and advertiser, at
// now. On an error the pending spend is kept for the next sync.
func (b *Budgets) Sync(ctx context.Context, plan *Plan, now time.Time) error {
	advs := *b.advertisers.Load()
	type owned struct {
		key ownerKey
		loc *time.Location
	}
	var owners []owned
	plan.Budgeted(func(c *Campaign) { owners = append(owners, owned{ownerKey{'c', c.ID}, c.loc}) })
	for _, a := range advs {
		owners = append(owners, owned{ownerKey{'a', a.id}, a.loc})
	}
	b.mu.Lock()
	pending := b.pending
	b.pending = make(map[spendKey]int64, len(pending))
	b.mu.Unlock()
	adds := make([]counters.Add, 0, len(pending))
	index := make(map[spendKey]int, len(pending)+2*len(owners))
	for k, n := range pending {
		var ttl time.Duration
		if k.day != 0 {
			ttl = dayTTL
		}
		index[k] = len(adds)
		adds = append(adds, counters.Add{Key: k.String(), N: n, TTL: ttl})
	}
	var reads []string
	days := make([]int64, len(owners))
	for i, o := range owners {
		days[i] = marquee.DayNumber(now, o.loc)
		for _, k := range []spendKey{{o.key, 0}, {o.key, days[i]}} {
			if _, ok := index[k]; !ok {
				index[k] = len(adds) + len(reads)
				reads = append(reads, k.String())
			}
		}
	}
	got, err := b.counters.AddSpend(ctx, adds, reads)
	if err != nil || len(got) != len(adds)+len(reads) {
		b.mu.Lock()
		for k, n := range pending {
			b.pending[k] += n
		}
		b.mu.Unlock()
		if err == nil {
			err = errShortAnswer
		}
		return err
	}
	floors := *b.reported.Load()
	states := make(map[ownerKey]*spendState, len(owners))
	b.mu.Lock() // the spend added since the swap is this instance's, not yet in got
	for i, o := range owners {
		total, today := got[index[spendKey{o.key, 0}]], got[index[spendKey{o.key, days[i]}]]
		if f, ok := floors[o.key]; ok {
			total = max(total, f.total)
			if f.day == days[i] {
				today = max(today, f.today)
			}
		}
		st := &spendState{}
		st.day.Store(days[i])
		start := marquee.DayStart(now, o.loc)
		st.from, st.until = start.UnixNano(), marquee.NextDay(start, o.loc).UnixNano()
		st.total.Store(total + b.pending[spendKey{o.key, 0}])
		st.today.Store(today + b.pending[spendKey{o.key, days[i]}])
		states[o.key] = st
	}
	b.states.Store(&states)
	b.mu.Unlock()
	b.synced.Store(now.UnixNano())
	return nil
}

var errShortAnswer = marquee.Errorf(marquee.KindUnavailable, "spend counters: a short answer")

// Run syncs every interval until ctx ends, logging nothing: a failing
// sync shows in decisions (BudgetUnknown) and in errs, called with each
// error (may be nil).
func (b *Budgets) Run(ctx context.Context, e *Engine, every time.Duration, errs func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, every*5)
		err := b.Sync(sctx, e.Plan(), time.Now())
		cancel()
		if errs != nil {
			errs(err)
		}
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			b.Sync(fctx, e.Plan(), time.Now()) // the last spend, at shutdown
			cancel()
			return
		case <-t.C:
		}
	}
}

// why says why campaign c may not serve at now for a budget (its own or
// its advertiser's), or "": unknown when the counters last answered more
// than staleAfter before wall (unix ns: when the decision is made).
func (b *Budgets) why(c *Campaign, now time.Time, wall int64) string {
	adv := (*b.advertisers.Load())[c.AdvertiserID]
	if c.Budget == nil && adv == nil {
		return ""
	}
	if s := b.synced.Load(); s == 0 || wall-s > int64(b.staleAfter) {
		return BudgetUnknown
	}
	states := *b.states.Load()
	if c.Budget != nil {
		if w := spentWhy(states[ownerKey{'c', c.ID}], c.Budget, c.loc, now, c.Pacing == marquee.PacingEven && c.Goal == nil, c); w != "" {
			return w
		}
	}
	if adv != nil {
		st := states[ownerKey{'a', adv.id}]
		if w := spentWhy(st, &adv.budget, adv.loc, now, false, c); w != "" {
			return w
		}
		if adv.prepaid && st.total.Load()+max(oneEvent(c), 1) > adv.credited {
			return BalanceSpent // what is left does not pay for one of c's events (nothing left, for an unpriced one)
		}
	}
	return ""
}

// spentWhy says whether what st says was spent reaches budget at now
// (its day in loc), or, with even, is ahead of a straight line through
// the day: the daily amount × the share of the day gone, plus what one
// of c's events costs.
func spentWhy(st *spendState, budget *marquee.Budget, loc *time.Location, now time.Time, even bool, c *Campaign) string {
	if st == nil {
		return BudgetUnknown // not synced since it was given a budget
	}
	today, at := int64(0), now.UnixNano()
	inDay := at >= st.from && at < st.until // the synced day: no calendar arithmetic
	if inDay || st.day.Load() == marquee.DayNumber(now, loc) {
		today = st.today.Load()
	}
	switch {
	case budget.Total > 0 && st.total.Load() >= int64(budget.Total.Nanos()):
		return BudgetSpent
	case budget.Daily > 0 && today >= int64(budget.Daily.Nanos()):
		return BudgetSpent
	case even && budget.Daily > 0:
		share := float64(at-st.from) / float64(st.until-st.from)
		if !inDay {
			day := marquee.DayStart(now, loc)
			share = marquee.Elapsed(day, marquee.NextDay(day, loc), now)
		}
		if float64(today) >= float64(budget.Daily.Nanos())*share+float64(oneEvent(c)) {
			return AheadOfBudget
		}
	}
	return ""
}

// AdvertiserTotal reads what advertiser id spent in all from the spend
// counters (at least what the reports say), plus this instance's spend
// not yet added to them, in nano-units: the spend a prepaid balance is
// drawn by. An error: the counters cannot be reached.
func (b *Budgets) AdvertiserTotal(ctx context.Context, id int64) (marquee.Nanos, error) {
	key := spendKey{ownerKey{'a', id}, 0}
	got, err := b.counters.AddSpend(ctx, nil, []string{key.String()})
	if err != nil {
		return 0, err
	}
	if len(got) != 1 {
		return 0, errShortAnswer
	}
	total := got[0]
	if f, ok := (*b.reported.Load())[key.ownerKey]; ok {
		total = max(total, f.total)
	}
	b.mu.Lock()
	total += b.pending[key]
	b.mu.Unlock()
	return marquee.Nanos(total), nil
}

// oneEvent is what one event c's price bills costs, in nano-units (0:
// none, or a flat fee).
func oneEvent(c *Campaign) int64 {
	var one marquee.Nanos
	if c.Price != nil {
		one, _ = c.Price.EventCost()
	}
	return int64(one)
}

// Spent is what an owner spent, as this instance knows it.
type Spent struct {
	Today, Total marquee.Micros
}

// SpentOf is what campaign id (kind 'c') or advertiser id ('a') spent
// today (at now, in its time zone) and in all, as of the last sync and
// this instance's spend since; ok is false when it has no budget or no
// sync has read it.
func (b *Budgets) SpentOf(kind byte, id int64, loc *time.Location, now time.Time) (Spent, bool) {
	st := (*b.states.Load())[ownerKey{kind, id}]
	if st == nil {
		return Spent{}, false
	}
	s := Spent{Total: marquee.Nanos(st.total.Load()).Micros()}
	if st.day.Load() == marquee.DayNumber(now, loc) {
		s.Today = marquee.Nanos(st.today.Load()).Micros()
	}
	return s, true
}
