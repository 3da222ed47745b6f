package reports

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee"
	"marquee/ivt"
	"marquee/reportrow"
)

// The dimensions a report by several dimensions is cut by (up to
// MaxDims of them), beside reportrow.KVDim + a report key.
const (
	DimAdvertiser = "advertiser"
	DimCampaign   = "campaign"
	DimAd         = "ad"
	DimPlacement  = "placement"
	DimSite       = "site"
	DimCountry    = "country"
	DimDevice     = "device"
	// DimTraffic cuts by people's and invalid traffic: "human", or the
	// reason ("crawler", "datacenter", …; docs/ivt.md). A report by it
	// counts invalid traffic's events.
	DimTraffic = "traffic"
	// DimBidder cuts header bidding's bids by bidder: read from the bids'
	// counts (by placement, bidder and hour), it goes with placement and
	// site only, and its rows add bids, wins and the win rate.
	DimBidder = "bidder"
	// DimPrivacy cuts requests by the privacy signal that limited them
	// (reportrow.LimitedNames: "gpp", "usnat", "tcf", …): read from the
	// requests' counts, it goes with placement, site, country and device
	// only, and its rows count the slots the signal limited beside all
	// the slots of their cut (docs/privacy.md#reports).
	DimPrivacy = "privacy"
)

// MultiDims are the dimensions of MultiQuery.By, but report keys.
var MultiDims = []string{DimAdvertiser, DimCampaign, DimAd, DimPlacement, DimSite, DimCountry, DimDevice, DimTraffic, DimBidder, DimPrivacy}

// bidDims are the dimensions a report by bidder may add.
var bidDims = []string{DimBidder, DimPlacement, DimSite}

// MaxDims bounds MultiQuery.By.
const MaxDims = 3

// Total is the granularity of a report by several dimensions with no
// series: one row per combination over the whole range.
const Total = "total"

// MultiQuery is a report by several dimensions: its rows are the
// combinations of By's values with events or requests in [From, To), per
// bucket of Granularity (Day, Month or Total; days are UTC days, as
// dimension rows are, bucketed in Loc by the instant they start).
type MultiQuery struct {
	By          []string
	From, To    time.Time
	Granularity string
	Loc         *time.Location
	Bots        bool
	// Filters (none: every value). An advertiser user's report is filtered
	// to their advertisers, a publisher user's to their sites.
	Advertisers, Campaigns, Ads, Placements []int64
	Sites, Countries, Devices               []string
	// Limit bounds the rows (largest impressions first, then requests).
	Limit int
	// Publisher says the reader is a publisher's account: its money is
	// its net revenue — what its placements' ads earned × its sites'
	// revenue shares (Catalog.Shares) — and the advertisers' conversions,
	// their value and ROAS are not its to see (docs/api.md#sites).
	Publisher bool
	// OnlyCampaigns leaves out what no campaign served: the page's
	// header-bidding bids (their SSPs pay the publisher, not the network)
	// and ads of no campaign. A statement's rows are the network's only.
	OnlyCampaigns bool
}

// Catalog names what a report's rows are cut by: campaigns (with their
// advertisers and prices), advertisers, placements (with their sites),
// and ads' titles, read for the ids a report shows.
type Catalog struct {
	Campaigns   map[int64]*marquee.Campaign
	Advertisers map[int64]string
	Placements  map[int64]*marquee.Placement
	AdTitles    func(ctx context.Context, ids []int64) (map[int64]string, error)
	// Shares are the sites' revenue shares, by name (a site without one:
	// 0, no share agreed): what a publisher's report counts as its.
	Shares map[string]float64
}

// Cell is one dimension's value in a row: an id and a name (advertiser,
// campaign, ad, placement), or a value (site, country, device, a key's
// value).
type Cell struct {
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
}

// MultiRow is one row of a report by several dimensions.
type MultiRow struct {
	T    string          `json:"t,omitempty"` // the bucket's start (not with Total)
	Dims map[string]Cell `json:"dims"`
	MultiMetrics
}

// MultiMetrics are a row's figures: the events' metrics, with requests,
// filled slots and fill rate where the row's dimensions are the
// request's (placement, site, country, device); money where a campaign
// of the row has a price (or its events cost something).
type MultiMetrics struct {
	Metrics
	*Money
	// Net is a publisher's money (MultiQuery.Publisher), in place of Money.
	Net    *NetMoney      `json:"-"`
	flat   marquee.Micros // flat fees' share of the row
	net    float64        // a publisher's net revenue, nano-units
	priced bool
	pub    bool
}

// MarshalJSON writes the row's bucket and dimensions, then its metrics
// (MultiMetrics.MarshalJSON), in one object.
func (r MultiRow) MarshalJSON() ([]byte, error) {
	head, err := json.Marshal(struct {
		T    string          `json:"t,omitempty"`
		Dims map[string]Cell `json:"dims"`
	}{r.T, r.Dims})
	if err != nil {
		return nil, err
	}
	m, err := r.MultiMetrics.MarshalJSON()
	if err != nil || len(m) < 2 {
		return nil, err
	}
	if len(m) == 2 { // {}
		return head, nil
	}
	return append(append(head[:len(head)-1], ','), m[1:]...), nil
}

// NetMoney is a publisher's money: its net revenue (its share of what
// its placements' ads earned) and that per thousand verified impressions.
type NetMoney struct {
	Revenue marquee.Micros `json:"revenue"`
	ECPM    marquee.Micros `json:"ecpm"`
}

// MarshalJSON writes m's metrics and, for a publisher, its net money —
// never the advertisers' conversions, value or ROAS — else its Money.
func (m MultiMetrics) MarshalJSON() ([]byte, error) {
	if !m.pub {
		type plain struct {
			Metrics
			*Money
		}
		return json.Marshal(plain{m.Metrics, m.Money})
	}
	type pub struct {
		Metrics
		*NetMoney
	}
	return json.Marshal(pub{m.Metrics, m.Net})
}

// Money is what a report's row cost its advertisers, in the report's
// currency: the spend (revenue is the same amount, the publisher's word
// for it), per thousand verified impressions (eCPM), per verified click
// (eCPC) and per verified conversion (eCPA), each 0 where it would
// divide by 0; and the return on ad spend, the attributed conversions'
// value ÷ spend (0 without spend).
type Money struct {
	Spend   marquee.Micros `json:"spend"`
	Revenue marquee.Micros `json:"revenue"`
	ECPM    marquee.Micros `json:"ecpm"`
	ECPC    marquee.Micros `json:"ecpc"`
	ECPA    marquee.Micros `json:"ecpa"`
	ROAS    float64        `json:"roas"`
}

// MoneyOf is the money of spend over counts c.
func MoneyOf(spend marquee.Micros, c *Counts) *Money {
	m := &Money{Spend: spend, Revenue: spend, ECPM: spend.MulDiv(1000, c.Verified("impressions")),
		ECPC: spend.MulDiv(1, c.Verified("clicks")), ECPA: spend.MulDiv(1, c.Verified("conversions"))}
	if spend > 0 {
		m.ROAS = float64(c.ConversionValue) / float64(spend)
	}
	return m
}

// MultiReport is the answer to a MultiQuery.
type MultiReport struct {
	Window
	By       []string     `json:"by"`
	Currency string       `json:"currency"`
	Totals   MultiMetrics `json:"totals"`
	Rows     []MultiRow   `json:"rows"`
	// Truncated says rows past Limit were left out (Totals count them).
	Truncated bool `json:"truncated,omitempty"`
	// Publisher: a publisher's report (MultiQuery.Publisher).
	Publisher bool `json:"-"`
}

// requestDims are the dimensions requests are counted by.
var requestDims = []string{DimPlacement, DimSite, DimCountry, DimDevice}

// CheckMulti reports what is wrong with q's dimensions and granularity,
// by parameter.
func (rp *Reporter) CheckMulti(q *MultiQuery) marquee.Problems {
	p := marquee.Problems{}
	if len(q.By) == 0 || len(q.By) > MaxDims {
		p["by"] = fmt.Sprintf("must name 1 to %d dimensions, comma-separated", MaxDims)
	}
	kv, geo, reportKeys := 0, false, rp.Keys.Load()
	for i, d := range q.By {
		switch {
		case slices.Contains(MultiDims, d):
			geo = geo || d == DimCountry || d == DimDevice
		case strings.HasPrefix(d, reportrow.KVDim) && slices.Contains(reportKeys, strings.TrimPrefix(d, reportrow.KVDim)):
			kv++
		default:
			keys := make([]string, len(reportKeys))
			for i, k := range reportKeys {
				keys[i] = reportrow.KVDim + k
			}
			p["by"] = fmt.Sprintf("%q is not a dimension: one of %q", d, append(slices.Clone(MultiDims), keys...))
		}
		if slices.Index(q.By, d) != i {
			p["by"] = fmt.Sprintf("%q is given twice", d)
		}
	}
	switch {
	case kv > 1:
		p["by"] = "one report key at a time"
	case kv == 1 && (geo || len(q.Countries)+len(q.Devices) > 0):
		p["by"] = "a report key's values are kept by ad, campaign and placement, not by country or device"
	}
	if slices.Contains(q.By, DimBidder) {
		const why = "header bidding's bids are counted by placement, bidder and hour"
		if i := slices.IndexFunc(q.By, func(d string) bool { return !slices.Contains(bidDims, d) }); i >= 0 {
			p["by"] = fmt.Sprintf("%q does not go with bidder: %s (by bidder, placement or site)", q.By[i], why)
		}
		if len(q.Advertisers)+len(q.Campaigns)+len(q.Ads)+len(q.Countries)+len(q.Devices) > 0 {
			p["filter"] = "a report by bidder is filtered by placement or site only: " + why
		}
		if rp.Bids == nil {
			p["by"] = "bidder: this server does not read header bidding's counts"
		}
	}
	if slices.Contains(q.By, DimPrivacy) {
		const why = "requests are counted by placement, country, device and hour"
		if i := slices.IndexFunc(q.By, func(d string) bool { return d != DimPrivacy && !slices.Contains(requestDims, d) }); i >= 0 {
			p["by"] = fmt.Sprintf("%q does not go with privacy: %s (by placement, site, country or device)", q.By[i], why)
		}
		if len(q.Advertisers)+len(q.Campaigns)+len(q.Ads) > 0 || q.Bots {
			p["filter"] = "a report by privacy is filtered by placement, site, country or device only, over people's requests: " + why
		}
	}
	if !slices.Contains([]string{Day, Month, Total}, q.Granularity) {
		p["granularity"] = fmt.Sprintf("must be one of %q (rows by several dimensions are kept by UTC day)", []string{Day, Month, Total})
	}
	for k, v := range rp.Check(&Query{From: q.From, To: q.To, Granularity: Day}) {
		p[k] = v
	}
	return p
}

// EmptyMulti is the answer to q when its filters select nothing.
func (rp *Reporter) EmptyMulti(q MultiQuery) *MultiReport {
	loc := cmp.Or(q.Loc, time.UTC)
	return &MultiReport{Window: Window{From: q.From.UTC().Format(time.RFC3339), To: q.To.UTC().Format(time.RFC3339),
		Granularity: q.Granularity, TZ: loc.String()}, By: q.By, Currency: rp.Currency, Rows: []MultiRow{}, Publisher: q.Publisher}
}

// Multi answers q (checked with CheckMulti) with the names of cat: the
// cube's cells of the filters (cubeQuery) merged into rows by the
// dimensions' values and bucket, each priced by its campaign (addCells),
// the requests where the dimensions are theirs (addRequests), sorted and
// cut to the limit (sorted), the ads' titles read once (nameAds).
func (rp *Reporter) Multi(ctx context.Context, q MultiQuery, cat *Catalog) (*MultiReport, error) {
	out := rp.EmptyMulti(q)
	switch {
	case slices.Contains(q.By, DimBidder):
		return rp.multiBids(ctx, q, cat, out)
	case slices.Contains(q.By, DimPrivacy):
		return rp.multiPrivacy(ctx, q, cat, out)
	}
	cq, ok := cubeQuery(q, cat)
	if !ok {
		return out, nil
	}
	cells, err := rp.r.CubeSums(ctx, cq)
	if err != nil {
		return nil, err
	}
	b := newMultiBuild(q, cat, out, len(cells))
	flatImps, err := b.flatImpressions(ctx, rp.r, cq, cells)
	if err != nil {
		return nil, err
	}
	b.addCells(cells, flatImps)
	if !slices.ContainsFunc(q.By, func(d string) bool { return !slices.Contains(requestDims, d) }) && len(q.Advertisers)+len(q.Campaigns)+len(q.Ads) == 0 {
		if err := b.addRequests(ctx, rp.r, cq); err != nil {
			return nil, err
		}
	}
	out.Totals.money(q.Publisher)
	list := b.sorted()
	if slices.Contains(q.By, DimAd) && cat.AdTitles != nil {
		if err := nameAds(ctx, cat, list); err != nil {
			return nil, err
		}
	}
	out.Rows = list
	return out, nil
}

// newMultiBuild starts the rows of q's report out (about n of them).
func newMultiBuild(q MultiQuery, cat *Catalog, out *MultiReport, n int) *multiBuild {
	return &multiBuild{q: q, cat: cat, out: out, loc: cmp.Or(q.Loc, time.UTC), rows: make(map[rowKey]*MultiRow, n),
		buckets: map[int64]string{}, windows: map[string][2]time.Time{}}
}

// BidReader reads header bidding's counts (the store's).
type BidReader interface {
	BidSums(ctx context.Context, q reportrow.BidQuery) ([]reportrow.BidRow, error)
}

// multiBids answers a report by bidder (checked with CheckMulti): the
// bids' counts of q's placements (its sites' too) over whole UTC days,
// as the cube's, by bidder and the placement or site asked for — each
// row's verified impressions of won bids and what they earned (for a
// publisher its share), with the bids and wins.
func (rp *Reporter) multiBids(ctx context.Context, q MultiQuery, cat *Catalog, out *MultiReport) (*MultiReport, error) {
	bq := reportrow.BidQuery{From: q.From.Unix() / 86400 * 86400, To: q.To.Unix(), Placements: q.Placements, Daily: q.Granularity != Total}
	if len(q.Sites) > 0 {
		if bq.Placements = idsOf(cat.Placements, q.Placements, func(p *marquee.Placement) bool { return slices.Contains(q.Sites, p.Site) }); len(bq.Placements) == 0 {
			return out, nil
		}
	}
	rows, err := rp.Bids.BidSums(ctx, bq)
	if err != nil {
		return nil, err
	}
	b := newMultiBuild(q, cat, out, len(rows))
	var total Counts
	var bids, wins int64
	for _, br := range rows {
		r := b.rowOf(b.keyOf(b.bucketOf(br.Hour), 0, br.Placement, 0, "", "", br.Bidder, 0))
		c := Counts{Impressions: br.Impressions, SpendNanos: br.Revenue}
		r.Counts.Add(c)
		total.Add(c)
		r.addBids(br.Bids, br.Wins)
		bids, wins = bids+br.Bids, wins+br.Wins
		r.priced, out.Totals.priced = true, true
		if q.Publisher {
			var share float64
			if pl := cat.Placements[br.Placement]; pl != nil {
				share = cat.Shares[pl.Site]
			}
			net := share * float64(br.Revenue)
			r.net += net
			out.Totals.net += net
		}
	}
	out.Totals.Metrics = withCounts(out.Totals.Metrics, total)
	out.Totals.addBids(bids, wins)
	out.Totals.money(q.Publisher)
	out.Rows = b.sorted()
	return out, nil
}

// multiPrivacy answers a report by privacy (checked with CheckMulti):
// the requests of q's placements (its sites' too) over whole UTC days, as
// the cube's, cut by the signal that limited them and the placement, site,
// country or device asked for. A row's Limited are its signal's limited
// slots, and its Requests all people's slots of its cut (its other
// dimensions and bucket), so that Limited ÷ Requests is the share the
// signal limited; a slot of a request with two signals is in both rows.
// The totals are every request's, with LimitedRequests by signal.
func (rp *Reporter) multiPrivacy(ctx context.Context, q MultiQuery, cat *Catalog, out *MultiReport) (*MultiReport, error) {
	rq := reportrow.RequestQuery{From: q.From.Unix() / 86400 * 86400, To: q.To.Unix(), Placements: q.Placements, By: []string{"placement"}}
	if len(q.Sites) > 0 {
		if rq.Placements = idsOf(cat.Placements, q.Placements, func(p *marquee.Placement) bool { return slices.Contains(q.Sites, p.Site) }); len(rq.Placements) == 0 {
			return out, nil
		}
	}
	if q.Granularity != Total {
		rq.By = append(rq.By, "hour")
	}
	for _, d := range []string{DimCountry, DimDevice} {
		if slices.Contains(q.By, d) || d == DimCountry && len(q.Countries) > 0 || d == DimDevice && len(q.Devices) > 0 {
			rq.By = append(rq.By, d)
		}
	}
	sums, err := rp.r.RequestSums(ctx, rq)
	if err != nil {
		return nil, err
	}
	b := newMultiBuild(q, cat, out, len(sums))
	cuts := map[rowKey]int64{} // people's slots by cut: a row's key with no signal
	var total reportrow.RequestRow
	for _, s := range sums {
		if len(q.Countries) > 0 && !slices.Contains(q.Countries, s.Country) || len(q.Devices) > 0 && !slices.Contains(q.Devices, s.Device) {
			continue
		}
		t := b.bucketOf(s.Hour)
		cuts[b.keyOf(t, 0, s.Placement, 0, s.Country, s.Device, "", 0)] += s.Requests()
		total.Add(&s)
		for i, n := range s.Limited {
			if n > 0 {
				r := b.rowOf(b.keyOf(t, 0, s.Placement, 0, s.Country, s.Device, reportrow.LimitedNames[i], 0))
				r.Limited = new(ptrInt(r.Limited) + n)
			}
		}
	}
	at := slices.Index(q.By, DimPrivacy)
	for _, kr := range b.order {
		cut := kr.k
		cut.vals[at] = ""
		n := cuts[cut]
		kr.r.Requests, kr.r.LimitedRate = &n, new(ratio(*kr.r.Limited, n))
	}
	out.Totals.addRequests(&total)
	out.Rows = b.sorted()
	return out, nil
}

// cubeQuery is q's filters in the cube's terms — advertisers as their
// campaigns, sites as their placements — and its grain and grouping;
// false when a filter names nothing (it selects nothing, never
// everything).
func cubeQuery(q MultiQuery, cat *Catalog) (reportrow.CubeQuery, bool) {
	cq := reportrow.CubeQuery{Grain: reportrow.GrainEntity, From: q.From.Unix() / 86400 * 86400, To: q.To.Unix(), Bots: q.Bots,
		Ads: q.Ads, Campaigns: q.Campaigns, Placements: q.Placements, Countries: q.Countries, Devices: q.Devices}
	if len(q.Advertisers) > 0 {
		if cq.Campaigns = idsOf(cat.Campaigns, q.Campaigns, func(c *marquee.Campaign) bool { return slices.Contains(q.Advertisers, c.AdvertiserID) }); len(cq.Campaigns) == 0 {
			return cq, false
		}
	}
	if len(q.Sites) > 0 {
		if cq.Placements = idsOf(cat.Placements, q.Placements, func(p *marquee.Placement) bool { return slices.Contains(q.Sites, p.Site) }); len(cq.Placements) == 0 {
			return cq, false
		}
	}
	if len(q.Countries)+len(q.Devices) > 0 {
		cq.Grain = reportrow.GrainGeo
	}
	group := []string{DimCampaign} // always: revenue is by campaign
	if q.Publisher {
		group = append(group, DimPlacement) // and, for a publisher, by site: each has its share
	}
	if q.Granularity != Total {
		group = append(group, "day")
	}
	for _, d := range q.By {
		switch d {
		case DimAdvertiser:
		case DimSite:
			group = append(group, DimPlacement)
		case DimCountry, DimDevice:
			cq.Grain = reportrow.GrainGeo
			group = append(group, d)
		case DimTraffic:
			cq.Bots = true
			group = append(group, reportrow.ByIVT)
		default:
			if key, ok := strings.CutPrefix(d, reportrow.KVDim); ok {
				cq.Grain, cq.Key = reportrow.GrainKV, key
				group = append(group, "value")
			} else {
				group = append(group, d)
			}
		}
	}
	cq.Group = dedupe(group)
	if cq.Grain == reportrow.GrainEntity && !slices.Contains(cq.Group, DimAd) && len(cq.Ads) == 0 {
		cq.Grain = reportrow.GrainCP // the same sums, of a campaign's ads together
	}
	return cq, true
}

// rowKey is a row's bucket and dimensions: the named dimensions' ids, the
// others' values.
type rowKey struct {
	t    string
	ids  [MaxDims]int64
	vals [MaxDims]string
}

// keyedRow is a row with its key.
type keyedRow struct {
	k rowKey
	r *MultiRow
}

// flatKey is a campaign's bucket.
type flatKey struct {
	campaign int64
	t        string
}

// multiBuild is a report by several dimensions being made: its rows by
// key (and in the order they were made), the buckets' names and windows.
type multiBuild struct {
	q       MultiQuery
	cat     *Catalog
	out     *MultiReport
	loc     *time.Location
	rows    map[rowKey]*MultiRow
	order   []keyedRow
	buckets map[int64]string        // by day (or hour): a few hundred
	windows map[string][2]time.Time // a bucket's part of the range
}

// bucketOf is the bucket of a day (or hour) at the query's granularity
// ("" for Total).
func (b *multiBuild) bucketOf(day int64) string {
	if b.q.Granularity == Total {
		return ""
	}
	t, ok := b.buckets[day]
	if !ok {
		t = bucket(time.Unix(day, 0), b.q.Granularity, b.loc).Format(time.RFC3339)
		b.buckets[day] = t
	}
	return t
}

// window is a bucket's part of the range (the range with Total).
func (b *multiBuild) window(t string) (time.Time, time.Time) {
	if t == "" {
		return b.q.From, b.q.To
	}
	w, ok := b.windows[t]
	if !ok {
		from, _ := time.Parse(time.RFC3339, t)
		w = [2]time.Time{maxTime(from, b.q.From), minTime(next(from, b.q.Granularity), b.q.To)}
		b.windows[t] = w
	}
	return w[0], w[1]
}

// keyOf is the row key of a cell or request row's values, in bucket t.
func (b *multiBuild) keyOf(t string, campaign, placement, ad int64, country, device, value string, why uint8) rowKey {
	k := rowKey{t: t}
	for i, d := range b.q.By {
		switch d {
		case DimAdvertiser:
			if camp := b.cat.Campaigns[campaign]; camp != nil {
				k.ids[i] = camp.AdvertiserID
			}
		case DimCampaign:
			k.ids[i] = campaign
		case DimAd:
			k.ids[i] = ad
		case DimPlacement:
			k.ids[i] = placement
		case DimSite:
			if pl := b.cat.Placements[placement]; pl != nil {
				k.vals[i] = pl.Site
			}
		case DimCountry:
			k.vals[i] = country
		case DimDevice:
			k.vals[i] = device
		case DimTraffic:
			k.vals[i] = ivt.Reason(why).String()
		default:
			k.vals[i] = value
		}
	}
	return k
}

// rowOf is the row of k, made the first time (its cells are named once
// it is known to be shown: dimsOf).
func (b *multiBuild) rowOf(k rowKey) *MultiRow {
	if r := b.rows[k]; r != nil {
		return r
	}
	r := &MultiRow{T: k.t}
	b.rows[k] = r
	b.order = append(b.order, keyedRow{k, r})
	return r
}

// How a report names rows of no campaign or no ad: header-bidding bids
// (which fill a slot with no ad of Marquee's) and placements' default ads
// (of no campaign).
const (
	NoCampaign = "(header-bidding bids and default ads)"
	BidAd      = "(a header-bidding bid)"
)

// dimsOf names the cells of a row's key.
func (b *multiBuild) dimsOf(k rowKey) map[string]Cell {
	cat := b.cat
	dims := make(map[string]Cell, len(b.q.By))
	for i, d := range b.q.By {
		var cell Cell
		id := k.ids[i]
		switch d {
		case DimAdvertiser:
			if id != 0 {
				cell = Cell{ID: strconv.FormatInt(id, 10), Name: cat.Advertisers[id]}
			} else {
				cell = Cell{Name: NoCampaign}
			}
		case DimCampaign:
			if id != 0 {
				cell = Cell{ID: strconv.FormatInt(id, 10)}
				if camp := cat.Campaigns[id]; camp != nil {
					cell.Name = camp.Name
				}
			} else {
				cell = Cell{Name: NoCampaign}
			}
		case DimAd:
			if id != 0 {
				cell = Cell{ID: strconv.FormatInt(id, 10)}
			} else {
				cell = Cell{Name: BidAd}
			}
		case DimPlacement:
			if pl := cat.Placements[id]; pl != nil {
				cell = Cell{ID: strconv.FormatInt(id, 10), Name: pl.Name}
			}
		default:
			cell = Cell{Value: k.vals[i]}
		}
		dims[d] = cell
	}
	return dims
}

// flatImpressions are the verified impressions of people, by campaign
// and bucket, of every flat-priced campaign among cells (those of cq):
// all of a campaign's, whatever the report's filters and dimensions, so
// that a row's share of a fee is its part of all the campaign delivered
// in the bucket — a statement of one site, or a publisher's report of
// its sites, never divides a fee by its own impressions only.
func (b *multiBuild) flatImpressions(ctx context.Context, r Reader, cq reportrow.CubeQuery, cells []reportrow.CubeRow) (map[flatKey]int64, error) {
	var flat []int64
	for _, c := range cells {
		if camp := b.cat.Campaigns[c.Campaign]; camp != nil && FlatSpend(camp, b.q.From, b.q.To) > 0 && !slices.Contains(flat, c.Campaign) {
			flat = append(flat, c.Campaign)
		}
	}
	imps := map[flatKey]int64{}
	if len(flat) == 0 {
		return imps, nil
	}
	all, err := r.CubeSums(ctx, reportrow.CubeQuery{Grain: reportrow.GrainCP, From: cq.From, To: cq.To,
		Group: []string{DimCampaign, "day"}, Campaigns: flat})
	if err != nil {
		return nil, err
	}
	for _, c := range all {
		imps[flatKey{c.Campaign, b.bucketOf(c.Day)}] += c.Verified("impressions")
	}
	return imps, nil
}

// addCells merges the cube's cells into rows, with what each campaign's
// price makes of them: a flat-priced campaign's fee shared among its
// bucket's rows by their verified impressions of people, out of flatImps
// (flatImpressions: all the campaign's in the bucket, people's as a
// report without bots counts them). Invalid traffic's cells take no part
// of a fee.
func (b *multiBuild) addCells(cells []reportrow.CubeRow, flatImps map[flatKey]int64) {
	cat, out := b.cat, b.out
	flats := map[flatKey]marquee.Micros{} // a campaign's flat fee a bucket
	var total Counts
	for _, c := range cells {
		if c.Campaign == 0 && b.q.OnlyCampaigns {
			continue
		}
		k := b.keyOf(b.bucketOf(c.Day), c.Campaign, c.Placement, c.Ad, c.Country, c.Device, c.Value, c.IVT)
		r := b.rowOf(k)
		r.Counts.Add(c.Counts)
		total.Add(c.Counts)
		camp := cat.Campaigns[c.Campaign]
		if c.SpendNanos > 0 {
			r.priced, out.Totals.priced = true, true
		}
		if camp == nil || camp.Price == nil {
			continue
		}
		r.priced, out.Totals.priced = true, true
		fk := flatKey{c.Campaign, k.t}
		flat, ok := flats[fk]
		if !ok {
			from, to := b.window(k.t)
			flat = FlatSpend(camp, from, to)
			flats[fk] = flat
		}
		var part marquee.Micros
		if n := flatImps[fk]; flat > 0 && n > 0 && (c.IVT == 0 || c.IVT == uint8(ivt.Burst)) { // the bucket's share, by verified impressions
			part = flat.MulDiv(c.Verified("impressions"), n)
			r.flat += part
			out.Totals.flat += part
		}
		if b.q.Publisher {
			var share float64
			if pl := cat.Placements[c.Placement]; pl != nil {
				share = cat.Shares[pl.Site]
			}
			net := share * float64(c.SpendNanos+int64(part.Nanos()))
			r.net += net
			out.Totals.net += net
		}
	}
	out.Totals.Metrics = withCounts(out.Totals.Metrics, total)
}

// addRequests adds the decisions' requests of cq's placements and range
// to the rows of their placement, bucket, country and device.
func (b *multiBuild) addRequests(ctx context.Context, r Reader, cq reportrow.CubeQuery) error {
	q := b.q
	rq := reportrow.RequestQuery{From: cq.From, To: cq.To, Placements: cq.Placements, By: []string{"placement"}}
	if q.Granularity != Total {
		rq.By = append(rq.By, "hour")
	}
	for _, d := range q.By {
		if d == DimCountry || d == DimDevice {
			rq.By = append(rq.By, d)
		}
	}
	sums, err := r.RequestSums(ctx, rq)
	if err != nil {
		return err
	}
	var total reportrow.RequestRow
	for _, s := range sums {
		if len(q.Countries) > 0 && !slices.Contains(q.Countries, s.Country) || len(q.Devices) > 0 && !slices.Contains(q.Devices, s.Device) {
			continue
		}
		k := b.keyOf(b.bucketOf(s.Hour), 0, s.Placement, 0, s.Country, s.Device, "", 0)
		b.rowOf(k).addRequests(&s)
		total.Add(&s)
	}
	b.out.Totals.addRequests(&total)
	return nil
}

// sorted is the rows in the report's order — by bucket, then impressions
// and requests (largest first), then the dimensions' ids and values —
// cut to the query's limit (the report marked truncated), each with its
// metrics and named cells. The first three are copied beside each row's
// pointer, so that most comparisons read neither the row nor its key
// (300,000 rows: 1.2 s → 0.4 s, BenchmarkReport).
func (b *multiBuild) sorted() []MultiRow {
	type sortKey struct {
		t          string
		imps, reqs int64
		kr         *keyedRow
	}
	keys := make([]sortKey, len(b.order))
	for i := range b.order {
		r := b.order[i].r
		keys[i] = sortKey{b.order[i].k.t, r.Impressions, ptrInt(r.Requests), &b.order[i]}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		// One comparison after another, each only when the last was
		// equal (cmp.Or would evaluate them all).
		if c := strings.Compare(a.t, b.t); c != 0 {
			return c
		}
		if c := cmp.Compare(b.imps, a.imps); c != 0 {
			return c
		}
		if c := cmp.Compare(b.reqs, a.reqs); c != 0 {
			return c
		}
		if c := slices.Compare(a.kr.k.ids[:], b.kr.k.ids[:]); c != 0 {
			return c
		}
		return slices.Compare(a.kr.k.vals[:], b.kr.k.vals[:])
	})
	if b.q.Limit > 0 && len(keys) > b.q.Limit {
		keys, b.out.Truncated = keys[:b.q.Limit], true
	}
	list := make([]MultiRow, len(keys))
	for i, sk := range keys {
		r := sk.kr.r
		r.Metrics = withCounts(r.Metrics, r.Counts)
		r.money(b.q.Publisher)
		r.Dims = b.dimsOf(sk.kr.k)
		list[i] = *r
	}
	return list
}

// nameAds gives the ad cells of list their titles, read in one call.
func nameAds(ctx context.Context, cat *Catalog, list []MultiRow) error {
	var adIDs []int64
	for i := range list {
		if id, err := strconv.ParseInt(list[i].Dims[DimAd].ID, 10, 64); err == nil {
			adIDs = append(adIDs, id)
		}
	}
	slices.Sort(adIDs)
	titles, err := cat.AdTitles(ctx, slices.Compact(adIDs))
	if err != nil {
		return err
	}
	for i := range list {
		if c, ok := list[i].Dims[DimAd]; ok && c.ID != "" {
			id, _ := strconv.ParseInt(c.ID, 10, 64)
			c.Name = titles[id]
			list[i].Dims[DimAd] = c
		}
	}
	return nil
}

// money sets m's Money, when it is priced: the events' cost (rounded
// to micro-units once, for the row) and its flat fees' share.
func (m *MultiMetrics) money(publisher bool) {
	if publisher {
		m.pub = true
		c := &m.Metrics.Counts
		c.Conversions, c.UnverifiedConversions, c.PostViewConversions, c.ConversionValue = 0, 0, 0, 0
		m.Metrics.PostClickConversions, m.Metrics.ConversionValue = 0, 0
		if m.priced {
			rev := marquee.Nanos(math.Round(m.net)).Micros()
			m.Net = &NetMoney{Revenue: rev, ECPM: rev.MulDiv(1000, c.Verified("impressions"))}
		}
		return
	}
	if m.priced {
		m.Money = MoneyOf(marquee.Nanos(m.SpendNanos).Micros()+m.flat, &m.Counts)
	}
}

// withCounts is m with counts c and their rates (its requests and bids
// kept).
func withCounts(m Metrics, c Counts) Metrics {
	out := metricsOf(c)
	out.Requests, out.Filled, out.FillRate, out.Unfilled, out.InvalidRequests, out.LimitedRequests = m.Requests, m.Filled, m.FillRate, m.Unfilled, m.InvalidRequests, m.LimitedRequests
	out.Limited, out.LimitedRate = m.Limited, m.LimitedRate
	out.Bids, out.Wins, out.WinRate = m.Bids, m.Wins, m.WinRate
	return out
}

func ptrInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// idsOf is the ids of m's entries that keep keeps, of those of within
// (none: any).
func idsOf[T any](m map[int64]T, within []int64, keep func(T) bool) []int64 {
	var ids []int64
	for id, v := range m {
		if keep(v) && (len(within) == 0 || slices.Contains(within, id)) {
			ids = append(ids, id)
		}
	}
	return ids
}

// dedupe is s without repeats, in first-seen order.
func dedupe[T comparable](s []T) []T {
	var out []T
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
