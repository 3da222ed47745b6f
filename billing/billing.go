// Package billing makes the documents an operator bills and pays from:
// an advertiser's invoice for a period, from what the Ledger billed as
// the reports count it (Invoice), and its CSV and PDF (WriteCSV,
// WritePDF). It does no HTTP and keeps nothing: the store numbers and
// keeps the documents (docs/api.md#invoices).
package billing

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"marquee"
	"marquee/ivt"
	"marquee/reportrow"
	"marquee/reports"
)

// Invoice is advertiser's invoice for [from, to) — whole UTC days, the
// grain the reports keep by campaign — as cat names it, unnumbered: a
// line per campaign with billed events or a flat fee in the period (its
// billed events, price model, effective rate and amount: the billed spend
// of its events less what was credited after the fact, rounded to the
// micro-unit once, plus its flat fee's share of the period), and the
// adjustments — events billed nothing past a budget (the reports'
// unbilled events of people) or as invalid traffic, by kind (docs/ivt.md;
// "burst": billed, then credited when the user or address went past its
// events a minute) — shown at what they would have cost, not charged.
func Invoice(ctx context.Context, rp *reports.Reporter, cat *reports.Catalog, advertiser int64, from, to time.Time) (marquee.Invoice, error) {
	inv := marquee.Invoice{Kind: marquee.KindInvoice, AdvertiserID: advertiser, Advertiser: cat.Advertisers[advertiser],
		Currency: rp.Currency, From: from.UTC(), To: to.UTC(), Lines: []marquee.InvoiceLine{}, Adjustments: []marquee.Adjustment{}}
	q := reports.MultiQuery{By: []string{reports.DimCampaign, reports.DimTraffic}, From: from, To: to, Granularity: reports.Total, Advertisers: []int64{advertiser}}
	rep, err := rp.Multi(ctx, q, cat)
	if err != nil {
		return inv, err
	}
	// A campaign's sums by traffic: people's, and invalid traffic's by
	// reason (ivt names).
	by := map[int64]map[string]reports.Counts{}
	for _, r := range rep.Rows {
		id := cellID(r.Dims[reports.DimCampaign])
		if by[id] == nil {
			by[id] = map[string]reports.Counts{}
		}
		by[id][r.Dims[reports.DimTraffic].Value] = r.Counts
	}
	for id, c := range cat.Campaigns { // flat fees: the period's share, whatever was delivered
		if c.AdvertiserID == advertiser && reports.FlatSpend(c, from, to) > 0 && by[id] == nil {
			by[id] = map[string]reports.Counts{}
		}
	}
	human, burst := ivt.Human.String(), ivt.Burst.String()
	for _, id := range slices.Sorted(maps.Keys(by)) {
		traffic, c := by[id], cat.Campaigns[id]
		if c == nil || c.Price == nil {
			continue
		}
		people := traffic[human]
		var spend int64 // people's, less the credits of bursts
		for _, t := range traffic {
			spend += t.SpendNanos
		}
		line := marquee.InvoiceLine{CampaignID: id, Campaign: c.Name, Model: string(c.Price.Model)}
		line.Amount = marquee.Nanos(spend).Micros() + reports.FlatSpend(c, from, to)
		switch c.Price.Model {
		case marquee.PriceFlat, marquee.PriceDaily:
			line.Rate = c.Price.Amount
		default:
			event, per := c.Price.Model.Bills()
			line.Events = people.Verified(event+"s") - people.Unbilled - traffic[burst].Unbilled // the reports' metric: "clicks"
			if line.Events > 0 {
				line.Rate = line.Amount.MulDiv(per, line.Events)
			}
		}
		if line.Amount != 0 || line.Events != 0 {
			inv.Lines = append(inv.Lines, line)
			inv.Total += line.Amount
		}
		if n := people.Unbilled; n > 0 {
			inv.Adjustments = append(inv.Adjustments, marquee.Adjustment{CampaignID: id, Reason: marquee.UnbilledOverBudget, Events: n,
				Amount: marquee.Nanos(people.UnbilledNanos).Micros()})
		}
		for _, why := range slices.Sorted(maps.Keys(traffic)) {
			if t := traffic[why]; why != human && t.Unbilled > 0 {
				inv.Adjustments = append(inv.Adjustments, marquee.Adjustment{CampaignID: id, Reason: marquee.UnbilledInvalid, IVT: why, Events: t.Unbilled,
					Amount: marquee.Nanos(t.UnbilledNanos).Micros()})
			}
		}
	}
	return inv, nil
}

func cellID(c reports.Cell) int64 {
	var id int64
	for _, d := range c.ID {
		if d < '0' || d > '9' || id > math.MaxInt64/10 {
			return 0
		}
		id = id*10 + int64(d-'0')
	}
	return id
}

// CreditNote is the credit note that cancels inv: its lines and total
// negated, its adjustments kept as shown, Corrects naming it.
func CreditNote(inv marquee.Invoice) marquee.Invoice {
	cn := inv
	cn.ID, cn.Number, cn.Kind, cn.Corrects, cn.CreditedBy = 0, "", marquee.KindCreditNote, inv.Number, ""
	cn.Lines = make([]marquee.InvoiceLine, len(inv.Lines))
	for i, l := range inv.Lines {
		l.Events, l.Amount = -l.Events, -l.Amount
		cn.Lines[i] = l
	}
	cn.Adjustments = slices.Clone(inv.Adjustments)
	cn.Total = -inv.Total
	cn.Prepaid = nil // the payments stay on the invoice that showed them
	return cn
}

// addPartners adds to lines (by placement id) what the demand partners'
// bids earned on site's placements in [from, to) (whole UTC days, as the
// cube's): their verified impressions, their revenue as gross (and as
// PartnerGross) and its share as net, rounded once a placement. Nothing
// without a reader of bids.
func addPartners(ctx context.Context, rp *reports.Reporter, cat *reports.Catalog, site string, from, to time.Time, lines map[int64]*marquee.PlacementLine) error {
	if rp.Bids == nil {
		return nil
	}
	var ids []int64
	for id, pl := range cat.Placements {
		if pl.Site == site {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := rp.Bids.BidSums(ctx, reportrow.BidQuery{From: from.Unix() / 86400 * 86400, To: to.Unix(), Placements: ids})
	if err != nil {
		return err
	}
	earned := map[int64]int64{} // nano-units, by placement
	for _, r := range rows {
		if _, ok := marquee.PartnerOf(r.Bidder); !ok || r.Impressions == 0 && r.Revenue == 0 {
			continue
		}
		l := lines[r.Placement]
		if l == nil {
			l = &marquee.PlacementLine{PlacementID: r.Placement, Placement: cat.Placements[r.Placement].Name}
			lines[r.Placement] = l
		}
		l.Impressions += r.Impressions
		earned[r.Placement] += r.Revenue
	}
	for id, nanos := range earned {
		l := lines[id]
		gross := marquee.Nanos(nanos).Micros()
		l.Gross += gross
		l.PartnerGross += gross
		l.Net += marquee.Nanos(math.Round(cat.Shares[site] * float64(nanos))).Micros()
	}
	return nil
}

// Statement is the publisher's statement of site for [from, to) (whole
// UTC days), unnumbered: a line per placement of the site with its
// campaigns' verified impressions, what their ads earned (gross: their billed spend and
// flat fees' shares, as the team's reports count them) and the
// publisher's part (net: as the publisher's own reports count it, each
// cell's gross × the site's revenue share, rounded once a placement);
// Total the net owed, Gross the gross. The page's header-bidding bids
// are left out: their SSPs pay the publisher, not the network; the
// demand partners' are in (addPartners): they pay the network. cat.Shares gives the share (none:
// 0, nothing is owed). Its adjustments say why events earned nothing: a
// placement's invalid traffic by reason (a quarantined site's all of
// reason "quarantined"), at what it would have earned (gross).
func Statement(ctx context.Context, rp *reports.Reporter, cat *reports.Catalog, site string, from, to time.Time) (marquee.Invoice, error) {
	st := marquee.Invoice{Kind: marquee.KindStatement, Site: site, RevenueShare: cat.Shares[site], Currency: rp.Currency,
		From: from.UTC(), To: to.UTC(), Lines: []marquee.InvoiceLine{}, Adjustments: []marquee.Adjustment{}, PlacementLines: []marquee.PlacementLine{}}
	q := reports.MultiQuery{By: []string{reports.DimPlacement}, From: from, To: to, Granularity: reports.Total, Sites: []string{site}, OnlyCampaigns: true}
	gross, err := rp.Multi(ctx, q, cat)
	if err != nil {
		return st, err
	}
	q.Publisher = true
	net, err := rp.Multi(ctx, q, cat)
	if err != nil {
		return st, err
	}
	nets := map[int64]marquee.Micros{}
	for _, r := range net.Rows {
		if r.Net != nil {
			nets[cellID(r.Dims[reports.DimPlacement])] = r.Net.Revenue
		}
	}
	lines := map[int64]*marquee.PlacementLine{}
	for _, r := range gross.Rows {
		c := r.Dims[reports.DimPlacement]
		id := cellID(c)
		l := marquee.PlacementLine{PlacementID: id, Placement: c.Name, Impressions: r.Verified("impressions"), Net: nets[id]}
		if r.Money != nil {
			l.Gross = r.Money.Spend
		}
		lines[id] = &l
	}
	if err := addPartners(ctx, rp, cat, site, from, to, lines); err != nil {
		return st, err
	}
	for _, l := range lines {
		if l.Gross == 0 && l.Net == 0 && l.Impressions == 0 {
			continue
		}
		st.PlacementLines = append(st.PlacementLines, *l)
		st.Gross += l.Gross
		st.Total += l.Net
	}
	slices.SortFunc(st.PlacementLines, func(a, b marquee.PlacementLine) int { return int(a.PlacementID - b.PlacementID) })
	q.Publisher, q.By = false, []string{reports.DimPlacement, reports.DimTraffic}
	traffic, err := rp.Multi(ctx, q, cat)
	if err != nil {
		return st, err
	}
	human := ivt.Human.String()
	for _, r := range traffic.Rows {
		if why := r.Dims[reports.DimTraffic].Value; why != human && r.Counts.Unbilled > 0 {
			st.Adjustments = append(st.Adjustments, marquee.Adjustment{PlacementID: cellID(r.Dims[reports.DimPlacement]), Reason: marquee.UnbilledInvalid,
				IVT: why, Events: r.Counts.Unbilled, Amount: marquee.Nanos(r.Counts.UnbilledNanos).Micros()})
		}
	}
	slices.SortFunc(st.Adjustments, func(a, b marquee.Adjustment) int {
		return cmp.Or(cmp.Compare(a.PlacementID, b.PlacementID), cmp.Compare(a.IVT, b.IVT))
	})
	return st, nil
}
