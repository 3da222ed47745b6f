package billing_test

import (
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"marquee"
	"marquee/billing"
	"marquee/ivt"
	"marquee/reportrow"
	"marquee/reports"
)

// priced is a CPM campaign (2, at 2.00) and a CPC one (3, at 0.50) of
// advertiser 1, both approved before the day billed, over rows.
func priced(rows ...reportrow.CubeRow) (*reports.Reporter, *reports.Catalog) {
	camp := func(id int64, m marquee.PriceModel, amount marquee.Micros) *marquee.Campaign {
		return &marquee.Campaign{ID: id, State: marquee.StateActive,
			Review: &marquee.Review{Action: marquee.ActionApprove, At: day.Add(-48 * time.Hour)},
			CampaignInput: marquee.CampaignInput{AdvertiserID: 1, Name: string(m), StartAt: day.Add(-24 * time.Hour), EndAt: day.Add(72 * time.Hour),
				Price: &marquee.Price{Model: m, Amount: amount}}}
	}
	cat := &reports.Catalog{
		Campaigns:   map[int64]*marquee.Campaign{2: camp(2, marquee.PriceCPM, 2_000_000), 3: camp(3, marquee.PriceCPC, 500_000)},
		Advertisers: map[int64]string{1: "Acme"},
		Placements:  map[int64]*marquee.Placement{1: {ID: 1, PlacementInput: marquee.PlacementInput{Name: "top", Site: "a"}}},
	}
	rp := reports.NewReporter(cube{rows: rows}, 90*24*time.Hour)
	rp.Currency = "EUR"
	return rp, cat
}

func row(campaign int64, why ivt.Reason, c reportrow.Counts) reportrow.CubeRow {
	return reportrow.CubeRow{Grain: reportrow.GrainCP, Day: day.Unix(), Campaign: campaign, Placement: 1, IVT: uint8(why), Counts: c}
}

// TestInvoiceArithmetic: a line's events are the verified events of the
// type its price bills, less those billed nothing and those credited
// after the fact; its amount is the billed spend net of credits; its
// effective rate the amount per 1,000 (CPM) or per event (CPC); and
// what was billed nothing is shown as adjustments — past a budget, and
// invalid traffic by reason — never charged.
func TestInvoiceArithmetic(t *testing.T) {
	rp, cat := priced(
		// CPM: 4,100 impressions of people, 100 past the budget: 4,000 billed at 0.002.
		row(2, ivt.Human, reportrow.Counts{Impressions: 4100, SpendNanos: 4000 * 2_000_000, Unbilled: 100, UnbilledNanos: 100 * 2_000_000}),
		// A crawler's 50 impressions: billed nothing.
		row(2, ivt.Crawler, reportrow.Counts{Impressions: 50, Unbilled: 50, UnbilledNanos: 50 * 2_000_000}),
		// CPC: 10 clicks of people billed 0.50 each (2 unverified, not billed).
		row(3, ivt.Human, reportrow.Counts{Impressions: 1000, Clicks: 12, UnverifiedClicks: 2, SpendNanos: 10 * 500_000_000}),
		// One of them credited after the fact (a burst): its spend given back.
		row(3, ivt.Burst, reportrow.Counts{Unbilled: 1, SpendNanos: -500_000_000, UnbilledNanos: 500_000_000}),
	)
	inv, err := billing.Invoice(context.Background(), rp, cat, 1, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wantLines := []marquee.InvoiceLine{
		{CampaignID: 2, Campaign: "cpm", Model: "cpm", Events: 4000, Rate: 2_000_000, Amount: 8_000_000},
		{CampaignID: 3, Campaign: "cpc", Model: "cpc", Events: 9, Rate: 500_000, Amount: 4_500_000},
	}
	if !reflect.DeepEqual(inv.Lines, wantLines) {
		t.Errorf("lines = %+v; want %+v", inv.Lines, wantLines)
	}
	if inv.Total != 12_500_000 {
		t.Errorf("total = %d; want 12500000 (8 + 4.50)", inv.Total)
	}
	wantAdj := []marquee.Adjustment{
		{CampaignID: 2, Reason: marquee.UnbilledOverBudget, Events: 100, Amount: 200_000},
		{CampaignID: 2, Reason: marquee.UnbilledInvalid, IVT: "crawler", Events: 50, Amount: 100_000},
		{CampaignID: 3, Reason: marquee.UnbilledInvalid, IVT: "burst", Events: 1, Amount: 500_000},
	}
	if !reflect.DeepEqual(inv.Adjustments, wantAdj) {
		t.Errorf("adjustments = %+v; want %+v", inv.Adjustments, wantAdj)
	}

	// Its credit note negates every amount and event, keeps the
	// adjustments as shown, and names it.
	inv.Number = "INV-000007"
	cn := billing.CreditNote(inv)
	if cn.Kind != marquee.KindCreditNote || cn.Corrects != "INV-000007" || cn.Total != -inv.Total ||
		cn.Lines[0].Amount != -8_000_000 || cn.Lines[1].Events != -9 || !reflect.DeepEqual(cn.Adjustments, inv.Adjustments) {
		t.Errorf("credit note = %+v; want the invoice negated, naming it", cn)
	}
	if inv.Lines[0].Amount != 8_000_000 {
		t.Errorf("the invoice changed with its credit note: %+v", inv.Lines[0])
	}
}

// money is a billing.Store of one prepaid advertiser (credited 100) and
// its top-ups paid in the period, newest first as the store lists them;
// it keeps the documents it is asked to issue.
type money struct {
	billing.Store
	topUps []marquee.TopUp
	issued []marquee.Invoice
}

func (m *money) Advertiser(_ context.Context, id int64) (marquee.Advertiser, error) {
	if id != 1 {
		return marquee.Advertiser{}, marquee.NoAdvertiser(id)
	}
	return marquee.Advertiser{ID: 1, Name: "Acme", AdvertiserSettings: marquee.AdvertiserSettings{Prepaid: true}, Credited: 100_000_000}, nil
}

func (m *money) ListTopUps(context.Context, int64, time.Time, time.Time, int) ([]marquee.TopUp, error) {
	return m.topUps, nil
}

func (m *money) IssueInvoice(_ context.Context, inv marquee.Invoice) (marquee.Invoice, error) {
	inv.ID = int64(len(m.issued) + 1)
	m.issued = append(m.issued, inv)
	return inv, nil
}

// spent is the spend counters' answer: 30 of the currency.
type spent struct{}

func (spent) AdvertiserTotal(context.Context, int64) (marquee.Nanos, error) {
	return marquee.Micros(30_000_000).Nanos(), nil
}

// TestPrepaymentOnTheInvoice: a prepaid advertiser's invoice shows the
// top-ups paid in its period oldest first — a card payment by its
// session, a credit and a debit (negative) by their reasons — their sum,
// and the balance (credited 100 less 30 spent); an unknown advertiser is
// a problem naming advertiserId.
func TestPrepaymentOnTheInvoice(t *testing.T) {
	rp, cat := priced()
	st := &money{topUps: []marquee.TopUp{ // newest first
		{ID: 3, Kind: marquee.TopUpDebit, Amount: 5_000_000, Reason: "chargeback fee", PaidAt: day.Add(3 * time.Hour)},
		{ID: 2, Kind: marquee.TopUpCredit, Amount: 20_000_000, Reason: "goodwill", PaidAt: day.Add(2 * time.Hour)},
		{ID: 1, Kind: marquee.TopUpCard, Amount: 80_000_000, SessionID: "cs_1", PaidAt: day.Add(time.Hour)},
	}}
	svc := billing.New(billing.Config{Store: st, Spend: spent{}, Reports: rp, Catalogs: fixedCatalogs(t, cat), Currency: "EUR",
		Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return day.Add(30 * time.Hour) }})
	inv, err := svc.IssueInvoice(context.Background(), 1, day, day.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := &marquee.Prepayment{Paid: 95_000_000, Balance: 70_000_000, Payments: []marquee.Payment{
		{TopUpID: 1, Kind: marquee.TopUpCard, Amount: 80_000_000, PaidAt: day.Add(time.Hour), Reference: "cs_1"},
		{TopUpID: 2, Kind: marquee.TopUpCredit, Amount: 20_000_000, PaidAt: day.Add(2 * time.Hour), Reference: "goodwill"},
		{TopUpID: 3, Kind: marquee.TopUpDebit, Amount: -5_000_000, PaidAt: day.Add(3 * time.Hour), Reference: "chargeback fee"},
	}}
	if !reflect.DeepEqual(inv.Prepaid, want) {
		t.Errorf("prepaid = %+v; want %+v", inv.Prepaid, want)
	}
	if len(st.issued) != 1 {
		t.Errorf("issued %d documents; want 1", len(st.issued))
	}
	if _, err := svc.IssueInvoice(context.Background(), 9, day, day.Add(24*time.Hour)); marquee.KindOf(err) != marquee.KindInvalid {
		t.Errorf("IssueInvoice(an unknown advertiser) = %v; want a problem naming advertiserId", err)
	}
}

// catalogStore answers a catalog's lists from cat.
type catalogStore struct{ cat *reports.Catalog }

func (c catalogStore) ListCampaigns(_ context.Context, f marquee.ListFilter) ([]marquee.Campaign, int, error) {
	var out []marquee.Campaign
	for _, camp := range c.cat.Campaigns {
		out = append(out, *camp)
	}
	return page(out, f)
}

func (c catalogStore) ListAdvertisers(_ context.Context, f marquee.ListFilter) ([]marquee.Advertiser, int, error) {
	var out []marquee.Advertiser
	for id, name := range c.cat.Advertisers {
		out = append(out, marquee.Advertiser{ID: id, Name: name})
	}
	return page(out, f)
}

func (c catalogStore) ListPlacements(_ context.Context, f marquee.ListFilter) ([]marquee.Placement, int, error) {
	var out []marquee.Placement
	for _, p := range c.cat.Placements {
		out = append(out, *p)
	}
	return page(out, f)
}

func (c catalogStore) ListSites(context.Context) ([]marquee.Site, error) { return nil, nil }

func (c catalogStore) EntityNames(context.Context, string, []int64) (map[int64]string, error) {
	return map[int64]string{}, nil
}

func page[T any](all []T, f marquee.ListFilter) ([]T, int, error) {
	if f.Offset >= len(all) {
		return nil, len(all), nil
	}
	return all[f.Offset:min(len(all), f.Offset+f.Limit)], len(all), nil
}

func fixedCatalogs(t *testing.T, cat *reports.Catalog) *reports.Catalogs {
	t.Helper()
	return reports.NewCatalogs(catalogStore{cat})
}
