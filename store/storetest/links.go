package storetest

import (
	"context"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"marquee"
	"marquee/store/sqltx"
)

// testLinkDomains: a code is unique within its domain; a link's title,
// tags, rules and destinations are kept as given; links are found by tag
// and by words of their titles; a replace re-indexes the tags and a
// delete removes them.
func testLinkDomains(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	rules := []marquee.LinkRule{{URL: "https://apps.example/ios", When: marquee.RuleWhen{
		Platforms: []string{"ios"}, Languages: []string{"en-US"}, Countries: []string{"DE", "AT"},
		Query: []marquee.QueryMatch{{Name: "src", Value: "mail"}},
		From:  now.Add(-time.Hour), To: now.Add(time.Hour)}}}
	dests := []marquee.Destination{{URL: "https://a.example", Weight: 70}, {URL: "https://b.example", Weight: 30}}
	plain, err := st.CreateLink(ctx, marquee.LinkInput{Code: "same", URL: "https://default.example", Redirect: 302,
		Title: "100% Spring sale", Tags: []string{"spring", "promo"}})
	if err != nil {
		t.Fatal(err)
	}
	branded, err := st.CreateLink(ctx, marquee.LinkInput{Domain: "go.brand.example", Code: "same", URL: "https://a.example", Redirect: 302,
		Title: "Brand spring", Tags: []string{"spring"}, Rules: rules, Destinations: dests})
	if err != nil {
		t.Fatalf("CreateLink(same code on go.brand.example) error = %v; want a second link (codes are per domain)", err)
	}
	if _, err := st.CreateLink(ctx, marquee.LinkInput{Domain: "go.brand.example", Code: "same", URL: "https://x.example", Redirect: 302}); marquee.KindOf(err) != marquee.KindConflict ||
		marquee.AsError(err).Message != `create link: code "same" is taken on go.brand.example` {
		t.Fatalf("CreateLink(taken on its domain) error = %v; want KindConflict naming the domain", err)
	}
	key := marquee.LinkKey("go.brand.example", "same")
	for _, c := range []struct {
		key  string
		want marquee.Link
	}{{"same", plain}, {key, branded}} {
		got, err := st.Link(ctx, c.key)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Fatalf("Link(%s) = %+v, %v; want %+v", c.key, got, err, c.want)
		}
	}
	if got, err := st.LinkTarget(ctx, key); err != nil || got.Domain != "go.brand.example" || !reflect.DeepEqual(got.Rules, rules) ||
		!reflect.DeepEqual(got.Destinations, dests) || got.ID != branded.ID {
		t.Fatalf("LinkTarget(%s) = %+v, %v; want its rules and destinations", key, got, err)
	}
	if _, err := st.Link(ctx, marquee.LinkKey("other.example", "same")); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("Link(same on other.example) error = %v; want KindNotFound", err)
	}
	for _, c := range []struct {
		f    marquee.LinkFilter
		want []int64
	}{
		{marquee.LinkFilter{Tag: "spring"}, []int64{branded.ID, plain.ID}},
		{marquee.LinkFilter{Tag: "promo"}, []int64{plain.ID}},
		{marquee.LinkFilter{Query: "SPRING"}, []int64{plain.ID, branded.ID}},
		{marquee.LinkFilter{Query: "100%"}, []int64{plain.ID}},
		{marquee.LinkFilter{Query: "1_0"}, nil},
		{marquee.LinkFilter{Query: "brand", Tag: "promo"}, nil},
		{marquee.LinkFilter{Query: "sam"}, []int64{plain.ID, branded.ID}},
	} {
		if got := searchIDs(t, st, c.f); !slices.Equal(got, c.want) {
			t.Errorf("SearchLinks(%+v) = %v; want %v", c.f, got, c.want)
		}
	}
	in := branded.Input()
	in.Tags, in.Title = []string{"autumn"}, "Brand autumn"
	if _, err := st.ReplaceLink(ctx, key, in); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, st, marquee.LinkFilter{Tag: "spring"}); !slices.Equal(got, []int64{plain.ID}) {
		t.Errorf("after a replace, tag spring = %v; want [%d]", got, plain.ID)
	}
	if got := searchIDs(t, st, marquee.LinkFilter{Tag: "autumn"}); !slices.Equal(got, []int64{branded.ID}) {
		t.Errorf("after a replace, tag autumn = %v; want [%d]", got, branded.ID)
	}
	in.Domain = "else.example"
	if _, err := st.ReplaceLink(ctx, key, in); marquee.KindOf(err) != marquee.KindInvalid {
		t.Errorf("ReplaceLink(another domain) error = %v; want KindInvalid", err)
	}
	if err := st.DeleteLink(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got := searchIDs(t, st, marquee.LinkFilter{Tag: "autumn"}); len(got) != 0 {
		t.Errorf("after the delete, tag autumn = %v; want none", got)
	}
	if _, err := st.Link(ctx, "same"); err != nil {
		t.Errorf("after deleting same on go.brand.example, Link(same) error = %v; want the default domain's", err)
	}
}

// testImportLinks: an import creates, replaces, skips and leaves alone,
// all in one transaction logged link by link; a dry run writes nothing;
// a row naming an ad's tracking link fails the import with nothing
// written.
func testImportLinks(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	ad, _ := st.CreateAd(ctx, marquee.AdInput{Title: "ad", StartAt: now.Add(-time.Hour), EndAt: now.Add(time.Hour), URL: "https://shop.example/"})
	kept, err := st.CreateLink(ctx, marquee.LinkInput{Code: "kept", URL: "https://example.com/kept", Redirect: 302, Title: "Kept", Tags: []string{"a"},
		Destinations: []marquee.Destination{{URL: "https://example.com/kept", Weight: 1}, {URL: "https://example.com/b", Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	changed, _ := st.CreateLink(ctx, marquee.LinkInput{Code: "changed", URL: "https://example.com/old", Redirect: 302})
	ins := []marquee.LinkInput{
		{Code: "kept", URL: "https://example.com/kept", Redirect: 302, Title: "Kept", Tags: []string{"a"}},
		{Code: "changed", URL: "https://example.com/new", Redirect: 301, Tags: []string{"b", "c"}},
		{Code: "new1", URL: "https://example.com/1", Redirect: 302, Title: "One", Tags: []string{"c"}},
		{Domain: "go.example", Code: "kept", URL: "https://example.com/other", Redirect: 302},
		{URL: "https://example.com/generated", Redirect: 302},
	}
	seq, _ := st.LastSeq(ctx)
	dry, err := st.ImportLinks(ctx, ins, marquee.ImportOptions{DryRun: true}, func(int) {})
	if want := (marquee.ImportResult{Created: 3, Updated: 1, Unchanged: 1}); err != nil || dry != want {
		t.Fatalf("dry ImportLinks = %+v, %v; want %+v", dry, err, want)
	}
	if after, _ := st.LastSeq(ctx); after != seq {
		t.Fatalf("a dry run logged changes (seq %d → %d)", seq, after)
	}
	if _, err := st.Link(ctx, "new1"); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("after a dry run, Link(new1) error = %v; want KindNotFound", err)
	}
	var done []int
	res, err := st.ImportLinks(ctx, ins, marquee.ImportOptions{}, func(n int) { done = append(done, n) })
	if want := (marquee.ImportResult{Created: 3, Updated: 1, Unchanged: 1}); err != nil || res != want || done[len(done)-1] != len(ins) {
		t.Fatalf("ImportLinks = %+v, %v (progress %v); want %+v", res, err, done, want)
	}
	if l, _ := st.Link(ctx, "changed"); l.ID != changed.ID || l.URL != "https://example.com/new" || l.Redirect != 301 || !slices.Equal(l.Tags, []string{"b", "c"}) {
		t.Errorf("the replaced link = %+v; want its new url, redirect and tags, its id kept", l)
	}
	if l, _ := st.Link(ctx, "kept"); len(l.Destinations) != 2 || !l.UpdatedAt.Equal(kept.UpdatedAt) {
		t.Errorf("the unchanged link = %+v; want it untouched, its destinations kept", l)
	}
	if got := searchIDs(t, st, marquee.LinkFilter{Tag: "c"}); len(got) != 2 {
		t.Errorf("tag c after the import = %v; want the replaced link and new1", got)
	}
	changes, err := st.Changes(ctx, seq, 100)
	if err != nil || len(changes) != 1 || changes[0].Entity != marquee.EntityLink || changes[0].Op != marquee.OpReload {
		t.Errorf("changelog after the import = %+v, %v; want one link reload (a generated code is among the creates)", changes, err)
	}
	seq, _ = st.LastSeq(ctx)
	if _, err := st.ImportLinks(ctx, []marquee.LinkInput{{Code: "new3", URL: "https://example.com/3", Redirect: 302},
		{Code: "new4", URL: "https://example.com/4", Redirect: 302}}, marquee.ImportOptions{}, func(int) {}); err != nil {
		t.Fatal(err)
	}
	if changes, _ := st.Changes(ctx, seq, 100); len(changes) != 2 || changes[0].Key != "new3" || changes[1].Key != "new4" || changes[1].ID == 0 {
		t.Errorf("changelog after an import of two coded links = %+v; want an entry each, with ids", changes)
	}
	again, err := st.ImportLinks(ctx, ins[1:4], marquee.ImportOptions{}, func(int) {})
	if want := (marquee.ImportResult{Unchanged: 3}); err != nil || again != want {
		t.Errorf("the same import again = %+v, %v; want %+v (idempotent by code)", again, err, want)
	}
	skip, err := st.ImportLinks(ctx, []marquee.LinkInput{{Code: "changed", URL: "https://example.com/x", Redirect: 302}}, marquee.ImportOptions{Skip: true}, func(int) {})
	if err != nil || skip != (marquee.ImportResult{Skipped: 1}) {
		t.Errorf("ImportLinks(Skip) = %+v, %v; want 1 skipped", skip, err)
	}
	// An ad's tracking link: the whole import fails, nothing written.
	a, _ := st.Ad(ctx, ad.ID)
	_, err = st.ImportLinks(ctx, []marquee.LinkInput{{Code: "new2", URL: "https://example.com/2", Redirect: 302},
		{Code: a.Link, URL: "https://example.com/ad", Redirect: 302}}, marquee.ImportOptions{}, func(int) {})
	if marquee.KindOf(err) != marquee.KindInvalid || !strings.Contains(marquee.AsError(err).Problems["rows[1]"], "tracking link") {
		t.Fatalf("ImportLinks(an ad's tracking link) error = %v; want the row named", err)
	}
	if _, err := st.Link(ctx, "new2"); marquee.KindOf(err) != marquee.KindNotFound {
		t.Errorf("after a failed import, Link(new2) error = %v; want KindNotFound (never half applied)", err)
	}
}

func searchIDs(t *testing.T, st Store, f marquee.LinkFilter) []int64 {
	t.Helper()
	links, total, err := st.SearchLinks(context.Background(), f, 0, 10)
	if err != nil || total != len(links) {
		t.Fatalf("SearchLinks(%+v) = %d links, total %d, %v", f, len(links), total, err)
	}
	var ids []int64
	for _, l := range links {
		ids = append(ids, l.ID)
	}
	return ids
}

// UpgradeLinks opens a database at schema version 9 (before link
// domains), stores links there with exec (SQL on the database, as a
// version-9 binary wrote them), and opens it again with every migration:
// the links are kept with their ids and clicks, new links get new ids,
// and a code is then unique within its domain. It swaps sqltx.Migrations
// while it runs, so a store's test calls it from a test of its own, not
// in parallel with others.
func UpgradeLinks[S Store](t *testing.T, db string, open func(ctx context.Context, db string) (S, error), exec func(query string) error) {
	ctx := context.Background()
	all := sqltx.Migrations
	old := fstest.MapFS{}
	names, _ := fs.Glob(all, "*.sql")
	for _, name := range names {
		if name < "0010" {
			b, _ := fs.ReadFile(all, name)
			old[name] = &fstest.MapFile{Data: b}
		}
	}
	sqltx.Migrations = old
	st, err := open(ctx, db)
	sqltx.Migrations = all
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, q := range []string{
		`INSERT INTO links (id, code, url, expires_at, max_clicks, redirect, ad_id, ad_owned, created_at, updated_at) VALUES
			(5, 'first', 'https://example.com/first', 0, 0, 302, 0, 0, 1000, 1000),
			(9, 'second', 'https://example.com/second', 0, 10, 301, 0, 0, 2000, 2000)`,
		`INSERT INTO link_clicks (link_id, clicks) VALUES (9, 4)`,
	} {
		if err := exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	st2, err := open(ctx, db)
	if err != nil {
		t.Fatalf("opening a version-9 database: %v", err)
	}
	defer st2.Close()
	for _, want := range []marquee.Link{
		{ID: 5, Code: "first", URL: "https://example.com/first", Redirect: 302, CreatedAt: time.UnixMilli(1000).UTC(), UpdatedAt: time.UnixMilli(1000).UTC()},
		{ID: 9, Code: "second", URL: "https://example.com/second", MaxClicks: 10, Clicks: 4, Redirect: 301, CreatedAt: time.UnixMilli(2000).UTC(), UpdatedAt: time.UnixMilli(2000).UTC()},
	} {
		if got, err := st2.Link(ctx, want.Code); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("after the upgrade, Link(%s) = %+v, %v; want %+v", want.Code, got, err, want)
		}
	}
	l, err := st2.CreateLink(ctx, marquee.LinkInput{Code: "third", URL: "https://example.com/third", Redirect: 302, Tags: []string{"new"}})
	if err != nil || l.ID <= 9 {
		t.Fatalf("CreateLink after the upgrade = %+v, %v; want an id above 9", l, err)
	}
	if _, err := st2.CreateLink(ctx, marquee.LinkInput{Domain: "go.example", Code: "first", URL: "https://example.com/", Redirect: 302}); err != nil {
		t.Fatalf("CreateLink(first on go.example) after the upgrade: %v; want codes unique per domain", err)
	}
}
