package web

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/prebid/openrtb/v20/openrtb2"
	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/delivery"
	"marquee/reportrow"
	"marquee/reports"
	"marquee/serve"
	"marquee/supply"
)

// Header bidding's reports (docs/api.md#header-bidding): by placement and
// bidder, the bids decisions weighed and won, the impressions the wins
// rendered and their revenue.

// BidStore is what header bidding's report reads of the store.
type BidStore interface {
	BidSums(ctx context.Context, q reportrow.BidQuery) ([]reportrow.BidRow, error)
}

// maxFloorPlacements is the most placements one floors request names.
const maxFloorPlacements = 50

// floorsBody is GET /api/v1/floors' answer.
type floorsBody struct {
	Currency string                    `json:"currency"`
	Floors   map[string]marquee.Micros `json:"floors"`
	// SChain is the supply chain the page's bid requests carry: the
	// network's node for the placements' site (absent when they are not
	// all of one site with a seller id, or without -seller-domain).
	SChain *openrtb2.SupplyChain `json:"schain,omitempty"`
}

// handleFloors serves GET /api/v1/floors?placements=a,b: each placement
// named and known that has a floor, its floor (a CPM in the install's
// currency) — what the tag's Prebid.js glue offers Prebid's floors module
// before the page's auction. Public, as the tag is: a floor is what
// Prebid tells every bidder anyway; only the placements a page names are
// told (no list of them). Cached for a minute; the decision checks the
// floor in force whatever the page was told. With it, the SupplyChain
// object of the placements' site (supply.Network.SChain), which the glue
// puts in the page's bid requests.
func handleFloors(svc *serve.Service, seller supply.Network) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		names := strings.Split(string(ctx.QueryArgs().Peek("placements")), ",")
		switch {
		case names[0] == "":
			return marquee.Invalid("invalid floors request", marquee.Problems{"placements": "is required: the placements' names, separated by commas"})
		case len(names) > maxFloorPlacements:
			return marquee.Invalid("invalid floors request", marquee.Problems{"placements": fmt.Sprintf("must name at most %d placements", maxFloorPlacements)})
		}
		plan := svc.Engine().Plan()
		body := floorsBody{Currency: svc.Currency(), Floors: map[string]marquee.Micros{}}
		sellerID, one := "", true
		for i, name := range names {
			if pl, ok := plan.Placement(name); ok && pl.Floor > 0 {
				body.Floors[name] = pl.Floor
			}
			id := svc.Sites().SellerID(plan, name)
			one = one && (i == 0 || id == sellerID)
			sellerID = id
		}
		if one {
			body.SChain = seller.SChain(sellerID, "")
		}
		anyOrigin(ctx)
		ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "public, max-age=60")
		writeJSON(ctx, fasthttp.StatusOK, body)
		return nil
	}
}

// bidStatsRow is one placement's and bidder's row.
type bidStatsRow struct {
	Placement   string         `json:"placement"`
	Bidder      string         `json:"bidder"`
	Bids        int64          `json:"bids"`
	Wins        int64          `json:"wins"`
	WinRate     float64        `json:"winRate"`
	Impressions int64          `json:"impressions"`
	Revenue     marquee.Micros `json:"revenue"`
	ECPM        marquee.Micros `json:"ecpm"`
}

// handleBidStats serves GET /api/v1/bidders/stats[?from&to&placement]:
// over the report's window (the last 7 days by default), each placement's
// and bidder's bids, wins, win rate (wins ÷ bids), verified impressions,
// revenue and eCPM, by placement then bidder.
func handleBidStats(st BidStore, rp *reports.Reporter, engine *delivery.Engine) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		args := ctx.QueryArgs()
		p := marquee.Problems{}
		from, to, _, _ := reportWindow(args, rp, p)
		plan := engine.Plan()
		q := reportrow.BidQuery{From: from.Unix() / 3600 * 3600, To: to.Unix()}
		b := boundsOf(ctx)
		if v, ok := param(args, "placement"); ok {
			pl, found := plan.Placement(string(v))
			if !found || b.Bound() && !b.HasSite(pl.Site) {
				p["placement"] = "no such placement"
			} else {
				q.Placements = []int64{pl.ID}
			}
		}
		if len(p) > 0 {
			return marquee.Invalid("invalid bidders report", p)
		}
		if b.Bound() && len(q.Placements) == 0 { // a publisher's: its sites' placements only
			for id, name := range plan.PlacementNames() {
				if pl, _ := plan.Placement(name); b.HasSite(pl.Site) {
					q.Placements = append(q.Placements, id)
				}
			}
			if len(q.Placements) == 0 {
				writeJSON(ctx, fasthttp.StatusOK, map[string]any{"from": marquee.FormatTime(from), "to": marquee.FormatTime(to), "rows": []bidStatsRow{}})
				return nil
			}
		}
		rows, err := st.BidSums(sctx, q)
		if err != nil {
			return err
		}
		names := plan.PlacementNames()
		out := make([]bidStatsRow, 0, len(rows))
		for _, r := range rows {
			row := bidStatsRow{Placement: names[r.Placement], Bidder: r.Bidder, Bids: r.Bids, Wins: r.Wins, Impressions: r.Impressions,
				Revenue: marquee.Nanos(r.Revenue).Micros()}
			if row.Placement == "" {
				continue // a placement deleted since
			}
			if r.Bids > 0 {
				row.WinRate = float64(r.Wins) / float64(r.Bids)
			}
			if r.Impressions > 0 {
				row.ECPM = marquee.Nanos(r.Revenue * 1000 / r.Impressions).Micros()
			}
			out = append(out, row)
		}
		slices.SortFunc(out, func(a, b bidStatsRow) int {
			return cmp.Or(strings.Compare(a.Placement, b.Placement), strings.Compare(a.Bidder, b.Bidder))
		})
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{"from": marquee.FormatTime(from), "to": marquee.FormatTime(to), "rows": out})
		return nil
	}
}
