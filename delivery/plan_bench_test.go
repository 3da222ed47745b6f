package delivery_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"marquee"
	"marquee/counters"
	"marquee/delivery"
	"marquee/fixture"
	"marquee/store/sqlite"
)

// BenchmarkCampaignEdit times what another instance does when one campaign
// of many (MARQUEE_BENCH_CAMPAIGNS, default 10,000, each with one ad)
// changes: before, the
// plan reloaded every campaign and placement from the store ("reload");
// now the feed hands the campaign's id and the engine reads that one row
// and patches the plan ("apply by id"). SQLite in a temporary directory;
// the setup is not timed. MARQUEE_BENCH_TARGETING=rules (or sections)
// gives every campaign a targeting tree (fixture.RulesTree) and the
// catalog fixture's placements, which its ads fit: the plan's lists and
// their targeting filters are built again too.
//
//	go test ./delivery -run XXX -bench CampaignEdit -benchtime 20x
func BenchmarkCampaignEdit(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("MARQUEE_BENCH_CAMPAIGNS")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	adv, err := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Acme"})
	if err != nil {
		b.Fatal(err)
	}
	gen := fixture.NewCampaignGen(1, time.Now(), []int64{adv.ID})
	gen.Targeting = os.Getenv("MARQUEE_BENCH_TARGETING")
	if gen.Targeting != "" {
		for _, p := range fixture.Placements {
			if _, err := st.CreatePlacement(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	}
	var last marquee.Campaign
	var lastAd marquee.Ad
	for range n {
		in := gen.Next()
		in.FrequencyCap = nil
		if last, err = st.CreateCampaign(ctx, in, marquee.StateActive); err != nil {
			b.Fatal(err)
		}
		if lastAd, err = st.CreateAd(ctx, marquee.AdInput{Title: in.Name, StartAt: in.StartAt, EndAt: in.EndAt, CampaignID: last.ID,
			Creative: &marquee.Creative{Type: marquee.CreativeNative, Title: "t", ClickURL: "https://example.com/"}}); err != nil {
			b.Fatal(err)
		}
	}
	e := delivery.New(counters.NewMemory(counters.DefaultMemory))
	if err := e.Load(ctx, st, true); err != nil {
		b.Fatal(err)
	}
	b.Run("reload every campaign (before)", func(b *testing.B) {
		for b.Loop() {
			if err := e.Load(ctx, st, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("apply by id", func(b *testing.B) {
		for b.Loop() {
			if err := e.Apply(ctx, st, []int64{last.ID}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What an instance does when one ad of as many (one a campaign) is
	// written: the feed hands it the ad (PutAds).
	b.Run("an ad's edit", func(b *testing.B) {
		for b.Loop() {
			e.PutAds([]*marquee.Ad{&lastAd}, nil, false)
		}
	})
}
