package reports

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"marquee"
	"marquee/reportmail"
)

// Limits of a report by several dimensions.
const (
	DefaultMultiRows = 1000
	MaxMultiRows     = 100_000
)

// PlacementFinder finds a placement by name (a KindNotFound error: none).
type PlacementFinder interface {
	Placement(ctx context.Context, name string) (marquee.Placement, error)
}

// Multis runs reports by several dimensions for the routes and for the
// schedules of saved reports alike: the query read and checked, bound to
// an account's own, named by the catalog. It keeps nothing.
type Multis struct {
	Reporter   *Reporter
	Placements PlacementFinder
	Catalogs   *Catalogs
}

// Run answers the report of args (GET /api/v1/reports's parameters, the
// range given by from and to when they are not zero) for a credential of
// bounds b: an account's report is of its advertisers or its sites only.
func (m *Multis) Run(sctx context.Context, args Params, accept []byte, b marquee.Bounds, from, to time.Time) (*MultiReport, string, error) {
	q, format, err := ParseMultiQuery(sctx, args, accept, m.Reporter, m.Placements)
	if err != nil {
		return nil, "", err
	}
	if !from.IsZero() {
		q.From, q.To = from, to
	}
	if b.Bound() {
		if err := BoundDims(q, b); err != nil {
			return nil, "", err
		}
		var some bool
		if len(b.Advertisers) > 0 {
			q.Advertisers, some = narrowed(q.Advertisers, b.Advertisers)
		} else {
			q.Sites, some = narrowed(q.Sites, b.Sites)
			q.Publisher = true
		}
		if !some {
			return m.Reporter.EmptyMulti(q), format, nil
		}
	}
	cat, err := m.Catalogs.Catalog(sctx)
	if err != nil {
		return nil, "", err
	}
	rep, err := m.Reporter.Multi(sctx, q, cat)
	return rep, format, err
}

// Render renders saved report r over [from, to) as format (csv or xlsx),
// bound as its owner was: what a schedule's email attaches.
func (m *Multis) Render(ctx context.Context, r marquee.SavedReport, from, to time.Time, format string) (reportmail.Attachment, error) {
	rep, _, err := m.Run(ctx, ParseQueryParams(r.Query), nil, r.Bounds, from, to)
	if err != nil {
		return reportmail.Attachment{}, err
	}
	var b bytes.Buffer
	att := reportmail.Attachment{Name: "report.csv", ContentType: "text/csv; charset=utf-8"}
	if format == "xlsx" {
		att = reportmail.Attachment{Name: "report.xlsx", ContentType: ContentTypeXLSX}
		err = rep.WriteXLSX(&b)
	} else {
		err = rep.WriteCSV(&b)
	}
	att.Data = b.Bytes()
	return att, err
}

// ParseMultiQuery reads a report by several dimensions' parameters:
// by, granularity, from, to, tz, bots, the filters advertiser, campaign
// and ad (ids), placement (names), site, country and device (values),
// each comma-separated, limit, and format (json, csv or xlsx; or an
// Accept naming text/csv).
func ParseMultiQuery(sctx context.Context, args Params, accept []byte, rp *Reporter, store PlacementFinder) (MultiQuery, string, error) {
	p := marquee.Problems{}
	q := MultiQuery{Limit: DefaultMultiRows}
	q.From, q.To, q.Loc, q.Bots = ParamWindow(args, rp, p)
	q.Granularity = ParamOneOf(args, p, "granularity", Total, Day, Month, Total)
	q.By = ParamList(args, "by")
	ids := func(k string) []int64 {
		var out []int64
		for _, v := range ParamList(args, k) {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id <= 0 {
				p[k] = fmt.Sprintf("must be ids, comma-separated, got %q", v)
				return nil
			}
			out = append(out, id)
		}
		return out
	}
	q.Advertisers, q.Campaigns, q.Ads = ids("advertiser"), ids("campaign"), ids("ad")
	for _, name := range ParamList(args, "placement") {
		pl, err := store.Placement(sctx, name)
		if marquee.KindOf(err) == marquee.KindNotFound || marquee.CheckPlacementName(name) != "" {
			p["placement"] = fmt.Sprintf("no placement %q", name)
			continue
		}
		if err != nil {
			return q, "", err
		}
		q.Placements = append(q.Placements, pl.ID)
	}
	q.Sites, q.Devices = ParamList(args, "site"), ParamList(args, "device")
	for _, c := range ParamList(args, "country") {
		if _, ok := marquee.CountrySlot(c); !ok {
			p["country"] = fmt.Sprintf("must be ISO 3166-1 alpha-2 codes, got %q", c)
		}
		q.Countries = append(q.Countries, strings.ToUpper(c))
	}
	ParamInt(args, "limit", 1, MaxMultiRows, &q.Limit, func(k, msg string) { p[k] = msg })
	_, given := Param(args, "format")
	format := ParamOneOf(args, p, "format", "json", "json", "csv", "xlsx")
	if !given && strings.Contains(string(accept), "text/csv") {
		format = "csv"
	}
	if len(p) == 0 {
		for k, v := range rp.CheckMulti(&q) {
			p[k] = v
		}
	}
	return q, format, marquee.Invalid("invalid query", p)
}

// BoundDims refuses what an account may not cut its report by: each side
// reads its own side of the report. An advertiser's account reads its
// campaigns by advertiser, campaign, ad, country, device and key-value,
// not where (which publisher's placements and sites) they ran; a
// publisher's account reads its placements by placement, site, bidder,
// privacy, country, device and key-value, not whose ads filled them.
func BoundDims(q MultiQuery, b marquee.Bounds) error {
	theirs, filters := []string{DimPlacement, DimSite, DimBidder, DimPrivacy}, len(q.Placements)+len(q.Sites)
	who := "an advertiser's account reads its campaigns by advertiser, campaign, ad, country, device and key-value"
	if len(b.Sites) > 0 {
		theirs, filters = []string{DimAdvertiser, DimCampaign, DimAd}, len(q.Advertisers)+len(q.Campaigns)+len(q.Ads)
		who = "a publisher's account reads its placements by placement, site, bidder, privacy, country, device and key-value"
	}
	p := marquee.Problems{}
	for _, d := range q.By {
		if slices.Contains(theirs, d) {
			p["by"] = fmt.Sprintf("%q: %s", d, who)
		}
	}
	if filters > 0 {
		p["filter"] = who
	}
	return marquee.Invalid("invalid query", p)
}

// narrowed is asked kept to own (all of own when nothing is asked), and
// whether anything is left.
func narrowed[T comparable](asked, own []T) ([]T, bool) {
	if len(asked) == 0 {
		return own, len(own) > 0
	}
	var out []T
	for _, v := range asked {
		if slices.Contains(own, v) {
			out = append(out, v)
		}
	}
	return out, len(out) > 0
}
