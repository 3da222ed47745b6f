package reports

import (
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee"
	"marquee/ivt"
	"marquee/reportrow"
)

// Reader is what reports are read from.
type Reader interface {
	ReportSums(ctx context.Context, q SumQuery, daily bool) ([]Sum, error)
	ReportTop(ctx context.Context, q SumQuery, daily bool, metric string, limit int) ([]Sum, error)
	ReportTags(ctx context.Context, q SumQuery, daily bool, metric string, limit int) ([]Sum, error)
	ReportReach(ctx context.Context, entity string, id, from, to int64) ([]Reach, error)
	CubeSums(ctx context.Context, q reportrow.CubeQuery) ([]reportrow.CubeRow, error)
	RequestSums(ctx context.Context, q reportrow.RequestQuery) ([]reportrow.RequestRow, error)
}

// UniquesReader is a Reader that counts uniques itself (ClickHouse)
// rather than returning sketches (ReportReach): the distinct uids of an
// entity's (id 0: every one's) events of the UTC days that start in
// [from, to), over them all and by bucket (starts: the buckets' starts,
// ascending; a day is in the last bucket that starts at or before it).
type UniquesReader interface {
	ReportUniques(ctx context.Context, entity string, id, from, to int64, starts []int64) (int64, []int64, error)
}

// Granularities of a report's series.
const (
	Hour  = "hour"
	Day   = "day"
	Month = "month"
)

// MaxRange is the longest range a report covers.
const MaxRange = 2 * 366 * 24 * time.Hour

// Query is one report: an ad's, a link's, or (ID 0) every ad's or link's.
type Query struct {
	Entity      string
	ID          int64
	From, To    time.Time // [From, To)
	Granularity string
	By          string // "", "country", "platform", one of reportrow.Dims or reportrow.KVDim+a report key (a breakdown of whole UTC days)
	Bots        bool
	Loc         *time.Location // day and month boundaries
	// Top, when > 0, asks for that many ads or links (or, with TopTags,
	// links' tags) by TopMetric.
	Top       int
	TopMetric string
	TopTags   bool
}

// Metrics are a report's figures: counts, and the rates made of them —
// the click-through rate (clicks ÷ impressions), the viewability rates
// (viewable ÷ measured impressions: display by the tag, video by the
// player, apart as GAM reports them) and the video completion rate
// (completes ÷ starts), each 0 where it divides by 0 — and unique users.
type Metrics struct {
	Counts
	// Of the conversions, those attributed to a click (post-click: all
	// but the post-view ones), and the attributed conversions' value.
	PostClickConversions int64          `json:"postClickConversions"`
	ConversionValue      marquee.Micros `json:"conversionValue"`
	CTR                  float64        `json:"ctr"`
	Viewability          float64        `json:"viewability"`
	VideoViewability     float64        `json:"videoViewability"`
	CompletionRate       float64        `json:"completionRate"`
	Uniques              *int64         `json:"uniques,omitempty"`
	// Requests, filled slots (by a campaign or the house ad) and the fill
	// rate (filled ÷ requests), and the unfilled slots by reason
	// (marquee.OutcomeNames), in reports of placements and sites
	// (docs/api.md#requests-and-fill).
	Requests *int64           `json:"requests,omitempty"`
	Filled   *int64           `json:"filled,omitempty"`
	FillRate *float64         `json:"fillRate,omitempty"`
	Unfilled map[string]int64 `json:"unfilled,omitempty"`
	// InvalidRequests are the slots invalid traffic asked for, by reason
	// (docs/ivt.md): not in Requests, which are people's.
	InvalidRequests map[string]int64 `json:"invalidRequests,omitempty"`
	// LimitedRequests are people's slots whose privacy signals denied an
	// activity, by each signal their request carried
	// (docs/privacy.md#reports): how much traffic opted out.
	LimitedRequests map[string]int64 `json:"limitedRequests,omitempty"`
	// Limited are the slots one signal limited, and LimitedRate them ÷
	// Requests: a row of a report by privacy.
	Limited     *int64   `json:"limited,omitempty"`
	LimitedRate *float64 `json:"limitedRate,omitempty"`
	// Bids, Wins and the win rate (wins ÷ bids): header bidding's, in
	// reports by bidder.
	Bids    *int64   `json:"bids,omitempty"`
	Wins    *int64   `json:"wins,omitempty"`
	WinRate *float64 `json:"winRate,omitempty"`
}

// addBids adds bids and wins to m.
func (m *Metrics) addBids(bids, wins int64) {
	if m.Bids != nil {
		bids += *m.Bids
		wins += *m.Wins
	}
	rate := ratio(wins, bids)
	m.Bids, m.Wins, m.WinRate = &bids, &wins, &rate
}

// filledOf is how many of a request row's slots were filled: by a
// campaign or by the house ad.
func filledOf(r *reportrow.RequestRow) int64 {
	return r.Outcomes[marquee.Filled] + r.Outcomes[marquee.House]
}

// addRequests adds a request row's slots to m.
func (m *Metrics) addRequests(r *reportrow.RequestRow) {
	n, f := r.Requests(), filledOf(r)
	if m.Requests != nil {
		n += *m.Requests
		f += *m.Filled
	}
	rate := ratio(f, n)
	m.Requests, m.Filled, m.FillRate = &n, &f, &rate
	for i, c := range r.Invalid {
		if c > 0 {
			if m.InvalidRequests == nil {
				m.InvalidRequests = map[string]int64{}
			}
			m.InvalidRequests[reportrow.InvalidNames[i]] += c
		}
	}
	for i, c := range r.Limited {
		if c > 0 {
			if m.LimitedRequests == nil {
				m.LimitedRequests = map[string]int64{}
			}
			m.LimitedRequests[reportrow.LimitedNames[i]] += c
		}
	}
	for o, c := range r.Outcomes {
		if c > 0 && !marquee.Outcome(o).IsFilled() {
			if m.Unfilled == nil {
				m.Unfilled = map[string]int64{}
			}
			m.Unfilled[marquee.OutcomeNames[o]] += c
		}
	}
}

// metricsOf is c with its rates. Where any impression is verified, CTR
// is verified clicks ÷ verified impressions (a beacon cannot raise it);
// else (the ad contract's ads, counted by beacons alone) clicks ÷
// impressions. Viewability is verified views ÷ measured impressions:
// only the tag measures those, so it is display viewability, never above
// 1; video viewability is the player's viewable ÷ measured.
func metricsOf(c Counts) Metrics {
	ctr := ratio(c.Clicks, c.Impressions)
	if c.Impressions > c.UnverifiedImpressions {
		ctr = ratio(c.Verified("clicks"), c.Verified("impressions"))
	}
	return Metrics{Counts: c, CTR: ctr, Viewability: ratio(c.Verified("views"), c.Measured),
		VideoViewability: ratio(c.VideoViews, c.VideoMeasured), CompletionRate: ratio(c.Completes, c.Starts),
		PostClickConversions: c.Conversions - c.PostViewConversions, ConversionValue: marquee.Micros(c.ConversionValue)}
}

// ratio is n ÷ d, or 0 when d is 0.
func ratio(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// Point is one bucket of a series.
type Point struct {
	T string `json:"t"`
	Counts
	// Uniques is null in hourly series: reach is kept per day.
	Uniques *int64 `json:"uniques"`
	// Spend is what a campaign's price makes of the bucket (campaign
	// reports; see Reporter.Price).
	Spend *marquee.Micros `json:"spend,omitempty"`
	// Requests and Filled are a placement's slots asked for and filled
	// in the bucket (placement reports).
	Requests *int64 `json:"requests,omitempty"`
	Filled   *int64 `json:"filled,omitempty"`
}

// Part is one value of a breakdown, or one ad, link or tag of a top
// list: the field of its dimension is set.
type Part struct {
	Country     string `json:"country,omitempty"`
	Platform    string `json:"platform,omitempty"`
	Referrer    string `json:"referrer,omitempty"` // a host, or "direct"
	Browser     string `json:"browser,omitempty"`
	OS          string `json:"os,omitempty"`
	Destination *int   `json:"destination,omitempty"` // an A/B destination's index
	ErrorCode   string `json:"errorCode,omitempty"`   // a VAST error code, "none" or "other" (by=errorCode)
	URL         string `json:"url,omitempty"`         // that destination's URL, as the link holds it now
	Tag         string `json:"tag,omitempty"`
	Value       string `json:"value,omitempty"` // a report key's value (by=kv.KEY)
	ID          string `json:"id,omitempty"`    // an ad's, campaign's or advertiser's id, a placement's id, a link's code
	Title       string `json:"title,omitempty"` // an ad's title (top lists)
	Name        string `json:"name,omitempty"`  // a campaign's, advertiser's or placement's name (top lists)
	Metrics
	// Spend is what a campaign's price (an advertiser's campaigns'
	// prices) make of the part, in the report's currency.
	Spend *marquee.Micros `json:"spend,omitempty"`
}

// label is the value of the part's dimension, and the dimension's name.
func (p *Part) label() (value, dim string) {
	switch {
	case p.Country != "":
		return p.Country, "country"
	case p.Platform != "":
		return p.Platform, "platform"
	case p.Referrer != "":
		return p.Referrer, reportrow.DimReferrer
	case p.Browser != "":
		return p.Browser, reportrow.DimBrowser
	case p.OS != "":
		return p.OS, reportrow.DimOS
	case p.Destination != nil:
		return strconv.Itoa(*p.Destination), reportrow.DimDestination
	case p.ErrorCode != "":
		return p.ErrorCode, reportrow.DimError
	case p.Tag != "":
		return p.Tag, "tag"
	case p.Value != "":
		return p.Value, "value"
	}
	return p.ID, "id"
}

// Report is the answer to a Query.
type Report struct {
	Window
	Totals Metrics `json:"totals"`
	// BotsLeftOut are invalid traffic's events in the range that Totals
	// leave out (nil when they are included), and Invalid the same by
	// reason (docs/ivt.md: "crawler", "datacenter", "fastClick", …).
	BotsLeftOut *Counts           `json:"botsLeftOut,omitempty"`
	Invalid     map[string]Counts `json:"invalid,omitempty"`
	// A campaign's report adds its goal's progress (over the whole flight)
	// and what its price makes of Totals (see Progress and Spend).
	// An advertiser's report adds the spend of its campaigns. Currency
	// is the spend's (ISO 4217, configured once: -currency).
	Goal      *GoalProgress   `json:"goal,omitempty"`
	Spend     *marquee.Micros `json:"spend,omitempty"`
	Currency  string          `json:"currency,omitempty"`
	Series    []Point         `json:"series"`
	Breakdown []Part          `json:"breakdown,omitempty"`
	Top       []Part          `json:"top,omitempty"`
}

// ForPublisher leaves out of r what a publisher's account may not see:
// the advertisers' conversions and their value, and spend (its money is
// its revenue: reports by several dimensions, docs/api.md#sites).
func (r *Report) ForPublisher() {
	blank := func(c *Counts) {
		c.Conversions, c.UnverifiedConversions, c.PostViewConversions, c.ConversionValue = 0, 0, 0, 0
	}
	blank(&r.Totals.Counts)
	r.Totals = withCounts(r.Totals, r.Totals.Counts)
	if r.BotsLeftOut != nil {
		blank(r.BotsLeftOut)
	}
	for k, c := range r.Invalid {
		blank(&c)
		r.Invalid[k] = c
	}
	r.Spend, r.Goal = nil, nil
	for i := range r.Series {
		blank(&r.Series[i].Counts)
		r.Series[i].Spend = nil
	}
	for _, parts := range [][]Part{r.Breakdown, r.Top} {
		for i := range parts {
			blank(&parts[i].Counts)
			parts[i].Spend = nil
			parts[i].Metrics = withCounts(parts[i].Metrics, parts[i].Counts)
		}
	}
}

// Window is what a report covers, and how its series is cut.
type Window struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Granularity string `json:"granularity"`
	TZ          string `json:"tz"`
}

// Reporter answers queries from a Reader.
type Reporter struct {
	r Reader
	// HourlyRetention is how long hourly rows are kept before they are
	// rolled into daily ones.
	HourlyRetention time.Duration
	// Now is the clock of default ranges and retention.
	Now func() time.Time
	// Currency is the ISO 4217 code of prices and spend (see
	// ParseCurrency).
	Currency string
	// Keys are the install's report keys (nil none): a report may be
	// read by=kv.KEY of one of them.
	Keys *KeySet
	// Bids, when set, reads header bidding's counts: reports by bidder.
	Bids BidReader
}

// NewReporter returns a Reporter over r, in DefaultCurrency.
func NewReporter(r Reader, hourlyRetention time.Duration) *Reporter {
	return &Reporter{r: r, HourlyRetention: hourlyRetention, Now: time.Now, Currency: DefaultCurrency}
}

// DefaultGranularity picks a granularity from the range: up to 48 hours
// hourly, up to 92 days daily, else monthly.
func DefaultGranularity(from, to time.Time) string {
	switch d := to.Sub(from); {
	case d <= 48*time.Hour:
		return Hour
	case d <= 92*24*time.Hour:
		return Day
	}
	return Month
}

// Check reports what is wrong with q's range and granularity, by
// parameter.
func (rp *Reporter) Check(q *Query) marquee.Problems {
	p := marquee.Problems{}
	switch {
	case !q.From.Before(q.To):
		p["from"] = "must be before to"
	case q.To.Sub(q.From) > MaxRange:
		p["to"] = "the range may span at most 2 years"
	case q.Granularity == Hour && q.From.Before(rp.Now().Add(-rp.HourlyRetention)):
		p["granularity"] = fmt.Sprintf("hourly reports reach back %v (the hourly retention); ask for days or months", rp.HourlyRetention)
	}
	return p
}

// bucket returns the start of t's bucket.
func bucket(t time.Time, gran string, loc *time.Location) time.Time {
	t = t.In(loc)
	switch gran {
	case Hour:
		return t.Truncate(time.Hour)
	case Day:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	}
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
}

func next(t time.Time, gran string) time.Time {
	switch gran {
	case Hour:
		return t.Add(time.Hour)
	case Day:
		return t.AddDate(0, 0, 1)
	}
	return t.AddDate(0, 1, 0)
}

// Report answers q. Hourly and daily rows are both read: an hour is in one
// of them, whether or not it has been rolled up yet. Daily rows are UTC
// days, and so are reach sketches: in another tz a day or month bucket
// counts them by the UTC day they start.
func (rp *Reporter) Report(ctx context.Context, q Query) (*Report, error) {
	loc := q.Loc
	if loc == nil {
		loc = time.UTC
	}
	start := bucket(q.From, q.Granularity, loc)
	// With a breakdown by country or platform, one read serves both:
	// sums by time and dimension. The other dimensions are kept by day
	// apart, and read below.
	sq := SumQuery{Entity: q.Entity, ID: q.ID, From: start.Unix(), To: q.To.Unix(), By: q.By, Bots: q.Bots}
	dayDim := reportrow.IsDim(q.By)
	if dayDim {
		sq.By = ""
	}
	var sums []Sum
	for _, daily := range []bool{false, true} {
		s, err := rp.r.ReportSums(ctx, sq, daily)
		if err != nil {
			return nil, err
		}
		sums = append(sums, s...)
	}
	// The series' buckets, in order, and where each time falls.
	var starts []time.Time
	for t := start; t.Before(q.To); t = next(t, q.Granularity) {
		starts = append(starts, t)
	}
	index := func(unix int64) int {
		t := time.Unix(unix, 0)
		i, found := slices.BinarySearchFunc(starts, t, func(a, b time.Time) int { return a.Compare(b) })
		if !found {
			i--
		}
		return i
	}
	series := make([]Counts, len(starts))
	var total, bots Counts
	byDim, invalid := map[string]*Counts{}, map[string]*Counts{}
	if !q.Bots {
		bq := sq
		bq.By, bq.OnlyBots = reportrow.ByIVT, true
		for _, daily := range []bool{false, true} {
			s, err := rp.r.ReportSums(ctx, bq, daily)
			if err != nil {
				return nil, err
			}
			for _, b := range s {
				if i := index(b.Time); i >= 0 && i < len(series) {
					bots.Add(b.Counts)
					addTo(invalid, ReasonName(b.Dim), &b.Counts)
				}
			}
		}
	}
	for _, s := range sums {
		if i := index(s.Time); i >= 0 && i < len(series) {
			series[i].Add(s.Counts)
			total.Add(s.Counts)
			addTo(byDim, s.Dim, &s.Counts)
		}
	}
	out := &Report{Window: Window{From: q.From.UTC().Format(time.RFC3339), To: q.To.UTC().Format(time.RFC3339),
		Granularity: q.Granularity, TZ: loc.String()}, Totals: metricsOf(total)}
	if !q.Bots {
		out.BotsLeftOut = &bots
		out.Invalid = make(map[string]Counts, len(invalid))
		for k, c := range invalid {
			out.Invalid[k] = *c
		}
	}
	// Reach: one sketch per bucket (per day; none for hours) and one for
	// the whole range, merged over slots and days.
	uniques, perBucket, err := rp.uniques(ctx, q, start.Unix()/86400*86400, starts, index)
	if err != nil {
		return nil, err
	}
	out.Totals.Uniques = &uniques
	out.Series = make([]Point, len(starts))
	for i, t := range starts {
		c := series[i]
		out.Series[i] = Point{T: t.Format(time.RFC3339), Counts: c}
		if q.Granularity != Hour {
			out.Series[i].Uniques = &perBucket[i]
		}
	}
	if q.Entity == marquee.EntityPlacement {
		// A placement's (every placement's) requests and fill.
		rq := reportrow.RequestQuery{From: start.Unix(), To: q.To.Unix(), By: []string{"hour"}}
		if q.ID != 0 {
			rq.Placements = []int64{q.ID}
		}
		reqs, err := rp.r.RequestSums(ctx, rq)
		if err != nil {
			return nil, err
		}
		var none reportrow.RequestRow
		out.Totals.addRequests(&none) // 0 requests is a figure too
		for _, r := range reqs {
			i := index(r.Hour)
			if i < 0 || i >= len(series) {
				continue
			}
			out.Totals.addRequests(&r)
			p := &out.Series[i]
			n, f := r.Requests()+ptrInt(p.Requests), filledOf(&r)+ptrInt(p.Filled)
			p.Requests, p.Filled = &n, &f
		}
	}
	if dayDim {
		// The days that start in the range (reach's rule too).
		dq := sq
		dq.By, dq.From = q.By, start.Unix()/86400*86400
		sums, err := rp.r.ReportSums(ctx, dq, true)
		if err != nil {
			return nil, err
		}
		byDim = map[string]*Counts{}
		for _, s := range sums {
			addTo(byDim, s.Dim, &s.Counts)
		}
	}
	if q.By != "" {
		out.Breakdown = breakdown(byDim, q.By)
	}
	switch {
	case q.Top > 0 && q.TopTags:
		out.Top, err = rp.topTags(ctx, sq, q.TopMetric, q.Top)
	case q.Top > 0:
		out.Top, err = rp.top(ctx, sq, q.TopMetric, q.Top)
	}
	return out, err
}

// uniques are the reach of q's entity over the days that start in [from,
// q.To) and in each of the buckets that start at starts (by their index;
// none by hour).
func (rp *Reporter) uniques(ctx context.Context, q Query, from int64, starts []time.Time, index func(int64) int) (int64, []int64, error) {
	if u, ok := rp.r.(UniquesReader); ok {
		var unix []int64
		if q.Granularity != Hour {
			for _, t := range starts {
				unix = append(unix, t.Unix())
			}
		}
		total, per, err := u.ReportUniques(ctx, q.Entity, q.ID, from, q.To.Unix(), unix)
		return total, append(per, make([]int64, len(starts)-len(per))...), err
	}
	sketches, err := rp.r.ReportReach(ctx, q.Entity, q.ID, from, q.To.Unix())
	if err != nil {
		return 0, nil, err
	}
	bucket := func(day int64) int { return -1 }
	if q.Granularity != Hour {
		bucket = index
	}
	return reach(sketches, len(starts), bucket)
}

// breakdown lists the sums by a dimension, largest impressions first.
func breakdown(byDim map[string]*Counts, by string) []Part {
	parts := make([]Part, 0, len(byDim))
	for dim, c := range byDim {
		p := Part{Metrics: metricsOf(*c)}
		switch by {
		case "country":
			p.Country = dim
		case "platform":
			p.Platform = dim
		case reportrow.DimReferrer:
			p.Referrer = dim
		case reportrow.DimBrowser:
			p.Browser = dim
		case reportrow.DimOS:
			p.OS = dim
		case reportrow.DimDestination:
			n, _ := strconv.Atoi(dim)
			p.Destination = &n
		case reportrow.DimError:
			p.ErrorCode = dim
		default:
			if strings.HasPrefix(by, reportrow.KVDim) {
				p.Value = dim
			}
		}
		parts = append(parts, p)
	}
	slices.SortFunc(parts, func(a, b Part) int {
		if a.Impressions != b.Impressions {
			return int(b.Impressions - a.Impressions)
		}
		if a.Clicks != b.Clicks {
			return int(b.Clicks - a.Clicks)
		}
		if a.Errors != b.Errors {
			return int(b.Errors - a.Errors)
		}
		va, _ := a.label()
		vb, _ := b.label()
		return cmp.Compare(va, vb)
	})
	return parts
}

// topTags returns the top tags of the range by metric: the sums of the
// links that carry each, from the hourly totals and (for a range that
// reaches before the hourly retention) the daily rows.
func (rp *Reporter) topTags(ctx context.Context, sq SumQuery, metric string, limit int) ([]Part, error) {
	byTag := map[string]*Counts{}
	err := rp.eachTop(ctx, sq, metric, limit, rp.r.ReportTags, func(s Sum) { addTo(byTag, s.Dim, &s.Counts) })
	if err != nil {
		return nil, err
	}
	parts := make([]Part, 0, len(byTag))
	for tag, c := range byTag {
		parts = append(parts, Part{Tag: tag, Metrics: metricsOf(*c)})
	}
	slices.SortFunc(parts, func(a, b Part) int {
		if c := byMetric(metric)(a.Metrics, b.Metrics); c != 0 {
			return c
		}
		return cmp.Compare(a.Tag, b.Tag)
	})
	return parts[:min(limit, len(parts))], nil
}

// byMetric orders metrics by one of them, largest first.
func byMetric(metric string) func(a, b Metrics) int {
	value := func(m Metrics) float64 {
		if metric == "ctr" {
			return m.CTR
		}
		return float64(m.Of(metric))
	}
	return func(a, b Metrics) int { return cmp.Compare(value(b), value(a)) }
}

// top returns the top ads or links of the range by metric. Within the
// hourly retention one query answers; a range reaching into daily rows
// merges both tables' full sums.
func (rp *Reporter) top(ctx context.Context, sq SumQuery, metric string, limit int) ([]Part, error) {
	byID := map[int64]*Counts{}
	names, titles := map[int64]string{}, map[int64]string{}
	err := rp.eachTop(ctx, sq, metric, limit, rp.r.ReportTop, func(s Sum) {
		addTo(byID, s.ID, &s.Counts)
		names[s.ID], titles[s.ID] = s.Dim, s.Title
	})
	if err != nil {
		return nil, err
	}
	type entry struct {
		id int64
		m  Metrics
	}
	var all []entry
	for id, c := range byID {
		all = append(all, entry{id, metricsOf(*c)})
	}
	slices.SortFunc(all, func(a, b entry) int {
		if c := byMetric(metric)(a.m, b.m); c != 0 {
			return c
		}
		return int(a.id - b.id)
	})
	parts := make([]Part, 0, min(limit, len(all)))
	for _, e := range all[:min(limit, len(all))] {
		p := Part{ID: names[e.id], Metrics: e.m}
		if sq.Entity == marquee.EntityAd {
			p.Title = titles[e.id]
		} else {
			p.Name = titles[e.id]
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// eachTop calls add with every sum a top list reads (read: ReportTop or
// ReportTags): within the hourly retention one query's, the first limit
// by metric; a range reaching into daily rows, both tables' full sums,
// which the caller merges and ranks.
func (rp *Reporter) eachTop(ctx context.Context, sq SumQuery, metric string, limit int,
	read func(ctx context.Context, q SumQuery, daily bool, metric string, limit int) ([]Sum, error), add func(Sum)) error {
	both := sq.From < rp.Now().Add(-rp.HourlyRetention).Unix()
	for _, daily := range []bool{false, true} {
		if daily && !both {
			// Daily rows exist only before the cutoff (and for hours that
			// a rollup has just moved, none of which is in range).
			continue
		}
		lim := limit
		if both {
			lim = 0
		}
		sums, err := read(ctx, sq, daily, metric, lim)
		if err != nil {
			return err
		}
		for _, s := range sums {
			add(s)
		}
	}
	return nil
}

// addTo adds *c to m[k].
// ReasonName is the name of the invalid-traffic reason a report row
// stores (its bot column, in decimal; ivt.Reason).
func ReasonName(code string) string {
	n, err := strconv.Atoi(code)
	if err != nil || n <= 0 || n >= int(ivt.NumReasons) {
		return ivt.Crawler.String()
	}
	return ivt.Reason(n).String()
}

func addTo[K comparable](m map[K]*Counts, k K, c *Counts) {
	p := m[k]
	if p == nil {
		p = &Counts{}
		m[k] = p
	}
	p.Add(*c)
}

// inert keeps a CSV cell from being run as a formula by a spreadsheet
// (OWASP's CSV injection advice): a cell that starts with =, +, -, @, a
// tab or a carriage return gets a leading '. Only text cells need it:
// numbers are written by Marquee. A link code may start with -.
func inert(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}

// counts appends c's counts to cells, in the order of reportrow.Columns
// (the CSV's headings).
func counts(cells []string, c *Counts) []string {
	for _, p := range c.Fields() {
		cells = append(cells, strconv.FormatInt(*p, 10))
	}
	return cells
}

// WriteCSV writes a report as CSV: one row per breakdown value when it has
// a breakdown, else one per top entry when it has a top list, else one
// per bucket of its series. Top entries add their name (or title), and
// rows with spend add it and its currency. Text cells are made inert (see
// inert).
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	ftoa := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	money := func(cells []string, s *marquee.Micros) []string {
		if s == nil {
			return append(cells, "", "")
		}
		return append(cells, s.String(), r.Currency)
	}
	switch {
	case len(r.Breakdown) > 0 || len(r.Top) > 0:
		parts := r.Breakdown
		if len(parts) == 0 {
			parts = r.Top
		}
		named := slices.ContainsFunc(parts, func(p Part) bool { return p.Title != "" || p.Name != "" })
		spent := slices.ContainsFunc(parts, func(p Part) bool { return p.Spend != nil })
		_, first := parts[0].label()
		head := []string{first}
		if named {
			head = append(head, "name")
		}
		head = append(append(head, reportrow.Columns[:]...), "ctr", "viewability", "video_viewability", "completion_rate")
		if spent {
			head = append(head, "spend", "currency")
		}
		cw.Write(head)
		for _, p := range parts {
			value, _ := p.label()
			cells := []string{inert(value)}
			if named {
				cells = append(cells, inert(cmp.Or(p.Name, p.Title)))
			}
			cells = append(counts(cells, &p.Counts), ftoa(p.CTR), ftoa(p.Viewability), ftoa(p.VideoViewability), ftoa(p.CompletionRate))
			if spent {
				cells = money(cells, p.Spend)
			}
			cw.Write(cells)
		}
	default:
		spent := r.Spend != nil
		head := append(append([]string{"t"}, reportrow.Columns[:]...), "uniques", "ctr")
		if spent {
			head = append(head, "spend", "currency")
		}
		cw.Write(head)
		for _, p := range r.Series {
			u := ""
			if p.Uniques != nil {
				u = itoa(*p.Uniques)
			}
			m := metricsOf(p.Counts)
			cells := append(counts([]string{p.T}, &p.Counts), u, ftoa(m.CTR))
			if spent {
				cells = money(cells, p.Spend)
			}
			cw.Write(cells)
		}
	}
	cw.Flush()
	return cw.Error()
}
