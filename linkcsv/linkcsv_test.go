package linkcsv_test

import (
	"bytes"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"marquee"
	"marquee/linkcsv"
)

// What Write writes, Read reads back field for field, hostile text
// included (a title a spreadsheet would run as a formula, quotes, commas,
// newlines, emoji).
func TestRoundTrip(t *testing.T) {
	links := []marquee.Link{
		{Code: "a", URL: "https://example.com/a?x=1,2", Title: `=HYPERLINK("evil")`, Tags: []string{"spring", "-promo"}, Redirect: 302},
		{Code: "B_2", Domain: "go.brand.example", URL: "https://example.com/b", Title: "Line one\u2028 \"quoted\", 🎉", Redirect: 301,
			ExpiresAt: time.Date(2031, 1, 2, 3, 4, 5, 6e6, time.UTC), MaxClicks: 9},
		{Code: "c", URL: "http://example.org/", Redirect: 308},
	}
	var buf bytes.Buffer
	w := linkcsv.NewWriter(&buf)
	for i := range links {
		if err := w.Write(&links[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"'=HYPERLINK(""evil"")"`) {
		t.Errorf("a formula title is written %q; want it inert, behind a '", buf.String())
	}
	res, err := linkcsv.Read(&buf, "")
	if err != nil || res.Format != linkcsv.Marquee || len(res.Bad) != 0 || res.Total != 3 {
		t.Fatalf("Read = %+v, %v; want 3 good rows of Marquee's format", res, err)
	}
	for i, r := range res.Rows {
		if want := links[i].Input(); r.Line != i+2 || !reflect.DeepEqual(r.In, want) {
			t.Errorf("row %d: line %d, %+v; want line %d, %+v", i, r.Line, r.In, i+2, want)
		}
	}
}

func TestOtherShortenersExports(t *testing.T) {
	for _, c := range []struct {
		name, file, format string
		want               []marquee.LinkInput
		ignored            []string
	}{
		{"shlink", "createdAt,domain,shortCode,shortUrl,longUrl,title,tags,visits\n" +
			"2024-01-02T03:04:05+00:00,s.test,abc,https://s.test/abc,https://example.com/1,First,promo|Spring,12\n" +
			"2024-01-02T03:04:05+00:00,s.test,x-Y,https://s.test/x-Y,https://example.com/2,,,0\n",
			linkcsv.Shlink, []marquee.LinkInput{
				{Code: "abc", URL: "https://example.com/1", Title: "First", Tags: []string{"promo", "spring"}, Redirect: 302},
				{Code: "x-Y", URL: "https://example.com/2", Redirect: 302}},
			[]string{"createdAt", "shortUrl", "visits"}},
		{"yourls", "keyword,url,title,timestamp,ip,clicks\nozh,https://ozh.org/,Ozh,2009-01-01 00:00:00,127.0.0.1,5\n",
			linkcsv.YOURLS, []marquee.LinkInput{{Code: "ozh", URL: "https://ozh.org/", Title: "Ozh", Redirect: 302}},
			[]string{"timestamp", "ip", "clicks"}},
		{"bitly", "\uFEFFid,link,long_url,title,created_at,tags\nbit.ly/3xYz,https://bit.ly/3xYz,https://example.com/long,Launch,2023-05-01,\"a,b\"\n",
			linkcsv.Bitly, []marquee.LinkInput{{Code: "3xYz", URL: "https://example.com/long", Title: "Launch", Tags: []string{"a", "b"}, Redirect: 302}},
			[]string{"created_at"}},
	} {
		res, err := linkcsv.Read(strings.NewReader(c.file), "")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []marquee.LinkInput
		for _, r := range res.Rows {
			got = append(got, r.In)
		}
		if res.Format != c.format || !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(res.Ignored, c.ignored) || len(res.Bad) > 0 {
			t.Errorf("%s: Read = format %s, %+v, ignored %q, bad %v; want %s, %+v, ignored %q", c.name, res.Format, got, res.Ignored, res.Bad, c.format, c.want, c.ignored)
		}
	}
}

// Every bad row is reported by its row number with every problem, and the
// rest are still read.
func TestBadRowsByNumber(t *testing.T) {
	file := "code,url,title,tags,domain,expiresAt,maxClicks,redirect\n" +
		"ok1,https://example.com/1,,,,,,\n" +
		"ok2,javascript:alert(1),,,,,,\n" +
		"api,https://example.com/3,,\"a,b\",Not A Domain!,tomorrow,-1,303\n" +
		"\n" +
		"ok4,https://example.com/4,,,,,,,extra\n" +
		"ok1,https://example.com/7,,,,,,\n" +
		"\"broken,https://example.com/5\n"
	res, err := linkcsv.Read(strings.NewReader(file), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].In.Code != "ok1" || res.Total != 6 {
		t.Fatalf("good rows %+v of %d; want ok1 alone of 6", res.Rows, res.Total)
	}
	p := res.Problems()
	for k, want := range map[string]string{
		"row 3: url": "http or https", "row 4: code": "reserved", "row 4: domain": "not a hostname",
		"row 4: expiresAt": "RFC 3339", "row 4: maxClicks": "positive", "row 4: redirect": "301",
		"row 6: row": "9 cells", "row 7: code": "repeats row 2", "row 8": "not CSV",
	} {
		if !strings.Contains(p[k], want) {
			t.Errorf("problem %q = %q; want …%s… (all: %v)", k, p[k], want, p)
		}
	}
	for _, bad := range []string{"", "title,tags\nx,y\n"} {
		if _, err := linkcsv.Read(strings.NewReader(bad), ""); err == nil {
			t.Errorf("Read(%q): want an error (no header, or no url column)", bad)
		}
	}
}

// TestBadRowsBounded: a 4 MB file of bad rows keeps the problems of the
// first linkcsv.MaxBadKept and counts the rest, in memory bounded by that,
// not by the file (before: a map per row, 1.2 GB for such a file).
func TestBadRowsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("code,url\n")
	for b.Len() < 4<<20 {
		b.WriteString("c,notaurl\n")
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := linkcsv.Read(strings.NewReader(b.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if len(res.Bad) != linkcsv.MaxBadKept || res.BadRows != res.Total || res.Total < 400_000 {
		t.Errorf("kept %d bad rows of %d (%d read); want %d kept, all counted", len(res.Bad), res.BadRows, res.Total, linkcsv.MaxBadKept)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 16<<20 {
		t.Errorf("the heap grew by %d MB reading 4 MB of bad rows; want at most 16 MB (the problems of %d rows)", grown>>20, linkcsv.MaxBadKept)
	}
	runtime.KeepAlive(res)
}
