package billing

import (
	"encoding/csv"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"

	"marquee"
)

// WriteCSV writes inv as CSV: a heading row of the document (number,
// kind, advertiser, period, currency, total), then a row per line (a
// statement's: per placement) and per adjustment, and, prepaid, a row per payment and the balance. Text cells that a spreadsheet would run as a formula are
// made inert.
func WriteCSV(w io.Writer, inv marquee.Invoice) error {
	cw := csv.NewWriter(w)
	day := func(t time.Time) string { return t.UTC().Format("2006-01-02") }
	cw.Write([]string{"number", "kind", "advertiser id", "advertiser", "from", "to", "issued", "currency", "total", "corrects", "credited by"})
	cw.Write([]string{inv.Number, inv.Kind, strconv.FormatInt(inv.AdvertiserID, 10), inert(inv.Advertiser), day(inv.From), day(inv.To),
		inv.IssuedAt.UTC().Format(time.RFC3339), inv.Currency, inv.Total.String(), inv.Corrects, inv.CreditedBy})
	if inv.Kind == marquee.KindStatement {
		cw.Write([]string{"site", "revenue share", "gross"})
		cw.Write([]string{inert(inv.Site), strconv.FormatFloat(inv.RevenueShare, 'f', -1, 64), inv.Gross.String()})
		cw.Write([]string{"placement", "placement id", "placement", "impressions", "gross", "net"})
		for _, p := range inv.PlacementLines {
			cw.Write([]string{"placement", strconv.FormatInt(p.PlacementID, 10), inert(p.Placement), strconv.FormatInt(p.Impressions, 10), p.Gross.String(), p.Net.String()})
		}
		cw.Write([]string{"adjustment", "placement id", "reason", "events", "would have earned"})
		for _, a := range inv.Adjustments {
			cw.Write([]string{"adjustment", strconv.FormatInt(a.PlacementID, 10), adjustmentReason(a), strconv.FormatInt(a.Events, 10), a.Amount.String()})
		}
		cw.Flush()
		return cw.Error()
	}
	cw.Write([]string{"line", "campaign id", "campaign", "model", "events", "rate", "amount"})
	for _, l := range inv.Lines {
		cw.Write([]string{"line", strconv.FormatInt(l.CampaignID, 10), inert(l.Campaign), l.Model, strconv.FormatInt(l.Events, 10), l.Rate.String(), l.Amount.String()})
	}
	cw.Write([]string{"adjustment", "campaign id", "reason", "events", "not charged"})
	for _, a := range inv.Adjustments {
		cw.Write([]string{"adjustment", strconv.FormatInt(a.CampaignID, 10), adjustmentReason(a), strconv.FormatInt(a.Events, 10), a.Amount.String()})
	}
	if pp := inv.Prepaid; pp != nil {
		cw.Write([]string{"payment", "top-up id", "kind", "paid at", "amount", "reference"})
		for _, p := range pp.Payments {
			cw.Write([]string{"payment", strconv.FormatInt(p.TopUpID, 10), p.Kind, p.PaidAt.UTC().Format(time.RFC3339), p.Amount.String(), inert(p.Reference)})
		}
		cw.Write([]string{"prepaid", "paid in the period", "balance when issued", "due"})
		cw.Write([]string{"prepaid", pp.Paid.String(), pp.Balance.String(), "0"})
	}
	cw.Flush()
	return cw.Error()
}

// inert makes a cell a spreadsheet would run as a formula plain text.
func inert(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// WritePDF writes inv as a one-document PDF (A4): its number, kind,
// advertiser, period and issue date, the lines, the adjustments not
// charged, and the total, in its currency; prepaid, the payments into
// the balance over the period and the balance. Text is set in the PDF core
// fonts (Windows-1252): characters beyond it are written as "?". Each
// table shows at most MaxPDFRows rows, then a row that counts the rest
// (the JSON and CSV hold every line; the totals are the document's).
func WritePDF(w io.Writer, inv marquee.Invoice, issuer string) error {
	pdf := fpdf.New("P", "mm", "A4", "")
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.SetTitle(tr(title(inv)), false)
	pdf.SetCreator("Marquee", false)
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 16)
	pdf.CellFormat(0, 10, tr(title(inv)), "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	who := [2]string{"Advertiser", fmt.Sprintf("%s (%d)", inv.Advertiser, inv.AdvertiserID)}
	if inv.Kind == marquee.KindStatement {
		who = [2]string{"Site", fmt.Sprintf("%s (revenue share %s%%)", inv.Site, strconv.FormatFloat(inv.RevenueShare*100, 'f', -1, 64))}
	}
	for _, kv := range [][2]string{
		{"Issued by", issuer},
		who,
		{"Period", inv.From.UTC().Format("2 Jan 2006") + " - " + inv.To.UTC().Add(-time.Second).Format("2 Jan 2006") + " (UTC)"},
		{"Issued", inv.IssuedAt.UTC().Format("2 Jan 2006 15:04 MST")},
		{"Currency", inv.Currency},
	} {
		pdf.CellFormat(35, 6, tr(kv[0]), "", 0, "L", false, 0, "")
		pdf.CellFormat(0, 6, tr(kv[1]), "", 1, "L", false, 0, "")
	}
	if inv.Corrects != "" {
		pdf.CellFormat(0, 6, tr("Cancels invoice "+inv.Corrects), "", 1, "L", false, 0, "")
	}
	if inv.CreditedBy != "" {
		pdf.CellFormat(0, 6, tr("Cancelled by credit note "+inv.CreditedBy), "", 1, "L", false, 0, "")
	}
	pdf.Ln(4)
	widths := []float64{70, 20, 30, 30, 40}
	row := func(style string, cells ...string) {
		pdf.SetFont("Helvetica", style, 10)
		for i, c := range cells {
			align := "R"
			if i == 0 || i == 1 {
				align = "L"
			}
			pdf.CellFormat(widths[i], 7, tr(c), "B", 0, align, false, 0, "")
		}
		pdf.Ln(-1)
	}
	// adjustments is the table of what was not charged (an invoice's, by
	// campaign) or earned nothing (a statement's, by placement).
	adjustments := func(title, by, amount string, id func(marquee.Adjustment) int64) {
		if len(inv.Adjustments) == 0 {
			return
		}
		pdf.Ln(4)
		pdf.SetFont("Helvetica", "B", 11)
		pdf.CellFormat(0, 8, tr(title), "", 1, "L", false, 0, "")
		row("B", by, "Reason", "Events", "", amount)
		for _, a := range shown(inv.Adjustments, row) {
			row("", strconv.FormatInt(id(a), 10), adjustmentReason(a), strconv.FormatInt(a.Events, 10), "", a.Amount.String())
		}
	}
	if inv.Kind == marquee.KindStatement {
		row("B", "Placement", "", "Impressions", "Gross", "Net")
		for _, p := range shown(inv.PlacementLines, row) {
			row("", fmt.Sprintf("%s (%d)", p.Placement, p.PlacementID), "", strconv.FormatInt(p.Impressions, 10), p.Gross.String(), p.Net.String())
		}
		row("B", "Owed to the publisher", "", "", inv.Gross.String(), inv.Total.String()+" "+inv.Currency)
		adjustments("Earned nothing", "Placement", "Would have earned", func(a marquee.Adjustment) int64 { return a.PlacementID })
		return pdf.Output(w)
	}
	row("B", "Campaign", "Model", "Events", "Rate", "Amount")
	for _, l := range shown(inv.Lines, row) {
		row("", fmt.Sprintf("%s (%d)", l.Campaign, l.CampaignID), l.Model, strconv.FormatInt(l.Events, 10), l.Rate.String(), l.Amount.String())
	}
	row("B", "Total", "", "", "", inv.Total.String()+" "+inv.Currency)
	adjustments("Not charged", "Campaign", "Would have cost", func(a marquee.Adjustment) int64 { return a.CampaignID })
	if pp := inv.Prepaid; pp != nil {
		pdf.Ln(4)
		pdf.SetFont("Helvetica", "B", 11)
		pdf.CellFormat(0, 8, tr("Prepaid: the total was drawn from the balance; nothing is due"), "", 1, "L", false, 0, "")
		row("B", "Payment", "Kind", "Paid", "", "Amount")
		for _, p := range shown(pp.Payments, row) {
			ref := []rune(p.Reference)
			if len(ref) > 36 { // a Checkout Session's id is longer than the column
				ref = append(ref[:35], '…')
			}
			row("", string(ref), p.Kind, p.PaidAt.UTC().Format("2 Jan 2006"), "", p.Amount.String())
		}
		row("B", "Paid in the period", "", "", "", pp.Paid.String()+" "+inv.Currency)
		row("B", "Balance when issued", "", "", "", pp.Balance.String()+" "+inv.Currency)
	}
	return pdf.Output(w)
}

func title(inv marquee.Invoice) string {
	switch inv.Kind {
	case marquee.KindCreditNote:
		return "Credit note " + inv.Number
	case marquee.KindStatement:
		return "Statement " + inv.Number
	}
	return "Invoice " + inv.Number
}

// adjustmentReason is how a document names an adjustment's reason:
// "overBudget", or "invalid: crawler" (its kind of invalid traffic).
func adjustmentReason(a marquee.Adjustment) string {
	if a.IVT != "" {
		return a.Reason + ": " + a.IVT
	}
	return a.Reason
}

// MaxPDFRows is the most rows a table of a document's PDF shows: 1,000
// lines are about 25 A4 pages, and a PDF stays quick to make and to read
// whatever a period billed.
const MaxPDFRows = 1000

// shown is the part of list a PDF's table shows (MaxPDFRows); when rows
// are left out, a row written with row after them says how many.
func shown[T any](list []T, row func(style string, cells ...string)) iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		for i, x := range list {
			if i == MaxPDFRows {
				row("I", fmt.Sprintf("... and %d more: the CSV holds every one", len(list)-MaxPDFRows))
				return
			}
			if !yield(i, x) {
				return
			}
		}
	}
}
