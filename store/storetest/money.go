package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"marquee"
)

// testInvoices: invoices are numbered from one gapless series across
// handles issuing at once; an invoice whose period overlaps one not
// credited is a conflict; a credit note (negative amounts round-trip)
// cancels its invoice once, and the period may then be invoiced again;
// deals and sites round-trip, their ids taken a conflict.
func testInvoices(t *testing.T, open Opener) {
	ctx := context.Background()
	st, again := open(t)
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	numbers := make([]string, 6)
	for i := range numbers {
		h := st
		if i%2 == 1 {
			h = again()
		}
		wg.Go(func() {
			{
				inv, err := h.IssueInvoice(ctx, marquee.Invoice{Kind: marquee.KindInvoice, AdvertiserID: int64(i + 1), From: day, To: day.AddDate(0, 1, 0),
					Lines: []marquee.InvoiceLine{{CampaignID: 1, Campaign: "c", Model: "cpm", Events: 1000, Rate: 2_000_000, Amount: 2_000_000}}, Total: 2_000_000})
				if err != nil {
					t.Error(err)
					return
				}
				numbers[i] = inv.Number
				return
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, n := range numbers {
		seen[n] = true
	}
	for i := 1; i <= 6; i++ {
		if n := invoiceNumber(i); !seen[n] {
			t.Errorf("numbers %v; want MQ-000001 … MQ-000006, each once", numbers)
			break
		}
	}
	_, err := st.IssueInvoice(ctx, marquee.Invoice{Kind: marquee.KindInvoice, AdvertiserID: 1, From: day.AddDate(0, 0, 10), To: day.AddDate(0, 1, 10)})
	if marquee.KindOf(err) != marquee.KindConflict {
		t.Fatalf("an overlapping invoice = %v; want a conflict", err)
	}
	list, err := st.ListInvoices(ctx, 1, 10)
	if err != nil || len(list) != 1 || list[0].Total != 2_000_000 || len(list[0].Lines) != 1 || list[0].Lines[0].Amount != 2_000_000 {
		t.Fatalf("advertiser 1's invoices = %+v, %v", list, err)
	}
	first := list[0]
	cn := first
	cn.Kind, cn.Corrects, cn.Total, cn.Lines = marquee.KindCreditNote, first.Number, -first.Total, []marquee.InvoiceLine{{CampaignID: 1, Events: -1000, Amount: -2_000_000}}
	cn, err = st.IssueInvoice(ctx, cn)
	if err != nil || cn.Number != invoiceNumber(7) {
		t.Fatalf("credit note = %+v, %v; want MQ-000007", cn, err)
	}
	if _, err := st.IssueInvoice(ctx, cn); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("a second credit note of %s = %v; want a conflict", first.Number, err)
	}
	got, err := again().Invoice(ctx, cn.ID)
	if err != nil || got.Total != -2_000_000 || got.Lines[0].Amount != -2_000_000 || got.Corrects != first.Number {
		t.Errorf("the credit note read back = %+v, %v; want its negative amounts", got, err)
	}
	if old, _ := st.Invoice(ctx, first.ID); old.CreditedBy != cn.Number {
		t.Errorf("the credited invoice = %+v; want creditedBy %s", old, cn.Number)
	}
	if _, err := st.IssueInvoice(ctx, marquee.Invoice{Kind: marquee.KindInvoice, AdvertiserID: 1, From: day, To: day.AddDate(0, 1, 0)}); err != nil {
		t.Errorf("the period invoiced again after its credit note = %v", err)
	}

	end := day.AddDate(0, 2, 0)
	d := marquee.Deal{ID: "PG-12 «x»", Name: "PG", Bidders: []string{"a", "b"}, Floor: 2_500_000, Tier: marquee.PriorityStandard, AdvertiserID: 3, EndAt: &end}
	if _, err := st.CreateDeal(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateDeal(ctx, d); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("a deal id taken = %v; want a conflict", err)
	}
	if ds, err := again().ListDeals(ctx); err != nil || len(ds) != 1 || ds[0].ID != d.ID || ds[0].Floor != d.Floor || !ds[0].EndAt.Equal(end) || len(ds[0].Bidders) != 2 {
		t.Errorf("deals = %+v, %v", ds, err)
	}
	s := marquee.Site{Name: "news", Domains: []string{"news.example"}, RevenueShare: 0.7}
	if _, err := st.CreateSite(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got, err := again().Site(ctx, "news"); err != nil || got.RevenueShare != 0.7 || len(got.Domains) != 1 {
		t.Errorf("site = %+v, %v", got, err)
	}
}

func invoiceNumber(i int) string { return "MQ-00000" + string(rune('0'+i)) }
