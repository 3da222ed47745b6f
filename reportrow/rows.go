// Package reportrow holds what reports are stored as — the rows a Tally adds
// and a store keeps (counts by hour or day and dimensions, reach
// sketches, how far each event file is counted) and how two sketches
// merge — apart from the rest of reports, so that a store uses them
// without the collector, the scanner or GeoIP.
package reportrow

import (
	"slices"
	"strings"
)

// Key names one report row: an ad or a link, the UTC hour (or day) it
// counts, and its dimensions.
type Key struct {
	Entity   string // marquee.EntityAd or marquee.EntityLink
	ID       int64
	Time     int64 // unix seconds of the start of the UTC hour (hourly rows) or day (daily rows)
	Country  string
	Platform string
	// IVT is why the row's events are invalid traffic (an ivt.Reason:
	// stored in the bot column; 0 a person's).
	IVT uint8
}

// Counts are what a row counts: impressions, clicks and conversions;
// of the impressions, those whose viewability was measured (by the tag)
// and those that were viewable by MRC's rule (views); and video plays
// that started and reached each quartile (VAST tracking events).
type Counts struct {
	Impressions    int64 `json:"impressions"`
	Clicks         int64 `json:"clicks"`
	Conversions    int64 `json:"conversions"`
	Measured       int64 `json:"measured"`
	Views          int64 `json:"views"`
	Starts         int64 `json:"starts"`
	FirstQuartiles int64 `json:"firstQuartiles"`
	Midpoints      int64 `json:"midpoints"`
	ThirdQuartiles int64 `json:"thirdQuartiles"`
	Completes      int64 `json:"completes"`
	// Of the impressions, clicks, conversions and views above, those
	// that no valid decision token vouches for: beacons that name an ad,
	// a campaign or a placement (any client can send one), and tracking
	// events not tied to a counted impression (a click or view whose
	// decision's impression was not counted, a view of an impression
	// whose viewability was not measured, a conversion without its
	// click). Goals, pacing and spend count only the others
	// (docs/api.md#verified-counts).
	UnverifiedImpressions int64 `json:"unverifiedImpressions"`
	UnverifiedClicks      int64 `json:"unverifiedClicks"`
	UnverifiedConversions int64 `json:"unverifiedConversions"`
	UnverifiedViews       int64 `json:"unverifiedViews"`
	// Of video impressions, those whose viewability the player measured
	// (VAST's Viewable or NotViewable fired) and those it found viewable,
	// verified: video viewability, apart from the tag's display figures.
	VideoMeasured int64 `json:"videoMeasured"`
	VideoViews    int64 `json:"videoViews"`
	// Errors are a video or audio player's error events (VAST's Error
	// URL), whatever their code: by code in DimRows of DimError.
	Errors int64 `json:"errors"`
	// Money (docs/api.md#money): of the conversions, those attributed to
	// an impression rather than a click (post-view); the value the
	// attributed conversions reported, in micro-units; and what the
	// verified events cost at their decisions' prices, in nano-units (a
	// flat fee is no event's: reports add it).
	PostViewConversions int64 `json:"postViewConversions"`
	ConversionValue     int64 `json:"-"` // reports show it in the currency (reports.Metrics)
	SpendNanos          int64 `json:"-"`
	// Of the events above, those of the type their campaign's price bills
	// that were billed nothing (docs/api.md#budgets), and what they would
	// have cost in nano-units: on a person's row, delivered past a spent
	// budget (overBudget); on a bot's row, invalid traffic.
	Unbilled      int64 `json:"unbilled"`
	UnbilledNanos int64 `json:"-"`
}

// Columns are the stored columns of Counts, in the order of Fields: what
// every report table holds and an upsert adds up.
var Columns = [...]string{"impressions", "clicks", "conversions", "measured", "views",
	"starts", "first_quartiles", "midpoints", "third_quartiles", "completes",
	"unverified_impressions", "unverified_clicks", "unverified_conversions", "unverified_views",
	"video_measured", "video_views", "post_view_conversions", "conversion_value_micros", "spend_nanos",
	"unbilled", "unbilled_nanos", "errors"}

// Fields returns pointers to c's counts in the order of Columns (for a
// row's scan, and to add counts one by one).
func (c *Counts) Fields() [len(Columns)]*int64 {
	return [...]*int64{&c.Impressions, &c.Clicks, &c.Conversions, &c.Measured, &c.Views,
		&c.Starts, &c.FirstQuartiles, &c.Midpoints, &c.ThirdQuartiles, &c.Completes,
		&c.UnverifiedImpressions, &c.UnverifiedClicks, &c.UnverifiedConversions, &c.UnverifiedViews,
		&c.VideoMeasured, &c.VideoViews, &c.PostViewConversions, &c.ConversionValue, &c.SpendNanos,
		&c.Unbilled, &c.UnbilledNanos, &c.Errors}
}

// Add adds o to c. Field by field, not through Fields: a tally adds
// counts four times an event (BenchmarkWritten).
func (c *Counts) Add(o Counts) {
	c.Impressions += o.Impressions
	c.Clicks += o.Clicks
	c.Conversions += o.Conversions
	c.Measured += o.Measured
	c.Views += o.Views
	c.Starts += o.Starts
	c.FirstQuartiles += o.FirstQuartiles
	c.Midpoints += o.Midpoints
	c.ThirdQuartiles += o.ThirdQuartiles
	c.Completes += o.Completes
	c.UnverifiedImpressions += o.UnverifiedImpressions
	c.UnverifiedClicks += o.UnverifiedClicks
	c.UnverifiedConversions += o.UnverifiedConversions
	c.UnverifiedViews += o.UnverifiedViews
	c.VideoMeasured += o.VideoMeasured
	c.VideoViews += o.VideoViews
	c.Errors += o.Errors
	c.PostViewConversions += o.PostViewConversions
	c.ConversionValue += o.ConversionValue
	c.SpendNanos += o.SpendNanos
	c.Unbilled += o.Unbilled
	c.UnbilledNanos += o.UnbilledNanos
}

// Events is how many events c counts: every count but Measured, which
// counts impressions again, and the unverified ones, which count events
// of the others again.
func (c Counts) Events() int64 {
	var n int64
	for _, p := range c.Fields() {
		n += *p
	}
	return n - c.Measured - c.UnverifiedImpressions - c.UnverifiedClicks - c.UnverifiedConversions - c.UnverifiedViews -
		c.PostViewConversions - c.ConversionValue - c.SpendNanos - c.Unbilled - c.UnbilledNanos
}

// Of returns the count of metric: "clicks", "conversions", "views", or
// else impressions — verified or not (what a report shows).
func (c Counts) Of(metric string) int64 {
	switch metric {
	case "clicks":
		return c.Clicks
	case "conversions":
		return c.Conversions
	case "views":
		return c.Views
	}
	return c.Impressions
}

// Verified returns the verified count of metric (Of less its unverified
// events): what goals, pacing and spend count.
func (c Counts) Verified(metric string) int64 {
	switch metric {
	case "clicks":
		return c.Clicks - c.UnverifiedClicks
	case "conversions":
		return c.Conversions - c.UnverifiedConversions
	case "views":
		return c.Views - c.UnverifiedViews
	}
	return c.Impressions - c.UnverifiedImpressions
}

// CountOf adds to c the count of an event of type typ (an event line's
// "type") and reports whether a report counts that type; measured says
// the tag measured an impression's viewability, verified that a valid
// decision token vouches for the event (its line's "verified"). A video
// player's viewability events count only verified.
func (c *Counts) CountOf(typ []byte, measured, verified bool) bool {
	switch string(typ) {
	case "impression":
		c.Impressions++
		if measured {
			c.Measured++
		}
		if !verified {
			c.UnverifiedImpressions++
		}
	case "click":
		c.Clicks++
		if !verified {
			c.UnverifiedClicks++
		}
	case "conversion":
		c.Conversions++
		if !verified {
			c.UnverifiedConversions++
		}
	case "view":
		c.Views++
		if !verified {
			c.UnverifiedViews++
		}
	case "start":
		c.Starts++
	case "firstQuartile":
		c.FirstQuartiles++
	case "midpoint":
		c.Midpoints++
	case "thirdQuartile":
		c.ThirdQuartiles++
	case "complete":
		c.Completes++
	case "videoViewable", "videoNotViewable": // only a decision's: a beacon's measures nothing
		if verified {
			c.VideoMeasured++
			if string(typ) == "videoViewable" {
				c.VideoViews++
			}
		}
	case "videoViewUndetermined":
	case "error":
		c.Errors++
	case "adjustment": // money only (CountMoney): an event's bill credited after the fact
	default:
		return false
	}
	return true
}

// CountMoney adds to c, counted as CountOf counted an event, what the
// server wrote of its money: its cost (nano-units, of a verified event
// only), and a conversion's attribution ("view": post-view) and value
// (micro-units, of a verified conversion only), and, of an event billed
// nothing, that it was (its unbilled reason) and what it would have cost.
// A negative cost is an adjustment's: what it credits back. Malformed
// figures count nothing.
func (c *Counts) CountMoney(verified bool, cost, attribution, value, unbilled, unbilledCost []byte) {
	if verified && len(cost) > 0 {
		neg := cost[0] == '-' // an adjustment's credit
		if neg {
			cost = cost[1:]
		}
		if n, ok := ParseCount(cost); ok {
			if neg {
				n = -n
			}
			c.SpendNanos += n
		}
	}
	if len(unbilled) > 0 {
		c.Unbilled++
		if n, ok := ParseCount(unbilledCost); ok {
			c.UnbilledNanos += n
		}
	}
	if len(attribution) > 0 && c.Conversions > 0 {
		if string(attribution) == "view" {
			c.PostViewConversions++
		}
		if n, ok := ParseCount(value); ok && verified { // ROAS weighs verified value against verified spend
			c.ConversionValue += n
		}
	}
}

// ParseCount reads a non-negative decimal integer of at most 18 digits
// (an event field's count or amount).
func ParseCount(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, true
}

// Row is one report row.
type Row struct {
	Key
	Counts
}

// Reach is one HyperLogLog sketch of the uids of an ad's or a link's
// events of one UTC day.
type Reach struct {
	Entity string
	ID     int64
	Day    int64 // unix seconds of the day's start
	Sketch []byte
}

// FileMark is how far a file is counted: its first Upto bytes of NDJSON,
// and all of it when Complete.
type FileMark struct {
	File     string
	Upto     int64
	Complete bool
}

// The dimensions an ad's or a link's events are also counted by, a UTC
// day at a time (DimRow): where they came from, the browser and the
// operating system their User-Agent names, (a link's) the A/B
// destination they went to, and (an ad's player errors) the VAST error
// code the player reported (NoErrorCode: none).
const (
	DimReferrer    = "referrer"
	DimBrowser     = "browser"
	DimOS          = "os"
	DimDestination = "destination"
	DimError       = "errorCode"
)

// The DimError values of an error event without a VAST code: its player
// left [ERRORCODE] unfilled (or filled it with anything but a number:
// none), or sent a number outside VAST's 100–999 (other).
const (
	NoErrorCode    = "none"
	OtherErrorCode = "other"
)

// KVDim prefixes the dimension of a report key's DimRows: "kv.section".
const KVDim = "kv."

// IsDim says whether by names a dimension of DimRows: one of Dims, or
// a report key's (KVDim + the key).
func IsDim(by string) bool {
	return slices.Contains(Dims, by) || strings.HasPrefix(by, KVDim) && len(by) > len(KVDim)
}

// Dims are the dimensions of DimRows (and KVDim + each report key).
var Dims = []string{DimReferrer, DimBrowser, DimOS, DimDestination, DimError}

// DimRow counts one UTC day of an ad's or a link's events that share the
// value of one dimension (a referrer's host, "direct" for none; a
// browser; an OS; a destination's index).
type DimRow struct {
	Entity string
	ID     int64
	Day    int64 // unix seconds of the day's start
	Dim    string
	Value  string
	IVT    uint8 // as Key's
	Counts
}

// MaxDimValue bounds the bytes of a dimension's value (a referrer's host
// is at most 253).
const MaxDimValue = 255

// Batch is what one flush adds, in one transaction: counts added to the
// slot's rows and dimension rows, sketches merged (with Merge) into the
// slot's, and the files' new marks.
type Batch struct {
	Slot  string
	Rows  []Row
	Dims  []DimRow
	Reach []Reach
	Files []FileMark
	// Requests are the decisions' slots counted since the last flush
	// (reports.Requests): not from the files, so a rebuild keeps them.
	Requests []RequestRow
	// Cube are the day's counts by ad, campaign, placement, country and
	// device (reports by several dimensions).
	Cube []CubeRow
	// Samples are the finished hours' samples of requests, for forecasts
	// (reports.Samples).
	Samples []RequestSample
	// Bids are header bidding's counts by hour, placement and bidder.
	Bids []BidRow
}

// BidRow counts one UTC hour of one bidder's bids in one placement: the
// bids decisions weighed and won (counted at the decision, as requests
// are), and the impressions its wins rendered and what they earned
// (counted from the events, as reports are).
type BidRow struct {
	Hour        int64 // unix seconds of the hour's start
	Placement   int64 // the placement's id
	Bidder      string
	Bids, Wins  int64
	Impressions int64 // verified
	Revenue     int64 // nano-units of the currency
}

// BidQuery selects bid rows: [From, To) in unix seconds, of placements
// (none: every one), summed over the range, or by UTC day (Daily: each
// row's Hour its day's start).
type BidQuery struct {
	From, To   int64
	Placements []int64
	Daily      bool
}

// RequestSample is one instance's sample of one UTC hour's requests of
// one placement: the requests it saw (Offered) and those it kept, encoded
// (reports.EncodeSamples).
type RequestSample struct {
	Hour      int64 // unix seconds of the hour's start
	Placement int64 // the placement's id
	Offered   int64
	Doc       []byte
}

// SumQuery selects report rows to sum.
type SumQuery struct {
	Entity   string // marquee.EntityAd or marquee.EntityLink
	ID       int64  // 0: every ad or link
	From, To int64  // unix seconds, [From, To)
	By       string // "", "country", "platform", "ivt" (the rows' IVT, in Dim) or one of Dims
	Bots     bool   // include invalid traffic's events
	OnlyBots bool   // only invalid traffic's events (what a report without them leaves out)
}

// PeopleIVT are the IVT values of the rows a report of people's traffic
// sums, as an SQL list: people's (0), and the credits of events billed
// before their user or address went past its events a minute (12,
// ivt.Burst: package reports checks it), which people's spend nets.
const PeopleIVT = "(0, 12)"

// ByIVT is SumQuery.By of sums by invalid-traffic reason: each Sum's Dim
// is its rows' IVT, in decimal.
const ByIVT = "ivt"

// Sum is one group of summed rows: a time (hour or day) and dimension
// value, or an entity with its name in Dim (ReportTop).
type Sum struct {
	Time  int64
	Dim   string
	ID    int64
	Title string // an ad's title (ReportTop; "" once the ad is deleted)
	Counts
}

// RequestRow counts one UTC hour of decisions' slots of one placement
// from one country and device type: how many were asked for, and what
// became of them (by marquee.Outcome; their sum is the requests).
type RequestRow struct {
	Hour      int64 // unix seconds of the hour's start
	Placement int64 // the placement's id
	Country   string
	Device    string // a device type (targeting's $device: desktop, phone, tablet, tv, bot), "" unknown
	Outcomes  [NumOutcomes]int64
	// Invalid are the slots invalid traffic asked for, by reason
	// (InvalidNames): not requests, which are people's.
	Invalid [NumInvalid]int64
	// Limited are people's slots whose request's privacy signals denied
	// an activity, by each signal it carried (LimitedNames): a slot of a
	// request carrying two such signals counts under both.
	Limited [NumLimited]int64
}

// Add adds o's counts to r's (its hour, placement, country and device
// are r's).
func (r *RequestRow) Add(o *RequestRow) {
	for i, n := range o.Outcomes {
		r.Outcomes[i] += n
	}
	for i, n := range o.Invalid {
		r.Invalid[i] += n
	}
	for i, n := range o.Limited {
		r.Limited[i] += n
	}
}

// Requests is how many slots the row counts.
func (r *RequestRow) Requests() int64 {
	var n int64
	for _, c := range r.Outcomes {
		n += c
	}
	return n
}

// NumOutcomes is how many outcomes a RequestRow counts: marquee.NumOutcomes
// (package reports checks they agree; this package imports only the
// standard library).
const NumOutcomes = 11

// NumInvalid is how many invalid-traffic reasons a RequestRow counts:
// ivt.NumReasons-1, without Human (package reports checks they agree).
const NumInvalid = 18

// InvalidNames are the reasons of RequestRow.Invalid, in ivt.Reason's
// order from 1; InvalidColumns their stored columns.
var (
	InvalidNames = [NumInvalid]string{"crawler", "preview", "prefetch", "headless", "nonBrowser", "datacenter",
		"velocity", "fastClick", "noImpression", "repeatClick", "fastConversion", "burst", "clickLimit", "clickRate", "noRenderProof",
		"domainMismatch", "unauthorized", "quarantined"}
	InvalidColumns = [NumInvalid]string{"i_crawler", "i_preview", "i_prefetch", "i_headless", "i_nonbrowser", "i_datacenter",
		"i_velocity", "i_fastclick", "i_noimpression", "i_repeatclick", "i_fastconversion", "i_burst", "i_clicklimit", "i_clickrate", "i_norenderproof",
		"i_domainmismatch", "i_unauthorized", "i_quarantined"}
)

// NumLimited is how many privacy signals a RequestRow counts limited
// slots by: privacy.SignalNames (package reports checks they agree).
const NumLimited = 8

// LimitedNames are the signals of RequestRow.Limited, in
// privacy.SignalNames' order; LimitedColumns their stored columns.
var (
	LimitedNames   = [NumLimited]string{"gpc", "tcf", "gpp", "usnat", "usstate", "usp", "coppa", "given"}
	LimitedColumns = [NumLimited]string{"l_gpc", "l_tcf", "l_gpp", "l_usnat", "l_usstate", "l_usp", "l_coppa", "l_given"}
)

// RequestColumns are the stored columns of a RequestRow's counts:
// OutcomeColumns, then InvalidColumns, then LimitedColumns.
var RequestColumns = append(append(OutcomeColumns[:len(OutcomeColumns):len(OutcomeColumns)], InvalidColumns[:]...), LimitedColumns[:]...)

// InvalidRequests is how many slots invalid traffic asked for.
func (r *RequestRow) InvalidRequests() int64 {
	var n int64
	for _, c := range r.Invalid {
		n += c
	}
	return n
}

// OutcomeColumns are the stored columns of RequestRow.Outcomes, in
// marquee.Outcome's order (its names, lower case, after "o_").
var OutcomeColumns = [NumOutcomes]string{"o_filled", "o_house", "o_nocampaign", "o_wrongsize", "o_notrunning", "o_untargeted",
	"o_inrequest", "o_capped", "o_goalmet", "o_paced", "o_consent"}

// RequestQuery selects request rows to sum.
type RequestQuery struct {
	From, To   int64   // unix seconds, [From, To)
	Placements []int64 // none: every placement
	// By groups the sums: any of "hour", "placement", "country",
	// "device" (the rest summed over).
	By []string
}

// The grains of cube rows: what a row is counted by beside its day, ad,
// campaign and placement. Each event counts once in each grain; a report
// reads the smallest grain that has its dimensions.
const (
	GrainEntity = "entity" // the day, ad, campaign and placement only (report_cube)
	GrainCP     = "cp"     // the day, campaign and placement: GrainEntity's rows of a campaign's ads summed (report_cube_cp)
	GrainGeo    = "geo"    // and the country and device type (report_cube_geo)
	GrainKV     = "kv"     // and one report key's value (report_cube_kv)
)

// CubeRow counts one UTC day of the events of one ad of one campaign in
// one placement (0: an event without it, such as a beacon that names an
// ad alone), at its grain: also by country and device type, or by one
// report key's value.
type CubeRow struct {
	Grain                   string
	Day                     int64 // unix seconds of the day's start
	Ad, Campaign, Placement int64
	Country, Device         string // GrainGeo
	Key, Value              string // GrainKV
	IVT                     uint8  // as Key's (grouped by "ivt")
	Counts
}

// CubeQuery selects cube rows to sum.
type CubeQuery struct {
	Grain    string
	Key      string // GrainKV: the report key
	From, To int64  // unix seconds of days, [From, To)
	// Group lists what the sums are grouped by: "day", "ad", "campaign",
	// "placement", "ivt", and at their grains "country", "device",
	// "value".
	Group []string
	// Filters: none empty keeps every value.
	Ads, Campaigns, Placements []int64
	Countries, Devices, Values []string
	Bots                       bool // include invalid traffic's events
}
