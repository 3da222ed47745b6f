// Package feed keeps an instance's index in step with the store's
// changelog: it loads everything at start, then applies every committed
// change in seq order, woken at once by a notification (PostgreSQL
// LISTEN/NOTIFY) or, when notifications are lost or absent (SQLite), by a
// poll. A gap in seqs that does not fill within a bound, a changelog
// trimmed past the feed's position, or the store coming back after an
// outage triggers a full reload, so no change is ever skipped.
package feed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"marquee"
	"marquee/index"
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
	// OnChange, if set, is called with the ids of the ads in every batch
	// of changes applied, and with nil after a reload (everything may have
	// changed).
	OnChange func(ids []int64)
	// OnLinks, if set, is called with the codes of the links in every
	// batch of changes applied, and with nil after a reload or an import
	// (a link reload entry: any link may have changed).
	OnLinks func(codes []string)
	// OnAccess, if set, is called after every batch of changes applied
	// that changes a key, user or session, and after a reload.
	OnAccess func()
	// OnAds, if set, is called with the ads a batch of changes put (as
	// read for the index) and the ids it deleted; OnPlan after a batch
	// that changes an advertiser, campaign or placement. A reload calls
	// OnChange(nil) instead of either.
	OnAds  func(puts []*marquee.Ad, dels []int64)
	OnPlan func()
	// OnWebhooks, if set, is called after a batch that changes a
	// webhook, and after a reload.
	OnWebhooks func()
	// OnSubjects, if set, is called with the pseudonyms of the data
	// subjects a batch erases (their counters are forgotten). A reload
	// (after a gap or a trimmed position) does not replay the erasures
	// it jumps over (docs/privacy.md).
	OnSubjects func(pseudonyms []uint64)
}

// batchSize bounds the changes read at a time.
const batchSize = 1000

// Feed applies a store's changelog to an index. Run owns its goroutines;
// Sync may be called from any goroutine.
type Feed struct {
	src  Source
	ix   *index.Index
	log  *slog.Logger
	cfg  Config
	now  func() time.Time
	wake chan struct{}

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

// New returns a feed of src into ix; reg receives its metrics.
func New(src Source, ix *index.Index, log *slog.Logger, reg prometheus.Registerer, cfg Config) *Feed {
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
	f := &Feed{src: src, ix: ix, log: log, cfg: cfg, now: time.Now, wake: make(chan struct{}, 1), m: newMetrics(reg)}
	f.cycled = sync.NewCond(&f.mu)
	return f
}

// Load fills the index with every live ad and positions the feed after the
// changelog's current end. The position is read first: a change committed
// while the ads load is in the load and is applied again after it, which
// is harmless (applying a change reads the ad's current row).
func (f *Feed) Load(ctx context.Context) error {
	seq, err := f.src.LastSeq(ctx)
	if err != nil {
		return err
	}
	err = f.ix.Load(func(add func(*marquee.Ad)) error {
		return f.src.EachLiveAd(ctx, f.now(), func(a *marquee.Ad) error { add(a); return nil })
	})
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.pos, f.gapSince = seq, time.Time{}
	f.mu.Unlock()
	f.m.lastSeq.Set(float64(seq))
	if f.cfg.OnChange != nil {
		f.cfg.OnChange(nil)
	}
	if f.cfg.OnLinks != nil {
		f.cfg.OnLinks(nil)
	}
	if f.cfg.OnAccess != nil {
		f.cfg.OnAccess()
	}
	if f.cfg.OnWebhooks != nil {
		f.cfg.OnWebhooks()
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
		f.log.Info("index reloaded from the store", "reason", reason, "ads", f.ix.Snapshot().Len(), "took", time.Since(start).String())
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

// apply reads the current row of every ad the changes name and puts or
// deletes it in the index, tells OnChange, OnLinks and OnAccess what
// changed, then
// advances the position past them. Links are not indexed: their caches
// read them again.
func (f *Feed) apply(ctx context.Context, chs []marquee.Change) error {
	var ids []int64
	var codes []string
	access, plan, hooks, links := false, false, false, false
	var subjects []uint64
	seen := map[int64]bool{}
	for _, c := range chs {
		switch c.Entity {
		case marquee.EntityLink:
			codes = append(codes, c.Key)
			links = links || c.Op == marquee.OpReload // an import: any link
		case marquee.EntityAd:
			if !seen[c.ID] {
				seen[c.ID] = true
				ids = append(ids, c.ID)
			}
		case marquee.EntityKey, marquee.EntityUser, marquee.EntitySession:
			access = true
		case marquee.EntityAdvertiser, marquee.EntityCampaign, marquee.EntityPlacement:
			plan = true
		case marquee.EntityWebhook:
			hooks = true
		case marquee.EntitySubject:
			subjects = append(subjects, uint64(c.ID))
		}
	}
	var puts []*marquee.Ad
	var dels []int64
	for _, id := range ids {
		a, err := f.src.Ad(ctx, id)
		switch {
		case marquee.KindOf(err) == marquee.KindNotFound:
			dels = append(dels, id)
		case err != nil:
			return err
		default:
			puts = append(puts, &a)
		}
	}
	if len(puts) > 0 {
		f.ix.Put(puts...)
	}
	if len(dels) > 0 {
		f.ix.Delete(dels...)
	}
	if f.cfg.OnChange != nil && len(ids) > 0 {
		f.cfg.OnChange(ids)
	}
	if f.cfg.OnAds != nil && len(puts)+len(dels) > 0 {
		f.cfg.OnAds(puts, dels)
	}
	if f.cfg.OnPlan != nil && plan {
		f.cfg.OnPlan()
	}
	switch {
	case f.cfg.OnLinks == nil:
	case links:
		f.cfg.OnLinks(nil)
	case len(codes) > 0:
		f.cfg.OnLinks(codes)
	}
	if f.cfg.OnAccess != nil && access {
		f.cfg.OnAccess()
	}
	if f.cfg.OnWebhooks != nil && hooks {
		f.cfg.OnWebhooks()
	}
	if f.cfg.OnSubjects != nil && len(subjects) > 0 {
		f.cfg.OnSubjects(subjects)
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
