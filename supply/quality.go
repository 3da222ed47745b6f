package supply

import (
	"context"
	"log/slog"
	"time"

	"marquee"
)

// Defaults of a QualityWatch.
const (
	// DefaultAlarmMinRequests is the least traffic of an hour (slots
	// asked for, people's and invalid) whose invalid rate is judged: a
	// site's few requests of a quiet hour say nothing.
	DefaultAlarmMinRequests = 1000
	// DefaultAlarmSettle is how long after an hour ends it is judged: the
	// instances' request counts reach the store at their reports' flush.
	DefaultAlarmSettle = 5 * time.Minute
)

// QualityStore is what a QualityWatch needs of the store.
type QualityStore interface {
	ListSites(ctx context.Context) ([]marquee.Site, error)
	ListPlacements(ctx context.Context, f marquee.ListFilter) ([]marquee.Placement, int, error)
	ClaimQualityCheck(ctx context.Context, name string, hour time.Time) (bool, error)
	SetQualityAlarm(ctx context.Context, name string, a marquee.QualityAlarm) error
}

// QualityReader sums sites' traffic (reports.Reporter.Qualities).
type QualityReader interface {
	Qualities(ctx context.Context, bySite map[string][]int64, from, to time.Time) (map[string]marquee.SiteQuality, error)
}

// AlarmNotifier is told of each alarm raised (the webhooks' site.quality
// event).
type AlarmNotifier interface {
	SiteQualityAlarm(site string, a marquee.QualityAlarm)
}

// QualityWatch judges each site's traffic of every hour once the hour has
// settled (docs/ivt.md#site-quality): an hour with at least MinRequests
// slots asked for whose invalid share is more than Rate raises an alarm —
// stored on the site (its qualityAlarm, which the console shows as a
// badge) and sent to Notify. One instance judges a site's hour whatever
// the instances (the store's claim); an hour claimed by an instance that
// stops before it judges it is not judged again.
type QualityWatch struct {
	Store       QualityStore
	Reports     QualityReader
	Notify      AlarmNotifier // nil: none
	Rate        float64       // -ivt-site-alarm: 0.2 is 20% of an hour's slots invalid
	MinRequests int64         // default DefaultAlarmMinRequests
	Settle      time.Duration // default DefaultAlarmSettle
	Now         func() time.Time
	Log         *slog.Logger

	judged time.Time // the last hour this instance judged (or saw claimed)
}

// Run judges the last settled hour, then again every minute, until ctx
// ends.
func (w *QualityWatch) Run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		w.Judge(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Judge judges the last hour that has settled at Now, once: the sites
// this instance claims.
func (w *QualityWatch) Judge(ctx context.Context) {
	settle := w.Settle
	if settle <= 0 {
		settle = DefaultAlarmSettle
	}
	hour := w.Now().UTC().Add(-settle).Truncate(time.Hour).Add(-time.Hour)
	if !hour.After(w.judged) {
		return
	}
	sites, err := w.Store.ListSites(ctx)
	if err == nil {
		err = w.judge(ctx, sites, hour)
	}
	if err != nil {
		if ctx.Err() == nil {
			w.Log.Warn("site quality: the last hour not judged; trying again in a minute", "hour", hour, "err", err)
		}
		return
	}
	w.judged = hour
}

func (w *QualityWatch) judge(ctx context.Context, sites []marquee.Site, hour time.Time) error {
	pls, err := marquee.ListAll(ctx, marquee.ListFilter{}, w.Store.ListPlacements)
	if err != nil {
		return err
	}
	bySite := marquee.SitePlacements(pls)
	mine := map[string][]int64{}
	for _, s := range sites {
		if len(bySite[s.Name]) == 0 {
			continue // no placement: no traffic
		}
		ok, err := w.Store.ClaimQualityCheck(ctx, s.Name, hour)
		if err != nil {
			return err
		}
		if ok {
			mine[s.Name] = bySite[s.Name]
		}
	}
	if len(mine) == 0 {
		return nil
	}
	qs, err := w.Reports.Qualities(ctx, mine, hour, hour.Add(time.Hour))
	if err != nil {
		return err
	}
	least := w.MinRequests
	if least <= 0 {
		least = DefaultAlarmMinRequests
	}
	for site, q := range qs {
		if q.Requests+q.InvalidRequests < least || q.InvalidRate <= w.Rate {
			continue
		}
		a := marquee.QualityAlarm{SiteQuality: q, Threshold: w.Rate, MinRequests: least}
		if err := w.Store.SetQualityAlarm(ctx, site, a); err != nil {
			w.Log.Warn("site quality: an alarm not stored", "site", site, "err", err)
			continue
		}
		w.Log.Warn("site quality: invalid traffic past the alarm", "site", site, "hour", hour, "invalidRate", q.InvalidRate, "requests", q.Requests+q.InvalidRequests)
		if w.Notify != nil {
			w.Notify.SiteQualityAlarm(site, a)
		}
	}
	return nil
}
