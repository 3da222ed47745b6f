// Package storetest is the conformance suite every store runs: the same
// behaviour, checked the same way, on SQLite, PostgreSQL and MySQL.
package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"marquee/reportrow"
	"marquee/store"

	"github.com/axiomhq/hyperloglog"

	"marquee"
)

// Store is the contract the suite checks.
type Store = store.Store

// Opener opens a new, empty database and returns a handle on it, and a
// function that opens another handle on the same database (as a second
// instance would).
type Opener func(t *testing.T) (Store, func() Store)

// Run runs the suite on databases that newDB names (a fresh one for each
// test, removed when the test ends), opened with open.
func Run[S Store](t *testing.T, newDB func(testing.TB) string, open func(ctx context.Context, db string) (S, error)) {
	opener := func(t *testing.T) (Store, func() Store) {
		db := newDB(t)
		handle := func() Store {
			st, err := open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
		return handle(), handle
	}
	run(t, opener)
	t.Run("OpenTogether", func(t *testing.T) { OpenTogether(t, newDB(t), open) })
}

// OpenTogether opens a new database from several handles at once, as
// instances started together do: each brings the schema up to date (or
// waits for the one that does) and every one then works, as does a
// handle opened afterwards. Run runs it; a store's own tests may run it
// again to check what only their database shows.
func OpenTogether[S Store](t *testing.T, db string, open func(ctx context.Context, db string) (S, error)) {
	const n = 6
	ctx := context.Background()
	handles := make([]Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			st, err := open(ctx, db)
			handles[i], errs[i] = st, err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("handle %d of %d opened together: %v", i, n, err)
			continue
		}
		t.Cleanup(func() { handles[i].Close() })
	}
	if t.Failed() {
		return
	}
	for i, st := range handles {
		if _, err := st.CreateAd(ctx, input(fmt.Sprint("from handle ", i), -time.Hour, time.Hour)); err != nil {
			t.Fatalf("handle %d: CreateAd: %v", i, err)
		}
	}
	later, err := open(ctx, db)
	if err != nil {
		t.Fatalf("a handle opened after them: %v", err)
	}
	defer later.Close()
	if _, total, err := later.ListAds(ctx, marquee.AdFilter{State: marquee.AdsActive, Now: now, Limit: 1}); err != nil || total != n {
		t.Fatalf("ads after %d handles wrote one each = %d, %v; want %d", n, total, err, n)
	}
}

var now = time.Now().UTC().Truncate(time.Millisecond)

func input(title string, start, end time.Duration, conds ...marquee.Condition) marquee.AdInput {
	return marquee.AdInput{Title: title, StartAt: now.Add(start), EndAt: now.Add(end), Conditions: conds}
}

func run(t *testing.T, open Opener) {
	// Each case opens a database of its own: they run in parallel.
	for _, c := range []struct {
		name string
		test func(*testing.T, Opener)
	}{
		{"CRUD", testCRUD},
		{"Changelog", testChangelog},
		{"TwoHandles", testTwoHandles},
		{"ConcurrentWritesCommitInSeqOrder", testConcurrentWrites},
		{"Links", testLinks},
		{"LinkDomains", testLinkDomains},
		{"ImportLinks", testImportLinks},
		{"AdTrackingLinks", testAdTrackingLinks},
		{"ClicksOfManyLinks", testClicksOfManyLinks},
		{"Reports", testReports},
		{"ReportNames", testReportNames},
		{"ReportCube", testReportCube},
		{"RequestSamples", testRequestSamples},
		{"Bids", testBids},
		{"SavedReports", testSavedReports},
		{"Invoices", testInvoices},
		{"OnePeriodOnce", testOnePeriodOnce},
		{"OutsidersLimits", testOutsidersLimits},
		{"TopUps", testTopUps},
		{"Settings", testSettings},
		{"Access", testAccess},
		{"Campaigns", testCampaigns},
		{"UnapprovedLimit", testUnapprovedLimit},
		{"AdBreaks", testAdBreaks},
		{"Targeting", testTargeting},
		{"Assets", testAssets},
		{"Webhooks", testWebhooks},
		{"EraseSubject", testEraseSubject},
		{"Search", testSearch},
		{"HostileText", testHostileText},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, open)
		})
	}
}

func testCRUD(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	cond := marquee.Condition{AgeStart: 20, AgeEnd: 30, Gender: []string{"F"}, Country: []string{"TW", "JP"}, Platform: []string{"ios"}}
	active, err := st.CreateAd(ctx, input("active", -time.Hour, time.Hour, cond))
	if err != nil {
		t.Fatal(err)
	}
	scheduled, _ := st.CreateAd(ctx, input("scheduled", time.Hour, 2*time.Hour))
	expired, _ := st.CreateAd(ctx, input("expired", -2*time.Hour, -time.Hour))
	if active.ID != 1 || scheduled.ID != 2 || expired.ID != 3 {
		t.Fatalf("ids = %d %d %d; want 1 2 3 (creation order)", active.ID, scheduled.ID, expired.ID)
	}
	got, err := st.Ad(ctx, active.ID)
	if err != nil || !reflect.DeepEqual(got, active) {
		t.Fatalf("Ad(1) = %+v, %v; want %+v", got, err, active)
	}
	if _, err := st.Ad(ctx, 99); marquee.KindOf(err) != marquee.KindNotFound || marquee.AsError(err).Message != "ad 99 not found" {
		t.Fatalf("Ad(99) error = %v; want KindNotFound: ad 99 not found", err)
	}
	for _, c := range []struct {
		state marquee.AdState
		want  []string
	}{
		{marquee.AdsAll, []string{"active", "scheduled", "expired"}},
		{marquee.AdsActive, []string{"active"}},
		{marquee.AdsScheduled, []string{"scheduled"}},
		{marquee.AdsExpired, []string{"expired"}},
	} {
		ads, total, err := st.ListAds(ctx, marquee.AdFilter{State: c.state, Now: now, Limit: 10})
		if err != nil || total != len(c.want) || len(ads) != len(c.want) {
			t.Fatalf("ListAds(%s) = %d ads, total %d, %v; want %v", c.state, len(ads), total, err, c.want)
		}
		for i, a := range ads {
			if a.Title != c.want[i] {
				t.Errorf("ListAds(%s)[%d] = %q; want %q", c.state, i, a.Title, c.want[i])
			}
		}
	}
	page, total, _ := st.ListAds(ctx, marquee.AdFilter{State: marquee.AdsAll, Now: now, Offset: 1, Limit: 1})
	if total != 3 || len(page) != 1 || page[0].ID != 2 {
		t.Fatalf("ListAds(offset 1, limit 1) = %+v, total %d; want ad 2 of 3", page, total)
	}
	replaced, err := st.ReplaceAd(ctx, scheduled.ID, input("now active", -time.Minute, time.Minute))
	if err != nil || replaced.Title != "now active" || !replaced.CreatedAt.Equal(scheduled.CreatedAt) {
		t.Fatalf("ReplaceAd = %+v, %v", replaced, err)
	}
	if got, _ := st.Ad(ctx, scheduled.ID); !reflect.DeepEqual(got, replaced) {
		t.Fatalf("Ad after ReplaceAd = %+v; want %+v", got, replaced)
	}
	if _, err := st.ReplaceAd(ctx, 99, input("x", 0, time.Hour)); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("ReplaceAd(99) error = %v; want KindNotFound", err)
	}
	if err := st.DeleteAd(ctx, expired.ID); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteAd(ctx, expired.ID); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("second DeleteAd error = %v; want KindNotFound", err)
	}
	var mu sync.Mutex
	var live []string
	err = st.EachLiveAd(ctx, now, func(a *marquee.Ad) error { mu.Lock(); live = append(live, a.Title); mu.Unlock(); return nil })
	if slices.Sort(live); err != nil || !slices.Equal(live, []string{"active", "now active"}) {
		t.Fatalf("EachLiveAd = %v, %v; want the two unexpired ads", live, err)
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping = %v", err)
	}
}

// Every mutation leaves one entry, in order; failed writes leave none;
// a bulk insert leaves one reload; trimming keeps the newest.
func testChangelog(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	if seq, err := st.LastSeq(ctx); err != nil || seq != 0 {
		t.Fatalf("LastSeq of an empty store = %d, %v; want 0", seq, err)
	}
	a, _ := st.CreateAd(ctx, input("a", -time.Hour, time.Hour))
	st.ReplaceAd(ctx, a.ID, input("a2", -time.Hour, time.Hour))
	st.ReplaceAd(ctx, 99, input("missing", -time.Hour, time.Hour))
	st.DeleteAd(ctx, a.ID)
	st.DeleteAd(ctx, a.ID)
	if err := st.InsertAds(ctx, []marquee.AdInput{input("b", -time.Hour, time.Hour), input("c", -time.Hour, time.Hour)}, func() {}); err != nil {
		t.Fatal(err)
	}
	chs, err := st.Changes(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		id int64
		op marquee.ChangeOp
	}
	var got []entry
	for i, c := range chs {
		got = append(got, entry{c.ID, c.Op})
		if c.Seq <= 0 || (i > 0 && c.Seq <= chs[i-1].Seq) || (c.Op != marquee.OpReload && c.Entity != "ad") || time.Since(c.At) > time.Minute {
			t.Errorf("change %d = %+v; want increasing seqs, entity ad, a recent time", i, c)
		}
	}
	want := []entry{{a.ID, marquee.OpPut}, {a.ID, marquee.OpPut}, {a.ID, marquee.OpDelete}, {0, marquee.OpReload}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("changelog = %v; want %v", got, want)
	}
	if tail, _ := st.Changes(ctx, chs[1].Seq, 1); len(tail) != 1 || tail[0].Seq != chs[2].Seq {
		t.Fatalf("Changes(after %d, 1) = %+v; want only seq %d", chs[1].Seq, tail, chs[2].Seq)
	}
	last, _ := st.LastSeq(ctx)
	if last != chs[3].Seq {
		t.Fatalf("LastSeq = %d; want %d", last, chs[3].Seq)
	}
	n, err := st.TrimChangelog(ctx, time.Now().Add(time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("TrimChangelog(everything) = %d, %v; want 3 deleted (the newest kept)", n, err)
	}
	if first, _ := st.FirstSeq(ctx); first != last {
		t.Fatalf("FirstSeq after trim = %d; want %d", first, last)
	}
}

func testTwoHandles(t *testing.T, open Opener) {
	ctx := context.Background()
	a, second := open(t)
	b := second()
	ad, err := a.CreateAd(ctx, input("x", -time.Hour, time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Ad(ctx, ad.ID); err != nil || got.Title != "x" {
		t.Fatalf("other handle: Ad = %+v, %v", got, err)
	}
	ins := make([]marquee.AdInput, 500)
	for i := range ins {
		ins[i] = input("bulk", -time.Hour, time.Hour)
	}
	n := 0
	if err := b.InsertAds(ctx, ins, func() { n++ }); err != nil || n != 500 {
		t.Fatalf("InsertAds: %v, progress %d", err, n)
	}
	if _, total, _ := a.ListAds(ctx, marquee.AdFilter{State: marquee.AdsActive, Now: now, Limit: 1}); total != 501 {
		t.Fatalf("active after bulk insert = %d; want 501", total)
	}
}

// Writers on two handles at once: the changelog has one entry per write,
// seqs without holes, and whoever has read up to seq n has seen every entry
// below n (commit order = seq order).
func testConcurrentWrites(t *testing.T, open Opener) {
	ctx := context.Background()
	a, second := open(t)
	b := second()
	const each = 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var violations []string
	var vmu sync.Mutex
	go func() { // a reader that checks it never sees seq n+1 before n
		var seen int64
		for {
			select {
			case <-stop:
				return
			default:
			}
			chs, err := a.Changes(ctx, seen, 1000)
			if err != nil {
				continue
			}
			for _, c := range chs {
				if c.Seq != seen+1 {
					vmu.Lock()
					violations = append(violations, fmt.Sprintf("saw seq %d after %d", c.Seq, seen))
					vmu.Unlock()
				}
				seen = c.Seq
			}
		}
	}()
	for _, st := range []Store{a, b, a, b} {
		wg.Go(func() {
			for range each {
				if _, err := st.CreateAd(ctx, input("c", -time.Hour, time.Hour)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	chs, _ := a.Changes(ctx, 0, 1000)
	if len(chs) != 4*each || chs[len(chs)-1].Seq != int64(4*each) {
		t.Fatalf("%d changes, last seq %d; want %d without holes", len(chs), chs[len(chs)-1].Seq, 4*each)
	}
	vmu.Lock()
	defer vmu.Unlock()
	if len(violations) > 0 {
		t.Errorf("a reader saw seqs out of order: %v", violations[:min(5, len(violations))])
	}
}

// changesSince returns the changelog entries after seq as "entity op key"
// (ads by id).
func changesSince(t *testing.T, st Store, seq int64) []string {
	t.Helper()
	chs, err := st.Changes(context.Background(), seq, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range chs {
		key := c.Key
		if c.Entity == "ad" {
			key = fmt.Sprint(c.ID)
		}
		out = append(out, fmt.Sprintf("%s %s %s", c.Entity, c.Op, key))
	}
	return out
}

func testLinks(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	ad, _ := st.CreateAd(ctx, input("ad", -time.Hour, time.Hour))
	expires := now.Add(time.Hour)
	in := marquee.LinkInput{Code: "promo_1", URL: "https://example.com/a?b=c", ExpiresAt: expires, MaxClicks: 10, Redirect: 301, AdID: ad.ID}
	created, err := st.CreateLink(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if created.Code != "promo_1" || created.ID == 0 || !created.ExpiresAt.Equal(expires) || created.Clicks != 0 {
		t.Fatalf("CreateLink(%+v) = %+v", in, created)
	}
	if got, err := st.Link(ctx, "promo_1"); err != nil || !reflect.DeepEqual(got, created) {
		t.Fatalf("Link(promo_1) = %+v, %v; want %+v", got, err, created)
	}
	if _, err := st.Link(ctx, "PROMO_1"); marquee.KindOf(err) != marquee.KindNotFound || marquee.AsError(err).Message != `no link "PROMO_1"` {
		t.Fatalf("Link(PROMO_1) error = %v; want KindNotFound (codes are case-sensitive)", err)
	}
	if _, err := st.CreateLink(ctx, in); marquee.KindOf(err) != marquee.KindConflict || marquee.AsError(err).Message != `create link: code "promo_1" is taken` {
		t.Fatalf("CreateLink(taken code) error = %v; want KindConflict", err)
	}
	if _, err := st.CreateLink(ctx, marquee.LinkInput{URL: "https://x.test", Redirect: 302, AdID: 999}); marquee.KindOf(err) != marquee.KindInvalid ||
		marquee.AsError(err).Problems["adId"] != "no ad 999" {
		t.Fatalf("CreateLink(adId 999) error = %v; want invalid adId", err)
	}
	gen, err := st.CreateLink(ctx, marquee.LinkInput{URL: "http://example.com", Redirect: 302})
	if err != nil || len(gen.Code) != marquee.GeneratedCodeLen || marquee.CheckCode(gen.Code) != "" {
		t.Fatalf("CreateLink(no code) = %+v, %v; want a generated %d-character code", gen, err, marquee.GeneratedCodeLen)
	}
	seq, _ := st.LastSeq(ctx)

	// Clicks: added; only a limited link logs a change.
	if err := st.AddClicks(ctx, []marquee.Clicks{
		{LinkID: created.ID, Code: "promo_1", N: 3}, {LinkID: gen.ID, Code: gen.Code, N: 5}, {LinkID: 999_999, Code: "deleted", N: 7}}); err != nil {
		t.Fatal(err)
	}
	if err := st.AddClicks(ctx, []marquee.Clicks{{LinkID: created.ID, Code: "promo_1", N: 2}}); err != nil {
		t.Fatal(err)
	}
	if l, _ := st.Link(ctx, "promo_1"); l.Clicks != 5 {
		t.Fatalf("promo_1 clicks = %d; want 5", l.Clicks)
	}
	if l, _ := st.Link(ctx, gen.Code); l.Clicks != 5 {
		t.Fatalf("%s clicks = %d; want 5", gen.Code, l.Clicks)
	}
	// A redirect's view: everything it reads; clicks only with a limit.
	for _, c := range []struct {
		code   string
		clicks int64
	}{{"promo_1", 5}, {gen.Code, 0}} {
		full, _ := st.Link(ctx, c.code)
		want := full
		want.Clicks, want.CreatedAt, want.UpdatedAt, want.Title, want.Tags = c.clicks, time.Time{}, time.Time{}, "", nil
		if got, err := st.LinkTarget(ctx, c.code); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("LinkTarget(%s) = %+v, %v; want %+v", c.code, got, err, want)
		}
	}
	if _, err := st.LinkTarget(ctx, "nope"); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("LinkTarget(nope) error = %v; want KindNotFound", err)
	}

	// Replace: every field but the code and the clicks.
	in2 := marquee.LinkInput{URL: "https://example.org/", Redirect: 307}
	rep, err := st.ReplaceLink(ctx, "promo_1", in2)
	if err != nil || rep.URL != in2.URL || rep.Redirect != 307 || rep.MaxClicks != 0 || !rep.ExpiresAt.IsZero() ||
		rep.AdID != 0 || rep.Clicks != 5 || !rep.CreatedAt.Equal(created.CreatedAt) {
		t.Fatalf("ReplaceLink = %+v, %v", rep, err)
	}
	if got, _ := st.Link(ctx, "promo_1"); !reflect.DeepEqual(got, rep) {
		t.Fatalf("Link after replace = %+v; want %+v", got, rep)
	}
	if _, err := st.ReplaceLink(ctx, "nope", in2); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("ReplaceLink(nope) error = %v; want KindNotFound", err)
	}
	if _, err := st.ReplaceLink(ctx, "promo_1", marquee.LinkInput{Code: "other", URL: "https://x.test", Redirect: 302}); marquee.KindOf(err) != marquee.KindInvalid {
		t.Fatalf("ReplaceLink(changing the code) error = %v; want invalid", err)
	}
	if err := st.DeleteLink(ctx, gen.Code); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteLink(ctx, gen.Code); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("DeleteLink twice error = %v; want KindNotFound", err)
	}
	want := []string{"link put promo_1", "link put promo_1", "link put promo_1", "link delete " + gen.Code}
	if got := changesSince(t, st, seq); !reflect.DeepEqual(got, want) {
		t.Fatalf("changelog = %q; want %q (clicks log only limited links)", got, want)
	}

	// Bulk insert and paging, newest first.
	var bulk []marquee.LinkInput
	for i := range 25 {
		bulk = append(bulk, marquee.LinkInput{Code: bulkCode(i), URL: "https://example.com/" + fmt.Sprint(i), Redirect: 302})
	}
	progressed := 0
	if err := st.InsertLinks(ctx, bulk, func() { progressed++ }); err != nil || progressed != 25 {
		t.Fatalf("InsertLinks = %v after %d progress calls", err, progressed)
	}
	page, total, err := st.ListLinks(ctx, 1, 10)
	if err != nil || total != 26 || len(page) != 10 || page[0].Code != bulkCode(23) {
		t.Fatalf("ListLinks(1, 10) = %d items (first %+v), total %d, %v; want 10 from seed 23, total 26", len(page), page, total, err)
	}
	if got := changesSince(t, st, seq); got[len(got)-1] != " reload " {
		t.Fatalf("last change after InsertLinks = %q; want a reload", got[len(got)-1])
	}
}

func testAdTrackingLinks(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	withURL := input("landing", -time.Hour, time.Hour)
	withURL.URL = "https://shop.example/landing"
	ad, err := st.CreateAd(ctx, withURL)
	if err != nil || ad.Link == "" || ad.URL != withURL.URL {
		t.Fatalf("CreateAd(url) = %+v, %v; want a tracking link", ad, err)
	}
	if got, _ := st.Ad(ctx, ad.ID); !reflect.DeepEqual(got, ad) {
		t.Fatalf("Ad = %+v; want %+v", got, ad)
	}
	l, err := st.Link(ctx, ad.Link)
	if err != nil || l.URL != withURL.URL || l.AdID != ad.ID || l.Redirect != marquee.DefaultRedirect {
		t.Fatalf("tracking link = %+v, %v", l, err)
	}
	if _, err := st.ReplaceLink(ctx, ad.Link, marquee.LinkInput{URL: "https://evil.test", Redirect: 302}); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("ReplaceLink(tracking link) error = %v; want KindConflict", err)
	}
	if err := st.DeleteLink(ctx, ad.Link); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("DeleteLink(tracking link) error = %v; want KindConflict", err)
	}
	seq, _ := st.LastSeq(ctx)
	withURL.URL = "https://shop.example/other"
	rep, err := st.ReplaceAd(ctx, ad.ID, withURL)
	if err != nil || rep.Link != ad.Link {
		t.Fatalf("ReplaceAd(new url) = %+v, %v; want the same link", rep, err)
	}
	if l, _ := st.Link(ctx, ad.Link); l.URL != withURL.URL {
		t.Fatalf("tracking link url = %q; want %q", l.URL, withURL.URL)
	}
	withURL.URL = ""
	if rep, err = st.ReplaceAd(ctx, ad.ID, withURL); err != nil || rep.Link != "" || rep.URL != "" {
		t.Fatalf("ReplaceAd(no url) = %+v, %v; want no link", rep, err)
	}
	if _, err := st.Link(ctx, ad.Link); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("tracking link after its url was removed: %v; want KindNotFound", err)
	}
	withURL.URL = "https://shop.example/again"
	rep, _ = st.ReplaceAd(ctx, ad.ID, withURL)
	if err := st.DeleteAd(ctx, ad.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Link(ctx, rep.Link); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("tracking link after its ad was deleted: %v; want KindNotFound", err)
	}
	id := fmt.Sprint(ad.ID)
	want := []string{"ad put " + id, "link put " + ad.Link, "ad put " + id, "link delete " + ad.Link,
		"ad put " + id, "link put " + rep.Link, "ad delete " + id, "link delete " + rep.Link}
	if got := changesSince(t, st, seq); !reflect.DeepEqual(got, want) {
		t.Fatalf("changelog = %q; want %q", got, want)
	}
}

// More links than one statement of AddClicks updates, some limited.
func testClicksOfManyLinks(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	const n = 1234
	var ins []marquee.LinkInput
	counts := map[string]int64{}
	for i := range n {
		in := marquee.LinkInput{Code: bulkCode(i), URL: "https://example.com/", Redirect: 302}
		if i%100 == 0 {
			in.MaxClicks = 1000
		}
		ins = append(ins, in)
		counts[in.Code] = int64(i%7 + 1)
	}
	if err := st.InsertLinks(ctx, ins, func() {}); err != nil {
		t.Fatal(err)
	}
	seq, _ := st.LastSeq(ctx)
	stored, _, err := st.ListLinks(ctx, 0, 2*n)
	if err != nil {
		t.Fatal(err)
	}
	var flush []marquee.Clicks
	for _, l := range stored {
		flush = append(flush, marquee.Clicks{LinkID: l.ID, Code: l.Code, N: counts[l.Code]})
	}
	for range 2 {
		if err := st.AddClicks(ctx, flush); err != nil {
			t.Fatal(err)
		}
	}
	links, total, err := st.ListLinks(ctx, 0, 2*n)
	if err != nil || total != n {
		t.Fatalf("ListLinks = %d links, %v", total, err)
	}
	for _, l := range links {
		if l.Clicks != 2*counts[l.Code] {
			t.Fatalf("link %s clicks = %d; want %d", l.Code, l.Clicks, 2*counts[l.Code])
		}
	}
	if got := len(changesSince(t, st, seq)); got != 2*13 {
		t.Fatalf("%d changelog entries; want %d (one per limited link per flush)", got, 2*13)
	}
}

func testReports(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	day := int64(20_000 * 86400)
	row := func(id, hour int64, country string, imp, clicks int64) reportrow.Row {
		return reportrow.Row{Key: reportrow.Key{Entity: marquee.EntityAd, ID: id, Time: day + hour*3600, Country: country, Platform: "web"},
			Counts: reportrow.Counts{Impressions: imp, Clicks: clicks}}
	}
	sk := hyperloglog.New()
	sk.Insert([]byte("u1"))
	one, _ := sk.MarshalBinary()
	for _, slot := range []string{"a", "b", "a"} { // two instances; a counts twice
		b := &reportrow.Batch{Slot: slot, Rows: []reportrow.Row{row(1, 1, "TW", 10, 1), row(1, 30, "JP", 5, 2), row(2, 1, "TW", 1, 1)},
			Reach: []reportrow.Reach{{Entity: marquee.EntityAd, ID: 1, Day: day, Sketch: one}},
			Files: []reportrow.FileMark{{File: slot + "-1.ndjson", Upto: 100, Complete: slot == "b"}}}
		if err := st.AddReports(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	marks, err := st.ReportFiles(ctx, []string{"a-1.ndjson", "b-1.ndjson", "c-1.ndjson"})
	if err != nil || len(marks) != 2 || marks["a-1.ndjson"].Upto != 100 || marks["a-1.ndjson"].Complete || !marks["b-1.ndjson"].Complete {
		t.Fatalf("ReportFiles = %+v, %v", marks, err)
	}
	q := reportrow.SumQuery{Entity: marquee.EntityAd, ID: 1, From: day, To: day + 2*86400, By: "country"}
	sums, err := st.ReportSums(ctx, q, false)
	if err != nil || len(sums) != 2 {
		t.Fatalf("ReportSums = %+v, %v", sums, err)
	}
	for _, s := range sums {
		if s.Dim == "TW" && s.Impressions != 30 || s.Dim == "JP" && s.Clicks != 6 {
			t.Errorf("sum %+v; want the three slots' rows added", s)
		}
	}
	top, err := st.ReportTop(ctx, reportrow.SumQuery{Entity: marquee.EntityAd, From: day, To: day + 2*86400}, false, "ctr", 1)
	if err != nil || len(top) != 1 || top[0].ID != 2 {
		t.Fatalf("ReportTop(ctr, 1) = %+v, %v; want ad 2 (ctr 1)", top, err)
	}
	reach, err := st.ReportReach(ctx, marquee.EntityAd, 1, day, day+86400)
	if err != nil || len(reach) != 2 {
		t.Fatalf("ReportReach = %d sketches, %v; want one per slot", len(reach), err)
	}
	moved, err := st.RollUpReports(ctx, day+86400)
	if err != nil || moved != 4 {
		t.Fatalf("RollUpReports = %d, %v; want the 4 hourly rows of the first day (two slots × two rows)", moved, err)
	}
	daily, err := st.ReportSums(ctx, q, true)
	if err != nil || len(daily) != 1 || daily[0].Impressions != 30 || daily[0].Time != day {
		t.Fatalf("daily sums = %+v, %v; want TW's 30 impressions on the day", daily, err)
	}
	if err := st.ReplaceReports(ctx, &reportrow.Batch{Slot: "a", Rows: []reportrow.Row{row(1, 30, "JP", 7, 0)}}, day+86400, day+2*86400); err != nil {
		t.Fatal(err)
	}
	sums, _ = st.ReportSums(ctx, reportrow.SumQuery{Entity: marquee.EntityAd, ID: 1, From: day + 86400, To: day + 2*86400}, false)
	if len(sums) != 1 || sums[0].Impressions != 7+5 {
		t.Fatalf("after ReplaceReports of slot a: %+v; want a's 7 and b's 5", sums)
	}
}

// testReportNames: the names of what reports read elsewhere show (ads'
// titles, links' codes) and links' tags, for the ids that exist.
func testReportNames(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	ad, _ := st.CreateAd(ctx, input("the ad", -time.Hour, time.Hour))
	tagged, err := st.CreateLink(ctx, marquee.LinkInput{Code: "spring", URL: "https://x.test", Redirect: 302, Tags: []string{"news", "promo"}})
	if err != nil {
		t.Fatal(err)
	}
	bare, _ := st.CreateLink(ctx, marquee.LinkInput{Code: "bare", URL: "https://x.test", Redirect: 302})
	if names, err := st.EntityNames(ctx, marquee.EntityAd, []int64{ad.ID, 999}); err != nil || !reflect.DeepEqual(names, map[int64]string{ad.ID: "the ad"}) {
		t.Errorf("EntityNames(ad, %d and 999) = %v, %v; want the ad's title alone", ad.ID, names, err)
	}
	if names, err := st.EntityNames(ctx, marquee.EntityLink, []int64{tagged.ID, bare.ID}); err != nil ||
		!reflect.DeepEqual(names, map[int64]string{tagged.ID: "spring", bare.ID: "bare"}) {
		t.Errorf("EntityNames(links) = %v, %v; want their codes", names, err)
	}
	if _, err := st.EntityNames(ctx, "nothing", []int64{1}); err == nil {
		t.Errorf("EntityNames(nothing) = nil error; want one")
	}
	tags, err := st.LinkTags(ctx, []int64{tagged.ID, bare.ID})
	if slices.Sort(tags[tagged.ID]); err != nil || len(tags) != 1 || !reflect.DeepEqual(tags[tagged.ID], []string{"news", "promo"}) {
		t.Errorf("LinkTags = %v, %v; want spring's two tags alone", tags, err)
	}
}

// testReportCube: cube rows of each grain and request rows add up over
// slots, sum by any grouping and filter, and request rows roll up into
// daily ones; a rebuild replaces the slot's cube rows.
func testReportCube(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	day := int64(20_000 * 86400)
	cube := func(grain string, d, ad, camp, pl int64, country, device, value string, imp int64) reportrow.CubeRow {
		r := reportrow.CubeRow{Grain: grain, Day: day + d*86400, Ad: ad, Campaign: camp, Placement: pl, Country: country, Device: device,
			Counts: reportrow.Counts{Impressions: imp, Clicks: imp / 10}}
		if grain == reportrow.GrainKV {
			r.Key, r.Value = "section", value
		}
		return r
	}
	req := func(h, pl int64, country string, filled, capped int64) reportrow.RequestRow {
		r := reportrow.RequestRow{Hour: day + h*3600, Placement: pl, Country: country, Device: "phone"}
		r.Outcomes[marquee.Filled], r.Outcomes[marquee.CappedOut] = filled, capped
		return r
	}
	for _, slot := range []string{"a", "b", "a"} {
		b := &reportrow.Batch{Slot: slot, Cube: []reportrow.CubeRow{
			cube(reportrow.GrainEntity, 0, 1, 10, 100, "", "", "", 20), cube(reportrow.GrainEntity, 1, 2, 10, 101, "", "", "", 30),
			cube(reportrow.GrainEntity, 1, 3, 11, 100, "", "", "", 40),
			cube(reportrow.GrainGeo, 0, 1, 10, 100, "TW", "phone", "", 20), cube(reportrow.GrainGeo, 1, 2, 10, 101, "JP", "desktop", "", 30),
			cube(reportrow.GrainKV, 0, 1, 10, 100, "", "", "sport", 20)},
			Requests: []reportrow.RequestRow{req(1, 100, "TW", 3, 1), req(30, 100, "JP", 2, 0), req(1, 101, "TW", 0, 5)}}
		if err := st.AddReports(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	sums, err := st.CubeSums(ctx, reportrow.CubeQuery{Grain: reportrow.GrainEntity, From: day, To: day + 2*86400, Group: []string{"campaign", "placement"}})
	if err != nil || len(sums) != 3 {
		t.Fatalf("CubeSums(campaign, placement) = %+v, %v; want 3 groups", sums, err)
	}
	for _, s := range sums {
		want := map[[2]int64]int64{{10, 100}: 60, {10, 101}: 90, {11, 100}: 120}[[2]int64{s.Campaign, s.Placement}]
		if s.Impressions != want || s.Ad != 0 || s.Day != 0 {
			t.Errorf("CubeSums row %+v; want %d impressions (three slots' rows), ad and day not grouped", s, want)
		}
	}
	sums, err = st.CubeSums(ctx, reportrow.CubeQuery{Grain: reportrow.GrainGeo, From: day, To: day + 2*86400, Group: []string{"day", "country"},
		Campaigns: []int64{10}, Devices: []string{"phone"}})
	if err != nil || len(sums) != 1 || sums[0].Country != "TW" || sums[0].Day != day || sums[0].Impressions != 60 {
		t.Fatalf("CubeSums(day, country; campaign 10, phone) = %+v, %v; want TW's 60 on the first day", sums, err)
	}
	sums, err = st.CubeSums(ctx, reportrow.CubeQuery{Grain: reportrow.GrainKV, Key: "section", From: day, To: day + 86400, Group: []string{"value"}})
	if err != nil || len(sums) != 1 || sums[0].Value != "sport" || sums[0].Impressions != 60 {
		t.Fatalf("CubeSums(value of section) = %+v, %v", sums, err)
	}
	reqs, err := st.RequestSums(ctx, reportrow.RequestQuery{From: day, To: day + 2*86400, By: []string{"placement"}})
	if err != nil || len(reqs) != 2 {
		t.Fatalf("RequestSums(placement) = %+v, %v", reqs, err)
	}
	for _, r := range reqs {
		if r.Placement == 100 && (r.Requests() != 18 || r.Outcomes[marquee.Filled] != 15) || r.Placement == 101 && r.Outcomes[marquee.CappedOut] != 15 {
			t.Errorf("RequestSums row %+v; want placement 100: 18 requests, 15 filled; 101: 15 capped", r)
		}
	}
	if _, err := st.RollUpReports(ctx, day+86400); err != nil {
		t.Fatal(err)
	}
	reqs, err = st.RequestSums(ctx, reportrow.RequestQuery{From: day, To: day + 2*86400, Placements: []int64{100}, By: []string{"hour", "country"}})
	if err != nil || len(reqs) != 2 {
		t.Fatalf("RequestSums(hour, country) after the roll-up = %+v, %v; want the first day's daily row and the second's hourly one", reqs, err)
	}
	for _, r := range reqs {
		if r.Country == "TW" && (r.Hour != day || r.Requests() != 12) || r.Country == "JP" && (r.Hour != day+30*3600 || r.Requests() != 6) {
			t.Errorf("row %+v after the roll-up", r)
		}
	}
	// Sums by nothing: one row of the hourly table's and one of the
	// daily's; none of a range without rows (not a row of NULL sums).
	if reqs, err := st.RequestSums(ctx, reportrow.RequestQuery{From: day, To: day + 2*86400, Placements: []int64{100}}); err != nil || len(reqs) != 2 || reqs[0].Requests()+reqs[1].Requests() != 18 {
		t.Errorf("RequestSums(by nothing) = %+v, %v; want 18 requests in two rows", reqs, err)
	}
	if reqs, err := st.RequestSums(ctx, reportrow.RequestQuery{From: day + 10*86400, To: day + 11*86400}); err != nil || len(reqs) != 0 {
		t.Errorf("RequestSums(by nothing, no rows) = %+v, %v; want none", reqs, err)
	}
	if err := st.ReplaceReports(ctx, &reportrow.Batch{Slot: "a", Cube: []reportrow.CubeRow{cube(reportrow.GrainEntity, 1, 2, 10, 101, "", "", "", 1)}}, day+86400, day+2*86400); err != nil {
		t.Fatal(err)
	}
	sums, _ = st.CubeSums(ctx, reportrow.CubeQuery{Grain: reportrow.GrainEntity, From: day + 86400, To: day + 2*86400, Group: []string{"ad"}})
	if len(sums) != 2 || sums[0].Impressions+sums[1].Impressions != 1+30+40 {
		t.Errorf("after ReplaceReports of slot a: %+v; want a's new 1 and b's 30 and 40", sums)
	}
}

// testSavedReports: saved reports round-trip with their schedule and
// bounds; a period is claimed once; a retry is claimed once; a delivery
// left sending is abandoned as unknown; deleting a report deletes its log.
func testSavedReports(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	sched := &marquee.Schedule{Every: marquee.Weekly, Weekday: "monday", At: "08:00", TimeZone: "Europe/Paris", Format: "xlsx", To: []string{"a@example.com", "b@example.com"}}
	r, err := st.CreateSavedReport(ctx, marquee.SavedReport{Name: "weekly", Query: "by=campaign", Schedule: sched, Owner: "user:1 a@example.com",
		Bounds: marquee.Bounds{Advertisers: marquee.IDs{4}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.SavedReport(ctx, r.ID)
	if err != nil || got.Name != "weekly" || got.Schedule == nil || got.Schedule.Weekday != "monday" || len(got.Schedule.To) != 2 || !slices.Equal(got.Bounds.Advertisers, []int64{4}) {
		t.Fatalf("SavedReport = %+v, %v", got, err)
	}
	if r2, err := st.ReplaceSavedReport(ctx, r.ID, marquee.SavedReport{Name: "renamed", Query: "by=ad"}); err != nil || r2.Schedule != nil || r2.Owner != r.Owner || !r2.Bounds.Bound() {
		t.Fatalf("ReplaceSavedReport = %+v, %v; want no schedule, the owner and bounds kept", r2, err)
	}
	st.ReplaceSavedReport(ctx, r.ID, marquee.SavedReport{Name: "weekly", Query: "by=ad", Schedule: sched})
	from := time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)
	d, claimed, err := st.ClaimDelivery(ctx, r.ID, from, from.Add(7*24*time.Hour), sched.To)
	if err != nil || !claimed || d.ID == 0 {
		t.Fatalf("ClaimDelivery = %+v, %v, %v", d, claimed, err)
	}
	if _, again, err := st.ClaimDelivery(ctx, r.ID, from, from.Add(7*24*time.Hour), sched.To); err != nil || again {
		t.Fatalf("ClaimDelivery of a claimed period = %v, %v; want not claimed", again, err)
	}
	next := time.Now().Add(-time.Second)
	if err := st.FinishDelivery(ctx, d.ID, marquee.DeliveryRetrying, "451 try again", &next, nil); err != nil {
		t.Fatal(err)
	}
	due, err := st.DueRetries(ctx, time.Now())
	if err != nil || len(due) != 1 || due[0].ID != d.ID || due[0].Error != "451 try again" {
		t.Fatalf("DueRetries = %+v, %v", due, err)
	}
	if ok, err := st.ClaimRetry(ctx, d.ID); err != nil || !ok {
		t.Fatalf("ClaimRetry = %v, %v", ok, err)
	}
	if ok, err := st.ClaimRetry(ctx, d.ID); err != nil || ok {
		t.Fatalf("ClaimRetry again = %v, %v; want refused (claimed)", ok, err)
	}
	if n, err := st.AbandonSending(ctx, time.Now().Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("AbandonSending = %d, %v; want the delivery left sending", n, err)
	}
	ds, err := st.ReportDeliveries(ctx, r.ID, 10)
	if err != nil || len(ds) != 1 || ds[0].Status != marquee.DeliveryUnknown || ds[0].Attempts != 2 || len(ds[0].Recipients) != 2 || !ds[0].From.Equal(from) {
		t.Fatalf("ReportDeliveries = %+v, %v", ds, err)
	}
	if err := st.DeleteSavedReport(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SavedReport(ctx, r.ID); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("SavedReport after delete = %v", err)
	}
	if ds, _ := st.ReportDeliveries(ctx, r.ID, 10); len(ds) != 0 {
		t.Fatalf("deliveries after delete = %+v", ds)
	}
}

// testSearch: ads by title prefix in any case (Unicode too), in title
// order, with the state filter; links by code prefix, case-sensitive;
// ads seeded in bulk are found as created ones; a replaced title is found
// by its new text only.
func testSearch(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	for _, title := range []string{"Spring sale", "spring SHOES", "Springfield", "Summer", "Émile's spring", "ÉCOLE"} {
		if _, err := st.CreateAd(ctx, input(title, -time.Hour, time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.InsertAds(ctx, []marquee.AdInput{input("SPRING bulk", time.Hour, 2*time.Hour)}, func() {}); err != nil {
		t.Fatal(err)
	}
	search := func(q string, state marquee.AdState) []string {
		t.Helper()
		ads, total, err := st.ListAds(ctx, marquee.AdFilter{Query: q, State: state, Now: now, Limit: 10})
		if err != nil || total != len(ads) {
			t.Fatalf("ListAds(q %q) = %d ads, total %d, %v", q, len(ads), total, err)
		}
		var titles []string
		for _, a := range ads {
			titles = append(titles, a.Title)
		}
		return titles
	}
	for _, c := range []struct {
		q     string
		state marquee.AdState
		want  []string
	}{
		{"spring", marquee.AdsAll, []string{"SPRING bulk", "Spring sale", "spring SHOES", "Springfield"}},
		{"SPRING S", marquee.AdsAll, []string{"Spring sale", "spring SHOES"}},
		{"spring", marquee.AdsScheduled, []string{"SPRING bulk"}},
		{"é", marquee.AdsAll, []string{"ÉCOLE", "Émile's spring"}},
		{"autumn", marquee.AdsAll, nil},
	} {
		if got := search(c.q, c.state); !slices.Equal(got, c.want) {
			t.Errorf("ListAds(q %q, %s) = %q; want %q", c.q, c.state, got, c.want)
		}
	}
	first, _, _ := st.ListAds(ctx, marquee.AdFilter{Query: "summer", Now: now, Limit: 1})
	if _, err := st.ReplaceAd(ctx, first[0].ID, input("Autumn", -time.Hour, time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := search("summer", marquee.AdsAll); got != nil {
		t.Errorf("after the replace, q summer = %q; want nothing", got)
	}
	if got := search("AUTUMN", marquee.AdsAll); !slices.Equal(got, []string{"Autumn"}) {
		t.Errorf("after the replace, q AUTUMN = %q; want [Autumn]", got)
	}
	for _, code := range []string{"promo-a", "promo-B", "Promo", "prom"} {
		if _, err := st.CreateLink(ctx, marquee.LinkInput{Code: code, URL: "https://example.com/" + code, Redirect: 302}); err != nil {
			t.Fatal(err)
		}
	}
	links, total, err := st.SearchLinks(ctx, marquee.LinkFilter{Query: "promo"}, 0, 10)
	var codes []string
	for _, l := range links {
		codes = append(codes, l.Code)
	}
	if err != nil || total != 2 || !slices.Equal(codes, []string{"promo-B", "promo-a"}) {
		t.Errorf("SearchLinks(promo) = %q, total %d, %v; want [promo-B promo-a] (by code, case-sensitive), 2", codes, total, err)
	}
}

// hostileTitles are titles a store must keep byte for byte: 4-byte UTF-8
// at the length limit, joiner sequences, case-folding oddities,
// right-to-left and bidi overrides, quotes and placeholders, controls.
var hostileTitles = []string{
	strings.Repeat("😀", marquee.MaxTitleLen),
	strings.Repeat("𝔘", marquee.MaxTitleLen-1) + "x",
	strings.Repeat("Ⱥ", marquee.MaxTitleLen), // lower case is a byte longer a character
	"👩‍👩‍👧‍👦 🏳️‍🌈 🇹🇼 e\u0301 é",
	"İstanbul ǅ ß ΣΑΣ ﬃ",
	"مرحبا שלום \u202eevil\u202c",
	`'; DROP TABLE ads; -- "x" ? $1 %s %_ \\ \'`,
	"tab\tnewline\nbell\a",
	"  leading and trailing spaces  ",
}

// Hostile text round-trips exactly: created, bulk-inserted, replaced,
// read back, listed, and found by a prefix of its own.
func testHostileText(t *testing.T, open Opener) {
	ctx := context.Background()
	st, other := open(t)
	var bulk []marquee.AdInput
	for _, title := range hostileTitles {
		bulk = append(bulk, input(title, -time.Hour, time.Hour))
	}
	if err := st.InsertAds(ctx, bulk, func() {}); err != nil {
		t.Fatalf("InsertAds(hostile titles): %v", err)
	}
	ids := map[int64]string{}
	for i, title := range hostileTitles {
		a, err := st.CreateAd(ctx, input("placeholder", -time.Hour, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		// Replaced by a title of the list, so both writes are checked.
		if _, err := st.ReplaceAd(ctx, a.ID, input(title, -time.Hour, time.Duration(i+2)*time.Hour)); err != nil {
			t.Fatalf("ReplaceAd(%q): %v", title, err)
		}
		ids[a.ID] = title
	}
	reader := other()
	for id, want := range ids {
		got, err := reader.Ad(ctx, id)
		if err != nil || got.Title != want {
			t.Errorf("Ad(%d).Title = %q, %v; want %q", id, got.Title, err, want)
		}
	}
	var loaded []string
	var mu sync.Mutex
	if err := reader.EachLiveAd(ctx, now, func(a *marquee.Ad) error {
		mu.Lock()
		defer mu.Unlock()
		loaded = append(loaded, a.Title)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(hostileTitles), hostileTitles...)
	slices.Sort(want)
	slices.Sort(loaded)
	if !slices.Equal(loaded, want) {
		t.Errorf("EachLiveAd titles differ from what was written:\n got %q\nwant %q", loaded, want)
	}
	for _, title := range hostileTitles {
		prefix := string([]rune(title)[:3])
		ads, _, err := reader.ListAds(ctx, marquee.AdFilter{Query: prefix, Now: now, Limit: 100})
		n := 0
		for _, a := range ads {
			if a.Title == title {
				n++
			}
		}
		if err != nil || n != 2 {
			t.Errorf("ListAds(q %q) found %q %d times, %v; want 2 (created and bulk-inserted)", prefix, title, n, err)
		}
	}
}

// bulkCode names the i-th link a bulk test inserts: distinct for distinct i
// and a valid custom code.
func bulkCode(i int) string { return fmt.Sprintf("bulk_%d", i) }

// testRequestSamples: a flush's samples come back by hour and placement,
// every instance's, a flush retried replaces its row, and the hours
// before a cut-off are deleted.
func testRequestSamples(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	h := int64(20_000 * 86400)
	add := func(slot string, rows ...reportrow.RequestSample) {
		t.Helper()
		if err := st.AddReports(ctx, &reportrow.Batch{Slot: slot, Samples: rows}); err != nil {
			t.Fatalf("AddReports(samples of %s) = %v", slot, err)
		}
	}
	add("a", reportrow.RequestSample{Hour: h, Placement: 1, Offered: 50, Doc: []byte(`[{"at":1}]`)},
		reportrow.RequestSample{Hour: h + 3600, Placement: 1, Offered: 7, Doc: []byte(`[{"at":2}]`)},
		reportrow.RequestSample{Hour: h, Placement: 2, Offered: 9, Doc: []byte(`[{"at":3}]`)})
	add("b", reportrow.RequestSample{Hour: h, Placement: 1, Offered: 30, Doc: []byte(`[{"at":4}]`)})
	add("a", reportrow.RequestSample{Hour: h, Placement: 1, Offered: 51, Doc: []byte(`[{"at":5}]`)}) // retried
	got, err := st.RequestSamples(ctx, h, h+7200, []int64{1})
	want := []string{"0 1 51 [{\"at\":5}]", "0 1 30 [{\"at\":4}]", "3600 1 7 [{\"at\":2}]"}
	var have []string
	for _, r := range got {
		have = append(have, fmt.Sprintf("%d %d %d %s", r.Hour-h, r.Placement, r.Offered, r.Doc))
	}
	if err != nil || !slices.Equal(have, want) {
		t.Fatalf("RequestSamples(placement 1) = %q, %v; want %q", have, err, want)
	}
	if all, err := st.RequestSamples(ctx, h, h+7200, nil); err != nil || len(all) != 4 {
		t.Fatalf("RequestSamples(every placement) = %d rows, %v; want 4", len(all), err)
	}
	if n, err := st.DeleteRequestSamples(ctx, h+3600); err != nil || n != 3 {
		t.Fatalf("DeleteRequestSamples(second hour) = %d, %v; want 3", n, err)
	}
	if left, err := st.RequestSamples(ctx, 0, h+7200, nil); err != nil || len(left) != 1 || left[0].Hour != h+3600 {
		t.Fatalf("RequestSamples after the delete = %+v, %v; want the second hour's", left, err)
	}
}

// testBids: header bidding's rows add up across flushes and instances,
// sum by placement and bidder over a range, and keep their sums once
// rolled into days.
func testBids(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	h := int64(20_000 * 86400)
	add := func(slot string, rows ...reportrow.BidRow) {
		t.Helper()
		if err := st.AddReports(ctx, &reportrow.Batch{Slot: slot, Bids: rows}); err != nil {
			t.Fatalf("AddReports(bids of %s) = %v", slot, err)
		}
	}
	add("a", reportrow.BidRow{Hour: h, Placement: 1, Bidder: "appnexus", Bids: 10, Wins: 4, Impressions: 3, Revenue: 9_000_000},
		reportrow.BidRow{Hour: h + 3600, Placement: 1, Bidder: "rubicon", Bids: 5, Wins: 1})
	add("a", reportrow.BidRow{Hour: h, Placement: 1, Bidder: "appnexus", Bids: 2, Wins: 1, Impressions: 1, Revenue: 3_000_000})
	add("b", reportrow.BidRow{Hour: h, Placement: 2, Bidder: "appnexus", Bids: 7})
	sums := func() string {
		t.Helper()
		rows, err := st.BidSums(ctx, reportrow.BidQuery{From: h, To: h + 86400})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(rows)
	}
	want := "[{0 1 appnexus 12 5 4 12000000} {0 1 rubicon 5 1 0 0} {0 2 appnexus 7 0 0 0}]"
	if got := sums(); got != want {
		t.Fatalf("BidSums = %s; want %s", got, want)
	}
	if rows, err := st.BidSums(ctx, reportrow.BidQuery{From: h, To: h + 86400, Placements: []int64{2}}); err != nil || len(rows) != 1 {
		t.Fatalf("BidSums(placement 2) = %v, %v; want one row", rows, err)
	}
	if _, err := st.RollUpReports(ctx, h+86400); err != nil {
		t.Fatal(err)
	}
	if got := sums(); got != want {
		t.Fatalf("BidSums after the roll-up = %s; want %s", got, want)
	}
	// By UTC day: a row a day, placement and bidder, its Hour the day's.
	add("a", reportrow.BidRow{Hour: h + 86400 + 7200, Placement: 1, Bidder: "appnexus", Bids: 3, Wins: 2, Impressions: 2, Revenue: 1_000_000})
	rows, err := st.BidSums(ctx, reportrow.BidQuery{From: h, To: h + 2*86400, Placements: []int64{1}, Daily: true})
	if got, want := fmt.Sprint(rows), fmt.Sprintf("[{%d 1 appnexus 12 5 4 12000000} {%d 1 rubicon 5 1 0 0} {%d 1 appnexus 3 2 2 1000000}]", h, h, h+86400); err != nil || got != want {
		t.Errorf("BidSums by day = %s, %v; want %s", got, err, want)
	}
}
