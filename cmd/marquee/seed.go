package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"

	"marquee"
	"marquee/loadgen"
)

func runSeed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "./data", "data directory")
	db := fs.String("db", "", "SQLite file (default <data>/marquee.db) or a postgres:// URL")
	n := fs.Int("ads", 1000, "how many ads to add")
	seed := fs.Uint64("seed", 1, "random seed: the same seed makes the same ads")
	batch := fs.Int("batch", 20_000, "ads per transaction")
	scheduled := fs.Float64("scheduled", 0.05, "fraction of ads that start in the future")
	expired := fs.Float64("expired", 0.05, "fraction of ads that have already ended")
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if *n < 0 || *batch < 1 {
		return fmt.Errorf("-ads must be ≥ 0 and -batch ≥ 1")
	}
	if *scheduled < 0 || *expired < 0 || *scheduled+*expired > 1 {
		return fmt.Errorf("-scheduled and -expired must be fractions summing to at most 1")
	}
	if *db == "" {
		*db = filepath.Join(*data, "marquee.db")
	}
	st, err := openStore(ctx, *db)
	if err != nil {
		return err
	}
	defer st.Close()

	progress := io.Discard // a progress bar only on a terminal
	if isTerminal(stderr) {
		progress = stderr
	}
	bar := progressbar.NewOptions(*n, progressbar.OptionSetWriter(progress), progressbar.OptionSetDescription("seeding ads"),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(progress) }))
	gen := newAdGen(*seed, time.Now(), *scheduled, *expired)
	start := time.Now()
	for done := 0; done < *n; {
		k := min(*batch, *n-done)
		ins := make([]marquee.AdInput, k)
		for i := range ins {
			ins[i] = gen.next()
			if err := ins[i].Validate(); err != nil {
				return fmt.Errorf("generated an invalid ad: %w", err)
			}
		}
		if err := st.InsertAds(ctx, ins, func() { bar.Add(1) }); err != nil {
			return err
		}
		done += k
	}
	bar.Finish()
	fmt.Fprintf(stdout, "seeded %d ads into %s in %v\n", *n, redact(*db), time.Since(start).Round(time.Millisecond))
	return nil
}

// adGen makes realistic ads deterministically from a seed, around an
// instant: about half with an age range, random subsets of common
// countries, platforms and genders, and windows such that the given
// fractions are scheduled or expired at that instant and the rest are
// active for at least an hour more.
type adGen struct {
	r                  *rand.Rand
	now                time.Time
	scheduled, expired float64
	n                  int
}

func newAdGen(seed uint64, now time.Time, scheduled, expired float64) *adGen {
	return &adGen{r: rand.New(rand.NewPCG(seed, 0x6d61727175656521)), now: now.UTC(), scheduled: scheduled, expired: expired}
}

func (g *adGen) next() marquee.AdInput {
	r := g.r
	g.n++
	day := 24 * time.Hour
	in := marquee.AdInput{Title: fmt.Sprintf("AD %d", g.n)}
	switch x := r.Float64(); {
	case x < g.scheduled:
		in.StartAt = g.now.Add(time.Duration(1+r.IntN(7*24*60)) * time.Minute)
		in.EndAt = in.StartAt.Add(time.Duration(60+r.IntN(60*24*60)) * time.Minute)
	case x < g.scheduled+g.expired:
		in.StartAt = g.now.Add(-time.Duration(31+r.IntN(30)) * day)
		in.EndAt = g.now.Add(-time.Duration(1+r.IntN(30*24*60)) * time.Minute)
	default:
		in.StartAt = g.now.Add(-time.Duration(1+r.IntN(30*24*60)) * time.Minute)
		in.EndAt = g.now.Add(time.Duration(60+r.IntN(60*24*60)) * time.Minute)
	}
	for range r.IntN(3) { // 0, 1 or 2 condition objects
		var c marquee.Condition
		if r.IntN(2) == 0 {
			c.AgeStart = 13 + r.IntN(40)
			c.AgeEnd = c.AgeStart + 5 + r.IntN(30)
		}
		c.Gender = pick(r, marquee.Genders, 3)
		c.Country = pick(r, loadgen.CommonCountries, 2)
		c.Platform = pick(r, marquee.Platforms, 2)
		in.Conditions = append(in.Conditions, c)
	}
	return in
}

// pick returns nil (no restriction) one time in every `open`, else a random
// non-empty subset of from of up to 5 values.
func pick(r *rand.Rand, from []string, open int) []string {
	if r.IntN(open) == 0 {
		return nil
	}
	k := 1 + r.IntN(min(5, len(from)))
	var out []string
	for _, i := range r.Perm(len(from))[:k] {
		out = append(out, from[i])
	}
	return out
}
