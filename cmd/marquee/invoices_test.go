package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"marquee/billing"
	"marquee/reports"
	"marquee/store/sqlite"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// TestInvoices: an advertiser's invoice for a period has a line per
// campaign whose amount is exactly that campaign's spend in the reports,
// for CPM, vCPM, CPC, CPA and a daily flat fee, and a total equal to the
// advertiser's spend to the micro-unit; a bot's impression is shown as an
// invalid-traffic adjustment, not charged. It is numbered and immutable:
// a second invoice of the period is a 409 until a credit note (every
// amount negated) cancels the first; then the period is invoiced again
// with the next number. Its CSV holds the lines; its PDF opens (parsed
// back, its text naming the number and the total). The advertiser's own
// key reads its invoices and not another's; it cannot issue one.
func TestInvoices(t *testing.T) {
	t.Parallel()
	w := newMoneyWorld(t)
	w.deliver(t)
	bot, _ := http.NewRequest("GET", w.decide(t, "p1", "").ImpressionURL, nil)
	bot.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/140.0.0.0 Safari/537.36")
	if resp, err := noRedirects.Do(bot); err == nil {
		resp.Body.Close()
	}
	key, _ := w.keyFrom(`{"name":"acme","scopes":["conversions:write","reports:read"],"advertisers":[1]}`)
	for i := range 2 {
		d := w.decide(t, "p4", "")
		fire(t, d.ImpressionURL)
		w.expect(w.do("POST", "/api/v1/conversions", key, "application/json", `{"clickId":"`+clickID(t, d)+`","orderId":"o-`+string(rune('1'+i))+`","value":"20"}`), 201, "")
	}
	fire(t, w.decide(t, "p5", "").ImpressionURL)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	from, to := today.Add(-24*time.Hour).Format(time.RFC3339), today.Add(24*time.Hour).Format(time.RFC3339)
	type row struct {
		Dims          map[string]struct{ ID string }
		Impressions   int64
		Spend         json.Number
		UnbilledCount int64 `json:"unbilled"`
	}
	var rep struct {
		Totals row
		Rows   []row
	}
	q := "/api/v1/reports?by=campaign&granularity=total&from=" + from + "&to=" + to
	eventually(t, 5*time.Second, func() string {
		if r := w.admin("GET", q, ""); json.Unmarshal([]byte(r.body), &rep) != nil || rep.Totals.Spend != json.Number(w.total()) {
			return "the report: " + r.body
		}
		return ""
	})
	bad := w.admin("POST", "/api/v1/invoices", `{"advertiserId":"1","from":"2026-11-01T10:00:00Z","to":"2099-01-01T00:00:00Z"}`)
	if bad.status != 400 || !strings.Contains(bad.body, `"from"`) || !strings.Contains(bad.body, `"to"`) {
		t.Errorf("an invoice of a period not in whole days, ending in the future = %d %s; want 400 naming from and to", bad.status, bad.body)
	}
	if r := w.do("POST", "/api/v1/invoices", key, "application/json", `{"advertiserId":"1","from":"`+from+`","to":"`+to+`"}`); r.status != 403 {
		t.Errorf("the advertiser's key issuing an invoice = %d; want 403", r.status)
	}
	body := `{"advertiserId":"1","from":"` + from + `","to":"` + to + `"}`
	r := w.admin("POST", "/api/v1/invoices", body)
	var inv struct {
		ID, Number, Kind, Corrects, CreditedBy string
		Total                                  json.Number
		Lines                                  []struct {
			CampaignID, Model string
			Events            int64
			Amount            json.Number
		}
		Adjustments []struct {
			CampaignID, Reason string
			Events             int64
			Amount             json.Number
		}
	}
	if json.Unmarshal([]byte(r.body), &inv); r.status != 201 || inv.Number != "MQ-000001" || inv.Total != rep.Totals.Spend {
		t.Fatalf("invoice = %d %s; want 201, MQ-000001, total %s (the reports' spend)", r.status, r.body, rep.Totals.Spend)
	}
	spendOf := map[string]json.Number{}
	for _, row := range rep.Rows {
		spendOf[row.Dims["campaign"].ID] = row.Spend
	}
	events := map[string]int64{"cpm": 7, "vcpm": 2, "cpc": 2, "cpa": 2, "daily": 0}
	for _, l := range inv.Lines {
		if l.Amount != spendOf[l.CampaignID] || l.Events != events[l.Model] {
			t.Errorf("line of campaign %s (%s) = %d events, %s; want %d, the report's %s", l.CampaignID, l.Model, l.Events, l.Amount, events[l.Model], spendOf[l.CampaignID])
		}
	}
	if len(inv.Lines) != 5 || len(inv.Adjustments) != 1 || inv.Adjustments[0].Reason != "invalid" || inv.Adjustments[0].Events != 1 || inv.Adjustments[0].Amount != "0.001235" {
		t.Errorf("lines %+v, adjustments %+v; want 5 lines and the bot's impression as an invalid adjustment of 0.001235", inv.Lines, inv.Adjustments)
	}
	if r := w.admin("POST", "/api/v1/invoices", body); r.status != 409 {
		t.Errorf("a second invoice of the period = %d %s; want 409", r.status, r.body)
	}
	csv := w.admin("GET", "/api/v1/invoices/"+inv.ID+"?format=csv", "")
	if !strings.Contains(csv.body, "MQ-000001,invoice,1,Acme,") || !strings.Contains(csv.body, "line,1,Cp1,cpm,7,") {
		t.Errorf("CSV = %s", csv.body)
	}
	pdf := w.admin("GET", "/api/v1/invoices/"+inv.ID+"?format=pdf", "")
	if pdf.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("PDF answer = %d %s", pdf.status, pdf.header)
	}
	conf := model.NewDefaultConfiguration()
	ctx, err := api.ReadValidateAndOptimize(strings.NewReader(pdf.body), conf)
	if err != nil {
		t.Fatalf("the PDF does not parse: %v", err)
	}
	content, err := pdfcpu.ExtractPageContent(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(content)
	if ctx.PageCount != 1 || !bytes.Contains(text, []byte("Invoice MQ-000001")) || !bytes.Contains(text, []byte(w.total()+" EUR")) {
		t.Errorf("the PDF: %d pages, content %q; want one page naming MQ-000001 and the total", ctx.PageCount, text)
	}

	cn := w.admin("POST", "/api/v1/invoices/"+inv.ID+"/credit", "")
	var credit struct{ Number, Kind, Corrects, Total string }
	if json.Unmarshal([]byte(cn.body), &credit); cn.status != 201 || credit.Kind != "creditNote" || credit.Corrects != "MQ-000001" || credit.Total != "" && credit.Number != "MQ-000002" {
		t.Errorf("credit note = %d %s; want 201, MQ-000002 cancelling MQ-000001", cn.status, cn.body)
	}
	if !strings.Contains(cn.body, `"total":-`+w.total()) {
		t.Errorf("credit note = %s; want total -%s", cn.body, w.total())
	}
	if r := w.admin("POST", "/api/v1/invoices/"+inv.ID+"/credit", ""); r.status != 409 {
		t.Errorf("crediting it again = %d; want 409", r.status)
	}
	again := w.admin("POST", "/api/v1/invoices", body)
	if again.status != 201 || !strings.Contains(again.body, `"number":"MQ-000003"`) || !strings.Contains(again.body, `"total":`+w.total()) {
		t.Errorf("the period invoiced again = %d %s; want 201, MQ-000003", again.status, again.body)
	}
	if r := w.admin("GET", "/api/v1/invoices/"+inv.ID, ""); !strings.Contains(r.body, `"creditedBy":"MQ-000002"`) {
		t.Errorf("the first invoice after its credit = %s; want creditedBy MQ-000002", r.body)
	}
	if r := w.do("GET", "/api/v1/invoices", key, "", ""); r.status != 200 || strings.Count(r.body, `"number"`) != 3 {
		t.Errorf("the advertiser's own invoices = %d %s; want its 3 documents", r.status, r.body)
	}
	if r := w.do("GET", "/api/v1/invoices?advertiserId=2", key, "", ""); r.status != 404 {
		t.Errorf("another advertiser's invoices by Acme's key = %d; want 404", r.status)
	}
}

// TestMonthlyBilling: the month's documents by themselves
// (-monthly-billing's billing.Monthly, run here on the instance's own
// database): an invoice to the advertiser that spent and a statement to
// the site with a share that earned, none to the others; run again, it
// issues nothing more.
func TestMonthlyBilling(t *testing.T) {
	t.Parallel()
	w := newMoneyWorld(t)
	w.expect(w.admin("POST", "/api/v1/sites", `{"name":"news","revenueShare":0.5}`), 201, "")
	w.expect(w.admin("POST", "/api/v1/placements", `{"name":"onnews","site":"news"}`), 201, "")
	w.expect(w.admin("PUT", "/api/v1/placements/p1", `{"name":"p1","site":"news"}`), 200, "")
	for range 4 {
		fire(t, w.decide(t, "p1", "").ImpressionURL)
	}
	eventually(t, 5*time.Second, func() string {
		if r := w.admin("GET", "/api/v1/reports?by=campaign&granularity=total", ""); !strings.Contains(r.body, `"impressions":4,`) {
			return "the report: " + r.body
		}
		return ""
	})
	st, err := sqlite.Open(context.Background(), filepath.Join(w.data, "marquee.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rp := reports.NewReporter(st, 0)
	rp.Currency = "EUR"
	svc := billing.New(billing.Config{Store: st, Reports: rp, Catalogs: reports.NewCatalogs(st), Currency: "EUR", Log: slog.New(slog.DiscardHandler), Now: time.Now})
	m := &billing.Monthly{Service: svc, Log: slog.New(slog.DiscardHandler), Now: time.Now}
	now := time.Now().UTC()
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	if now.Add(time.Hour).Month() != now.Month() {
		t.Skip("the month ends within the hour: the flight would cross it")
	}
	if n, err := m.Issue(context.Background(), month); err != nil || n != 2 {
		t.Fatalf("Issue = %d, %v; want 2 documents (Acme's invoice, news's statement)", n, err)
	}
	if n, err := m.Issue(context.Background(), month); err != nil || n != 0 {
		t.Errorf("Issue again = %d, %v; want nothing more", n, err)
	}
	if r := w.admin("GET", "/api/v1/invoices", ""); strings.Count(r.body, `"number"`) != 1 || !strings.Contains(r.body, `"advertiser":"Acme"`) {
		t.Errorf("invoices = %s; want Acme's one", r.body)
	}
	if r := w.admin("GET", "/api/v1/statements", ""); strings.Count(r.body, `"number"`) != 1 || !strings.Contains(r.body, `"site":"news"`) || !strings.Contains(r.body, `"total":0.002469`) {
		t.Errorf("statements = %s; want news's one, 4 impressions at CPM 1.234567 × 0.5 = 0.002469", r.body)
	}
}
