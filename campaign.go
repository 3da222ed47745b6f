package marquee

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Advertisers and campaigns: who pays, and the plan an ad serves under
// (docs/api.md#campaigns). An ad may name a campaign; an ad without one
// behaves as ads always have.

// MaxNotesLen is the longest notes of an advertiser, in characters.
const MaxNotesLen = 10_000

// MaxUnapproved is how many campaigns an advertiser may have in draft or
// pending (waiting for approval) at once: a new one past it is a
// KindConflict error until some are submitted and approved or archived.
// Nothing unapproved serves or bills; the limit keeps an outsider's
// login from filling the team's queue and every report's catalog.
const MaxUnapproved = 200

// Advertiser is who a campaign serves for.
type Advertiser struct {
	ID    int64  `json:"-"`
	Name  string `json:"name"`
	Notes string `json:"notes"`
	State string `json:"state"`
	AdvertiserSettings
	// ConversionNonce is what its conversion secret is derived from
	// (tracking.Signer.ConversionSecret; "": none made): never shown.
	ConversionNonce string `json:"-"`
	// Credited is what a prepaid advertiser's balance was given in all:
	// its paid top-ups and the credits the team gave it (TopUp); the
	// balance is that less what it spent. Never set by a client.
	Credited  Micros    `json:"-"`
	CreatedAt time.Time `json:"-"`
	UpdatedAt time.Time `json:"-"`
}

// AdvertiserInput is what a client sets of an advertiser.
type AdvertiserInput struct {
	Name  string `json:"name"`
	Notes string `json:"notes"`
	AdvertiserSettings
}

// AdvertiserSettings are what a store keeps of an advertiser as one JSON
// document: its budget over all its campaigns (nil: no limit), whose
// days are in TimeZone (an IANA name; "": UTC), and whether it pays up
// front (Prepaid: its campaigns spend a balance it tops up, and stop
// when it is spent; chosen when it is created, docs/api.md#prepaid-balances).
type AdvertiserSettings struct {
	Budget   *Budget `json:"budget,omitempty"`
	TimeZone string  `json:"timeZone,omitempty"`
	Prepaid  bool    `json:"prepaid,omitempty"`
}

// MarshalJSON renders an advertiser with its id as a string and its times
// in TimeLayout.
func (a Advertiser) MarshalJSON() ([]byte, error) {
	type plain Advertiser
	return json.Marshal(struct {
		ID string `json:"id"`
		plain
		ConversionSigning bool   `json:"conversionSigning"` // a conversion secret was made: signed pixels verify
		CreatedAt         string `json:"createdAt"`
		UpdatedAt         string `json:"updatedAt"`
	}{strconv.FormatInt(a.ID, 10), plain(a), a.ConversionNonce != "", FormatTime(a.CreatedAt), FormatTime(a.UpdatedAt)})
}

// Input returns what a client sets of a.
func (a *Advertiser) Input() AdvertiserInput {
	return AdvertiserInput{Name: a.Name, Notes: a.Notes, AdvertiserSettings: a.AdvertiserSettings}
}

// ParseAdvertiserInput decodes and validates an advertiser body.
func ParseAdvertiserInput(body []byte) (AdvertiserInput, error) {
	var in AdvertiserInput
	p := Problems{}
	fields, ok := object(body, p, "name", "notes", "budget", "timeZone", "prepaid")
	if !ok {
		return in, Invalid("invalid advertiser", p)
	}
	if raw, ok := present(fields, "prepaid"); ok && json.Unmarshal(raw, &in.Prepaid) != nil {
		p["prepaid"] = "must be true or false"
	}
	if raw, ok := present(fields, "budget"); ok {
		in.Budget = parseBudget(raw, "budget", p)
	}
	in.TimeZone = timeZoneField(fields, p)
	in.Name = nameField(fields, "name", true, p)
	if raw, ok := present(fields, "notes"); ok {
		switch {
		case json.Unmarshal(raw, &in.Notes) != nil:
			p["notes"] = "must be a string"
		case utf8.RuneCountInString(in.Notes) > MaxNotesLen:
			p["notes"] = fmt.Sprintf("must be at most %d characters", MaxNotesLen)
		}
	}
	return in, Invalid("invalid advertiser", p)
}

// Priorities of campaigns, highest first: a higher tier always wins over
// a lower one; house is the fallback. Sponsorship and standard are
// called the guaranteed tiers for where they rank, not for a promise:
// nothing reserves their volume, and a goal is what pacing aims at
// (forecasts say whether it fits).
const (
	PrioritySponsorship = "sponsorship"
	PriorityStandard    = "standard"
	PriorityRemnant     = "remnant"
	PriorityHouse       = "house"
)

// Priorities lists the tiers, highest first.
var Priorities = []string{PrioritySponsorship, PriorityStandard, PriorityRemnant, PriorityHouse}

// TierOf is priority's tier: its index in Priorities (0 the highest; -1
// for a priority that is none).
func TierOf(priority string) int { return slices.Index(Priorities, priority) }

// Pacing: even spreads a goal over the flight (or each day, for a daily
// goal); asap serves whenever eligible until the goal is met.
const (
	PacingEven = "even"
	PacingASAP = "asap"
)

// Goal metrics, cap windows and price models.
var (
	GoalMetrics = []string{"impressions", "clicks", "conversions"}
	CapWindows  = []string{"1h", "24h", "7d", "flight"}
	// PriceModels are every PriceModel, as the API names them.
	PriceModels = []string{string(PriceCPM), string(PriceVCPM), string(PriceCPC), string(PriceCPA), string(PriceFlat), string(PriceDaily)}
)

// PriceModel is what a campaign's price is per: the one type every
// package reads a price's model as.
type PriceModel string

// The price models.
const (
	PriceCPM   PriceModel = "cpm"   // per 1,000 impressions
	PriceVCPM  PriceModel = "vcpm"  // per 1,000 viewable impressions
	PriceCPC   PriceModel = "cpc"   // per click
	PriceCPA   PriceModel = "cpa"   // per conversion
	PriceFlat  PriceModel = "flat"  // a flat fee for the whole flight
	PriceDaily PriceModel = "daily" // a flat fee per day of the flight
)

// Bills is the event a price model bills ("impression", "view",
// "click", "conversion"; "" for flat and daily fees, which no event
// bills) and how many of them its amount prices: 1,000 for CPM and
// vCPM, 1 for the others.
func (m PriceModel) Bills() (event string, per int64) {
	switch m {
	case PriceCPM:
		return "impression", 1000
	case PriceVCPM:
		return "view", 1000
	case PriceCPC:
		return "click", 1
	case PriceCPA:
		return "conversion", 1
	}
	return "", 1
}

// Why an event its price bills was billed nothing: an event line's
// "unbilled" and an invoice adjustment's reason (docs/api.md#budgets).
const (
	UnbilledOverBudget = "overBudget" // its cost would have taken spend past a budget
	UnbilledInvalid    = "invalid"    // invalid traffic (a bot's; the line's "ivt" says why)
)

// Weight bounds: a campaign's share within its tier.
const (
	MinWeight = 1
	MaxWeight = 1000
	// MaxPerPage bounds a campaign's maxPerPage (a decision has at most
	// 20 slots).
	MaxPerPage = 20
)

// MaxKeywords is how many keywords a campaign may carry; MaxKeywordLen
// the longest one, in bytes.
const (
	MaxKeywords   = 50
	MaxKeywordLen = 64
)

// Goal is what a campaign is to deliver: a total over its flight, a daily
// amount, or both.
type Goal struct {
	Metric string `json:"metric"`
	Total  int64  `json:"total,omitempty"`
	Daily  int64  `json:"daily,omitempty"`
}

// Elapsed is the part of [from, to) gone at now, from 0 to 1: how much of
// a goal even pacing expects delivered by now.
func Elapsed(from, to, now time.Time) float64 {
	switch {
	case !now.After(from):
		return 0
	case !now.Before(to):
		return 1
	}
	return float64(now.Sub(from)) / float64(to.Sub(from))
}

// ExpectedByNow is what even pacing expects c to have delivered of its
// goal by now: of the total, the total × the share of the flight gone; of
// the daily amount, the daily amount × the share of the UTC day gone (0
// for a part the goal does not set, or without a goal).
func (c *Campaign) ExpectedByNow(now time.Time) (total, today float64) {
	g := c.Goal
	if g == nil {
		return 0, 0
	}
	if g.Total > 0 {
		total = float64(g.Total) * Elapsed(c.StartAt, c.EndAt, now)
	}
	if g.Daily > 0 {
		day := now.UTC().Truncate(24 * time.Hour)
		today = float64(g.Daily) * Elapsed(day, day.Add(24*time.Hour), now)
	}
	return total, today
}

// MaxCapCount is the largest frequency cap count: the serves of one user
// and campaign the counters remember.
const MaxCapCount = 64

// FrequencyCap is how often one user may be served a campaign: at most
// Count (1 to MaxCapCount) serves within Window.
type FrequencyCap struct {
	Count  int    `json:"count"`
	Window string `json:"window"` // one of CapWindows
}

// Price is what a campaign pays, for revenue and spend in reports.
type Price struct {
	Model  PriceModel `json:"model"`
	Amount Micros     `json:"amount"` // ≥ 0
	// Currency is the install's (-currency), or "" when not given: a
	// price in another currency is refused (docs/api.md#money).
	Currency string `json:"currency,omitempty"`
}

// Flat reports whether p is a flat fee (for the flight, or a day), which
// no event bills.
func (p *Price) Flat() bool { return p.Model == PriceFlat || p.Model == PriceDaily }

// EventCost is what one event that price p bills costs, and the event
// type it bills ("impression", "view", "click", "conversion"): "" for a
// flat fee, which no event bills.
func (p *Price) EventCost() (Nanos, string) {
	event, per := p.Model.Bills()
	if event == "" {
		return 0, ""
	}
	return p.Amount.Nanos() / Nanos(per), event // a thousandth of a CPM price is a whole number of nano-units
}

// Attribution windows of a campaign's conversions: a conversion goes to
// the user's last click within PostClick or, failing that, to the last
// viewable impression (else impression) within PostView
// (docs/api.md#conversions).
//
// MaxValue caps a verified conversion's value (0: no cap): a signed
// pixel or postback worth more is refused (400 naming value), so that a
// mistake or a leaked secret cannot report a fortune.
type Attribution struct {
	PostClick Window `json:"postClick"`
	PostView  Window `json:"postView"`
	MaxValue  Micros `json:"maxValue,omitempty"`
}

// Default and longest attribution windows.
const (
	DefaultPostClick = Window(30 * 24 * time.Hour)
	DefaultPostView  = Window(24 * time.Hour)
	MaxPostClick     = Window(90 * 24 * time.Hour)
	MaxPostView      = Window(30 * 24 * time.Hour)
)

// Window is a span of whole hours, written "36h" or "30d" (0: "0h", no
// attribution of that kind).
type Window time.Duration

// String writes w in days when it is whole days, else in hours.
func (w Window) String() string {
	h := int64(time.Duration(w) / time.Hour)
	if h%24 == 0 && h > 0 {
		return strconv.FormatInt(h/24, 10) + "d"
	}
	return strconv.FormatInt(h, 10) + "h"
}

// MarshalJSON writes w as its String.
func (w Window) MarshalJSON() ([]byte, error) { return json.Marshal(w.String()) }

// UnmarshalJSON reads "36h" or "30d".
func (w *Window) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, ok := parseWindow(s)
	if !ok {
		return fmt.Errorf("want a window such as 36h or 30d, got %q", s)
	}
	*w = v
	return nil
}

func parseWindow(s string) (Window, bool) {
	if len(s) < 2 {
		return 0, false
	}
	n, err := strconv.ParseUint(s[:len(s)-1], 10, 16)
	if err != nil {
		return 0, false
	}
	switch s[len(s)-1] {
	case 'h':
		return Window(time.Duration(n) * time.Hour), true
	case 'd':
		return Window(time.Duration(n) * 24 * time.Hour), true
	}
	return 0, false
}

// Windows are c's attribution windows, the defaults where it sets none.
func (c *CampaignInput) Windows() Attribution {
	if c.Attribution == nil {
		return Attribution{PostClick: DefaultPostClick, PostView: DefaultPostView}
	}
	return *c.Attribution
}

// Campaign is a plan an advertiser's ads serve under.
type Campaign struct {
	ID    int64
	State string
	// Review is the last step of its approval (nil: none yet).
	Review *Review
	CampaignInput
	CreatedAt, UpdatedAt time.Time
}

// CampaignInput is what a client sets of a campaign (state changes go
// through Moves).
type CampaignInput struct {
	AdvertiserID int64         `json:"advertiserId"`
	Name         string        `json:"name"`
	StartAt      time.Time     `json:"startAt"`
	EndAt        time.Time     `json:"endAt"`
	Priority     string        `json:"priority"`
	Weight       int           `json:"weight"`
	Goal         *Goal         `json:"goal,omitempty"`
	Pacing       string        `json:"pacing"`
	FrequencyCap *FrequencyCap `json:"frequencyCap,omitempty"`
	Price        *Price        `json:"price,omitempty"`
	Conditions   []Condition   `json:"conditions"`
	Keywords     []string      `json:"keywords"`
	// Targeting is the campaign's targeting tree (nil: none), matched
	// with Conditions and Keywords; its day-parts are read in TimeZone
	// (an IANA name; "": UTC).
	Targeting *Targeting `json:"targeting,omitempty"`
	TimeZone  string     `json:"timeZone,omitempty"`
	// Budget is what the campaign may spend, each day in TimeZone and
	// over its life (nil: no limit); Attribution its conversion windows
	// (nil: the defaults).
	Budget      *Budget      `json:"budget,omitempty"`
	Attribution *Attribution `json:"attribution,omitempty"`
	// Labels, Roadblock ("": none) and Rotation (nil: even) are its
	// trafficking (trafficking.go).
	Labels    []Label   `json:"labels,omitempty"`
	Roadblock string    `json:"roadblock,omitempty"`
	Rotation  *Rotation `json:"rotation,omitempty"`
	// MaxPerPage is how many slots of one decision (a page) the campaign
	// may fill, each with a different ad: 1 to MaxPerPage (default 1).
	MaxPerPage int `json:"maxPerPage"`
}

// CampaignSettings are the settings of a campaign a store keeps together
// (as one JSON document): everything but its advertiser, name, flight,
// tier, weight and state, which are columns.
type CampaignSettings struct {
	Goal         *Goal         `json:"goal,omitempty"`
	Pacing       string        `json:"pacing"`
	FrequencyCap *FrequencyCap `json:"frequencyCap,omitempty"`
	Price        *Price        `json:"price,omitempty"`
	Conditions   []Condition   `json:"conditions,omitempty"`
	Keywords     []string      `json:"keywords,omitempty"`
	Targeting    *Targeting    `json:"targeting,omitempty"`
	TimeZone     string        `json:"timeZone,omitempty"`
	Budget       *Budget       `json:"budget,omitempty"`
	Attribution  *Attribution  `json:"attribution,omitempty"`
	Labels       []Label       `json:"labels,omitempty"`
	Roadblock    string        `json:"roadblock,omitempty"`
	Rotation     *Rotation     `json:"rotation,omitempty"`
	MaxPerPage   int           `json:"maxPerPage,omitempty"` // 0 in documents stored before it: 1
}

// Settings returns the settings of in that a store keeps as a document.
func (in *CampaignInput) Settings() CampaignSettings {
	return CampaignSettings{Goal: in.Goal, Pacing: in.Pacing, FrequencyCap: in.FrequencyCap, Price: in.Price,
		Conditions: in.Conditions, Keywords: in.Keywords, Targeting: in.Targeting, TimeZone: in.TimeZone,
		Budget: in.Budget, Attribution: in.Attribution, Labels: in.Labels, Roadblock: in.Roadblock, Rotation: in.Rotation,
		MaxPerPage: in.MaxPerPage}
}

// SetSettings sets in's fields from a stored document.
func (in *CampaignInput) SetSettings(s CampaignSettings) {
	in.Goal, in.Pacing, in.FrequencyCap, in.Price, in.Conditions, in.Keywords = s.Goal, s.Pacing, s.FrequencyCap, s.Price, s.Conditions, s.Keywords
	in.Targeting, in.TimeZone, in.Budget, in.Attribution = s.Targeting, s.TimeZone, s.Budget, s.Attribution
	in.Labels, in.Roadblock, in.Rotation = s.Labels, s.Roadblock, s.Rotation
	in.MaxPerPage = max(s.MaxPerPage, 1)
}

// MarshalJSON renders a campaign with its ids as strings and its times
// in TimeLayout; conditions and keywords are always arrays. The fields
// of CampaignInput are its own, but for those the outer struct shadows.
func (c Campaign) MarshalJSON() ([]byte, error) {
	type input CampaignInput // without this method
	in := input(c.CampaignInput)
	if in.Conditions == nil {
		in.Conditions = []Condition{}
	}
	if in.Keywords == nil {
		in.Keywords = []string{}
	}
	return json.Marshal(struct {
		ID           string  `json:"id"`
		AdvertiserID string  `json:"advertiserId"`
		State        string  `json:"state"`
		Review       *Review `json:"review,omitempty"`
		StartAt      string  `json:"startAt"`
		EndAt        string  `json:"endAt"`
		input
		CreatedAt string `json:"createdAt"`
		UpdatedAt string `json:"updatedAt"`
	}{strconv.FormatInt(c.ID, 10), strconv.FormatInt(c.AdvertiserID, 10), c.State, c.Review, FormatTime(c.StartAt), FormatTime(c.EndAt),
		in, FormatTime(c.CreatedAt), FormatTime(c.UpdatedAt)})
}

// ActiveAt reports whether the campaign may serve at now: active, and
// startAt < now < endAt.
func (c *Campaign) ActiveAt(now time.Time) bool {
	return c.State == StateActive && c.StartAt.Before(now) && now.Before(c.EndAt)
}

// ParseCampaignInput decodes and validates a campaign body: every field
// is checked and every problem named. Defaults: priority standard,
// weight 1, pacing even with a goal and asap without.
func ParseCampaignInput(body []byte) (CampaignInput, error) {
	var in CampaignInput
	p := Problems{}
	fields, ok := object(body, p, "advertiserId", "name", "startAt", "endAt", "priority", "weight", "goal", "pacing",
		"frequencyCap", "price", "conditions", "keywords", "targeting", "timeZone", "budget", "attribution", "labels", "roadblock", "rotation", "maxPerPage")
	if !ok {
		return in, Invalid("invalid campaign", p)
	}
	if raw, ok := present(fields, "advertiserId"); !ok {
		p["advertiserId"] = "is required"
	} else if id, ok := ParseID(raw); !ok {
		p["advertiserId"] = "must be an advertiser's id (a positive integer, as a string or a number)"
	} else {
		in.AdvertiserID = id
	}
	in.Name = nameField(fields, "name", true, p)
	var startOK, endOK bool
	in.StartAt, startOK = parseTimeField(fields, "startAt", p)
	in.EndAt, endOK = parseTimeField(fields, "endAt", p)
	checkWindow(&in.StartAt, &in.EndAt, startOK, endOK, p)
	in.Priority = oneOfField(fields, "priority", Priorities, PriorityStandard, p)
	in.Weight = MinWeight
	if raw, ok := present(fields, "weight"); ok {
		if json.Unmarshal(raw, &in.Weight) != nil || in.Weight < MinWeight || in.Weight > MaxWeight {
			p["weight"] = fmt.Sprintf("must be an integer from %d to %d", MinWeight, MaxWeight)
		}
	}
	if raw, ok := present(fields, "goal"); ok {
		in.Goal = parseGoal(raw, p)
	}
	if raw, ok := present(fields, "budget"); ok {
		in.Budget = parseBudget(raw, "budget", p)
	}
	def := PacingASAP
	if in.Goal != nil {
		def = PacingEven
	}
	in.Pacing = oneOfField(fields, "pacing", []string{PacingEven, PacingASAP}, def, p)
	if _, given := present(fields, "pacing"); given && in.Pacing == PacingEven && in.Goal == nil && in.Budget == nil {
		_, badGoal := p["goal"]
		_, badBudget := p["budget"]
		if !badGoal && !badBudget {
			p["pacing"] = "even pacing spreads a goal or a budget: set one, or use asap"
		}
	}
	if raw, ok := present(fields, "attribution"); ok {
		in.Attribution = parseAttribution(raw, p)
	}
	if raw, ok := present(fields, "frequencyCap"); ok {
		in.FrequencyCap = parseCap(raw, p)
	}
	if raw, ok := present(fields, "price"); ok {
		in.Price = parsePrice(raw, p)
	}
	if raw, ok := present(fields, "conditions"); ok {
		in.Conditions = parseConditions(raw, p)
	}
	if raw, ok := present(fields, "keywords"); ok {
		in.Keywords = parseKeywords(raw, p)
	}
	if raw, ok := present(fields, "targeting"); ok {
		in.Targeting = parseTargeting(raw, "targeting", p)
	}
	in.TimeZone = timeZoneField(fields, p)
	if raw, ok := present(fields, "labels"); ok {
		in.Labels = parseLabels(raw, p)
	}
	in.Roadblock = oneOfField(fields, "roadblock", Roadblocks, "", p)
	if raw, ok := present(fields, "rotation"); ok {
		_, capped := present(fields, "frequencyCap")
		in.Rotation = parseRotation(raw, capped, p)
	}
	in.MaxPerPage = 1
	if raw, ok := present(fields, "maxPerPage"); ok {
		if json.Unmarshal(raw, &in.MaxPerPage) != nil || in.MaxPerPage < 1 || in.MaxPerPage > MaxPerPage {
			p["maxPerPage"] = fmt.Sprintf("must be an integer from 1 to %d: how many slots of one page the campaign may fill", MaxPerPage)
		} else if in.MaxPerPage > 1 && in.Roadblock != "" {
			p["maxPerPage"] = "a roadblock fills its placements' slots itself: leave maxPerPage out"
		}
	}
	return in, Invalid("invalid campaign", p)
}

// timeZoneField reads an optional IANA time zone at "timeZone".
func timeZoneField(fields map[string]json.RawMessage, p Problems) string {
	raw, ok := present(fields, "timeZone")
	if !ok {
		return ""
	}
	var tz string
	if json.Unmarshal(raw, &tz) != nil {
		p["timeZone"] = "must be an IANA time zone name (\"America/New_York\")"
	} else if _, err := ParseTimeZone(tz); err != nil {
		p["timeZone"] = err.Error()
	}
	return tz
}

func parseGoal(raw json.RawMessage, p Problems) *Goal {
	fields, ok := subObject(raw, "goal", p, "metric", "total", "daily")
	if !ok {
		return nil
	}
	g := &Goal{Metric: requiredOneOf(fields, "metric", "goal", GoalMetrics, p)}
	total, hasTotal := positive(fields, "total", "goal", p)
	daily, hasDaily := positive(fields, "daily", "goal", p)
	g.Total, g.Daily = total, daily
	_, badTotal := p["goal.total"]
	_, badDaily := p["goal.daily"]
	if !hasTotal && !hasDaily && !badTotal && !badDaily {
		p["goal"] = "needs a total, a daily amount, or both"
	}
	if hasTotal && hasDaily && daily > total {
		p["goal.daily"] = "must not be more than the total"
	}
	return g
}

func parseAttribution(raw json.RawMessage, p Problems) *Attribution {
	fields, ok := subObject(raw, "attribution", p, "postClick", "postView", "maxValue")
	if !ok {
		return nil
	}
	a := &Attribution{PostClick: DefaultPostClick, PostView: DefaultPostView}
	if raw, ok := present(fields, "maxValue"); ok {
		m, err := ParseAmount(raw)
		switch {
		case err != nil:
			p["attribution.maxValue"] = err.Error()
		case m == 0:
			p["attribution.maxValue"] = "must be more than 0 (leave it out for no cap)"
		default:
			a.MaxValue = m
		}
	}
	for _, w := range []struct {
		name string
		into *Window
		max  Window
	}{{"postClick", &a.PostClick, MaxPostClick}, {"postView", &a.PostView, MaxPostView}} {
		raw, ok := present(fields, w.name)
		if !ok {
			continue
		}
		var s string
		v, good := Window(0), json.Unmarshal(raw, &s) == nil
		if good {
			v, good = parseWindow(s)
		}
		if !good || v > w.max {
			p["attribution."+w.name] = fmt.Sprintf("must be a window such as \"36h\" or \"30d\", at most %s", w.max)
			continue
		}
		*w.into = v
	}
	return a
}

func parseCap(raw json.RawMessage, p Problems) *FrequencyCap {
	fields, ok := subObject(raw, "frequencyCap", p, "count", "window")
	if !ok {
		return nil
	}
	c := &FrequencyCap{}
	if n, ok := positive(fields, "count", "frequencyCap", p); ok && n > MaxCapCount {
		p["frequencyCap.count"] = fmt.Sprintf("must be at most %d (the serves a user is remembered for)", MaxCapCount)
	} else if ok {
		c.Count = int(n)
	} else if _, bad := p["frequencyCap.count"]; !bad {
		p["frequencyCap.count"] = "is required"
	}
	c.Window = requiredOneOf(fields, "window", "frequencyCap", CapWindows, p)
	return c
}

func parsePrice(raw json.RawMessage, p Problems) *Price {
	fields, ok := subObject(raw, "price", p, "model", "amount", "currency")
	if !ok {
		return nil
	}
	pr := &Price{Model: PriceModel(requiredOneOf(fields, "model", "price", PriceModels, p))}
	pr.Currency = currencyField(fields, "price.currency", p)
	a, ok := present(fields, "amount")
	if !ok {
		p["price.amount"] = "is required"
		return pr
	}
	m, err := ParseAmount(a)
	if err != nil {
		p["price.amount"] = err.Error()
	}
	pr.Amount = m
	return pr
}

func parseKeywords(raw json.RawMessage, p Problems) []string {
	var kws []string
	if json.Unmarshal(raw, &kws) != nil {
		p["keywords"] = "must be an array of strings"
		return nil
	}
	if len(kws) > MaxKeywords {
		p["keywords"] = fmt.Sprintf("must hold at most %d keywords", MaxKeywords)
		return nil
	}
	out := make([]string, 0, len(kws))
	for i, k := range kws {
		k = strings.ToLower(strings.TrimSpace(k))
		switch {
		case k == "" || len(k) > MaxKeywordLen:
			p[fmt.Sprintf("keywords[%d]", i)] = fmt.Sprintf("must be 1 to %d bytes", MaxKeywordLen)
		case strings.ContainsFunc(k, isControl):
			p[fmt.Sprintf("keywords[%d]", i)] = "must not contain control characters"
		case !slices.Contains(out, k):
			out = append(out, k)
		}
	}
	return out
}

// FlightWarnings names what of an ad's window [start, end) lies outside
// its campaign's flight [from, to): allowed, but the ad serves only where
// they overlap. Nil when the flight holds the window.
func FlightWarnings(start, end, from, to time.Time) Problems {
	w := Problems{}
	switch {
	case !end.After(from) || !start.Before(to):
		w["campaignId"] = fmt.Sprintf("the ad's window and its campaign's flight (%s to %s) do not overlap: the ad will not serve", FormatTime(from), FormatTime(to))
	default:
		if start.Before(from) {
			w["startAt"] = fmt.Sprintf("before its campaign's flight starts (%s): the ad serves from then", FormatTime(from))
		}
		if end.After(to) {
			w["endAt"] = fmt.Sprintf("after its campaign's flight ends (%s): the ad serves until then", FormatTime(to))
		}
	}
	if len(w) == 0 {
		return nil
	}
	return w
}

// NoAdvertiser and NoCampaign are the errors of an unknown id.
func NoAdvertiser(id int64) *Error { return Errorf(KindNotFound, "advertiser %d not found", id) }

// NoCampaign is the error of an unknown campaign id.
func NoCampaign(id int64) *Error { return Errorf(KindNotFound, "campaign %d not found", id) }

// ApprovedAt is when campaign c was approved, and whether it was: a
// campaign bills a flat or daily fee only for the part of its flight
// after that instant (docs/api.md#invoices). A draft or a pending
// campaign never was. One whose last review is an approval was at that
// review's time. One that is active or paused without a review was made
// active (a seed's, or one made before campaigns were approved): from
// its start. An archived one without an approving review never was.
func (c *Campaign) ApprovedAt() (time.Time, bool) {
	switch {
	case c.State == StateDraft || c.State == StatePending:
		return time.Time{}, false
	case c.Review != nil:
		return c.Review.At, c.Review.Action == ActionApprove
	case c.State == StateActive || c.State == StatePaused:
		return c.StartAt, true
	}
	return time.Time{}, false
}
