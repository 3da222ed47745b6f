// Package feed keeps an instance's views in memory (the ad index, the
// decisions' plan, the caches, access, webhooks: each a marquee.Applier)
// in step with the store's changelog: it loads everything at start, then
// hands every committed change, in seq order and by batch, to each view —
// woken at once by a notification (PostgreSQL LISTEN/NOTIFY) or, when
// notifications are lost or absent (SQLite), by a poll. A gap in seqs that
// does not fill within a bound, a changelog trimmed past the feed's
// position, or the store coming back after an outage triggers a full
// reload (a batch with Reload), so no change is ever skipped.
package feed

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marquee"
)

// Source is what the feed reads: the changelog and the ads it names.
type Source interface {
	LastSeq(ctx context.Context) (int64, error)
	FirstSeq(ctx context.Context) (int64, error)
	Changes(ctx context.Context, after int64, limit int) ([]marquee.Change, error)
	Ad(ctx context.Context, id int64) (marquee.Ad, error)
	EachLiveAd(ctx context.Context, now time.Time, fn func(*marquee.Ad) error) error
	TrimChangelog(ctx context.Context, before time.Time) (int64, error)
}

// Notifier is a Source that can wake the feed when a change commits.
type Notifier interface {
	// Listen calls connected each time it (re)starts listening and
	// notified for every notification, until ctx is done.
	Listen(ctx context.Context, connected, notified func())
}

// Config tunes a Feed. Zero values take the defaults.
type Config struct {
	// Poll is how often the changelog is read without a notification
	// (default 1 s).
	Poll time.Duration
	// GapWait is how long a hole in the seqs may stay open before the feed
	// gives up on it and reloads (default 10 s). With the stores' commit
	// ordering a hole is a rolled-back write or one still committing.
	GapWait time.Duration
	// Retention is how long changelog entries are kept (default 24 h);
	// an instance that falls further behind reloads.
	Retention time.Duration
	// TrimEvery is how often Run trims the changelog (default 1 min).
	TrimEvery time.Duration
	// Saved, when set, is the view whose state Save writes with the
	// feed's position and Start restores (the ad index).
	Saved Saver
}

// Saver is a view whose state can be written and read back.
type Saver interface {
	Save(w io.Writer) error
	Restore(r io.Reader) error
}

// batchSize bounds the changes read at a time.
const batchSize = 1000

// Feed applies a store's changelog to views. Run owns its goroutines;
// Sync may be called from any goroutine.
type Feed struct {
	src   Source
	views []marquee.Applier
	log   *slog.Logger
	cfg   Config
	now   func() time.Time
	wake  chan struct{}

	mu       sync.Mutex // guards the fields below
	pos      int64      // every change up to pos is applied
	gapSince time.Time  // when the current hole was first seen; zero if none
	down     bool       // the last read failed
	started  uint64     // read cycles started
	caughtUp uint64     // the number (started) of the last cycle that ended caught up
	stopped  bool       // Run has returned
	cycled   *sync.Cond // broadcast when caughtUp or stopped changes

	m metrics
}

// New returns a feed of src into views, applied in that order; reg
// receives its metrics.
func New(src Source, views []marquee.Applier, log *slog.Logger, reg prometheus.Registerer, cfg Config) *Feed {
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.GapWait <= 0 {
		cfg.GapWait = 10 * time.Second
	}
	if cfg.Retention <= 0 {
		cfg.Retention = 24 * time.Hour
	}
	if cfg.TrimEvery <= 0 {
		cfg.TrimEvery = time.Minute
	}
	f := &Feed{src: src, views: views, log: log, cfg: cfg, now: time.Now, wake: make(chan struct{}, 1), m: newMetrics(reg)}
	f.cycled = sync.NewCond(&f.mu)
	return f
}

// Load reloads every view (a batch with Reload) and positions the feed
// after the changelog's current end. The position is read first: a change
// committed while the views load is in the load and is applied again
// after it, which is harmless (applying a change reads its current row).
func (f *Feed) Load(ctx context.Context) error {
	seq, err := f.src.LastSeq(ctx)
	if err != nil {
		return err
	}
	if err := f.hand(ctx, f.reload(ctx)); err != nil {
		return err
	}
	f.mu.Lock()
	f.pos, f.gapSince = seq, time.Time{}
	f.mu.Unlock()
	f.m.lastSeq.Set(float64(seq))
	return nil
}

// reload is the batch of a full reload: every view reads what it holds
// again.
func (f *Feed) reload(ctx context.Context) *marquee.Batch {
	return &marquee.Batch{Reload: true, EachLiveAd: func(fn func(*marquee.Ad) error) error {
		return f.src.EachLiveAd(ctx, f.now(), fn)
	}}
}

// hand gives b to every view in turn; the first error stops it (the batch
// is applied again: views apply it idempotently).
func (f *Feed) hand(ctx context.Context, b *marquee.Batch) error {
	for _, v := range f.views {
		if err := v.Apply(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// Position is the seq up to which every change is applied.
func (f *Feed) Position() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos
}

// Run applies changes until ctx is done: at every notification (if src is
// a Notifier), every Poll, and every Sync. It trims the changelog every
// TrimEvery. Call Load first.
func (f *Feed) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	if n, ok := f.src.(Notifier); ok {
		wg.Go(func() {
			n.Listen(ctx, f.Wake, func() { f.m.notifications.Inc(); f.Wake() })
		})
	}
	poll := time.NewTicker(f.cfg.Poll)
	defer poll.Stop()
	trim := time.NewTicker(f.cfg.TrimEvery)
	defer trim.Stop()
	for {
		select {
		case <-ctx.Done():
			f.mu.Lock()
			f.stopped = true
			f.cycled.Broadcast()
			f.mu.Unlock()
			return
		case <-f.wake:
		case <-poll.C:
		case <-trim.C:
			if n, err := f.src.TrimChangelog(ctx, f.now().Add(-f.cfg.Retention)); err == nil && n > 0 {
				f.log.Info("changelog trimmed", "entries", n)
			}
			continue
		}
		f.step(ctx)
	}
}

// Wake makes Run read the changelog now.
func (f *Feed) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Sync returns once a read of the changelog that started after the call
// has caught up, so a change committed before the call is applied — how a
// write is visible to its writer's next read. It returns early with ctx's
// error, or ErrStopped once Run has returned.
func (f *Feed) Sync(ctx context.Context) error {
	f.mu.Lock()
	after := f.started // a cycle in progress may have read before the caller's commit
	f.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { f.mu.Lock(); f.cycled.Broadcast(); f.mu.Unlock() })
	defer stop()
	f.Wake()
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.caughtUp <= after {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case f.stopped:
			return ErrStopped
		}
		f.cycled.Wait()
		if f.caughtUp <= after {
			f.Wake() // the cycle that just ended started too early, or failed
		}
	}
	return nil
}

// ErrStopped is Sync's error once Run has returned.
var ErrStopped = errors.New("feed stopped")

// step is one read cycle: apply what is new, or reload when the feed
// cannot be sure what it missed.
func (f *Feed) step(ctx context.Context) {
	f.mu.Lock()
	f.started++
	cycle := f.started
	f.mu.Unlock()
	reason, holed, err := f.catchUp(ctx)
	f.mu.Lock()
	wasDown := f.down
	f.down = err != nil
	f.mu.Unlock()
	switch {
	case err != nil:
		if !wasDown {
			f.log.Warn("changelog unreadable; serving from memory until the store is back", "err", err)
		}
		f.m.up.Set(0)
		return
	case wasDown:
		reason = "outage"
	}
	if reason != "" {
		start := time.Now()
		if err := f.Load(ctx); err != nil {
			f.mu.Lock()
			f.down = true
			f.mu.Unlock()
			f.log.Warn("reload failed", "reason", reason, "err", err)
			return
		}
		f.m.reloads.WithLabelValues(reason).Inc()
		f.log.Info("views reloaded from the store", "reason", reason, "took", time.Since(start).String())
	}
	f.m.up.Set(1)
	if holed && reason == "" {
		return // not caught up: changes after the hole wait for it
	}
	f.mu.Lock()
	f.caughtUp = cycle
	f.cycled.Broadcast()
	f.mu.Unlock()
}

// catchUp applies changes after the position until the changelog's end or
// a hole (holed). It returns a reload reason when the feed must reload.
func (f *Feed) catchUp(ctx context.Context) (reload string, holed bool, err error) {
	for {
		pos := f.Position()
		chs, err := f.src.Changes(ctx, pos, batchSize)
		if err != nil {
			return "", false, err
		}
		n := 0
		for n < len(chs) && chs[n].Seq == pos+int64(n)+1 {
			if chs[n].Op == marquee.OpReload && chs[n].Entity == "" {
				return "bulk load", false, nil
			}
			n++
		}
		if n > 0 {
			if err := f.apply(ctx, chs[:n]); err != nil {
				return "", false, err
			}
		}
		if n < len(chs) { // a hole after pos+n
			reload, err := f.hole(ctx, pos+int64(n))
			return reload, true, err
		}
		f.mu.Lock()
		f.gapSince = time.Time{}
		f.mu.Unlock()
		if len(chs) < batchSize {
			return "", false, nil
		}
	}
}

// hole decides what a missing seq after pos means.
func (f *Feed) hole(ctx context.Context, pos int64) (string, error) {
	first, err := f.src.FirstSeq(ctx)
	if err != nil {
		return "", err
	}
	if first > pos+1 {
		return "changelog trimmed past position", nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if f.gapSince.IsZero() {
		f.gapSince = now
	}
	if now.Sub(f.gapSince) >= f.cfg.GapWait {
		return "gap in changelog", nil
	}
	return "", nil
}

// apply gathers what chs change into one batch — reading the current row
// of every ad they name — hands it to every view, then advances the
// position past them. Links are not read: their caches read them again.
func (f *Feed) apply(ctx context.Context, chs []marquee.Change) error {
	b := &marquee.Batch{}
	// once is true the first time the batch names an entity's id.
	seen := map[string]map[int64]bool{}
	once := func(entity string, id int64) bool {
		m := seen[entity]
		if m == nil {
			m = map[int64]bool{}
			seen[entity] = m
		}
		if m[id] {
			return false
		}
		m[id] = true
		return true
	}
	for _, c := range chs {
		switch c.Entity {
		case marquee.EntityLink:
			b.Links = append(b.Links, c.Key)
			b.AllLinks = b.AllLinks || c.Op == marquee.OpReload // an import: any link
		case marquee.EntityAd:
			if once(c.Entity, c.ID) {
				b.Ads = append(b.Ads, c.ID)
			}
		case marquee.EntityKey, marquee.EntityUser, marquee.EntitySession:
			b.Access = true
		case marquee.EntityCampaign:
			if once(c.Entity, c.ID) {
				b.Campaigns = append(b.Campaigns, c.ID)
			}
		case marquee.EntityAdvertiser:
			if once(c.Entity, c.ID) {
				b.Advertisers = append(b.Advertisers, c.ID)
			}
		case marquee.EntityPlacement:
			if once(c.Entity, c.ID) {
				b.Placements = append(b.Placements, c.Key)
			}
		case marquee.EntityWebhook:
			b.Webhooks = true
		case marquee.EntityDeal:
			b.Deals = true
		case marquee.EntitySite:
			b.Sites = true
		case marquee.EntityDemandPartner:
			b.DemandPartners = true
		case marquee.EntitySetting:
			if !slices.Contains(b.Settings, c.Key) {
				b.Settings = append(b.Settings, c.Key)
			}
		case marquee.EntitySubject:
			b.Subjects = append(b.Subjects, uint64(c.ID))
		}
	}
	for _, id := range b.Ads {
		a, err := f.src.Ad(ctx, id)
		switch {
		case marquee.KindOf(err) == marquee.KindNotFound:
			b.Deleted = append(b.Deleted, id)
		case err != nil:
			return err
		default:
			b.Put = append(b.Put, &a)
		}
	}
	if err := f.hand(ctx, b); err != nil {
		return err
	}
	now := f.now()
	for _, c := range chs {
		f.m.lag.Observe(now.Sub(c.At).Seconds())
	}
	last := chs[len(chs)-1].Seq
	f.mu.Lock()
	f.pos = last
	f.mu.Unlock()
	f.m.lastSeq.Set(float64(last))
	f.m.applied.Add(float64(len(chs)))
	return nil
}
