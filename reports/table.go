package reports

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/xuri/excelize/v2"
)

// Table is a report by several dimensions as the console's table shows
// it and its exports hold it: a heading per column, then a row of cells
// (string, int64 or float64; nil: no figure) per report row, then the
// totals.
func (r *MultiReport) Table() (head []string, rows [][]any) {
	timed := r.Granularity != Total
	if timed {
		head = append(head, "t")
	}
	named := func(d string) bool { return d == DimAdvertiser || d == DimCampaign || d == DimAd || d == DimPlacement }
	for _, d := range r.By {
		if named(d) {
			head = append(head, d+" id", d)
		} else {
			head = append(head, d)
		}
	}
	figures, figs := r.figures()
	head = append(head, figures...)
	for i := range r.Rows {
		row := &r.Rows[i]
		var cells []any
		if timed {
			cells = append(cells, row.T)
		}
		for _, d := range r.By {
			c := row.Dims[d]
			if named(d) {
				cells = append(cells, c.ID, c.Name)
			} else {
				cells = append(cells, c.Value)
			}
		}
		rows = append(rows, append(cells, figs(&row.MultiMetrics)...))
	}
	total := make([]any, len(head)-len(figures))
	if len(total) > 0 {
		total[0] = "total"
	}
	for i := 1; i < len(total); i++ {
		total[i] = ""
	}
	return head, append(rows, append(total, figs(&r.Totals)...))
}

// figures are the columns of a Table's figures and a row's cells of
// them: a publisher's account's (its events and requests, its net revenue
// and eCPM — no advertiser's conversions, value, spend or ROAS), or the
// team's and an advertiser's; by bidder, then the bids, wins and win
// rate; by privacy, then the slots limited and their rate.
func (r *MultiReport) figures() ([]string, func(*MultiMetrics) []any) {
	head, cells := r.moneyFigures()
	switch {
	case slices.Contains(r.By, DimBidder):
		return append(head, "bids", "wins", "win rate"), func(m *MultiMetrics) []any {
			return append(cells(m), optInt(m.Bids), optInt(m.Wins), optFloat(m.WinRate))
		}
	case slices.Contains(r.By, DimPrivacy):
		return append(head, "limited", "limited rate"), func(m *MultiMetrics) []any {
			return append(cells(m), optInt(m.Limited), optFloat(m.LimitedRate))
		}
	}
	return head, cells
}

// optInt is *p as a cell (nil: an empty one).
func optInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// optFloat is *p as a cell (nil: an empty one).
func optFloat(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// moneyFigures are figures' columns but the bids': a publisher's (its
// net revenue) or the team's and an advertiser's.
func (r *MultiReport) moneyFigures() ([]string, func(*MultiMetrics) []any) {
	num, flt := optInt, optFloat
	if r.Publisher {
		return []string{"impressions", "clicks", "ctr", "views", "viewability", "requests", "filled", "fill rate",
				"revenue (" + r.Currency + ")", "ecpm (" + r.Currency + ")"}, func(m *MultiMetrics) []any {
				cells := []any{m.Impressions, m.Clicks, m.CTR, m.Views, m.Viewability, num(m.Requests), num(m.Filled), flt(m.FillRate)}
				if m.Net == nil {
					return append(cells, nil, nil)
				}
				return append(cells, m.Net.Revenue.Float(), m.Net.ECPM.Float())
			}
	}
	return []string{"impressions", "clicks", "ctr", "conversions", "post-click conversions", "post-view conversions", "views", "viewability",
			"requests", "filled", "fill rate", "spend (" + r.Currency + ")", "ecpm (" + r.Currency + ")", "ecpc (" + r.Currency + ")",
			"ecpa (" + r.Currency + ")", "conversion value (" + r.Currency + ")", "roas"}, func(m *MultiMetrics) []any {
			cells := []any{m.Impressions, m.Clicks, m.CTR, m.Conversions, m.PostClickConversions, m.PostViewConversions, m.Views, m.Viewability,
				num(m.Requests), num(m.Filled), flt(m.FillRate)}
			if m.Money == nil {
				return append(cells, nil, nil, nil, nil, m.ConversionValue.Float(), nil)
			}
			return append(cells, m.Spend.Float(), m.ECPM.Float(), m.ECPC.Float(), m.ECPA.Float(), m.ConversionValue.Float(), m.ROAS)
		}
}

// cellText is a cell as CSV text: numbers as Marquee writes them, text
// made inert (see inert).
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return inert(x)
	}
	return fmt.Sprint(v)
}

// WriteCSV writes the report's Table as CSV.
func (r *MultiReport) WriteCSV(w io.Writer) error {
	head, rows := r.Table()
	cw := csv.NewWriter(w)
	cw.Write(head)
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = cellText(v)
		}
		cw.Write(cells)
	}
	cw.Flush()
	return cw.Error()
}

// ContentTypeXLSX is the media type of an XLSX workbook.
const ContentTypeXLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

// WriteXLSX writes the report's Table as an XLSX workbook of one sheet
// (numbers as numbers; text is never a formula: excelize writes cells as
// values).
func (r *MultiReport) WriteXLSX(w io.Writer) error {
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "Report"
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	head, rows := r.Table()
	line := make([]any, len(head))
	for i, h := range head {
		line[i] = h
	}
	if err := sw.SetRow("A1", line); err != nil {
		return err
	}
	for i, row := range rows {
		cell, err := excelize.CoordinatesToCellName(1, i+2)
		if err != nil {
			return err
		}
		if err := sw.SetRow(cell, row); err != nil {
			return err
		}
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	_, err = f.WriteTo(w)
	return err
}
