package billing

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"marquee"
)

// Monthly issues the month's documents by itself (-monthly-billing): an
// hour into each month (UTC: the reports have caught up), an invoice to
// every advertiser with something to bill in the month before, and a
// statement to every site with a revenue share that earned in it. An
// advertiser or site that has a document of the month already is left as
// it is, so every instance may run it: the store's overlap check makes
// one document a period.
type Monthly struct {
	Service *Service // prices, and keeps, the documents
	Log     *slog.Logger
	Now     func() time.Time
}

// Run issues the month's documents when due, checking every interval,
// until ctx ends.
func (m *Monthly) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		now := m.Now().UTC()
		month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		if now.Sub(month) >= time.Hour {
			if n, err := m.Issue(ctx, month.AddDate(0, -1, 0)); err != nil {
				m.Log.Warn("monthly billing", "err", err)
			} else if n > 0 {
				m.Log.Info("monthly billing", "issued", n, "month", month.AddDate(0, -1, 0).Format("2006-01"))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Issue issues the documents of the month that starts at month (UTC) not
// issued yet, and says how many it issued.
func (m *Monthly) Issue(ctx context.Context, month time.Time) (int, error) {
	ctx = marquee.WithAudit(ctx, marquee.Audit{Actor: "monthly billing", Action: "create"}) // each document is in the audit log
	from, to := month, month.AddDate(0, 1, 0)
	svc := m.Service
	cat, err := svc.cfg.Catalogs.Catalog(ctx)
	if err != nil {
		return 0, err
	}
	var advertisers []int64
	for id := range cat.Advertisers {
		advertisers = append(advertisers, id)
	}
	slices.Sort(advertisers)
	issued := 0
	keep := func(doc marquee.Invoice) error {
		_, err := svc.cfg.Store.IssueInvoice(ctx, doc)
		switch {
		case marquee.KindOf(err) == marquee.KindConflict: // issued already
			return nil
		case err != nil:
			return err
		}
		issued++
		return nil
	}
	for _, a := range advertisers {
		inv, err := Invoice(ctx, svc.cfg.Reports, cat, a, from, to)
		if err != nil {
			return issued, err
		}
		if len(inv.Lines) == 0 && len(inv.Adjustments) == 0 {
			continue
		}
		if err := svc.addPrepayment(ctx, &inv); err != nil {
			return issued, err
		}
		if err := keep(inv); err != nil {
			return issued, err
		}
	}
	var sites []string
	for s := range cat.Shares {
		sites = append(sites, s)
	}
	slices.Sort(sites)
	for _, s := range sites {
		st, err := Statement(ctx, svc.cfg.Reports, cat, s, from, to)
		if err != nil {
			return issued, err
		}
		if len(st.PlacementLines) == 0 {
			continue
		}
		if err := keep(st); err != nil {
			return issued, err
		}
	}
	return issued, nil
}
