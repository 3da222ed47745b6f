package marquee

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Creatives and placements: what an ad shows, and where
// (docs/api.md#creatives).

// Creative types.
const (
	CreativeImage  = "image"
	CreativeHTML   = "html"
	CreativeNative = "native"
	CreativeVideo  = "video"
	// CreativeTag is a third-party HTML/JS tag: sandboxed as an HTML
	// creative is, unless the operator marks it Trusted (then a friendly
	// frame of the page's origin); its macros are filled at serving.
	CreativeTag = "tag"
	// CreativeAudio is an audio ad for podcasts and streams, answered as
	// VAST as a video is (IsLinear).
	CreativeAudio = "audio"
)

// CreativeTypes lists the creative types.
var CreativeTypes = []string{CreativeImage, CreativeHTML, CreativeNative, CreativeVideo, CreativeTag, CreativeAudio}

// DefaultPlacementTypes are the types a placement that names none
// accepts: every type but audio, which a placement of an audio player
// names (an audio ad in a page's slot would play unasked).
var DefaultPlacementTypes = []string{CreativeImage, CreativeHTML, CreativeNative, CreativeVideo, CreativeTag}

// IsLinear reports whether a creative of type t plays in a player and is
// answered as VAST (video and audio).
func IsLinear(t string) bool { return t == CreativeVideo || t == CreativeAudio }

// MaxTrackers is how many impression (and click) trackers a creative
// carries.
const MaxTrackers = 5

// VideoTypes are the media types a video creative may name.
var VideoTypes = []string{"video/mp4", "video/webm", "application/x-mpegURL", "application/dash+xml"}

// AudioTypes are the media types an audio creative may name.
var AudioTypes = []string{"audio/mpeg", "audio/aac", "audio/mp4"}

// Creative limits.
const (
	MaxCreativeSide = 4000      // pixels, of a width or a height
	MaxHTMLLen      = 32 << 10  // bytes of an HTML snippet
	MaxNativeText   = 1000      // characters of a native field
	MaxVideoMs      = 3_600_000 // an hour
)

// Creative is what an ad shows: an image, an HTML snippet (only ever
// rendered in a sandboxed frame), native fields, or a video. ClickURL may
// hold the macros {placement}, {campaign} and {ad}.
type Creative struct {
	Type        string `json:"type"`
	Width       int    `json:"width,omitempty"`
	Height      int    `json:"height,omitempty"`
	ClickURL    string `json:"clickUrl,omitempty"`
	Image       string `json:"image,omitempty"` // image: an uploaded asset's URL
	HTML        string `json:"html,omitempty"`
	Title       string `json:"title,omitempty"` // native
	Body        string `json:"body,omitempty"`
	ImageURL    string `json:"imageUrl,omitempty"`
	CTA         string `json:"cta,omitempty"`
	SponsoredBy string `json:"sponsoredBy,omitempty"`
	MediaURL    string `json:"mediaUrl,omitempty"` // video
	MimeType    string `json:"mimeType,omitempty"`
	DurationMs  int    `json:"durationMs,omitempty"`
	// VASTTagURL, of a video: another server's VAST tag (a buyer's), which
	// the answer wraps (VAST's Wrapper and its VASTAdTagURI) instead of
	// naming media of its own; its VAST macros ([TIMESTAMP],
	// [CACHEBUSTING], …) are left for the player to fill.
	VASTTagURL string `json:"vastTagUrl,omitempty"`
	// SkipOffsetMs, of a video: the player shows a skip button this far
	// into it (VAST's Linear skipoffset; 0: not skippable).
	SkipOffsetMs int `json:"skipOffsetMs,omitempty"`
	// UniversalAdID, of a video: the creative's id in a registry buyers
	// and players share (VAST's UniversalAdId; nil: "unknown").
	UniversalAdID *UniversalAdID `json:"universalAdId,omitempty"`
	// Verifications, of a video: the Open Measurement scripts buyers'
	// verification vendors run beside it (VAST's AdVerifications).
	Verifications []Verification `json:"verifications,omitempty"`
	// Trusted, of a tag: rendered in a friendly frame (the page's origin)
	// rather than the sandbox.
	Trusted bool `json:"trusted,omitempty"`
	// Third-party trackers, fired by the page with the ad's impression and
	// its clicks; their macros are filled at serving (package macro).
	ImpressionTrackers []string `json:"impressionTrackers,omitempty"`
	ClickTrackers      []string `json:"clickTrackers,omitempty"`
}

// A UniversalAdID names a creative in a registry shared across the
// industry (Ad-ID, Clearcast, the buyer's own domain), as VAST 4's
// UniversalAdId carries it.
type UniversalAdID struct {
	Registry string `json:"registry"` // "ad-id.org", "clearcast.co.uk", a domain
	Value    string `json:"value"`
}

// MaxUniversalAdID bounds a UniversalAdId's registry and value.
const MaxUniversalAdID = 255

// A Verification is a verification vendor's Open Measurement script for
// a video (VAST's Verification): the vendor's key ("iabtechlab.com-omid"),
// its script's URL, the parameters it is given as they are, and the URL
// the vendor wants called when the player could not run it (its
// verificationNotExecuted tracking, the player filling [REASON]; "":
// none).
type Verification struct {
	Vendor         string `json:"vendor"`
	URL            string `json:"url"`
	Parameters     string `json:"parameters,omitempty"`
	NotExecutedURL string `json:"notExecutedUrl,omitempty"`
}

// Limits of a video's verifications.
const (
	MaxVerifications      = 5
	MaxVerificationParams = 4 << 10 // bytes
)

// Warnings names what of c is served but likely not as meant, by field:
// without a clickUrl a click on the ad goes nowhere and counts nothing
// (nothing links an image or a native card, and a video has no
// ClickThrough). Nil when nothing is amiss.
func (c *Creative) Warnings() Problems {
	if c == nil || c.ClickURL != "" {
		return nil
	}
	return Problems{"creative.clickUrl": "is empty: the ad is served, but a click on it goes nowhere and counts nothing"}
}

// Size is the creative's "WxH", or "" without one.
func (c *Creative) Size() string {
	if c.Width == 0 || c.Height == 0 {
		return ""
	}
	return fmt.Sprintf("%dx%d", c.Width, c.Height)
}

// creativeFields are the fields each type takes, besides type and
// clickUrl.
var creativeFields = map[string][]string{
	CreativeImage:  {"width", "height", "image"},
	CreativeHTML:   {"width", "height", "html"},
	CreativeNative: {"width", "height", "title", "body", "imageUrl", "cta", "sponsoredBy"},
	CreativeVideo:  {"width", "height", "mediaUrl", "mimeType", "durationMs", "skipOffsetMs", "universalAdId", "verifications", "vastTagUrl"},
	CreativeAudio:  {"mediaUrl", "mimeType", "durationMs", "skipOffsetMs", "universalAdId", "verifications", "vastTagUrl"},
	CreativeTag:    {"width", "height", "html", "trusted"},
}

// vastMacro is a VAST macro a player fills in a tag's URL ([TIMESTAMP]).
var vastMacro = regexp.MustCompile(`\[[A-Z][A-Z0-9_]*\]`)

// assetPath is the path of an uploaded asset: /assets/<SHA-256>.<ext>.
var assetPath = regexp.MustCompile(`^/assets/[0-9a-f]{64}\.(png|jpg|gif|webp)$`)

// IsAssetPath reports whether s is an uploaded asset's path.
func IsAssetPath(s string) bool { return assetPath.MatchString(s) }

// parseCreative reads an ad's creative, naming problems under
// "creative.…".
func parseCreative(raw json.RawMessage, p Problems) *Creative {
	var fields map[string]json.RawMessage
	if firstByte(raw) != '{' || json.Unmarshal(raw, &fields) != nil {
		p["creative"] = "must be an object"
		return nil
	}
	c := &Creative{}
	t, ok := present(fields, "type")
	if !ok || json.Unmarshal(t, &c.Type) != nil || !slices.Contains(CreativeTypes, c.Type) {
		p["creative.type"] = "must be one of " + strings.Join(CreativeTypes, ", ")
		return nil
	}
	known := append([]string{"type", "clickUrl", "impressionTrackers", "clickTrackers"}, creativeFields[c.Type]...)
	for k := range fields {
		if !slices.Contains(known, k) {
			p["creative."+k] = "is not a field of " + article(c.Type) + " creative"
		}
	}
	str := func(k string, max int, required bool) string {
		raw, ok := present(fields, k)
		if !ok {
			if required {
				p["creative."+k] = "is required for " + article(c.Type) + " creative"
			}
			return ""
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			p["creative."+k] = "must be a string"
			return ""
		}
		if utf8.RuneCountInString(s) > max {
			p["creative."+k] = fmt.Sprintf("must be at most %d characters", max)
		}
		return s
	}
	side := func(k string, required bool) int {
		raw, ok := present(fields, k)
		if !ok {
			if required {
				p["creative."+k] = "is required for " + article(c.Type) + " creative"
			}
			return 0
		}
		var n int
		if json.Unmarshal(raw, &n) != nil || n < 1 || n > MaxCreativeSide {
			p["creative."+k] = fmt.Sprintf("must be a number of pixels from 1 to %d", MaxCreativeSide)
		}
		return n
	}
	url := func(k string, required bool) string {
		s := str(k, MaxURLLen, required)
		if _, bad := p["creative."+k]; s != "" && !bad {
			if msg := CheckURL(s); msg != "" {
				p["creative."+k] = msg
			}
		}
		return s
	}
	sized := c.Type == CreativeImage || c.Type == CreativeHTML || c.Type == CreativeTag
	c.Width, c.Height = side("width", sized), side("height", sized)
	c.ImpressionTrackers = trackers(fields, "impressionTrackers", p)
	c.ClickTrackers = trackers(fields, "clickTrackers", p)
	if c.ClickURL = str("clickUrl", MaxURLLen, false); c.ClickURL != "" {
		// Macros are filled in at serving; the URL must be one with any value.
		if msg := CheckURL(strings.NewReplacer("{placement}", "p", "{campaign}", "1", "{ad}", "1").Replace(c.ClickURL)); msg != "" {
			p["creative.clickUrl"] = msg
		}
	}
	switch c.Type {
	case CreativeImage:
		if c.Image = str("image", MaxURLLen, true); c.Image != "" && !IsAssetPath(c.Image) {
			p["creative.image"] = "must be the url of an uploaded asset (POST /api/v1/assets answers it)"
		}
	case CreativeHTML, CreativeTag:
		c.HTML = str("html", MaxHTMLLen, true)
		if _, bad := p["creative.html"]; !bad && strings.TrimSpace(c.HTML) == "" {
			p["creative.html"] = "must not be empty"
		}
		if raw, ok := present(fields, "trusted"); ok && json.Unmarshal(raw, &c.Trusted) != nil {
			p["creative.trusted"] = "must be true or false"
		}
	case CreativeNative:
		c.Title = str("title", MaxNativeText, true)
		c.Body = str("body", MaxNativeText, false)
		c.CTA = str("cta", MaxNativeText, false)
		c.SponsoredBy = str("sponsoredBy", MaxNativeText, false)
		if c.ImageURL = str("imageUrl", MaxURLLen, false); c.ImageURL != "" && !IsAssetPath(c.ImageURL) {
			if msg := CheckURL(c.ImageURL); msg != "" {
				p["creative.imageUrl"] = "must be an uploaded asset's url or an http or https URL"
			}
		}
	case CreativeVideo, CreativeAudio:
		types := VideoTypes
		if c.Type == CreativeAudio {
			types = AudioTypes
		}
		// A wrapper names another server's tag and no media of its own;
		// its duration, when given, is the wrapped ad's as expected.
		if c.VASTTagURL = str("vastTagUrl", MaxURLLen, false); c.VASTTagURL != "" {
			if msg := CheckURL(vastMacro.ReplaceAllString(c.VASTTagURL, "0")); msg != "" {
				p["creative.vastTagUrl"] = msg
			}
			for _, k := range []string{"mediaUrl", "mimeType", "skipOffsetMs", "universalAdId"} {
				if _, ok := present(fields, k); ok {
					p["creative."+k] = "is the wrapped ad's: a wrapper (vastTagUrl) names no media of its own"
				}
			}
		} else {
			c.MediaURL = url("mediaUrl", true)
			if c.MimeType = str("mimeType", 100, true); c.MimeType != "" && !slices.Contains(types, c.MimeType) {
				p["creative.mimeType"] = "must be one of " + strings.Join(types, ", ")
			}
		}
		if raw, ok := present(fields, "durationMs"); !ok && c.VASTTagURL == "" {
			p["creative.durationMs"] = "is required: the " + c.Type + "'s length in milliseconds"
		} else if ok && (json.Unmarshal(raw, &c.DurationMs) != nil || c.DurationMs < 1 || c.DurationMs > MaxVideoMs) {
			p["creative.durationMs"] = fmt.Sprintf("must be a number of milliseconds from 1 to %d", MaxVideoMs)
		}
		if raw, ok := present(fields, "skipOffsetMs"); ok {
			if json.Unmarshal(raw, &c.SkipOffsetMs) != nil || c.SkipOffsetMs < 0 || (c.DurationMs > 0 && c.SkipOffsetMs >= c.DurationMs) {
				p["creative.skipOffsetMs"] = "must be a number of milliseconds from 0 (not skippable) to less than durationMs"
			}
		}
		if raw, ok := present(fields, "universalAdId"); ok {
			var u UniversalAdID
			if firstByte(raw) != '{' || json.Unmarshal(raw, &u) != nil {
				p["creative.universalAdId"] = `must be an object {"registry", "value"}`
			}
			for k, v := range map[string]string{"registry": u.Registry, "value": u.Value} {
				if _, bad := p["creative.universalAdId"]; !bad && (strings.TrimSpace(v) == "" || len(v) > MaxUniversalAdID || !plainText(v)) {
					p["creative.universalAdId."+k] = fmt.Sprintf("is required: 1 to %d bytes of text without control characters", MaxUniversalAdID)
				}
			}
			c.UniversalAdID = &u
		}
		c.Verifications = verifications(fields, p)
	}
	return c
}

// verifications reads a video's verifications, naming problems under
// "creative.verifications[i].…".
func verifications(fields map[string]json.RawMessage, p Problems) []Verification {
	raw, ok := present(fields, "verifications")
	if !ok {
		return nil
	}
	var vs []Verification
	if firstByte(raw) != '[' || json.Unmarshal(raw, &vs) != nil || len(vs) > MaxVerifications {
		p["creative.verifications"] = fmt.Sprintf(`must be a list of at most %d objects {"vendor", "url", "parameters", "notExecutedUrl"}`, MaxVerifications)
		return nil
	}
	for i, v := range vs {
		at := fmt.Sprintf("creative.verifications[%d].", i)
		if strings.TrimSpace(v.Vendor) == "" || len(v.Vendor) > MaxUniversalAdID || !plainText(v.Vendor) {
			p[at+"vendor"] = fmt.Sprintf("is required: the vendor's key (iabtechlab.com-omid), 1 to %d bytes of text", MaxUniversalAdID)
		}
		if msg := CheckURL(v.URL); msg != "" {
			p[at+"url"] = "the script's URL " + msg
		}
		if len(v.Parameters) > MaxVerificationParams || !plainText(v.Parameters) {
			p[at+"parameters"] = fmt.Sprintf("must be at most %d bytes of text (no control characters but tab and newlines)", MaxVerificationParams)
		}
		if v.NotExecutedURL != "" {
			if msg := CheckURL(strings.ReplaceAll(v.NotExecutedURL, "[REASON]", "1")); msg != "" {
				p[at+"notExecutedUrl"] = msg
			}
		}
	}
	return vs
}

// plainText reports whether s is UTF-8 without control characters but
// tab, newline and carriage return (what XML 1.0 documents may hold).
func plainText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}

// trackers reads a creative's third-party trackers at k: at most
// MaxTrackers URLs, each an http or https URL once its macros are filled.
func trackers(fields map[string]json.RawMessage, k string, p Problems) []string {
	raw, ok := present(fields, k)
	if !ok {
		return nil
	}
	var urls []string
	if json.Unmarshal(raw, &urls) != nil || len(urls) > MaxTrackers {
		p["creative."+k] = fmt.Sprintf("must be an array of at most %d URLs", MaxTrackers)
		return nil
	}
	for i, u := range urls {
		if len(u) > MaxURLLen {
			p[fmt.Sprintf("creative.%s[%d]", k, i)] = fmt.Sprintf("must be at most %d characters", MaxURLLen)
		} else if msg := CheckURL(fillSample(u)); msg != "" {
			p[fmt.Sprintf("creative.%s[%d]", k, i)] = msg + " (once its macros are filled)"
		}
	}
	return urls
}

// fillSample is u with every serving macro filled by a plausible value:
// what CheckURL judges of a URL that holds macros.
func fillSample(u string) string {
	return strings.NewReplacer("{random}", "1", "{timestamp}", "1", "{pageUrl}", "x", "{clickUrl}", "x", "{clickUrlEnc}", "x",
		"{gdpr}", "1", "{gdprConsent}", "x", "{placement}", "p", "{campaign}", "1", "{ad}", "1").Replace(u)
}

// article is "a type" or "an type".
func article(t string) string {
	if strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + t
	}
	return "a " + t
}

// Placement is where ads are shown: a slot of a site or an app, named for
// the tag (home-top), with the sizes and creative types it takes and an
// optional default (house) ad.
type Placement struct {
	ID int64
	PlacementInput
	CreatedAt, UpdatedAt time.Time
}

// MarshalJSON renders a placement with its id as a string and its times
// in TimeLayout; sizes and types are always arrays.
func (pl Placement) MarshalJSON() ([]byte, error) {
	sizes := pl.Sizes
	if sizes == nil {
		sizes = []string{}
	}
	var def string
	if pl.DefaultAdID != 0 {
		def = strconv.FormatInt(pl.DefaultAdID, 10)
	}
	return json.Marshal(struct {
		ID          string    `json:"id"`
		Name        string    `json:"name"`
		Site        string    `json:"site"`
		Sizes       []string  `json:"sizes"`
		Types       []string  `json:"types"`
		DefaultAdID string    `json:"defaultAdId,omitempty"`
		Passback    string    `json:"passback,omitempty"`
		Floor       *Micros   `json:"floor,omitempty"`
		AdBreaks    []AdBreak `json:"adBreaks,omitempty"`
		MaxDuration int       `json:"maxDurationMs,omitempty"`
		Expected    int64     `json:"expectedDailyRequests,omitempty"`
		RenderProof bool      `json:"renderProof"`
		Child       bool      `json:"childDirected"`
		CreatedAt   string    `json:"createdAt"`
		UpdatedAt   string    `json:"updatedAt"`
	}{strconv.FormatInt(pl.ID, 10), pl.Name, pl.Site, sizes, pl.Types, def, pl.Passback, floorOf(pl.Floor), pl.AdBreaks, pl.MaxDurationMs, pl.ExpectedDailyRequests,
		pl.RenderProof, pl.ChildDirected, FormatTime(pl.CreatedAt), FormatTime(pl.UpdatedAt)})
}

// PlacementInput is what a client sets of a placement.
type PlacementInput struct {
	Name        string   `json:"name"`
	Site        string   `json:"site"`
	Sizes       []string `json:"sizes"`
	Types       []string `json:"types"`
	DefaultAdID int64    `json:"defaultAdId"`
	// Passback is the placement's own fallback tag (HTML, the publisher's):
	// the tag renders it, in a friendly frame of the page, in a slot that
	// nothing fills ("": none).
	Passback string `json:"passback"`
	// Floor is the least a header-bidding bid must offer to fill the
	// placement, after its bidder's adjustment (CPM in the install's
	// currency; 0: none). The tag offers it to Prebid's floors module.
	Floor Micros `json:"floor"`
	// ExpectedDailyRequests is the requests a day its publisher expects
	// (0: not declared): forecasts read it until the placement has
	// MinRangeWeeks weeks of its own history (docs/api.md#forecasts).
	ExpectedDailyRequests int64 `json:"expectedDailyRequests"`
	// AdBreaks are a video placement's ad rules: where in a content video
	// its ad breaks fall and how many ads each holds (GET /vmap; none:
	// the placement answers no VMAP).
	AdBreaks []AdBreak `json:"adBreaks,omitempty"`
	// MaxDurationMs is the longest video or audio ad the placement takes,
	// in milliseconds (0: any; OpenRTB's maxduration): a longer one, or a
	// wrapper that declares no duration, does not fill it.
	MaxDurationMs int `json:"maxDurationMs"`
	// RenderProof asks the tag for a proof that each ad rendered, sent
	// with its billable hits: a hit without a valid one is invalid traffic
	// (noRenderProof) and bills nothing (docs/ivt.md#render-proofs). For
	// placements the tag fills; off by default.
	RenderProof bool `json:"renderProof"`
	// ChildDirected: the placement is directed to children (COPPA): its
	// decisions have no user, no personalisation and send nothing of the
	// user, ever (docs/privacy.md#activities). A child-directed site's
	// placements are too.
	ChildDirected bool `json:"childDirected"`
}

// An AdBreak is one ad break of a content video: at Offset — "start"
// (pre-roll), "end" (post-roll), a time into the content ("00:10:00" or
// "00:10:00.000": a mid-roll) or a share of it ("50%") — a pod of Ads
// ads (1 to MaxPod) whose durations add up to at most MaxDurationMs
// milliseconds (0: no limit; OpenRTB's poddur).
type AdBreak struct {
	Offset        string `json:"offset"`
	Ads           int    `json:"ads"`
	MaxDurationMs int    `json:"maxDurationMs,omitempty"`
}

// Limits of a placement's ad breaks.
const (
	MaxAdBreaks = 20
	MaxPod      = 10
)

// adBreakTime is a mid-roll's offset: HH:MM:SS or HH:MM:SS.mmm.
var adBreakTime = regexp.MustCompile(`^([0-9]{2}):([0-5][0-9]):([0-5][0-9])(\.[0-9]{3})?$`)

// adBreakShare is a mid-roll's offset as a share of the content: 1% to 99%.
var adBreakShare = regexp.MustCompile(`^([1-9][0-9]?)%$`)

// At is where break b falls in content of duration d (0: unknown): 0 for
// "start", d for "end" (-1 when d is unknown), its time, or its share of
// d (-1 when d is unknown).
func (b AdBreak) At(d time.Duration) time.Duration {
	switch {
	case b.Offset == "start":
		return 0
	case b.Offset == "end" && d > 0:
		return d
	case b.Offset == "end":
		return -1
	}
	if m := adBreakShare.FindStringSubmatch(b.Offset); m != nil {
		if d <= 0 {
			return -1
		}
		n, _ := strconv.Atoi(m[1])
		return d * time.Duration(n) / 100
	}
	m := adBreakTime.FindStringSubmatch(b.Offset)
	if m == nil {
		return -1
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	sec, _ := strconv.Atoi(m[3])
	at := time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute + time.Duration(sec)*time.Second
	if m[4] != "" {
		ms, _ := strconv.Atoi(m[4][1:])
		at += time.Duration(ms) * time.Millisecond
	}
	return at
}

// parseAdBreaks reads a placement's adBreaks, naming problems under
// "adBreaks[i].…".
func parseAdBreaks(raw json.RawMessage, p Problems) []AdBreak {
	var bs []AdBreak
	if firstByte(raw) != '[' || json.Unmarshal(raw, &bs) != nil || len(bs) > MaxAdBreaks {
		p["adBreaks"] = fmt.Sprintf(`must be a list of at most %d breaks {"offset": "start", "end", "00:10:00" or "50%%", "ads": 1 to %d}`, MaxAdBreaks, MaxPod)
		return nil
	}
	seen := map[string]bool{}
	for i, b := range bs {
		at := fmt.Sprintf("adBreaks[%d].", i)
		if b.Offset != "start" && b.Offset != "end" && !adBreakTime.MatchString(b.Offset) && !adBreakShare.MatchString(b.Offset) {
			p[at+"offset"] = `must be "start", "end", a time into the content ("00:10:00") or a share of it ("50%")`
		} else if seen[b.Offset] {
			p[at+"offset"] = "is another break's"
		}
		seen[b.Offset] = true
		if b.Ads < 1 || b.Ads > MaxPod {
			p[at+"ads"] = fmt.Sprintf("must be the break's number of ads, 1 to %d", MaxPod)
		}
		if b.MaxDurationMs < 0 || b.MaxDurationMs > MaxPod*MaxVideoMs {
			p[at+"maxDurationMs"] = fmt.Sprintf("must be the longest the break's ads may last together, in milliseconds: 0 (no limit) to %d", MaxPod*MaxVideoMs)
		}
	}
	return bs
}

// MaxExpectedDailyRequests bounds a placement's declared requests a day.
const MaxExpectedDailyRequests = 1_000_000_000_000

// MaxPlacementName is the longest placement name.
const MaxPlacementName = 64

// placementNameOK reports whether s is what a placement name may be:
// URL-safe, lower-case, [a-z0-9][a-z0-9_-]*. A loop, not a regexp: reports
// check the name of every event that carries one (the regexp was 14% of
// the tally's time, go test ./reports -bench Written).
func placementNameOK(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && (c == '_' || c == '-')) {
			return false
		}
	}
	return s != ""
}

// CheckPlacementName returns what is wrong with a placement name, or "".
func CheckPlacementName(s string) string {
	if len(s) > MaxPlacementName || !placementNameOK(s) {
		return fmt.Sprintf("must be 1 to %d characters of a-z, 0-9, _ and -, starting with a letter or digit (it goes in URLs and tags)", MaxPlacementName)
	}
	return ""
}

// IsSize reports whether s is a size "WIDTHxHEIGHT": each side 1 to
// MaxCreativeSide pixels, in digits without a leading zero (a
// placement's sizes, a header-bidding bid's). It does not allocate.
func IsSize[T ~string | ~[]byte](s T) bool {
	side := func(x T) bool {
		if len(x) == 0 || len(x) > 4 || x[0] == '0' {
			return false
		}
		n := 0
		for i := 0; i < len(x); i++ {
			if x[i] < '0' || x[i] > '9' {
				return false
			}
			n = n*10 + int(x[i]-'0')
		}
		return n <= MaxCreativeSide
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 'x' {
			return side(s[:i]) && side(s[i+1:])
		}
	}
	return false
}

// ParsePlacementInput decodes and validates a placement body. Types
// default to every creative type; sizes to none (any size).
func ParsePlacementInput(body []byte) (PlacementInput, error) {
	var in PlacementInput
	p := Problems{}
	fields, ok := object(body, p, "name", "site", "sizes", "types", "defaultAdId", "passback", "floor", "expectedDailyRequests", "adBreaks", "maxDurationMs", "renderProof", "childDirected")
	if !ok {
		return in, Invalid("invalid placement", p)
	}
	if raw, ok := present(fields, "renderProof"); ok && json.Unmarshal(raw, &in.RenderProof) != nil {
		p["renderProof"] = "must be true or false"
	}
	if raw, ok := present(fields, "childDirected"); ok && json.Unmarshal(raw, &in.ChildDirected) != nil {
		p["childDirected"] = "must be true or false"
	}
	if raw, ok := present(fields, "adBreaks"); ok {
		in.AdBreaks = parseAdBreaks(raw, p)
	}
	if raw, ok := present(fields, "maxDurationMs"); ok {
		if json.Unmarshal(raw, &in.MaxDurationMs) != nil || in.MaxDurationMs < 0 || in.MaxDurationMs > MaxVideoMs {
			p["maxDurationMs"] = fmt.Sprintf("must be the longest video or audio ad the placement takes, in milliseconds: 0 (any) to %d", MaxVideoMs)
		}
	}
	if raw, ok := present(fields, "name"); !ok {
		p["name"] = "is required"
	} else if json.Unmarshal(raw, &in.Name) != nil {
		p["name"] = "must be a string"
	} else if msg := CheckPlacementName(in.Name); msg != "" {
		p["name"] = msg
	}
	if raw, ok := present(fields, "site"); ok && string(raw) != `""` { // "" is no site
		in.Site = nameField(fields, "site", false, p)
	}
	if raw, ok := present(fields, "sizes"); ok {
		if json.Unmarshal(raw, &in.Sizes) != nil {
			p["sizes"] = `must be an array of sizes such as "300x250"`
		}
		for i, s := range in.Sizes {
			if !IsSize(s) {
				p[fmt.Sprintf("sizes[%d]", i)] = fmt.Sprintf(`must be WIDTHxHEIGHT in pixels from 1 to %d, such as "300x250"`, MaxCreativeSide)
			}
		}
		in.Sizes = slices.Compact(slices.Sorted(slices.Values(in.Sizes)))
	}
	in.Types = DefaultPlacementTypes
	if raw, ok := present(fields, "types"); ok {
		var ts []string
		if json.Unmarshal(raw, &ts) != nil || len(ts) == 0 {
			p["types"] = "must be a non-empty array of " + strings.Join(CreativeTypes, ", ")
		}
		in.Types = nil
		for i, t := range ts {
			if !slices.Contains(CreativeTypes, t) {
				p[fmt.Sprintf("types[%d]", i)] = "must be one of " + strings.Join(CreativeTypes, ", ")
			}
		}
		for _, t := range CreativeTypes { // in the order of CreativeTypes, once each
			if slices.Contains(ts, t) {
				in.Types = append(in.Types, t)
			}
		}
	}
	if raw, ok := present(fields, "defaultAdId"); ok {
		if id, ok := ParseID(raw); ok {
			in.DefaultAdID = id
		} else {
			p["defaultAdId"] = "must be an ad's id"
		}
	}
	if raw, ok := present(fields, "expectedDailyRequests"); ok {
		if json.Unmarshal(raw, &in.ExpectedDailyRequests) != nil || in.ExpectedDailyRequests < 0 || in.ExpectedDailyRequests > MaxExpectedDailyRequests {
			p["expectedDailyRequests"] = fmt.Sprintf("must be an integer from 0 (not declared) to %d: the requests a day the placement expects", int64(MaxExpectedDailyRequests))
		}
	}
	if raw, ok := present(fields, "passback"); ok {
		switch {
		case json.Unmarshal(raw, &in.Passback) != nil:
			p["passback"] = "must be a string of HTML"
		case len(in.Passback) > MaxHTMLLen:
			p["passback"] = fmt.Sprintf("must be at most %d bytes", MaxHTMLLen)
		}
	}
	if raw, ok := present(fields, "floor"); ok {
		m, err := ParseAmount(raw)
		if err != nil {
			p["floor"] = "must be a CPM: " + err.Error()
		}
		in.Floor = m
	}
	return in, Invalid("invalid placement", p)
}

// floorOf is a placement's floor as its JSON shows it (none: 0).
func floorOf(m Micros) *Micros {
	if m == 0 {
		return nil
	}
	return &m
}

// Accepts reports whether the placement takes creative c (its type, and
// its size when the placement names sizes and c has one).
func (in *PlacementInput) Accepts(c *Creative) bool {
	if c == nil {
		return true
	}
	if !slices.Contains(in.Types, c.Type) {
		return false
	}
	if len(in.Sizes) == 0 || c.Width == 0 || c.Height == 0 {
		return true
	}
	for _, s := range in.Sizes {
		if sizeIs(s, c.Width, c.Height) {
			return true
		}
	}
	return false
}

// Lasts says whether creative c is short enough for the placement (see
// Creative.FitsIn).
func (in *PlacementInput) Lasts(c *Creative) bool { return c.FitsIn(in.MaxDurationMs) }

// FitsIn says whether creative c (nil: none) fits in ms milliseconds (0:
// no limit): it is not a video or audio ad, or it declares a duration of
// at most ms (a wrapper without one is of unknown length, and does not
// fit a limit). A placement's maxDurationMs and what is left of a pod's
// duration are both checked by it.
func (c *Creative) FitsIn(ms int) bool {
	return c == nil || ms == 0 || !IsLinear(c.Type) || c.DurationMs > 0 && c.DurationMs <= ms
}

// sizeIs reports whether s, a "WxH" of ParsePlacementInput, is w by h. It
// allocates nothing: decisions ask it of every candidate.
func sizeIs(s string, w, h int) bool {
	x := strings.IndexByte(s, 'x')
	return x > 0 && atoiIs(s[:x], w) && atoiIs(s[x+1:], h)
}

func atoiIs(s string, n int) bool {
	v := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		v = v*10 + int(s[i]-'0')
	}
	return s != "" && v == n
}

// NoPlacement is the error of an unknown placement name.
func NoPlacement(name string) *Error { return Errorf(KindNotFound, "no placement %q", name) }
