package supply

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"marquee"
)

// Defaults of a Watcher.
const (
	DefaultAdsTxtEvery = 24 * time.Hour // -ads-txt-every
	// CheckNowEvery is how often a site's check may be asked for
	// (POST /api/v1/sites/{name}/ads-txt/check): a publisher who fixed
	// its file checks again at once, not a fetch loop through Marquee.
	CheckNowEvery = time.Minute
)

// SiteStore is what a Watcher needs of the store.
type SiteStore interface {
	ListSites(ctx context.Context) ([]marquee.Site, error)
	Site(ctx context.Context, name string) (marquee.Site, error)
	ClaimAdsTxtCheck(ctx context.Context, name string, now time.Time, since time.Duration) (bool, error)
	SetAdsTxtCheck(ctx context.Context, name string, c marquee.AdsTxtCheck) error
}

// Watcher checks every site's ads.txt every Every (each site at a
// moment of its own within the last tenth of the period, so that checks
// spread), one instance a site whatever the instances (the store's
// claim), and a site at once when asked (CheckNow).
type Watcher struct {
	Store   SiteStore
	Checker *Checker
	Every   time.Duration // default DefaultAdsTxtEvery
	// Delay is how long Run waits before its first pass (0: none): a
	// server does not fetch in its first moments, while the sites made
	// meanwhile are asked for (CheckNow) without a pass claiming them.
	Delay time.Duration
	Now   func() time.Time
	Log   *slog.Logger
}

// Run checks the sites that are due after Delay, then again every
// minute, until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(w.Delay):
	}
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		w.checkDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *Watcher) every() time.Duration {
	if w.Every > 0 {
		return w.Every
	}
	return DefaultAdsTxtEvery
}

// checkDue checks each site whose last claim is older than a period less
// up to a tenth of it (drawn afresh each time: the jitter).
func (w *Watcher) checkDue(ctx context.Context) {
	sites, err := w.Store.ListSites(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.Log.Warn("ads.txt checks: sites not read; trying again in a minute", "err", err)
		}
		return
	}
	for _, s := range sites {
		if ctx.Err() != nil {
			return
		}
		since := w.every() - time.Duration(rand.Int64N(int64(w.every()/10)+1))
		if ok, err := w.Store.ClaimAdsTxtCheck(ctx, s.Name, w.Now(), since); err != nil || !ok {
			continue
		}
		if _, err := w.check(ctx, s); err != nil && ctx.Err() == nil {
			w.Log.Warn("ads.txt check not stored", "site", s.Name, "err", err)
		}
	}
}

// check checks s and stores what it found, answering s with it.
func (w *Watcher) check(ctx context.Context, s marquee.Site) (marquee.Site, error) {
	c := w.Checker.Check(ctx, s, w.Now())
	if err := w.Store.SetAdsTxtCheck(ctx, s.Name, c); err != nil {
		return s, err
	}
	if c.Status != marquee.AdsTxtAuthorized {
		w.Log.Info("ads.txt does not authorise the network", "site", s.Name, "status", c.Status)
	}
	s.AdsTxt = &c
	return s, nil
}

// CheckNow checks site name at once and answers it with the check; a
// site checked less than CheckNowEvery ago is a KindTooManyRequests
// error that says when to ask again.
func (w *Watcher) CheckNow(ctx context.Context, name string) (marquee.Site, error) {
	s, err := w.Store.Site(ctx, name)
	if err != nil {
		return s, err
	}
	ok, err := w.Store.ClaimAdsTxtCheck(ctx, name, w.Now(), CheckNowEvery)
	if err != nil {
		return s, err
	}
	if !ok {
		e := marquee.Errorf(marquee.KindTooManyRequests, "site %q's ads.txt was checked less than a minute ago", name)
		e.RetryAfter = CheckNowEvery
		return s, e
	}
	return w.check(ctx, s)
}
