package vast_test

import (
	"encoding/xml"
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
			got.Ad.Serving != "https://ads.test/t/D/TOKEN" || holes != 12 {
			t.Errorf("title %q: %+v, %d holes; want sequence 2, 01:02:03.456, the media URL, the serving id's hole, 12 holes", title, got.Ad, holes)
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
