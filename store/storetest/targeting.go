package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"marquee"
)

// targetingTree is a tree with every kind of node and rule.
const targetingTree = `{"all":[
	{"key":"section","in":["sports","news"]},
	{"any":[{"key":"$device","in":["phone","tablet"]},{"not":{"key":"pos","exists":true}}]},
	{"key":"score","gte":2.5,"lte":10},
	{"key":"$path","glob":["/sports/*"]},{"key":"$path","prefix":["/a/"]},
	{"key":"$ip","notIn":["10.0.0.0/8"]},
	{"key":"tags","absent":true},
	{"dayPart":{"days":["mon","fri"],"from":"22:00","to":"02:00"}}]}`

// testTargeting: a campaign's targeting tree and time zone, and an ad's
// tree, come back from the store as written — by id, in lists, and in
// what delivery loads — and a replace without one clears it.
func testTargeting(t *testing.T, open Opener) {
	ctx := context.Background()
	st, _ := open(t)
	adv, err := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Targeted"})
	if err != nil {
		t.Fatal(err)
	}
	in := mustParse(t, marquee.ParseCampaignInput, `{"advertiserId":"`+itoa(adv.ID)+`","name":"T","startAt":"2026-01-01T00:00:00Z",
		"endAt":"2031-01-01T00:00:00Z","timeZone":"America/New_York","targeting":`+targetingTree+`}`)
	c, err := st.CreateCampaign(ctx, in, marquee.StateActive)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Campaign(ctx, c.ID); err != nil || !reflect.DeepEqual(got.Targeting, in.Targeting) || got.TimeZone != "America/New_York" {
		t.Fatalf("Campaign(%d).Targeting = %+v, %q, %v; want %+v, America/New_York", c.ID, got.Targeting, got.TimeZone, err, in.Targeting)
	}
	list, _, err := st.ListCampaigns(ctx, marquee.ListFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		if l.ID == c.ID && !reflect.DeepEqual(l.Targeting, in.Targeting) {
			t.Errorf("ListCampaigns: targeting %+v; want %+v", l.Targeting, in.Targeting)
		}
	}
	ain := mustParse(t, marquee.ParseAdInput, `{"title":"t","startAt":"2026-01-01T00:00:00Z","endAt":"2031-01-01T00:00:00Z",
		"campaignId":"`+itoa(c.ID)+`","targeting":`+targetingTree+`}`)
	a, err := st.CreateAd(ctx, ain)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Ad(ctx, a.ID); err != nil || !reflect.DeepEqual(got.Targeting, ain.Targeting) {
		t.Fatalf("Ad(%d).Targeting = %+v, %v; want %+v", a.ID, got.Targeting, err, ain.Targeting)
	}
	found := false
	err = st.EachCampaignAd(ctx, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), func(got *marquee.Ad) error {
		if got.ID == a.ID {
			found = true
			if !reflect.DeepEqual(got.Targeting, ain.Targeting) {
				t.Errorf("EachCampaignAd: targeting %+v; want %+v", got.Targeting, ain.Targeting)
			}
		}
		return nil
	})
	if err != nil || !found {
		t.Fatalf("EachCampaignAd = %v; found the ad: %v", err, found)
	}
	ain.Targeting = nil
	if _, err := st.ReplaceAd(ctx, a.ID, ain); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Ad(ctx, a.ID); err != nil || got.Targeting != nil {
		t.Fatalf("Ad(%d) replaced without targeting = %+v, %v; want none", a.ID, got.Targeting, err)
	}
	in.Targeting, in.TimeZone = nil, ""
	if got, err := st.ReplaceCampaign(ctx, c.ID, in); err != nil || got.Targeting != nil || got.TimeZone != "" {
		t.Fatalf("ReplaceCampaign without targeting = %+v, %v; want none", got, err)
	}
}
