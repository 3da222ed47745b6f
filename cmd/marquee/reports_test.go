package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"marquee/tmpfs"
)

// stats is the part of a report the tests read.
type stats struct {
	Granularity string
	Totals      struct {
		Impressions, Clicks, Conversions, Measured, Views            int64
		Starts, FirstQuartiles, Midpoints, ThirdQuartiles, Completes int64
		VideoMeasured, VideoViews, Errors                            int64
		Viewability, VideoViewability, CompletionRate                float64
	}
	Series []struct {
		T                   string
		Impressions, Clicks int64
	}
	Breakdown []struct {
		Country, Platform, ErrorCode string
		Impressions, Clicks, Errors  int64
	}
}

func (in *instance) stats(path string) stats {
	in.t.Helper()
	r := in.admin("GET", path, "")
	var s stats
	if r.status != 200 || json.Unmarshal([]byte(r.body), &s) != nil {
		in.t.Fatalf("GET %s = %d %s", path, r.status, r.body)
	}
	return s
}

// Durable events flow into a child process killed with SIGKILL: after the
// restart the reports equal what the files hold; a rebuild gives the same;
// another restart changes nothing.
func TestReportsSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a child process")
	}
	data := t.TempDir()
	noEnv := func(string) string { return "" }
	var out, logs strings.Builder // what the commands print, shown when they fail
	if err := run(context.Background(), []string{"seed", "-data", data, "-ads", "1", "-scheduled", "0", "-expired", "0"}, noEnv, nil, &out, &logs); err != nil {
		t.Fatal(err)
	}
	base, cmd := startChild(t, data, "-events-durable",
		"-reports-flush", "100ms", "-events-rotate-age", "300ms")
	var acked, n atomic.Int64
	client := &http.Client{Timeout: 5 * time.Second}
	killUnderLoad(cmd, 900*time.Millisecond, func() bool {
		status, err := get(client, fmt.Sprintf("%s/e?type=impression&ad=1&uid=u%d", base, n.Add(1)))
		if err != nil {
			return false // killed
		}
		if status == 204 {
			acked.Add(1)
		}
		return true
	})
	inFiles := int64(0)
	for _, l := range eventLines(t, data) {
		if l["type"] == "impression" && l["ad"] == "1" {
			inFiles++
		}
	}
	if inFiles < acked.Load() || acked.Load() < 100 {
		t.Fatalf("%d impressions in the files, %d acknowledged; want at least 100, all of them in the files", inFiles, acked.Load())
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	path := "/api/v1/ad/1/stats?from=" + today.Add(-24*time.Hour).Format(time.RFC3339) + "&to=" + today.Add(24*time.Hour).Format(time.RFC3339)
	check := func(when string) {
		in := start(t, data, nil, "-insecure-admin")
		if got := in.stats(path).Totals.Impressions; got != inFiles {
			t.Fatalf("%s: reports count %d impressions; the files hold %d", when, got, inFiles)
		}
		in.stop()
	}
	check("after the restart")
	if err := run(context.Background(), []string{"reports", "rebuild", "-data", data, "-from", today.Format(time.RFC3339), "-to", today.Add(time.Hour).Format(time.RFC3339)}, noEnv, nil, &out, &logs); err != nil {
		t.Fatalf("reports rebuild: %v\n%s%s", err, &out, &logs)
	}
	check("after a rebuild")
	check("after another restart")
}

// Three instances on one PostgreSQL take beacons and redirects at once;
// every instance then reports exactly what was sent, in total, by country
// and by platform.
func TestReportsThreeInstances(t *testing.T) { t.Parallel(); eachShared(t, testReportsThreeInstances) }

func testReportsThreeInstances(t *testing.T, db sharedDB, dsn string) {
	var ins []*instance
	for range 3 {
		ins = append(ins, db.start(t, dsn, "-reports-flush", "100ms"))
	}
	ins[0].expect(ins[0].admin("POST", "/api/v1/ad", `{"title":"x","startAt":"2024-01-01T00:00:00Z","endAt":"2031-01-01T00:00:00Z","url":"https://example.com/x"}`), 201, `{"id":"1"}`)
	var ad struct{ Link struct{ Code string } }
	json.Unmarshal([]byte(ins[0].do("GET", "/api/v1/ad/1", "", "", "").body), &ad)
	countries := []string{"TW", "JP", "US"}
	platforms := []string{"android", "ios", "web"}
	type sent struct{ impressions atomic.Int64 }
	var byCountry, byPlatform [3]sent
	var clicks atomic.Int64
	var wg sync.WaitGroup
	for i, in := range ins {
		for g := range 3 {
			wg.Go(func() {
				client := &http.Client{Timeout: 5 * time.Second}
				for k := range 60 {
					c, p := (i+g+k)%3, (g+k/3)%3
					status, err := get(client, fmt.Sprintf("%s/e?type=impression&ad=1&country=%s&platform=%s", in.url, countries[c], platforms[p]))
					if err != nil || status != 204 {
						t.Errorf("beacon: %d %v", status, err)
						return
					}
					byCountry[c].impressions.Add(1)
					byPlatform[p].impressions.Add(1)
					if k%4 == 0 {
						status, err := get(noFollow, in.url+"/r/"+ad.Link.Code)
						if err != nil || status != 302 {
							t.Errorf("redirect: %d %v", status, err)
							return
						}
						clicks.Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	total := 3 * 3 * 60
	for _, in := range ins {
		eventually(t, 10*time.Second, func() string {
			s := in.stats("/api/v1/ad/1/stats")
			if s.Totals.Impressions != int64(total) || s.Totals.Clicks != clicks.Load() {
				return fmt.Sprintf("%s reports %+v; want %d impressions, %d clicks", in.url, s.Totals, total, clicks.Load())
			}
			return ""
		})
		for i, c := range countries {
			s := in.stats("/api/v1/ad/1/stats?by=country")
			for _, b := range s.Breakdown {
				if b.Country == c && b.Impressions != byCountry[i].impressions.Load() {
					t.Errorf("%s: %s impressions = %d; want %d", in.url, c, b.Impressions, byCountry[i].impressions.Load())
				}
			}
		}
		s := in.stats("/api/v1/ad/1/stats?by=platform")
		for i, p := range platforms {
			want := byPlatform[i].impressions.Load()
			found := false
			for _, b := range s.Breakdown {
				if b.Platform == p {
					found = b.Impressions == want
				}
			}
			if !found {
				t.Errorf("%s: %s impressions in %+v; want %d", in.url, p, s.Breakdown, want)
			}
		}
		var series int64
		for _, p := range in.stats("/api/v1/ad/1/stats?granularity=hour&from=" + time.Now().Add(-2*time.Hour).Format(time.RFC3339)).Series {
			series += p.Impressions
		}
		if series != int64(total) {
			t.Errorf("%s: hourly series sums to %d impressions; want %d", in.url, series, total)
		}
		link := in.stats("/api/v1/links/" + ad.Link.Code + "/stats")
		if link.Totals.Clicks != clicks.Load() {
			t.Errorf("%s: link clicks = %d; want %d", in.url, link.Totals.Clicks, clicks.Load())
		}
	}
}

// Report routes: bad parameters are named, unknown ads and links are
// 404s, CSV is offered.
func TestReportRoutes(t *testing.T) {
	t.Parallel()
	in := start(t, t.TempDir(), nil, "-reports-flush", "50ms")
	in.expect(in.admin("POST", "/api/v1/ad", adBody("a", time.Now().Add(-time.Hour), time.Now().Add(time.Hour), "")), 201, "")
	in.expect(in.admin("POST", "/api/v1/links", `{"url":"https://x.test","code":"spring"}`), 201, "")
	client := &http.Client{}
	for range 3 {
		get(client, in.url+"/e?type=impression&ad=1&link=spring&country=de")
	}
	get(client, in.url+"/e?type=impression&ad=1&link=spring&country=de&uid="+strings.Repeat("u", 200))
	eventually(t, 5*time.Second, func() string {
		if s := in.stats("/api/v1/ad/1/stats"); s.Totals.Impressions != 4 || s.Granularity != "day" {
			return fmt.Sprintf("ad 1: %+v", s)
		}
		return ""
	})
	in.expect(in.admin("GET", "/api/v1/ad/9/stats", ""), 404, `{"error":"ad 9 not found"}`)
	in.expect(in.admin("GET", "/api/v1/links/nope/stats", ""), 404, `{"error":"no link \"nope\""}`)
	in.expect(in.do("GET", "/api/v1/ad/1/stats", "", "", ""), 401, "")
	in.expect(in.admin("GET", "/api/v1/ad/1/stats?from=yesterday&granularity=week&by=city&bots=all&tz=Mars/Olympus&format=xml", ""), 400,
		`{"error":"invalid query","problems":{"bots":"must be one of [\"exclude\" \"include\"], got \"all\"","by":"must be one of [\"country\" \"platform\" \"referrer\" \"browser\" \"os\" \"destination\" \"errorCode\"], got \"city\"",`+
			`"format":"must be one of [\"json\" \"csv\"], got \"xml\"","from":"must be an RFC 3339 timestamp, got \"yesterday\"",`+
			`"granularity":"must be one of [\"hour\" \"day\" \"month\"], got \"week\"","tz":"unknown IANA time zone \"Mars/Olympus\""}}`)
	in.expect(in.admin("GET", "/api/v1/ad/1/stats?from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", ""), 400,
		`{"error":"invalid query","problems":{"to":"the range may span at most 2 years"}}`)
	in.expect(in.admin("GET", "/api/v1/ad/1/stats?granularity=hour&from="+time.Now().Add(-100*24*time.Hour).Format(time.RFC3339), ""), 400,
		`{"error":"invalid query","problems":{"granularity":"hourly reports reach back 2160h0m0s (the hourly retention); ask for days or months"}}`)
	r := in.get("/api/v1/links/spring/stats?by=country")
	csv := in.get("/api/v1/links/spring/stats?by=country", "Accept", "text/csv")
	if want := "country,impressions,clicks,conversions,measured,views,starts,first_quartiles,midpoints,third_quartiles,completes,unverified_impressions,unverified_clicks,unverified_conversions,unverified_views,video_measured,video_views,post_view_conversions,conversion_value_micros,spend_nanos,unbilled,unbilled_nanos,errors,ctr,viewability,video_viewability,completion_rate\nDE,4,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n"; csv.body != want || !strings.HasPrefix(csv.header.Get("Content-Type"), "text/csv") {
		t.Errorf("CSV by Accept = %q (%s); want %q", csv.body, csv.header.Get("Content-Type"), want)
	}
	if !strings.Contains(r.body, `"breakdown":[{"country":"DE","impressions":4`) {
		t.Errorf("JSON breakdown = %s", r.body)
	}
	top := in.admin("GET", "/api/v1/stats?top=ads&metric=impressions&limit=5&format=csv", "")
	if top.body != "id,name,impressions,clicks,conversions,measured,views,starts,first_quartiles,midpoints,third_quartiles,completes,unverified_impressions,unverified_clicks,unverified_conversions,unverified_views,video_measured,video_views,post_view_conversions,conversion_value_micros,spend_nanos,unbilled,unbilled_nanos,errors,ctr,viewability,video_viewability,completion_rate\n1,a,4,0,0,0,0,0,0,0,0,0,4,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n" {
		t.Errorf("top ads CSV = %q", top.body)
	}
	if top := in.admin("GET", "/api/v1/stats?top=ads&limit=5", ""); !strings.Contains(top.body, `"top":[{"id":"1","title":"a",`) {
		t.Errorf("top ads = %s; want ad 1 with its title", top.body)
	}
	if top := in.admin("GET", "/api/v1/stats?top=links&format=csv", ""); top.body != "id,impressions,clicks,conversions,measured,views,starts,first_quartiles,midpoints,third_quartiles,completes,unverified_impressions,unverified_clicks,unverified_conversions,unverified_views,video_measured,video_views,post_view_conversions,conversion_value_micros,spend_nanos,unbilled,unbilled_nanos,errors,ctr,viewability,video_viewability,completion_rate\nspring,4,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n" {
		t.Errorf("top links CSV = %q; want the link by its code", top.body)
	}
	var s struct{ Totals struct{ Uniques int64 } }
	json.Unmarshal([]byte(in.admin("GET", "/api/v1/ad/1/stats", "").body), &s)
	// The 200-byte uid reaches the files as its pseudonym (-privacy
	// balanced, the default), short enough to count; the others had none.
	if s.Totals.Uniques != 1 {
		t.Errorf("uniques = %d; want 1 (no uid thrice, then a long one written as its pseudonym)", s.Totals.Uniques)
	}
}

// TestFullDiskReportsCountOnce, on a real 3 MiB tmpfs in the default
// (not durable) mode: beacons fill the event spool's disk; some are
// acknowledged, the rest refused (503), sent until 500 were. Once space returns, every
// acknowledged event is in the files exactly once, no event twice, and
// the ad's report counts exactly the events the files hold.
func TestFullDiskReportsCountOnce(t *testing.T) {
	t.Parallel()
	for _, codec := range []string{"none", "lz4"} {
		t.Run(codec, func(t *testing.T) { fullDiskReports(t, codec) })
	}
}

func fullDiskReports(t *testing.T, codec string) {
	mnt := tmpfs.Mount(t, 3<<20)
	db := filepath.Join(t.TempDir(), "marquee.db") // the store elsewhere: only the spool's disk fills
	flags := []string{"-db", db, "-events-min-free", "off", "-reports-flush", "100ms", "-events-codec", codec, "-events-rotate-mb", "1",
		"-events-flush", "5ms"}
	in := start(t, mnt, nil, flags...)
	from, to := time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	in.expect(in.admin("POST", "/api/v1/ad", adBody("A", from, to, "")), 201, `{"id":"1"}`)
	filler := tmpfs.Fill(t, mnt)
	fi, _ := os.Stat(filler)
	os.Truncate(filler, fi.Size()-32<<10) // room for some events: the disk fills under them
	rnd := rand.New(rand.NewPCG(5, 6))
	client := &http.Client{Timeout: 5 * time.Second}
	acked := map[string]bool{}
	refused := 0
	// Until the disk has refused beacons for a while (at most 40,000): how
	// many fit depends on how often the buffer is written, not on a count.
	for i := 0; i < 40_000 && refused < 500; i++ {
		uid := fmt.Sprintf("u%d", i)
		status, err := get(client, fmt.Sprintf("%s/e?type=impression&ad=1&uid=%s&who=%[2]s&pad=%016x%016x%016x%016x", in.url, uid, rnd.Uint64(), rnd.Uint64(), rnd.Uint64(), rnd.Uint64()))
		switch {
		case err != nil:
			t.Fatal(err)
		case status == 204:
			acked[uid] = true
		case status == 503:
			refused++
		default:
			t.Fatalf("beacon %d = %d; want 204 or 503", i, status)
		}
	}
	if refused == 0 {
		t.Fatal("every beacon was acknowledged: the disk never filled")
	}
	os.Remove(filler)
	if err := in.stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	first := in
	defer func() {
		if t.Failed() {
			t.Logf("log of the instance the disk filled under:\n%s", first.log)
		}
	}()

	seen := map[string]int{}
	for _, l := range eventLines(t, mnt) {
		if l["type"] == "impression" && l["ad"] == "1" {
			seen[l["who"].(string)]++ // its uid is a pseudonym
		}
	}
	inFiles := int64(0)
	for uid, n := range seen {
		if n != 1 {
			t.Errorf("event of %s is %d times in the files; want once", uid, n)
		}
		inFiles++
	}
	for uid := range acked {
		if seen[uid] == 0 {
			t.Errorf("acknowledged event of %s is not in the files", uid)
		}
	}
	in = start(t, mnt, nil, flags...)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	path := "/api/v1/ad/1/stats?from=" + today.Add(-24*time.Hour).Format(time.RFC3339) + "&to=" + today.Add(48*time.Hour).Format(time.RFC3339)
	if got := in.stats(path).Totals.Impressions; got != inFiles {
		t.Errorf("the report counts %d impressions; the files hold %d events (%d acknowledged, %d refused)", got, inFiles, len(acked), refused)
	}
}
