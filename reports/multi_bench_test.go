package reports_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"marquee"
	"marquee/reportrow"
	"marquee/reports"
	"marquee/store"
	"marquee/store/postgres"
	"marquee/store/postgres/pgtest"
	"marquee/store/storetest"
)

// benchCatalog is the catalog of BenchmarkMultiReport: 200 campaigns of
// 20 advertisers, 5 ads each, on 50 placements of 5 sites — each
// campaign's ads on 5 of them.
const (
	benchCampaigns  = 200
	benchAds        = 5
	benchPlacements = 50
	benchPerCamp    = 5 // placements a campaign's ads run on
	benchDays       = 90
)

// fillCube writes what 10 million events (MARQUEE_BENCH_EVENTS to change
// it) over 90 days make of the cube — spread over the campaigns, their
// ads and placements, 10 countries and 3 device types, counted by the
// instances of slots — as a Tally's flushes would, a day at a time: a
// day of 111,000 events touches nearly every (ad, placement) the
// campaigns run on. It returns the rows of the campaign × placement
// grain (what a report that is not by ad reads).
func fillCube(b *testing.B, st store.Store, end time.Time, slots []string) (rows int) {
	events := 10_000_000
	if v := os.Getenv("MARQUEE_BENCH_EVENTS"); v != "" {
		events, _ = strconv.Atoi(v)
	}
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(1, 2))
	countries := []string{"US", "GB", "DE", "FR", "TW", "JP", "BR", "IN", "CA", "AU"}
	devices := []string{"desktop", "phone", "tablet"}
	perDay := events / benchDays
	for d := range benchDays {
		day := end.Add(time.Duration(d-benchDays) * 24 * time.Hour).Unix()
		for _, slot := range slots {
			entity := map[[3]int64]*reportrow.Counts{}
			geo := map[[5]int64]*reportrow.Counts{}
			for range perDay / len(slots) {
				c := rnd.IntN(benchCampaigns)
				ad := int64(c*benchAds + rnd.IntN(benchAds) + 1)
				pl := int64((c*7+rnd.IntN(benchPerCamp))%benchPlacements + 1)
				k := [3]int64{int64(c + 1), pl, ad}
				if entity[k] == nil {
					entity[k] = &reportrow.Counts{}
				}
				cnt := entity[k]
				cnt.Impressions++
				click := rnd.IntN(100) == 0
				if click {
					cnt.Clicks++
				}
				gk := [5]int64{k[0], k[1], k[2], int64(rnd.IntN(len(countries))), int64(rnd.IntN(len(devices)))}
				if geo[gk] == nil {
					geo[gk] = &reportrow.Counts{}
				}
				geo[gk].Impressions++
				if click {
					geo[gk].Clicks++
				}
			}
			batch := &reportrow.Batch{Slot: slot}
			for k, c := range entity {
				batch.Cube = append(batch.Cube, reportrow.CubeRow{Grain: reportrow.GrainEntity, Day: day, Campaign: k[0], Placement: k[1], Ad: k[2], Counts: *c})
			}
			cp := map[[2]int64]*reportrow.Counts{}
			for k, c := range entity {
				if cp[[2]int64{k[0], k[1]}] == nil {
					cp[[2]int64{k[0], k[1]}] = &reportrow.Counts{}
				}
				cp[[2]int64{k[0], k[1]}].Add(*c)
			}
			for k, c := range cp {
				batch.Cube = append(batch.Cube, reportrow.CubeRow{Grain: reportrow.GrainCP, Day: day, Campaign: k[0], Placement: k[1], Counts: *c})
			}
			for k, c := range geo {
				batch.Cube = append(batch.Cube, reportrow.CubeRow{Grain: reportrow.GrainGeo, Day: day, Campaign: k[0], Placement: k[1], Ad: k[2],
					Country: countries[k[3]], Device: devices[k[4]], Counts: *c})
			}
			rows += len(cp)
			if err := st.AddReports(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	return rows
}

// benchCatalogOf names the campaigns (half priced CPM) and placements.
func benchCatalogOf() *reports.Catalog {
	cat := &reports.Catalog{Campaigns: map[int64]*marquee.Campaign{}, Advertisers: map[int64]string{}, Placements: map[int64]*marquee.Placement{}}
	for i := range benchCampaigns {
		c := &marquee.Campaign{ID: int64(i + 1), CampaignInput: marquee.CampaignInput{AdvertiserID: int64(i%20 + 1), Name: fmt.Sprintf("campaign %d", i+1)}}
		if i%2 == 0 {
			c.Price = &marquee.Price{Model: "cpm", Amount: 2_500_000}
		}
		cat.Campaigns[c.ID] = c
	}
	for i := range 20 {
		cat.Advertisers[int64(i+1)] = fmt.Sprintf("advertiser %d", i+1)
	}
	for i := range benchPlacements {
		cat.Placements[int64(i+1)] = &marquee.Placement{ID: int64(i + 1), PlacementInput: marquee.PlacementInput{Name: fmt.Sprintf("p%d", i+1), Site: fmt.Sprintf("site%d", i%5)}}
	}
	return cat
}

// BenchmarkMultiReport answers the 90-day report by campaign × placement
// × day (and by advertiser × site × country) over 10 million events'
// cube rows (one instance's on SQLite, two instances' on the servers), on
// SQLite, and on MariaDB and PostgreSQL when
// MARQUEE_TEST_MYSQL and MARQUEE_TEST_POSTGRES are set; it reports the
// p99 of the runs and the rows read.
//
//	go test ./reports -run XXX -bench MultiReport -benchtime 100x
func BenchmarkMultiReport(b *testing.B) {
	type backend struct {
		name  string
		slots []string // the instances counting: one on SQLite (an embedded store), two on a server's
		open  func(b *testing.B) store.Store
	}
	var backends []backend
	for _, be := range storetest.Backends {
		slots := []string{"a", "b"}
		if be.Name == "sqlite" {
			slots = slots[:1]
		}
		backends = append(backends, backend{be.Name, slots, func(b *testing.B) store.Store { return be.OpenStore(b, be.NewDB(b)) }})
	}
	backends = append(backends, backend{"postgres", []string{"a", "b"}, func(b *testing.B) store.Store {
		st, err := postgres.Open(context.Background(), pgtest.DSN(b))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}})
	end := time.Now().UTC().Truncate(24 * time.Hour)
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			st := be.open(b)
			rows := fillCube(b, st, end, be.slots)
			rp := reports.NewReporter(st, 90*24*time.Hour)
			cat := benchCatalogOf()
			for _, q := range []struct {
				name string
				by   []string
			}{{"campaign×placement×day", []string{reports.DimCampaign, reports.DimPlacement}}, {"advertiser×site×country", []string{reports.DimAdvertiser, reports.DimSite, reports.DimCountry}}} {
				b.Run(q.name, func(b *testing.B) {
					mq := reports.MultiQuery{By: q.by, From: end.Add(-benchDays * 24 * time.Hour), To: end, Granularity: reports.Day, Loc: time.UTC, Limit: 1_000_000}
					if len(q.by) == 3 {
						mq.Granularity = reports.Total
					}
					if p := rp.CheckMulti(&mq); len(p) > 0 {
						b.Fatal(p)
					}
					var took []time.Duration
					var out int
					for b.Loop() {
						t0 := time.Now()
						rep, err := rp.Multi(context.Background(), mq, cat)
						if err != nil {
							b.Fatal(err)
						}
						took, out = append(took, time.Since(t0)), len(rep.Rows)
					}
					slices.Sort(took)
					b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
					b.ReportMetric(float64(rows), "cube-rows")
					b.ReportMetric(float64(out), "report-rows")
				})
			}
		})
	}
}
