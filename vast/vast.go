// Package vast writes the VAST 4.2 documents (IAB Tech Lab's Video Ad
// Serving Template) that video players ask an ad server for: an InLine ad
// with its impression, error, viewability, click and tracking URLs, or an
// empty document when nothing fills the request.
//
// An ad's document is encoded once, with encoding/xml, into a Template
// whose holes are what changes from one request to the next (the signed
// tracking URLs and the ad serving id); a request only copies the
// template's bytes and fills its holes. The tests read what this package
// writes with types of their own, written from the specification, not
// with the types below.
package vast

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"time"

	"marquee/tracking"
)

// Version is the VAST version the documents declare.
const Version = "4.2"

// Header starts every document, and Footer ends it; a document with
// nothing between them is VAST's "no ad" answer.
const (
	Header = xml.Header + `<VAST version="` + Version + `" xmlns="http://www.iab.com/VAST">`
	Footer = `</VAST>`
)

// Empty is the document of a request that nothing fills.
const Empty = Header + Footer + "\n"

// ServingID is the hole of the ad serving id (AdServingId): the
// decision's id, unique per request. Every other hole is a tracking URL,
// named by its kind (package tracking).
const ServingID = 'D'

// Events are the kinds of VAST's tracking events a document asks the
// player to report (tracking.KindName is each one's VAST name).
var Events = []byte{tracking.Start, tracking.FirstQuartile, tracking.Midpoint, tracking.ThirdQuartile,
	tracking.Complete, tracking.Pause, tracking.Mute, tracking.Skip}

// Ad is what a video ad's document says of it.
type Ad struct {
	ID       int64
	Title    string
	MediaURL string
	MimeType string // one of marquee.VideoTypes or AudioTypes
	// Width and Height are the video's pixels; 0 writes DefaultWidth by
	// DefaultHeight (VAST requires both on a media file).
	Width, Height int
	Duration      time.Duration
	// Clickable: the document has a ClickThrough (the ad has a click URL;
	// a wrapper's is a ClickTracking: the wrapped ad says where to go).
	Clickable bool
	// Audio: the media is sound (audio/mpeg, …): the Ad says adType
	// "audio" and its MediaFile 0 by 0, as the IAB's audio guidance has
	// it, whatever Width and Height say.
	Audio bool
	// TagURL, when set, is another server's VAST tag that the document
	// wraps (a Wrapper with VASTAdTagURI): no media, duration, skip offset
	// or UniversalAdId of its own.
	TagURL string
	// SkipOffset: the player may skip the ad this far into it (0: not
	// skippable).
	SkipOffset time.Duration
	// Registry and UniversalID are the creative's UniversalAdId ("":
	// "unknown", as VAST requires one).
	Registry, UniversalID string
	// Verifications are the Open Measurement scripts the player runs
	// beside the ad (AdVerifications).
	Verifications []Verification
}

// Verification is a vendor's Open Measurement script: its key, script
// URL, parameters and not-executed tracking URL ("": none).
type Verification struct {
	Vendor, URL, Parameters, NotExecutedURL string
}

// The size a media file is said to be when its creative names none.
const (
	DefaultWidth  = 640
	DefaultHeight = 360
)

// Template is an ad's document (its <Ad> element) with holes: a hole is
// filled by the caller with the bytes of a tracking URL's kind, or of
// ServingID. A Template is never changed once compiled: share it.
type Template struct {
	head  []byte   // up to the <Ad>'s id attribute's value
	parts [][]byte // parts[i] follows hole i-1 (parts[0]: after the head)
	holes []byte
	// tail ends the document after its creatives (companions go before
	// it: AppendWith).
	tail []byte
	// of is, for a companions' template, the companion each hole is of
	// (nil for an ad's).
	of []int
}

// mark starts a hole in what encoding/xml writes: a byte no escaped text
// can hold (encoding/xml writes U+FFFD for it in text and attributes), so
// that only the fields this package writes as CDATA carry one.
const mark = '\x01'

func hole(kind byte) string { return string([]byte{mark, kind}) }

// Compile encodes a's document once: an InLine ad, or, for an ad with a
// TagURL, a Wrapper of that tag.
func Compile(a Ad) (*Template, error) {
	id := strconv.FormatInt(a.ID, 10)
	base := adBase{
		AdSystem:   adSystem{Version: "1", Name: "Marquee"},
		Error:      cdata{hole(tracking.Error) + "?code=[ERRORCODE]"},
		Impression: []idURL{{ID: "marquee", URL: hole(tracking.Impression)}},
		Viewable: &viewableImpression{ID: "marquee", Viewable: cdata{hole(tracking.VideoViewable)},
			NotViewable: cdata{hole(tracking.VideoNotViewable)}, Undetermined: cdata{hole(tracking.VideoViewUndetermined)}},
	}
	var events []trackingEvent
	for _, e := range Events {
		events = append(events, trackingEvent{Event: tracking.KindName(e), URL: hole(e)})
	}
	holes := 5 + len(Events) + boolInt(a.Clickable) // error, impression, the three viewable ones
	var doc any
	if a.TagURL != "" {
		wr := wrapper{adBase: base, Verifications: verificationsOf(a.Verifications), TagURI: cdata{a.TagURL}}
		lin := wrapperLinear{Tracking: events}
		if a.Clickable {
			lin.Clicks = &wrapperClicks{ClickTracking: idURL{ID: "marquee", URL: hole(tracking.Click)}}
		}
		wr.Creatives = []wrapperCreative{{ID: id, AdID: id, Linear: lin}}
		doc = wr
	} else {
		w, h := a.Width, a.Height
		switch {
		case a.Audio:
			w, h = 0, 0
		case w == 0 || h == 0:
			w, h = DefaultWidth, DefaultHeight
		}
		delivery := "progressive"
		if a.MimeType == "application/x-mpegURL" || a.MimeType == "application/dash+xml" {
			delivery = "streaming"
		}
		in := inLine{adBase: base, AdServingID: cdata{hole(ServingID)}, AdTitle: a.Title, Verifications: verificationsOf(a.Verifications)}
		holes++ // the serving id
		lin := linear{Duration: clock(a.Duration), Tracking: events}
		if a.SkipOffset > 0 {
			lin.SkipOffset = clock(a.SkipOffset)
		}
		lin.MediaFiles = []mediaFile{{Delivery: delivery, Type: a.MimeType, Width: w, Height: h, URL: a.MediaURL}}
		if a.Clickable {
			lin.Clicks = &videoClicks{ClickThrough: idURL{ID: "marquee", URL: hole(tracking.Click)}}
		}
		uid := universalAdID{Registry: "unknown", Value: "unknown"}
		if a.Registry != "" && a.UniversalID != "" {
			uid = universalAdID{Registry: a.Registry, Value: a.UniversalID}
		}
		in.Creatives = []creative{{ID: id, AdID: id, UniversalAdID: uid, Linear: lin}}
		doc = in
	}
	body, err := xml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("vast: ad %d: %w", a.ID, err)
	}
	if bytes.Count(body, []byte{mark}) != holes {
		return nil, fmt.Errorf("vast: ad %d: a field holds a byte 0x01", a.ID) // never: encoding/xml escapes it, and CDATA fields are checked text
	}
	full := append(append([]byte{'>'}, body...), "</Ad>"...)
	end := bytes.LastIndex(full, []byte("</Creatives>"))
	if end < 0 {
		return nil, fmt.Errorf("vast: ad %d: the document has no Creatives", a.ID)
	}
	head := `<Ad id="` + id + `"`
	if a.Audio && a.TagURL == "" {
		head += ` adType="audio"` // VAST 4.1's word to an audio player (video when absent)
	}
	t := &Template{head: []byte(head), tail: full[end:]}
	t.split(full[:end])
	return t, nil
}

// verificationsOf is the AdVerifications element of vs (nil: none).
func verificationsOf(vs []Verification) *adVerifications {
	if len(vs) == 0 {
		return nil
	}
	out := &adVerifications{}
	for _, v := range vs {
		one := verification{Vendor: v.Vendor, Script: jsResource{APIFramework: "omid", BrowserOptional: true, URL: v.URL}}
		if v.NotExecutedURL != "" {
			one.Tracking = []trackingEvent{{Event: "verificationNotExecuted", URL: v.NotExecutedURL}}
		}
		if v.Parameters != "" {
			one.Parameters = &cdata{v.Parameters}
		}
		out.Verifications = append(out.Verifications, one)
	}
	return out
}

// split cuts doc at its holes into t's parts.
func (t *Template) split(doc []byte) {
	pieces := bytes.Split(doc, []byte{mark})
	t.parts = append(t.parts, pieces[0])
	for _, p := range pieces[1:] {
		t.holes = append(t.holes, p[0])
		t.parts = append(t.parts, p[1:])
	}
}

// Companion is a companion banner of a video ad (VAST's CompanionAds): an
// image or an HTML creative shown beside the player, each with its own
// creativeView (its impression) and click.
type Companion struct {
	ID            int64
	Width, Height int
	// ImageURL and MimeType, for an image (StaticResource); HTML, for an
	// HTML creative (HTMLResource).
	ImageURL, MimeType string
	HTML               string
	Clickable          bool
}

// Required says which of a video's companions the player must show:
// "all" (an all-or-none roadblock), "any" or "none".
type Required string

// CompileCompanions encodes the <Creative> that holds a video's
// companions, each with a hole for its creativeView (tracking.Impression)
// and, when clickable, its CompanionClickThrough (tracking.Click):
// AppendWith fills them naming the companion (its index in cs).
func CompileCompanions(required Required, cs []Companion) (*Template, error) {
	ca := companionAds{Required: string(required)}
	for _, c := range cs {
		one := companion{ID: strconv.FormatInt(c.ID, 10), Width: c.Width, Height: c.Height,
			Tracking: []trackingEvent{{Event: "creativeView", URL: hole(tracking.Impression)}}}
		if c.HTML != "" {
			one.HTML = &cdata{c.HTML}
		} else {
			one.Static = &staticResource{CreativeType: c.MimeType, URL: c.ImageURL}
		}
		if c.Clickable {
			one.ClickThrough = &cdata{hole(tracking.Click)}
		}
		ca.Companions = append(ca.Companions, one)
	}
	cr := companionCreative{UniversalAdID: universalAdID{Registry: "unknown", Value: "unknown"}, CompanionAds: ca}
	body, err := xml.Marshal(cr)
	if err != nil {
		return nil, fmt.Errorf("vast: companions: %w", err)
	}
	t := &Template{}
	t.split(body)
	if len(t.holes) != len(cs)+countClickable(cs) {
		return nil, fmt.Errorf("vast: companions: a field holds a byte 0x01") // never: encoding/xml escapes it
	}
	for i, c := range cs {
		t.of = append(t.of, i)
		if c.Clickable {
			t.of = append(t.of, i)
		}
	}
	return t, nil
}

func countClickable(cs []Companion) int {
	n := 0
	for _, c := range cs {
		n += boolInt(c.Clickable)
	}
	return n
}

// AppendWith is Append, with the companions' creative of companions (nil:
// none) after the ad's own, its holes filled by fill naming the
// companion (its index in CompileCompanions' list).
func (t *Template) AppendWith(dst []byte, sequence int, fill func(dst []byte, hole byte) []byte,
	companions *Template, fillCompanion func(dst []byte, companion int, hole byte) []byte) []byte {
	dst = t.appendOpen(dst, sequence, fill)
	if companions != nil {
		dst = append(dst, companions.parts[0]...)
		for i, h := range companions.holes {
			dst = fillCompanion(dst, companions.of[i], h)
			dst = append(dst, companions.parts[i+1]...)
		}
	}
	return append(dst, t.tail...)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Append appends the ad's <Ad> element to dst, its holes filled by fill
// (which appends the bytes of a hole to dst and returns it: a tracking
// URL, or the serving id, with nothing that CDATA cannot hold); sequence
// > 0 places the ad in a pod.
func (t *Template) Append(dst []byte, sequence int, fill func(dst []byte, hole byte) []byte) []byte {
	return append(t.appendOpen(dst, sequence, fill), t.tail...)
}

// appendOpen is Append without the tail: the ad up to the end of its
// creatives.
func (t *Template) appendOpen(dst []byte, sequence int, fill func(dst []byte, hole byte) []byte) []byte {
	dst = append(dst, t.head...)
	if sequence > 0 {
		dst = append(strconv.AppendInt(append(dst, ` sequence="`...), int64(sequence), 10), '"')
	}
	dst = append(dst, t.parts[0]...)
	for i, h := range t.holes {
		dst = fill(dst, h)
		dst = append(dst, t.parts[i+1]...)
	}
	return dst
}

// clock is d as VAST writes a duration: HH:MM:SS.mmm.
func clock(d time.Duration) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("%02d:%02d:%02d.%03d", ms/3_600_000, ms/60_000%60, ms/1000%60, ms%1000)
}

// The elements this package writes (VAST 4.2, section 3).
type (
	adBase struct { // AdDefinitionBase_type, which InLine and Wrapper extend
		AdSystem   adSystem            `xml:"AdSystem"`
		Error      cdata               `xml:"Error"`
		Impression []idURL             `xml:"Impression"`
		Viewable   *viewableImpression `xml:"ViewableImpression"` // the base's last: before the extension's own
	}
	inLine struct {
		XMLName xml.Name `xml:"InLine"`
		adBase
		AdServingID cdata  `xml:"AdServingId"`
		AdTitle     string `xml:"AdTitle"`
		// Inline_type's own, alphabetical: AdVerifications before Creatives.
		Verifications *adVerifications `xml:"AdVerifications"`
		Creatives     []creative       `xml:"Creatives>Creative"`
	}
	wrapper struct { // Wrapper_type's own, alphabetical: AdVerifications, BlockedAdCategories, Creatives, VASTAdTagURI
		XMLName xml.Name `xml:"Wrapper"`
		adBase
		Verifications *adVerifications  `xml:"AdVerifications"`
		Creatives     []wrapperCreative `xml:"Creatives>Creative"`
		TagURI        cdata             `xml:"VASTAdTagURI"`
	}
	wrapperCreative struct {
		ID     string        `xml:"id,attr"`
		AdID   string        `xml:"adId,attr"`
		Linear wrapperLinear `xml:"Linear"`
	}
	wrapperLinear struct { // Linear_Wrapper_type: the base's TrackingEvents, then VideoClicks
		Tracking []trackingEvent `xml:"TrackingEvents>Tracking"`
		Clicks   *wrapperClicks  `xml:"VideoClicks"`
	}
	wrapperClicks struct {
		ClickTracking idURL `xml:"ClickTracking"`
	}
	adVerifications struct {
		Verifications []verification `xml:"Verification"`
	}
	verification struct { // Verification_type: JavaScriptResource, TrackingEvents, VerificationParameters
		Vendor     string          `xml:"vendor,attr"`
		Script     jsResource      `xml:"JavaScriptResource"`
		Tracking   []trackingEvent `xml:"TrackingEvents>Tracking"`
		Parameters *cdata          `xml:"VerificationParameters"`
	}
	jsResource struct {
		APIFramework    string `xml:"apiFramework,attr"`
		BrowserOptional bool   `xml:"browserOptional,attr"`
		URL             string `xml:",cdata"`
	}
	adSystem struct {
		Version string `xml:"version,attr"`
		Name    string `xml:",chardata"`
	}
	cdata struct {
		Text string `xml:",cdata"`
	}
	idURL struct {
		ID  string `xml:"id,attr"`
		URL string `xml:",cdata"`
	}
	viewableImpression struct { // the player's measurement: video viewability is Viewable ÷ (Viewable + NotViewable)
		ID           string `xml:"id,attr"`
		Viewable     cdata  `xml:"Viewable"`
		NotViewable  cdata  `xml:"NotViewable"`
		Undetermined cdata  `xml:"ViewUndetermined"`
	}
	creative struct { // Creative_Inline_type's sequence: Linear, then UniversalAdId
		ID            string        `xml:"id,attr"`
		AdID          string        `xml:"adId,attr"`
		Linear        linear        `xml:"Linear"`
		UniversalAdID universalAdID `xml:"UniversalAdId"`
	}
	universalAdID struct {
		Registry string `xml:"idRegistry,attr"`
		Value    string `xml:",chardata"`
	}
	linear struct { // Linear_Base_type's TrackingEvents first, then Linear_Inline_type's own
		SkipOffset string          `xml:"skipoffset,attr,omitempty"`
		Tracking   []trackingEvent `xml:"TrackingEvents>Tracking"`
		Duration   string          `xml:"Duration"`
		MediaFiles []mediaFile     `xml:"MediaFiles>MediaFile"`
		Clicks     *videoClicks    `xml:"VideoClicks"`
	}
	trackingEvent struct {
		Event string `xml:"event,attr"`
		URL   string `xml:",cdata"`
	}
	mediaFile struct {
		Delivery string `xml:"delivery,attr"`
		Type     string `xml:"type,attr"`
		Width    int    `xml:"width,attr"`
		Height   int    `xml:"height,attr"`
		URL      string `xml:",chardata"`
	}
	videoClicks struct {
		ClickThrough idURL `xml:"ClickThrough"`
	}
	companionCreative struct { // Creative_Inline_type's sequence: CompanionAds, then UniversalAdId
		XMLName       xml.Name      `xml:"Creative"`
		CompanionAds  companionAds  `xml:"CompanionAds"`
		UniversalAdID universalAdID `xml:"UniversalAdId"`
	}
	companionAds struct {
		Required   string      `xml:"required,attr"`
		Companions []companion `xml:"Companion"`
	}
	companion struct { // CompanionAd_type: a resource, CompanionClickThrough, TrackingEvents
		ID           string          `xml:"id,attr"`
		Width        int             `xml:"width,attr"`
		Height       int             `xml:"height,attr"`
		HTML         *cdata          `xml:"HTMLResource"`
		Static       *staticResource `xml:"StaticResource"`
		ClickThrough *cdata          `xml:"CompanionClickThrough"`
		Tracking     []trackingEvent `xml:"TrackingEvents>Tracking"`
	}
	staticResource struct {
		CreativeType string `xml:"creativeType,attr"`
		URL          string `xml:",cdata"`
	}
)
