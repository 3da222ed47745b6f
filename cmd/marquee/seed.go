package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"marquee"
	"marquee/fixture"
	"marquee/reportrow"
	"marquee/store"
)

func runSeed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("seed", "seed [flags]", "Fills a store with generated ads and links (the same -seed makes the same ones), and with -reports days of hourly reports.", stderr)
	data := fs.String("data", "./data", "data directory")
	db := fs.String("db", "", dbUsage)
	n := fs.Int("ads", 1000, "how many ads to add; none unless given when -links is set")
	links := fs.Int("links", 0, "how many links to add, with codes fixture.Code(i) for i from -links-from (see package fixture)")
	linksFrom := fs.Int64("links-from", 0, "number of the first seeded link (seed more links with a higher one)")
	linkRules := fs.Bool("link-rules", false, "give every seeded link 5 redirect rules and 2 weighted destinations (fixture.RuledLink)")
	seed := fs.Uint64("seed", 1, "random seed: the same seed makes the same ads")
	batch := fs.Int("batch", 20_000, "ads per transaction")
	scheduled := fs.Float64("scheduled", 0.05, "fraction of ads that start in the future")
	expired := fs.Float64("expired", 0.05, "fraction of ads that have already ended")
	reportDays := fs.Int("reports", 0, "fill this many days of hourly reports, up to the current hour, for every ad and link in the store")
	campaigns := fs.Int("campaigns", 0, "make this many campaigns (of -campaigns/10 advertisers) and the placements of package fixture, and put the ads in them with creatives")
	capAll := fs.String("cap-campaigns", "", "cap every seeded campaign at COUNT/WINDOW (5/24h: 5 serves a user a day); default: a third of them, at random")
	targeted := fs.String("targeting", "", "give every seeded campaign a targeting tree: rules (six rules: sections, position, regions, devices, a day-part, a score) or sections (campaign i: section s<i> alone); default none")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	adsSet := false
	fs.Visit(func(f *flag.Flag) { adsSet = adsSet || f.Name == "ads" })
	if *links > 0 && !adsSet {
		*n = 0
	}
	if *n < 0 || *links < 0 || *linksFrom < 0 || *batch < 1 || *campaigns < 0 {
		return fmt.Errorf("-ads, -links, -links-from and -campaigns must be ≥ 0 and -batch ≥ 1")
	}
	if *targeted != "" && *targeted != fixture.TargetingRules && *targeted != fixture.TargetingSections {
		return fmt.Errorf("-targeting %q: want rules or sections", *targeted)
	}
	if *scheduled < 0 || *expired < 0 || *scheduled+*expired > 1 {
		return fmt.Errorf("-scheduled and -expired must be fractions summing to at most 1")
	}
	*db = dataDB(*data, *db)
	st, err := openStore(ctx, *db, jsonLog(stderr))
	if err != nil {
		return err
	}
	defer st.Close()

	var fc *marquee.FrequencyCap
	if *capAll != "" {
		count, window, _ := strings.Cut(*capAll, "/")
		n, err := strconv.Atoi(count)
		if fc = (&marquee.FrequencyCap{Count: n, Window: window}); err != nil || n < 1 || n > marquee.MaxCapCount || !slices.Contains(marquee.CapWindows, window) {
			return fmt.Errorf("-cap-campaigns %q: want COUNT/WINDOW, a count from 1 to %d and a window of %s", *capAll, marquee.MaxCapCount, strings.Join(marquee.CapWindows, ", "))
		}
	}
	out := seedOutput{stdout: stdout, stderr: stderr, db: redact(*db)}
	campaignIDs, err := seedCampaigns(ctx, out, st, *seed, *campaigns, fc, *targeted)
	if err != nil {
		return err
	}
	gen := fixture.NewAdGen(*seed, time.Now(), *scheduled, *expired)
	err = seedBatches(ctx, out, "ads", *n, *batch, func(i int) (marquee.AdInput, error) {
		in := gen.Next()
		if len(campaignIDs) > 0 {
			in.CampaignID = campaignIDs[i%len(campaignIDs)]
			in.Creative, in.Placements = fixture.Creative(i)
		}
		return in, in.Validate()
	}, st.InsertAds)
	if err != nil {
		return err
	}
	err = seedBatches(ctx, out, "links", *links, *batch, func(i int) (marquee.LinkInput, error) {
		in := fixture.Link(*linksFrom + int64(i))
		if *linkRules {
			in = fixture.RuledLink(*linksFrom + int64(i))
		}
		return in, in.Validate()
	}, st.InsertLinks)
	if err != nil || *reportDays <= 0 {
		return err
	}
	return seedReports(ctx, out, st, *seed, *reportDays)
}

// seedCampaigns makes the placements of package fixture (those that
// exist stay), n/10 advertisers (at least one) and n campaigns, each
// capped at fc when it is not nil, and returns the campaigns' ids.
func seedCampaigns(ctx context.Context, out seedOutput, st store.Store, seed uint64, n int, fc *marquee.FrequencyCap, targeted string) ([]int64, error) {
	if n == 0 {
		return nil, nil
	}
	for _, p := range fixture.Placements {
		if _, err := st.CreatePlacement(ctx, p); err != nil && marquee.KindOf(err) != marquee.KindConflict {
			return nil, err
		}
	}
	var advertisers, ids []int64
	err := seedBatches(ctx, out, "advertisers", max(1, n/10), 1, func(i int) (marquee.AdvertiserInput, error) {
		return marquee.AdvertiserInput{Name: fmt.Sprintf("Advertiser %d (seed %d)", i+1, seed)}, nil
	}, func(ctx context.Context, ins []marquee.AdvertiserInput, progress func()) error {
		for _, in := range ins {
			a, err := st.CreateAdvertiser(ctx, in)
			if err != nil {
				return fmt.Errorf("%w (seed again with another -seed)", err)
			}
			advertisers = append(advertisers, a.ID)
			progress()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	gen := fixture.NewCampaignGen(seed, time.Now(), advertisers)
	gen.Targeting = targeted
	err = seedBatches(ctx, out, "campaigns", n, 1, func(int) (marquee.CampaignInput, error) {
		in := gen.Next()
		if fc != nil {
			in.FrequencyCap = fc
		}
		return in, nil
	},
		func(ctx context.Context, ins []marquee.CampaignInput, progress func()) error {
			for _, in := range ins {
				c, err := st.CreateCampaign(ctx, in, marquee.StateActive)
				if err != nil {
					return err
				}
				ids = append(ids, c.ID)
				progress()
			}
			return nil
		})
	return ids, err
}

// seedReports fills days of hourly report rows, and daily reach, for
// every ad and link in st, in slot "seed": an ad's rows only within its
// window and in the countries and platforms its targeting allows. The
// links' click counters get the clicks their rows hold (seeded events are
// no bots'), so that a link's count and its report agree.
func seedReports(ctx context.Context, out seedOutput, st store.Store, seed uint64, days int) error {
	var ads []fixture.Audience
	for off := 0; ; off += 1000 {
		page, _, err := st.ListAds(ctx, marquee.AdFilter{State: marquee.AdsAll, Now: time.Now(), Offset: off, Limit: 1000})
		if err != nil {
			return err
		}
		for i := range page {
			ads = append(ads, fixture.AudienceOf(&page[i]))
		}
		if len(page) < 1000 {
			break
		}
	}
	var links []int64
	codes := map[int64]string{}
	for off := 0; ; off += 1000 {
		page, _, err := st.ListLinks(ctx, off, 1000)
		if err != nil {
			return err
		}
		for _, l := range page {
			links, codes[l.ID] = append(links, l.ID), l.Code
		}
		if len(page) < 1000 {
			break
		}
	}
	gen := fixture.NewReportGen(seed, ads, links)
	gen.Until = time.Now().Unix()
	today := gen.Until / 86400 * 86400
	dayIndex := 0
	clicks := map[int64]int64{}
	err := seedBatches(ctx, out, "days of reports", days, 1, func(int) (*reportrow.Batch, error) {
		day := today - int64(days-1-dayIndex)*86400
		dayIndex++
		return gen.Batch(day)
	}, func(ctx context.Context, bs []*reportrow.Batch, progress func()) error {
		for _, b := range bs {
			if err := st.AddReports(ctx, b); err != nil {
				return err
			}
			for _, r := range b.Rows {
				if r.Entity == marquee.EntityLink {
					clicks[r.ID] += r.Clicks
				}
			}
			progress()
		}
		return nil
	})
	if err != nil || len(clicks) == 0 {
		return err
	}
	counts := make([]marquee.Clicks, 0, len(clicks))
	for id, n := range clicks {
		counts = append(counts, marquee.Clicks{LinkID: id, Code: codes[id], N: n})
	}
	return st.AddClicks(ctx, counts)
}

// seedOutput is where seeding reports: a summary line on stdout, a
// progress bar on stderr when it is a terminal.
type seedOutput struct {
	stdout, stderr io.Writer
	db             string
}

// progressBar is a bar of n steps described as what, drawn on stderr only
// when it is a terminal.
func progressBar(stderr io.Writer, n int, what string) *progressbar.ProgressBar {
	progress := io.Discard
	if isTerminal(stderr) {
		progress = stderr
	}
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(progress), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(progress) }))
}

// seedBatches makes n inputs with next and stores them with insert, batch
// at a time, then reports how many and how long.
func seedBatches[T any](ctx context.Context, out seedOutput, what string, n, batch int,
	next func(i int) (T, error), insert func(context.Context, []T, func()) error) error {
	if n == 0 {
		return nil
	}
	start := time.Now()
	bar := progressBar(out.stderr, n, "seeding "+what)
	for done := 0; done < n; {
		k := min(batch, n-done)
		ins := make([]T, k)
		for i := range ins {
			var err error
			if ins[i], err = next(done + i); err != nil {
				return fmt.Errorf("seeding %s: generated invalid input: %w", what, err)
			}
		}
		if err := insert(ctx, ins, func() { bar.Add(1) }); err != nil {
			return err
		}
		done += k
	}
	bar.Finish()
	fmt.Fprintf(out.stdout, "seeded %d %s into %s in %v\n", n, what, out.db, time.Since(start).Round(time.Millisecond))
	return nil
}
