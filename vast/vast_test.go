package vast_test

import (
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"marquee/vast"
)

// A document stays well formed, and says what it was given, whatever the
// ad's title and media URL hold: markup, CDATA's end, the byte that marks
// a hole, invalid UTF-8.
func TestHostileFields(t *testing.T) {
	for _, title := range []string{"plain", "<b>&amp;</b>", "]]>", "a\x01i b", "\xff\xfe", `"quoted" 'title'`} {
		tm, err := vast.Compile(vast.Ad{ID: 7, Title: title, MediaURL: "https://cdn.test/v.mp4?a=1&b=]]>", MimeType: "video/mp4", Duration: 3723456 * time.Millisecond})
		if err != nil {
			t.Fatalf("Compile(%q): %v", title, err)
		}
		holes := 0
		doc := vast.Header + string(tm.Append(nil, 2, func(dst []byte, h byte) []byte {
			holes++
			return append(dst, "https://ads.test/t/"+string(h)+"/TOKEN"...)
		})) + vast.Footer
		var got struct {
			Ad struct {
				Sequence string `xml:"sequence,attr"`
				Title    string `xml:"InLine>AdTitle"`
				Duration string `xml:"InLine>Creatives>Creative>Linear>Duration"`
				Media    string `xml:"InLine>Creatives>Creative>Linear>MediaFiles>MediaFile"`
				Serving  string `xml:"InLine>AdServingId"`
			}
		}
		if err := xml.Unmarshal([]byte(doc), &got); err != nil {
			t.Fatalf("title %q: %v in\n%s", title, err, doc)
		}
		want := strings.ToValidUTF8(strings.ReplaceAll(title, "\x01", "\uFFFD"), "\uFFFD")
		if got.Ad.Title != want && !(strings.Contains(title, "\xff") && got.Ad.Title == "\uFFFD\uFFFD") {
			t.Errorf("AdTitle = %q; want %q", got.Ad.Title, want)
		}
		if got.Ad.Sequence != "2" || got.Ad.Duration != "01:02:03.456" || got.Ad.Media != "https://cdn.test/v.mp4?a=1&b=]]>" ||
			got.Ad.Serving != "https://ads.test/t/D/TOKEN" || holes != 14 {
			t.Errorf("title %q: %+v, %d holes; want sequence 2, 01:02:03.456, the media URL, the serving id's hole, 14 holes (3 of them ViewableImpression's)", title, got.Ad, holes)
		}
	}
}

// BenchmarkAppend measures filling an ad's template: what a VAST answer
// costs beyond its decision and signature.
func BenchmarkAppend(b *testing.B) {
	tm, err := vast.Compile(vast.Ad{ID: 7, Title: "Spring sale", MediaURL: "https://cdn.test/v.mp4", MimeType: "video/mp4", Duration: 15 * time.Second, Clickable: true})
	if err != nil {
		b.Fatal(err)
	}
	head := []byte("http://ads.example.com")
	token := []byte(strings.Repeat("A", 100))
	buf := make([]byte, 0, 8<<10)
	b.ReportAllocs()
	for b.Loop() {
		buf = tm.Append(buf[:0], 0, func(dst []byte, h byte) []byte {
			return append(append(append(append(dst, head...), "/t/"...), h, '/'), token...)
		})
	}
	b.SetBytes(int64(len(buf)))
}

// specOrder is the order of the children of the elements Marquee writes,
// as the IAB's VAST 4.2 XSD's sequences lay them out, where a type that
// extends another lists the base's elements first: InLine's are
// AdDefinitionBase_type's (AdSystem, Error, Extensions, Impression,
// Pricing, ViewableImpression) then InLine's own; Linear's are
// Linear_Base_type's (Icons, TrackingEvents) then Linear_Inline_type's.
// Written here from the spec, independently of the package's types.
// (Creative's children are not checked: the spec's own samples put
// UniversalAdId first, and no player is known to care.)
var specOrder = map[string][]string{
	"InLine": {"AdSystem", "Error", "Extensions", "Impression", "Pricing", "ViewableImpression", "AdServingId", "AdTitle",
		"AdVerifications", "Advertiser", "Category", "Creatives", "Description", "Expires", "Survey"},
	"ViewableImpression": {"Viewable", "NotViewable", "ViewUndetermined"},
	"Linear":             {"Icons", "TrackingEvents", "AdParameters", "Duration", "MediaFiles", "VideoClicks"},
	// CompanionAd_type: the resources (CreativeResource_type's group),
	// then AdParameters … TrackingEvents.
	"CompanionAds": {"Companion"},
	"Companion": {"HTMLResource", "IFrameResource", "StaticResource", "AdParameters", "AltText", "CompanionClickThrough",
		"CompanionClickTracking", "CreativeExtensions", "TrackingEvents"},
	"Creatives":       {"Creative"},
	"AdVerifications": {"Verification"},
	// Wrapper_type: AdDefinitionBase_type's, then its own, alphabetical.
	"Wrapper": {"AdSystem", "Error", "Extensions", "Impression", "Pricing", "ViewableImpression", "AdVerifications", "BlockedAdCategories",
		"Creatives", "VASTAdTagURI"},
	"VideoClicks": {"ClickThrough", "ClickTracking", "CustomClick"},
	// Verification_type, alphabetical.
	"Verification": {"ExecutableResource", "JavaScriptResource", "TrackingEvents", "VerificationParameters"},
}

// TestElementOrder checks that every element of a document, clickable or
// not, lists its children in the specification's order (strict players
// and SSAI validators refuse others).
func TestElementOrder(t *testing.T) {
	companions, err := vast.CompileCompanions("all", []vast.Companion{{ID: 8, Width: 300, Height: 250, HTML: "<b>x</b>", Clickable: true},
		{ID: 9, Width: 728, Height: 90, ImageURL: "https://ads.test/assets/a.png", MimeType: "image/png"}})
	if err != nil {
		t.Fatal(err)
	}
	for i, clickable := range []bool{false, true, false, true} {
		tag := ""
		if i >= 2 { // a wrapper
			tag = "https://buyer.test/vast?cb=[CACHEBUSTING]"
		}
		tm, err := vast.Compile(vast.Ad{ID: 7, Title: "t", MediaURL: "https://cdn.test/v.mp4", MimeType: "video/mp4", Duration: time.Second, Clickable: clickable,
			Verifications: []vast.Verification{{Vendor: "v.test-omid", URL: "https://v.test/omid.js", Parameters: "{}", NotExecutedURL: "https://v.test/ne?r=[REASON]"}},
			TagURL:        tag})
		if err != nil {
			t.Fatal(err)
		}
		url := func(dst []byte, h byte) []byte { return append(dst, "https://ads.test/x"...) }
		doc := vast.Header + string(tm.AppendWith(nil, 0, url, companions, func(dst []byte, _ int, h byte) []byte { return url(dst, h) })) + vast.Footer
		dec := xml.NewDecoder(strings.NewReader(doc))
		type open struct {
			name string
			last int // index in specOrder of the last child seen
		}
		var stack []open
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch e := tok.(type) {
			case xml.StartElement:
				if len(stack) > 0 {
					parent := &stack[len(stack)-1]
					if order, ok := specOrder[parent.name]; ok {
						i := slices.Index(order, e.Name.Local)
						switch {
						case i < 0:
							t.Errorf("<%s> holds <%s>, which the spec does not put there", parent.name, e.Name.Local)
						case i < parent.last:
							t.Errorf("<%s>: <%s> after <%s>; the spec's order is %v", parent.name, e.Name.Local, order[parent.last], order)
						default:
							parent.last = i
						}
					}
				}
				stack = append(stack, open{name: e.Name.Local})
			case xml.EndElement:
				stack = stack[:len(stack)-1]
			}
		}
	}
}

// TestCompanions: a video's companions, read back with types written from
// the spec: each its resource (a hostile HTML survives CDATA whole), its
// creativeView and click filled naming the companion, required as asked.
func TestCompanions(t *testing.T) {
	hostile := `<b>]]></Companion><script>x</script></b>`
	ct, err := vast.CompileCompanions("any", []vast.Companion{{ID: 8, Width: 300, Height: 250, HTML: hostile, Clickable: true},
		{ID: 9, Width: 728, Height: 90, ImageURL: "https://ads.test/assets/a.png?x=1&y=2", MimeType: "image/png"}})
	if err != nil {
		t.Fatal(err)
	}
	tm, _ := vast.Compile(vast.Ad{ID: 7, Title: "t", MediaURL: "https://cdn.test/v.mp4", MimeType: "video/mp4", Duration: time.Second})
	doc := vast.Header + string(tm.AppendWith(nil, 0, func(dst []byte, h byte) []byte { return append(dst, "https://ads.test/v"...) }, ct,
		func(dst []byte, i int, h byte) []byte { return fmt.Appendf(dst, "https://ads.test/c%d/%c", i, h) })) + vast.Footer
	var got struct {
		Creatives []struct {
			Linear       *struct{} `xml:"Linear"`
			CompanionAds *struct {
				Required   string `xml:"required,attr"`
				Companions []struct {
					ID     string `xml:"id,attr"`
					Width  string `xml:"width,attr"`
					Height string `xml:"height,attr"`
					HTML   string `xml:"HTMLResource"`
					Static struct {
						Type string `xml:"creativeType,attr"`
						URL  string `xml:",chardata"`
					} `xml:"StaticResource"`
					Click    string `xml:"CompanionClickThrough"`
					Tracking []struct {
						Event string `xml:"event,attr"`
						URL   string `xml:",chardata"`
					} `xml:"TrackingEvents>Tracking"`
				} `xml:"Companion"`
			}
		} `xml:"Ad>InLine>Creatives>Creative"`
	}
	if err := xml.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatalf("%v in %s", err, doc)
	}
	if len(got.Creatives) != 2 || got.Creatives[0].Linear == nil || got.Creatives[1].CompanionAds == nil {
		t.Fatalf("creatives = %+v; want the Linear, then the CompanionAds", got.Creatives)
	}
	ca := got.Creatives[1].CompanionAds
	if ca.Required != "any" || len(ca.Companions) != 2 {
		t.Fatalf("CompanionAds = %+v", ca)
	}
	c0, c1 := ca.Companions[0], ca.Companions[1]
	if c0.ID != "8" || c0.Width != "300" || c0.HTML != hostile || c0.Click != "https://ads.test/c0/c" || len(c0.Tracking) != 1 ||
		c0.Tracking[0].Event != "creativeView" || c0.Tracking[0].URL != "https://ads.test/c0/i" {
		t.Errorf("companion 8 = %+v", c0)
	}
	if c1.ID != "9" || c1.Static.Type != "image/png" || c1.Static.URL != "https://ads.test/assets/a.png?x=1&y=2" || c1.Click != "" ||
		len(c1.Tracking) != 1 || c1.Tracking[0].URL != "https://ads.test/c1/i" {
		t.Errorf("companion 9 = %+v", c1)
	}
}

// TestSkippableAndUniversalAdID: a skippable ad's Linear says when the
// skip button shows (skipoffset, as a VAST time), a creative's
// UniversalAdId its registry and id (hostile text escaped); without them,
// no skipoffset and "unknown" for both, as VAST requires an id.
func TestSkippableAndUniversalAdID(t *testing.T) {
	for _, c := range []struct {
		skip                 time.Duration
		registry, id         string
		wantSkip             string
		wantRegistry, wantID string
	}{
		{5 * time.Second, "ad-id.org", "ABCD1234000H", "00:00:05.000", "ad-id.org", "ABCD1234000H"},
		{1500 * time.Millisecond, "<brand>&co", "]]>\"x\"", "00:00:01.500", "<brand>&co", "]]>\"x\""},
		{0, "", "", "", "unknown", "unknown"},
	} {
		tm, err := vast.Compile(vast.Ad{ID: 7, Title: "t", MediaURL: "https://cdn.test/v.mp4", MimeType: "video/mp4", Duration: 30 * time.Second,
			SkipOffset: c.skip, Registry: c.registry, UniversalID: c.id})
		if err != nil {
			t.Fatal(err)
		}
		doc := vast.Header + string(tm.Append(nil, 0, func(dst []byte, h byte) []byte { return append(dst, "https://ads.test/x"...) })) + vast.Footer
		var got struct {
			Creative struct {
				UniversalAdID struct {
					Registry string `xml:"idRegistry,attr"`
					Value    string `xml:",chardata"`
				} `xml:"UniversalAdId"`
				Linear struct {
					SkipOffset *string `xml:"skipoffset,attr"`
					Tracking   []struct {
						Event string `xml:"event,attr"`
					} `xml:"TrackingEvents>Tracking"`
				}
			} `xml:"Ad>InLine>Creatives>Creative"`
		}
		if err := xml.Unmarshal([]byte(doc), &got); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		skip := ""
		if got.Creative.Linear.SkipOffset != nil {
			skip = *got.Creative.Linear.SkipOffset
		}
		if skip != c.wantSkip || got.Creative.UniversalAdID.Registry != c.wantRegistry || got.Creative.UniversalAdID.Value != c.wantID {
			t.Errorf("skip %v, %q %q: skipoffset %q, UniversalAdId %+v; want %q, %q %q", c.skip, c.registry, c.id, skip, got.Creative.UniversalAdID, c.wantSkip, c.wantRegistry, c.wantID)
		}
		if !slices.ContainsFunc(got.Creative.Linear.Tracking, func(e struct {
			Event string `xml:"event,attr"`
		}) bool {
			return e.Event == "skip"
		}) {
			t.Errorf("no skip tracking event in %s", doc)
		}
	}
}

// TestVerifications: a video's Open Measurement verifications, read with
// types written from the spec: each vendor's JavaScriptResource (omid,
// browser optional), its parameters as given (hostile text whole in
// CDATA) and its verificationNotExecuted URL with [REASON] left for the
// player; none: no AdVerifications element.
func TestVerifications(t *testing.T) {
	params := `{"k":"<x>]]>&y"}`
	vs := []vast.Verification{{Vendor: "iabtechlab.com-omid", URL: "https://v.test/omid.js?a=1&b=2", Parameters: params, NotExecutedURL: "https://v.test/ne?r=[REASON]"},
		{Vendor: "other.test", URL: "https://o.test/v.js"}}
	for _, with := range [][]vast.Verification{vs, nil} {
		tm, err := vast.Compile(vast.Ad{ID: 7, Title: "t", MediaURL: "https://cdn.test/v.mp4", MimeType: "video/mp4", Duration: time.Second, Verifications: with})
		if err != nil {
			t.Fatal(err)
		}
		doc := vast.Header + string(tm.Append(nil, 0, func(dst []byte, h byte) []byte { return append(dst, "https://ads.test/x"...) })) + vast.Footer
		var got struct {
			AdVerifications *struct {
				Verification []struct {
					Vendor string `xml:"vendor,attr"`
					JS     struct {
						APIFramework    string `xml:"apiFramework,attr"`
						BrowserOptional string `xml:"browserOptional,attr"`
						URL             string `xml:",chardata"`
					} `xml:"JavaScriptResource"`
					Tracking []struct {
						Event string `xml:"event,attr"`
						URL   string `xml:",chardata"`
					} `xml:"TrackingEvents>Tracking"`
					Parameters string `xml:"VerificationParameters"`
				}
			} `xml:"Ad>InLine>AdVerifications"`
		}
		if err := xml.Unmarshal([]byte(doc), &got); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if with == nil {
			if got.AdVerifications != nil {
				t.Errorf("no verifications: %s; want no AdVerifications", doc)
			}
			continue
		}
		if got.AdVerifications == nil || len(got.AdVerifications.Verification) != 2 {
			t.Fatalf("AdVerifications of %s; want two", doc)
		}
		v := got.AdVerifications.Verification[0]
		if v.Vendor != "iabtechlab.com-omid" || v.JS.APIFramework != "omid" || v.JS.BrowserOptional != "true" || v.JS.URL != "https://v.test/omid.js?a=1&b=2" ||
			v.Parameters != params || len(v.Tracking) != 1 || v.Tracking[0].Event != "verificationNotExecuted" || v.Tracking[0].URL != "https://v.test/ne?r=[REASON]" {
			t.Errorf("verification = %+v", v)
		}
		if o := got.AdVerifications.Verification[1]; o.Vendor != "other.test" || len(o.Tracking) != 0 || o.Parameters != "" {
			t.Errorf("the second verification = %+v; want no tracking, no parameters", o)
		}
	}
}

// TestWrapper: an ad of another server's VAST tag is a Wrapper: its own
// impression, error, viewability, tracking events and click tracking
// (never a ClickThrough: the wrapped ad says where a click goes) and the
// tag's URL with its macros left for the player; no media, AdServingId or
// AdTitle of its own.
func TestWrapper(t *testing.T) {
	tag := "https://buyer.test/vast?id=1&cb=[CACHEBUSTING]&x=]]>"
	tm, err := vast.Compile(vast.Ad{ID: 9, Title: "t", TagURL: tag, Clickable: true})
	if err != nil {
		t.Fatal(err)
	}
	holes := 0
	doc := vast.Header + string(tm.Append(nil, 0, func(dst []byte, h byte) []byte {
		holes++
		return append(dst, "https://ads.test/t/"+string(h)+"/TOKEN"...)
	})) + vast.Footer
	var got struct {
		Ad struct {
			InLine  *struct{} `xml:"InLine"`
			Wrapper *struct {
				Impression []string `xml:"Impression"`
				Error      []string `xml:"Error"`
				AdTitle    *string  `xml:"AdTitle"`
				TagURI     string   `xml:"VASTAdTagURI"`
				Linear     struct {
					Tracking []struct {
						Event string `xml:"event,attr"`
						URL   string `xml:",chardata"`
					} `xml:"TrackingEvents>Tracking"`
					ClickTracking []string  `xml:"VideoClicks>ClickTracking"`
					ClickThrough  *string   `xml:"VideoClicks>ClickThrough"`
					MediaFiles    *struct{} `xml:"MediaFiles"`
				} `xml:"Creatives>Creative>Linear"`
			}
		}
	}
	if err := xml.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatalf("%v in\n%s", err, doc)
	}
	w := got.Ad.Wrapper
	if got.Ad.InLine != nil || w == nil {
		t.Fatalf("a tag's ad: %s; want a Wrapper", doc)
	}
	if w.TagURI != tag || len(w.Impression) != 1 || w.Impression[0] != "https://ads.test/t/i/TOKEN" || len(w.Error) != 1 || w.AdTitle != nil ||
		len(w.Linear.Tracking) != len(vast.Events) || len(w.Linear.ClickTracking) != 1 || w.Linear.ClickTracking[0] != "https://ads.test/t/c/TOKEN" ||
		w.Linear.ClickThrough != nil || w.Linear.MediaFiles != nil || holes != 5+len(vast.Events)+1 {
		t.Errorf("Wrapper = %+v (%d holes) in %s", w, holes, doc)
	}
}

// TestAudio: an audio ad's MediaFile names its audio type, 0 by 0 (as
// the IAB's audio guidance has it), whatever size it was given.
func TestAudio(t *testing.T) {
	tm, err := vast.Compile(vast.Ad{ID: 3, Title: "Podcast spot", MediaURL: "https://cdn.test/spot.mp3", MimeType: "audio/mpeg", Duration: 30 * time.Second,
		Width: 640, Height: 360, Audio: true})
	if err != nil {
		t.Fatal(err)
	}
	doc := vast.Header + string(tm.Append(nil, 0, func(dst []byte, h byte) []byte { return append(dst, "https://ads.test/x"...) })) + vast.Footer
	var got struct {
		Media struct {
			Type   string `xml:"type,attr"`
			Width  string `xml:"width,attr"`
			Height string `xml:"height,attr"`
			URL    string `xml:",chardata"`
		} `xml:"Ad>InLine>Creatives>Creative>Linear>MediaFiles>MediaFile"`
		Duration string `xml:"Ad>InLine>Creatives>Creative>Linear>Duration"`
	}
	var ad struct {
		Ad struct {
			AdType string `xml:"adType,attr"`
		} `xml:"Ad"`
	}
	if err := xml.Unmarshal([]byte(doc), &ad); err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatal(err)
	}
	if got.Media.Type != "audio/mpeg" || got.Media.Width != "0" || got.Media.Height != "0" || got.Media.URL != "https://cdn.test/spot.mp3" || got.Duration != "00:00:30.000" ||
		ad.Ad.AdType != "audio" {
		t.Errorf("audio = %+v %s, adType %q; want audio/mpeg, 0 by 0, its URL, 30 s, adType audio", got.Media, got.Duration, ad.Ad.AdType)
	}
}
