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

// Limits of the ad contract (docs/api.md).
const (
	MaxTitleLen = 256 // characters (runes)
	MinAge      = 1
	MaxAge      = 100
)

// Genders an ad may target, in their stored spelling.
var Genders = []string{"M", "F"}

// Ad is an advertisement: what to show, when, and to whom. Times are UTC with
// millisecond precision. An Ad value is never mutated once it leaves the
// store; share it freely.
type Ad struct {
	ID         int64
	Title      string
	StartAt    time.Time
	EndAt      time.Time
	Conditions []Condition // OR across conditions; empty matches everyone
	// URL is the landing page, optional; an ad with one has a tracking
	// link (Link, its code) that redirects there and counts clicks.
	URL  string
	Link string
	// Beyond the original contract (see AdInput); zero without them.
	CampaignID int64
	Creative   *Creative
	Placements []string
	Targeting  *Targeting // narrows the campaign's (its day-parts in the campaign's time zone)
	// State, of an ad in a campaign: active (approved), pending (written
	// by an advertiser's account, waiting for approval), draft (rejected:
	// Review says why) or paused; only an active one serves. "" for an ad
	// of no campaign (the original contract's, always served).
	State  string
	Review *Review
	// Warnings, on a write's answer only (never stored), name what the ad
	// is allowed but should know: a window outside its campaign's flight.
	Warnings  Problems
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Condition is one targeting rule. Every field that is set must match (AND);
// an unset field (zero age bound, nil slice) puts no restriction on its
// dimension. Slices hold normalised, de-duplicated values: genders "M"/"F",
// upper-case country codes, lower-case platforms.
type Condition struct {
	AgeStart int      `json:"ageStart,omitempty"`
	AgeEnd   int      `json:"ageEnd,omitempty"`
	Gender   []string `json:"gender,omitempty"`
	Country  []string `json:"country,omitempty"`
	Platform []string `json:"platform,omitempty"`
}

// AdInput is the body of a create or replace request once validated: the
// fields of an Ad that a client chooses.
type AdInput struct {
	Title      string      `json:"title"`
	StartAt    time.Time   `json:"startAt"`
	EndAt      time.Time   `json:"endAt"`
	Conditions []Condition `json:"conditions"`
	URL        string      `json:"url"` // optional landing page
	// Optional, beyond the original contract: the campaign it serves
	// under, what it shows, and the placements it is limited to (none:
	// any).
	CampaignID int64      `json:"campaignId"`
	Creative   *Creative  `json:"creative"`
	Placements []string   `json:"placements"`
	Targeting  *Targeting `json:"targeting"`
}

// Input returns the fields of a that a client chooses.
func (a *Ad) Input() AdInput {
	return AdInput{Title: a.Title, StartAt: a.StartAt, EndAt: a.EndAt, Conditions: a.Conditions, URL: a.URL,
		CampaignID: a.CampaignID, Creative: a.Creative, Placements: a.Placements, Targeting: a.Targeting}
}

// Ad returns the ad that in describes, with the given id, tracking link
// code and timestamps.
func (in AdInput) Ad(id int64, link string, created, updated time.Time) Ad {
	return Ad{ID: id, Title: in.Title, StartAt: in.StartAt, EndAt: in.EndAt,
		Conditions: in.Conditions, URL: in.URL, Link: link, CreatedAt: created, UpdatedAt: updated,
		CampaignID: in.CampaignID, Creative: in.Creative, Placements: in.Placements, Targeting: in.Targeting}
}

// Serves reports whether a may serve as far as its state goes: an ad of
// no campaign, or an active one.
func (a *Ad) Serves() bool { return a.State == "" || a.State == StateActive }

// Public reports whether anyone may read the ad (GET /api/v1/ad/{id},
// the ad contract): its content as it is now was approved — an ad of no
// campaign, or one active or paused. A draft, or one waiting for
// approval (an advertiser's unlaunched ad, or an approved ad's edit not
// yet approved), is read by its advertiser and the team only.
func (a *Ad) Public() bool { return a.Serves() || a.State == StatePaused }

// ActiveAt reports whether the ad is served at instant now: startAt < now < endAt.
func (a *Ad) ActiveAt(now time.Time) bool {
	return a.StartAt.Before(now) && now.Before(a.EndAt)
}

// adJSON is the wire shape of a whole ad (admin reads).
type adJSON struct {
	ID         string      `json:"id"`
	Title      string      `json:"title"`
	StartAt    string      `json:"startAt"`
	EndAt      string      `json:"endAt"`
	Conditions []Condition `json:"conditions"`
	URL        string      `json:"url,omitempty"`
	Link       *adLinkJSON `json:"link,omitempty"`
	CampaignID string      `json:"campaignId,omitempty"`
	Creative   *Creative   `json:"creative,omitempty"`
	Placements []string    `json:"placements,omitempty"`
	Targeting  *Targeting  `json:"targeting,omitempty"`
	State      string      `json:"state,omitempty"`
	Review     *Review     `json:"review,omitempty"`
	Warnings   Problems    `json:"warnings,omitempty"`
	CreatedAt  string      `json:"createdAt"`
	UpdatedAt  string      `json:"updatedAt"`
}

// adLinkJSON names an ad's tracking link.
type adLinkJSON struct {
	Code string `json:"code"`
	Path string `json:"path"`
}

// MarshalJSON renders the whole ad, its id as a string and its times in
// TimeLayout; conditions are always an array.
func (a Ad) MarshalJSON() ([]byte, error) {
	conds := a.Conditions
	if conds == nil {
		conds = []Condition{}
	}
	j := adJSON{
		ID: strconv.FormatInt(a.ID, 10), Title: a.Title,
		StartAt: FormatTime(a.StartAt), EndAt: FormatTime(a.EndAt),
		Conditions: conds, URL: a.URL,
		CreatedAt: FormatTime(a.CreatedAt), UpdatedAt: FormatTime(a.UpdatedAt),
	}
	if a.Link != "" {
		j.Link = &adLinkJSON{Code: a.Link, Path: LinkPath(a.Link)}
	}
	if a.CampaignID != 0 {
		j.CampaignID = strconv.FormatInt(a.CampaignID, 10)
	}
	j.Creative, j.Placements, j.Targeting, j.Warnings = a.Creative, a.Placements, a.Targeting, a.Warnings
	j.State, j.Review = a.State, a.Review
	return json.Marshal(j)
}

// ParseAdInput decodes and validates the JSON body of a create or replace
// request. On failure it returns a KindInvalid *Error whose Problems name every
// bad field; malformed JSON is reported under "body".
func ParseAdInput(body []byte) (AdInput, error) {
	var in AdInput
	p := Problems{}
	fields, ok := object(body, p, "title", "startAt", "endAt", "conditions", "url", "campaignId", "creative", "placements", "targeting")
	if !ok {
		return in, Invalid("invalid ad", p)
	}
	var startOK, endOK bool
	if raw, ok := present(fields, "title"); !ok {
		p["title"] = "is required"
	} else if err := json.Unmarshal(raw, &in.Title); err != nil {
		p["title"] = "must be a string"
	}
	in.StartAt, startOK = parseTimeField(fields, "startAt", p)
	in.EndAt, endOK = parseTimeField(fields, "endAt", p)
	if raw, ok := present(fields, "conditions"); ok {
		in.Conditions = parseConditions(raw, p)
	}
	if raw, ok := present(fields, "url"); ok && json.Unmarshal(raw, &in.URL) != nil {
		p["url"] = "must be a string"
	}
	if raw, ok := present(fields, "campaignId"); ok {
		if id, ok := ParseID(raw); ok {
			in.CampaignID = id
		} else {
			p["campaignId"] = "must be a campaign's id (a positive integer, as a string or a number)"
		}
	}
	if raw, ok := present(fields, "creative"); ok {
		in.Creative = parseCreative(raw, p)
	}
	if raw, ok := present(fields, "placements"); ok {
		in.Placements = parsePlacementNames(raw, p)
	}
	if raw, ok := present(fields, "targeting"); ok {
		in.Targeting = parseTargeting(raw, "targeting", p)
	}
	checkAd(&in, startOK, endOK, p)
	return in, Invalid("invalid ad", p)
}

// parsePlacementNames reads the placements an ad is limited to: names,
// each once, in order.
func parsePlacementNames(raw json.RawMessage, p Problems) []string {
	var names []string
	if json.Unmarshal(raw, &names) != nil {
		p["placements"] = "must be an array of placement names"
		return nil
	}
	out := []string{}
	for i, n := range names {
		if msg := CheckPlacementName(n); msg != "" {
			p[fmt.Sprintf("placements[%d]", i)] = msg
		} else if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Validate checks an AdInput built in code (seeding, tests) against the same
// rules ParseAdInput applies, normalising its condition values in place.
func (in *AdInput) Validate() error {
	p := Problems{}
	for i := range in.Conditions {
		c := &in.Conditions[i]
		path := fmt.Sprintf("conditions[%d]", i)
		c.Gender = normaliseAll(c.Gender, path+".gender", normGender, p)
		c.Country = normaliseAll(c.Country, path+".country", normCountry, p)
		c.Platform = normaliseAll(c.Platform, path+".platform", normPlatform, p)
		checkAges(c, path, c.AgeStart != 0, c.AgeEnd != 0, p)
	}
	checkAd(in, !in.StartAt.IsZero(), !in.EndAt.IsZero(), p)
	return Invalid("invalid ad", p)
}

// checkAd applies the rules shared by ParseAdInput and Validate to the
// top-level fields.
func checkAd(in *AdInput, startOK, endOK bool, p Problems) {
	if _, bad := p["title"]; !bad {
		switch n := utf8.RuneCountInString(in.Title); {
		case strings.TrimSpace(in.Title) == "":
			p["title"] = "must not be empty"
		case n > MaxTitleLen:
			p["title"] = fmt.Sprintf("must be at most %d characters (got %d)", MaxTitleLen, n)
		case strings.ContainsRune(in.Title, 0):
			// PostgreSQL's text cannot hold it; no title needs it.
			p["title"] = "must not contain U+0000 (NUL)"
		}
	}
	if _, bad := p["url"]; !bad && in.URL != "" {
		if msg := CheckURL(in.URL); msg != "" {
			p["url"] = msg
		}
	}
	checkWindow(&in.StartAt, &in.EndAt, startOK, endOK, p)
}

// parseConditions accepts one condition object or an array of them.
func parseConditions(raw json.RawMessage, p Problems) []Condition {
	var objs []json.RawMessage
	switch firstByte(raw) {
	case '{':
		objs = []json.RawMessage{raw}
	case '[':
		if err := json.Unmarshal(raw, &objs); err != nil {
			p["conditions"] = "must be an object or an array of objects"
			return nil
		}
	default:
		p["conditions"] = "must be an object or an array of objects"
		return nil
	}
	conds := make([]Condition, 0, len(objs))
	for i, o := range objs {
		path := fmt.Sprintf("conditions[%d]", i)
		var fields map[string]json.RawMessage
		if firstByte(o) != '{' || json.Unmarshal(o, &fields) != nil {
			p[path] = "must be an object"
			continue
		}
		conds = append(conds, parseCondition(fields, path, p))
	}
	return conds
}

func parseCondition(fields map[string]json.RawMessage, path string, p Problems) Condition {
	var c Condition
	for k := range fields {
		switch k {
		case "ageStart", "ageEnd", "gender", "country", "platform":
		default:
			p[path+"."+k] = "unknown field"
		}
	}
	startSet := parseAge(fields, "ageStart", path, &c.AgeStart, p)
	endSet := parseAge(fields, "ageEnd", path, &c.AgeEnd, p)
	c.Gender = parseOneOrMany(fields, "gender", path, normGender, p)
	c.Country = parseOneOrMany(fields, "country", path, normCountry, p)
	c.Platform = parseOneOrMany(fields, "platform", path, normPlatform, p)
	checkAges(&c, path, startSet, endSet, p)
	return c
}

// parseAge reads an optional integer age bound; it reports whether the
// field was set (valid or not).
func parseAge(fields map[string]json.RawMessage, k, path string, dst *int, p Problems) bool {
	raw, ok := present(fields, k)
	if !ok {
		return false
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		p[path+"."+k] = fmt.Sprintf("must be an integer between %d and %d", MinAge, MaxAge)
		return true
	}
	*dst = n
	return true
}

func checkAges(c *Condition, path string, startSet, endSet bool, p Problems) {
	okStart := checkAge(c.AgeStart, startSet, path+".ageStart", p)
	okEnd := checkAge(c.AgeEnd, endSet, path+".ageEnd", p)
	if startSet && endSet && okStart && okEnd && c.AgeStart > c.AgeEnd {
		p[path+".ageStart"] = fmt.Sprintf("must not be greater than ageEnd (%d > %d)", c.AgeStart, c.AgeEnd)
	}
}

func checkAge(v int, set bool, path string, p Problems) bool {
	if !set {
		return true
	}
	if _, bad := p[path]; bad {
		return false
	}
	if v < MinAge || v > MaxAge {
		p[path] = fmt.Sprintf("must be an integer between %d and %d", MinAge, MaxAge)
		return false
	}
	return true
}

func normGender(s string) (string, string) {
	if s == "M" || s == "F" {
		return s, ""
	}
	return "", fmt.Sprintf("must be \"M\" or \"F\", got %q", s)
}

func normPlatform(s string) (string, string) {
	v := strings.ToLower(s)
	for _, pl := range Platforms {
		if v == pl {
			return v, ""
		}
	}
	return "", PlatformProblem(s)
}

// NoAd is the KindNotFound error of an id that names no ad.
func NoAd(id int64) *Error { return Errorf(KindNotFound, "ad %d not found", id) }
