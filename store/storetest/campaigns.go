package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"marquee"
)

// mustParse parses body with parse, failing the test on a problem.
func mustParse[T any](t *testing.T, parse func([]byte) (T, error), body string) T {
	t.Helper()
	v, err := parse([]byte(body))
	if err != nil {
		t.Fatalf("parse %s: %v", body, err)
	}
	return v
}

// problemOf is the problem err names at field, or "".
func problemOf(err error, field string) string {
	var e *marquee.Error
	if !errors.As(err, &e) {
		return ""
	}
	return e.Problems[field]
}

// testCampaigns: advertisers (a name unique among active ones, archived
// only without live campaigns, which frees the name), campaigns (their
// settings kept whole, state changes, an archived one frozen), placements
// (a unique name that cannot change, not deleted while ads are limited to
// it), and what ads name of them checked in the store's transaction; each
// change in the changelog.
func testCampaigns(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	seq, _ := st.LastSeq(ctx)

	acme, err := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Acme", Notes: "since 2020"})
	if err != nil || acme.ID == 0 || acme.State != marquee.StateActive {
		t.Fatalf("CreateAdvertiser = %+v, %v", acme, err)
	}
	if _, err := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Acme"}); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("a second active Acme = %v; want a conflict", err)
	}
	globex, _ := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Globex"})
	if _, err := st.ReplaceAdvertiser(ctx, globex.ID, marquee.AdvertiserInput{Name: "Acme"}); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("renaming Globex to Acme = %v; want a conflict", err)
	}
	if a, err := st.ReplaceAdvertiser(ctx, globex.ID, marquee.AdvertiserInput{Name: "Globex Corp", Notes: "n"}); err != nil || a.Name != "Globex Corp" {
		t.Fatalf("ReplaceAdvertiser = %+v, %v", a, err)
	}
	if got, err := st.Advertiser(ctx, acme.ID); err != nil || got.Name != "Acme" || got.Notes != "since 2020" {
		t.Fatalf("Advertiser = %+v, %v", got, err)
	}
	if _, err := st.Advertiser(ctx, 999); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("Advertiser(999) = %v; want not found", err)
	}
	if list, total, err := st.ListAdvertisers(ctx, marquee.ListFilter{Query: "glo", Limit: 10}); err != nil || total != 1 || list[0].ID != globex.ID {
		t.Fatalf("ListAdvertisers(glo) = %+v, %d, %v", list, total, err)
	}

	body := `{"advertiserId":"` + itoa(acme.ID) + `","name":"Spring","startAt":"2026-01-01T00:00:00Z","endAt":"2031-01-01T00:00:00Z",
		"priority":"sponsorship","weight":30,"goal":{"metric":"clicks","total":5000,"daily":100},"frequencyCap":{"count":3,"window":"24h"},
		"price":{"model":"cpm","amount":2.5},"conditions":[{"country":["TW"]}],"keywords":["Sports","news"]}`
	in := mustParse(t, marquee.ParseCampaignInput, body)
	spring, err := st.CreateCampaign(ctx, in, marquee.StateDraft)
	if err != nil || spring.State != marquee.StateDraft {
		t.Fatalf("CreateCampaign(draft) = %+v, %v", spring, err)
	}
	// Approval: a draft is submitted, rejected with a reason (back to
	// draft), submitted again and approved, each step a review by the
	// audit's actor; a move its state does not allow is a conflict.
	as := marquee.WithAudit(ctx, marquee.Audit{Actor: "user:7 ops@example.com"})
	for _, step := range []struct {
		action, reason, state string
	}{{"reject", "", ""}, {"submit", "", marquee.StatePending}, {"submit", "", marquee.StatePending}, {"reject", "no logo", marquee.StateDraft},
		{"resume", "", ""}, {"submit", "", marquee.StatePending}, {"approve", "", marquee.StateActive}, {"submit", "", ""}} {
		c, err := st.MoveCampaign(as, spring.ID, step.action, step.reason)
		if step.state == "" {
			if marquee.KindOf(err) != marquee.KindConflict {
				t.Fatalf("%s of a campaign that is %s = %v; want a conflict", step.action, c.State, err)
			}
			continue
		}
		if err != nil || c.State != step.state || c.Review == nil || c.Review.By != "user:7 ops@example.com" || c.Review.Reason != step.reason {
			t.Fatalf("%s = %+v (review %+v), %v; want %s with a review by user 7", step.action, c, c.Review, err, step.state)
		}
		spring = c
	}
	got, err := st.Campaign(ctx, spring.ID)
	if err != nil || !reflect.DeepEqual(got, spring) {
		t.Fatalf("Campaign = %+v, %v;\nwant %+v", got, err, spring)
	}
	j, _ := json.Marshal(got)
	for _, want := range []string{`"goal":{"metric":"clicks","total":5000,"daily":100}`, `"pacing":"even"`, `"frequencyCap":{"count":3,"window":"24h"}`,
		`"price":{"model":"cpm","amount":2.5}`, `"keywords":["sports","news"]`, `"state":"active"`, `"priority":"sponsorship"`, `"weight":30`} {
		if !strings.Contains(string(j), want) {
			t.Errorf("campaign JSON %s lacks %s", j, want)
		}
	}
	if _, err := st.CreateCampaign(ctx, withAdvertiser(in, 999), marquee.StateDraft); problemOf(err, "advertiserId") != "no advertiser 999" {
		t.Fatalf("a campaign of advertiser 999 = %v; want 400 naming advertiserId", err)
	}
	if c, err := st.MoveCampaign(ctx, spring.ID, marquee.ActionPause, ""); err != nil || c.State != marquee.StatePaused {
		t.Fatalf("pause = %+v, %v", c, err)
	}
	if list, total, err := st.ListCampaigns(ctx, marquee.ListFilter{Parent: acme.ID, State: marquee.StatePaused, Limit: 10}); err != nil || total != 1 || list[0].ID != spring.ID {
		t.Fatalf("ListCampaigns(acme, paused) = %+v, %d, %v", list, total, err)
	}
	if live, err := st.LiveCampaigns(ctx); err != nil || !slices.ContainsFunc(live, func(c marquee.Campaign) bool { return c.ID == spring.ID && c.State == marquee.StatePaused }) {
		t.Fatalf("LiveCampaigns = %+v, %v; want the paused campaign %d among them", live, err, spring.ID)
	}
	if err := st.ArchiveAdvertiser(ctx, acme.ID); marquee.KindOf(err) != marquee.KindConflict || !strings.Contains(err.Error(), itoa(spring.ID)) {
		t.Fatalf("archiving Acme with a paused campaign = %v; want a conflict naming it", err)
	}

	// Ads name a campaign, a creative and placements; the store checks them.
	home, err := st.CreatePlacement(ctx, mustParse(t, marquee.ParsePlacementInput, `{"name":"home-top","site":"example.com","sizes":["300x250"]}`))
	if err != nil || home.Types == nil {
		t.Fatalf("CreatePlacement = %+v, %v", home, err)
	}
	if _, err := st.CreatePlacement(ctx, marquee.PlacementInput{Name: "home-top", Types: marquee.CreativeTypes}); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("a second home-top = %v; want a conflict", err)
	}
	// A floor for header-bidding bids is kept to the micro-unit.
	// So is its declared volume (forecasts before history).
	floored := mustParse(t, marquee.ParsePlacementInput, `{"name":"floored","floor":"1.234567","expectedDailyRequests":250000}`)
	if _, err := st.CreatePlacement(ctx, floored); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Placement(ctx, "floored"); err != nil || got.Floor != 1_234_567 || got.ExpectedDailyRequests != 250_000 {
		t.Fatalf("Placement(floored) = %+v, %v; want a floor of 1.234567, 250,000 requests a day", got, err)
	}
	floored.Floor, floored.ExpectedDailyRequests = 0, 1000
	if got, err := st.ReplacePlacement(ctx, "floored", floored); err != nil || got.Floor != 0 {
		t.Fatalf("ReplacePlacement(floor 0) = %+v, %v", got, err)
	}
	if got, _ := st.Placement(ctx, "floored"); got.Floor != 0 || got.ExpectedDailyRequests != 1000 {
		t.Fatalf("after the floor was removed: %v, %d a day; want 0, 1,000", got.Floor, got.ExpectedDailyRequests)
	}
	ad := input("with a campaign", -time.Hour, time.Hour)
	ad.CampaignID, ad.Placements = spring.ID, []string{"home-top", "nowhere"}
	ad.Creative = &marquee.Creative{Type: marquee.CreativeHTML, Width: 300, Height: 250, HTML: "<b>hi</b>"}
	if _, err := st.CreateAd(ctx, ad); problemOf(err, "placements[1]") != `no placement "nowhere"` {
		t.Fatalf("an ad in placement nowhere = %v; want 400 naming placements[1]", err)
	}
	ad.Placements = []string{"home-top"}
	made, err := st.CreateAd(ctx, ad)
	if err != nil {
		t.Fatal(err)
	}
	// A creative without a click URL is saved, with a warning on the
	// answer only (never stored).
	if made.Warnings["creative.clickUrl"] == "" {
		t.Errorf("an ad whose creative has no click URL: warnings %v; want creative.clickUrl", made.Warnings)
	}
	made.Warnings = nil
	if got, err := st.Ad(ctx, made.ID); err != nil || !reflect.DeepEqual(got, made) {
		t.Fatalf("Ad = %+v, %v;\nwant %+v", got, err, made)
	}
	// An advertiser's creative waits for approval: rejected with a reason,
	// then approved; a move its state does not allow is a conflict.
	submitted, err := st.CreateAdAs(ctx, ad, marquee.StatePending)
	if err != nil || submitted.State != marquee.StatePending {
		t.Fatalf("CreateAdAs(pending) = %+v, %v", submitted, err)
	}
	for _, step := range []struct{ action, reason, state string }{{"reject", "too loud", marquee.StateDraft}, {"reject", "", ""},
		{"approve", "", marquee.StateActive}, {"approve", "", marquee.StateActive}} {
		a, err := st.MoveAd(as, submitted.ID, step.action, step.reason)
		if step.state == "" {
			if marquee.KindOf(err) != marquee.KindConflict {
				t.Fatalf("%s of an ad that is %s = %v; want a conflict", step.action, a.State, err)
			}
			continue
		}
		got, _ := st.Ad(ctx, submitted.ID)
		if err != nil || a.State != step.state || got.State != step.state || got.Review == nil || got.Review.By != "user:7 ops@example.com" {
			t.Fatalf("%s = %+v, %v (stored %+v %+v); want %s", step.action, a, err, got, got.Review, step.state)
		}
	}
	if _, err := st.ReplaceAdAs(ctx, submitted.ID, ad, marquee.StatePending); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Ad(ctx, submitted.ID); got.State != marquee.StatePending {
		t.Fatalf("an approved ad its advertiser changed is %s; want pending again", got.State)
	}
	// A paused ad stays paused when the team changes it.
	st.MoveAd(as, submitted.ID, "approve", "")
	if a, err := st.MoveAd(as, submitted.ID, "pause", ""); err != nil || a.State != marquee.StatePaused {
		t.Fatalf("pause = %+v, %v", a, err)
	}
	if a, err := st.ReplaceAd(ctx, submitted.ID, ad); err != nil || a.State != marquee.StatePaused {
		t.Fatalf("the team's change of a paused ad = %+v, %v; want it paused still", a, err)
	}
	if err := st.DeleteAd(ctx, submitted.ID); err != nil {
		t.Fatal(err)
	}
	if page, total, err := st.ListAds(ctx, marquee.AdFilter{CampaignID: spring.ID, State: marquee.AdsActive, Now: now, Limit: 10}); err != nil || total != 1 || page[0].ID != made.ID {
		t.Fatalf("ListAds(campaign %d) = %+v, %d, %v; want ad %d", spring.ID, page, total, err, made.ID)
	}
	if err := st.DeletePlacement(ctx, "home-top"); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("deleting home-top while ad %d is limited to it = %v; want a conflict", made.ID, err)
	}
	if _, err := st.ReplacePlacement(ctx, "home-top", marquee.PlacementInput{Name: "home-2", Types: marquee.CreativeTypes}); problemOf(err, "name") == "" {
		t.Fatalf("renaming a placement = %v; want 400 naming name", err)
	}
	if p, err := st.ReplacePlacement(ctx, "home-top", marquee.PlacementInput{Name: "home-top", Site: "s", Sizes: []string{"728x90"},
		Types: []string{"image"}, DefaultAdID: made.ID}); err != nil || p.DefaultAdID != made.ID || p.Sizes[0] != "728x90" {
		t.Fatalf("ReplacePlacement = %+v, %v", p, err)
	}

	// Archived: a campaign cannot change, nor take new ads; the advertiser
	// then archives and frees its name.
	if c, err := st.MoveCampaign(ctx, spring.ID, marquee.ActionArchive, ""); err != nil || c.State != marquee.StateArchived {
		t.Fatalf("archive = %+v, %v", c, err)
	}
	if live, err := st.LiveCampaigns(ctx); err != nil || slices.ContainsFunc(live, func(c marquee.Campaign) bool { return c.ID == spring.ID }) {
		t.Fatalf("LiveCampaigns = %+v, %v; want no archived campaign %d", live, err, spring.ID)
	}
	if _, err := st.MoveCampaign(ctx, spring.ID, marquee.ActionResume, ""); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("resuming an archived campaign = %v; want a conflict", err)
	}
	if _, err := st.ReplaceCampaign(ctx, spring.ID, in); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("replacing an archived campaign = %v; want a conflict", err)
	}
	if _, err := st.ReplaceAd(ctx, made.ID, ad); problemOf(err, "campaignId") == "" {
		t.Fatalf("an ad in an archived campaign = %v; want 400 naming campaignId", err)
	}
	if err := st.ArchiveAdvertiser(ctx, acme.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateCampaign(ctx, withAdvertiser(in, acme.ID), marquee.StateDraft); problemOf(err, "advertiserId") == "" {
		t.Fatalf("a campaign of an archived advertiser = %v; want 400 naming advertiserId", err)
	}
	if _, err := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Acme"}); err != nil {
		t.Fatalf("a new Acme after the old one was archived = %v", err)
	}
	// A bulk insert (seeding) keeps what an ad names, as a create does.
	bulk := ad
	bulk.Title = "bulk"
	if err := st.InsertAds(ctx, []marquee.AdInput{bulk}, func() {}); err != nil {
		t.Fatal(err)
	}
	if page, _, err := st.ListAds(ctx, marquee.AdFilter{Query: "bulk", Now: now, Limit: 1}); err != nil || len(page) != 1 ||
		page[0].CampaignID != spring.ID || !reflect.DeepEqual(page[0].Creative, ad.Creative) || !reflect.DeepEqual(page[0].Placements, ad.Placements) {
		t.Fatalf("the bulk-inserted ad = %+v, %v; want its campaign, creative and placements", page, err)
	} else if err := st.DeleteAd(ctx, page[0].ID); err != nil {
		t.Fatal(err)
	}
	ad.CampaignID, ad.Placements = 0, nil
	if _, err := st.ReplaceAd(ctx, made.ID, ad); err != nil {
		t.Fatal(err)
	}
	if err := st.DeletePlacement(ctx, "home-top"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Placement(ctx, "home-top"); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("Placement after delete = %v", err)
	}

	var kinds []string
	for _, c := range changesSince(t, st, seq) {
		if e, _, _ := strings.Cut(c, " "); e != marquee.EntityAd {
			kinds = append(kinds, c)
		}
	}
	// Campaign puts: its creation, four moves of its approval (a repeated
	// submit changes nothing), a pause.
	want := []string{"advertiser put ", "advertiser put ", "advertiser put ", "campaign put ", "campaign put ", "campaign put ", "campaign put ",
		"campaign put ", "campaign put ", "placement put home-top", "placement put floored", "placement put floored",
		"placement put home-top", "campaign put ", "advertiser put ", "advertiser put ", " reload ", "placement delete home-top"} // reload: the bulk insert
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("changelog = %q;\nwant %q", kinds, want)
	}
}

func withAdvertiser(in marquee.CampaignInput, id int64) marquee.CampaignInput {
	in.AdvertiserID = id
	return in
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// testAssets: an image is stored once under its SHA-256 and read back
// byte for byte; an unknown one is not found.
func testAssets(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	body := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 300_000)...) // large enough to need a large blob
	body[len(body)-1] = 7
	a := marquee.Asset{SHA: strings.Repeat("ab", 32), Type: "image/png", Width: 300, Height: 250, Size: int64(len(body))}
	if got, created, err := st.PutAsset(ctx, a, body); err != nil || !created || got.SHA != a.SHA {
		t.Fatalf("PutAsset = %+v, %v, %v; want created", got, created, err)
	}
	if _, created, err := st.PutAsset(ctx, a, body); err != nil || created {
		t.Fatalf("PutAsset again = %v, %v; want stored before", created, err)
	}
	got, b, err := st.Asset(ctx, a.SHA)
	if err != nil || got.Type != a.Type || got.Width != 300 || got.Height != 250 || got.Size != a.Size || !bytes.Equal(b, body) {
		t.Fatalf("Asset = %+v, %d bytes, %v; want the stored image", got, len(b), err)
	}
	if _, _, err := st.Asset(ctx, strings.Repeat("cd", 32)); marquee.KindOf(err) != marquee.KindNotFound {
		t.Fatalf("Asset(unknown) = %v; want not found", err)
	}
}

// testAdBreaks: a video placement's ad rules and longest ad round-trip,
// and a replace without them drops them.
func testAdBreaks(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	ep, err := st.CreatePlacement(ctx, mustParse(t, marquee.ParsePlacementInput, `{"name":"episode","types":["video"],"maxDurationMs":30000,"adBreaks":[{"offset":"start","ads":1},{"offset":"50%","ads":3,"maxDurationMs":60000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Placement(ctx, ep.Name); err != nil || len(got.AdBreaks) != 2 || got.AdBreaks[1] != (marquee.AdBreak{Offset: "50%", Ads: 3, MaxDurationMs: 60_000}) || got.MaxDurationMs != 30_000 {
		t.Errorf("Placement(episode) = breaks %+v, longest ad %d ms, %v; want start×1, 50%%×3 of at most 60,000 ms, ads of at most 30,000 ms", got.AdBreaks, got.MaxDurationMs, err)
	}
	if _, err := st.ReplacePlacement(ctx, "episode", marquee.PlacementInput{Name: "episode", Types: []string{"video"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Placement(ctx, ep.Name); len(got.AdBreaks) != 0 || got.MaxDurationMs != 0 {
		t.Errorf("after a replace without ad breaks: %+v, longest ad %d ms; want none, 0", got.AdBreaks, got.MaxDurationMs)
	}
}

// testUnapprovedLimit: an advertiser may hold marquee.MaxUnapproved
// campaigns in draft or pending; one more is a conflict, until one is
// archived; approved campaigns (a seed's, made active) and another
// advertiser's drafts do not count.
func testUnapprovedLimit(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	acme, err := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	in := func(adv int64, name string) marquee.CampaignInput {
		return marquee.CampaignInput{AdvertiserID: adv, Name: name, StartAt: now, EndAt: now.Add(time.Hour), Priority: marquee.PriorityStandard, Weight: 1, Pacing: marquee.PacingASAP}
	}
	var first marquee.Campaign
	for i := range marquee.MaxUnapproved {
		state := marquee.StateDraft
		if i%2 == 1 {
			state = marquee.StatePending
		}
		c, err := st.CreateCampaign(ctx, in(acme.ID, fmt.Sprint("draft ", i)), state)
		if err != nil {
			t.Fatalf("draft %d: %v", i, err)
		}
		if i == 0 {
			first = c
		}
	}
	if _, err := st.CreateCampaign(ctx, in(acme.ID, "one more"), marquee.StateDraft); marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("draft %d = %v; want a conflict", marquee.MaxUnapproved+1, err)
	}
	if _, err := st.CreateCampaign(ctx, in(acme.ID, "seeded"), marquee.StateActive); err != nil {
		t.Errorf("an active campaign past the drafts' limit = %v; want it made", err)
	}
	if _, err := st.CreateCampaign(ctx, in(other.ID, "other's"), marquee.StateDraft); err != nil {
		t.Errorf("another advertiser's draft = %v; want it made", err)
	}
	if _, err := st.MoveCampaign(ctx, first.ID, marquee.ActionArchive, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateCampaign(ctx, in(acme.ID, "one more"), marquee.StateDraft); err != nil {
		t.Errorf("a draft after one was archived = %v; want it made", err)
	}
}
