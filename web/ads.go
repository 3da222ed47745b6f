package web

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"marquee"
	"marquee/cache"
	"marquee/index"
	"marquee/reports"
	"marquee/targeting"
)

// Defaults and bounds of the list query (docs/api.md) and the admin lists.
const (
	defaultLimit  = 5
	maxLimit      = 100
	adminMaxLimit = 1000
	adminDefLimit = 50
	adRoutePrefix = "/api/v1/ad/"
)

var pagePool = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// handleListAds serves GET /api/v1/ad from the index snapshot: one atomic
// load, no lock, no allocation.
func handleListAds(ix *index.Index, now func() time.Time) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		q, problems := parseListQuery(ctx.QueryArgs())
		if problems != nil {
			return marquee.Invalid("invalid query", problems)
		}
		bp := pagePool.Get().(*[]byte)
		b := append((*bp)[:0], `{"items":[`...)
		b = ix.Snapshot().AppendPage(b, &q, now())
		b = append(b, "]}"...)
		ctx.SetContentTypeBytes(contentTypeJSON)
		// The response takes our buffer and gives us its own: no copy.
		*bp = ctx.Response.SwapBody(b)
		pagePool.Put(bp)
		return nil
	}
}

// parseListQuery compiles the list parameters. Problems is nil unless a
// parameter is bad; only then does it allocate.
func parseListQuery(args *fasthttp.Args) (index.Query, marquee.Problems) {
	q := index.Query{Limit: defaultLimit}
	var p marquee.Problems
	bad := func(k, msg string) {
		if p == nil {
			p = marquee.Problems{}
		}
		p[k] = msg
	}
	intParam(args, "offset", 0, math.MaxInt, &q.Offset, bad)
	intParam(args, "limit", 1, maxLimit, &q.Limit, bad)
	intParam(args, "age", marquee.MinAge, marquee.MaxAge, &q.Age, bad)
	if v, ok := param(args, "gender"); ok {
		if q.Gender = targeting.GenderCode(v); q.Gender == 0 {
			bad("gender", fmt.Sprintf("must be \"M\" or \"F\", got %q", v))
		}
	}
	if v, ok := param(args, "country"); ok {
		slot, known := marquee.CountrySlot(v)
		if !known {
			bad("country", fmt.Sprintf("unknown ISO 3166-1 alpha-2 code %q", v))
		}
		q.Country = slot + 1
	}
	if v, ok := param(args, "platform"); ok {
		if q.Platform = targeting.PlatformCode(v); q.Platform == 0 {
			bad("platform", marquee.PlatformProblem(v))
		}
	}
	return q, p
}

// intParam parses parameter key, when present, into *dst and reports it to
// bad unless it is an integer between lo and hi. It allocates only to
// report.
func intParam(args *fasthttp.Args, key string, lo, hi int, dst *int, bad func(k, msg string)) {
	reports.ParamInt(args, key, lo, hi, dst, bad)
}

// param returns a query parameter's first value and whether it is set.
// The one rule of every route (docs/api.md): an empty value is the same
// as leaving the parameter out, as clients built from a struct send
// their unset fields (?age=&gender=).
func param(args *fasthttp.Args, key string) ([]byte, bool) {
	v := args.Peek(key)
	return v, len(v) > 0
}

// handleGetAd serves GET /api/v1/ad/{id}: the whole ad, whatever its state,
// from the cache of rendered bodies. The cached body is shared, so SetBody
// copies it into the response's own buffer. A miss's load has its own
// timeout (NewAdCache); a hit needs no context.
func handleGetAd(ads *cache.Cache[int64, []byte]) handler {
	return func(ctx *fasthttp.RequestCtx) error {
		id, err := adID(ctx)
		if err != nil {
			return err
		}
		body, err := ads.Get(context.Background(), id)
		if err != nil {
			return err
		}
		ctx.SetContentTypeBytes(contentTypeJSON)
		ctx.SetBody(body)
		return nil
	}
}

// adminPage is the body of the admin lists (GET /api/v1/ads, GET
// /api/v1/links).
type adminPage[T any] struct {
	Items  []T `json:"items"`
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
	// TotalCapped: a search's count stopped at Total (marquee.MaxSearchCount).
	TotalCapped bool `json:"totalCapped,omitempty"`
}

// newAdminPage is a page of items. capped says the store stopped counting
// the total past marquee.MaxSearchCount (a search or a state filter); a
// total beyond it is then answered as the cap, with TotalCapped.
func newAdminPage[T any](items []T, total, offset, limit int, capped bool) adminPage[T] {
	p := adminPage[T]{Items: items, Total: total, Offset: offset, Limit: limit}
	if capped && total > marquee.MaxSearchCount {
		p.Total, p.TotalCapped = marquee.MaxSearchCount, true
	}
	return p
}

// pageArgs reads an admin list's offset (default 0) and limit (default
// adminDefLimit, at most adminMaxLimit), reporting bad ones to p.
func pageArgs(args *fasthttp.Args, p marquee.Problems) (offset, limit int) {
	limit = adminDefLimit
	bad := func(k, msg string) { p[k] = msg }
	intParam(args, "offset", 0, math.MaxInt, &offset, bad)
	intParam(args, "limit", 1, adminMaxLimit, &limit, bad)
	return offset, limit
}

// handleAdminListAds serves GET /api/v1/ads?state=&approval=&offset=&limit=:
// every ad (active, scheduled, expired; of campaigns, pending approval,
// rejected or approved) by id.
func handleAdminListAds(store AdStore, campaigns CampaignStore, now func() time.Time) storeHandler {
	return func(sctx context.Context, ctx *fasthttp.RequestCtx) error {
		args := ctx.QueryArgs()
		f := marquee.AdFilter{Now: now()}
		p := marquee.Problems{}
		var err error
		state, _ := param(args, "state")
		if f.State, err = marquee.ParseAdState(string(state)); err != nil {
			p["state"] = err.Error()
		}
		f.Query = string(args.Peek("q"))
		if n := utf8.RuneCountInString(f.Query); n > marquee.MaxTitleLen || !utf8.ValidString(f.Query) {
			p["q"] = fmt.Sprintf("must be valid UTF-8 of at most %d characters", marquee.MaxTitleLen)
		}
		if v, ok := param(args, "campaignId"); ok {
			if f.CampaignID, err = strconv.ParseInt(string(v), 10, 64); err != nil || f.CampaignID < 1 {
				p["campaignId"] = "must be a campaign's id"
			}
		}
		if v, ok := param(args, "approval"); ok {
			if f.Approval = string(v); f.Approval != marquee.StatePending && f.Approval != marquee.StateDraft && f.Approval != marquee.StateActive {
				p["approval"] = "must be one of pending, draft, active"
			}
		}
		f.Offset, f.Limit = pageArgs(args, p)
		if err := marquee.Invalid("invalid query", p); err != nil {
			return err
		}
		if boundsOf(ctx).Bound() {
			return boundAds(sctx, ctx, store, campaigns, f)
		}
		ads, total, err := store.ListAds(sctx, f)
		if err != nil {
			return err
		}
		writeJSON(ctx, fasthttp.StatusOK, newAdminPage(ads, total, f.Offset, f.Limit, f.Query != "" || f.State != marquee.AdsAll))
		return nil
	}
}

// adID parses the {id} segment; an id that is not a positive integer names
// no ad.
func adID(ctx *fasthttp.RequestCtx) (int64, error) { return pathID(ctx, "ad") }

// adCreated answers a created ad: its id, and where to read it.
func adCreated(a marquee.Ad) (location string, body any) {
	id := strconv.FormatInt(a.ID, 10)
	if a.Warnings != nil { // beyond the contract: only an ad with a campaign or a creative has any
		return adRoutePrefix + id, map[string]any{"id": id, "warnings": a.Warnings}
	}
	return adRoutePrefix + id, map[string]string{"id": id}
}
