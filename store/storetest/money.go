package storetest

import (
	"context"
	"errors"
	"fmt"
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
	// Demand partners: by name, their headers kept (and kept again by a
	// replace that does not give them), a name taken a conflict.
	dp := marquee.DemandPartner{Name: "dsp-1", Endpoint: "https://bid.example/rtb", Formats: []string{"banner", "video"}, TimeoutMS: 150, QPS: 100,
		BidAdjustment: 0.9, Placements: []string{"side"}, Headers: map[string]string{"X-Api-Key": "k-1"}, Gzip: true}
	if _, err := st.CreateDemandPartner(ctx, dp); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateDemandPartner(ctx, dp); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("a demand partner's name taken = %v; want a conflict", err)
	}
	dp.TimeoutMS, dp.Headers = 90, nil
	if _, err := st.ReplaceDemandPartner(ctx, "dsp-1", dp, true); err != nil {
		t.Fatal(err)
	}
	if ps, err := again().ListDemandPartners(ctx); err != nil || len(ps) != 1 || ps[0].TimeoutMS != 90 || ps[0].Headers["X-Api-Key"] != "k-1" ||
		fmt.Sprint(ps[0].HeaderNames) != "[X-Api-Key]" || !ps[0].Gzip || ps[0].BidAdjustment != 0.9 || fmt.Sprint(ps[0].Formats) != "[banner video]" {
		t.Errorf("demand partners = %+v, %v; want dsp-1 replaced, its header kept", ps, err)
	}
	if err := st.DeleteDemandPartner(ctx, "dsp-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := again().DemandPartner(ctx, "dsp-1"); marquee.KindOf(err) != marquee.KindNotFound {
		t.Errorf("a deleted demand partner = %v; want not found", err)
	}
	s := marquee.Site{Name: "news", Domains: []string{"news.example"}, RevenueShare: 0.7, SellerType: marquee.SellerPublisher}
	if _, err := st.CreateSite(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got, err := again().Site(ctx, "news"); err != nil || got.RevenueShare != 0.7 || len(got.Domains) != 1 || got.SellerID != "1" || got.SellerType != marquee.SellerPublisher || got.Confidential {
		t.Errorf("site = %+v, %v; want seller 1, a publisher, not confidential", got, err)
	}
	// Seller ids: one each, in the order sites are made, never given
	// again — not even a deleted site's; an edit keeps it.
	for _, name := range []string{"blog", "shop"} {
		if _, err := st.CreateSite(ctx, marquee.Site{Name: name, Domains: []string{}, SellerType: marquee.SellerIntermediary, Confidential: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.DeleteSite(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	if got, err := st.CreateSite(ctx, marquee.Site{Name: "shop", Domains: []string{}, SellerType: marquee.SellerBoth}); err != nil || got.SellerID != "4" {
		t.Errorf("a site made again after its deletion = %+v, %v; want seller id 4 (3 was the deleted one's)", got, err)
	}
	if got, err := st.ReplaceSite(ctx, "blog", marquee.Site{SellerID: "99", Domains: []string{"blog.example"}, SellerType: marquee.SellerBoth}); err != nil || got.SellerID != "2" {
		t.Errorf("an edited site = %+v, %v; want its seller id 2 kept", got, err)
	}
	if got, err := again().Site(ctx, "blog"); err != nil || got.SellerID != "2" || got.SellerType != marquee.SellerBoth || got.Confidential {
		t.Errorf("the edited site read back = %+v, %v; want seller 2, BOTH, no longer confidential", got, err)
	}

	// ads.txt checks: one claim a period whatever the handles; the check
	// read back, and kept by an edit.
	now := time.Now()
	if ok, err := st.ClaimAdsTxtCheck(ctx, "news", now, time.Hour); !ok || err != nil {
		t.Errorf("the first claim = %v, %v; want it", ok, err)
	}
	if ok, err := again().ClaimAdsTxtCheck(ctx, "news", now.Add(30*time.Minute), time.Hour); ok || err != nil {
		t.Errorf("a claim half an hour later = %v, %v; want none (claimed within the hour)", ok, err)
	}
	if ok, err := again().ClaimAdsTxtCheck(ctx, "news", now.Add(61*time.Minute), time.Hour); !ok || err != nil {
		t.Errorf("a claim an hour later = %v, %v; want it", ok, err)
	}
	check := marquee.AdsTxtCheck{Status: marquee.AdsTxtAuthorized, CheckedAt: now.UTC().Truncate(time.Millisecond),
		Domains: []marquee.AdsTxtDomain{{Domain: "news.example", Status: marquee.AdsTxtAuthorized, Line: "ads.example.net, 1, DIRECT"}}}
	if err := st.SetAdsTxtCheck(ctx, "news", check); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReplaceSite(ctx, "news", marquee.Site{Domains: []string{"news.example"}, RevenueShare: 0.6, SellerType: marquee.SellerPublisher}); err != nil {
		t.Fatal(err)
	}
	if got, err := again().Site(ctx, "news"); err != nil || got.AdsTxt == nil || !got.AdsTxt.Authorized() || got.AdsTxt.Domains[0].Line != check.Domains[0].Line || !got.AdsTxt.CheckedAt.Equal(check.CheckedAt) {
		t.Errorf("the site's check read back after an edit = %+v, %v; want %+v", got.AdsTxt, err, check)
	}
	if err := st.SetAdsTxtCheck(ctx, "nosuch", check); marquee.KindOf(err) != marquee.KindNotFound {
		t.Errorf("a check of no site = %v; want not found", err)
	}

	// Quarantine and quality alarms: quarantined read back; an hour
	// judged once whatever the handles, an earlier hour never after a
	// later; the alarm read back and kept by an edit.
	if _, err := st.ReplaceSite(ctx, "news", marquee.Site{Domains: []string{"news.example"}, RevenueShare: 0.6, SellerType: marquee.SellerPublisher, Quarantined: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := again().Site(ctx, "news"); err != nil || !got.Quarantined {
		t.Errorf("a quarantined site read back = %+v, %v; want quarantined", got, err)
	}
	hour := now.UTC().Truncate(time.Hour)
	for i, c := range []struct {
		at   time.Time
		want bool
	}{{hour, true}, {hour, false}, {hour.Add(-time.Hour), false}, {hour.Add(time.Hour), true}} {
		if ok, err := again().ClaimQualityCheck(ctx, "news", c.at); ok != c.want || err != nil {
			t.Errorf("quality claim %d of %v = %v, %v; want %v", i, c.at, ok, err, c.want)
		}
	}
	alarm := marquee.QualityAlarm{SiteQuality: marquee.SiteQuality{From: hour, To: hour.Add(time.Hour), Requests: 60, InvalidRequests: 40,
		Invalid: map[string]int64{"datacenter": 40}, InvalidRate: 0.4}, Threshold: 0.2, MinRequests: 100}
	if err := st.SetQualityAlarm(ctx, "news", alarm); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReplaceSite(ctx, "news", marquee.Site{Domains: []string{"news.example"}, RevenueShare: 0.6, SellerType: marquee.SellerPublisher}); err != nil {
		t.Fatal(err)
	}
	if got, err := again().Site(ctx, "news"); err != nil || got.Quarantined || got.QualityAlarm == nil || got.QualityAlarm.InvalidRate != 0.4 ||
		got.QualityAlarm.Invalid["datacenter"] != 40 || !got.QualityAlarm.From.Equal(hour) {
		t.Errorf("the site after an alarm and an edit = %+v (alarm %+v), %v; want the alarm kept and the quarantine lifted", got, got.QualityAlarm, err)
	}
	if err := st.SetQualityAlarm(ctx, "nosuch", alarm); marquee.KindOf(err) != marquee.KindNotFound {
		t.Errorf("an alarm of no site = %v; want not found", err)
	}
}

// testOnePeriodOnce: handles issuing the same advertiser's invoice, and
// the same site's statement, for one period at once (instances running
// monthly billing together) issue each once; every other is a conflict,
// and no number is skipped.
func testOnePeriodOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	st, again := open(t)
	handles := []Store{st}
	for range 3 {
		handles = append(handles, again())
	}
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for round := range 5 {
		from, to := day.AddDate(0, round, 0), day.AddDate(0, round+1, 0)
		docs := []marquee.Invoice{{Kind: marquee.KindInvoice, AdvertiserID: 1, From: from, To: to, Total: 1},
			{Kind: marquee.KindStatement, Site: "news", From: from, To: to, Total: 1}}
		issued := make([]int, len(docs))
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 4 * len(handles) {
			wg.Go(func() {
				<-start
				k := i % len(docs)
				_, err := handles[i%len(handles)].IssueInvoice(ctx, docs[k])
				switch {
				case err == nil:
					mu.Lock()
					issued[k]++
					mu.Unlock()
				case marquee.KindOf(err) != marquee.KindConflict:
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if issued[0] != 1 || issued[1] != 1 {
			t.Fatalf("round %d: %d invoices and %d statements of one period issued at once; want 1 each", round, issued[0], issued[1])
		}
	}
	if list, err := st.ListInvoices(ctx, 1, 100); err != nil || len(list) != 5 {
		t.Errorf("advertiser 1's invoices = %d, %v; want 5, one a month", len(list), err)
	}
}

func invoiceNumber(i int) string { return "MQ-00000" + string(rune('0'+i)) }

// testTopUps: a prepaid advertiser's card top-up is credited once however
// many handles deliver its payment at once (one event id, retried and
// replayed), and another event of the same payment credits nothing; a
// payment whose session, amount or currency differ credits nothing; a
// credit is paid when made; only a prepaid advertiser takes top-ups, and
// its prepaid setting cannot change; a flat fee is refused under it.
func testTopUps(t *testing.T, open Opener) {
	ctx := context.Background()
	st, again := open(t)
	invoiced, err := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Invoiced"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateTopUp(ctx, marquee.TopUp{AdvertiserID: invoiced.ID, Kind: marquee.TopUpCard, Amount: 1_000_000, Currency: "EUR"}); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("a top-up of an invoiced advertiser: %v; want a conflict", err)
	}
	a, err := st.CreateAdvertiser(ctx, marquee.AdvertiserInput{Name: "Prepaid", AdvertiserSettings: marquee.AdvertiserSettings{Prepaid: true}})
	if err != nil || !a.Prepaid {
		t.Fatalf("CreateAdvertiser(prepaid) = %+v, %v", a, err)
	}
	if _, err := st.ReplaceAdvertiser(ctx, a.ID, marquee.AdvertiserInput{Name: "Prepaid"}); marquee.KindOf(err) != marquee.KindInvalid {
		t.Errorf("making a prepaid advertiser invoiced: %v; want invalid", err)
	}
	now := time.Now()
	if _, err := st.CreateCampaign(ctx, marquee.CampaignInput{AdvertiserID: a.ID, Name: "flat", StartAt: now, EndAt: now.Add(time.Hour), Priority: marquee.PriorityStandard, Weight: 1,
		Price: &marquee.Price{Model: marquee.PriceFlat, Amount: 5_000_000}}, marquee.StateDraft); marquee.KindOf(err) != marquee.KindInvalid {
		t.Errorf("a flat fee under a prepaid advertiser: %v; want invalid", err)
	}
	tu, err := st.CreateTopUp(ctx, marquee.TopUp{AdvertiserID: a.ID, Kind: marquee.TopUpCard, Amount: 50_000_000, Currency: "EUR", CreatedBy: "user:1"})
	if err != nil || tu.Status != marquee.TopUpPending {
		t.Fatalf("CreateTopUp = %+v, %v; want pending", tu, err)
	}
	if tu, err = st.AttachCheckout(ctx, tu.ID, "cs_1", "https://checkout.test/cs_1", false); err != nil || tu.SessionID != "cs_1" {
		t.Fatalf("AttachCheckout = %+v, %v", tu, err)
	}
	pay := marquee.CardPayment{EventID: "evt_1", SessionID: "cs_1", PaymentIntent: "pi_1", TopUpID: tu.ID, Amount: 50_000_000, Currency: "EUR"}
	for _, bad := range []marquee.CardPayment{
		{EventID: "evt_a", SessionID: "cs_1", TopUpID: tu.ID, Amount: 49_990_000, Currency: "EUR"},
		{EventID: "evt_b", SessionID: "cs_1", TopUpID: tu.ID, Amount: 50_000_000, Currency: "USD"},
		{EventID: "evt_c", SessionID: "cs_2", TopUpID: tu.ID, Amount: 50_000_000, Currency: "EUR"},
	} {
		if _, err := st.CreditPayment(ctx, bad); marquee.KindOf(err) != marquee.KindConflict {
			t.Errorf("CreditPayment(%+v): %v; want a conflict", bad, err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	credited := 0
	for i := range 8 {
		h := st
		if i%2 == 1 {
			h = again()
		}
		wg.Go(func() {
			_, err := h.CreditPayment(ctx, pay)
			switch {
			case err == nil:
				mu.Lock()
				credited++
				mu.Unlock()
			case !errors.Is(err, marquee.ErrPaymentSeen):
				t.Errorf("CreditPayment again: %v; want ErrPaymentSeen", err)
			}
		})
	}
	wg.Wait()
	if credited != 1 {
		t.Errorf("one payment delivered 8 times at once credited %d times; want once", credited)
	}
	pay.EventID = "evt_2"
	if _, err := st.CreditPayment(ctx, pay); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("another event of a paid top-up: %v; want a conflict", err)
	}
	if _, err := st.CreateTopUp(ctx, marquee.TopUp{AdvertiserID: a.ID, Kind: marquee.TopUpCredit, Amount: 2_500_000, Currency: "EUR", Reason: "refund"}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Advertiser(ctx, a.ID)
	if err != nil || got.Credited != 52_500_000 {
		t.Errorf("credited = %v, %v; want 52.5 (the payment once and the credit)", got.Credited, err)
	}
	list, err := st.ListTopUps(ctx, a.ID, time.Time{}, time.Time{}, 10)
	if err != nil || len(list) != 2 || list[0].Kind != marquee.TopUpCredit || list[0].Status != marquee.TopUpPaid || list[1].Status != marquee.TopUpPaid || list[1].EventID != "evt_1" {
		t.Errorf("ListTopUps = %+v, %v; want the credit then the card payment, both paid (by evt_1)", list, err)
	}
	if paid, err := st.ListTopUps(ctx, a.ID, now.Add(-time.Hour), now.Add(time.Hour), 10); err != nil || len(paid) != 2 {
		t.Errorf("ListTopUps paid within the hour = %d, %v; want 2", len(paid), err)
	}

	// Refunds: each event once, what it adds to the refunds before, never
	// more than the payment.
	refund := func(h Store, id string, refunded marquee.Micros) error {
		_, err := h.RefundPayment(ctx, marquee.CardRefund{EventID: id, PaymentIntent: "pi_1", Refunded: refunded, Currency: "EUR"})
		return err
	}
	var took sync.WaitGroup
	var refunds, seen int
	for i := range 6 {
		h := st
		if i%2 == 1 {
			h = again()
		}
		took.Go(func() {
			err := refund(h, "evt_r1", 10_000_000)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				refunds++
			case errors.Is(err, marquee.ErrPaymentSeen):
				seen++
			default:
				t.Errorf("RefundPayment: %v", err)
			}
		})
	}
	took.Wait()
	if refunds != 1 || seen != 5 {
		t.Errorf("one refund delivered 6 times at once: %d taken, %d seen; want 1 and 5", refunds, seen)
	}
	if err := refund(st, "evt_r0", 5_000_000); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("an older refund event: %v; want a conflict", err)
	}
	if _, err := st.RefundPayment(ctx, marquee.CardRefund{EventID: "evt_rx", PaymentIntent: "pi_none", Refunded: 1, Currency: "EUR"}); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("a refund of an unknown payment: %v; want a conflict", err)
	}
	if err := refund(st, "evt_r2", 90_000_000); err != nil { // more than was paid: the payment, at most
		t.Fatal(err)
	}
	got, err = st.Advertiser(ctx, a.ID)
	if err != nil || got.Credited != 2_500_000 {
		t.Errorf("credited after refunds = %v, %v; want 2.5 (the credit: the payment refunded in full)", got.Credited, err)
	}
	testDisputes(t, st, again, a.ID)
}

// testDisputes: a chargeback of a card top-up takes what it disputes from
// the balance once however often its event comes, gives it back when
// won, keeps it taken when lost (taken then if the closing came first);
// an event its dispute has passed is a conflict; a team debit takes its
// amount.
func testDisputes(t *testing.T, st Store, again func() Store, adv int64) {
	ctx := context.Background()
	paid := func(session, pi string, amount marquee.Micros) {
		t.Helper()
		tu, err := st.CreateTopUp(ctx, marquee.TopUp{AdvertiserID: adv, Kind: marquee.TopUpCard, Amount: amount, Currency: "EUR", CreatedBy: "user:1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.AttachCheckout(ctx, tu.ID, session, "https://checkout.test/"+session, false); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreditPayment(ctx, marquee.CardPayment{EventID: "evt_pay_" + session, SessionID: session, PaymentIntent: pi, TopUpID: tu.ID, Amount: amount, Currency: "EUR"}); err != nil {
			t.Fatal(err)
		}
	}
	credited := func() marquee.Micros {
		a, err := st.Advertiser(ctx, adv)
		if err != nil {
			t.Fatal(err)
		}
		return a.Credited
	}
	paid("cs_d1", "pi_d1", 20_000_000)
	paid("cs_d2", "pi_d2", 30_000_000)
	base := credited() // 2.5 + 20 + 30
	dispute := func(h Store, id, pi string, amount marquee.Micros, outcome string) (marquee.TopUp, error) {
		return h.DisputePayment(ctx, marquee.CardDispute{EventID: id, PaymentIntent: pi, Amount: amount, Currency: "EUR", Outcome: outcome})
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened := 0
	for i := range 6 {
		h := st
		if i%2 == 1 {
			h = again()
		}
		wg.Go(func() {
			_, err := dispute(h, "evt_dp1", "pi_d1", 15_000_000, "")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				opened++
			case !errors.Is(err, marquee.ErrPaymentSeen):
				t.Errorf("DisputePayment(opened) again: %v; want ErrPaymentSeen", err)
			}
		})
	}
	wg.Wait()
	if got := credited(); opened != 1 || got != base-15_000_000 {
		t.Errorf("a dispute of 15 delivered 6 times at once: opened %d times, credited %s; want once, %s", opened, got, base-15_000_000)
	}
	if _, err := dispute(st, "evt_dp1b", "pi_d1", 15_000_000, ""); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("another opening of an open dispute: %v; want a conflict", err)
	}
	if tu, err := dispute(st, "evt_dp2", "pi_d1", 15_000_000, marquee.DisputeWon); err != nil || tu.Dispute != marquee.DisputeWon || tu.Disputed != 0 || credited() != base {
		t.Errorf("the dispute won: %+v, %v, credited %s; want won, nothing held, %s back", tu, err, credited(), base)
	}
	if _, err := dispute(st, "evt_dp3", "pi_d1", 15_000_000, marquee.DisputeLost); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("a second closing: %v; want a conflict", err)
	}
	// Lost, its closing the first Stripe delivered: taken then, never more
	// than the payment.
	if tu, err := dispute(st, "evt_dp4", "pi_d2", 99_000_000, marquee.DisputeLost); err != nil || tu.Dispute != marquee.DisputeLost || tu.Disputed != 30_000_000 || credited() != base-30_000_000 {
		t.Errorf("a dispute lost: %+v, %v, credited %s; want lost, 30 taken, %s", tu, err, credited(), base-30_000_000)
	}
	if _, err := dispute(st, "evt_dp5", "pi_d2", 30_000_000, ""); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("an opening after the closing: %v; want a conflict", err)
	}
	if _, err := dispute(st, "evt_dp6", "pi_none", 1, ""); marquee.KindOf(err) != marquee.KindConflict {
		t.Errorf("a dispute of an unknown payment: %v; want a conflict", err)
	}
	if _, err := st.CreateTopUp(ctx, marquee.TopUp{AdvertiserID: adv, Kind: marquee.TopUpDebit, Amount: 1_000_000, Currency: "EUR", Reason: "a payment reversed"}); err != nil {
		t.Fatal(err)
	}
	if got := credited(); got != base-31_000_000 {
		t.Errorf("credited after a debit of 1 = %s; want %s", got, base-31_000_000)
	}
}

// testOutsidersLimits: an advertiser's account keeps at most
// marquee.MaxBoundSavedReports saved reports however many handles save
// at once, and mails at most marquee.MaxBoundMailsADay reports in 24
// hours (a 429 after), while the team's reports have no such limit.
func testOutsidersLimits(t *testing.T, open Opener) {
	ctx := context.Background()
	st, again := open(t)
	handles := []Store{st, again(), again()}
	b := marquee.Bounds{Advertisers: marquee.IDs{4}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var made []marquee.SavedReport
	for i := range 2 * marquee.MaxBoundSavedReports {
		wg.Go(func() {
			r, err := handles[i%len(handles)].CreateSavedReport(ctx, marquee.SavedReport{Name: fmt.Sprint("r", i), Query: "by=campaign", Owner: "key:1 acme", Bounds: b})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				made = append(made, r)
			case marquee.KindOf(err) != marquee.KindConflict:
				t.Errorf("CreateSavedReport: %v", err)
			}
		})
	}
	wg.Wait()
	if len(made) != marquee.MaxBoundSavedReports {
		t.Fatalf("%d saved at once by one account kept %d; want %d", 2*marquee.MaxBoundSavedReports, len(made), marquee.MaxBoundSavedReports)
	}
	if _, err := st.CreateSavedReport(ctx, marquee.SavedReport{Name: "team", Query: "by=campaign", Owner: "user:1"}); err != nil {
		t.Errorf("the team's report past an account's limit: %v", err)
	}
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	sent := 0
	for i := range marquee.MaxBoundMailsADay + 1 {
		from := day.AddDate(0, 0, i)
		_, claimed, err := handles[i%len(handles)].ClaimDelivery(ctx, made[i%len(made)].ID, from, from.Add(24*time.Hour), []string{"a@acme.test"})
		switch {
		case err == nil && claimed:
			sent++
		case i == marquee.MaxBoundMailsADay && marquee.KindOf(err) == marquee.KindTooManyRequests:
		default:
			t.Fatalf("mail %d: claimed %v, %v", i+1, claimed, err)
		}
	}
	if sent != marquee.MaxBoundMailsADay {
		t.Errorf("an account's mails in a day = %d; want %d, then a 429", sent, marquee.MaxBoundMailsADay)
	}
}
