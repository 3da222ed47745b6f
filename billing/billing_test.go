package billing_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"marquee"
	"marquee/billing"
	"marquee/reportrow"
	"marquee/reports"
)

// cube is a reports.Reader over a fixed list of cube rows (one a day,
// campaign, placement and invalid-traffic reason): CubeSums answers the
// rows its query's filters keep, ungrouped (the reports add them up).
// It reads nothing else.
type cube struct {
	reports.Reader
	rows []reportrow.CubeRow
}

func (c cube) CubeSums(_ context.Context, q reportrow.CubeQuery) ([]reportrow.CubeRow, error) {
	var out []reportrow.CubeRow
	for _, r := range c.rows {
		switch {
		case r.Day < q.From || r.Day >= q.To,
			len(q.Campaigns) > 0 && !slices.Contains(q.Campaigns, r.Campaign),
			len(q.Placements) > 0 && !slices.Contains(q.Placements, r.Placement),
			!q.Bots && r.IVT != 0:
			continue
		}
		if !slices.Contains(q.Group, reportrow.ByIVT) {
			r.IVT = 0
		}
		out = append(out, r)
	}
	return out, nil
}

func (cube) RequestSums(context.Context, reportrow.RequestQuery) ([]reportrow.RequestRow, error) {
	return nil, nil
}

// day is 2026-03-02, the day the tests bill.
var day = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// flatWorld is a daily-fee campaign (100 a day, approved before its
// flight) of advertiser 1 on two sites' placements: site a's placement 1,
// site b's placement 2, and the cube rows given.
func flatWorld(rows ...reportrow.CubeRow) (*reports.Reporter, *reports.Catalog) {
	camp := &marquee.Campaign{ID: 1, State: marquee.StateActive,
		Review: &marquee.Review{Action: marquee.ActionApprove, At: day.Add(-48 * time.Hour)},
		CampaignInput: marquee.CampaignInput{AdvertiserID: 1, Name: "Sponsor", StartAt: day.Add(-24 * time.Hour), EndAt: day.Add(72 * time.Hour),
			Price: &marquee.Price{Model: marquee.PriceDaily, Amount: 100_000_000}}}
	cat := &reports.Catalog{
		Campaigns:   map[int64]*marquee.Campaign{1: camp},
		Advertisers: map[int64]string{1: "Acme"},
		Placements: map[int64]*marquee.Placement{1: {ID: 1, PlacementInput: marquee.PlacementInput{Name: "a-top", Site: "a"}},
			2: {ID: 2, PlacementInput: marquee.PlacementInput{Name: "b-top", Site: "b"}}},
		Shares: map[string]float64{"a": 0.5, "b": 0.5},
	}
	rp := reports.NewReporter(cube{rows: rows}, 90*24*time.Hour)
	rp.Currency = "EUR"
	return rp, cat
}

func imps(placement int64, n int64, ivt uint8) reportrow.CubeRow {
	return reportrow.CubeRow{Grain: reportrow.GrainCP, Day: day.Unix(), Campaign: 1, Placement: placement, IVT: ivt,
		Counts: reportrow.Counts{Impressions: n}}
}

// TestStatementsShareAFlatFee: a day's fee of 100 over one impression on
// site a and 99 on site b is 1 of gross for a and 99 for b — each site's
// statement takes its part of all the campaign delivered, not the whole
// fee over its own impressions (the attack's 322.58 for one impression);
// invalid traffic takes no part; the statements add up to the fee.
func TestStatementsShareAFlatFee(t *testing.T) {
	t.Parallel()
	rp, cat := flatWorld(imps(1, 1, 0), imps(2, 99, 0), imps(1, 500, 3))
	ctx := context.Background()
	var gross marquee.Micros
	for site, want := range map[string]marquee.Micros{"a": 1_000_000, "b": 99_000_000} {
		st, err := billing.Statement(ctx, rp, cat, site, day, day.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if st.Gross != want || st.Total != want/2 {
			t.Errorf("site %s's statement: gross %s, net %s; want %s, %s", site, st.Gross, st.Total, want, want/2)
		}
		gross += st.Gross
	}
	if gross != 100_000_000 {
		t.Errorf("the statements' gross = %s; want the day's fee, 100", gross)
	}
	inv, err := billing.Invoice(ctx, rp, cat, 1, day, day.Add(24*time.Hour))
	if err != nil || inv.Total != 100_000_000 {
		t.Errorf("the invoice = %s, %v; want the day's fee, 100", inv.Total, err)
	}
}

// TestOnlyApprovedCampaignsBillFees: a campaign's daily fee is on its
// advertiser's invoice only once approved, and only for the part of the
// period after its approval — a draft's or a pending campaign's fee of
// 1,000,000,001 is not billed (the attack's unsubmitted draft), one
// approved at noon bills half the day, one archived without ever being
// approved bills nothing.
func TestOnlyApprovedCampaignsBillFees(t *testing.T) {
	t.Parallel()
	rp, cat := flatWorld()
	camp := cat.Campaigns[1]
	camp.Price.Amount = 1_000_000_001_000_000
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		state  string
		review *marquee.Review
		want   marquee.Micros
	}{
		{"a draft", marquee.StateDraft, nil, 0},
		{"a submitted draft", marquee.StatePending, &marquee.Review{Action: marquee.ActionSubmit, At: day.Add(-time.Hour)}, 0},
		{"a rejected one, archived", marquee.StateArchived, &marquee.Review{Action: marquee.ActionReject, At: day.Add(-time.Hour)}, 0},
		{"approved at noon", marquee.StateActive, &marquee.Review{Action: marquee.ActionApprove, At: day.Add(12 * time.Hour)}, 500_000_000_500_000},
		{"approved before, then paused", marquee.StatePaused, &marquee.Review{Action: marquee.ActionApprove, At: day.Add(-time.Hour)}, 1_000_000_001_000_000},
		{"made active by a seed long ago", marquee.StateActive, nil, 1_000_000_001_000_000},
	} {
		camp.State, camp.Review = c.state, c.review
		inv, err := billing.Invoice(ctx, rp, cat, 1, day, day.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if inv.Total != c.want || c.want == 0 && len(inv.Lines) != 0 {
			t.Errorf("%s: invoice total %s with %d lines; want %s", c.name, inv.Total, len(inv.Lines), c.want)
		}
	}
}

// TestPDFRowsBounded: an invoice of 3,001 lines (the attack's drafts)
// makes a PDF of MaxPDFRows lines and a row counting the rest — about 25
// pages, not 75 — whose total is the document's.
func TestPDFRowsBounded(t *testing.T) {
	t.Parallel()
	inv := marquee.Invoice{Kind: marquee.KindInvoice, Number: "MQ-000001", AdvertiserID: 1, Advertiser: "Acme", Currency: "EUR", From: day, To: day.Add(24 * time.Hour)}
	for i := range 3001 {
		inv.Lines = append(inv.Lines, marquee.InvoiceLine{CampaignID: int64(i + 1), Campaign: "draft", Model: "cpm", Events: 1, Amount: 1})
		inv.Total++
	}
	pages := func(inv marquee.Invoice) int {
		var b bytes.Buffer
		if err := billing.WritePDF(&b, inv, "Net"); err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b.Bytes(), []byte("/Type /Page\n"))
	}
	all := pages(inv)
	inv.Lines = inv.Lines[:billing.MaxPDFRows]
	if most := pages(inv); all != most && all != most+1 || all < 20 || all > 30 {
		t.Errorf("the PDF of 3,001 lines has %d pages, of %d lines %d; want as many (or one more, for the row that counts the rest), 20 to 30", all, billing.MaxPDFRows, most)
	}
}

// TestStatementsLeaveOutClientBids: the page's header-bidding bids on a
// site's placement (campaign 0: what an SSP pays the publisher, not the
// network) are not in its statement's gross, impressions or net.
func TestStatementsLeaveOutClientBids(t *testing.T) {
	t.Parallel()
	bid := reportrow.CubeRow{Grain: reportrow.GrainCP, Day: day.Unix(), Placement: 1, Counts: reportrow.Counts{Impressions: 40, SpendNanos: 80_000_000_000}}
	rp, cat := flatWorld(imps(1, 10, 0), bid)
	st, err := billing.Statement(context.Background(), rp, cat, "a", day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if st.Gross != 100_000_000 || st.Total != 50_000_000 || len(st.PlacementLines) != 1 || st.PlacementLines[0].Impressions != 10 {
		t.Errorf("site a's statement: gross %s, net %s, lines %+v; want the flat fee's 100 and 50, 10 impressions, the bids' 80 left out", st.Gross, st.Total, st.PlacementLines)
	}
}
