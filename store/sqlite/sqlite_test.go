package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/axiomhq/hyperloglog"

	"marquee"
	"marquee/fixture"
	"marquee/reportrow"
	"marquee/reports"
	"marquee/store/sqlite"
	"marquee/store/storetest"
)

// A database from before link domains keeps its links, and its ids go on
// from theirs.
func TestUpgradeLinks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	storetest.UpgradeLinks(t, path, sqlite.Open, func(q string) error {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.Exec(q)
		return err
	})
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t testing.TB) string { return filepath.Join(t.TempDir(), "sub", "m.db") }, sqlite.Open)
}

// seeded returns a store holding n links with the codes fixture.Code(0..n-1)
// (ids 1..n), closed when the benchmark ends.
func seeded(b *testing.B, n int) (*sqlite.Store, []marquee.LinkInput) {
	b.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ins := make([]marquee.LinkInput, n)
	for i := range ins {
		ins[i] = marquee.LinkInput{Code: fixture.Code(int64(i)), URL: "https://example.com/p/" + strconv.Itoa(i), Redirect: 302}
	}
	if err := st.InsertLinks(context.Background(), ins, func() {}); err != nil {
		b.Fatal(err)
	}
	return st, ins
}

// BenchmarkAddClicks flushes the counts of 20,000 distinct links out of
// 1,000,000, as a click flush under Zipf traffic does; ns/op is one flush.
//
//	go test ./store/sqlite -run XXX -bench AddClicks
func BenchmarkAddClicks(b *testing.B) {
	const links, flushed = 1_000_000, 20_000
	st, _ := seeded(b, links)
	var counts []marquee.Clicks
	for i := range flushed {
		k := i * links / flushed
		counts = append(counts, marquee.Clicks{LinkID: int64(k + 1), Code: fixture.Code(int64(k)), N: int64(1 + i%5)})
	}
	b.ResetTimer()
	for b.Loop() {
		if err := st.AddClicks(context.Background(), counts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*flushed), "ns/link")
}

// BenchmarkLink looks links up by code among 100,000, two goroutines at a
// time: LinkTarget is a redirect cache's miss, Link the admin read.
//
//	go test ./store/sqlite -run XXX -bench 'Link' -benchtime 200000x
func BenchmarkLink(b *testing.B) {
	const links = 100_000
	st, ins := seeded(b, links)
	for _, get := range []struct {
		name string
		get  func(context.Context, string) (marquee.Link, error)
	}{{"LinkTarget", st.LinkTarget}, {"Link", st.Link}} {
		b.Run(get.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if _, err := get.get(context.Background(), ins[(i*7919)%links].Code); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}

// BenchmarkAddReports flushes 100,000 distinct report rows (the keys a
// busy instance counts in one -reports-flush) into a store that holds
// them already, as the second flush of an hour does, in no order (as a
// flush's come out of a map); ns/op is one flush.
//
//	go test ./store/sqlite -run XXX -bench AddReports -benchtime 3x
func BenchmarkAddReports(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	batch := &reports.Batch{Slot: "a"}
	for i := range 100_000 {
		batch.Rows = append(batch.Rows, reports.Row{
			Key: reports.Key{Entity: marquee.EntityAd, ID: int64(1 + i/60), Time: 1_700_000_000 / 3600 * 3600,
				Country: fixture.Countries[i%20], Platform: []string{"android", "ios", "web"}[i/20%3]},
			Counts: reports.Counts{Impressions: 3, Clicks: 1}})
	}
	if err := st.AddReports(context.Background(), batch); err != nil {
		b.Fatal(err)
	}
	// A flush's rows come out of a map: in no order.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(batch.Rows), func(i, j int) { batch.Rows[i], batch.Rows[j] = batch.Rows[j], batch.Rows[i] })
	for b.Loop() {
		if err := st.AddReports(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch.Rows)), "ns/row")
}

// BenchmarkAddReach merges a flush's reach into the sketches a busy day
// left: 2,000 ads with 5,000 uids each so far, 20 new uids an ad in this
// flush, and the sketch of all ads; ns/op is one flush (the sketches are
// built before the clock runs: reportrow.WithAll has its own benchmark).
//
//	go test ./store/sqlite -run XXX -bench AddReach -benchtime 5x
func BenchmarkAddReach(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	day := int64(1_700_000_000 / 86400 * 86400)
	sketches := func(uids int, prefix string) *reports.Batch {
		batch := &reports.Batch{Slot: "a"}
		for ad := range 2000 {
			sk := hyperloglog.New()
			for u := range uids {
				sk.Insert(fmt.Appendf(nil, "%s-%d-%d", prefix, ad, u))
			}
			enc, err := sk.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			batch.Reach = append(batch.Reach, reports.Reach{Entity: marquee.EntityAd, ID: int64(ad + 1), Day: day, Sketch: enc})
		}
		return batch
	}
	if err := st.AddReports(context.Background(), sketches(5000, "day")); err != nil {
		b.Fatal(err)
	}
	flush := sketches(20, "flush")
	if flush.Reach, err = reportrow.WithAll(flush.Reach); err != nil { // and the day's sketch of all ads, as a flush adds
		b.Fatal(err)
	}
	for b.Loop() {
		if err := st.AddReports(context.Background(), flush); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTitleKeysOfOlderRows: ads stored before the title search existed
// (schema version 5, no title_key) are found by it once a binary that
// has it opens the database.
func TestTitleKeysOfOlderRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAd(ctx, marquee.AdInput{Title: "Émile's Spring", StartAt: time.Now().Add(-time.Hour), EndAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	// As a version-5 database: no column, no index, no keys (and nothing
	// of the later versions).
	queries := []string{`DROP INDEX ads_title_key`, `ALTER TABLE ads DROP COLUMN title_key`,
		`DROP INDEX ads_campaign`, `ALTER TABLE ads DROP COLUMN campaign_id`, `ALTER TABLE ads DROP COLUMN creative`, `ALTER TABLE ads DROP COLUMN placements`, `ALTER TABLE ads DROP COLUMN targeting`,
		`ALTER TABLE ads DROP COLUMN state`, `ALTER TABLE ads DROP COLUMN review`, `ALTER TABLE placements DROP COLUMN floor`,
		`DROP TABLE advertisers`, `DROP TABLE campaigns`, `DROP TABLE placements`, `DROP TABLE assets`,
		`DROP TABLE webhooks`, `DROP TABLE webhook_deliveries`, `DROP TABLE link_tags`, `DROP TABLE report_dims`,
		`ALTER TABLE users DROP COLUMN bounds`, `ALTER TABLE api_keys DROP COLUMN bounds`,
		`DROP TABLE report_requests`, `DROP TABLE report_requests_daily`, `DROP TABLE saved_reports`, `DROP TABLE report_deliveries`, `DROP TABLE report_cube`, `DROP TABLE report_cube_cp`, `DROP TABLE report_cube_geo`, `DROP TABLE report_cube_kv`, `DROP TABLE conversions`, `DROP TABLE request_samples`, `DROP TABLE report_bids`, `DROP TABLE deals`, `DROP TABLE sites`, `DROP TABLE invoices`, `DROP TABLE invoice_seq`, `DROP TABLE seller_seq`, `DROP TABLE settings`, `DROP TABLE top_ups`, `DROP TABLE stripe_events`, `DROP TABLE demand_partners`,
		`ALTER TABLE audit_log DROP COLUMN before_doc`, `ALTER TABLE audit_log DROP COLUMN after_doc`, `DROP TABLE scope_locks`, `UPDATE schema_version SET version = 5`}
	for _, table := range []string{"report_hourly", "report_daily", "report_totals"} {
		for _, c := range reportrow.Columns[3:] { // 0012's
			queries = append(queries, `ALTER TABLE `+table+` DROP COLUMN `+c)
		}
	}
	for _, q := range queries {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	if st, err = sqlite.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ads, total, err := st.ListAds(ctx, marquee.AdFilter{Query: "émile", Now: time.Now(), Limit: 10})
	if err != nil || total != 1 || len(ads) != 1 || ads[0].Title != "Émile's Spring" {
		t.Fatalf("ListAds(q émile) after the upgrade = %+v, total %d, %v; want the older ad", ads, total, err)
	}
}

// TestSellerIDsOfOlderSites: sites made before sellers.json existed
// (schema version 42) are given seller ids in the order of their names
// when a binary that has them opens the database, and the next site made
// the next id.
func TestSellerIDsOfOlderSites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP INDEX sites_seller_id`, `ALTER TABLE sites DROP COLUMN seller_id`, `ALTER TABLE sites DROP COLUMN seller_type`,
		`ALTER TABLE sites DROP COLUMN confidential`, `ALTER TABLE sites DROP COLUMN ads_txt`, `ALTER TABLE sites DROP COLUMN ads_txt_claim`, `DROP TABLE seller_seq`,
		`ALTER TABLE report_requests DROP COLUMN i_domainmismatch`, `ALTER TABLE report_requests DROP COLUMN i_unauthorized`,
		`ALTER TABLE report_requests_daily DROP COLUMN i_domainmismatch`, `ALTER TABLE report_requests_daily DROP COLUMN i_unauthorized`,
		`ALTER TABLE sites DROP COLUMN quarantined`, `ALTER TABLE sites DROP COLUMN quality_alarm`, `ALTER TABLE sites DROP COLUMN quality_claim`,
		`ALTER TABLE report_requests DROP COLUMN i_quarantined`, `ALTER TABLE report_requests_daily DROP COLUMN i_quarantined`,
		`ALTER TABLE sites DROP COLUMN child_directed`, `DROP TABLE demand_partners`, `ALTER TABLE placements DROP COLUMN child_directed`,
		`ALTER TABLE report_requests DROP COLUMN l_gpc`, `ALTER TABLE report_requests DROP COLUMN l_tcf`, `ALTER TABLE report_requests DROP COLUMN l_gpp`, `ALTER TABLE report_requests DROP COLUMN l_usnat`, `ALTER TABLE report_requests DROP COLUMN l_usstate`, `ALTER TABLE report_requests DROP COLUMN l_usp`, `ALTER TABLE report_requests DROP COLUMN l_coppa`, `ALTER TABLE report_requests DROP COLUMN l_given`, `ALTER TABLE report_requests_daily DROP COLUMN l_gpc`, `ALTER TABLE report_requests_daily DROP COLUMN l_tcf`, `ALTER TABLE report_requests_daily DROP COLUMN l_gpp`, `ALTER TABLE report_requests_daily DROP COLUMN l_usnat`, `ALTER TABLE report_requests_daily DROP COLUMN l_usstate`, `ALTER TABLE report_requests_daily DROP COLUMN l_usp`, `ALTER TABLE report_requests_daily DROP COLUMN l_coppa`, `ALTER TABLE report_requests_daily DROP COLUMN l_given`, `UPDATE schema_version SET version = 42`,
		`INSERT INTO sites (name, domains, revenue_share, created_at, updated_at) VALUES ('news', '[]', 700000, 1, 1), ('blog', '[]', 500000, 2, 2), ('shop', '[]', 0, 3, 3)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	if st, err = sqlite.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sites, err := st.ListSites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range sites {
		got[s.Name] = s.SellerID + " " + string(s.SellerType)
	}
	if want := map[string]string{"blog": "1 PUBLISHER", "news": "2 PUBLISHER", "shop": "3 PUBLISHER"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("seller ids after the upgrade = %v; want %v", got, want)
	}
	if s, err := st.CreateSite(ctx, marquee.Site{Name: "new", Domains: []string{}, SellerType: marquee.SellerPublisher}); err != nil || s.SellerID != "4" {
		t.Errorf("the next site = %+v, %v; want seller id 4", s, err)
	}
}
