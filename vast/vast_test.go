package vast_test

import (
	"encoding/xml"
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
}

// TestElementOrder checks that every element of a document, clickable or
// not, lists its children in the specification's order (strict players
// and SSAI validators refuse others).
func TestElementOrder(t *testing.T) {
	for _, clickable := range []bool{false, true} {
		tm, err := vast.Compile(vast.Ad{ID: 7, Title: "t", MediaURL: "https://cdn.test/v.mp4", MimeType: "video/mp4", Duration: time.Second, Clickable: clickable})
		if err != nil {
			t.Fatal(err)
		}
		doc := vast.Header + string(tm.Append(nil, 0, func(dst []byte, h byte) []byte { return append(dst, "https://ads.test/x"...) })) + vast.Footer
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
