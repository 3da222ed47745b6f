package reports_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"net/netip"
	"strconv"

	"marquee"
	"marquee/geoip"
	"marquee/geoip/geoiptest"
	"marquee/ivt"
	"marquee/linkroute"
	"marquee/reportrow"
	"marquee/reports"
	"marquee/store"
	"marquee/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Real User-Agents, and what a report makes of them.
func TestUserAgents(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ua       string
		platform string
		bot      bool
	}{
		{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36", "android", false},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "ios", false},
		{"Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1", "ios", false},
		{"MyApp/3.2 CFNetwork/1494.0.7 Darwin/23.4.0", "ios", false},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36", "web", false},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15", "web", false},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0", "web", false},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "web", true},
		{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "android", true},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "web", true},
		{"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "web", true},
		{"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "web", true},
		{"Twitterbot/1.0", "web", true},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "web", true},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36", "web", true},
		{"curl/8.5.0", "web", true},
		{"python-requests/2.32.3", "web", true},
		{"", "web", true},
	} {
		if got := reports.Platform(nil, []byte(c.ua)); got != c.platform {
			t.Errorf("Platform(%q) = %q; want %q", c.ua, got, c.platform)
		}
		if got := ivt.DefaultAgents().Classify(c.ua) != ivt.Human; got != c.bot {
			t.Errorf("invalid(%q) = %v; want %v", c.ua, got, c.bot)
		}
	}
	if got := reports.Platform([]byte("IOS"), []byte("Android")); got != "ios" {
		t.Errorf("Platform(IOS field, Android UA) = %q; want the field's ios", got)
	}
	if got := reports.Platform([]byte("tv"), []byte("Android")); got != "android" {
		t.Errorf("Platform(bad field, Android UA) = %q; want the UA's android", got)
	}
}

// A GeoIP database the test writes itself places addresses; a valid
// country field wins; anything else is ZZ.
func TestCountry(t *testing.T) {
	t.Parallel()
	geo := writeGeoIP(t, map[string]string{"81.2.69.0/24": "GB", "2a00:1450::/32": "TW"})
	for _, c := range []struct{ field, ip, want string }{
		{"jp", "81.2.69.160", "JP"},
		{"", "81.2.69.160", "GB"},
		{"XX", "81.2.69.160", "GB"},
		{"", "2a00:1450::1", "TW"},
		{"", "192.0.2.1", "ZZ"},
		{"<script>", "not an ip", "ZZ"},
	} {
		if got := reports.Country([]byte(c.field), nil, []byte(c.ip), geo); string(got[:]) != c.want {
			t.Errorf("Country(%q, %q) = %s; want %s", c.field, c.ip, got[:], c.want)
		}
	}
	// The server's geo field (the country before privacy truncated the
	// address) comes after the client's field and before a look-up.
	for _, c := range []struct{ field, geoField, ip, want string }{
		{"", "FR", "81.2.69.0", "FR"},
		{"jp", "FR", "81.2.69.0", "JP"},
		{"XX", "", "81.2.69.0", "GB"},
	} {
		if got := reports.Country([]byte(c.field), []byte(c.geoField), []byte(c.ip), geo); string(got[:]) != c.want {
			t.Errorf("Country(%q, geo %q, %q) = %s; want %s", c.field, c.geoField, c.ip, got[:], c.want)
		}
	}
	if got := reports.Country(nil, nil, []byte("81.2.69.160"), nil); string(got[:]) != "ZZ" {
		t.Errorf("Country without GeoIP = %s; want ZZ", got[:])
	}
}

// writeGeoIP writes a MaxMind-format database mapping networks to
// countries and opens it.
func writeGeoIP(t *testing.T, networks map[string]string) *geoip.DB {
	t.Helper()
	path := geoiptest.Write(t, networks)
	geo, err := geoip.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { geo.Close() })
	return geo
}

// world is a store with ad 1 and link "spring" (of ad 1) and "autumn",
// and a Tally of slot "a" over it.
type world struct {
	st     store.Store
	spring int64
	tl     *reports.Tally
}

// newWorld is a world on SQLite.
func newWorld(t testing.TB) *world {
	t.Helper()
	be := storetest.Backends[0]
	return worldOn(t, be.OpenStore(t, be.NewDB(t)))
}

// worldOn makes a world in the empty store st.
func worldOn(t testing.TB, st store.Store) *world {
	t.Helper()
	ctx := context.Background()
	if _, err := st.CreateAd(ctx, marquee.AdInput{Title: "a", StartAt: time.Now().Add(-time.Hour), EndAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	l, err := st.CreateLink(ctx, marquee.LinkInput{Code: "spring", URL: "https://x.test", Redirect: 302, AdID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateLink(ctx, marquee.LinkInput{Code: "autumn", URL: "https://x.test", Redirect: 302}); err != nil {
		t.Fatal(err)
	}
	w := &world{st: st, spring: l.ID}
	w.tl = w.tally(t, "a", t.TempDir())
	return w
}

// tally returns a Tally of slot that has recovered the spool at dir.
func (w *world) tally(t testing.TB, slot, dir string) *reports.Tally {
	t.Helper()
	tl := reports.New(reports.Config{Store: w.st, Resolver: resolver{w.st}, Slot: slot, Log: quiet}, nil)
	if err := tl.Recover(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return tl
}

// resolver answers from the store.
type resolver struct{ st store.Store }

func (r resolver) AdExists(ctx context.Context, id int64) (bool, error) {
	_, err := r.st.Ad(ctx, id)
	if marquee.KindOf(err) == marquee.KindNotFound {
		return false, nil
	}
	return err == nil, err
}

func (r resolver) CampaignAdvertiser(ctx context.Context, id int64) (int64, bool, error) {
	c, err := r.st.Campaign(ctx, id)
	if marquee.KindOf(err) == marquee.KindNotFound {
		return 0, false, nil
	}
	return c.AdvertiserID, err == nil, err
}

func (r resolver) PlacementID(ctx context.Context, name string) (int64, bool, error) {
	p, err := r.st.Placement(ctx, name)
	if marquee.KindOf(err) == marquee.KindNotFound {
		return 0, false, nil
	}
	return p.ID, err == nil, err
}

func (r resolver) Link(ctx context.Context, key string) (marquee.Link, bool, error) {
	l, err := r.st.LinkTarget(ctx, key)
	if marquee.KindOf(err) == marquee.KindNotFound {
		return l, false, nil
	}
	return l, err == nil, err
}

const iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)"

// line is an event line as the collector writes it.
func line(at time.Time, fields string) string {
	return fmt.Sprintf(`{"receivedAt":"%s","id":"x","ip":"203.0.113.7","ua":%q,%s}`+"\n",
		at.UTC().Format("2006-01-02T15:04:05.000000000Z"), iphone, fields)
}

func report(t *testing.T, w *world, q reports.Query) *reports.Report {
	t.Helper()
	if q.Granularity == "" {
		q.Granularity = reports.DefaultGranularity(q.From, q.To)
	}
	r, err := reports.NewReporter(w.st, 90*24*time.Hour).Report(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// What is counted: impressions, clicks and conversions naming an existing
// ad or link; a redirect's click for its link and its ad; bots apart; and
// nothing for other types or unknown ids — no row grows for them.
func TestWhatIsCounted(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		w := worldOn(t, be.OpenStore(t, db))
		ctx := context.Background()
		reg := prometheus.NewRegistry()
		tl := reports.New(reports.Config{Store: w.st, Resolver: resolver{w.st}, Slot: "a", Log: quiet}, reg)
		if err := tl.Recover(ctx, t.TempDir()); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)
		var lines strings.Builder
		lines.WriteString(line(at, `"type":"impression","ad":"1","country":"tw","uid":"u1","measured":"1","verified":"1"`))
		lines.WriteString(line(at, `"type":"impression","ad":1,"uid":"u2","nested":{"a":[1,"}"]}`))
		lines.WriteString(line(at, `"type":"click","code":"spring","adId":"1","referrer":"x"`)) // a redirect
		lines.WriteString(line(at, `"type":"conversion","link":"autumn","platform":"web"`))
		lines.WriteString(line(at, `"type":"view","ad":"1","verified":"1"`))
		lines.WriteString(line(at, `"type":"start","ad":"1"`))
		lines.WriteString(line(at, `"type":"midpoint","ad":"1"`))
		lines.WriteString(line(at, `"type":"pause","ad":"1"`)) // in the file, not in reports
		for i := range 50 {
			lines.WriteString(line(at, fmt.Sprintf(`"type":"impression","ad":"%d","link":"nope%d"`, 1000+i, i)))
		}
		lines.WriteString(strings.Replace(line(at, `"type":"click","ad":"1"`), iphone, "Googlebot/2.1", 1))
		tl.Written("f1", 0, []byte(lines.String()))
		if err := tl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		notCounted := notCountedOf(reg)
		if want := map[string]float64{"other type": 1, "unknown ad": 50, "unknown link": 50}; !maps.Equal(notCounted, want) {
			t.Errorf("marquee_reports_events_not_counted_total = %v; want %v", notCounted, want)
		}
		from, to := at.Truncate(24*time.Hour), at.Truncate(24*time.Hour).Add(24*time.Hour)
		ad := report(t, w, reports.Query{Entity: marquee.EntityAd, ID: 1, From: from, To: to, By: "country"})
		if got := ad.Totals; got.Impressions != 2 || got.Clicks != 1 || got.Conversions != 0 || *got.Uniques != 2 || got.CTR != 0 {
			t.Errorf("ad 1 totals = %+v; want 2 impressions, 1 click, 2 uniques, ctr 0 (its one verified impression has no verified click)", got)
		}
		if got := ad.Totals; got.Measured != 1 || got.Views != 1 || got.Viewability != 1 || got.Starts != 1 || got.Midpoints != 1 ||
			got.Completes != 0 || got.CompletionRate != 0 {
			t.Errorf("ad 1 totals = %+v; want 1 measured, 1 view (viewability 1), 1 start, 1 midpoint, no completes", got)
		}
		if got := ad.Totals; got.UnverifiedImpressions != 1 || got.UnverifiedClicks != 1 || got.UnverifiedViews != 0 {
			t.Errorf("ad 1 totals = %+v; want 1 unverified impression (the one without verified), 1 unverified click (the redirect's), no unverified view", got)
		}
		if b := ad.Breakdown; len(b) != 2 || b[0].Country != "TW" && b[0].Country != "ZZ" {
			t.Errorf("ad 1 by country = %+v; want TW and ZZ", b)
		}
		if b := ad.BotsLeftOut; b == nil || *b != (reports.Counts{Clicks: 1, UnverifiedClicks: 1}) {
			t.Errorf("ad 1 bots left out = %+v; want the bot's 1 click", b)
		}
		withBots := report(t, w, reports.Query{Entity: marquee.EntityAd, ID: 1, From: from, To: to, Bots: true})
		if withBots.Totals.Clicks != 2 || withBots.BotsLeftOut != nil {
			t.Errorf("ad 1 clicks with bots = %d (left out %+v); want 2, none left out", withBots.Totals.Clicks, withBots.BotsLeftOut)
		}
		spring := report(t, w, reports.Query{Entity: marquee.EntityLink, ID: w.spring, From: from, To: to})
		if spring.Totals.Clicks != 1 {
			t.Errorf("link spring clicks = %d; want 1", spring.Totals.Clicks)
		}
		var rows int
		if err := rowCount(w, &rows); err != nil || rows != 3 {
			t.Errorf("ads and links with rows = %d, %v; want 3 (ad 1, spring, autumn): no row for the unknown ids", rows, err)
		}
	})
}

func rowCount(w *world, n *int) error {
	sums, err := w.st.ReportTop(context.Background(), reports.SumQuery{Entity: marquee.EntityAd, From: 0, To: math.MaxInt32, Bots: true}, false, "impressions", 0)
	if err != nil {
		return err
	}
	links, err := w.st.ReportTop(context.Background(), reports.SumQuery{Entity: marquee.EntityLink, From: 0, To: math.MaxInt32, Bots: true}, false, "impressions", 0)
	*n = len(sums) + len(links)
	for _, s := range sums {
		if s.ID != 1 {
			return fmt.Errorf("a row for ad %d", s.ID)
		}
	}
	return err
}

// Reach from three instances (slots) over 100,000 uids, each seen by two
// of them, is within 2% of the truth.
func TestReachMergedAcrossInstances(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		w := worldOn(t, be.OpenStore(t, db))
		ctx := context.Background()
		at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
		for i, slot := range []string{"a", "b", "c"} {
			tl := w.tally(t, slot, t.TempDir())
			var b strings.Builder
			for u := range 100_000 {
				if u%3 != i { // every uid is seen by two instances of three
					fmt.Fprintf(&b, `{"receivedAt":"%s","ua":%q,"type":"impression","ad":"1","uid":"user-%d"}`+"\n", at.Format(time.RFC3339Nano), iphone, u)
				}
			}
			tl.Written("f-"+slot, 0, []byte(b.String()))
			if err := tl.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
		r := report(t, w, reports.Query{Entity: marquee.EntityAd, ID: 1, From: at.Add(-time.Hour), To: at.Add(47 * time.Hour), Granularity: reports.Day})
		if u := float64(*r.Totals.Uniques); math.Abs(u-100_000)/100_000 > 0.02 {
			t.Errorf("uniques = %.0f; want 100,000 within 2%%", u)
		}
		if r.Totals.Impressions != 200_000 {
			t.Errorf("impressions = %d; want 200,000", r.Totals.Impressions)
		}
		all := report(t, w, reports.Query{Entity: marquee.EntityAd, From: at.Add(-time.Hour), To: at.Add(47 * time.Hour), Granularity: reports.Day})
		if u := float64(*all.Totals.Uniques); math.Abs(u-100_000)/100_000 > 0.02 || all.Totals.Impressions != 200_000 {
			t.Errorf("every ad's uniques = %.0f, impressions %d; want 100,000 within 2%%, 200,000 (one ad has them all)", u, all.Totals.Impressions)
		}
	})
}

// Counted exactly once across a crash: lines flushed before it are not
// counted again, lines written and not flushed are counted at the next
// start from the file, and a second start counts nothing.
func TestExactlyOnceAcrossACrash(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		w := worldOn(t, be.OpenStore(t, db))
		ctx := context.Background()
		dir := t.TempDir()
		at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
		var all []byte
		for i := range 100 {
			all = append(all, line(at, fmt.Sprintf(`"type":"impression","ad":"1","n":%d`, i))...)
		}
		half := len(all) / 2
		half = strings.LastIndexByte(string(all[:half]), '\n') + 1
		tl := w.tally(t, "a", dir)
		tl.Written("a-1.ndjson", 0, all[:half])
		if err := tl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		tl.Written("a-1.ndjson", int64(half), all[half:]) // then the process dies before the next flush
		part := filepath.Join(dir, "dt=2026-11-20", "hour=10")
		os.MkdirAll(part, 0o755)
		if err := os.WriteFile(filepath.Join(part, "a-1.ndjson"), all, 0o644); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the restart, then another
			w.tally(t, "a", dir) // recovers what the files hold beyond the ledger
			r := report(t, w, reports.Query{Entity: marquee.EntityAd, ID: 1, From: at, To: at.Add(time.Hour)})
			if r.Totals.Impressions != 100 {
				t.Fatalf("impressions after restart = %d; want 100", r.Totals.Impressions)
			}
		}
		// Rebuild gives the same numbers.
		b, err := reports.Rebuild(ctx, reports.Config{Store: w.st, Resolver: resolver{w.st}, Slot: "a", Log: quiet}, w.st, dir,
			at.Truncate(24*time.Hour).Unix(), at.Truncate(24*time.Hour).Add(24*time.Hour).Unix())
		if err != nil || len(b.Rows) != 1 {
			t.Fatalf("Rebuild = %d rows, %v", len(b.Rows), err)
		}
		if r := report(t, w, reports.Query{Entity: marquee.EntityAd, ID: 1, From: at, To: at.Add(time.Hour)}); r.Totals.Impressions != 100 {
			t.Fatalf("impressions after rebuild = %d; want 100", r.Totals.Impressions)
		}
	})
}

// Series have one point per bucket, empty ones included; tz moves day
// boundaries; the default granularity follows the range; CSV has a row a
// bucket.
func TestSeriesGranularityAndTZ(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		w := worldOn(t, be.OpenStore(t, db))
		ctx, tl := context.Background(), w.tl
		// 23:30 UTC on the 19th is 07:30 on the 20th in Taipei (UTC+8).
		late := time.Date(2026, 11, 19, 23, 30, 0, 0, time.UTC)
		tl.Written("f", 0, []byte(line(late, `"type":"impression","ad":"1"`)+line(late.Add(2*time.Hour), `"type":"impression","ad":"1"`)))
		if err := tl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			from, to time.Time
			want     string
		}{
			{late, late.Add(48 * time.Hour), reports.Hour},
			{late, late.Add(49 * time.Hour), reports.Day},
			{late, late.Add(92 * 24 * time.Hour), reports.Day},
			{late, late.Add(93 * 24 * time.Hour), reports.Month},
		} {
			if got := reports.DefaultGranularity(c.from, c.to); got != c.want {
				t.Errorf("DefaultGranularity(%v) = %s; want %s", c.to.Sub(c.from), got, c.want)
			}
		}
		from := time.Date(2026, 11, 18, 0, 0, 0, 0, time.UTC)
		utc := report(t, w, reports.Query{Entity: marquee.EntityAd, ID: 1, From: from, To: from.Add(72 * time.Hour), Granularity: reports.Day})
		if got := seriesOf(utc); got != "2026-11-18T00:00:00Z=0 2026-11-19T00:00:00Z=1 2026-11-20T00:00:00Z=1" {
			t.Errorf("UTC days = %s", got)
		}
		taipei, _ := time.LoadLocation("Asia/Taipei")
		tpe := report(t, w, reports.Query{Entity: marquee.EntityAd, ID: 1, From: from, To: from.Add(72 * time.Hour), Granularity: reports.Day, Loc: taipei})
		if got := seriesOf(tpe); got != "2026-11-18T00:00:00+08:00=0 2026-11-19T00:00:00+08:00=0 2026-11-20T00:00:00+08:00=2 2026-11-21T00:00:00+08:00=0" {
			t.Errorf("Taipei days = %s", got)
		}
		hours := report(t, w, reports.Query{Entity: marquee.EntityAd, ID: 1, From: late.Add(-time.Hour), To: late.Add(3 * time.Hour)})
		if got := seriesOf(hours); got != "2026-11-19T22:00:00Z=0 2026-11-19T23:00:00Z=1 2026-11-20T00:00:00Z=0 2026-11-20T01:00:00Z=1 2026-11-20T02:00:00Z=0" ||
			hours.Series[0].Uniques != nil {
			t.Errorf("hours = %s (uniques %v); want five points (the last one partial), uniques null", got, hours.Series[0].Uniques)
		}
		var csv strings.Builder
		if err := utc.WriteCSV(&csv); err != nil {
			t.Fatal(err)
		}
		if want := "t,impressions,clicks,conversions,measured,views,starts,first_quartiles,midpoints,third_quartiles,completes,unverified_impressions,unverified_clicks,unverified_conversions,unverified_views,video_measured,video_views,post_view_conversions,conversion_value_micros,spend_nanos,unbilled,unbilled_nanos,errors,uniques,ctr\n2026-11-18T00:00:00Z,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n2026-11-19T00:00:00Z,1,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0\n2026-11-20T00:00:00Z,1,0,0,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0,0\n"; csv.String() != want {
			t.Errorf("CSV =\n%s\nwant\n%s", csv.String(), want)
		}
	})
}

func seriesOf(r *reports.Report) string {
	var parts []string
	for _, p := range r.Series {
		parts = append(parts, fmt.Sprintf("%s=%d", p.T, p.Impressions))
	}
	return strings.Join(parts, " ")
}

// Rolling hourly rows into daily ones keeps every total.
func TestRollUpKeepsTotals(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		w := worldOn(t, be.OpenStore(t, db))
		ctx, tl := context.Background(), w.tl
		start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		var b strings.Builder
		for h := range 24 * 10 {
			for range h%3 + 1 {
				b.WriteString(line(start.Add(time.Duration(h)*time.Hour), `"type":"impression","ad":"1","country":"de"`))
			}
		}
		tl.Written("f", 0, []byte(b.String()))
		if err := tl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		q := reports.Query{Entity: marquee.EntityAd, ID: 1, From: start, To: start.Add(10 * 24 * time.Hour), Granularity: reports.Day, By: "country"}
		before := report(t, w, q)
		moved, err := w.st.RollUpReports(ctx, start.Add(6*24*time.Hour).Unix())
		if err != nil || moved != 6*24 {
			t.Fatalf("RollUpReports = %d, %v; want 144 hourly rows moved", moved, err)
		}
		after := report(t, w, q)
		if seriesOf(before) != seriesOf(after) || before.Totals.Counts != after.Totals.Counts ||
			after.Breakdown[0].Impressions != before.Breakdown[0].Impressions {
			t.Errorf("after rollup: %s %+v; before: %s %+v", seriesOf(after), after.Totals, seriesOf(before), before.Totals)
		}
		if again, _ := w.st.RollUpReports(ctx, start.Add(6*24*time.Hour).Unix()); again != 0 {
			t.Errorf("a second rollup moved %d rows; want 0", again)
		}
	})
}

// TestCSVCellsAreInert: a text cell a spreadsheet would run as a formula
// (a link code may start with -) is written with a leading '.
func TestCSVCellsAreInert(t *testing.T) {
	t.Parallel()
	r := &reports.Report{Top: []reports.Part{{ID: "=HYPERLINK(\"http://x\")"}, {ID: "+1"}, {ID: "-spring"}, {ID: "@SUM(A1)"},
		{ID: "\tx"}, {ID: "\rx"}, {ID: "spring"}, {ID: "a=b"}}}
	var csv strings.Builder
	if err := r.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	zeros := strings.Repeat(",0", len(reportrow.Columns)+4) // the counts and four rates
	want := "id," + strings.Join(reportrow.Columns[:], ",") + ",ctr,viewability,video_viewability,completion_rate\n"
	for _, id := range []string{`"'=HYPERLINK(""http://x"")"`, "'+1", "'-spring", "'@SUM(A1)", "'\tx", "\"'\rx\"", "spring", "a=b"} {
		want += id + zeros + "\n"
	}
	if csv.String() != want {
		t.Errorf("CSV =\n%q\nwant\n%q", csv.String(), want)
	}
}

// TestCampaignAdvertiserPlacementRows: an event naming a campaign, a
// placement and an ad counts once for each, and for the campaign's
// advertiser (reach too); an unknown campaign or placement is dropped for
// it and counted by reason.
func TestCampaignAdvertiserPlacementRows(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	adv, err := w.st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, name := range []string{"Spring", "Autumn"} {
		c, err := w.st.CreateCampaign(ctx, marquee.CampaignInput{AdvertiserID: adv.ID, Name: name, StartAt: time.Now().Add(-time.Hour),
			EndAt: time.Now().Add(time.Hour), Priority: marquee.PriorityStandard, Weight: 1, Pacing: marquee.PacingASAP}, marquee.StateActive)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	pl, err := w.st.CreatePlacement(ctx, marquee.PlacementInput{Name: "home-top", Types: marquee.CreativeTypes})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	tl := reports.New(reports.Config{Store: w.st, Resolver: resolver{w.st}, Slot: "a", Log: quiet}, reg)
	if err := tl.Recover(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	var lines strings.Builder
	lines.WriteString(line(at, fmt.Sprintf(`"type":"impression","ad":"1","campaign":"%d","placement":"home-top","uid":"u1"`, ids[0])))
	lines.WriteString(line(at, fmt.Sprintf(`"type":"impression","campaign":%d,"placement":"home-top","uid":"u2"`, ids[1])))
	lines.WriteString(line(at, fmt.Sprintf(`"type":"click","ad":"1","campaignId":"%d","placement":"home-top","uid":"u1"`, ids[0])))
	lines.WriteString(line(at, `"type":"impression","campaign":"999","placement":"nowhere"`))
	tl.Written("f1", 0, []byte(lines.String()))
	if err := tl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	from, to := at.Add(-time.Hour), at.Add(2*time.Hour)
	for _, c := range []struct {
		entity                       string
		id                           int64
		impressions, clicks, uniques int64
	}{
		{marquee.EntityCampaign, ids[0], 1, 1, 1},
		{marquee.EntityCampaign, ids[1], 1, 0, 1},
		{marquee.EntityAdvertiser, adv.ID, 2, 1, 2},
		{marquee.EntityPlacement, pl.ID, 2, 1, 2},
		{marquee.EntityAd, 1, 1, 1, 1},
	} {
		got := report(t, w, reports.Query{Entity: c.entity, ID: c.id, From: from, To: to, Granularity: reports.Day}).Totals
		if got.Impressions != c.impressions || got.Clicks != c.clicks || *got.Uniques != c.uniques {
			t.Errorf("%s %d: %+v (uniques %d); want %d impressions, %d clicks, %d uniques", c.entity, c.id, got, *got.Uniques, c.impressions, c.clicks, c.uniques)
		}
	}
	notCounted := notCountedOf(reg)
	if notCounted["unknown campaign"] != 1 || notCounted["unknown placement"] != 1 {
		t.Errorf("not counted = %v; want the unknown campaign and placement", notCounted)
	}
}

// notCountedOf reads marquee_reports_events_not_counted_total of reg by
// reason.
func notCountedOf(reg *prometheus.Registry) map[string]float64 {
	out := map[string]float64{}
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "marquee_reports_events_not_counted_total" {
			for _, m := range f.GetMetric() {
				out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// Breakdowns by referrer, browser, OS and destination, and top tags:
// counted from the lines the events already hold (a redirect's referrer,
// the User-Agent, a click's dest), a conversion put on the destination the
// same visitor was sent to, on every store, and rebuilt alike.
func TestBreakdownsByDimension(t *testing.T) {
	t.Parallel()
	storetest.EachBackend(t, func(t *testing.T, be storetest.Backend, db string) {
		w := worldOn(t, be.OpenStore(t, db))
		ctx := context.Background()
		split, err := w.st.CreateLink(ctx, marquee.LinkInput{Code: "split", URL: "https://a.test", Redirect: 302, Tags: []string{"spring", "ab"},
			Destinations: []marquee.Destination{{URL: "https://a.test", Weight: 50}, {URL: "https://b.test", Weight: 50}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.ReplaceLink(ctx, "spring", marquee.LinkInput{URL: "https://x.test", Redirect: 302, AdID: 1, Tags: []string{"spring"}}); err != nil {
			t.Fatal(err)
		}
		const firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
		at := time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)
		ev := func(ip, ua, fields string) string {
			return fmt.Sprintf(`{"receivedAt":"%s","id":"x","ip":%q,"ua":%q,%s}`+"\n", at.Format("2006-01-02T15:04:05.000000000Z"), ip, ua, fields)
		}
		// Visitors of the split: where the redirect sent each is in its
		// click; their conversions come without it.
		dest := func(ip, ua string) int {
			return linkroute.Pick(split.Destinations, linkroute.Sticky(split.ID, linkroute.VisitorHash(netip.MustParseAddr(ip), []byte(ua))))
		}
		var lines strings.Builder
		wantConv := map[int]int64{}
		for i := range 40 {
			ip := fmt.Sprintf("198.51.100.%d", i)
			lines.WriteString(ev(ip, firefox, fmt.Sprintf(`"type":"click","code":"split","dest":"%d","referrer":"https://www.News.example:443/a?b"`, dest(ip, firefox))))
			if i%4 == 0 {
				lines.WriteString(ev(ip, firefox, `"type":"conversion","link":"split"`))
				wantConv[dest(ip, firefox)]++
			}
		}
		lines.WriteString(ev("203.0.113.1", iphone, `"type":"click","code":"spring","adId":"1"`))
		lines.WriteString(ev("203.0.113.2", iphone, `"type":"click","code":"spring","adId":"1","referrer":"https:\/\/t.co\/x"`))
		lines.WriteString(ev("203.0.113.3", firefox, `"type":"impression","ad":"1","referrer":"not a url"`))
		w.tl.Written("f1", 0, []byte(lines.String()))
		if err := w.tl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		from, to := at.Truncate(24*time.Hour), at.Truncate(24*time.Hour).Add(24*time.Hour)
		parts := func(entity string, id int64, by string) map[string]reports.Metrics {
			t.Helper()
			r := report(t, w, reports.Query{Entity: entity, ID: id, From: from, To: to, By: by})
			out := map[string]reports.Metrics{}
			for _, p := range r.Breakdown {
				var k string
				switch by {
				case "referrer":
					k = p.Referrer
				case "browser":
					k = p.Browser
				case "os":
					k = p.OS
				case "destination":
					k = strconv.Itoa(*p.Destination)
				}
				out[k] = p.Metrics
			}
			return out
		}
		if got := parts(marquee.EntityLink, split.ID, "referrer"); len(got) != 2 || got["news.example"].Clicks != 40 || got["direct"].Conversions != 10 {
			t.Errorf("split by referrer = %+v; want news.example with 40 clicks, 10 conversions direct", got)
		}
		if got := parts(marquee.EntityLink, w.spring, "referrer"); got["direct"].Clicks != 1 || got["t.co"].Clicks != 1 {
			t.Errorf("spring by referrer = %+v; want 1 direct and 1 from t.co", got)
		}
		if got := parts(marquee.EntityAd, 1, "referrer"); got["(invalid)"].Impressions != 1 || got["direct"].Clicks != 1 || got["t.co"].Clicks != 1 {
			t.Errorf("ad 1 by referrer = %+v; want 1 impression with an invalid referrer, 1 click direct, 1 from t.co", got)
		}
		if got := parts(marquee.EntityAd, 1, "browser"); got["Firefox"].Impressions != 1 || got["Safari"].Clicks+got["Other"].Clicks != 2 {
			t.Errorf("ad 1 by browser = %+v; want Firefox's impression, the iPhone's 2 clicks", got)
		}
		if got := parts(marquee.EntityAd, 1, "os"); got["Windows"].Impressions != 1 || got["iOS"].Clicks != 2 {
			t.Errorf("ad 1 by os = %+v; want Windows' impression, iOS's 2 clicks", got)
		}
		byDest := parts(marquee.EntityLink, split.ID, "destination")
		if byDest["0"].Clicks+byDest["1"].Clicks != 40 || byDest["0"].Clicks == 0 || byDest["1"].Clicks == 0 ||
			byDest["0"].Conversions != wantConv[0] || byDest["1"].Conversions != wantConv[1] {
			t.Errorf("split by destination = %+v; want 40 clicks over both, conversions %v", byDest, wantConv)
		}
		r := report(t, w, reports.Query{Entity: marquee.EntityLink, From: from, To: to, Top: 10, TopTags: true, TopMetric: "clicks"})
		if len(r.Top) != 2 || r.Top[0].Tag != "spring" || r.Top[0].Clicks != 42 || r.Top[1].Tag != "ab" || r.Top[1].Clicks != 40 {
			t.Errorf("top tags by clicks = %+v; want spring 42 (split and spring), ab 40", r.Top)
		}
		var csv strings.Builder
		if err := report(t, w, reports.Query{Entity: marquee.EntityLink, ID: split.ID, From: from, To: to, By: "referrer"}).WriteCSV(&csv); err != nil ||
			!strings.HasPrefix(csv.String(), "referrer,impressions,clicks,conversions,measured,views,starts,first_quartiles,midpoints,third_quartiles,completes,unverified_impressions,unverified_clicks,unverified_conversions,unverified_views,video_measured,video_views,post_view_conversions,conversion_value_micros,spend_nanos,unbilled,unbilled_nanos,errors,ctr,viewability,video_viewability,completion_rate\nnews.example,0,40,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n") {
			t.Errorf("CSV by referrer = %q, %v", csv.String(), err)
		}
	})
}
