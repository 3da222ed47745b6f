package delivery

import (
	"context"
	"sync"
	"time"

	"marquee"
	"marquee/reportrow"
)

// Store is what the engine reads its plan from — campaigns, placements and
// the ads of campaigns — and the campaigns' verified delivery (the
// reports' sums by campaign).
type Store interface {
	Advertiser(ctx context.Context, id int64) (marquee.Advertiser, error)
	ListAdvertisers(ctx context.Context, f marquee.ListFilter) ([]marquee.Advertiser, int, error)
	ListDeals(ctx context.Context) ([]marquee.Deal, error)
	Campaign(ctx context.Context, id int64) (marquee.Campaign, error)
	LiveCampaigns(ctx context.Context) ([]marquee.Campaign, error)
	Placement(ctx context.Context, name string) (marquee.Placement, error)
	ListPlacements(ctx context.Context, f marquee.ListFilter) ([]marquee.Placement, int, error)
	Ad(ctx context.Context, id int64) (marquee.Ad, error)
	EachCampaignAd(ctx context.Context, now time.Time, fn func(*marquee.Ad) error) error
	ReportTop(ctx context.Context, q reportrow.SumQuery, daily bool, metric string, limit int) ([]reportrow.Sum, error)
}

// Load reads the whole plan from st — the campaigns that are not archived,
// every placement, the placements' default ads and, with ads, every live
// ad in a campaign — and swaps it in. At start, and after the feed
// reloads (it may have missed anything).
func (e *Engine) Load(ctx context.Context, st Store, ads bool) error {
	cs, err := st.LiveCampaigns(ctx)
	if err != nil {
		return err
	}
	ps, err := marquee.ListAll(ctx, marquee.ListFilter{}, st.ListPlacements)
	if err != nil {
		return err
	}
	e.SetCampaigns(cs, ps)
	as, err := marquee.ListAll(ctx, marquee.ListFilter{State: marquee.StateActive}, st.ListAdvertisers)
	if err != nil {
		return err
	}
	e.SetAdvertisers(as)
	ds, err := st.ListDeals(ctx)
	if err != nil {
		return err
	}
	e.SetDeals(ds)
	if err := e.loadDefaults(ctx, st); err != nil {
		return err
	}
	if !ads {
		return nil
	}
	// The ads are compiled for the plan (planAd) by the store's decoding
	// goroutines, in parallel, rather than after the read by one.
	var mu sync.Mutex
	var ids []int64
	var planned []*Ad
	if err := st.EachCampaignAd(ctx, time.Now(), func(a *marquee.Ad) error {
		var pa *Ad
		if a.Serves() && a.CampaignID != 0 {
			pa = planAd(a)
		}
		mu.Lock()
		ids = append(ids, a.ID)
		if pa != nil {
			planned = append(planned, pa)
		}
		mu.Unlock()
		return nil
	}); err != nil {
		return err
	}
	e.resetAds(planned, ids)
	return nil
}

// loadDefaults reads the placements' default ads (an ad deleted since is
// skipped: its placement fills nothing by default).
func (e *Engine) loadDefaults(ctx context.Context, st Store) error {
	var defaults []*marquee.Ad
	for _, id := range e.Plan().DefaultAdIDs() {
		a, err := st.Ad(ctx, id)
		switch {
		case marquee.KindOf(err) == marquee.KindNotFound:
			continue
		case err != nil:
			return err
		}
		defaults = append(defaults, &a)
	}
	e.SetDefaultAds(defaults)
	return nil
}

// Apply reads from st the campaigns and placements a batch of changes
// names — by id and by name, nothing else — and patches the plan with
// them (PatchCampaigns): one that is gone or archived leaves it. A change
// of placements reads their default ads again.
func (e *Engine) Apply(ctx context.Context, st Store, campaigns []int64, placements []string) error {
	puts, gone, err := readEach(ctx, campaigns, st.Campaign)
	if err != nil {
		return err
	}
	pputs, pgone, err := readEach(ctx, placements, st.Placement)
	if err != nil {
		return err
	}
	e.PatchCampaigns(puts, gone, pputs, pgone)
	if len(placements) > 0 {
		return e.loadDefaults(ctx, st)
	}
	return nil
}

// readEach reads the row of every key with get: found, or gone (not
// found).
// SetAdvertisers replaces what the engine keeps of the advertisers: their
// budgets and their conversion secrets' nonces.
func (e *Engine) SetAdvertisers(as []marquee.Advertiser) {
	m := map[int64]string{}
	for i := range as {
		if as[i].ConversionNonce != "" && as[i].State != marquee.StateArchived {
			m[as[i].ID] = as[i].ConversionNonce
		}
	}
	e.nonces.Store(&m)
	if e.budgets != nil {
		e.budgets.SetAdvertisers(as)
	}
}

// PutAdvertisers changes what the engine keeps of the advertisers of
// puts, and drops what it keeps of gone.
func (e *Engine) PutAdvertisers(puts []marquee.Advertiser, gone []int64) {
	old := *e.nonces.Load()
	m := make(map[int64]string, len(old)+len(puts))
	for id, n := range old {
		m[id] = n
	}
	for _, id := range gone {
		delete(m, id)
	}
	for i := range puts {
		delete(m, puts[i].ID)
		if puts[i].ConversionNonce != "" && puts[i].State != marquee.StateArchived {
			m[puts[i].ID] = puts[i].ConversionNonce
		}
	}
	e.nonces.Store(&m)
	if e.budgets != nil {
		e.budgets.PutAdvertisers(puts, gone)
	}
}

// ConversionNonce is the nonce of advertiser id's conversion secret (""
// when it made none, or is archived).
func (e *Engine) ConversionNonce(id int64) string { return (*e.nonces.Load())[id] }

func readEach[K, T any](ctx context.Context, keys []K, get func(context.Context, K) (T, error)) (found []T, gone []K, err error) {
	for _, k := range keys {
		v, err := get(ctx, k)
		switch {
		case marquee.KindOf(err) == marquee.KindNotFound:
			gone = append(gone, k)
		case err != nil:
			return nil, nil, err
		default:
			found = append(found, v)
		}
	}
	return found, gone, nil
}

// RefreshDelivered reads, from the reports in st (every instance's
// events, bots left out), what the campaigns with a goal delivered over
// their flights and today, for pacing, and the flights' counts of the
// campaigns whose eCPM depends on their click or conversion rate: four
// queries whatever the number of campaigns (sums by campaign from the
// earliest flight start). asOf is when the reports were last complete
// (the read's start less a reports flush).
func (e *Engine) RefreshDelivered(ctx context.Context, st Store, now, asOf time.Time) error {
	watched := map[int64]*Campaign{}
	from := now
	plan := e.Plan()
	var advs map[int64]*budgetOwner
	if e.budgets != nil {
		advs = *e.budgets.advertisers.Load()
	}
	plan.Campaigns(func(c *Campaign) {
		if c.Goal != nil || plan.NeedsRates(c) || c.Budget != nil || advs[c.AdvertiserID] != nil || optimized(c) {
			watched[c.ID] = c
			if c.StartAt.Before(from) {
				from = c.StartAt
			}
		}
	})
	if len(watched) == 0 {
		return nil
	}
	if err := e.refreshSpent(ctx, st, watched, advs, from, now); err != nil {
		return err
	}
	day := now.Unix() / 86400 * 86400
	out := map[int64]Delivered{}
	rates := map[int64]Rates{}
	for _, span := range []struct {
		from  int64
		today bool
	}{{from.Unix() / 3600 * 3600, false}, {day, true}} {
		for _, daily := range []bool{false, true} {
			sums, err := st.ReportTop(ctx, reportrow.SumQuery{Entity: marquee.EntityCampaign, From: span.from, To: now.Unix() + 3600}, daily, "impressions", 0)
			if err != nil {
				return err
			}
			for _, s := range sums {
				c := watched[s.ID]
				switch {
				case c == nil:
				case span.today && c.Goal != nil:
					d := out[s.ID]
					d.Today += s.Counts.Verified(c.Goal.Metric)
					out[s.ID] = d
				case !span.today:
					if c.Goal != nil {
						d := out[s.ID]
						d.Total += s.Counts.Verified(c.Goal.Metric)
						out[s.ID] = d
					}
					if plan.NeedsRates(c) {
						r := rates[s.ID]
						r.Impressions, r.Clicks, r.Conversions = r.Impressions+s.Counts.Verified("impressions"), r.Clicks+s.Counts.Verified("clicks"),
							r.Conversions+s.Counts.Verified("conversions")
						rates[s.ID] = r
					}
				}
			}
		}
	}
	e.pacing.SetDelivered(out, asOf)
	if len(rates) > 0 {
		e.SetRates(rates)
	}
	return e.refreshAdRates(ctx, st, plan, watched, from, now)
}

// optimized says whether campaign c rotates its ads by click-through rate.
func optimized(c *Campaign) bool {
	return c.Rotation != nil && c.Rotation.Type == marquee.RotateOptimized
}

// refreshAdRates sets the verified impressions and clicks of the ads of
// the watched campaigns with optimized rotation, over the plan's flights
// (from the earliest start), from the reports.
func (e *Engine) refreshAdRates(ctx context.Context, st Store, plan *Plan, watched map[int64]*Campaign, from, now time.Time) error {
	some := false
	for _, c := range watched {
		some = some || optimized(c)
	}
	if !some {
		return nil
	}
	rates := map[int64]Rates{}
	for _, daily := range []bool{false, true} {
		sums, err := st.ReportTop(ctx, reportrow.SumQuery{Entity: marquee.EntityAd, From: from.Unix() / 3600 * 3600, To: now.Unix() + 3600}, daily, "impressions", 0)
		if err != nil {
			return err
		}
		for _, s := range sums {
			if a := plan.ads[s.ID]; a != nil && watched[a.CampaignID] != nil && optimized(watched[a.CampaignID]) {
				r := rates[s.ID]
				r.Impressions, r.Clicks = r.Impressions+s.Counts.Verified("impressions"), r.Clicks+s.Counts.Verified("clicks")
				rates[s.ID] = r
			}
		}
	}
	e.SetAdRates(rates)
	return nil
}

// refreshSpent sets the budgets' floors from the reports: what each
// budgeted campaign and advertiser spent over its life (from the
// earliest flight start of the plan) and today, from the hour its local
// day started in (a zone half an hour off UTC counts the half hour
// before its midnight too: the floor errs toward stopping).
func (e *Engine) refreshSpent(ctx context.Context, st Store, watched map[int64]*Campaign, advs map[int64]*budgetOwner, from, now time.Time) error {
	if e.budgets == nil {
		return nil
	}
	floors := map[ownerKey]spendFloor{}
	sum := func(entity string, since time.Time, fn func(id, nanos int64)) error {
		for _, daily := range []bool{false, true} {
			sums, err := st.ReportTop(ctx, reportrow.SumQuery{Entity: entity, From: since.Unix() / 3600 * 3600, To: now.Unix() + 3600}, daily, "impressions", 0)
			if err != nil {
				return err
			}
			for _, s := range sums {
				fn(s.ID, s.Counts.SpendNanos)
			}
		}
		return nil
	}
	days := map[int64][]ownerKey{} // owners by the unix second their day starts
	add := func(k ownerKey, loc *time.Location) {
		f := floors[k]
		f.day = marquee.DayNumber(now, loc)
		floors[k] = f
		start := marquee.DayStart(now, loc).Unix()
		days[start] = append(days[start], k)
	}
	for _, c := range watched {
		if c.Budget != nil {
			add(ownerKey{'c', c.ID}, c.loc)
		}
	}
	for _, a := range advs {
		add(ownerKey{'a', a.id}, a.loc)
	}
	if len(floors) == 0 {
		e.budgets.reported.Store(&floors)
		return nil
	}
	for _, entity := range []string{marquee.EntityCampaign, marquee.EntityAdvertiser} {
		kind := byte('c')
		if entity == marquee.EntityAdvertiser {
			kind = 'a'
		}
		if err := sum(entity, from, func(id, n int64) {
			if f, ok := floors[ownerKey{kind, id}]; ok {
				f.total += n
				floors[ownerKey{kind, id}] = f
			}
		}); err != nil {
			return err
		}
		for start, keys := range days {
			want := map[int64]bool{}
			for _, k := range keys {
				if k.kind == kind {
					want[k.id] = true
				}
			}
			if len(want) == 0 {
				continue
			}
			if err := sum(entity, time.Unix(start, 0), func(id, n int64) {
				if k := (ownerKey{kind, id}); want[id] {
					f := floors[k]
					f.today += n
					floors[k] = f
				}
			}); err != nil {
				return err
			}
		}
	}
	e.budgets.reported.Store(&floors)
	return nil
}

// From is the marquee.Applier that keeps the engine's plan in step with
// the changelog, reading st: the ads a batch put and deleted, the
// campaigns and placements it names (by id and name: Apply), or, on a
// reload, everything (Load).
func (e *Engine) From(st Store) marquee.Applier {
	return marquee.ApplyFunc(func(ctx context.Context, b *marquee.Batch) error {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if b.Reload {
			return e.Load(ctx, st, true)
		}
		if len(b.Put)+len(b.Deleted) > 0 {
			e.PutAds(b.Put, b.Deleted, false)
		}
		if b.Deals {
			ds, err := st.ListDeals(ctx)
			if err != nil {
				return err
			}
			e.SetDeals(ds)
		}
		if len(b.Advertisers) > 0 {
			puts, gone, err := readEach(ctx, b.Advertisers, st.Advertiser)
			if err != nil {
				return err
			}
			e.PutAdvertisers(puts, gone)
		}
		if len(b.Campaigns)+len(b.Placements) > 0 {
			return e.Apply(ctx, st, b.Campaigns, b.Placements)
		}
		return nil
	})
}
