package vast_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marquee/vast"
)

// xmllint is the path of libxml2's xmllint, from MARQUEE_TEST_XMLLINT
// (.ci/run installs libxml2-utils and sets it); the test is skipped,
// naming the variable, without it.
func xmllint(t *testing.T) string {
	t.Helper()
	path := os.Getenv("MARQUEE_TEST_XMLLINT")
	if path == "" {
		t.Skip("MARQUEE_TEST_XMLLINT is not set (the path of xmllint, from libxml2-utils): the documents are not checked against the VAST 4.2 schema")
	}
	return path
}

// validate checks doc against testdata/vast4.2.xsd (the IAB's VAST 4.2
// schema as the repository writes it) and returns xmllint's complaint, or
// "".
func validate(t *testing.T, lint, doc string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(lint, "--noout", "--nonet", "--schema", "testdata/vast4.2.xsd", f).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%v: %s", err, out)
	}
	return ""
}

// TestSchema: every kind of document Marquee answers — no ad, an inline
// video (skippable, with its UniversalAdId and Open Measurement
// verifications), a pod of three, a wrapper, an audio ad, a video with
// image and HTML companions — validates against the VAST 4.2 schema; a
// document with two elements swapped does not (the check can fail).
func TestSchema(t *testing.T) {
	lint := xmllint(t)
	fill := func(dst []byte, h byte) []byte {
		if h == vast.ServingID {
			return append(dst, "0123456789abcdef0123456789abcdef"...)
		}
		return fmt.Appendf(dst, "https://ads.test/t/%c/TOKEN?x=1&y=[CACHEBUSTING]", h)
	}
	compile := func(a vast.Ad) *vast.Template {
		t.Helper()
		tm, err := vast.Compile(a)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	video := vast.Ad{ID: 7, Title: `Spring <sale> & "more"`, MediaURL: "https://cdn.test/v.mp4?a=1&b=2", MimeType: "video/mp4",
		Width: 1280, Height: 720, Duration: 15 * time.Second, Clickable: true}
	skippable := video
	skippable.SkipOffset, skippable.Registry, skippable.UniversalID = 5*time.Second, "ad-id.org", "ACME0001000H"
	skippable.Verifications = []vast.Verification{
		{Vendor: "iabtechlab.com-omid", URL: "https://verify.test/omid.js", Parameters: `{"k":"<v>"}`, NotExecutedURL: "https://verify.test/ne?r=[REASON]"},
		{Vendor: "other.test-omid", URL: "https://other.test/v.js"},
	}
	wrapped := vast.Ad{ID: 8, Title: "buyer", TagURL: "https://buyer.test/vast?cb=[CACHEBUSTING]&w=1", Clickable: true,
		Verifications: skippable.Verifications[:1]}
	audio := vast.Ad{ID: 9, Title: "spot", MediaURL: "https://cdn.test/a.mp3", MimeType: "audio/mpeg", Duration: 30 * time.Second, Audio: true}
	hls := vast.Ad{ID: 10, Title: "live", MediaURL: "https://cdn.test/v.m3u8", MimeType: "application/x-mpegURL", Duration: 6 * time.Second}
	companions, err := vast.CompileCompanions("all", []vast.Companion{
		{ID: 11, Width: 300, Height: 250, ImageURL: "https://ads.test/img/a.png", MimeType: "image/png", Clickable: true},
		{ID: 12, Width: 728, Height: 90, HTML: `<a href="https://acme.test/?a=1&b=2">Acme</a>`},
	})
	if err != nil {
		t.Fatal(err)
	}
	companion := func(dst []byte, i int, h byte) []byte { return fmt.Appendf(dst, "https://ads.test/t/%c/C%d", h, i) }
	doc := func(ads ...[]byte) string {
		var b strings.Builder
		b.WriteString(vast.Header)
		for _, a := range ads {
			b.Write(a)
		}
		return b.String() + vast.Footer
	}
	kinds := []struct{ name, doc string }{
		{"no ad", vast.Empty},
		{"inline", doc(compile(video).Append(nil, 0, fill))},
		{"skippable, UniversalAdId, verifications", doc(compile(skippable).Append(nil, 0, fill))},
		{"pod", doc(compile(video).Append(nil, 1, fill), compile(skippable).Append(nil, 2, fill), compile(hls).Append(nil, 3, fill))},
		{"wrapper", doc(compile(wrapped).Append(nil, 0, fill))},
		{"wrapper without a click", doc(compile(vast.Ad{ID: 13, TagURL: "https://buyer.test/vast"}).Append(nil, 0, fill))},
		{"audio", doc(compile(audio).Append(nil, 0, fill))},
		{"companions", doc(compile(video).AppendWith(nil, 0, fill, companions, companion))},
		{"pod with companions", doc(compile(video).AppendWith(nil, 1, fill, companions, companion), compile(audio).Append(nil, 2, fill))},
	}
	for _, k := range kinds {
		if msg := validate(t, lint, k.doc); msg != "" {
			t.Errorf("%s does not validate: %s\n%s", k.name, msg, k.doc)
		}
	}
	// The check itself: AdTitle before AdServingId breaks Inline_type's
	// order, a MediaFile without a type its attributes.
	inline := kinds[1].doc
	const uid = `<UniversalAdId idRegistry="unknown">unknown</UniversalAdId>`
	if !strings.Contains(inline, "</Linear>"+uid+"</Creative>") {
		t.Errorf("inline: want UniversalAdId after Linear, last in its Creative (the IAB's sequence):\n%s", inline)
	}
	swapped := strings.Replace(inline, "<AdServingId>", "<AdTitle>x</AdTitle><AdServingId>", 1)
	swapped = strings.Replace(swapped, "</AdServingId><AdTitle>", "</AdServingId><Junk>", 1)
	swapped = strings.Replace(swapped, "</AdTitle><Creatives>", "</Junk><Creatives>", 1)
	for name, bad := range map[string]string{
		"AdTitle before AdServingId": swapped,
		"a MediaFile without a type": strings.Replace(inline, ` type="video/mp4"`, "", 1),
		"Duration after MediaFiles":  strings.Replace(strings.Replace(inline, "<Duration>00:00:15.000</Duration>", "", 1), "</MediaFiles>", "</MediaFiles><Duration>00:00:15.000</Duration>", 1),
		// Creative_Inline_type is the IAB's sequence: UniversalAdId last.
		"UniversalAdId before Linear": strings.Replace(strings.Replace(inline, uid, "", 1), "<Linear", uid+"<Linear", 1),
	} {
		if bad == inline {
			t.Fatalf("%s: the document did not change", name)
		}
		if validate(t, lint, bad) == "" {
			t.Errorf("%s validates; want the schema to refuse it", name)
		}
	}
}
